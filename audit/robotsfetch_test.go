package audit

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// robotsSite is a loopback web site whose robots.txt answer a test sets,
// counting the requests of each path.
type robotsSite struct {
	URL string

	mu     sync.Mutex
	hits   map[string]int
	robots func(w http.ResponseWriter, r *http.Request)
}

func newRobotsSite(t *testing.T, robots func(w http.ResponseWriter, r *http.Request)) *robotsSite {
	s := &robotsSite{hits: map[string]int{}, robots: robots}
	srv := server(t, func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.RequestURI()]++
		s.mu.Unlock()
		if strings.HasPrefix(r.URL.Path, "/robots") {
			s.robots(w, r)
			return
		}
		if r.URL.Path == "/gone" {
			http.NotFound(w, r)
		}
	})
	s.URL = srv.URL
	return s
}

func (s *robotsSite) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

func robotsBody(body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, body) }
}

func robotsStatus(code int) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }
}

// robotsConfig is testConfig with robots.txt honoured.
func robotsConfig() Config {
	cfg := testConfig(nil)
	cfg.IgnoreRobots = false
	cfg.Retries = -1
	return cfg
}

// Links a robots.txt disallows are unchecked (class robots) and never
// requested; robots.txt is fetched once per origin for the run, with the
// audit's User-Agent; the others are checked as before.
func TestRobotsHonoured(t *testing.T) {
	var ua []string
	var mu sync.Mutex
	s := newRobotsSite(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ua = append(ua, r.Header.Get("User-Agent"))
		mu.Unlock()
		fmt.Fprint(w, "User-agent: *\nDisallow: /\n\nUser-agent: linkscan\nDisallow: /private\nDisallow: /*.pdf$\n")
	})
	cfg := robotsConfig()
	cfg.Concurrency, cfg.PerHost = 8, 4
	urls := []string{"/private", "/private/a", "/public", "/doc.pdf", "/doc.pdf?x", "/gone", "/robots.txt", "/public#frag"}
	var links []Link
	for _, u := range urls {
		links = append(links, linkFor(s.URL+u))
	}
	got := map[string]Result{}
	for _, r := range runAll(t, New(cfg, nil), links) {
		got[strings.TrimPrefix(r.Link.URL, s.URL)] = r
	}
	for _, c := range []struct {
		path   string
		status Status
		class  Class
	}{
		{"/private", Unchecked, ClassRobots}, {"/private/a", Unchecked, ClassRobots}, {"/doc.pdf", Unchecked, ClassRobots},
		{"/public", OK, ""}, {"/doc.pdf?x", OK, ""}, {"/gone", Failing, ClassHTTP}, {"/robots.txt", OK, ""},
		{"/public#frag", OK, ""},
	} {
		r := got[c.path]
		if r.Status != c.status || r.Check.Class != c.class {
			t.Errorf("%s: %s %+v", c.path, r.Status, r.Check)
		}
		if c.class == ClassRobots && (!strings.Contains(r.Check.Error, "disallowed by "+s.URL+"/robots.txt") || r.Check.Attempts != 0) {
			t.Errorf("%s: error %q, %d attempts", c.path, r.Check.Error, r.Check.Attempts)
		}
	}
	for _, p := range []string{"/private", "/private/a", "/doc.pdf"} {
		if n := s.count(p); n != 0 {
			t.Errorf("%s requested %d times", p, n)
		}
	}
	if n := s.count("/robots.txt"); n != 2 { // once as robots.txt, once as the link /robots.txt
		t.Errorf("robots.txt fetched %d times, want once for the run and once as a link", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ua) == 0 || ua[0] != DefaultUserAgent {
		t.Errorf("User-Agent %q", ua)
	}
	// IgnoreRobots: not fetched, not honoured
	s2 := newRobotsSite(t, robotsBody("User-agent: *\nDisallow: /\n"))
	cfg.IgnoreRobots = true
	r, err := New(cfg, nil).Check(context.Background(), linkFor(s2.URL+"/x"))
	if err != nil || r.Status != OK || s2.count("/robots.txt") != 0 {
		t.Errorf("IgnoreRobots: %s %+v, robots.txt fetched %d times", r.Status, r.Check, s2.count("/robots.txt"))
	}
}

