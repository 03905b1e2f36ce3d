package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/linkscan/linkscan/internal/testutil"
	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/record"
	"github.com/linkscan/linkscan/record/recordtest"
	"github.com/linkscan/linkscan/references"
)

type resolved struct {
	URL    string `json:"url"`
	Where  string `json:"where"`
	Form   string `json:"form"`
	Status string `json:"status"`
	Target *struct {
		File   string `json:"file"`
		Offset int64  `json:"offset"`
		Part   string `json:"part"`
		Group  string `json:"group"`
	} `json:"target"`
	Targets []json.RawMessage `json:"targets"`
}

func decodeLines(t *testing.T, out string) []resolved {
	var rs []resolved
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var r resolved
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%v in %s", err, sc.Text())
		}
		rs = append(rs, r)
	}
	return rs
}

func TestResolveCommand(t *testing.T) {
	code, out, errs := runCmd("", "resolve", "--format", "jsonl", "--nntp-host", "news.test.invalid", td+"refs/list.mbox", td+"refs/maildir")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rs := decodeLines(t, out)
	byURL := map[string]resolved{}
	for _, r := range rs {
		if !strings.HasPrefix(r.URL, "mid:") && !strings.HasPrefix(r.URL, "cid:") && !strings.HasPrefix(r.URL, "news:") && !strings.HasPrefix(r.URL, "nntp:") {
			t.Errorf("resolve reported a non-reference %q", r.URL)
		}
		if _, ok := byURL[r.URL+r.Where]; !ok {
			byURL[r.URL+r.Where] = r
		}
	}
	for key, want := range map[string]string{
		"mid:minutes@example.org" + "body":                               "resolved",
		"mid:pruned@example.org" + "body":                                "dangling",
		"mid:copy@example.org" + "body":                                  "resolved",
		"cid:twice@example.org" + "html:src":                             "ambiguous",
		"cid:diagram@example.org" + "html:src":                           "resolved",
		"news:*" + "body":                                                "not-a-target",
		"nntp://news.other.example/comp.infosystems.www/1body":           "external-server",
		"nntp://news.test.invalid/comp.infosystems.www/1body":            "resolved",
		"mid:root@example.org" + "header:In-Reply-To":                    "resolved",
		"news:1991Jun21.055051.28165@milton.u.washington.eduattribution": "resolved",
	} {
		r, ok := byURL[key]
		if !ok || r.Status != want {
			t.Errorf("%s: status %q, want %q", key, r.Status, want)
		}
	}
	if r := byURL["mid:copy@example.orgbody"]; len(r.Targets) != 2 || r.Target == nil || r.Target.File != td+"refs/list.mbox" {
		t.Errorf("copies: %+v", r)
	}
	if r := byURL["cid:diagram@example.orghtml:src"]; r.Target == nil || r.Target.Part != "2" {
		t.Errorf("cid target: %+v", r.Target)
	}
	if r := byURL["mid:root@example.orgheader:In-Reply-To"]; r.Form != "implicit" {
		t.Errorf("implicit form %q", r.Form)
	}

	_, out, _ = runCmd("", "resolve", "--format", "jsonl", "--status", "dangling", "--no-implicit", td+"refs/list.mbox", td+"refs/maildir")
	for _, r := range decodeLines(t, out) {
		if r.Status != "dangling" || r.Form == "implicit" {
			t.Errorf("--status dangling --no-implicit kept %+v", r)
		}
	}
	if code, _, errs := runCmd("", "resolve", "--status", "lost", "x"); code != 2 || !strings.Contains(errs, "lost") {
		t.Errorf("bad --status: %d %q", code, errs)
	}
}

func TestResolveStdinAndScan(t *testing.T) {
	data, _ := os.ReadFile(td + "refs/list.mbox")
	code, out, errs := runCmd(string(data), "resolve", "--format", "jsonl", "-")
	if code != 0 || !strings.Contains(out, `"status":"resolved","target":{"file":"-"`) {
		t.Errorf("stdin: exit %d %s\n%s", code, errs, out)
	}
	_, out, _ = runCmd("", "scan", "--resolve", "--format", "jsonl", td+"refs/list.mbox")
	if !strings.Contains(out, `"url":"mid:pruned@example.org"`) || !strings.Contains(out, `"status":"dangling"`) {
		t.Errorf("scan --resolve:\n%s", out)
	}
	if code, _, _ := runCmd("", "scan", "--index", "x.db", td+"refs/list.mbox"); code != 2 {
		t.Errorf("--index without --resolve: exit %d", code)
	}
}

