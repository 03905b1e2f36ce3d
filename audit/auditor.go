package audit

import (
	"context"
	"math/rand/v2"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Auditor checks links with politeness: at most Config.Concurrency checks
// at once, at most the host's limit of them on one host, requests to a
// host started at least its interval apart (or its robots.txt's
// Crawl-delay, when longer), the robots.txt of each http(s) origin
// honoured, retries with backoff, a host that failed with a DNS error or
// a refused connection left alone for the rest of the run, and links
// that differ only in their #fragment fetched once. An Auditor is meant
// for one run: the host failures, robots.txt answers and checks it
// remembers are those of the run.
type Auditor struct {
	cfg    Config
	k      *checkers
	db     *DB
	arch   *archives
	robots *robotsCache

	shared  sharedChecks // checks by URL without fragment
	started time.Time    // when the run began: its checks in the history are this run's

	mu      sync.Mutex
	cond    *sync.Cond
	hosts   map[string]*hostState
	ready   []*hostState             // hosts with pending links and a free slot, in turn
	pending int                      // links queued, over all hosts
	closed  bool                     // no more links will be queued
	delays  map[string]time.Duration // robots.txt crawl delays by host key, for hosts made again

	checked   atomic.Int64
	byStatus  [7]atomic.Int64 // by statusIndex
	backingOf atomic.Int64    // links waiting out a retry backoff now
	hostsBack atomic.Int64    // hosts with such a link
}

// statusIndex numbers the statuses for the progress counters.
var statusIndex = map[Status]int{OK: 0, Redirected: 1, Failing: 2, Dead: 3, Blocked: 4, Unchecked: 5, OfflineOK: 6}

// maxPending bounds the links queued per worker, waiting for their hosts.
const maxPending = 256

type hostState struct {
	name    string
	limit   HostLimit
	active  int
	queue   []Link
	inReady bool
	next    time.Time     // the earliest start of the next request
	crawl   time.Duration // robots.txt's Crawl-delay: a lower bound of limit.Interval (under mu)
	failed  *Check        // a DNS failure or refused connection of this run
	backing int           // its links waiting out a retry backoff now
	mu      sync.Mutex
}

// New returns an Auditor with cfg (Defaults applied) keeping its history
// in db (nil: no history: every link is checked and no link is Dead but
// one whose failure is permanent, a syntax error).
func New(cfg Config, db *DB) *Auditor {
	cfg = cfg.Defaults()
	a := &Auditor{cfg: cfg, db: db, hosts: map[string]*hostState{}, started: cfg.Clock.Now()}
	a.shared.filter = db != nil
	a.k = newCheckers(&a.cfg)
	a.arch = newArchives(&a.cfg, a.k)
	a.robots = newRobotsCache(&a.cfg, a.k.http.client, db)
	a.delays = map[string]time.Duration{}
	a.cond = sync.NewCond(&a.mu)
	return a
}

// Progress is a snapshot of a run.
type Progress struct {
	Checked   int64            // links done
	ByStatus  map[Status]int64 // of those
	BackingOf int64            // links waiting out a retry backoff now
	HostsBack int64            // hosts with a link waiting out a retry backoff now
	Pending   int              // links queued
}

// Progress returns the counts so far; it may be called while Run runs.
// The counts by status never add up to more than Checked.
func (a *Auditor) Progress() Progress {
	p := Progress{ByStatus: map[Status]int64{}, BackingOf: a.backingOf.Load(), HostsBack: a.hostsBack.Load()}
	// count adds to checked first, then to the status: read the other way
	for s, i := range statusIndex {
		p.ByStatus[s] = a.byStatus[i].Load()
	}
	p.Checked = a.checked.Load()
	a.mu.Lock()
	p.Pending = a.pending
	a.mu.Unlock()
	return p
}

// Run checks every link read from in until in is closed, calling out once
// per link read (never concurrently; in no particular order). When ctx is
// canceled it stops reading in; the links read and not yet done are
// reported Unchecked with ClassCanceled (or answered from the history),
// and it returns when they are. It returns the first error of the history,
// if any.
func (a *Auditor) Run(ctx context.Context, in <-chan Link, out func(Result)) error {
	var outMu sync.Mutex
	var errMu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	for i := 0; i < a.cfg.Concurrency; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				l, hs, ok := a.take()
				if !ok {
					return
				}
				h := &holder{hs: hs}
				r, err := a.one(ctx, l, h)
				h.release(a)
				if err != nil {
					errMu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					errMu.Unlock()
				}
				a.count(r.Status)
				outMu.Lock()
				out(r)
				outMu.Unlock()
			}
		}()
	}
