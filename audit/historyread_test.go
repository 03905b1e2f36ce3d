package audit_test

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/linkscan/linkscan/audit"
	"github.com/linkscan/linkscan/audit/audittest"
	"github.com/linkscan/linkscan/internal/testutil"
)

var day = audittest.Day

// TestHistoryReader audits links on a loopback site three times, days
// apart, each time first seen in messages of another year
// (audittest.History), then reads the history as rewrite's archive rules
// do: the status the audits left, and the archived copy nearest each
// date asked.
func TestHistoryReader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.db")
	site := audittest.History(t, path)
	dead, fail, ok, moved, never := site.URL+audittest.DeadPath, site.URL+audittest.FailingPath, site.URL+audittest.OKPath,
		site.URL+audittest.MovedPath, site.URL+audittest.NeverPath
	start := audittest.AuditStart
	if q := site.Queries(); q != 4 {
		t.Errorf("CDX queries: %d, want 4 (dead three times, failing once)", q)
	}
	sum := func() [32]byte {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return sha256.Sum256(b)
	}
	names := func() string {
		ents, _ := os.ReadDir(filepath.Dir(path))
		var n []string
		for _, e := range ents {
			n = append(n, e.Name())
		}
		sort.Strings(n)
		return strings.Join(n, " ")
	}
	before, beforeNames := sum(), names()

	h, err := audit.OpenHistoryReader(path, audit.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		url, status string
		date        time.Time
		copyAt      time.Time // zero: no copy
	}{
		{dead, "dead", day(1996, 1, 15), day(1996, 3, 1)},
		{dead, "dead", day(1994, 1, 1), day(1996, 3, 1)},
		{dead, "dead", day(2001, 7, 1), day(2001, 6, 1)},
		{dead, "dead", day(2005, 9, 1), day(2001, 6, 1)},
		{dead, "dead", day(2006, 1, 1), day(2010, 1, 1)},
		{dead, "dead", day(2030, 1, 1), day(2010, 1, 1)},
		{dead, "dead", time.Time{}, day(1996, 3, 1)},
		{fail, "failing", day(2020, 1, 1), day(1999, 1, 1)},
		{ok, "ok", day(1998, 1, 1), time.Time{}},
		{moved, "redirected", day(1998, 1, 1), time.Time{}},
		{never, "", day(1998, 1, 1), time.Time{}},
		{site.URL + "/gone/A", "", day(1998, 1, 1), time.Time{}},
	} {
		status, cu, ct, err := h.Archived(tt.url, tt.date)
		if err != nil {
			t.Fatal(err)
		}
		want := ""
		if !tt.copyAt.IsZero() {
			want = audittest.CaptureURL(tt.url, tt.copyAt)
		}
		if status != tt.status || cu != want || !ct.Equal(tt.copyAt) {
			t.Errorf("Archived(%s, %s) = %q %q %v, want %q %q %v", tt.url, tt.date.Format("2006-01-02"), status, cu, ct, tt.status, want, tt.copyAt)
		}
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if sum() != before {
		t.Error("reading changed the history")
	}
	// a reader of a WAL database may leave SQLite's -wal and -shm
	// files, but writes nothing in the log
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() != 0 {
		t.Errorf("reading wrote %d bytes of log (files %q, were %q)", fi.Size(), names(), beforeNames)
	}

	// dead is the audit's word with its thresholds: four checks wanted
	// make the link failing still
	h4, err := audit.OpenHistoryReader(path, audit.Config{HistoryPolicy: audit.HistoryPolicy{DeadChecks: 4}})
	if err != nil {
		t.Fatal(err)
	}
	defer h4.Close()
	if status, cu, _, err := h4.Archived(dead, day(2001, 7, 1)); err != nil || status != "failing" || cu != audittest.CaptureURL(dead, day(2001, 6, 1)) {
		t.Errorf("with DeadChecks 4: %q %q %v", status, cu, err)
	}
	r, found, err := h4.Status(dead)
	if err != nil || !found || r.Failures != 3 || !r.FailingSince.Equal(start) {
		t.Errorf("Status: %+v %v %v", r, found, err)
	}
}