func TestIndexCommand(t *testing.T) {
	db := filepath.Join(t.TempDir(), "refs.db")
	code, out, errs := runCmd("", "index", "--index", db, "--format", "json", td+"refs/list.mbox", td+"refs/maildir")
	var st map[string]int
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil {
		t.Fatalf("exit %d %v %s", code, err, errs)
	}
	if st["messages"] != 8 || st["added"] != 8 || st["without_message_id"] != 1 || st["content_ids"] != 2 || st["files"] != 4 {
		t.Errorf("first run: %v", st)
	}
	_, out, _ = runCmd("", "index", "--index", db, "--format", "json", td+"refs/list.mbox", td+"refs/maildir")
	json.Unmarshal([]byte(out), &st)
	if st["added"] != 0 || st["skipped_unchanged"] != 4 || st["messages"] != 8 {
		t.Errorf("second run: %v", st)
	}
	// resolve against the stored index from another run: the Maildir alone
	_, out, _ = runCmd("", "resolve", "--index", db, "--format", "jsonl", td+"refs/maildir")
	if !strings.Contains(out, `"url":"mid:root@example.org","canonical":"mid:root@example.org"`) || !strings.Contains(out, `"status":"resolved"`) {
		t.Errorf("resolve against a stored index:\n%s", out)
	}
	_, out, _ = runCmd("", "index", td+"refs/list.mbox")
	if !strings.Contains(out, "memory (this run only)") || !strings.Contains(out, "messages           5") {
		t.Errorf("text output:\n%s", out)
	}
	notDB := filepath.Join(t.TempDir(), "not-a-database")
	os.WriteFile(notDB, []byte("From a@b Sat Jan  1 00:00:00 2000\n\nthis is mail, not SQLite\n"), 0o644)
	if code, _, _ := runCmd("", "index", "--index", notDB, td+"refs/list.mbox"); code != 1 {
		t.Errorf("a non-database index file: exit %d", code)
	}
}

// failWriter fails every write, as a full disk does.
type failWriter struct{ err error }

func (f failWriter) Write([]byte) (int, error) { return 0, f.err }

// TestIndexWriteErrors: output that cannot be written is an error (exit
// 1, said on standard error) in both formats; a closed pipe is quiet.
func TestIndexWriteErrors(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		var errb bytes.Buffer
		code := run([]string{"index", "--format", format, td + "refs/list.mbox"}, strings.NewReader(""), failWriter{syscall.ENOSPC}, &errb)
		if code != 1 || !strings.Contains(errb.String(), "no space left on device") {
			t.Errorf("index --format %s on a full disk: exit %d, stderr %q", format, code, errb.String())
		}
		errb.Reset()
		code = run([]string{"index", "--format", format, td + "refs/list.mbox"}, strings.NewReader(""), failWriter{syscall.EPIPE}, &errb)
		if code != 0 || errb.Len() != 0 {
			t.Errorf("index --format %s into a closed pipe: exit %d, stderr %q", format, code, errb.String())
		}
	}
	// and the real thing: /dev/full, or a device like it (trust_test.go)
	full, err := os.OpenFile(fullDevice(t), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	var errb bytes.Buffer
	if code := run([]string{"index", td + "refs/list.mbox"}, strings.NewReader(""), full, &errb); code != 1 || !strings.Contains(errb.String(), "writing standard output") {
		t.Errorf("index > /dev/full: exit %d, stderr %q", code, errb.String())
	}
}

