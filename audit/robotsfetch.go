package audit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The robots.txt files of a run (RFC 9309): fetched once per origin
// (scheme, host and port) when a link of it is first checked, kept for
// the run, and asked before every request of an http(s) check, the
// link's own and each redirect's.

const (
	robotsMaxRedirects = 5        // RFC 9309 §2.3.1.2: at least five
	robotsMaxKept      = 4096     // origins whose answer a run keeps
	robotsMaxKeptBytes = 16 << 20 // bytes of rules a run keeps

	// robotsGiveUp is how long a robots.txt may be unreachable before it is
	// taken as unavailable (RFC 9309 §2.3.1.4: 30 days), which allows
	// everything; the history keeps since when.
	robotsGiveUp = 30 * 24 * time.Hour

	// robotsRecheck is how long a run keeps the answer that a robots.txt
	// is unreachable before asking again: a 503 of a moment must not
	// leave a long run's links of the origin unchecked.
	robotsRecheck = 10 * time.Minute
)

// robotsKey is the context key of a robotsFunc.
type robotsKey struct{}

// robotsFunc is asked before each request of an http(s) check: it returns
// nil when the URL may be fetched, else the Check that says why not:
// Unchecked with ClassRobots, or the failure met fetching robots.txt
// (the host cannot be reached: the page could not be either).
type robotsFunc func(ctx context.Context, u *url.URL) *Check

// robotsCache holds the answers of the robots.txt files of a run.
type robotsCache struct {
	cfg    *Config
	client *http.Client
	token  string // the product token matched against user-agent lines
	db     *DB    // keeps since when a robots.txt is unreachable; nil: none

	mu    sync.Mutex
	m     map[string]*robotsEntry // by origin
	ring  []*robotsEntry          // in the order added
	bytes int                     // of rules kept
}

// robotsEntry is the answer of one origin's robots.txt.
type robotsEntry struct {
	done   chan struct{} // closed when the rest is set
	origin string
	rules  robotsRules // when neither all nor fail
	all    string      // "" or why every URL is disallowed (robots.txt unreachable)
	until  time.Time   // when all is set: until when it holds (robotsRecheck)
	fail   *Check      // the failure met fetching it (not kept)
	size   int
}

func newRobotsCache(cfg *Config, client *http.Client, db *DB) *robotsCache {
	token := cfg.RobotsAgent
	if token == "" {
		token = agentToken(cfg.UserAgent)
	}
	return &robotsCache{cfg: cfg, client: client, token: token, db: db, m: map[string]*robotsEntry{}}
}

// robotsOrigin is the origin of an http(s) URL as robots.txt files are
// kept: scheme, host and port, lower case.
func robotsOrigin(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}

// robotsPath is what robots.txt rules are matched against: the URL's
// path (at least "/") and query, as sent.
func robotsPath(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" || u.ForceQuery {
		p += "?" + u.RawQuery
	}
	return p
}

// check answers whether u may be fetched (nil) or not (the Check that
// says why), and whether this call fetched robots.txt (a request to the
// host, which the page's request must keep its distance from). The first
// link of an origin fetches its robots.txt; the others wait for it. delay
// is told its Crawl-delay, if any.
func (rc *robotsCache) check(ctx context.Context, u *url.URL, delay func(host string, d time.Duration)) (*Check, bool) {
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return nil, false
	}
	origin := robotsOrigin(u)
	e, leader := rc.join(origin)
	if leader {
		rc.fetch(ctx, e)
		rc.remember(e)
		if e.fail == nil && e.rules.crawlDelay > 0 {
			delay(strings.ToLower(u.Host), e.rules.crawlDelay) // before the others go on
		}
		rc.land(e)
	} else {
		select {
		case <-e.done:
		case <-ctx.Done():
			cl, msg := classify(ctx.Err())
			return &Check{Status: Failing, Class: cl, Error: "waiting for robots.txt: " + msg, retry: cl == ClassTimeout}, false
		}
	}
	switch {
	case e.fail != nil:
		c := *e.fail
		return &c, leader
	case e.all != "":
		return &Check{Status: Unchecked, Class: ClassRobots, Error: e.all}, leader
	}
	if ok, rule := e.rules.allowed(robotsPath(u)); !ok {
		return &Check{Status: Unchecked, Class: ClassRobots,
			Error: fmt.Sprintf("disallowed by %s/robots.txt (Disallow: %s)", origin, clip(rule.pattern, 200))}, leader
	}
	return nil, leader
}

// join returns the entry of origin, and whether the caller fetches it:
// when there is none, or it says robots.txt is unreachable and its time
// is up.
func (rc *robotsCache) join(origin string) (*robotsEntry, bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if e, ok := rc.m[origin]; ok {
		if !closed(e.done) || e.all == "" || rc.cfg.Clock.Now().Before(e.until) {
			return e, false
		}
		rc.bytes -= e.size // asked again: the new answer replaces it
	}
	e := &robotsEntry{done: make(chan struct{}), origin: origin}
	rc.m[origin] = e
	rc.ring = append(rc.ring, e)
	return e, true
}