// TestHistoryReaderRefuses: a missing file, a file that is no SQLite
// database, an SQLite database that is not a history.
func TestHistoryReaderRefuses(t *testing.T) {
	dir := t.TempDir()
	if _, err := audit.OpenHistoryReader(filepath.Join(dir, "none.db"), audit.Config{}); !errors.Is(err, audit.ErrNoHistory) || !strings.Contains(err.Error(), "none.db") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "none.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the missing file was created: %v", err)
	}
	junk := filepath.Join(dir, "junk.db")
	os.WriteFile(junk, bytes.Repeat([]byte("not sqlite\n"), 100), 0o644)
	if _, err := audit.OpenHistoryReader(junk, audit.Config{}); !errors.Is(err, audit.ErrNotHistory) || !strings.Contains(err.Error(), "junk.db") {
		t.Errorf("junk: %v", err)
	}
	if _, err := audit.OpenHistoryReader(dir, audit.Config{}); err == nil {
		t.Error("a directory was opened")
	}
	// an SQLite database of something else (a references index, say)
	other := filepath.Join(dir, "other.db")
	db, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE meta (key TEXT, value TEXT); INSERT INTO meta VALUES ('application', 'else')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := audit.OpenHistoryReader(other, audit.Config{}); !errors.Is(err, audit.ErrNotHistory) {
		t.Errorf("another database: %v", err)
	}
}

// TestHistoryReaderReadOnlyDir: a history in a folder its reader may not
// write in (SQLite cannot make its -shm file there) is read all the same.
func TestHistoryReaderReadOnlyDir(t *testing.T) {
	if testutil.AsNobody(t) { // root writes in any folder: 0555 would check nothing
		return
	}
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "audit.db")
	site := audittest.History(t, path)
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	h, err := audit.OpenHistoryReader(path, audit.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	dead := site.URL + audittest.DeadPath
	status, cu, _, err := h.Archived(dead, day(2001, 7, 1))
	if err != nil || status != "dead" || cu != audittest.CaptureURL(dead, audittest.Captures[1]) {
		t.Errorf("Archived: %q %q %v", status, cu, err)
	}
}

// TestHistoryReaderWhileAuditing: lookups go on while an audit writes the
// history (WAL): no error, and the answers are those of the history as
// committed.
func TestHistoryReaderWhileAuditing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.db")
	site := audittest.History(t, path)
	h, err := audit.OpenHistoryReader(path, audit.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	dead := site.URL + audittest.DeadPath
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				if n == 0 {
					done <- errors.New("no lookup made")
				}
				done <- nil
				return
			default:
			}
			status, cu, _, err := h.Archived(dead, day(1996, 1, 1))
			if err != nil || status != "dead" || cu != audittest.CaptureURL(dead, audittest.Captures[0]) {
				done <- fmt.Errorf("lookup %d: %q %q %v", n, status, cu, err)
				return
			}
			n++
		}
	}()
	for i := range 5 {
		var links []audit.Link
		for j := range 50 {
			links = append(links, audittest.Link(fmt.Sprintf("%s/ok/%d-%d", site.URL, i, j), day(2000, 1, 1)))
		}
		site.Audit(t, path, audittest.AuditStart.AddDate(0, 0, 9+i), links...)
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if status, _, _, err := h.Archived(site.URL+"/ok/4-49", time.Time{}); err != nil || status != "ok" {
		t.Errorf("a link of the last audit: %q %v", status, err)
	}
}

// BenchmarkHistoryReaderArchived: one lookup of rewrite's archive rules
// (status and nearest copy) in a history of 2,000 links: the first of
// each URL, then again, of a dead link with three copies, a link that
// works and one never audited.
func BenchmarkHistoryReaderArchived(b *testing.B) {
	path := filepath.Join(b.TempDir(), "audit.db")
	site := audittest.History(b, path)
	var links []audit.Link
	for i := range 2000 {
		links = append(links, audittest.Link(fmt.Sprintf("%s/ok/%d", site.URL, i), day(2000, 1, 1)))
	}
	site.Audit(b, path, audittest.AuditStart, links...)
	h, err := audit.OpenHistoryReader(path, audit.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	// a URL's first lookup: the queries
	b.Run("first", func(b *testing.B) {
		b.ReportAllocs()
		var h *audit.HistoryReader
		i := 0
		for b.Loop() {
			if i%len(links) == 0 {
				b.StopTimer()
				if h != nil {
					h.Close()
				}
				if h, err = audit.OpenHistoryReader(path, audit.Config{}); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			if st, _, _, err := h.Archived(links[i%len(links)].URL, day(2001, 1, 1)); err != nil || st != "ok" {
				b.Fatal(st, err)
			}
			i++
		}
		h.Close()
	})
	// again: what it read is remembered
	for _, bc := range []struct{ name, url string }{
		{"dead", site.URL + audittest.DeadPath},
		{"ok", links[1234].URL},
		{"never", site.URL + audittest.NeverPath},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, _, err := h.Archived(bc.url, day(2001, 1, 1)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
