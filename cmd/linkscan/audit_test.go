package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/linkscan/linkscan/audit"
	"github.com/linkscan/linkscan/internal/testutil"
	"github.com/linkscan/linkscan/record/recordtest"
)

// fakeClock is the audit's clock in these tests: Now is set by the test,
// and Sleep moves it on at once (politeness and retries wait no real time).
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
	return nil
}

func (c *fakeClock) set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// useClock makes the audit command use a fake clock at t for the test.
func useClock(t *testing.T, at time.Time) *fakeClock {
	c := &fakeClock{now: at}
	auditClock = c
	t.Cleanup(func() { auditClock = nil })
	return c
}

// t0 is the fake clock's start.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// auditServer is a loopback HTTP server with the cases of the tests, a
// CDX API at /cdx, and a count of the requests for pages.
type auditServer struct {
	*httptest.Server
	hits atomic.Int64
}

func newAuditServer(t *testing.T) *auditServer {
	s := &auditServer{}
	mux := http.NewServeMux()
	page := func(code int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			s.hits.Add(1)
			w.WriteHeader(code)
		}
	}
	mux.HandleFunc("/ok", page(200))
	mux.HandleFunc("/gone", page(404))
	mux.HandleFunc("/bot", page(403))
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		http.Redirect(w, r, "/ok", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/temp", func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		http.Redirect(w, r, "/ok", http.StatusFound)
	})
	mux.HandleFunc("/cdx", func(w http.ResponseWriter, r *http.Request) {
		u := r.URL.Query().Get("url")
		if !strings.HasSuffix(u, "/gone") {
			return // nothing archived: an empty answer
		}
		// two captures: the one closest to the message's Date (2000) is
		// the 1999 one, not the latest
		fmt.Fprintf(w, `[["timestamp","original","statuscode"],["19990101000000",%q,"200"],["20240101000000",%q,"200"]]`, u, u)
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// auditArchive writes an mbox with links to srv: /ok twice, /gone in
// two messages, a redirect of each kind, a bot wall, a mid: reference
// that is in the archive, one that is not, and a telnet: link.
func auditArchive(t *testing.T, dir, srv string) string {
	body1 := fmt.Sprintf("see %[1]s/ok and %[1]s/gone and %[1]s/moved\nalso %[1]s/ok again, %[1]s/temp, %[1]s/bot\nmid:b@x mid:nowhere@x telnet://bbs.example/\n", srv)
	body2 := fmt.Sprintf("%s/gone is gone\n", srv)
	mbox := "From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <a@x>\nDate: Sat, 1 Jan 2000 00:00:00 +0000\nSubject: s\n\n" + body1 + "\n" +
		"From a@b Sat Jan  1 00:00:00 2005\nMessage-ID: <b@x>\nDate: Sat, 1 Jan 2005 00:00:00 +0000\nSubject: t\n\n" + body2 + "\n"
	return writeTestFile(t, filepath.Join(dir, "list.mbox"), mbox)
}

// auditArgs are the flags every test run gives: its own history, the
// loopback server allowed, its CDX API, no retries, small limits.
func auditArgs(db, srv string, more ...string) []string {
	return append([]string{"audit", "--db", db, "--allow-private", "--cdx", srv + "/cdx", "--replay", "https://archive.test/web/",
		"--retries", "0", "--concurrency", "2", "--per-host", "2", "--timeout", "30s", "--progress", "never"}, more...)
}

// normalize replaces the server's address and the temporary directory.
func normalize(s, srv, dir string) string {
	s = strings.ReplaceAll(s, strings.TrimPrefix(srv, "http://"), "SERVER")
	return strings.ReplaceAll(s, dir, "TMP")
}

// sortedLines sorts the lines of s after the first keep lines (a header):
// jsonl, csv and markdown list links in the order their checks end.
func sortedLines(s string, keep int) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if len(lines) > keep {
		slices.Sort(lines[keep:])
	}
	return strings.Join(lines, "\n") + "\n"
}

// records parses jsonl output into the records, keyed by URL.
func records(t *testing.T, out string) map[string]audit.Record {
	t.Helper()
	m := map[string]audit.Record{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var r audit.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("not a record: %q: %v", line, err)
		}
		m[r.URL] = r
	}
	return m
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("..", "..", "testdata", "audit", "cmd", name)
	if *update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// TestAuditStatuses runs the command on an archive against the loopback
// server: each case gets its status, the first location, the message's
// Date and the count; mid: links are resolved in the archive.
func TestAuditStatuses(t *testing.T) {
	dir := t.TempDir()
	srv := newAuditServer(t)
	useClock(t, t0)
	mbox := auditArchive(t, dir, srv.URL)
	code, out, errs := runCmd("", auditArgs(filepath.Join(dir, "h.db"), srv.URL, "--format", "jsonl", mbox)...)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	got := records(t, out)
	want := map[string]struct {
		status audit.Status
		count  int
		line   int
		id     string
	}{
		"/ok":    {audit.OK, 2, 1, "a@x"},
		"/gone":  {audit.Failing, 2, 1, "a@x"},
		"/moved": {audit.Redirected, 1, 1, "a@x"},
		"/temp":  {audit.Redirected, 1, 2, "a@x"},
		"/bot":   {audit.Blocked, 1, 2, "a@x"},
	}
	for path, w := range want {
		r, ok := got[srv.URL+path]
		if !ok {
			t.Errorf("%s: no record in %q", path, out)
			continue
		}
		if r.Status != w.status || r.Count != w.count || r.Line != w.line || r.MessageID != w.id || r.Date != "2000-01-01T00:00:00Z" || r.Path != mbox {
			t.Errorf("%s: %+v; want status %s, count %d, line %d, message %s, date 2000", path, r, w.status, w.count, w.line, w.id)
		}
	}
	if r := got[srv.URL+"/moved"]; !r.Permanent || len(r.Redirects) != 1 || r.Redirects[0].Status != 301 {
		t.Errorf("/moved: permanent %v, redirects %+v", r.Permanent, r.Redirects)
	}
	if r := got[srv.URL+"/temp"]; r.Permanent {
		t.Errorf("/temp: a 302 is not permanent")
	}
	if r := got[srv.URL+"/gone"]; r.HTTPStatus != 404 || r.ArchiveURL != "https://archive.test/web/19990101000000/"+srv.URL+"/gone" {
		t.Errorf("/gone: http %d, archive %q; want 404 and the 1999 capture (closest to the message's Date)", r.HTTPStatus, r.ArchiveURL)
	}
	if r := got["mid:b@x"]; r.Status != audit.OfflineOK {
		t.Errorf("mid:b@x (in the archive): %+v", r)
	}
	if r := got["mid:nowhere@x"]; r.Status != audit.Unchecked || r.Class != audit.ClassNotInIndex {
		t.Errorf("mid:nowhere@x: %+v; want unchecked, not-in-archive", r)
	}
	if r, ok := got["telnet://bbs.example/"]; !ok || r.Status != audit.Unchecked {
		t.Errorf("telnet: %+v; want unchecked", r)
	}
	if len(got) != 8 {
		t.Errorf("%d records, want 8 distinct links: %q", len(got), out)
	}
}

// TestAuditDeadAfterHistory: /gone fails on three runs; it is failing
// until the checks span --dead-days, then dead (exit 3), with the
// archived copy kept; --offline then answers from the history without a
// request, and a link the history does not know is unchecked.
func TestAuditDeadAfterHistory(t *testing.T) {
	dir := t.TempDir()
	srv := newAuditServer(t)
	clock := useClock(t, t0)
	db := filepath.Join(dir, "h.db")
	gone := writeTestFile(t, filepath.Join(dir, "gone.mbox"),
		"From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <g@x>\nDate: Sat, 1 Jan 2000 00:00:00 +0000\n\n"+srv.URL+"/gone\n\n")
	for i, tc := range []struct {
		at     time.Duration
		code   int
		status audit.Status
	}{
		{0, exitOK, audit.Failing},
		{4 * 24 * time.Hour, exitOK, audit.Failing}, // 2 checks
		{5 * 24 * time.Hour, exitOK, audit.Failing}, // 3 checks over 5 days: not yet
		{8 * 24 * time.Hour, exitDead, audit.Dead},  // 4 checks over 8 days
		{9 * 24 * time.Hour, exitDead, audit.Dead},  // still
	} {
		clock.set(t0.Add(tc.at))
		code, out, errs := runCmd("", auditArgs(db, srv.URL, "--format", "jsonl", gone)...)
		r := records(t, out)[srv.URL+"/gone"]
		if code != tc.code || r.Status != tc.status {
			t.Fatalf("run %d: exit %d, status %s (stderr %q); want %d, %s", i, code, r.Status, errs, tc.code, tc.status)
		}
		if tc.code == exitDead && !strings.Contains(errs, "1 dead link") {
			t.Errorf("run %d: stderr %q does not count the dead link", i, errs)
		}
		if r.Failures != i+1 || r.FailingSince != "2026-01-02T03:04:05Z" {
			t.Errorf("run %d: failures %d since %q", i, r.Failures, r.FailingSince)
		}
	}
	// offline: from the history, no request
	before := srv.hits.Load()
	other := writeTestFile(t, filepath.Join(dir, "other.mbox"),
		"From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <o@x>\n\n"+srv.URL+"/gone "+srv.URL+"/ok\n\n")
	code, out, errs := runCmd("", auditArgs(db, srv.URL, "--offline", "--format", "jsonl", other)...)
	got := records(t, out)
	if code != exitDead || got[srv.URL+"/gone"].Status != audit.Dead || !got[srv.URL+"/gone"].Cached {
		t.Errorf("--offline: exit %d, /gone %+v (stderr %q); want 3, dead from the history", code, got[srv.URL+"/gone"], errs)
	}
	if r := got[srv.URL+"/ok"]; r.Status != audit.Unchecked || r.Class != audit.ClassOffline {
		t.Errorf("--offline, /ok not in the history: %+v; want unchecked, offline", r)
	}
	if n := srv.hits.Load(); n != before {
		t.Errorf("--offline made %d requests", n-before)
	}
	// dead links and damage (a bad --from-jsonl line): 3 wins over 4; an
	// input not read: 1 wins over 3
	_, recs, _ := runCmd("", "scan", "--format", "jsonl", gone)
	bad := writeTestFile(t, filepath.Join(dir, "bad.jsonl"), "garbage\n"+recs)
	code, _, errs = runCmd("", auditArgs(db, srv.URL, "--offline", "--format", "jsonl", "--from-jsonl", bad)...)
	if code != exitDead || !strings.Contains(errs, "line 1") {
		t.Errorf("dead and a bad line: exit %d, stderr %q; want 3", code, errs)
	}
	code, _, errs = runCmd("", auditArgs(db, srv.URL, "--offline", "--format", "jsonl", gone, filepath.Join(dir, "missing"))...)
	if code != exitFail {
		t.Errorf("dead and a missing input: exit %d, stderr %q; want 1", code, errs)
	}
	// --max-age reuses a recent failure as a failure (never as a success)
	code, out, _ = runCmd("", auditArgs(db, srv.URL, "--max-age", "48h", "--format", "jsonl", gone)...)
	if r := records(t, out)[srv.URL+"/gone"]; code != exitDead || !r.Cached || r.Status != audit.Dead {
		t.Errorf("--max-age 48h: exit %d, %+v", code, r)
	}
	if n := srv.hits.Load(); n != before {
		t.Errorf("--max-age within the age made %d requests", n-before)
	}
}

// TestAuditRefusesLoopback: without --allow-private a loopback target is
// refused when connecting, reported unchecked with class forbidden, never
// dead however often it is refused, and no request reaches the server.
func TestAuditRefusesLoopback(t *testing.T) {
	dir := t.TempDir()
	srv := newAuditServer(t)
	clock := useClock(t, t0)
	mbox := writeTestFile(t, filepath.Join(dir, "x.mbox"),
		"From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <g@x>\n\n"+srv.URL+"/gone "+srv.URL+"/ok\n\n")
	for _, days := range []int{0, 4, 8, 9} {
		clock.set(t0.Add(time.Duration(days) * 24 * time.Hour))
		code, out, errs := runCmd("", "audit", "--db", filepath.Join(dir, "h.db"), "--cdx", "-", "--retries", "0", "--progress", "never", "--format", "jsonl", mbox)
		got := records(t, out)
		for _, p := range []string{"/gone", "/ok"} {
			r := got[srv.URL+p]
			if r.Class != audit.ClassForbidden || r.Status != audit.Unchecked {
				t.Errorf("day %d, %s without --allow-private: %+v; want unchecked, forbidden", days, p, r)
			}
		}
		if code != exitOK {
			t.Errorf("day %d: exit %d (stderr %q); a refusal is no dead link", days, code, errs)
		}
	}
	if n := srv.hits.Load(); n != 0 {
		t.Errorf("%d requests reached the loopback server", n)
	}
}

// TestAuditFromJSONL: the records of scan --format jsonl (and of scan
// --unique) audited with --from-jsonl give the same report as the
// archive itself; bad lines are reported with their number (exit 0).
func TestAuditFromJSONL(t *testing.T) {
	dir := t.TempDir()
	srv := newAuditServer(t)
	useClock(t, t0)
	mbox := writeTestFile(t, filepath.Join(dir, "x.mbox"),
		"From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <a@x>\nDate: Sat, 1 Jan 2000 00:00:00 +0000\n\n"+srv.URL+"/ok "+srv.URL+"/gone\n\n"+
			"From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <b@x>\n\n"+srv.URL+"/gone "+srv.URL+"/moved\n\n")
	norm := func(out string) string { return sortedLines(normalize(out, srv.URL, dir), 0) }
	_, direct, errs := runCmd("", auditArgs(filepath.Join(dir, "1.db"), srv.URL, "--format", "jsonl", mbox)...)
	if direct == "" {
		t.Fatalf("no output: %q", errs)
	}
	for _, unique := range []bool{false, true} {
		args := []string{"scan", "--format", "jsonl", mbox}
		if unique {
			args = append(args, "--unique")
		}
		_, recs, _ := runCmd("", args...)
		jf := writeTestFile(t, filepath.Join(dir, "scan.jsonl"), recs)
		db := filepath.Join(dir, fmt.Sprintf("db-%v.db", unique))
		code, out, errs := runCmd("", auditArgs(db, srv.URL, "--format", "jsonl", "--from-jsonl", jf)...)
		if code != exitOK || norm(out) != norm(direct) {
			t.Errorf("--from-jsonl (unique %v): exit %d, stderr %q\n%s\nwant\n%s", unique, code, errs, norm(out), norm(direct))
		}
		// the same from standard input
		code, out, _ = runCmd(recs, auditArgs(db+"2", srv.URL, "--format", "jsonl", "--from-jsonl", "-")...)
		if code != exitOK || norm(out) != norm(direct) {
			t.Errorf("--from-jsonl - (unique %v): exit %d\n%s", unique, code, norm(out))
		}
	}
	bad := writeTestFile(t, filepath.Join(dir, "bad.jsonl"), "not json\n"+`{"url":"x","canonical":"`+srv.URL+`/ok","scheme":"http"}`+"\n")
	code, out, errs := runCmd("", auditArgs(filepath.Join(dir, "3.db"), srv.URL, "--format", "jsonl", "--from-jsonl", bad)...)
	if code != exitOK || !strings.Contains(errs, "line 1:") || records(t, out)[srv.URL+"/ok"].Status != audit.OK ||
		!strings.Contains(errs, bad+": 1 bad line skipped (not scan records)") || strings.Contains(errs, "message") {
		t.Errorf("bad line: exit %d, stderr %q, out %q; want 0, line 1 named, the good record audited", code, errs, out)
	}
}

// TestAuditFormats: each report format of one run (after a first run, so
// that the history has something to say), golden with -update.
func TestAuditFormats(t *testing.T) {
	dir := t.TempDir()
	srv := newAuditServer(t)
	clock := useClock(t, t0)
	mbox := auditArchive(t, dir, srv.URL)
	db := filepath.Join(dir, "h.db")
	if code, _, errs := runCmd("", auditArgs(db, srv.URL, "--format", "summary", mbox)...); code != exitOK {
		t.Fatalf("first run: exit %d, %q", code, errs)
	}
	clock.set(t0.Add(24 * time.Hour))
	for _, tc := range []struct {
		format string
		extra  []string
		keep   int // lines not sorted
		golden string
	}{
		{"jsonl", nil, 0, "statuses.jsonl"},
		{"csv", nil, 1, "statuses.csv"},
		{"markdown", nil, 2, "statuses.md"},
		{"summary", nil, -1, "statuses.txt"},
		{"jsonl", []string{"--occurrences"}, -1, "occurrences.jsonl"},
		{"csv", []string{"--occurrences"}, -1, "occurrences.csv"},
		{"jsonl", []string{"--in-order"}, -1, "inorder.jsonl"},
		{"markdown", []string{"--in-order"}, -1, "inorder.md"},
	} {
		args := auditArgs(db, srv.URL, append([]string{"--format", tc.format, "--max-age", "1000h", mbox}, tc.extra...)...)
		code, out, errs := runCmd("", args...)
		if code != exitOK {
			t.Errorf("%s: exit %d, stderr %q", tc.golden, code, errs)
			continue
		}
		out = normalize(out, srv.URL, dir)
		if tc.keep >= 0 {
			out = sortedLines(out, tc.keep)
		}
		checkGolden(t, tc.golden, out)
		if tc.format == "csv" {
			if _, err := csv.NewReader(strings.NewReader(out)).ReadAll(); err != nil {
				t.Errorf("%s: not CSV: %v", tc.golden, err)
			}
		}
	}
	// html: one self-contained page with both charts and the failing link
	code, out, errs := runCmd("", auditArgs(db, srv.URL, "--format", "html", "--max-age", "1000h", mbox)...)
	if code != exitOK || !strings.HasPrefix(out, "<!DOCTYPE html>") || strings.Count(out, "<svg") < 2 || !strings.Contains(out, "/gone") ||
		strings.Contains(out, "<script src") || strings.Contains(out, "<link rel=\"stylesheet\" href=\"http") {
		t.Errorf("html: exit %d, stderr %q, page %.300q", code, errs, out)
	}
	writeTestFile(t, filepath.Join(dir, "report.html"), out)
}

// TestAuditOccurrences: --occurrences gives one record per occurrence,
// in input order, each with its own location and the link's status and
// count.
func TestAuditOccurrences(t *testing.T) {
	dir := t.TempDir()
	srv := newAuditServer(t)
	useClock(t, t0)
	mbox := auditArchive(t, dir, srv.URL)
	code, out, errs := runCmd("", auditArgs(filepath.Join(dir, "h.db"), srv.URL, "--format", "jsonl", "--occurrences", mbox)...)
	if code != exitOK {
		t.Fatalf("exit %d, %q", code, errs)
	}
	var gone []audit.Record
	var n int
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r audit.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		n++
		if r.URL == srv.URL+"/gone" {
			gone = append(gone, r)
		}
	}
	if n != 10 {
		t.Errorf("%d occurrence records, want 10:\n%s", n, out)
	}
	if len(gone) != 2 || gone[0].MessageID != "a@x" || gone[1].MessageID != "b@x" || gone[1].Date != "2005-01-01T00:00:00Z" ||
		gone[0].Count != 2 || gone[1].Count != 2 || gone[1].Status != audit.Failing {
		t.Errorf("/gone occurrences: %+v", gone)
	}
	if code, _, errs := runCmd("", auditArgs(filepath.Join(dir, "h.db"), srv.URL, "--format", "html", "--occurrences", mbox)...); code != exitUsage {
		t.Errorf("--occurrences with html: exit %d, %q", code, errs)
	}
}