// What robots.txt's answer means (RFC 9309 §2.3.1): 2xx is read, 4xx
// allows everything, 429 and 5xx disallow everything, redirects are
// followed up to five, a failure to connect is the link's failure.
func TestRobotsAnswers(t *testing.T) {
	redirects := func(n int) func(http.ResponseWriter, *http.Request) {
		return func(w http.ResponseWriter, r *http.Request) {
			var i int
			fmt.Sscanf(strings.TrimPrefix(r.URL.Path, "/robots"), "%d", &i)
			if r.URL.Path == "/robots.txt" {
				i = 0
			}
			if i < n {
				http.Redirect(w, r, fmt.Sprintf("/robots%d", i+1), http.StatusFound)
				return
			}
			fmt.Fprint(w, "User-agent: *\nDisallow: /x\n")
		}
	}
	for _, c := range []struct {
		name   string
		robots func(http.ResponseWriter, *http.Request)
		status Status
		class  Class
		msg    string
	}{
		{"200", robotsBody("User-agent: *\nDisallow: /x\n"), Unchecked, ClassRobots, "disallowed by"},
		{"200 empty", robotsBody(""), OK, "", ""},
		{"404", robotsStatus(404), OK, "", ""},
		{"403", robotsStatus(403), OK, "", ""},
		{"401", robotsStatus(401), OK, "", ""},
		{"410", robotsStatus(410), OK, "", ""},
		{"429", robotsStatus(429), Unchecked, ClassRobots, "unreachable (HTTP 429)"},
		{"500", robotsStatus(500), Unchecked, ClassRobots, "unreachable (HTTP 500)"},
		{"503", robotsStatus(503), Unchecked, ClassRobots, "unreachable (HTTP 503)"},
		{"5 redirects", redirects(5), Unchecked, ClassRobots, "disallowed by"},
		{"6 redirects", redirects(6), OK, "", ""},
		{"redirect without Location", robotsStatus(302), OK, "", ""},
	} {
		s := newRobotsSite(t, c.robots)
		r, err := New(robotsConfig(), nil).Check(context.Background(), linkFor(s.URL+"/x"))
		if err != nil || r.Status != c.status || r.Check.Class != c.class || !strings.Contains(r.Check.Error, c.msg) {
			t.Errorf("%s: %s %+v (%v)", c.name, r.Status, r.Check, err)
		}
		if want := map[bool]int{true: 1, false: 0}[c.status == OK]; s.count("/x") != want {
			t.Errorf("%s: /x requested %d times, want %d", c.name, s.count("/x"), want)
		}
	}
	// a port where nothing listens: the link fails as its own request
	// would (refused), and the host's other links are not tried
	dead := "http://" + refusedAddr(t)
	out := runAll(t, New(robotsConfig(), nil), []Link{linkFor(dead + "/a"), linkFor(dead + "/b")})
	for _, r := range out {
		if r.Status != Failing || r.Check.Class != ClassRefused {
			t.Errorf("refused: %s %+v", r.Status, r.Check)
		}
	}
	// a forbidden address: robots.txt is not fetched either
	guarded := robotsConfig()
	guarded.AllowPrivate = false
	s := newRobotsSite(t, robotsStatus(404))
	r, _ := New(guarded, nil).Check(context.Background(), linkFor(s.URL+"/x"))
	if r.Status != Unchecked || r.Check.Class != ClassForbidden || s.count("/robots.txt") != 0 {
		t.Errorf("forbidden: %s %+v, robots.txt fetched %d times", r.Status, r.Check, s.count("/robots.txt"))
	}
	// an IPv6 literal with a zone: its robots.txt URL is built, not
	// parsed from "http://[fe80::1%lo]" (an escape error, class robots)
	for _, u := range []string{"http://[fe80::1%25lo]/", "http://[fe80::1%25eth0]:8080/x"} {
		r, _ := New(guarded, nil).Check(context.Background(), linkFor(u))
		if r.Status != Unchecked || r.Check.Class != ClassForbidden {
			t.Errorf("%s: %s %+v, want unchecked forbidden", u, r.Status, r.Check)
		}
	}
}