// land wakes those waiting for e, and keeps it for the run (within
// robotsMaxKept origins and robotsMaxKeptBytes of rules, the oldest
// forgotten first) unless it is a failure, which the next link of the
// origin tries again.
func (rc *robotsCache) land(e *robotsEntry) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	close(e.done)
	if e.fail != nil {
		if rc.m[e.origin] == e {
			delete(rc.m, e.origin)
		}
	} else {
		for _, r := range e.rules.rules {
			e.size += len(r.pattern) + 32
		}
		rc.bytes += e.size
	}
	kept := func(x *robotsEntry) bool { return rc.m[x.origin] == x }
	for n := len(rc.ring); n > 0 && (len(rc.m) > robotsMaxKept || rc.bytes > robotsMaxKeptBytes); n-- {
		old := rc.ring[0]
		rc.ring = rc.ring[1:]
		switch {
		case !kept(old):
		case !closed(old.done):
			rc.ring = append(rc.ring, old) // still being fetched: later
		default:
			rc.bytes -= old.size
			delete(rc.m, old.origin)
		}
	}
	if len(rc.ring) > 2*len(rc.m)+64 {
		// failures, gone from the map, pile up here
		live := rc.ring[:0]
		for _, x := range rc.ring {
			if kept(x) {
				live = append(live, x)
			}
		}
		clear(rc.ring[len(live):])
		rc.ring = live
	}
}

func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// remember sets until when an unreachable robots.txt is taken so in this
// run (robotsRecheck), keeps in the history since when it has been
// unreachable, and takes one unreachable for robotsGiveUp as unavailable
// (everything allowed; RFC 9309 §2.3.1.4). A file that answered forgets
// it; a failure to connect says nothing of it.
func (rc *robotsCache) remember(e *robotsEntry) {
	if e.all != "" {
		e.until = rc.cfg.Clock.Now().Add(robotsRecheck)
	}
	if rc.db == nil || e.fail != nil {
		return
	}
	if e.all == "" {
		rc.db.robotsReachable(e.origin)
		return
	}
	now := rc.cfg.Clock.Now()
	if since := rc.db.robotsUnreachable(e.origin, now); now.Sub(since) >= robotsGiveUp {
		e.all = ""
		e.rules = robotsRules{}
	}
}

// fetch gets e's robots.txt: redirects followed up to robotsMaxRedirects
// (to other hosts too), at most robotsMaxBytes read. A 2xx answer is
// parsed; 4xx (but 429) means there is none: everything is allowed; 429,
// 5xx and an answer cut short mean it is unreachable: nothing is fetched
// (RFC 9309 §2.3.1.3-4); a failure to connect (DNS, refused, timeout,
// TLS, the security guard) is the link's failure.
func (rc *robotsCache) fetch(ctx context.Context, e *robotsEntry) {
	// built, not parsed: the origin holds the host as url.URL.Host does,
	// unescaped (an IPv6 zone "fe80::1%lo" would not parse back)
	scheme, host, _ := strings.Cut(e.origin, "://")
	cur := &url.URL{Scheme: scheme, Host: host, Path: "/robots.txt"}
	for hop := 0; ; hop++ {
		code, header, body, err := rc.get(ctx, cur)
		if err != nil {
			cl, msg := classify(err)
			c := &Check{Status: Failing, Class: cl, Error: "fetching robots.txt: " + msg}
			c.retry = cl == ClassTimeout || cl == ClassNetwork
			if cl == ClassForbidden || cl == ClassCanceled {
				c.Status = Unchecked
			}
			e.fail = c
			return
		}
		switch {
		case isRedirect(code):
			next, err := cur.Parse(header.Get("Location"))
			switch {
			case header.Get("Location") == "" || err != nil || next.Scheme != "http" && next.Scheme != "https":
				return // no robots.txt to be had: unavailable, everything allowed
			case hop+1 > robotsMaxRedirects:
				return // RFC 9309 §2.3.1.2: unavailable
			case !rc.cfg.AnyPort && badPort(next.Scheme, next.Port()):
				return
			}
			next.Fragment = ""
			cur = next
		case code >= 200 && code < 300:
			if body == nil {
				e.all = "robots.txt of " + e.origin + " cut short: nothing fetched (RFC 9309 §2.3.1.4)"
				return
			}
			e.rules = parseRobots(body, rc.token)
			return
		case code == http.StatusTooManyRequests || code >= 500:
			e.all = "robots.txt of " + e.origin + " unreachable (HTTP " + strconv.Itoa(code) + "): nothing fetched (RFC 9309 §2.3.1.4)"
			return
		default:
			return // 4xx, or an answer that is no robots.txt: unavailable, everything allowed
		}
	}
}

// get makes one GET of robots.txt, without credentials or cookies, and
// reads at most robotsMaxBytes of a 2xx body (nil when it could not be
// read whole, up to that bound).
func (rc *robotsCache) get(ctx context.Context, u *url.URL) (int, http.Header, []byte, error) {
	target := *u
	target.User = nil
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target.String(), nil)
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("User-Agent", rc.cfg.UserAgent)
	req.Header.Set("Accept", "text/plain, */*;q=0.5")
	resp, err := rc.client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	var body []byte
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		body, err = io.ReadAll(io.LimitReader(resp.Body, robotsMaxBytes+1))
		if err != nil && !errors.Is(err, io.EOF) {
			body = nil
		} else if body == nil {
			body = []byte{}
		}
	}
	return resp.StatusCode, resp.Header, body, nil
}