// TestAuditExitAndOutput: usage errors, an input that cannot be read,
// and -o: written whole at the end, left as it was (with FILE.partial)
// when an input could not be read, refused when it is an input.
func TestAuditExitAndOutput(t *testing.T) {
	dir := t.TempDir()
	srv := newAuditServer(t)
	useClock(t, t0)
	mbox := writeTestFile(t, filepath.Join(dir, "x.mbox"), "From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <a@x>\n\n"+srv.URL+"/ok\n\n")
	db := filepath.Join(dir, "h.db")
	for _, args := range [][]string{
		{"--format", "text", mbox},
		{"--unique", mbox},
		{"--from-jsonl", mbox, mbox},
		{"--host-limit", "example.org", mbox},
		{"--host-limit", "example.org=x/1s", mbox},
		{"--per-host", "0", mbox},
		{"--archive-requests", "0", mbox},
		{"--dead-checks", "0", mbox},
		{"--timeout", "0s", mbox},
		{"--nonsense", mbox},
		{"-o", mbox, mbox},
		{"-o", db, mbox},
	} {
		code, _, errs := runCmd("", auditArgs(db, srv.URL, args...)...)
		if code != exitUsage || errs == "" {
			t.Errorf("audit %q: exit %d, stderr %q; want 2", args, code, errs)
		}
	}
	if b, _ := os.ReadFile(mbox); !strings.Contains(string(b), "/ok") {
		t.Fatalf("the archive was changed: %q", b)
	}

	report := writeTestFile(t, filepath.Join(dir, "report.jsonl"), "old\n")
	code, out, errs := runCmd("", auditArgs(db, srv.URL, "--format", "jsonl", "-o", report, mbox)...)
	b, _ := os.ReadFile(report)
	if code != exitOK || out != "" || records(t, string(b))[srv.URL+"/ok"].Status != audit.OK {
		t.Errorf("-o: exit %d, stdout %q, stderr %q, file %q", code, out, errs, b)
	}
	if left := tmpLeft(t, dir); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}

	missing := filepath.Join(dir, "missing.mbox")
	code, _, errs = runCmd("", auditArgs(db, srv.URL, "--format", "jsonl", "-o", report, mbox, missing)...)
	after, _ := os.ReadFile(report)
	partial, perr := os.ReadFile(report + ".partial")
	if code != exitFail || !bytes.Equal(after, b) || perr != nil || records(t, string(partial))[srv.URL+"/ok"].Status != audit.OK ||
		!strings.Contains(errs, "missing.mbox") {
		t.Errorf("-o with a missing input: exit %d, stderr %q, file changed %v, partial %q (%v)", code, errs, !bytes.Equal(after, b), partial, perr)
	}

	// nothing read: the file is left as it was, no .partial
	os.Remove(report + ".partial")
	code, _, errs = runCmd("", auditArgs(db, srv.URL, "--format", "jsonl", "-o", report, missing)...)
	if after, _ := os.ReadFile(report); code != exitFail || !bytes.Equal(after, b) || !strings.Contains(errs, "left as it was") {
		t.Errorf("-o, nothing read: exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(report + ".partial"); err == nil {
		t.Errorf("-o, nothing read: a .partial was left")
	}
	code, _, errs = runCmd("", auditArgs(db, srv.URL, "--format", "jsonl", "--from-jsonl", missing)...)
	if code != exitFail || !strings.Contains(errs, "missing.mbox") {
		t.Errorf("--from-jsonl missing: exit %d, stderr %q", code, errs)
	}

	// the history cannot be opened: exit 1
	code, _, errs = runCmd("", auditArgs(filepath.Join(mbox, "h.db"), srv.URL, mbox)...)
	if code != exitFail || !strings.Contains(errs, "history") {
		t.Errorf("unusable --db: exit %d, stderr %q", code, errs)
	}

	// help and --help agree, and name the exit status for dead links
	_, h1, _ := runCmd("", "help", "audit")
	_, h2, _ := runCmd("", "audit", "--help")
	if h1 != h2 || !strings.Contains(h1, "3  dead links were found") {
		t.Errorf("help audit and audit --help differ, or no exit 3:\n%s", h1)
	}
}

