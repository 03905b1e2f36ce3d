package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linkscan/linkscan/audit/audittest"
)

// archiveTD holds the archive golden cases of package rewrite.
const archiveTD = "../../rewrite/testdata/archive/"

// archivePlaceholder stands for the loopback site's host in those
// cases (as long as "127.0.0.1:PORT").
const archivePlaceholder = "old.example.net"

// archiveInput builds a history (audittest.History, its servers closed
// when it returns) and writes the archive golden input with the site's
// host to dir; it returns the history's path, the input's and the host.
func archiveInput(t *testing.T, dir string) (db, in, host string) {
	db = filepath.Join(dir, "audit.db")
	t.Run("audit", func(t *testing.T) {
		host = strings.TrimPrefix(audittest.History(t, db).URL, "http://")
	})
	if len(host) != len(archivePlaceholder) {
		t.Fatalf("the site's host %q is not as long as %q", host, archivePlaceholder)
	}
	in = filepath.Join(dir, "archive.input")
	data := bytes.ReplaceAll(readFile(t, archiveTD+"archive.input"), []byte(archivePlaceholder), []byte(host))
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return db, in, host
}

// TestRewriteArchive: linkscan rewrite --db with an archive rule writes
// the file package rewrite's golden case gives (each message's dead link
// its copy captured nearest its Date), and a --report whose lines say
// what was written and why the others were skipped, and a --dry-run diff
// (golden, -update);
// the history is opened read-only and nothing else is asked.
func TestRewriteArchive(t *testing.T) {
	dir := t.TempDir()
	db, in, host := archiveInput(t, dir)
	dbBefore := readFile(t, db)
	back := func(b []byte) []byte {
		b = bytes.ReplaceAll(b, []byte(host), []byte(archivePlaceholder))
		return bytes.ReplaceAll(b, []byte(dir+"/"), nil)
	}
	out, report := filepath.Join(dir, "out.mbox"), filepath.Join(dir, "report.jsonl")
	code, stdout, errs := runCmd("", "rewrite", "--rules", archiveTD+"archive.toml", "--db", db, "--report", report,
		"--progress", "never", "-o", out, in)
	if code != exitOK {
		t.Fatalf("exit %d: %s%s", code, stdout, errs)
	}
	if got, want := back(readFile(t, out)), readFile(t, archiveTD+"archive.golden"); !bytes.Equal(got, want) {
		t.Errorf("the file written is not the golden case's:\n%s", got)
	}
	if !strings.Contains(errs, "changed 3 messages (5 links)") {
		t.Errorf("stderr: %s", errs)
	}
	rep := readFile(t, report)
	checkCmdGolden(t, archiveTD+"cmd/archive.report", back(rep))
	var lines []changeLine
	for _, l := range bytes.Split(bytes.TrimSpace(rep), []byte("\n")) {
		var c changeLine
		if err := json.Unmarshal(l, &c); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, c)
	}
	statuses := map[string]int{}
	for _, c := range lines {
		statuses[c.Status]++
		if c.Status == "written" && (!strings.HasPrefix(c.NewURL, audittest.Replay) || !strings.Contains(c.Note, "nearest the message's Date")) {
			t.Errorf("written: %+v", c)
		}
	}
	if statuses["written"] != 5 || statuses["skipped"] != 6 || len(lines) != 11 {
		t.Errorf("report: %v", statuses)
	}
	if !bytes.Equal(readFile(t, db), dbBefore) {
		t.Error("the history was changed")
	}

	// --dry-run: the diff of each message changed (golden)
	code, stdout, errs = runCmd("", "rewrite", "--rules", archiveTD+"archive.toml", "--db", db, "--dry-run", "--progress", "never", in)
	if code != exitOK {
		t.Fatalf("--dry-run: exit %d: %s", code, errs)
	}
	checkCmdGolden(t, archiveTD+"cmd/archive.diff", back([]byte(stdout)))

	// --dead-checks as for audit: with 4, the link failing on 3 checks is
	// failing, not dead, and stays
	code, _, errs = runCmd("", "rewrite", "--rules", archiveTD+"archive.toml", "--db", db, "--dead-checks", "4",
		"--progress", "never", "-o", out, in)
	if code != exitOK || !bytes.Equal(readFile(t, out), readFile(t, in)) {
		t.Errorf("--dead-checks 4: exit %d, %s", code, errs)
	}

	// the default history is the audit's, in the user's cache directory
	cache := filepath.Join(dir, "cache")
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", dir)
	os.MkdirAll(filepath.Join(cache, "linkscan"), 0o755)
	if err := os.Link(db, filepath.Join(cache, "linkscan", "audit.db")); err != nil {
		t.Fatal(err)
	}
	code, stdout, errs = runCmd("", "rewrite", "--rules", archiveTD+"archive.toml", "--progress", "never", in)
	if code != exitOK || !bytes.Equal(back([]byte(stdout)), readFile(t, archiveTD+"archive.golden")) {
		t.Errorf("default --db: exit %d: %s", code, errs)
	}
}

