package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// maxArchiveAnswer bounds the bytes read of an archive's answer.
const maxArchiveAnswer = 1 << 20

// archives asks the Wayback Machine's CDX API and a Memento TimeGate for
// the copy of a URL captured closest to a date.
type archives struct {
	cfg    *Config
	client *http.Client
	sem    chan struct{} // ArchiveRequests slots
	gate   *hostState    // ArchiveInterval between queries

	mu   sync.Mutex
	down map[string]bool // sources that could not be reached: not asked again
}

// unreachableError is the error of a query whose service could not be
// reached (no connection, no answer in time), as opposed to an answer
// that is no use.
type unreachableError struct{ msg string }

func (e *unreachableError) Error() string { return e.msg }

// isDown reports whether source was found unreachable in this run.
func (x *archives) isDown(source string) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.down[source]
}

// markDown records that source could not be reached, and says so once
// (Config.ArchiveDown).
func (x *archives) markDown(source string, err error) {
	x.mu.Lock()
	first := !x.down[source]
	if x.down == nil {
		x.down = map[string]bool{}
	}
	x.down[source] = true
	x.mu.Unlock()
	if first && x.cfg.ArchiveDown != nil {
		x.cfg.ArchiveDown(source, err)
	}
}

func newArchives(cfg *Config, k *checkers) *archives {
	return &archives{cfg: cfg, client: k.http.client, sem: make(chan struct{}, cfg.ArchiveRequests),
		gate: &hostState{name: "(archives)", limit: HostLimit{PerHost: cfg.ArchiveRequests, Interval: cfg.ArchiveInterval}}}
}

// cdxTime is the 14-digit timestamp of the CDX API.
const cdxTime = "20060102150405"

// Wayback asks the CDX API (Config.CDX) for the capture of rawURL with
// status 200 closest to want. It returns nil, nil when there is none.
func (x *archives) Wayback(ctx context.Context, rawURL string, want time.Time) (*Capture, error) {
	q := url.Values{}
	q.Set("url", rawURL)
	q.Set("output", "json")
	q.Set("fl", "timestamp,original,statuscode")
	q.Set("filter", "statuscode:200")
	q.Set("closest", want.UTC().Format(cdxTime))
	q.Set("sort", "closest")
	q.Set("limit", "10")
	body, code, _, err := x.get(ctx, x.cfg.CDX+"?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("CDX API: HTTP %d", code)
	}
	return parseCDX(body, want, x.cfg.Replay)
}

// parseCDX reads the CDX API's JSON output (an array of rows, the first
// naming the fields) and returns the capture with status 200 closest to
// want, the earlier one on a tie.
func parseCDX(body []byte, want time.Time, replay string) (*Capture, error) {
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil, nil // the API answers nothing at all when it has nothing
	}
	var rows [][]string
	if err := json.Unmarshal(body, &rows); err != nil {
		return nil, fmt.Errorf("CDX API: not the JSON output: %w", err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	ti, ok1 := col["timestamp"]
	oi, ok2 := col["original"]
	si, hasStatus := col["statuscode"]
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("CDX API: no timestamp or original field in %q", rows[0])
	}
	var best *Capture
	var bestD time.Duration
	for _, r := range rows[1:] {
		if len(r) != len(rows[0]) {
			continue
		}
		if hasStatus && r[si] != "200" {
			continue
		}
		t, err := time.Parse(cdxTime, r[ti])
		if err != nil {
			continue
		}
		d := t.Sub(want)
		if d < 0 {
			d = -d
		}
		if best == nil || d < bestD || (d == bestD && t.Before(best.Time)) {
			best = &Capture{Source: "wayback", URL: replay + r[ti] + "/" + r[oi], Time: t.UTC()}
			bestD = d
		}
	}
	return best, nil
}

// Memento asks the TimeGate (Config.TimeGate, the URL appended) for the
// memento of rawURL nearest want (RFC 7089, Accept-Datetime). It returns
// nil, nil when the TimeGate knows none.
func (x *archives) Memento(ctx context.Context, rawURL string, want time.Time) (*Capture, error) {
	gate := x.cfg.TimeGate + rawURL
	h := http.Header{"Accept-Datetime": {want.UTC().Format(http.TimeFormat)}}
	_, code, header, err := x.get(ctx, gate, h)
	if err != nil {
		return nil, err
	}
	switch {
	case code == http.StatusNotFound || code == http.StatusGone:
		return nil, nil
	case code >= 300 && code < 400:
		loc := header.Get("Location")
		if loc == "" {
			return nil, fmt.Errorf("TimeGate: HTTP %d without Location", code)
		}
		base, _ := url.Parse(gate)
		m, err := base.Parse(loc)
		if err != nil {
			return nil, fmt.Errorf("TimeGate: bad Location %q", loc)
		}
		cp := &Capture{Source: "memento", URL: m.String()}
		if t, err := http.ParseTime(header.Get("Memento-Datetime")); err == nil {
			cp.Time = t.UTC()
		} else {
			cp.Time = linkDatetime(header.Values("Link"), m.String())
		}
		return cp, nil
	case code == http.StatusOK:
		t, err := http.ParseTime(header.Get("Memento-Datetime"))
		if err != nil {
			return nil, fmt.Errorf("TimeGate: HTTP 200 that is no memento (no Memento-Datetime)")
		}
		u := gate
		if cl := header.Get("Content-Location"); cl != "" {
			u = cl
		}
		return &Capture{Source: "memento", URL: u, Time: t.UTC()}, nil
	}
	return nil, fmt.Errorf("TimeGate: HTTP %d", code)
}

