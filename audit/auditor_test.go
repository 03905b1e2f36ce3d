package audit

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock moves only when slept on; it records every wait.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	c.mu.Unlock()
	return ctx.Err()
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func (c *fakeClock) waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// gauge counts requests in flight and keeps the highest count seen.
type gauge struct {
	cur, max, total atomic.Int64
}

func (g *gauge) enter() {
	g.total.Add(1)
	n := g.cur.Add(1)
	for {
		m := g.max.Load()
		if n <= m || g.max.CompareAndSwap(m, n) {
			return
		}
	}
}

func (g *gauge) leave() { g.cur.Add(-1) }

// countingServer answers 200 after a short pause, counting requests in
// flight on its own gauge and on a shared one.
func countingServer(t testing.TB, own, all *gauge, pause time.Duration) string {
	s := server(t.(*testing.T), func(w http.ResponseWriter, r *http.Request) {
		own.enter()
		all.enter()
		time.Sleep(pause)
		all.leave()
		own.leave()
	})
	return s.URL
}

func runAll(t *testing.T, a *Auditor, links []Link) []Result {
	t.Helper()
	in := make(chan Link)
	go func() {
		for _, l := range links {
			in <- l
		}
		close(in)
	}()
	var out []Result
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := a.Run(ctx, in, func(r Result) { out = append(out, r) }); err != nil {
		t.Fatal(err)
	}
	if len(out) != len(links) {
		t.Fatalf("%d results for %d links", len(out), len(links))
	}
	return out
}

func TestLimitsHeld(t *testing.T) {
	var all gauge
	own := make([]gauge, 4)
	var links []Link
	for i := range own {
		base := countingServer(t, &own[i], &all, 5*time.Millisecond)
		for j := 0; j < 12; j++ {
			links = append(links, linkFor(fmt.Sprintf("%s/%d", base, j)))
		}
	}
	// sorted by host: the scheduler must still spread the work
	cfg := testConfig(nil)
	cfg.Concurrency, cfg.PerHost = 5, 2
	cfg.Hosts = map[string]HostLimit{strings.TrimPrefix(links[0].URL[:strings.LastIndexByte(links[0].URL, '/')], "http://"): {PerHost: 1}}
	a := New(cfg, nil)
	out := runAll(t, a, links)
	for _, r := range out {
		if r.Status != OK {
			t.Errorf("%s: %+v", r.Link.URL, r.Check)
		}
	}
	if p := a.Progress(); p.Checked != int64(len(links)) || p.ByStatus[OK] != int64(len(links)) || p.Pending != 0 || p.BackingOf != 0 {
		t.Errorf("progress at the end: %+v", p)
	}
	if m := all.max.Load(); m > 5 {
		t.Errorf("%d requests at once over all hosts, limit 5", m)
	}
	if m := own[0].max.Load(); m > 1 {
		t.Errorf("%d requests at once on the overridden host, limit 1", m)
	}
	for i := 1; i < len(own); i++ {
		if m := own[i].max.Load(); m > 2 {
			t.Errorf("host %d: %d requests at once, limit 2", i, m)
		}
	}
	if all.total.Load() != int64(len(links)) {
		t.Errorf("%d requests for %d links", all.total.Load(), len(links))
	}
}