// A redirect's target is asked of its own origin's robots.txt.
func TestRobotsRedirectTarget(t *testing.T) {
	other := newRobotsSite(t, robotsBody("User-agent: *\nDisallow: /x\n"))
	s := newRobotsSite(t, robotsStatus(404))
	mux := server(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusMovedPermanently)
	})
	_ = s
	cfg := robotsConfig()
	a := New(cfg, nil)
	r, _ := a.Check(context.Background(), linkFor(mux.URL+"/x"))
	if r.Status != Unchecked || r.Check.Class != ClassRobots || len(r.Check.Chain) != 1 ||
		r.Check.Chain[0].URL != mux.URL+"/x" || r.Check.FinalURL != other.URL+"/x" {
		t.Errorf("redirect to a disallowed page: %s %+v", r.Status, r.Check)
	}
	if other.count("/x") != 0 || other.count("/robots.txt") != 1 {
		t.Errorf("the target saw /x %d times, robots.txt %d times", other.count("/x"), other.count("/robots.txt"))
	}
	r, _ = a.Check(context.Background(), linkFor(mux.URL+"/y"))
	if r.Status != Redirected || other.count("/robots.txt") != 1 {
		t.Errorf("redirect to an allowed page: %s %+v; robots.txt fetched %d times", r.Status, r.Check, other.count("/robots.txt"))
	}
}

// Crawl-delay is a lower bound of the host's interval (capped by
// MaxCrawlDelay), and the page's request keeps its distance from
// robots.txt's.
func TestRobotsCrawlDelayHeld(t *testing.T) {
	for _, c := range []struct {
		delay, interval, max, want time.Duration
	}{
		{2 * time.Second, 0, 0, 2 * time.Second},
		{2 * time.Second, 5 * time.Second, 0, 5 * time.Second}, // the longer wins
		{100 * time.Second, 0, 0, 30 * time.Second},            // capped
		{100 * time.Second, 0, 10 * time.Second, 10 * time.Second},
	} {
		s := newRobotsSite(t, robotsBody(fmt.Sprintf("User-agent: *\nCrawl-delay: %g\n", c.delay.Seconds())))
		clk := newFakeClock()
		cfg := robotsConfig()
		cfg.Clock, cfg.Interval, cfg.MaxCrawlDelay = clk, c.interval, c.max
		cfg.Concurrency, cfg.PerHost = 1, 4 // one at a time: the waits are exact
		var links []Link
		for i := 0; i < 4; i++ {
			links = append(links, linkFor(fmt.Sprintf("%s/%d", s.URL, i)))
		}
		for _, r := range runAll(t, New(cfg, nil), links) {
			if r.Status != OK {
				t.Errorf("%s: %s %+v", r.Link.URL, r.Status, r.Check)
			}
		}
		// robots.txt, then 4 pages: 4 waits of the delay
		w := clk.waits()
		if len(w) != 4 {
			t.Errorf("delay %v interval %v: waits %v, want four of %v", c.delay, c.interval, w, c.want)
			continue
		}
		for _, d := range w {
			if d != c.want {
				t.Errorf("delay %v interval %v: waits %v, want four of %v", c.delay, c.interval, w, c.want)
				break
			}
		}
	}
}

// Links of the host already under way when its Crawl-delay is learnt:
// the host takes one request at a time from then on, at that interval,
// for the rest of the run.
func TestRobotsCrawlDelayUnderWay(t *testing.T) {
	s := newRobotsSite(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(10 * time.Millisecond) // the other links come meanwhile
		fmt.Fprint(w, "User-agent: *\nCrawl-delay: 7\n")
	})
	clk := newFakeClock()
	cfg := robotsConfig()
	cfg.Clock, cfg.Concurrency, cfg.PerHost = clk, 4, 4
	var links []Link
	for i := 0; i < 4; i++ {
		links = append(links, linkFor(fmt.Sprintf("%s/%d", s.URL, i)))
	}
	a := New(cfg, nil)
	runAll(t, a, links)
	key := strings.TrimPrefix(s.URL, "http://")
	a.mu.Lock()
	hs, d := a.hosts[key], a.delays[key]
	a.mu.Unlock()
	if d != 7*time.Second || hs == nil || hs.limit.PerHost != 1 || hs.crawl != 7*time.Second {
		t.Fatalf("delay %v, host %+v", d, hs)
	}
	// (the waits themselves are not checked here: on the fake clock,
	// which moves by each sleep in turn, concurrent sleepers' waits depend
	// on their order; TestRobotsCrawlDelayHeld checks them one at a time)
}