// TestAuditInterrupt: SIGINT while a check hangs ends the child at once
// (killed by the signal, as scan is): the -o file is left as it was, no
// temporary file stays, and the history keeps the check done before.
func TestAuditInterrupt(t *testing.T) {
	dir := t.TempDir()
	arrived := make(chan struct{}, 1)
	release := make(chan struct{})
	var okHits atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { okHits.Add(1) })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer close(release)
	mbox := writeTestFile(t, filepath.Join(dir, "x.mbox"), mboxMessage("a@x", srv.URL+"/ok\n"+srv.URL+"/slow"))
	report := writeTestFile(t, filepath.Join(dir, "report.jsonl"), "old\n")
	db := filepath.Join(dir, "h.db")
	args := auditArgs(db, srv.URL, "--concurrency", "1", "--format", "jsonl", "-o", report, mbox)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LINKSCAN_TEST_MAIN="+strings.Join(args, "\x1f"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-arrived:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the slow request never came; stderr %q", stderr.String())
	}
	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("still running a minute after SIGINT; stderr %q", stderr.String())
	}
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGINT {
		t.Errorf("ended with %v, not killed by SIGINT; stderr %q", cmd.ProcessState, stderr.String())
	}
	if b, _ := os.ReadFile(report); string(b) != "old\n" {
		t.Errorf("report file changed to %q", b)
	}
	if left := tmpLeft(t, dir); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	h, err := audit.OpenDB(db, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	checks, err := h.Checks(srv.URL + "/ok")
	if err != nil || len(checks) != 1 || checks[0].Status != audit.OK || okHits.Load() != 1 {
		t.Errorf("history of /ok after the interrupt: %+v, %v (%d requests)", checks, err, okHits.Load())
	}
	if checks, err := h.Checks(srv.URL + "/slow"); err != nil || len(checks) != 0 {
		t.Errorf("the check cut short is in the history: %+v, %v", checks, err)
	}
}