func TestRetries(t *testing.T) {
	var n atomic.Int32
	var storm atomic.Int32
	s := server(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/flaky":
			if n.Add(1) <= 2 {
				w.WriteHeader(http.StatusServiceUnavailable)
			}
		case "/storm":
			storm.Add(1)
			w.Header().Set("Retry-After", "5")
			w.WriteHeader(http.StatusTooManyRequests)
		case "/toolong":
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusTooManyRequests)
		case "/date":
			w.Header().Set("Retry-After", time.Date(2026, 1, 1, 0, 0, 7, 0, time.UTC).Format(http.TimeFormat))
			w.WriteHeader(http.StatusServiceUnavailable)
		case "/404":
			http.NotFound(w, r)
		}
	})
	check := func(path string) (Result, []time.Duration) {
		clk := newFakeClock()
		cfg := testConfig(nil)
		cfg.Clock, cfg.Retries = clk, 3
		cfg.Backoff, cfg.MaxBackoff, cfg.MaxRetryAfter = time.Second, 4*time.Second, time.Minute
		r, err := New(cfg, nil).Check(context.Background(), linkFor(s.URL+path))
		if err != nil {
			t.Fatal(err)
		}
		return r, clk.waits()
	}
	r, waits := check("/flaky")
	if r.Status != OK || r.Check.Attempts != 3 || len(waits) != 2 {
		t.Fatalf("503, 503, 200: %+v, waits %v", r.Check, waits)
	}
	// exponential with up to 50% jitter: [1s, 1.5s], then [2s, 3s]
	if waits[0] < time.Second || waits[0] > 1500*time.Millisecond || waits[1] < 2*time.Second || waits[1] > 3*time.Second {
		t.Errorf("backoff waits %v", waits)
	}
	r, waits = check("/storm")
	if r.Status != Blocked || r.Check.Attempts != 4 || storm.Load() != 4 {
		t.Errorf("429 storm: %+v, %d requests", r.Check, storm.Load())
	}
	for _, w := range waits {
		if w < 5*time.Second {
			t.Errorf("waited %v despite Retry-After: 5 (waits %v)", w, waits)
		}
	}
	r, waits = check("/toolong")
	if r.Status != Blocked || r.Check.Attempts != 1 || len(waits) != 0 {
		t.Errorf("Retry-After over the cap: %+v, waits %v", r.Check, waits)
	}
	r, waits = check("/date")
	if r.Status != Failing || r.Check.Attempts != 4 || len(waits) != 3 || waits[0] < 7*time.Second {
		t.Errorf("Retry-After as a date: %+v, waits %v", r.Check, waits)
	}
	r, waits = check("/404")
	if r.Status != Failing || r.Check.Attempts != 1 || len(waits) != 0 {
		t.Errorf("404 is not retried: %+v, waits %v", r.Check, waits)
	}
}

func TestTimeoutRetried(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var hits atomic.Int32
	s := server(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	cfg := testConfig(nil)
	cfg.Timeout, cfg.Retries = 200*time.Millisecond, 1
	r, _ := New(cfg, nil).Check(context.Background(), linkFor(s.URL+"/"))
	if r.Status != Failing || r.Check.Class != ClassTimeout || r.Check.Attempts != 2 || hits.Load() != 2 {
		t.Errorf("slow server: %+v, %d requests", r.Check, hits.Load())
	}
}

func TestHostShortCircuit(t *testing.T) {
	res := &testResolver{hosts: map[string][]string{}}
	cfg := testConfig(res)
	var links []Link
	for i := 0; i < 6; i++ {
		links = append(links, linkFor(fmt.Sprintf("http://gone.invalid/%d", i)))
	}
	refused := refusedAddr(t)
	for i := 0; i < 4; i++ {
		links = append(links, linkFor(fmt.Sprintf("http://%s/%d", refused, i)))
	}
	out := runAll(t, New(cfg, nil), links)
	tried := map[Class]int{}
	for _, r := range out {
		want := ClassDNS
		if strings.Contains(r.Link.URL, refused) {
			want = ClassRefused
		}
		if r.Status != Failing || r.Check.Class != want {
			t.Errorf("%s: %+v", r.Link.URL, r.Check)
		}
		if r.Check.Attempts > 0 {
			tried[r.Check.Class]++
		} else if !strings.HasPrefix(r.Check.Error, "not tried") {
			t.Errorf("%s: %q", r.Link.URL, r.Check.Error)
		}
	}
	// a few may race the first failure (PerHost 4); never all of them
	if tried[ClassDNS] > 4 || tried[ClassRefused] > 4 || res.calls > 4 {
		t.Errorf("tried %v, %d lookups", tried, res.calls)
	}
	// a host refused by the guard is not looked up again either
	guarded := &testResolver{hosts: map[string][]string{"www.example.com": {"127.0.0.1"}}}
	gcfg := testConfig(guarded)
	gcfg.AllowPrivate, gcfg.PerHost = false, 1
	var glinks []Link
	for i := 0; i < 5; i++ {
		glinks = append(glinks, linkFor(fmt.Sprintf("http://www.example.com/%d", i)))
	}
	for _, r := range runAll(t, New(gcfg, nil), glinks) {
		// refused by policy, the first link and the others alike: never
		// failing (it says nothing of the target)
		if r.Check.Class != ClassForbidden || r.Status != Unchecked {
			t.Errorf("%s: %s %+v", r.Link.URL, r.Status, r.Check)
		}
	}
	if guarded.calls != 1 {
		t.Errorf("%d lookups for 5 links of a forbidden host", guarded.calls)
	}
	// a redirect to a refused port leaves the host's other links alone
	var hits atomic.Int32
	srv := server(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/smtp" {
			http.Redirect(w, r, "http://127.0.0.1:25/", http.StatusFound)
		}
	})
	pcfg := testConfig(nil)
	pcfg.PerHost = 1
	out = runAll(t, New(pcfg, nil), []Link{linkFor(srv.URL + "/smtp"), linkFor(srv.URL + "/a"), linkFor(srv.URL + "/b")})
	for _, r := range out {
		want := OK
		if strings.HasSuffix(r.Link.URL, "/smtp") {
			want = Unchecked
		}
		if r.Status != want {
			t.Errorf("%s: %+v", r.Link.URL, r.Check)
		}
	}
	cfg.PerHost = 1
	res.calls = 0
	out = runAll(t, New(cfg, nil), links[:6])
	if res.calls != 1 {
		t.Errorf("one at a time: %d lookups for 6 links of a host that does not resolve", res.calls)
	}
}