// Many links of many origins: each robots.txt is fetched once, however
// many links wait for it at once.
func TestRobotsFetchedOnce(t *testing.T) {
	var sites []*robotsSite
	var links []Link
	for i := 0; i < 5; i++ {
		s := newRobotsSite(t, func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(10 * time.Millisecond) // the other links come meanwhile
			fmt.Fprint(w, "User-agent: *\nDisallow: /no\n")
		})
		sites = append(sites, s)
		for j := 0; j < 10; j++ {
			links = append(links, linkFor(fmt.Sprintf("%s/%d", s.URL, j)), linkFor(fmt.Sprintf("%s/no/%d", s.URL, j)))
		}
	}
	cfg := robotsConfig()
	cfg.Concurrency, cfg.PerHost = 16, 4
	a := New(cfg, nil)
	n := map[Status]int{}
	for _, r := range runAll(t, a, links) {
		n[r.Status]++
	}
	if n[OK] != 50 || n[Unchecked] != 50 {
		t.Errorf("statuses %v", n)
	}
	for _, s := range sites {
		if c := s.count("/robots.txt"); c != 1 {
			t.Errorf("%s: robots.txt fetched %d times", s.URL, c)
		}
	}
	if len(a.robots.m) != 5 {
		t.Errorf("%d origins kept", len(a.robots.m))
	}
}

// The kept answers are bounded, the oldest forgotten first, and a
// failure is not kept.
func TestRobotsCacheBounded(t *testing.T) {
	cfg := Config{}.Defaults()
	rc := newRobotsCache(&cfg, nil, nil)
	for i := 0; i < robotsMaxKept+5; i++ {
		e, leader := rc.join(fmt.Sprintf("http://h%d", i))
		if !leader {
			t.Fatal("not the leader")
		}
		e.rules.rules = []robotsRule{{pattern: "/x"}}
		rc.land(e)
	}
	if len(rc.m) != robotsMaxKept || rc.bytes != robotsMaxKept*(2+32) {
		t.Errorf("%d kept, %d bytes", len(rc.m), rc.bytes)
	}
	if _, leader := rc.join("http://h0"); !leader {
		t.Errorf("the oldest is still kept")
	}
	e, _ := rc.join("http://failing")
	e.fail = &Check{Status: Failing, Class: ClassTimeout}
	rc.land(e)
	if _, ok := rc.m["http://failing"]; ok {
		t.Errorf("a failure is kept")
	}
	// bytes: one huge file pushes the others out
	big, _ := rc.join("http://big")
	big.rules.rules = []robotsRule{{pattern: strings.Repeat("/x", robotsMaxKeptBytes/2)}}
	rc.land(big)
	if rc.bytes > robotsMaxKeptBytes || len(rc.m) > robotsMaxKept {
		t.Errorf("%d bytes, %d kept", rc.bytes, len(rc.m))
	}
}

// A robots.txt past 500 KiB is read to there.
func TestRobotsLarge(t *testing.T) {
	body := "User-agent: *\nDisallow: /early\n" + strings.Repeat("# filler filler filler filler filler filler\n", robotsMaxBytes/40) +
		"Disallow: /late\n"
	s := newRobotsSite(t, robotsBody(body))
	a := New(robotsConfig(), nil)
	r1, _ := a.Check(context.Background(), linkFor(s.URL+"/early"))
	r2, _ := a.Check(context.Background(), linkFor(s.URL+"/late"))
	if r1.Status != Unchecked || r2.Status != OK {
		t.Errorf("early %s, late %s", r1.Status, r2.Status)
	}
}