// TestRewriteArchiveUsage: an archive rule needs the history: a missing
// file (given or the default) or one that is no history is a usage error
// naming it, and no file is created; without an archive rule --db is
// not opened at all.
func TestRewriteArchiveUsage(t *testing.T) {
	dir := t.TempDir()
	in := archiveTD + "archive.input"
	missing := filepath.Join(dir, "none", "audit.db")
	notDB := filepath.Join(dir, "not.db")
	os.WriteFile(notDB, []byte("hello\n"), 0o644)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	t.Setenv("HOME", dir)
	for _, tc := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"--db", missing}, exitUsage, "the audit history " + missing + " does not exist"},
		{nil, exitUsage, "the audit history " + filepath.Join(dir, "cache", "linkscan", "audit.db") + " does not exist"},
		{[]string{"--db", notDB}, exitUsage, "not.db: not a linkscan audit history"},
		{[]string{"--db", notDB, "--dead-checks", "0"}, exitUsage, "--dead-checks must be at least 1"},
		{[]string{"--db", notDB, "--dead-days", "1000000"}, exitUsage, "--dead-days from 0 to 100000"},
		{[]string{"--db", notDB, "--dead-days", "NaN"}, exitUsage, "--dead-days from 0 to 100000"},
	} {
		args := append([]string{"rewrite", "--rules", archiveTD + "archive.toml", "--dry-run", "--progress", "never"}, tc.args...)
		code, _, errs := runCmd("", append(args, in)...)
		if code != tc.code || !strings.Contains(errs, tc.err) {
			t.Errorf("%q: exit %d, %q; want %d, %q", tc.args, code, errs, tc.code, tc.err)
		}
	}
	for _, p := range []string{filepath.Dir(missing), filepath.Join(dir, "cache")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s was created", p)
		}
	}
	// no archive rule: --db is not looked at
	code, _, errs := runCmd("", "rewrite", "--rules", rewriteRules, "--db", missing, "--dry-run", "--progress", "never", in)
	if code != exitOK {
		t.Errorf("no archive rule: exit %d: %s", code, errs)
	}
}

// TestRewriteArchiveLookupError: a history that opens but cannot be read
// (its table of copies gone) is no silent skip: the messages whose dead
// links were looked up are left as they were, named on standard error
// and "not-written" in the report, and the exit status is 1.
func TestRewriteArchiveLookupError(t *testing.T) {
	dir := t.TempDir()
	db, in, _ := archiveInput(t, dir)
	sdb, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sdb.Exec(`DROP TABLE archives`); err != nil {
		t.Fatal(err)
	}
	sdb.Close()
	out, report := filepath.Join(dir, "out.mbox"), filepath.Join(dir, "report.jsonl")
	code, _, errs := runCmd("", "rewrite", "--rules", archiveTD+"archive.toml", "--db", db, "--report", report,
		"--progress", "never", "-o", out, in)
	if code != exitFail || !strings.Contains(errs, "no such table: archives") || !strings.Contains(errs, "<arch-1@example.org>") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !bytes.Equal(readFile(t, out), readFile(t, in)) {
		t.Error("a message was changed")
	}
	n := 0
	for _, l := range bytes.Split(bytes.TrimSpace(readFile(t, report)), []byte("\n")) {
		var c changeLine
		if err := json.Unmarshal(l, &c); err != nil {
			t.Fatal(err)
		}
		if c.Status == "not-written" && strings.Contains(c.Reason, "no such table: archives") {
			n++
		}
		if c.Status == "written" {
			t.Errorf("written: %+v", c)
		}
	}
	if n < 3 {
		t.Errorf("%d not-written lines with the error", n)
	}
}