func TestInterval(t *testing.T) {
	s := server(t, func(http.ResponseWriter, *http.Request) {})
	clk := newFakeClock()
	cfg := testConfig(nil)
	cfg.Clock, cfg.Concurrency = clk, 1
	cfg.Interval = 3 * time.Second
	var links []Link
	for i := 0; i < 4; i++ {
		links = append(links, linkFor(fmt.Sprintf("%s/%d", s.URL, i)))
	}
	runAll(t, New(cfg, nil), links)
	w := clk.waits()
	if len(w) != 3 {
		t.Fatalf("waits %v, want three of 3s", w)
	}
	for _, d := range w {
		if d != 3*time.Second {
			t.Errorf("waits %v, want three of 3s", w)
		}
	}
}

func TestCanceled(t *testing.T) {
	s := server(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	ctx, cancel := context.WithCancel(context.Background())
	cfg := testConfig(nil)
	a := New(cfg, nil)
	in := make(chan Link, 3)
	for i := 0; i < 3; i++ {
		in <- linkFor(fmt.Sprintf("%s/%d", s.URL, i))
	}
	close(in)
	n := 0
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	a.Run(ctx, in, func(r Result) {
		n++
		if r.Status != Unchecked || r.Check.Class != ClassCanceled {
			t.Errorf("%+v", r.Check)
		}
	})
	if n != 3 {
		t.Errorf("%d results", n)
	}
	// a channel never closed: Run returns once ctx is canceled
	ctx, cancel = context.WithCancel(context.Background())
	open := make(chan Link, 1)
	open <- linkFor(s.URL + "/x")
	done := make(chan struct{})
	go func() {
		a.Run(ctx, open, func(Result) {})
		close(done)
	}()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

// A redirect to another host waits for that host's slot: five hosts
// redirecting everything to a sixth never put more than its limit on it.
// A DNS failure of the host a redirect leads to is that host's, not the
// link's own host's.
func TestRedirectTargetLimits(t *testing.T) {
	var target gauge
	b := server(t, func(w http.ResponseWriter, r *http.Request) {
		target.enter()
		time.Sleep(5 * time.Millisecond)
		target.leave()
	})
	var links []Link
	for i := 0; i < 5; i++ {
		a := server(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/away" {
				http.Redirect(w, r, "http://gone.invalid/", http.StatusFound)
				return
			}
			http.Redirect(w, r, b.URL+r.URL.Path, http.StatusMovedPermanently)
		})
		for j := 0; j < 4; j++ {
			links = append(links, linkFor(fmt.Sprintf("%s/%d", a.URL, j)))
		}
		if i == 0 {
			links = append([]Link{linkFor(a.URL + "/away")}, links...)
		}
	}
	cfg := testConfig(&testResolver{hosts: map[string][]string{}})
	cfg.Concurrency, cfg.PerHost = 10, 1
	for _, r := range runAll(t, New(cfg, nil), links) {
		if strings.HasSuffix(r.Link.URL, "/away") {
			if r.Check.Class != ClassDNS {
				t.Errorf("%s: %+v", r.Link.URL, r.Check)
			}
			continue
		}
		if r.Status != Redirected {
			t.Errorf("%s: %+v", r.Link.URL, r.Check)
		}
	}
	if m := target.max.Load(); m > 1 {
		t.Errorf("the redirect target saw %d requests at once, limit 1", m)
	}
	if n := target.total.Load(); n != 20 {
		t.Errorf("%d requests at the target, want 20", n)
	}
}