// TestAuditProgress: --progress always draws the bar of the checks on
// standard error (counts by status, hosts in back-off, the total) and
// leaves the report alone.
func TestAuditProgress(t *testing.T) {
	dir := t.TempDir()
	srv := newAuditServer(t)
	useClock(t, t0)
	mbox := auditArchive(t, dir, srv.URL)
	args := auditArgs(filepath.Join(dir, "h.db"), srv.URL, "--format", "jsonl", mbox)
	for i, a := range args {
		if a == "--progress" {
			args[i+1] = "always"
		}
	}
	code, out, errs := runCmd("", args...)
	if code != exitOK || len(records(t, out)) != 8 {
		t.Fatalf("exit %d, %d records, stderr %q", code, len(records(t, out)), errs)
	}
	if !regexp.MustCompile(`ok \d+, failing \d+, dead \d+, hosts in back-off \d+`).MatchString(errs) || !strings.Contains(errs, "/8)") {
		t.Errorf("no bar of the checks on stderr: %q", errs)
	}
	// the counts drawn never run ahead of the links checked
	for _, m := range regexp.MustCompile(`ok (\d+), failing (\d+), dead (\d+), hosts in back-off \d+[^(]*\((\d+)/8\)`).FindAllStringSubmatch(errs, -1) {
		n := func(s string) int { v, _ := strconv.Atoi(s); return v }
		if n(m[1])+n(m[2])+n(m[3]) > n(m[4]) {
			t.Errorf("bar %q: more links counted by status than checked", m[0])
		}
	}
	_, _, quiet := runCmd("", auditArgs(filepath.Join(dir, "h.db"), srv.URL, "--format", "jsonl", mbox)...)
	if quiet != "" {
		t.Errorf("--progress never: stderr %q", quiet)
	}
}

