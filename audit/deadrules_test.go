package audit

import (
	"context"
	"crypto/tls"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A syntax error is in the link as written: the check is permanent and
// the link Dead at once, with a history (and from it afterwards) or
// without one.
func TestSyntaxDeadAtOnce(t *testing.T) {
	db, path := openTestDB(t)
	clk := newFakeClock()
	cfg := testConfig(nil)
	cfg.Clock = clk
	links := []string{
		"mailto:joe",                // no domain
		"mailto:a@-x.org",           // bad label
		"mailto:?to=joe@-x.org",     // bad address in to=
		"http:///nohost",            // no host
		"gopher://127.0.0.1/1a%0Db", // a line break in the selector
	}
	for _, raw := range links {
		for _, d := range []*DB{db, nil} {
			r, err := New(cfg, d).Check(context.Background(), linkFor(raw))
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != Dead || !r.Check.Permanent || r.Check.Class != ClassSyntax || r.Failures != 1 {
				t.Errorf("%s (history %v): %s %+v, %d failures", raw, d != nil, r.Status, r.Check, r.Failures)
			}
		}
	}
	// offline: from the history (http) or checked again (mailto: without
	// MX needs no network): dead either way
	off := cfg
	off.Offline = true
	for _, raw := range links[:4] {
		r, err := New(off, db).Check(context.Background(), linkFor(raw))
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != Dead || !r.Check.Permanent {
			t.Errorf("%s offline: %s %+v", raw, r.Status, r.Check)
		}
	}
	// the history says so to its readers too (rewrite's archive rules)
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	h, err := OpenHistoryReader(path, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	r, ok, err := h.Status("mailto:joe")
	if err != nil || !ok || r.Status != Dead || !r.Check.Permanent {
		t.Errorf("HistoryReader.Status: %s %+v %v %v", r.Status, r.Check, ok, err)
	}
	cs, err := db.Checks("mailto:joe")
	if err != nil || len(cs) != 2 || !cs[0].Permanent {
		t.Errorf("stored checks %+v (%v)", cs, err)
	}
	// a mailto: that parses is no permanent failure with MX either
	mx := testConfig(&testResolver{})
	mx.MX = true
	mx.Clock = clk
	r2, err := New(mx, nil).Check(context.Background(), linkFor("mailto:joe@nowhere.invalid"))
	if err != nil || r2.Status != Failing || r2.Check.Permanent || r2.Check.Class != ClassNoMX {
		t.Errorf("no MX: %s %+v %v", r2.Status, r2.Check, err)
	}
}

// A tls-certificate failure is Failing and never Dead, however long it
// lasts; it neither counts toward Dead nor resets the streak of other
// failures.
func TestTLSCertificateNeverDead(t *testing.T) {
	db, path := openTestDB(t)
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.NotFound(w, nil)
	}))
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	ts.StartTLS()
	t.Cleanup(ts.Close)
	u := ts.URL + "/x"
	clk := newFakeClock()
	start := clk.Now()
	untrusted := testConfig(nil)
	untrusted.Clock = clk
	trusted := untrusted
	trusted.TLS = &tls.Config{RootCAs: ts.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
	day := 24 * time.Hour
	steps := []struct {
		at       time.Duration
		cfg      Config
		class    Class
		status   Status
		failures int
	}{
		{0, untrusted, ClassTLSCert, Failing, 1},
		{1 * day, untrusted, ClassTLSCert, Failing, 2},
		{2 * day, untrusted, ClassTLSCert, Failing, 3},
		{9 * day, untrusted, ClassTLSCert, Failing, 4},  // 4 checks over 9 days: dead on the old rule
		{10 * day, trusted, ClassHTTP, Failing, 5},      // one failure that counts
		{11 * day, trusted, ClassHTTP, Failing, 6},      // two
		{12 * day, untrusted, ClassTLSCert, Failing, 7}, // never dead itself
		{16 * day, trusted, ClassHTTP, Failing, 8},      // three, over 6 days
		{17 * day, untrusted, ClassTLSCert, Failing, 9}, // 7 days after the first that counts
		{17*day + time.Hour, trusted, ClassHTTP, Dead, 10},
	}
	for i, s := range steps {
		clk.now = start.Add(s.at)
		r, err := New(s.cfg, db).Check(context.Background(), linkFor(u))
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != s.status || r.Check.Class != s.class || r.Failures != s.failures || !r.FailingSince.Equal(start) {
			t.Errorf("step %d: %s %s, %d failures since %v; want %s %s, %d", i, r.Status, r.Check.Class, r.Failures,
				r.FailingSince, s.status, s.class, s.failures)
		}
		if s.class == ClassTLSCert && r.Check.Permanent {
			t.Errorf("step %d: permanent", i)
		}
	}
	// the reader agrees: the last check (a 404) is dead; a history whose
	// last check is a certificate failure is not
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	h, err := OpenHistoryReader(path, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if r, ok, err := h.Status(u); err != nil || !ok || r.Status != Dead {
		t.Errorf("HistoryReader.Status: %s %v %v", r.Status, ok, err)
	}
	clk.now = start.Add(30 * day)
	r, err := New(untrusted, db).Check(context.Background(), linkFor(u))
	if err != nil || r.Status != Failing || r.Check.Class != ClassTLSCert {
		t.Errorf("after dead: %s %+v %v", r.Status, r.Check, err)
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	if r, ok, err := h.Status(u); err != nil || !ok || r.Status != Failing {
		t.Errorf("HistoryReader.Status after a certificate failure: %s %v %v", r.Status, ok, err)
	}
}