func TestHostLimit(t *testing.T) {
	cfg := Config{RequestLimits: RequestLimits{PerHost: 3, Interval: time.Second, Hosts: map[string]HostLimit{
		"slow.example": {PerHost: 1, Interval: 5 * time.Second}, "fast.example:8080": {PerHost: 8},
		"wait.example": {Interval: time.Minute},
	}}}.Defaults()
	for host, want := range map[string]HostLimit{
		"slow.example":      {1, 5 * time.Second},
		"slow.example:8080": {1, 5 * time.Second}, // by name when name:port is not given
		"fast.example:8080": {8, 0},
		"fast.example":      {3, time.Second},
		"wait.example":      {3, time.Minute}, // PerHost 0: the default
		"other.example":     {3, time.Second},
	} {
		if got := cfg.hostLimit(host); got != want {
			t.Errorf("%s: %+v, want %+v", host, got, want)
		}
	}
}

// A link cut at the extractor's length limit is never checked: Unchecked,
// ClassTooLong, no request, nothing in the history. The Collectors keep
// it cut only when every occurrence is.
func TestCutLink(t *testing.T) {
	var hits atomic.Int32
	s := server(t, func(http.ResponseWriter, *http.Request) { hits.Add(1) })
	db, err := OpenDB(filepath.Join(t.TempDir(), "h.db"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cfg := testConfig(nil)
	cfg.MaxAge = time.Hour
	a := New(cfg, db)
	cut := linkFor(s.URL + "/" + strings.Repeat("a", 8000))
	cut.Cut = true
	for run := 0; run < 2; run++ {
		r, err := a.Check(context.Background(), cut)
		if err != nil || r.Status != Unchecked || r.Check.Class != ClassTooLong || !strings.Contains(r.Check.Error, "cut") {
			t.Errorf("cut link: %+v, %v", r, err)
		}
	}
	if hits.Load() != 0 {
		t.Errorf("a cut link was requested %d times", hits.Load())
	}
	if _, ok, err := db.cached(cut, cfg.Clock.Now(), time.Hour, true, &cfg); ok || err != nil {
		t.Errorf("a cut link is in the history (%v)", err)
	}
	whole := cut
	whole.Cut = false
	if r, _ := a.Check(context.Background(), whole); r.Status != OK || hits.Load() != 1 {
		t.Errorf("whole link: %+v", r)
	}
	for _, order := range [][]bool{{true, false}, {false, true}, {true, true}} {
		mem := NewCollector(0)
		disk, err := NewDiskCollector(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range order {
			l := cut
			l.Cut = c
			mem.Add(l)
			disk.Add(l)
		}
		want := order[0] && order[1]
		disk.Each(func(l Link) error {
			if l.Cut != want || mem.Links()[0].Cut != want {
				t.Errorf("occurrences cut %v: disk %v, memory %v", order, l.Cut, mem.Links()[0].Cut)
			}
			return nil
		})
		disk.Close()
	}
}

// TestHostsBackingOff: the progress counts the hosts with a link waiting
// out a retry backoff, once each however many of their links wait, and
// the links themselves.
func TestHostsBackingOff(t *testing.T) {
	a := New(Config{}, nil)
	h1, h2 := &hostState{name: "a.example"}, &hostState{name: "b.example"}
	for _, step := range []struct {
		hs           *hostState
		d            int
		hosts, links int64
	}{
		{h1, 1, 1, 1}, {h1, 1, 1, 2}, {h2, 1, 2, 3}, {h1, -1, 2, 2}, {h1, -1, 1, 1}, {h2, -1, 0, 0}, {h2, 1, 1, 1},
	} {
		a.backingOff(step.hs, step.d)
		if p := a.Progress(); p.HostsBack != step.hosts || p.BackingOf != step.links {
			t.Fatalf("after %s %+d: %d hosts, %d links; want %d, %d", step.hs.name, step.d, p.HostsBack, p.BackingOf, step.hosts, step.links)
		}
	}
}