// TestAuditDefaultDB: without --db the history is linkscan/audit.db in
// the user's cache directory.
func TestAuditDefaultDB(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", cache)
	if d, err := os.UserCacheDir(); err != nil || d != cache {
		t.Skipf("the cache directory is %q here (%v), not XDG_CACHE_HOME", d, err)
	}
	srv := newAuditServer(t)
	useClock(t, t0)
	mbox := writeTestFile(t, filepath.Join(t.TempDir(), "x.mbox"), mboxMessage("a@x", srv.URL+"/ok"))
	code, _, errs := runCmd("", "audit", "--allow-private", "--cdx", "-", "--progress", "never", "--format", "jsonl", mbox)
	if code != exitOK {
		t.Fatalf("exit %d, %q", code, errs)
	}
	h, err := audit.OpenDB(filepath.Join(cache, "linkscan", "audit.db"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if checks, err := h.Checks(srv.URL + "/ok"); err != nil || len(checks) != 1 {
		t.Errorf("default history: %+v, %v", checks, err)
	}
}

// TestAuditStdinReferences: an archive on standard input is read twice
// (links, then the index for mid: links) through the spool.
func TestAuditStdinReferences(t *testing.T) {
	dir := t.TempDir()
	useClock(t, t0)
	in := mboxMessage("a@x", "mid:b@x mid:c@x") + mboxMessage("b@x", "nothing")
	code, out, errs := runCmd(in, "audit", "--db", filepath.Join(dir, "h.db"), "--progress", "never", "--format", "jsonl", "-")
	got := records(t, out)
	if code != exitOK || got["mid:b@x"].Status != audit.OfflineOK || got["mid:c@x"].Class != audit.ClassNotInIndex {
		t.Errorf("exit %d, stderr %q, records %+v", code, errs, got)
	}
}

// TestAuditFIFOReferences: an archive given as a named pipe (or a pipe
// reached as /proc/self/fd/N, as <(zcat a.gz) is) is read twice, links
// then the index for mid: links, from one copy in --tmpdir: mid:b@x is
// found in it (fails with not-in-archive, or hangs opening the named
// pipe again), and the copy is removed.
func TestAuditFIFOReferences(t *testing.T) {
	in := mboxMessage("a@x", "mid:b@x mid:c@x") + mboxMessage("b@x", "nothing")
	tmp := t.TempDir()
	for _, kind := range testutil.FIFOKinds {
		dir := t.TempDir()
		useClock(t, t0)
		name := testutil.FIFOInput(t, kind, []byte(in))
		code, out, errs := runCmd("", "audit", "--db", filepath.Join(dir, "h.db"), "--tmpdir", tmp, "--progress", "never", "--format", "jsonl", name)
		got := records(t, out)
		if code != exitOK || got["mid:b@x"].Status != audit.OfflineOK || got["mid:c@x"].Class != audit.ClassNotInIndex {
			t.Errorf("%s: exit %d, stderr %q, records %+v", kind, code, errs, got)
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left in --tmpdir: %v", left)
	}
}

// TestAuditReaderGoes: when the reader of the report (a pipe) goes away,
// a check that hangs is given up and the command ends quietly, for a
// streaming format and for the summary (written only at the end).
func TestAuditReaderGoes(t *testing.T) {
	dir := t.TempDir()
	arrived := make(chan struct{}, 4)
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer close(release)
	mbox := writeTestFile(t, filepath.Join(dir, "x.mbox"), mboxMessage("a@x", srv.URL+"/slow"))
	for i, format := range []string{"jsonl", "summary"} {
		args := auditArgs(filepath.Join(dir, fmt.Sprintf("h%d.db", i)), srv.URL, "--format", format, mbox)
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "LINKSCAN_TEST_MAIN="+strings.Join(args, "\x1f"))
		outR, outW, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout = outW
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		outW.Close()
		select {
		case <-arrived:
		case <-time.After(60 * time.Second):
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("%s: the request never came; stderr %q", format, errb.String())
		}
		outR.Close() // the reader goes away while the check hangs
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-time.After(60 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Fatalf("%s: still running a minute after the reader went away", format)
		}
		if err != nil || errb.Len() != 0 {
			t.Errorf("%s: %v, stderr %q; want a quiet end", format, err, errb.String())
		}
	}
}

// TestAuditHostLimit: --host-limit HOST:PORT=1 holds one server to one
// request at a time while --per-host lets another have several; the
// servers count the requests in progress.
func TestAuditHostLimit(t *testing.T) {
	dir := t.TempDir()
	useClock(t, t0)
	type counting struct {
		*httptest.Server
		now, max atomic.Int64
	}
	newServer := func() *counting {
		c := &counting{}
		c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n := c.now.Add(1)
			for {
				m := c.max.Load()
				if n <= m || c.max.CompareAndSwap(m, n) {
					break
				}
			}
			time.Sleep(20 * time.Millisecond) // so that requests overlap when allowed to
			c.now.Add(-1)
		}))
		t.Cleanup(c.Close)
		return c
	}
	limited, free := newServer(), newServer()
	var body strings.Builder
	for i := 0; i < 12; i++ {
		fmt.Fprintf(&body, "%s/%d %s/%d\n", limited.URL, i, free.URL, i)
	}
	mbox := writeTestFile(t, filepath.Join(dir, "x.mbox"), mboxMessage("a@x", body.String()))
	host := strings.TrimPrefix(limited.URL, "http://")
	code, out, errs := runCmd("", auditArgs(filepath.Join(dir, "h.db"), limited.URL, "--concurrency", "8", "--per-host", "4",
		"--host-limit", host+"=1", "--format", "jsonl", mbox)...)
	if code != exitOK || len(records(t, out)) != 24 {
		t.Fatalf("exit %d, %d records, stderr %q", code, len(records(t, out)), errs)
	}
	if m := limited.max.Load(); m != 1 {
		t.Errorf("%s=1: %d requests at once", host, m)
	}
	if m := free.max.Load(); m > 4 {
		t.Errorf("--per-host 4: %d requests at once", m)
	}
}

// TestAuditFromJSONLIndex: with --from-jsonl, mid: links are resolved
// against an --index FILE built by 'linkscan index'; without one they are
// unchecked (no archive to look in), never dead.
func TestAuditFromJSONLIndex(t *testing.T) {
	dir := t.TempDir()
	useClock(t, t0)
	mbox := writeTestFile(t, filepath.Join(dir, "x.mbox"), mboxMessage("a@x", "mid:b@x mid:c@x")+mboxMessage("b@x", "nothing"))
	index := filepath.Join(dir, "refs.db")
	if code, _, errs := runCmd("", "index", "--index", index, mbox); code != exitOK {
		t.Fatalf("index: exit %d, %q", code, errs)
	}
	_, recs, _ := runCmd("", "scan", "--format", "jsonl", mbox)
	jf := writeTestFile(t, filepath.Join(dir, "scan.jsonl"), recs)
	code, out, errs := runCmd("", "audit", "--db", filepath.Join(dir, "h.db"), "--progress", "never", "--format", "jsonl", "--from-jsonl", jf, "--index", index)
	got := records(t, out)
	if code != exitOK || got["mid:b@x"].Status != audit.OfflineOK || got["mid:c@x"].Class != audit.ClassNotInIndex {
		t.Errorf("--index: exit %d, stderr %q, %+v", code, errs, got)
	}
	code, out, errs = runCmd("", "audit", "--db", filepath.Join(dir, "h.db"), "--progress", "never", "--format", "jsonl", "--from-jsonl", jf)
	got = records(t, out)
	if code != exitOK || got["mid:b@x"].Status != audit.Unchecked || got["mid:c@x"].Status != audit.Unchecked {
		t.Errorf("no index: exit %d, stderr %q, %+v", code, errs, got)
	}
}