// TestRewriteArchiveAfterAudit: the commands together. `linkscan audit`
// runs over two archives of different years (a loopback site whose link
// fails, a loopback CDX API), then `linkscan rewrite --db` over the
// messages of both: each message's link becomes the copy of its own
// year, so the links the audit command keeps are the ones rewrite looks
// up (the canonical forms agree).
func TestRewriteArchiveAfterAudit(t *testing.T) {
	dir := t.TempDir()
	site := audittest.NewSite(t)
	dead, ok := site.URL+"/gone/report.html", site.URL+"/ok/list"
	for _, c := range []time.Time{audittest.Day(1996, 3, 1), audittest.Day(2001, 6, 1)} {
		site.AddCapture(dead, c)
	}
	msg := func(date, id string) string {
		return "From pat@example.org Mon Jan  1 00:00:00 2001\nFrom: pat@example.org\nDate: " + date + "\nMessage-ID: <" + id +
			">\nSubject: links\n\nThe report: <URL:" + strings.ToUpper(dead[:4]) + dead[4:] + ">\nThe list: " + ok + "\n\n"
	}
	m1996, m2001 := msg("Mon, 15 Jan 1996 10:00:00 +0000", "a@example.org"), msg("Fri, 1 Jun 2001 10:00:00 +0200", "b@example.org")
	db := filepath.Join(dir, "audit.db")
	for i, m := range []string{m1996, m2001} {
		in := filepath.Join(dir, "year"+strconv.Itoa(i)+".mbox")
		if err := os.WriteFile(in, []byte(m), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errs := runCmd("", "audit", "--db", db, "--allow-private", "--cdx", site.CDX, "--replay", audittest.Replay,
			"--archive-interval", "0", "--retries", "0", "--format", "jsonl", "--progress", "never", in)
		if code != exitOK && code != exitDead {
			t.Fatalf("audit %s: exit %d: %s", in, code, errs)
		}
	}
	in := filepath.Join(dir, "all.mbox")
	if err := os.WriteFile(in, []byte(m1996+m2001), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.mbox")
	// two failing checks, milliseconds apart: dead with --dead-checks 2
	// --dead-days 0, failing by the defaults
	code, _, errs := runCmd("", "rewrite", "--rules", archiveTD+"archive.toml", "--db", db, "--dead-checks", "2", "--dead-days", "0",
		"--progress", "never", "-o", out, in)
	if code != exitOK {
		t.Fatalf("rewrite: exit %d: %s", code, errs)
	}
	want := strings.Replace(m1996, "<URL:"+strings.ToUpper(dead[:4])+dead[4:]+">", "<URL:"+audittest.CaptureURL(dead, audittest.Day(1996, 3, 1))+">", 1) +
		strings.Replace(m2001, "<URL:"+strings.ToUpper(dead[:4])+dead[4:]+">", "<URL:"+audittest.CaptureURL(dead, audittest.Day(2001, 6, 1))+">", 1)
	if got := string(readFile(t, out)); got != want {
		t.Errorf("rewritten:\n%s\nwant:\n%s", got, want)
	}
	code, stdout, errs := runCmd("", "rewrite", "--rules", archiveTD+"archive.toml", "--db", db, "--progress", "never", in)
	if code != exitOK || stdout != m1996+m2001 {
		t.Errorf("by the defaults (3 checks over 7 days) the link is failing and stays: exit %d: %s", code, errs)
	}
}

// TestDeadAfter: --dead-days means the same span in audit and rewrite: 0
// is "the checks alone decide" (1 ns, not the engine's default of 7
// days), fractions count, and a value that would overflow a Duration
// (and turn negative: every failing link dead) or is not a number is
// refused.
func TestDeadAfter(t *testing.T) {
	for _, tc := range []struct {
		days float64
		want time.Duration
		ok   bool
	}{
		{0, time.Nanosecond, true}, {0.5, 12 * time.Hour, true}, {7, 7 * 24 * time.Hour, true},
		{maxDeadDays, maxDeadDays * 24 * time.Hour, true},
		{-1, 0, false}, {maxDeadDays + 1, 0, false}, {1e300, 0, false}, {math.NaN(), 0, false}, {math.Inf(1), 0, false},
	} {
		got, ok := deadAfter(tc.days)
		if got != tc.want || ok != tc.ok {
			t.Errorf("deadAfter(%v) = %v, %v; want %v, %v", tc.days, got, ok, tc.want, tc.ok)
		}
	}
	for _, days := range []string{"1000000", "NaN", "-1"} {
		if code, _, errs := runCmd("", "audit", "--offline", "--dead-days", days, "--progress", "never", "-"); code != exitUsage || !strings.Contains(errs, "--dead-days") {
			t.Errorf("audit --dead-days %s: exit %d, %q", days, code, errs)
		}
	}
}