// linkDatetime finds the datetime of target among the links of a Link
// header (RFC 8288 with the datetime attribute of RFC 7089).
func linkDatetime(values []string, target string) time.Time {
	for _, v := range values {
		for {
			i := strings.IndexByte(v, '<')
			if i < 0 {
				break
			}
			v = v[i+1:]
			j := strings.IndexByte(v, '>')
			if j < 0 {
				break
			}
			link, params := v[:j], v[j+1:]
			if k := strings.IndexByte(params, '<'); k >= 0 {
				params = params[:k] // a date holds commas, never '<'
			}
			v = v[j+1:]
			if link != target {
				continue
			}
			for _, p := range strings.Split(params, ";") {
				k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
				if ok && strings.EqualFold(k, "datetime") {
					val = strings.TrimRight(strings.TrimSpace(val), ", ")
					if t, err := http.ParseTime(strings.Trim(val, `"`)); err == nil {
						return t.UTC()
					}
				}
			}
		}
	}
	return time.Time{}
}

func (x *archives) get(ctx context.Context, u string, h http.Header) ([]byte, int, http.Header, error) {
	ctx, cancel := context.WithTimeout(ctx, x.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, nil, err
	}
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", x.cfg.UserAgent)
	resp, err := x.client.Do(req)
	if err != nil {
		cl, msg := classify(err)
		if cl == ClassCanceled {
			return nil, 0, nil, fmt.Errorf("%s", msg)
		}
		if cl == ClassTimeout {
			msg = "no answer in " + x.cfg.Timeout.String()
		}
		return nil, 0, nil, &unreachableError{msg}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxArchiveAnswer+1))
	if err != nil {
		return nil, 0, nil, err
	}
	if len(body) > maxArchiveAnswer {
		return nil, 0, nil, fmt.Errorf("answer over %d bytes", maxArchiveAnswer)
	}
	return body, resp.StatusCode, resp.Header, nil
}

// archiveKey is the URL archives are asked for, and their answers kept
// under: rawURL without user information and without fragment (no
// capture has one); frag is the fragment ("" when none), for the copy's
// URL.
func archiveKey(rawURL string) (key, frag string) {
	key, frag, _ = strings.Cut(rawURL, "#")
	if u, err := url.Parse(rawURL); err == nil && u.User != nil {
		key = withoutUser(u)
	}
	return key, frag
}

// withFragment returns cp with the link's fragment on its URL (a copy's
// page is the same page: the fragment points into it as into the
// original), unless it has one.
func withFragment(cp *Capture, frag string) *Capture {
	if cp == nil || frag == "" || strings.Contains(cp.URL, "#") {
		return cp
	}
	c := *cp
	c.URL += "#" + frag
	return &c
}

// archive looks for an archived copy of a failing or dead http(s) link:
// from the history first, then (unless offline) from the Wayback CDX API
// and the TimeGate, in that order; answers are kept in the history. An
// archive that cannot be reached leaves r without a copy, and nothing is
// kept, so that it is asked again next time. Links that differ only in
// their fragment ask, and keep, the same URL (archiveKey); each gets the
// copy with its own fragment.
func (a *Auditor) archive(ctx context.Context, r *Result, rawURL string) error {
	if !a.cfg.Archives || (r.Status != Failing && r.Status != Dead) || (r.Link.Scheme != "http" && r.Link.Scheme != "https") {
		return nil
	}
	rawURL, frag := archiveKey(rawURL)
	want := r.Link.Date
	if want.IsZero() {
		want = r.FirstSeen
	}
	type source struct {
		name string
		ask  func(context.Context, string, time.Time) (*Capture, error)
	}
	var sources []source
	if a.cfg.CDX != "-" && a.cfg.CDX != "" {
		sources = append(sources, source{"wayback", a.arch.Wayback})
	}
	if a.cfg.TimeGate != "" {
		sources = append(sources, source{"memento", a.arch.Memento})
	}
	for _, s := range sources {
		if a.db != nil {
			cp, ok, err := a.db.archived(rawURL, s.name, want)
			if err != nil {
				return err
			}
			if ok {
				if cp != nil {
					r.Archive = withFragment(cp, frag)
					return nil
				}
				continue
			}
		}
		if a.cfg.Offline || a.arch.isDown(s.name) {
			continue
		}
		// the archives are one service to be polite to: ArchiveRequests
		// queries at once, ArchiveInterval apart
		select {
		case a.arch.sem <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		var cp *Capture
		err := a.slot(ctx, a.arch.gate)
		if err == nil {
			cp, err = s.ask(ctx, rawURL, want)
		}
		<-a.arch.sem
		if ue, ok := err.(*unreachableError); ok && ctx.Err() == nil {
			a.arch.markDown(s.name, ue)
		}
		if err != nil {
			continue
		}
		now := a.cfg.Clock.Now()
		if cp != nil {
			cp.Queried = now
		}
		if a.db != nil {
			if err := a.db.keepArchived(rawURL, s.name, want, cp, now); err != nil {
				return err
			}
		}
		if cp != nil {
			r.Archive = withFragment(cp, frag)
			return nil
		}
	}
	return nil
}
