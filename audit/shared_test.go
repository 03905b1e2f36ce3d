package audit

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// Links that differ only in their #fragment are fetched once; each is
// reported with its own URL, the shared result, and its own history.
func TestFragmentsFetchedOnce(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	s := server(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.Method+" "+r.URL.Path]++
		mu.Unlock()
		time.Sleep(5 * time.Millisecond) // the others come while it is in the air
		switch r.URL.Path {
		case "/ok":
		case "/moved":
			http.Redirect(w, r, "/ok", http.StatusMovedPermanently)
		default:
			http.NotFound(w, r)
		}
	})
	db, _ := openTestDB(t)
	cfg := testConfig(nil)
	cfg.PerHost = 2
	cfg.Concurrency = 8
	urls := []string{
		s.URL + "/ok#a", s.URL + "/ok#b", s.URL + "/ok", s.URL + "/ok#",
		s.URL + "/moved#top", s.URL + "/moved#end",
		s.URL + "/gone#1", s.URL + "/gone#2", s.URL + "/gone",
	}
	var links []Link
	for _, u := range urls {
		links = append(links, linkFor(u))
	}
	got := map[string]Result{}
	for _, r := range runAll(t, New(cfg, db), links) {
		got[r.Link.URL] = r
	}
	want := map[string]int{"HEAD /ok": 2, "HEAD /moved": 1, "HEAD /gone": 1} // /ok once itself, once after /moved
	mu.Lock()
	if len(hits) != len(want) {
		t.Errorf("requests %v, want %v", hits, want)
	}
	for k, n := range want {
		if hits[k] != n {
			t.Errorf("requests %v, want %v", hits, want)
			break
		}
	}
	mu.Unlock()
	for _, u := range urls {
		r, ok := got[u]
		if !ok {
			t.Fatalf("no result for %s", u)
		}
		path, _, _ := strings.Cut(strings.TrimPrefix(u, s.URL), "#")
		switch path {
		case "/ok":
			// as a check of its own would say it ("/ok#" is written "/ok")
			if r.Status != OK || r.Check.FinalURL != strings.TrimSuffix(u, "#") || len(r.Check.Chain) != 0 {
				t.Errorf("%s: %s %+v", u, r.Status, r.Check)
			}
		case "/moved":
			if r.Status != Redirected || !r.Check.Permanent || r.Check.FinalURL != s.URL+"/ok" ||
				len(r.Check.Chain) != 1 || r.Check.Chain[0].URL != u || r.Check.Chain[0].Status != 301 {
				t.Errorf("%s: %s %+v", u, r.Status, r.Check)
			}
		case "/gone":
			if r.Status != Failing || r.Check.HTTPStatus != 404 || r.Check.FinalURL != u || r.Failures != 1 {
				t.Errorf("%s: %s %+v", u, r.Status, r.Check)
			}
		}
		// each link keeps its own history
		cs, err := db.Checks(u)
		if err != nil || len(cs) != 1 || cs[0].Status != r.Check.Status {
			t.Errorf("%s: history %+v (%v)", u, cs, err)
		}
	}
	// the two chains are not one slice
	a, b := got[s.URL+"/moved#top"].Check.Chain, got[s.URL+"/moved#end"].Check.Chain
	if &a[0] == &b[0] {
		t.Errorf("chains share their array")
	}
}