feed:
	for {
		select {
		case l, ok := <-in:
			if !ok {
				break feed
			}
			a.put(l)
		case <-ctx.Done():
			break feed
		}
	}
	a.mu.Lock()
	a.closed = true
	a.cond.Broadcast()
	a.mu.Unlock()
	wg.Wait()
	return firstErr
}

// Check checks one link (see Run). It takes a slot of the link's host
// without waiting for one: callers that check links concurrently use Run.
func (a *Auditor) Check(ctx context.Context, l Link) (Result, error) {
	a.mu.Lock()
	hs := a.host(l)
	hs.active++
	a.mu.Unlock()
	h := &holder{hs: hs}
	r, err := a.one(ctx, l, h)
	h.release(a)
	a.count(r.Status)
	return r, err
}

func (a *Auditor) count(s Status) {
	a.checked.Add(1)
	if i, ok := statusIndex[s]; ok {
		a.byStatus[i].Add(1)
	}
}

// hostKey is the host whose limits a link goes through: the host and port
// as written in the URL (lower case, no user information), so that two
// servers on one address are two hosts. Links of schemes checked without
// a connection to their host share one unlimited queue.
func hostKey(l *Link) string {
	if !networked(l.Scheme) {
		return ""
	}
	u, err := url.Parse(l.URL)
	if err != nil || u.Host == "" {
		return strings.ToLower(l.Host)
	}
	return strings.ToLower(u.Host)
}

// host returns the state of l's host; a.mu is held.
func (a *Auditor) host(l Link) *hostState {
	key := hostKey(&l)
	hs := a.hosts[key]
	if hs == nil {
		hs = a.newHost(key)
		if key == "" {
			hs.limit = HostLimit{PerHost: a.cfg.Concurrency}
		}
		a.hosts[key] = hs
	}
	return hs
}

// newHost makes the state of host key, with its limits and the crawl
// delay its robots.txt gave earlier in the run; a.mu is held.
func (a *Auditor) newHost(key string) *hostState {
	hs := &hostState{name: key, limit: a.cfg.hostLimit(key)}
	if d := a.delays[key]; d > 0 {
		hs.crawl, hs.limit.PerHost = d, 1
	}
	return hs
}

// crawlDelay makes d (a robots.txt Crawl-delay, capped at MaxCrawlDelay)
// the least interval between two requests to host key for the rest of
// the run, one at a time.
func (a *Auditor) crawlDelay(key string, d time.Duration) {
	if d > a.cfg.MaxCrawlDelay {
		d = a.cfg.MaxCrawlDelay
	}
	if d <= 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if d > a.delays[key] {
		a.delays[key] = d
	}
	if hs := a.hosts[key]; hs != nil {
		hs.limit.PerHost = 1
		hs.mu.Lock()
		if d > hs.crawl {
			hs.crawl = d
		}
		// robots.txt was fetched just now: the next request waits d from here
		if t := a.cfg.Clock.Now().Add(d); t.After(hs.next) {
			hs.next = t
		}
		hs.mu.Unlock()
	}
}

// put queues l, waiting while maxPending links per worker are queued.
func (a *Auditor) put(l Link) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for a.pending >= maxPending*a.cfg.Concurrency {
		a.cond.Wait()
	}
	hs := a.host(l)
	hs.queue = append(hs.queue, l)
	a.pending++
	if !hs.inReady && hs.active < hs.limit.PerHost {
		hs.inReady = true
		a.ready = append(a.ready, hs)
	}
	a.cond.Broadcast()
}