// TestIndexFileTrust: the index file as the command sees it: a zero-byte
// file is said to be taken as new; a damaged one or another database is
// refused with its name, exit 1; a killed run's files are counted as
// incomplete and read again.
func TestIndexFileTrust(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "empty.db")
	os.WriteFile(db, nil, 0o644)
	code, _, errs := runCmd("", "index", "--index", db, td+"refs/list.mbox")
	if code != 0 || !strings.Contains(errs, "empty file (0 bytes)") || !strings.Contains(errs, db) {
		t.Errorf("zero-byte index: exit %d, stderr %q", code, errs)
	}
	b, _ := os.ReadFile(db)
	clear(b[4096 : 3*4096])
	os.WriteFile(db, b, 0o644)
	for _, args := range [][]string{{"index", "--index", db, td + "refs/list.mbox"}, {"resolve", "--index", db, td + "refs/list.mbox"}} {
		code, out, errs := runCmd("", args...)
		if code != 1 || !strings.Contains(errs, db) || out != "" {
			t.Errorf("%s with a damaged index: exit %d, stderr %q, stdout %q", args[0], code, errs, out)
		}
	}
	if code, _, errs := runCmd("", "resolve", "--status", "error,dangling", td+"refs/list.mbox"); code != 0 {
		t.Errorf("--status error: exit %d %s", code, errs)
	}
	if _, _, errs := runCmd("", "resolve", "--status", "lost", td+"refs/list.mbox"); !strings.Contains(errs, "external-server, error") {
		t.Errorf("--status help: %q", errs)
	}
}

// TestIndexSpill: with a budget of one byte the in-memory index moves to
// a temporary file at once, says so on standard error, holds the same and
// removes its file at the end.
func TestIndexSpill(t *testing.T) {
	var errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &errb}
	tmp := t.TempDir()
	paths := []string{td + "refs/list.mbox", td + "refs/maildir"}
	counts := func(rf refFlags) references.Stats {
		store, err := openStore(e, "resolve", rf)
		if err != nil {
			t.Fatal(err)
		}
		if _, code := buildIndex(e, store, paths, mailbox.Options{}, nil, false); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		st, err := store.Stats()
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Close(); err != nil {
			t.Fatal(err)
		}
		return st
	}
	want := counts(refFlags{})
	if errb.Len() != 0 {
		t.Errorf("notices within the default budget: %q", errb.String())
	}
	if got := counts(refFlags{memory: 1, tmpDir: tmp}); got != want || want.Messages != 8 {
		t.Errorf("spilled index holds %+v, want %+v", got, want)
	}
	if !strings.Contains(errb.String(), "moved to a temporary file in "+tmp) || !strings.Contains(errb.String(), "memory budget (1 B)") {
		t.Errorf("no notice of the move, with the budget: %q", errb.String())
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("temporary index left behind: %v", left)
	}
	// the same through the command's flags
	code, out, errs := runCmd("", "index", "--memory", "1B", "--tmpdir", tmp, "--format", "json", paths[0], paths[1])
	var st map[string]int
	json.Unmarshal([]byte(out), &st)
	if code != 0 || st["messages"] != 8 || !strings.Contains(errs, "moved to a temporary file in "+tmp) {
		t.Errorf("index --memory 1B: exit %d, %v, stderr %q", code, st, errs)
	}
}

// TestIndexExitStatus: damage in a message is exit 0 with the problem on
// standard error (4 with --damage-exit 4); a file of a folder that cannot be read is exit 1 and is
// left incomplete; control characters from archives and paths are
// escaped on standard error.
func TestIndexExitStatus(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.mbox")
	os.WriteFile(bad, []byte("From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <bad@x>\nContent-Type: multipart/mixed; boundary=\"z\x1b[2J\"\n\nno boundary\n"), 0o644)
	code, _, errs := runCmd("", "index", bad)
	if code != exitOK || !strings.Contains(errs, "never found") {
		t.Errorf("damage: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := runCmd("", "index", "--damage-exit", "4", bad); code != exitDamage {
		t.Errorf("damage, --damage-exit 4: exit %d, stderr %q", code, errs)
	}
	if strings.ContainsRune(errs, 0x1b) {
		t.Errorf("raw ESC on stderr: %q", errs)
	}

	folder := filepath.Join(dir, "folder")
	os.Mkdir(folder, 0o755)
	os.WriteFile(filepath.Join(folder, "1.eml"), []byte("From: a@b\nMessage-ID: <one@x>\nSubject: s\n\nbody\n"), 0o644)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("From: a@b\nMessage-ID: <two@x>\nSubject: s\n\n" + strings.Repeat("body ", 200) + "\n"))
	zw.Close()
	os.WriteFile(filepath.Join(folder, "2.eml.gz"), gz.Bytes()[:gz.Len()/2], 0o644)
	db := filepath.Join(dir, "i.db")
	code, out, errs := runCmd("", "index", "--index", db, "--format", "json", folder)
	var st map[string]int
	json.Unmarshal([]byte(out), &st)
	// the cut file and the folder's walk, which met it, are incomplete
	if code != 1 || !strings.Contains(errs, "2.eml.gz") || st["incomplete_files"] != 2 || st["files"] != 2 {
		t.Errorf("a cut file in a folder: exit %d, stderr %q, %v", code, errs, st)
	}

	esc := filepath.Join(dir, "esc\x1b[31m.db")
	os.WriteFile(esc, nil, 0o644)
	_, _, errs = runCmd("", "index", "--index", esc, filepath.Join(folder, "1.eml"))
	if !strings.Contains(errs, "empty file") || strings.ContainsRune(errs, 0x1b) {
		t.Errorf("notice about a file name with ESC: %q", errs)
	}
}