// TestAuditText: --as text reads plain text (no messages): links with
// FILE, line and column, counted once each.
func TestAuditText(t *testing.T) {
	dir := t.TempDir()
	srv := newAuditServer(t)
	useClock(t, t0)
	txt := writeTestFile(t, filepath.Join(dir, "notes.txt"), "a "+srv.URL+"/ok\nb "+srv.URL+"/ok "+srv.URL+"/gone\n")
	code, out, errs := runCmd("", auditArgs(filepath.Join(dir, "h.db"), srv.URL, "--as", "text", "--format", "jsonl", txt)...)
	got := records(t, out)
	ok, gone := got[srv.URL+"/ok"], got[srv.URL+"/gone"]
	if code != exitOK || ok.Status != audit.OK || ok.Count != 2 || ok.Path != txt || ok.Line != 1 || ok.Column != 3 ||
		gone.Status != audit.Failing || gone.Line != 2 {
		t.Errorf("exit %d, stderr %q, records %+v", code, errs, got)
	}
}

func TestParseHostLimit(t *testing.T) {
	for _, tc := range []struct {
		in   string
		host string
		lim  audit.HostLimit
		hasD bool
		err  bool
	}{
		{in: "Example.ORG=2", host: "example.org", lim: audit.HostLimit{PerHost: 2}},
		{in: "x.org:8080=1/500ms", host: "x.org:8080", lim: audit.HostLimit{PerHost: 1, Interval: 500 * time.Millisecond}, hasD: true},
		{in: "x.org=/2s", host: "x.org", lim: audit.HostLimit{Interval: 2 * time.Second}, hasD: true},
		{in: "x.org", err: true},
		{in: "x.org=", err: true},
		{in: "=2", err: true},
		{in: "x.org=0", err: true},
		{in: "x.org=-1", err: true},
		{in: "x.org=2/soon", err: true},
		{in: "x.org=2/-1s", err: true},
	} {
		host, lim, hasD, err := parseHostLimit(tc.in)
		if (err != nil) != tc.err || err == nil && (host != tc.host || lim != tc.lim || hasD != tc.hasD) {
			t.Errorf("parseHostLimit(%q) = %q, %+v, %v, %v", tc.in, host, lim, hasD, err)
		}
	}
}

// FuzzParseHostLimit: any text gives an error or a lower-case host with
// a number of requests of at least 1 (or none) and an interval not
// negative.
func FuzzParseHostLimit(f *testing.F) {
	for _, s := range []string{"a=1", "a:1=2/3s", "=/", "A=/1h", "a=1/", "a==1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		host, lim, _, err := parseHostLimit(s)
		if err != nil {
			return
		}
		if host == "" || host != strings.ToLower(host) || lim.PerHost < 0 || lim.Interval < 0 || lim.PerHost == 0 && lim.Interval == 0 && !strings.Contains(s, "/") {
			t.Fatalf("parseHostLimit(%q) = %q, %+v", s, host, lim)
		}
	})
}

// TestAuditInterval: --interval spaces the requests to one host (the
// waits move the fake clock on: with one check at a time, the clock's
// advance is their sum), and --host-limit HOST=N without a DURATION keeps
// it; HOST=N/DURATION replaces it.
func TestAuditInterval(t *testing.T) {
	dir := t.TempDir()
	srv := newAuditServer(t)
	host := strings.TrimPrefix(srv.URL, "http://")
	mbox := writeTestFile(t, filepath.Join(dir, "x.mbox"), mboxMessage("a@x", srv.URL+"/ok "+srv.URL+"/gone "+srv.URL+"/bot"))
	for i, tc := range []struct {
		limit    string
		min, max time.Duration // the clock's advance: two waits
	}{
		{host + "=1", 2 * time.Hour, 3 * time.Hour},
		{host + "=1/0s", 0, 0},
		{host + "=1/30m", time.Hour, 90 * time.Minute},
	} {
		clock := useClock(t, t0)
		code, _, errs := runCmd("", auditArgs(filepath.Join(dir, fmt.Sprintf("h%d.db", i)), srv.URL, "--no-archives", "--concurrency", "1",
			"--interval", "1h", "--host-limit", tc.limit, "--format", "jsonl", mbox)...)
		if code != exitOK {
			t.Fatalf("%s: exit %d, %q", tc.limit, code, errs)
		}
		if d := clock.Now().Sub(t0); d < tc.min || d > tc.max {
			t.Errorf("--host-limit %s: the clock moved %v; want %v to %v", tc.limit, d, tc.min, tc.max)
		}
	}
}

// TestAuditCredentials: a URL with user:password@ is checked, and the
// password appears in no report (streamed, --in-order, --occurrences) nor
// in the history file.
func TestAuditCredentials(t *testing.T) {
	dir := t.TempDir()
	srv := newAuditServer(t)
	useClock(t, t0)
	secret := strings.Replace(srv.URL, "http://", "http://alice:s3cr3tpw@", 1) + "/ok"
	mbox := writeTestFile(t, filepath.Join(dir, "x.mbox"), mboxMessage("a@x", secret+" "+secret))
	db := filepath.Join(dir, "h.db")
	for _, extra := range [][]string{nil, {"--in-order"}, {"--occurrences"}} {
		code, out, errs := runCmd("", auditArgs(db, srv.URL, append([]string{"--format", "jsonl", mbox}, extra...)...)...)
		if code != exitOK || strings.Contains(out+errs, "s3cr3tpw") || !strings.Contains(out, "REDACTED@") || !strings.Contains(out, `"status":"ok"`) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", extra, code, out, errs)
		}
	}
	files, _ := filepath.Glob(db + "*") // with a -wal or -journal file, if any
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil || bytes.Contains(b, []byte("s3cr3tpw")) {
			t.Errorf("%s holds the password (or cannot be read: %v)", f, err)
		}
	}
	if len(files) == 0 {
		t.Errorf("no history file")
	}
}

