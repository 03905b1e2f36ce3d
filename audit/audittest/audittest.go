// Package audittest builds audit histories for the tests of what reads
// them (the archive rules of package rewrite, `linkscan rewrite --db`):
// real audits, by package audit's engine, of links on a loopback HTTP
// server, with the archived copies of their failures from a loopback
// server that speaks the Wayback CDX API, on days a fake clock gives.
// Nothing here leaves the loopback interface.
package audittest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkscan/linkscan/audit"
	"github.com/linkscan/linkscan/uri"
)

// Replay is the Wayback replay prefix of the captures the CDX server
// gives (the real one: no request ever goes there).
const Replay = "https://web.archive.org/web/"

// Site is a loopback web site and a CDX API for its archived copies.
//
// Paths under /ok/ answer 200, under /moved/ a 301 to the same path
// under /ok/, under /gone/ (and any other) 404.
type Site struct {
	URL string // http://127.0.0.1:PORT, no slash at the end
	CDX string // the CDX API's URL

	mu       sync.Mutex
	captures map[string][]time.Time // by URL as asked
	queries  int
}

// NewSite starts the servers, closed at the end of the test.
func NewSite(t testing.TB) *Site {
	s := &Site{captures: map[string][]time.Time{}}
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/ok/"):
			w.Write([]byte("here\n"))
		case strings.HasPrefix(r.URL.Path, "/moved/"):
			http.Redirect(w, r, "/ok/"+strings.TrimPrefix(r.URL.Path, "/moved/"), http.StatusMovedPermanently)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(web.Close)
	cdx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("output") != "json" || len(q.Get("closest")) != 14 {
			http.Error(w, "bad query", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.queries++
		caps := s.captures[q.Get("url")]
		s.mu.Unlock()
		if len(caps) == 0 {
			return // as the real API: an empty answer
		}
		rows := [][]string{{"timestamp", "original", "statuscode"}}
		for _, c := range caps {
			rows = append(rows, []string{c.UTC().Format("20060102150405"), q.Get("url"), "200"})
		}
		json.NewEncoder(w).Encode(rows)
	}))
	t.Cleanup(cdx.Close)
	s.URL, s.CDX = web.URL, cdx.URL+"/cdx/search/cdx"
	return s
}

// AddCapture makes the CDX API know a capture of rawURL (as the audit
// asks for it: its canonical form) at time at, with status 200.
func (s *Site) AddCapture(rawURL string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.captures[rawURL] = append(s.captures[rawURL], at)
}

// Queries returns the number of queries the CDX API answered.
func (s *Site) Queries() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queries
}

// CaptureURL is the URL the audit keeps for a capture of rawURL at at.
func CaptureURL(rawURL string, at time.Time) string {
	return Replay + at.UTC().Format("20060102150405") + "/" + rawURL
}

// Link is the link an audit is given for rawURL first seen in a message
// of date date: its canonical form, scheme and host.
func Link(rawURL string, date time.Time) audit.Link {
	c, err := uri.Canonical(rawURL)
	if err != nil || c == "" {
		c = rawURL
	}
	l := audit.Link{URL: c, Date: date, Count: 1}
	if u, err := url.Parse(c); err == nil {
		l.Scheme, l.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Hostname())
	}
	return l
}

// Config is the configuration of the audits of Audit: loopback allowed,
// archived copies from the site's CDX API, the audit's defaults for dead
// links (3 failing checks over 7 days), a clock standing at now.
func (s *Site) Config(now time.Time) audit.Config {
	return audit.Config{
		NetworkPolicy: audit.NetworkPolicy{AllowPrivate: true},
		RetryPolicy:   audit.RetryPolicy{Retries: -1},
		RequestLimits: audit.RequestLimits{Timeout: 10 * time.Second, LinkTimeout: 20 * time.Second, ConnectTimeout: 5 * time.Second},
		ArchivePolicy: audit.ArchivePolicy{Archives: true, CDX: s.CDX, Replay: Replay, ArchiveInterval: time.Nanosecond},
		Clock:         clock(now),
	}
}

// Audit runs one audit of links into the history at path (created if
// need be) with the clock at now, and returns the results, in no
// particular order.
func (s *Site) Audit(t testing.TB, path string, now time.Time, links ...audit.Link) []audit.Result {
	t.Helper()
	db, err := audit.OpenDB(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	a := audit.New(s.Config(now), db)
	in := make(chan audit.Link, len(links))
	for _, l := range links {
		in <- l
	}
	close(in)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out []audit.Result
	err = a.Run(ctx, in, func(r audit.Result) { out = append(out, r) })
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// clock stands still at one time; its sleeps end at once.
type clock time.Time

func (c clock) Now() time.Time { return time.Time(c) }

func (c clock) Sleep(ctx context.Context, d time.Duration) error { return ctx.Err() }

// The paths of the links of History, under the site's URL.
const (
	DeadPath    = "/gone/a"     // dead, with copies captured on Captures
	FailingPath = "/gone/f"     // failing (one check), with a copy of 1999-01-01
	OKPath      = "/ok/b"       // ok
	MovedPath   = "/moved/c"    // redirected (301)
	NeverPath   = "/gone/never" // never audited
)

// Day is noon UTC of a day.
func Day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 12, 0, 0, 0, time.UTC) }

// Captures are the captures of the dead link: 1996-03-01, 2001-06-01 and
// 2010-01-01 (noon UTC).
var Captures = []time.Time{Day(1996, 3, 1), Day(2001, 6, 1), Day(2010, 1, 1)}

// FailingCapture is the capture of the failing link.
var FailingCapture = Day(1999, 1, 1)

// AuditStart is the day of the first audit of History; the others are 4
// and 8 days later.
var AuditStart = Day(2026, 1, 1)

// History builds a history at path by three audits of the site's links,
// 4 days apart, as an archive's links would be audited run after run:
// the first run checks every link but NeverPath (the dead and failing
// ones first seen in messages of 1996-02-01 and 1999-02-01), the second
// and the third the dead link alone, first seen in messages of
// 2001-05-01 and 2010-03-01 (other archives, say). Each audit of a
// failing link asks the CDX API for the copy nearest that date, so the
// history keeps the three copies of the dead link and the one of the
// failing link; the dead link, failing on 3 checks over 8 days, is dead
// by the audit's defaults. The servers stay up until the end of the
// test; the history needs them no more.
func History(t testing.TB, path string) *Site {
	t.Helper()
	s := NewSite(t)
	for _, c := range Captures {
		s.AddCapture(s.URL+DeadPath, c)
	}
	s.AddCapture(s.URL+FailingPath, FailingCapture)
	s.AddCapture(s.URL+OKPath, Day(1998, 1, 1)) // never asked: the link works
	s.Audit(t, path, AuditStart, Link(s.URL+DeadPath, Day(1996, 2, 1)), Link(s.URL+FailingPath, Day(1999, 2, 1)),
		Link(s.URL+OKPath, Day(1997, 1, 1)), Link(s.URL+MovedPath, Day(1997, 1, 1)))
	s.Audit(t, path, AuditStart.AddDate(0, 0, 4), Link(s.URL+DeadPath, Day(2001, 5, 1)))
	res := s.Audit(t, path, AuditStart.AddDate(0, 0, 8), Link(s.URL+DeadPath, Day(2010, 3, 1)))
	if len(res) != 1 || res[0].Status != audit.Dead || res[0].Archive == nil {
		t.Fatalf("audittest: the third audit of the dead link: %+v", res)
	}
	return s
}