func TestWorse(t *testing.T) {
	for _, tt := range [][3]int{{0, 0, 0}, {0, 4, 4}, {4, 1, 1}, {1, 4, 1}, {1, 0, 1}, {4, 4, 4}, {0, 1, 1}} {
		if got := worse(tt[0], tt[1]); got != tt[2] {
			t.Errorf("worse(%d, %d) = %d, want %d", tt[0], tt[1], got, tt[2])
		}
	}
}

// lookupFails is an index whose lookups fail, as a damaged file's do.
type lookupFails struct{ references.Store }

var errDisk = errors.New("disk I/O error")

func (lookupFails) Messages(string) ([]references.Location, error)      { return nil, errDisk }
func (lookupFails) Parts(string, string) ([]references.Location, error) { return nil, errDisk }
func (lookupFails) Article(string) ([]references.Location, error)       { return nil, errDisk }
func (lookupFails) HasGroup(string) (bool, error)                       { return false, errDisk }
func (lookupFails) HasHost(string) (bool, error)                        { return false, errDisk }

// TestResolveLookupFails: when the index cannot be read, the references
// that needed it have status error (never dangling), the reason is on
// standard error, and the exit status is 1.
func TestResolveLookupFails(t *testing.T) {
	defer func(f func(*env, string, refFlags) (references.Store, error)) { openStoreFn = f }(openStoreFn)
	openStoreFn = func(e *env, name string, rf refFlags) (references.Store, error) {
		s, err := openStore(e, name, rf)
		return lookupFails{s}, err
	}
	code, out, errs := runCmd("", "resolve", "--format", "jsonl", "--no-implicit", td+"refs/list.mbox")
	if code != 1 || !strings.Contains(errs, "disk I/O error") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	// failed lookups are counted as such, not as inputs not read (there
	// was one input, and it was read)
	if strings.Contains(errs, "could not be read,") || strings.Contains(errs, "inputs could not be read") ||
		!strings.Contains(errs, "lookups failed (the index could not be read)") {
		t.Errorf("final count:\n%s", errs)
	}
	n := 0
	for _, r := range decodeLines(t, out) {
		switch {
		case strings.HasPrefix(r.URL, "cid:"): // looked for in its own message, not in the index
		case r.Status == "dangling":
			t.Errorf("a failed lookup reported as dangling: %+v", r)
		case strings.HasPrefix(r.URL, "mid:") && r.Status != "error":
			t.Errorf("%s: status %q, want error", r.URL, r.Status)
		case r.Status == "error":
			n++
		}
	}
	if n == 0 {
		t.Errorf("no record with status error:\n%s", out)
	}
}