// take returns the next link of the first host in turn that has a free
// slot, taking the slot; ok is false when every link is done.
func (a *Auditor) take() (Link, *hostState, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var hs *hostState
	for hs == nil {
		for len(a.ready) == 0 {
			if a.closed && a.pending == 0 {
				return Link{}, nil, false
			}
			a.cond.Wait()
		}
		hs = a.ready[0]
		a.ready = a.ready[1:]
		hs.inReady = false
		if hs.active >= hs.limit.PerHost || len(hs.queue) == 0 {
			hs = nil // its slots went to redirects meanwhile: release puts it back
		}
	}
	l := hs.queue[0]
	hs.queue[0] = Link{}
	hs.queue = hs.queue[1:]
	if len(hs.queue) == 0 {
		hs.queue = nil
	}
	a.pending--
	hs.active++
	if len(hs.queue) > 0 && hs.active < hs.limit.PerHost {
		hs.inReady = true
		a.ready = append(a.ready, hs)
	}
	a.cond.Broadcast()
	return l, hs, true
}

// holder is the host slot a link's check holds: the slot of the link's
// host, or of the host a redirect led to; nil when it gave its slot back
// to wait for a shared check.
type holder struct {
	hs *hostState
	iv time.Duration // the interval its last request's slot kept (robots.txt's Crawl-delay may make it longer)
}

// release gives back h's slot, if it holds one.
func (h *holder) release(a *Auditor) {
	if h.hs != nil {
		a.release(h.hs)
		h.hs = nil
	}
}

// acquire takes a slot of the host key (name:port), waiting for one; a
// canceled ctx takes it without waiting.
func (a *Auditor) acquire(ctx context.Context, key string) *hostState {
	a.mu.Lock()
	defer a.mu.Unlock()
	for {
		hs := a.hosts[key]
		if hs == nil {
			hs = a.newHost(key)
			a.hosts[key] = hs
		}
		if hs.active < hs.limit.PerHost || ctx.Err() != nil {
			hs.active++
			return hs
		}
		a.cond.Wait()
	}
}

// moveTo gives back h's slot and takes one of the host key instead: a
// check holds one slot at a time, so waiting for one cannot deadlock.
func (a *Auditor) moveTo(ctx context.Context, h *holder, key string) {
	if h.hs.name == key {
		return
	}
	a.release(h.hs)
	h.hs = a.acquire(ctx, key)
}

// release gives back a slot of hs.
func (a *Auditor) release(hs *hostState) {
	a.mu.Lock()
	defer a.mu.Unlock()
	hs.active--
	if len(hs.queue) > 0 && !hs.inReady && hs.active < hs.limit.PerHost {
		hs.inReady = true
		a.ready = append(a.ready, hs)
	}
	if hs.active == 0 && len(hs.queue) == 0 && hs.name != "" {
		// forget idle hosts, so that memory follows the hosts in play;
		// a host that failed is kept, to short-circuit its later links,
		// and so is one whose next request must still wait
		hs.mu.Lock()
		keep := hs.failed != nil || hs.next.After(a.cfg.Clock.Now())
		hs.mu.Unlock()
		if !keep {
			delete(a.hosts, hs.name)
		}
	}
	a.cond.Broadcast()
}

// slot waits until a request to hs may start: hs.next, then moves hs.next
// on by the host's interval.
func (a *Auditor) slot(ctx context.Context, hs *hostState) error {
	_, err := a.slotIv(ctx, hs)
	return err
}

// slotH is slot for the host h holds, keeping the interval in h.
func (a *Auditor) slotH(ctx context.Context, h *holder) error {
	iv, err := a.slotIv(ctx, h.hs)
	h.iv = iv
	return err
}

// slotIv is slot, returning the interval it kept.
func (a *Auditor) slotIv(ctx context.Context, hs *hostState) (time.Duration, error) {
	hs.mu.Lock()
	now := a.cfg.Clock.Now()
	start := hs.next
	if start.Before(now) {
		start = now
	}
	iv := hs.limit.Interval
	if hs.crawl > iv {
		iv = hs.crawl
	}
	hs.next = start.Add(iv)
	hs.mu.Unlock()
	return iv, a.cfg.Clock.Sleep(ctx, start.Sub(now))
}

// holdOff pushes the next request to hs back by d (a Retry-After).
func (a *Auditor) holdOff(hs *hostState, d time.Duration) {
	hs.mu.Lock()
	if t := a.cfg.Clock.Now().Add(d); t.After(hs.next) {
		hs.next = t
	}
	hs.mu.Unlock()
}

