package audit

import (
	"bytes"
	"context"
	"database/sql"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkscan/linkscan/internal/testutil"
)

func openTestDB(t *testing.T) (*DB, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "sub", "audit.db")
	db, err := OpenDB(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, p
}

// switchServer answers /x with the status held in code.
func switchServer(t *testing.T, code *atomic.Int32, hits *atomic.Int32) string {
	s := server(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if c := int(code.Load()); c != 200 {
			w.WriteHeader(c)
		}
	})
	return s.URL + "/x"
}

func TestDeadAfterChecksOverDays(t *testing.T) {
	db, _ := openTestDB(t)
	var code, hits atomic.Int32
	code.Store(404)
	u := switchServer(t, &code, &hits)
	clk := newFakeClock()
	start := clk.Now()
	cfg := testConfig(nil)
	cfg.Clock = clk
	day := 24 * time.Hour
	check := func() Result {
		t.Helper()
		r, err := New(cfg, db).Check(context.Background(), linkFor(u))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	steps := []struct {
		at       time.Duration // since start
		code     int32
		status   Status
		failures int
	}{
		{0, 404, Failing, 1},
		{1 * day, 404, Failing, 2},
		{2 * day, 404, Failing, 3}, // 3 checks, but over 2 days only
		{8 * day, 404, Dead, 4},
		{9 * day, 200, OK, 0},
		{10 * day, 404, Failing, 1}, // the streak begins again
		{11 * day, 500, Failing, 2},
	}
	for i, s := range steps {
		clk.now = start.Add(s.at)
		code.Store(s.code)
		r := check()
		if r.Status != s.status || r.Failures != s.failures || !r.FirstSeen.Equal(start) {
			t.Errorf("step %d: %s, %d failures, first seen %v; want %s, %d", i, r.Status, r.Failures, r.FirstSeen, s.status, s.failures)
		}
		if i >= 4 && !r.LastOK.Equal(start.Add(9*day)) {
			t.Errorf("step %d: last OK %v", i, r.LastOK)
		}
		if s.status == Dead && !r.FailingSince.Equal(start) {
			t.Errorf("failing since %v", r.FailingSince)
		}
	}
	cs, err := db.Checks(u)
	if err != nil || len(cs) != len(steps) {
		t.Fatalf("%d checks in the history (%v)", len(cs), err)
	}
	if cs[3].Status != Failing || cs[3].HTTPStatus != 404 || cs[3].Class != ClassHTTP {
		t.Errorf("stored check: %+v", cs[3])
	}
}

func TestMaxAgeAndOffline(t *testing.T) {
	db, _ := openTestDB(t)
	var code, hits atomic.Int32
	code.Store(200)
	okURL := switchServer(t, &code, &hits)
	var bad, badHits atomic.Int32
	bad.Store(503)
	badURL := switchServer(t, &bad, &badHits)
	clk := newFakeClock()
	cfg := testConfig(nil)
	cfg.Clock, cfg.MaxAge, cfg.Retries = clk, time.Hour, -1
	run := func(c Config, u string) Result {
		t.Helper()
		r, err := New(c, db).Check(context.Background(), linkFor(u))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := run(cfg, okURL); r.Status != OK || r.Cached || hits.Load() != 1 {
		t.Fatalf("first: %+v", r)
	}
	if r := run(cfg, badURL); r.Status != Failing || r.Cached {
		t.Fatalf("first bad: %+v", r)
	}
	clk.advance(30 * time.Minute)
	code.Store(404) // would fail now; the recent answer is reused
	bad.Store(200)  // would work now; the recent failure is reused as a failure
	if r := run(cfg, okURL); r.Status != OK || !r.Cached || hits.Load() != 1 {
		t.Errorf("within max-age: %+v, %d hits", r, hits.Load())
	}
	if r := run(cfg, badURL); r.Status != Failing || !r.Cached || badHits.Load() != 1 {
		t.Errorf("failure within max-age: %+v", r)
	}
	clk.advance(time.Hour)
	if r := run(cfg, okURL); r.Status != Failing || r.Cached || hits.Load() != 2 {
		t.Errorf("after max-age: %+v, %d hits", r, hits.Load())
	}
	off := cfg
	off.Offline, off.MaxAge = true, 0
	clk.advance(100 * 24 * time.Hour)
	if r := run(off, badURL); r.Status != Failing || !r.Cached || badHits.Load() != 1 {
		t.Errorf("offline, from history: %+v", r)
	}
	if r := run(off, "http://127.0.0.1:1/never-seen"); r.Status != Unchecked || r.Check.Class != ClassOffline {
		t.Errorf("offline, no history: %+v", r)
	}
	if r := run(off, "mailto:joe@example.org"); r.Status != OK {
		t.Errorf("offline, syntax check: %+v", r)
	}
}

// No credentials in the database file, its WAL, or any result.
func TestHistoryRedacted(t *testing.T) {
	db, p := openTestDB(t)
	s := server(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/a" {
			http.Redirect(w, r, "/b", http.StatusFound)
			return
		}
		http.NotFound(w, r)
	})
	u := strings.Replace(s.URL, "http://", "http://alice:s3cret@", 1) + "/a"
	cfg := testConfig(nil)
	r, err := New(cfg, db).Check(context.Background(), linkFor(u))
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != Failing || len(r.Check.Chain) != 1 || strings.Contains(r.Link.URL, "s3cret") {
		t.Fatalf("%+v", r)
	}
	cs, err := db.Checks(u)
	if err != nil || len(cs) != 1 || len(cs[0].Chain) != 1 || !strings.Contains(cs[0].Chain[0].URL, "REDACTED@") {
		t.Fatalf("checks %+v, %v", cs, err)
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{p, p + "-wal"} {
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("s3cret")) || bytes.Contains(b, []byte("alice")) {
			t.Errorf("%s holds the credentials", f)
		}
	}
}