// TestAuditWriteErrors: a report that cannot be written (a writer that
// fails after N bytes, in every format and order; -o on a full device)
// gives exit 1 and one message naming the output, never 0 or 3.
func TestAuditWriteErrors(t *testing.T) {
	dir := t.TempDir()
	srv := newAuditServer(t)
	useClock(t, t0)
	mbox := auditArchive(t, dir, srv.URL)
	db := filepath.Join(dir, "h.db")
	for _, format := range audit.Formats {
		for _, extra := range [][]string{nil, {"--in-order"}, {"--occurrences"}} {
			if extra != nil && (format == "summary" || format == "html") {
				continue
			}
			for _, n := range []int{0, 100} {
				fw := &failAfterWriter{n: n, err: errors.New("disk full")}
				var errb bytes.Buffer
				args := auditArgs(db, srv.URL, append([]string{"--format", format, mbox}, extra...)...)
				code := run(args, strings.NewReader(""), fw, &errb)
				if code != exitFail || strings.Count(errb.String(), "disk full") != 1 {
					t.Errorf("%s %q after %d bytes: exit %d, stderr %q", format, extra, n, code, errb.String())
				}
			}
		}
	}
	code, _, errs := runCmd("", auditArgs(db, srv.URL, "--format", "jsonl", "-o", fullDevice(t), mbox)...)
	if code != exitFail || !strings.Contains(errs, "full") && !strings.Contains(errs, "no space") {
		t.Errorf("-o /dev/full: exit %d, stderr %q", code, errs)
	}
}

// TestAuditTimeGate: with --cdx - and --timegate, a failing link's copy
// comes from the Memento TimeGate, asked with the message's Date in
// Accept-Datetime; --no-archives asks nothing.
func TestAuditTimeGate(t *testing.T) {
	dir := t.TempDir()
	srv := newAuditServer(t)
	useClock(t, t0)
	var asked atomic.Value
	var gates atomic.Int64
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gates.Add(1)
		asked.Store(r.Header.Get("Accept-Datetime"))
		w.Header().Set("Location", "/memento/20000102030405/"+strings.TrimPrefix(r.URL.Path, "/tg/"))
		w.Header().Set("Memento-Datetime", "Sun, 02 Jan 2000 03:04:05 GMT")
		w.WriteHeader(http.StatusFound)
	}))
	defer gate.Close()
	mbox := writeTestFile(t, filepath.Join(dir, "x.mbox"),
		"From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <g@x>\nDate: Sat, 1 Jan 2000 00:00:00 +0000\n\n"+srv.URL+"/gone\n\n")
	code, out, errs := runCmd("", auditArgs(filepath.Join(dir, "h.db"), srv.URL, "--cdx", "-", "--timegate", gate.URL+"/tg/", "--format", "jsonl", mbox)...)
	r := records(t, out)[srv.URL+"/gone"]
	if code != exitOK || r.ArchiveSource != "memento" || !strings.HasPrefix(r.ArchiveURL, gate.URL+"/memento/20000102030405/") ||
		r.ArchiveTime != "2000-01-02T03:04:05Z" || asked.Load() != "Sat, 01 Jan 2000 00:00:00 GMT" {
		t.Errorf("exit %d, stderr %q, record %+v, Accept-Datetime %v", code, errs, r, asked.Load())
	}
	n := gates.Load()
	code, out, _ = runCmd("", auditArgs(filepath.Join(dir, "h2.db"), srv.URL, "--cdx", "-", "--timegate", gate.URL+"/tg/", "--no-archives", "--format", "jsonl", mbox)...)
	if r := records(t, out)[srv.URL+"/gone"]; code != exitOK || r.ArchiveURL != "" || gates.Load() != n {
		t.Errorf("--no-archives: exit %d, %+v, %d TimeGate requests", code, r, gates.Load()-n)
	}
}

// TestAuditCutLink: a 200,000-character link is cut by the extractor at
// its length limit; what is left is reported unchecked, class too-long,
// and never requested (the server answers 200 to anything), from the
// archive and from scan's records (--from-jsonl). The whole link next to
// it is checked.
func TestAuditCutLink(t *testing.T) {
	dir := t.TempDir()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" { // asked once per host, not for a link
			hits.Add(1)
		}
	}))
	defer srv.Close()
	useClock(t, t0)
	long := srv.URL + "/" + strings.Repeat("a", 200_000)
	mbox := writeTestFile(t, filepath.Join(dir, "x.mbox"),
		"From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <c@x>\n\n"+long+"\n"+srv.URL+"/whole\n\n")
	_, recs, _ := runCmd("", "scan", "--format", "jsonl", mbox)
	jf := writeTestFile(t, filepath.Join(dir, "scan.jsonl"), recs)
	for i, in := range [][]string{{mbox}, {"--from-jsonl", jf}} {
		hits.Store(0)
		args := append([]string{"audit", "--db", filepath.Join(dir, fmt.Sprintf("%d.db", i)), "--allow-private", "--cdx", "-",
			"--retries", "0", "--progress", "never", "--format", "jsonl"}, in...)
		code, out, errs := runCmd("", args...)
		got := records(t, out)
		if len(got) != 2 || got[srv.URL+"/whole"].Status != audit.OK {
			t.Errorf("%v: %d records, exit %d, stderr %q; want the cut one and /whole ok", in, len(got), code, errs)
		}
		for u, r := range got {
			if len(u) < 1000 {
				continue
			}
			if !strings.HasPrefix(long, u) || r.Status != audit.Unchecked || r.Class != audit.ClassTooLong {
				t.Errorf("%v: the cut link (%d chars): %s, class %s; want unchecked, too-long", in, len(u), r.Status, r.Class)
			}
		}
		if n := hits.Load(); n != 1 {
			t.Errorf("%v: %d requests; want 1 (the whole link only)", in, n)
		}
		if code == exitDead {
			t.Errorf("%v: exit %d", in, code)
		}
	}
}

// TestAuditDBCannotOpen: a --db in a directory this user cannot write is
// said to be one that cannot be opened or created, with the file and the
// cause, once prefixed, never "damaged"; a file that is not SQLite is.
func TestAuditDBCannotOpen(t *testing.T) {
	if testutil.AsNobody(t) {
		return
	}
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(ro, 0o755)
	eml := writeTestFile(t, filepath.Join(dir, "m.eml"), "Message-ID: <a@x>\n\nhttp://example.com/\n")
	garbage := writeTestFile(t, filepath.Join(dir, "g.db"), strings.Repeat("not sqlite ", 1000))
	for db, want := range map[string]string{
		filepath.Join(ro, "h.db"): "linkscan audit: cannot open or create the history " + filepath.Join(ro, "h.db") +
			": its directory " + ro + ": permission denied",
		garbage: "linkscan audit: history " + garbage + ": not an SQLite database, or damaged",
	} {
		code, _, errs := runCmd("", "audit", "--offline", "--db", db, "--format", "summary", "--progress", "never", eml)
		if code != exitFail || !strings.HasPrefix(errs, want) || strings.Contains(errs, "audit: audit") ||
			(db != garbage && strings.Contains(errs, "damaged")) {
			t.Errorf("--db %s: exit %d, stderr %q; want %q", db, code, errs, want)
		}
	}
}