// A follower gives back its host's slot while it waits: with one slot
// per host, a link of the host that comes after the twins is not held
// behind them, and the run ends.
func TestFragmentFollowersHoldNoSlot(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var order []string
	s := server(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		order = append(order, r.URL.Path)
		mu.Unlock()
		if r.URL.Path == "/slow" {
			select {
			case <-release:
			case <-time.After(20 * time.Second):
			}
		}
	})
	cfg := testConfig(nil)
	cfg.PerHost = 1
	cfg.Concurrency = 4
	a := New(cfg, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	results := make(chan Result, 4)
	go func() {
		r, _ := a.Check(ctx, linkFor(s.URL+"/slow#1"))
		results <- r
	}()
	// wait until the leader is in the air, then a follower joins it
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(order)
		mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	go func() {
		r, _ := a.Check(ctx, linkFor(s.URL+"/slow#2"))
		results <- r
	}()
	for {
		a.shared.mu.Lock()
		f := a.shared.m[s.URL+"/slow"]
		a.shared.mu.Unlock()
		if f != nil && f.waiting.Load() == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	// the follower waits, its slot given back: the leader's is the only one
	a.mu.Lock()
	active := a.hosts[strings.TrimPrefix(s.URL, "http://")].active
	a.mu.Unlock()
	if active != 1 {
		t.Errorf("%d slots held, want the leader's only", active)
	}
	close(release)
	for i := 0; i < 2; i++ {
		if r := <-results; r.Status != OK {
			t.Errorf("%s: %s %+v", r.Link.URL, r.Status, r.Check)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(order) != 1 {
		t.Errorf("requests %v", order)
	}
}

// The remembered keys are bounded: the oldest is forgotten first.
func TestSharedChecksBounded(t *testing.T) {
	var s sharedChecks
	for i := 0; i < maxShared+10; i++ {
		f, leader, _ := s.join("http://h/" + string(rune('a'+i%26)) + strings.Repeat("x", i/26))
		if !leader {
			t.Fatalf("key %d: not the leader", i)
		}
		f.land(Check{Status: OK})
	}
	if len(s.m) != maxShared || len(s.ring) != maxShared {
		t.Errorf("%d keys, ring %d", len(s.m), len(s.ring))
	}
	if _, leader, _ := s.join("http://h/a"); !leader {
		t.Errorf("the oldest key is still remembered")
	}
	if _, leader, _ := s.join("http://h/" + string(rune('a'+(maxShared+9)%26)) + strings.Repeat("x", (maxShared+9)/26)); leader {
		t.Errorf("the newest key is forgotten")
	}
}

// Beyond the checks a run remembers, the history gives the check of a
// twin made earlier in the run: still one fetch per URL without fragment.
// Without a history, the twin is fetched again.
func TestFragmentsFetchedOnceFarApart(t *testing.T) {
	old := maxShared
	maxShared = 2
	defer func() { maxShared = old }()
	var mu sync.Mutex
	hits := map[string]int{}
	s := server(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, "/p", http.StatusFound)
		case "/gone":
			http.NotFound(w, r)
		}
	})
	order := []string{"/p#a", "/moved#x", "/gone", "/q", "/r", "/s", "/p#b", "/p", "/moved", "/gone#z", "/t", "/u", "/v", "/moved#y"}
	var links []Link
	for _, p := range order {
		links = append(links, linkFor(s.URL+p))
	}
	for _, withDB := range []bool{true, false} {
		mu.Lock()
		clear(hits)
		mu.Unlock()
		var db *DB
		if withDB {
			db, _ = openTestDB(t)
		}
		cfg := testConfig(nil)
		cfg.Concurrency = 1 // in this order
		got := map[string]Result{}
		for _, r := range runAll(t, New(cfg, db), links) {
			got[strings.TrimPrefix(r.Link.URL, s.URL)] = r
		}
		mu.Lock()
		p, moved, gone := hits["/p"], hits["/moved"], hits["/gone"]
		mu.Unlock()
		if withDB && (p != 2 || moved != 1 || gone != 1) { // /p: itself, and where /moved leads
			t.Errorf("with a history: /p %d, /moved %d, /gone %d requests; want 2, 1, 1", p, moved, gone)
		}
		if !withDB && moved < 2 {
			t.Errorf("without a history: /moved %d requests, want it fetched again", moved)
		}
		for path, r := range got {
			base, _, _ := strings.Cut(path, "#")
			own := strings.TrimSuffix(s.URL+path, "#")
			switch base {
			case "/moved":
				if r.Status != Redirected || len(r.Check.Chain) != 1 || r.Check.Chain[0].URL != own || r.Check.FinalURL != s.URL+"/p" {
					t.Errorf("history %v: %s: %s %+v", withDB, path, r.Status, r.Check)
				}
			case "/gone":
				if r.Status != Failing || r.Check.HTTPStatus != 404 || r.Check.FinalURL != own {
					t.Errorf("history %v: %s: %s %+v", withDB, path, r.Status, r.Check)
				}
			default:
				if r.Status != OK || r.Check.FinalURL != own {
					t.Errorf("history %v: %s: %s %+v", withDB, path, r.Status, r.Check)
				}
			}
		}
	}
}