func TestOpenDB(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other.db")
	sdb, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sdb.Exec(`CREATE TABLE t (x)`); err != nil {
		t.Fatal(err)
	}
	sdb.Close()
	if _, err := OpenDB(other, 0); err == nil || !strings.Contains(err.Error(), "not a linkscan audit history") {
		t.Errorf("another database: %v", err)
	}
	junk := filepath.Join(dir, "junk.db")
	os.WriteFile(junk, bytes.Repeat([]byte("not sqlite "), 1000), 0o644)
	if _, err := OpenDB(junk, 0); err == nil {
		t.Errorf("junk opened")
	}
	p := filepath.Join(dir, "a.db")
	db, err := OpenDB(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if db, err = OpenDB(p, 0); err != nil {
		t.Fatalf("reopen: %v", err)
	}
	if _, err := db.db.Exec(`UPDATE meta SET value = '99' WHERE key = 'schema'`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := OpenDB(p, 0); err == nil || !strings.Contains(err.Error(), "schema") {
		t.Errorf("newer schema: %v", err)
	}
}

// Checks written in the open batch are there after Close and reopening.
func TestHistoryKeptOnClose(t *testing.T) {
	p := filepath.Join(t.TempDir(), "h.db")
	db, err := OpenDB(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{}.Defaults()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 3; i++ {
		r := Result{Link: linkFor("http://h.example/x"), Check: Check{Time: t0.Add(time.Duration(i) * time.Hour), Status: Failing, Class: ClassHTTP}}
		if _, err := db.record(r, true, &cfg); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = OpenDB(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cs, err := db.Checks("http://h.example/x")
	if err != nil || len(cs) != 3 || !cs[2].Time.Equal(t0.Add(2*time.Hour)) {
		t.Errorf("after reopening: %d checks, %v", len(cs), err)
	}
}

// TestOpenDBErrors: a history that cannot be opened or created (a
// directory or a file this user cannot write) is said to be so, with the
// file and the cause; only a file that is not SQLite is "damaged". As
// root the test runs again as nobody (root writes anywhere).
func TestOpenDBErrors(t *testing.T) {
	if testutil.AsNobody(t) {
		return
	}
	root := t.TempDir()
	ro := filepath.Join(root, "ro")
	if err := os.Mkdir(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	// a good history in a directory made read-only, and one read-only file
	good := filepath.Join(ro, "good.db")
	db, err := OpenDB(good, 0)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	roFile := filepath.Join(root, "rofile.db")
	if db, err = OpenDB(roFile, 0); err != nil {
		t.Fatal(err)
	}
	db.Close()
	os.Chmod(roFile, 0o444)
	os.Chmod(ro, 0o555)
	defer os.Chmod(ro, 0o755)
	garbage := filepath.Join(root, "garbage.db")
	os.WriteFile(garbage, bytes.Repeat([]byte("not sqlite "), 1000), 0o644)
	for _, c := range []struct {
		path string
		want []string
	}{
		{filepath.Join(ro, "new.db"), []string{"cannot open or create the history " + filepath.Join(ro, "new.db"),
			"its directory " + ro + ": permission denied"}},
		{filepath.Join(ro, "sub", "new.db"), []string{"cannot open or create the history " + filepath.Join(ro, "sub", "new.db"),
			"permission denied"}},
		{good, []string{"cannot open or create the history " + good, "its directory " + ro + ": permission denied"}},
		{roFile, []string{"cannot open or create the history " + roFile, "history " + roFile + ": permission denied"}},
		{garbage, []string{"history " + garbage + ": not an SQLite database, or damaged"}},
	} {
		db, err := OpenDB(c.path, 0)
		if err == nil {
			db.Close()
			t.Errorf("%s: opened", c.path)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q; want %q", c.path, err, w)
			}
		}
		if c.path != garbage && strings.Contains(err.Error(), "damaged") {
			t.Errorf("%s: %q says damaged", c.path, err)
		}
	}
}