// TestIndexRemovedFiles: a message file deleted from a Maildir is
// forgotten by the next index run, which says how many it removed.
func TestIndexRemovedFiles(t *testing.T) {
	md := filepath.Join(t.TempDir(), "maildir")
	for _, sub := range []string{"cur", "new", "tmp"} {
		os.MkdirAll(filepath.Join(md, sub), 0o755)
		ents, _ := os.ReadDir(td + "refs/maildir/" + sub)
		for _, e := range ents {
			b, _ := os.ReadFile(td + "refs/maildir/" + sub + "/" + e.Name())
			os.WriteFile(filepath.Join(md, sub, e.Name()), b, 0o644)
		}
	}
	db := filepath.Join(t.TempDir(), "i.db")
	var st map[string]int
	_, out, _ := runCmd("", "index", "--index", db, "--format", "json", md)
	json.Unmarshal([]byte(out), &st)
	if st["messages"] != 3 {
		t.Fatalf("first run: %v", st)
	}
	os.Remove(filepath.Join(md, "cur", "1000.1.host:2,S"))
	code, out, errs := runCmd("", "index", "--index", db, "--format", "json", md)
	st = nil
	json.Unmarshal([]byte(out), &st)
	if code != 0 || st["removed_files"] != 1 || st["messages"] != 2 || st["files"] != 2 {
		t.Errorf("after a deletion: exit %d, %v, %s", code, st, errs)
	}
	_, out, _ = runCmd("", "resolve", "--index", db, "--format", "jsonl", "--no-implicit", td+"refs/list.mbox")
	found := false
	for _, r := range decodeLines(t, out) {
		if r.URL == "mid:minutes@example.org" {
			found = true
			if r.Status != "dangling" {
				t.Errorf("mid: of the deleted message: %s %+v", r.Status, r.Target)
			}
		}
	}
	if !found {
		t.Errorf("no record of mid:minutes@example.org:\n%s", out)
	}
}

// TestTmpdirReachesMailbox: --tmpdir is where mailbox holds a long
// message read from a stream (scan, resolve and audit make their
// configuration through scanConfig.config).
func TestTmpdirReachesMailbox(t *testing.T) {
	for _, cmd := range []*command{cmdScan, cmdResolve, cmdAudit} {
		e := &env{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
		var c scanConfig
		fs := newFlagSet(cmd, e)
		c.register(fs)
		paths, _, ok := parseFlags(fs, []string{"--tmpdir", "/spool/here", "-"})
		if !ok {
			t.Fatalf("%s: flags not parsed", cmd.Name)
		}
		cfg, code := c.config(e, cmd.Name, paths)
		if cfg == nil {
			t.Fatalf("%s: exit %d: %s", cmd.Name, code, e.stderr)
		}
		if cfg.Mailbox.TempDir != "/spool/here" {
			t.Errorf("%s: mailbox.Options.TempDir %q", cmd.Name, cfg.Mailbox.TempDir)
		}
	}
}

// TestUnreadableEntries: a folder inside a directory that cannot be read
// and a link that cannot be followed are named on standard error and
// counted as inputs not read (exit 1) by scan, resolve, audit and index,
// which go on with the rest; index does not count an unreadable message
// file as a message; the files passed over are counted by all four
// alike. (As user nobody when the tests run as root.)
func TestUnreadableEntries(t *testing.T) {
	if testutil.AsNobody(t) { // root reads folders whatever their mode
		return
	}
	dir := t.TempDir()
	msg := func(id string) []byte {
		return []byte("From: a@b\nMessage-ID: <" + id + "@x>\nSubject: s\n\nsee http://example.org/" + id + "\n")
	}
	fo := filepath.Join(dir, "fo")
	os.MkdirAll(filepath.Join(fo, "a"), 0o755)
	os.MkdirAll(filepath.Join(fo, "b"), 0o755)
	os.WriteFile(filepath.Join(fo, "a", "y.eml"), msg("y"), 0o644)
	os.WriteFile(filepath.Join(fo, "b", "x.eml"), msg("x"), 0o644)
	os.WriteFile(filepath.Join(fo, "b", "picture.png"), []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), 0o644)
	os.Symlink(filepath.Join(fo, "b"), filepath.Join(fo, "link-to-b")) // not followed
	os.Chmod(filepath.Join(fo, "a"), 0)
	defer os.Chmod(filepath.Join(fo, "a"), 0o755)
	md := filepath.Join(dir, "md")
	for _, sub := range []string{"cur", "new", "tmp"} {
		os.MkdirAll(filepath.Join(md, sub), 0o755)
	}
	os.WriteFile(filepath.Join(md, "cur", "1:2,S"), msg("one"), 0o644)
	os.Symlink(filepath.Join(dir, "gone"), filepath.Join(md, "cur", "2:2,S"))
	os.WriteFile(filepath.Join(md, "tmp", "4.host"), msg("four"), 0o644) // being delivered
	locked := filepath.Join(md, "cur", "3:2,S")
	os.WriteFile(locked, msg("three"), 0o644)
	os.Chmod(locked, 0)

	for _, args := range [][]string{
		{"scan", "--format", "jsonl", "--quiet"},
		{"resolve", "--format", "jsonl"},
		{"index", "--format", "json"},
		{"audit", "--offline", "--db", filepath.Join(dir, "history.db"), "--progress", "never", "--format", "summary"},
	} {
		code, out, errs := runCmd("", append(args, fo, md)...)
		for _, name := range []string{filepath.Join(fo, "a"), filepath.Join(md, "cur", "2:2,S"), locked} {
			if !strings.Contains(errs, name) {
				t.Errorf("%s: %s not named on standard error: %q", args[0], name, errs)
			}
		}
		if code != 1 {
			t.Errorf("%s: exit %d, want 1; stderr %q", args[0], code, errs)
		}
		for _, want := range []string{"1 file in directories skipped (not messages", "1 file in Maildir tmp/ skipped (being delivered",
			"1 directory not followed (a link or hidden; it may hold messages"} {
			if !strings.Contains(errs, want) {
				t.Errorf("%s: no count %q: %q", args[0], want, errs)
			}
		}
		switch args[0] {
		case "scan":
			if !strings.Contains(out, "http://example.org/x") || !strings.Contains(out, "http://example.org/one") || strings.Contains(out, "http://example.org/y") {
				t.Errorf("scan: the readable messages not (only) reported:\n%s", out)
			}
			if !strings.Contains(errs, "3 inputs could not be read") {
				t.Errorf("scan: the count of inputs not read: %q", errs)
			}
		case "index":
			var st map[string]int
			// the unreadable file, and the walks of both directories,
			// which met an entry they could not read
			if err := json.Unmarshal([]byte(out), &st); err != nil || st["added"] != 2 || st["messages"] != 2 || st["incomplete_files"] != 3 {
				t.Errorf("index: %v %v, want 2 messages, the unreadable file and both walks incomplete", st, err)
			}
		}
	}
}