// backoff is the wait before retry number n (0 for the first): Backoff
// doubled n times, capped at MaxBackoff, plus up to 50% jitter.
func (a *Auditor) backoff(n int) time.Duration {
	d := a.cfg.Backoff
	for i := 0; i < n && d < a.cfg.MaxBackoff; i++ {
		d *= 2
	}
	if d > a.cfg.MaxBackoff {
		d = a.cfg.MaxBackoff
	}
	if d > 1 {
		d += rand.N(d/2 + 1)
	}
	return d
}

// one checks one link, from the history when allowed.
func (a *Auditor) one(ctx context.Context, l Link, h *holder) (Result, error) {
	now := a.cfg.Clock.Now()
	if l.Cut {
		// what is left of a link cut at the length limit is not the link:
		// neither checked, nor answered from or recorded in the history
		l.URL = Redact(l.URL)
		c := Check{Time: now, Status: Unchecked, Class: ClassTooLong, Error: "too long: cut at the length limit, not checked"}
		return Result{Link: l, Check: c, Status: Unchecked, FirstSeen: now}, nil
	}
	fromHistory := a.cfg.Offline && (networked(l.Scheme) || (l.Scheme == "mailto" && a.cfg.MX))
	if a.db != nil && (fromHistory || a.cfg.MaxAge > 0) {
		r, ok, err := a.db.cached(l, now, a.cfg.MaxAge, fromHistory, &a.cfg)
		if err != nil {
			r, _ := a.finish(ctx, l, Check{Time: now, Status: Unchecked, Class: ClassLookup, Error: err.Error()}, false)
			return r, err
		}
		if ok {
			if err := a.archive(ctx, &r, l.URL); err != nil {
				return r, err
			}
			return r, nil
		}
	}
	if fromHistory {
		return a.finish(ctx, l, Check{Time: now, Status: Unchecked, Class: ClassOffline, Error: "offline, and not in the history"}, false)
	}
	var c Check
	if key, ok := fetchKey(&l); ok {
		c = a.checkShared(ctx, &l, h, key) // fetched once per URL without fragment
	} else {
		c = a.check(ctx, &l, h)
	}
	c.Time = now
	c.Elapsed = a.cfg.Clock.Now().Sub(now)
	return a.finish(ctx, l, c, true)
}

// backingOff counts a link of hs that starts (d 1) or ends (d -1)
// waiting out a retry backoff, and hs among the hosts with one.
func (a *Auditor) backingOff(hs *hostState, d int) {
	a.backingOf.Add(int64(d))
	hs.mu.Lock()
	hs.backing += d
	if hs.backing == 0 || hs.backing == 1 && d == 1 {
		a.hostsBack.Add(int64(d))
	}
	hs.mu.Unlock()
}

