package audit

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// testResolver answers from a table; a name not in it does not exist.
type testResolver struct {
	mu    sync.Mutex
	hosts map[string][]string
	mx    map[string][]string
	calls int
}

func (r *testResolver) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	ips, ok := r.hosts[strings.ToLower(host)]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []net.IPAddr
	for _, s := range ips {
		out = append(out, net.IPAddr{IP: net.ParseIP(s)})
	}
	return out, nil
}

func (r *testResolver) LookupMX(ctx context.Context, name string) ([]*net.MX, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	hs, ok := r.mx[strings.ToLower(name)]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
	}
	var out []*net.MX
	for _, h := range hs {
		out = append(out, &net.MX{Host: h, Pref: 10})
	}
	return out, nil
}

// testConfig is a Config for loopback servers with short limits.
func testConfig(r *testResolver) Config {
	if r == nil {
		r = &testResolver{}
	}
	return Config{
		NetworkPolicy: NetworkPolicy{AllowPrivate: true, Resolver: r},
		RobotsPolicy:  RobotsPolicy{IgnoreRobots: true}, // the tests of robots.txt turn it on
		RequestLimits: RequestLimits{Timeout: 10 * time.Second, LinkTimeout: 30 * time.Second, ConnectTimeout: 5 * time.Second},
		RetryPolicy:   RetryPolicy{Backoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond, MaxRetryAfter: 50 * time.Millisecond},
		ArchivePolicy: ArchivePolicy{CDX: "-", ArchiveInterval: time.Millisecond},
	}.Defaults()
}

// attemptURL checks raw once with cfg, as the auditor's first attempt would.
func attemptURL(t *testing.T, cfg Config, raw string) Check {
	t.Helper()
	cfg = cfg.Defaults()
	k := newCheckers(&cfg)
	l := linkFor(raw)
	u, c := target(&l, cfg.AnyPort)
	if c != nil {
		return *c
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout)
	defer cancel()
	return k.attempt(ctx, &l, u)
}

func linkFor(raw string) Link {
	l := Link{URL: raw, Count: 1}
	if u, err := url.Parse(raw); err == nil {
		l.Scheme = strings.ToLower(u.Scheme)
		l.Host = strings.ToLower(u.Hostname())
	}
	return l
}

// server starts an httptest server closed at the end of the test.
func server(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

// refusedAddr returns a loopback address where nothing listens.
func refusedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := ln.Addr().String()
	ln.Close()
	return a
}