// A robots.txt unreachable for 30 days is taken as unavailable (RFC 9309
// §2.3.1.4): the history keeps since when, so that a site answering 5xx
// to everything is checked again, and can end dead, instead of staying
// unchecked for ever. A file that answers again starts the count anew.
func TestRobotsUnreachableThirtyDays(t *testing.T) {
	var robots atomic.Int32
	robots.Store(503)
	var pages atomic.Int32
	srv := server(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.WriteHeader(int(robots.Load()))
			return
		}
		pages.Add(1)
		w.WriteHeader(500)
	})
	db, path := openTestDB(t)
	clk := newFakeClock()
	start := clk.Now()
	cfg := robotsConfig()
	cfg.Clock = clk
	day := 24 * time.Hour
	for i, s := range []struct {
		at     time.Duration
		robots int32
		status Status
		class  Class
	}{
		{0, 503, Unchecked, ClassRobots},
		{10 * day, 503, Unchecked, ClassRobots},
		{29 * day, 503, Unchecked, ClassRobots},
		{30 * day, 503, Failing, ClassHTTP}, // unreachable since day 0: unavailable
		{31 * day, 503, Failing, ClassHTTP},
		{37 * day, 503, Dead, ClassHTTP}, // 3 failures over 7 days
		{38 * day, 404, Dead, ClassHTTP}, // robots.txt answers again: the count is over
		{39 * day, 503, Unchecked, ClassRobots},
		{68 * day, 503, Unchecked, ClassRobots},
		{69 * day, 503, Dead, ClassHTTP}, // 30 days since day 39
	} {
		clk.now = start.Add(s.at)
		robots.Store(s.robots)
		before := pages.Load()
		r, err := New(cfg, db).Check(context.Background(), linkFor(srv.URL+"/x"))
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != s.status || r.Check.Class != s.class {
			t.Errorf("step %d (day %v): %s %+v", i, s.at/day, r.Status, r.Check)
		}
		if asked := pages.Load() != before; asked != (s.class == ClassHTTP) {
			t.Errorf("step %d: page asked %v", i, asked)
		}
	}
	// without a history, every run starts the count anew
	clk.now = start.Add(200 * day)
	robots.Store(503)
	if r, _ := New(cfg, nil).Check(context.Background(), linkFor(srv.URL+"/x")); r.Status != Unchecked {
		t.Errorf("no history: %s %+v", r.Status, r.Check)
	}
	// a history made before the robots table gets it when opened
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`DROP TABLE robots`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	db2, err := OpenDB(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	if since := db2.robotsUnreachable("http://h", start); !since.Equal(start) {
		t.Errorf("robots table: since %v", since)
	}
	if since := db2.robotsUnreachable("http://h", start.Add(day)); !since.Equal(start) {
		t.Errorf("robots table keeps the first: since %v", since)
	}
}

// An unreachable robots.txt is asked again after robotsRecheck within a
// run; an answer that it is there is kept for the run.
func TestRobotsRecheck(t *testing.T) {
	var code atomic.Int32
	code.Store(503)
	s := newRobotsSite(t, func(w http.ResponseWriter, _ *http.Request) {
		if c := int(code.Load()); c != 200 {
			w.WriteHeader(c)
			return
		}
		fmt.Fprint(w, "User-agent: *\nDisallow: /no\n")
	})
	clk := newFakeClock()
	cfg := robotsConfig()
	cfg.Clock = clk
	a := New(cfg, nil)
	for i, c := range []struct {
		after  time.Duration
		code   int32
		path   string
		status Status
		asked  int // robots.txt requests so far
	}{
		{0, 503, "/a", Unchecked, 1},
		{robotsRecheck / 2, 200, "/b", Unchecked, 1}, // still taken as unreachable
		{robotsRecheck / 2, 200, "/c", OK, 2},        // asked again: there now
		{robotsRecheck, 200, "/no", Unchecked, 2},
		{robotsRecheck * 3, 503, "/d", OK, 2}, // an answer that it is there is kept
	} {
		clk.advance(c.after)
		code.Store(c.code)
		r, err := a.Check(context.Background(), linkFor(s.URL+c.path))
		if err != nil || r.Status != c.status || s.count("/robots.txt") != c.asked {
			t.Errorf("step %d: %s %+v, robots.txt asked %d times, want %s and %d", i, r.Status, r.Check, s.count("/robots.txt"), c.status, c.asked)
		}
	}
}