// check makes the attempts of one link.
func (a *Auditor) check(ctx context.Context, l *Link, h *holder) Check {
	hs := h.hs
	origin := hs.name
	u, c := target(l, a.cfg.AnyPort)
	if c != nil {
		return *c
	}
	if !networked(l.Scheme) {
		lctx, cancel := context.WithTimeout(ctx, a.cfg.Timeout)
		defer cancel()
		return a.k.attempt(lctx, l, u)
	}
	hs.mu.Lock()
	failed := hs.failed
	hs.mu.Unlock()
	if failed != nil {
		if failed.Class == ClassForbidden {
			// a refusal by policy says nothing of the target: never a
			// failure, in the report or in the history
			return Check{Status: Unchecked, Class: failed.Class, Error: "not tried: an earlier link of this host was refused: " + failed.Error}
		}
		return Check{Status: Failing, Class: failed.Class, Error: "not tried: an earlier link of this host failed: " + failed.Error}
	}
	lctx, cancel := context.WithTimeout(ctx, a.cfg.LinkTimeout)
	defer cancel()
	// a redirect to another host waits for a slot of that host and its
	// interval, as a link of that host would
	lctx = context.WithValue(lctx, hopKey{}, hopFunc(func(ctx context.Context, to *url.URL) error {
		a.moveTo(ctx, h, strings.ToLower(to.Host))
		return a.slotH(ctx, h)
	}))
	if !a.cfg.IgnoreRobots {
		// each request asks its origin's robots.txt first; fetching it is
		// a request to the host, so the page's waits for the interval again
		lctx = context.WithValue(lctx, robotsKey{}, robotsFunc(func(ctx context.Context, to *url.URL) *Check {
			c, fetched := a.robots.check(ctx, to, a.crawlDelay)
			if c != nil {
				return c
			}
			h.hs.mu.Lock()
			longer := h.hs.crawl > h.iv
			h.hs.mu.Unlock()
			if fetched || longer {
				// robots.txt was fetched (a request to the host), or its
				// Crawl-delay came after this request's slot: wait again
				if err := a.slotH(ctx, h); err != nil {
					cl, msg := classify(err)
					return &Check{Status: Failing, Class: cl, Error: msg, retry: cl == ClassTimeout}
				}
			}
			return nil
		}))
	}
	attempts := 0
	var last Check
	for n := 0; ; n++ {
		a.moveTo(lctx, h, origin) // a retry begins at the link's own host
		hs = h.hs
		if err := a.slotH(lctx, h); err != nil {
			break
		}
		actx, acancel := context.WithTimeout(lctx, a.cfg.Timeout)
		began := time.Now()
		c := a.k.attempt(actx, l, u)
		acancel()
		if c.Class == ClassTimeout {
			c.Error = timedOut(time.Since(began))
		}
		attempts += c.Attempts
		last = c
		if c.Class == ClassDNS || c.Class == ClassRefused || c.Class == ClassForbidden {
			// the host that failed: the link's own, or the one a redirect
			// led to (whose slot the check holds now)
			f := h.hs
			f.mu.Lock()
			if f.failed == nil {
				f.failed = &c
			}
			f.mu.Unlock()
			break
		}
		if !c.retry || n >= a.cfg.Retries || lctx.Err() != nil {
			break
		}
		wait := a.backoff(n)
		if c.retryAfter > 0 {
			if c.retryAfter > a.cfg.MaxRetryAfter {
				break // the server asks for longer than we wait: give up for this run
			}
			if c.retryAfter > wait {
				wait = c.retryAfter
			}
			a.holdOff(h.hs, wait)
		}
		a.backingOff(hs, 1)
		err := a.cfg.Clock.Sleep(lctx, wait)
		a.backingOff(hs, -1)
		if err != nil {
			break
		}
	}
	if last.Status == "" {
		last = Check{Status: Failing, Class: ClassTimeout, Error: "no attempt in the time allowed for a link (" + a.cfg.LinkTimeout.String() + ")"}
		if ctx.Err() != nil {
			last.Class, last.Error = ClassCanceled, "canceled"
		}
	}
	if ctx.Err() != nil && last.Status != OK && last.Status != Redirected {
		last.Status, last.Class, last.Error = Unchecked, ClassCanceled, "canceled: "+last.Error
	}
	last.Attempts = attempts
	return last
}

// finish turns a check into a result through the history, and looks for
// an archived copy when the link fails.
func (a *Auditor) finish(ctx context.Context, l Link, c Check, record bool) (Result, error) {
	raw := l.URL
	l.URL = Redact(l.URL)
	r := Result{Link: l, Check: c, Status: c.Status, FirstSeen: c.Time}
	if c.Status.Works() {
		r.LastOK = c.Time
	}
	if c.Status == Failing {
		r.Failures, r.FailingSince = 1, c.Time
		if deadAtOnce(&c) {
			r.Status = Dead // with or without a history
		}
	}
	if a.db != nil && c.Class != ClassCanceled {
		var err error
		if r, err = a.db.record(r, record, &a.cfg); err != nil {
			return r, err
		}
	}
	return r, a.archive(ctx, &r, raw)
}

// timedOut says that an attempt timed out, after how long: "timed out
// after 10s", in whole seconds past 10s and tenths below, rather than
// the "context deadline exceeded" of the error it came as.
func timedOut(d time.Duration) string {
	if d >= 10*time.Second {
		d = d.Round(time.Second)
	} else {
		d = d.Round(100 * time.Millisecond)
	}
	return "timed out after " + d.String()
}