func TestSkipLines(t *testing.T) {
	for _, tt := range []struct {
		n    map[mailbox.SkipKind]int
		want string
	}{
		{nil, ""},
		{map[mailbox.SkipKind]int{mailbox.SkipNotMessage: 2}, "2 files in directories skipped (not messages; M)"},
		{map[mailbox.SkipKind]int{mailbox.SkipDirectory: 2, mailbox.SkipDelivering: 1, mailbox.SkipNotMessage: 0},
			"1 file in Maildir tmp/ skipped (being delivered; M)|2 directories not followed (links or hidden; they may hold messages; M)"},
		{map[mailbox.SkipKind]int{mailbox.SkipDirectory: 1}, "1 directory not followed (a link or hidden; it may hold messages; M)"},
	} {
		if got := strings.Join(skipLines(tt.n, "; M"), "|"); got != tt.want {
			t.Errorf("%v: %q, want %q", tt.n, got, tt.want)
		}
	}
}

// TestIndexConsole: index prints damage as scan does (PATH#OFFSET, not
// the PATH:OFFSET that a Maildir name with ':' makes ambiguous, control
// characters escaped), caps it with --warn-limit, keeps it back with
// --quiet, ends with the counts, and exits 0 (--damage-exit) or 1.
func TestIndexConsole(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "md")
	for _, d := range []string{"cur", "new", "tmp"} {
		os.MkdirAll(filepath.Join(md, d), 0o755)
	}
	// a multipart whose final boundary never comes, in a file named as
	// Maildir names its files
	name := filepath.Join(md, "cur", "1700:2,S")
	os.WriteFile(name, []byte("From: a@b\nMessage-ID: <md\x1b@x>\nContent-Type: multipart/mixed; boundary=\"B\"\n\n--B\n\nhttp://a.example/\n"), 0o644)
	code, _, errs := runCmd("", "index", md)
	if code != exitOK {
		t.Errorf("exit %d, want 0:\n%s", code, errs)
	}
	if !strings.Contains(errs, name+"#0 <md\\x1b@x>: offset ") || strings.Contains(errs, name+":0") {
		t.Errorf("damage not as PATH#OFFSET <id>:\n%s", errs)
	}
	if strings.ContainsRune(errs, 0x1b) {
		t.Errorf("raw ESC on stderr: %q", errs)
	}
	if !strings.Contains(errs, "linkscan index: 1 message damaged (1 problem)") {
		t.Errorf("no final count:\n%s", errs)
	}
	if code, _, _ := runCmd("", "index", "--damage-exit", "0", md); code != 0 {
		t.Errorf("--damage-exit 0: exit %d", code)
	}

	// 30 messages, each with the same kind of damage and a different
	// charset name
	var b strings.Builder
	for i := range 30 {
		fmt.Fprintf(&b, "From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <c%d@x>\nno colon %d\n\nhttp://example.org/%d\n\n", i, i, i)
	}
	many := writeTestFile(t, filepath.Join(dir, "many.mbox"), b.String())
	_, _, errs = runCmd("", "index", "--warn-limit", "3", many)
	if n := strings.Count(errs, "without a colon"); n != 4 || !strings.Contains(errs, "linkscan index: and 27 more like this: header line without a colon") {
		t.Errorf("--warn-limit 3: %d lines:\n%s", n, errs)
	}
	if !strings.Contains(errs, "linkscan index: 30 messages damaged (30 problems)") {
		t.Errorf("no final count:\n%s", errs)
	}
	code, _, errs = runCmd("", "index", "--quiet", many, filepath.Join(dir, "missing.mbox"))
	if code != exitFail || strings.Contains(errs, "without a colon") || !strings.Contains(errs, "missing.mbox") ||
		!strings.Contains(errs, "linkscan index: 1 input could not be read, 30 messages damaged (30 problems)") {
		t.Errorf("--quiet with a missing input: exit %d:\n%s", code, errs)
	}
	help := helpText(t, "index")
	for _, want := range []string{"--quiet", "--warn-limit N", "--damage-exit N", "PATH#OFFSET", "Exit status", "--damage-exit 4"} {
		if !strings.Contains(help, want) {
			t.Errorf("help index lacks %q", want)
		}
	}
	for _, bad := range [][]string{{"--warn-limit", "-1"}, {"--damage-exit", "300"}} {
		if code, _, _ := runCmd("", append(append([]string{"index"}, bad...), many)...); code != exitUsage {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}

// TestResolveNamesInputOnce: an input that cannot be read to its end is
// named once (by the scan pass), not by the index pass as well.
func TestResolveNamesInputOnce(t *testing.T) {
	dir := t.TempDir()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	for i := range 200 {
		fmt.Fprintf(zw, "From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <t%d@x>\n\nsee mid:t%d@x %s\n\n", i, i+1, strings.Repeat("words ", 20))
	}
	zw.Close()
	cut := filepath.Join(dir, "cut.mbox.gz")
	os.WriteFile(cut, gz.Bytes()[:gz.Len()/2], 0o644)
	code, _, errs := runCmd("", "resolve", "--format", "jsonl", cut)
	if code != exitFail {
		t.Errorf("exit %d, want 1", code)
	}
	if n := strings.Count(errs, "data truncated"); n != 1 || !strings.Contains(errs, "1 input could not be read") {
		t.Errorf("the truncated input named %d times, want 1:\n%s", n, errs)
	}
}

// TestResolvePrefixes: every line of resolve and scan --resolve names
// its command ("linkscan resolve:", "linkscan scan:"), never a bare
// "linkscan:".
func TestResolvePrefixes(t *testing.T) {
	dir := t.TempDir()
	notDB := writeTestFile(t, filepath.Join(dir, "not.db"), "not an index at all, just text\n")
	for _, cmd := range [][]string{{"resolve"}, {"scan", "--resolve"}, {"resolve", "--as", "text"}} {
		args := append(append([]string{}, cmd...), "--index", notDB, td+"refs/list.mbox")
		code, _, errs := runCmd("", args...)
		if code == 0 || errs == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
		for _, l := range strings.Split(strings.TrimSpace(errs), "\n") {
			if !strings.HasPrefix(l, "linkscan "+cmd[0]+": ") {
				t.Errorf("%v: line without its command: %q", args, l)
			}
		}
	}
}

// TestIndexFields: the JSON of index --format json has indexFields' keys
// (references.StatsFields, then indexRun's), in order, each holding the
// value of its own field; indexRun's tags are the names of indexFields
// past StatsFields; index's help lists indexFields.
func TestIndexFields(t *testing.T) {
	n := len(references.StatsFields)
	if got, want := strings.Join(indexFields[:n].Names(), " "), strings.Join(references.StatsFields.Names(), " "); got != want {
		t.Errorf("indexFields begins with %s, not references.StatsFields (%s)", got, want)
	}
	recordtest.Struct(t, indexFields[n:], indexRun{})
	st := references.Stats{Files: 1, Incomplete: 2, Messages: 3, MessageIDs: 4, Synthetic: 5, ContentIDs: 6, Groups: 7, Articles: 8}
	b := indexJSON(st, references.IndexStats{Messages: 9, Skipped: 10, Pruned: 11})
	recordtest.JSONKeys(t, indexFields, b)
	_, vals := recordtest.Keys(t, b)
	for i, f := range indexFields {
		if got, want := string(vals[f.Name]), strconv.Itoa(i+1); got != want {
			t.Errorf("%s = %s, want %s", f.Name, got, want)
		}
		if f.Doc == "" {
			t.Errorf("field %s has no Doc", f.Name)
		}
	}
	recordtest.Help(t, indexFields, helpText(t, "index"), indexFieldsLead)
}

// TestIndexDocsTable: the table of index --format json fields in
// docs/references.md is the one made from indexFields; go test
// ./cmd/linkscan -run TestIndexDocsTable -fixdocs rewrites it.
func TestIndexDocsTable(t *testing.T) {
	recordtest.DocTableAfter(t, indexFields, "../../docs/references.md", "Fields of `index --format json`", *fixDocs)
}

// TestResolveHelpFields: the help of resolve lists a record's target
// fields as record.TargetFields has them, and an entry for each field of
// record.Fields that --resolve fills.
func TestResolveHelpFields(t *testing.T) {
	help := helpText(t, "resolve")
	if want := "the first target: " + strings.Join(record.TargetFields.Names(), ", ") + "\n"; !strings.Contains(help, want) {
		t.Errorf("the help of resolve does not have %q:\n%s", want, help)
	}
	for _, f := range record.Fields {
		if f.With == "--resolve" && !regexp.MustCompile(`(?m)^  `+f.Name+` +\S`).MatchString(help) {
			t.Errorf("the help of resolve has no entry for the field %s:\n%s", f.Name, help)
		}
	}
}

// TestReferencesDocTargetFields: docs/references.md lists a record's
// target fields as record.TargetFields has them, in order.
func TestReferencesDocTargetFields(t *testing.T) {
	var names []string
	for _, n := range record.TargetFields.Names() {
		names = append(names, "`"+n+"`")
	}
	want := "`target` (" + strings.Join(names, ", ") + ")"
	if doc := strings.Join(strings.Fields(string(readFile(t, "../../docs/references.md"))), " "); !strings.Contains(doc, want) {
		t.Errorf("docs/references.md does not list the target's fields as record.TargetFields has them: want %q", want)
	}
}

// TestResolveHelpStatuses: the status entry of resolve's help names every
// status of references.Statuses, in order.
func TestResolveHelpStatuses(t *testing.T) {
	help := strings.Join(strings.Fields(helpText(t, "resolve")), " ")
	var names []string
	for _, s := range references.Statuses {
		names = append(names, string(s))
	}
	want := "status " + strings.Join(names[:len(names)-1], ", ") + ", or " + names[len(names)-1] + ":"
	if !strings.Contains(help, want) {
		t.Errorf("the help of resolve does not list the statuses as references.Statuses has them: want %q", want)
	}
}