// TestAudit403Fails: a bare 403 is blocked, and failing with --403-fails.
func TestAudit403Fails(t *testing.T) {
	dir := t.TempDir()
	srv := newAuditServer(t)
	useClock(t, t0)
	eml := writeTestFile(t, filepath.Join(dir, "m.eml"), "Message-ID: <a@x>\n\n"+srv.URL+"/bot\n")
	for flag, want := range map[string]audit.Status{"": audit.Blocked, "--403-fails": audit.Failing} {
		args := auditArgs(filepath.Join(dir, "h"+flag+".db"), srv.URL, "--format", "jsonl", eml)
		if flag != "" {
			args = append(args[:1], append([]string{flag}, args[1:]...)...)
		}
		_, out, errs := runCmd("", args...)
		if r := records(t, out)[srv.URL+"/bot"]; r.Status != want || r.HTTPStatus != 403 {
			t.Errorf("%q: %+v (stderr %q), want %s", flag, r, errs, want)
		}
	}
}

// TestAuditFields: the help of audit lists audit.Fields, and the command's
// jsonl and csv (with --occurrences, --in-order and neither) write them,
// in that order, with the location of scan's records (record.Shared).
func TestAuditFields(t *testing.T) {
	recordtest.Help(t, audit.Fields, helpText(t, "audit"), auditFieldsLead)
	dir := t.TempDir()
	in := filepath.Join(dir, "scan.jsonl")
	// a link without a checker: unchecked, offline, nothing asked of a network
	const line = `{"url":"telnet://bbs.example.org/","canonical":"telnet://bbs.example.org/","scheme":"telnet","host":"bbs.example.org","path":"a.mbox","offset":12,"message_id":"m@x","date":"1994-06-01T12:00:00+02:00","part":"1","line":3,"column":7,"problems":[]}`
	if err := os.WriteFile(in, []byte(line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"", "--in-order", "--occurrences"} {
		args := []string{"audit", "--offline", "--db", filepath.Join(dir, "h.db"), "--progress", "never", "--from-jsonl", in}
		if mode != "" {
			args = append(args, mode)
		}
		_, js, errs := runCmd("", append(args, "--format", "jsonl")...)
		_, cs, _ := runCmd("", append(args, "--format", "csv")...)
		keys, vals := recordtest.Keys(t, []byte(js))
		rows, err := csv.NewReader(strings.NewReader(cs)).ReadAll()
		if err != nil || len(rows) != 2 {
			t.Fatalf("%s: csv %q: %v (stderr %q)", mode, cs, err, errs)
		}
		if got, want := strings.Join(rows[0], ","), strings.Join(audit.Fields.CSVColumns(), ","); got != want {
			t.Errorf("%s: csv header\n%s\nwant\n%s", mode, got, want)
		}
		for _, k := range keys {
			if _, ok := audit.Fields.Lookup(k); !ok {
				t.Errorf("%s: jsonl key %s is not in audit.Fields", mode, k)
			}
		}
		for name, want := range map[string]string{"path": `"a.mbox"`, "offset": "12", "message_id": `"m@x"`, "part": `"1"`, "line": "3", "column": "7", "date": `"1994-06-01T10:00:00Z"`} {
			if got := string(vals[name]); got != want {
				t.Errorf("%s: jsonl %s = %s, want %s", mode, name, got, want)
			}
		}
	}
}

// TestAuditIgnoreRobots: by default the origin's robots.txt is asked for
// once and a link it disallows is unchecked, class robots, never
// requested; --ignore-robots asks for no robots.txt and checks the link.
func TestAuditIgnoreRobots(t *testing.T) {
	dir := t.TempDir()
	var robots, private atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			robots.Add(1)
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
		case "/private":
			private.Add(1)
		}
	}))
	defer srv.Close()
	mbox := writeTestFile(t, filepath.Join(dir, "x.mbox"),
		"From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <r@x>\n\n"+srv.URL+"/open\n"+srv.URL+"/private\n\n")
	for i, ignore := range []bool{false, true} {
		robots.Store(0)
		private.Store(0)
		args := auditArgs(filepath.Join(dir, fmt.Sprintf("%d.db", i)), srv.URL, "--cdx", "-", "--format", "jsonl", mbox)
		if ignore {
			args = append(args, "--ignore-robots")
		}
		code, out, errs := runCmd("", args...)
		got := records(t, out)
		p, open := got[srv.URL+"/private"], got[srv.URL+"/open"]
		if open.Status != audit.OK {
			t.Errorf("ignore %v: /open %s (exit %d, stderr %q)", ignore, open.Status, code, errs)
		}
		switch {
		case !ignore && (p.Status != audit.Unchecked || p.Class != "robots" || private.Load() != 0 || robots.Load() != 1):
			t.Errorf("robots honoured: /private %s class %s, %d requests of it, %d of robots.txt; want unchecked, robots, 0, 1",
				p.Status, p.Class, private.Load(), robots.Load())
		case ignore && (p.Status != audit.OK || private.Load() == 0 || robots.Load() != 0):
			t.Errorf("--ignore-robots: /private %s, %d requests of it, %d of robots.txt; want ok, some, 0",
				p.Status, private.Load(), robots.Load())
		}
	}
}

// TestAuditNAT64: --nat64 takes IPv6 prefixes of RFC 6052's lengths,
// repeated or comma-separated, into Config.NAT64 (made canonical); any
// other is a usage error.
func TestAuditNAT64(t *testing.T) {
	got, err := parseNAT64([]string{"2001:db8:122:344::/64", "2001:db8:100::1/40"})
	if err != nil || fmt.Sprint(got) != "[2001:db8:122:344::/64 2001:db8:100::/40]" {
		t.Errorf("parseNAT64: %v, %v", got, err)
	}
	for _, bad := range []string{"2001:db8::/44", "10.0.0.0/8", "::ffff:10.0.0.0/96", "2001:db8::", "x/96", "2001:db8::/129"} {
		if _, err := parseNAT64([]string{bad}); err == nil {
			t.Errorf("--nat64 %s accepted", bad)
		}
	}
	dir := t.TempDir()
	in := writeTestFile(t, filepath.Join(dir, "s.jsonl"), `{"url":"telnet://h/","canonical":"telnet://h/","scheme":"telnet","host":"h"}`+"\n")
	args := []string{"audit", "--offline", "--db", filepath.Join(dir, "h.db"), "--progress", "never", "--from-jsonl", in}
	if code, _, errs := runCmd("", append(args, "--nat64", "2001:db8::/44")...); code != exitUsage || !strings.Contains(errs, "RFC 6052") {
		t.Errorf("--nat64 of a bad length: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := runCmd("", append(args, "--nat64", "2001:db8:64::/96,2001:db8:65::/96", "--nat64", "2001:db8:66::/96")...); code != exitOK {
		t.Errorf("--nat64 of good prefixes: exit %d, stderr %q", code, errs)
	}
	var af auditFlags
	af.deadChecks, af.concurrency, af.perHost, af.archiveRequests = 1, 1, 1, 1
	af.backoff, af.maxBackoff, af.maxRetryAfter, af.timeout, af.attemptTimeout = 1, 1, 1, 1, 1
	af.nat64 = listFlag{"2001:db8:64::/96"}
	if cfg, err := af.config(); err != nil || len(cfg.NAT64) != 1 || cfg.NAT64[0].String() != "2001:db8:64::/96" {
		t.Errorf("config: NAT64 %v, %v", cfg.NAT64, err)
	}
}
