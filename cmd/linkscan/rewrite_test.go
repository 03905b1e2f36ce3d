package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/linkscan/linkscan/internal/corpus"
	"github.com/linkscan/linkscan/internal/testutil"
	"github.com/linkscan/linkscan/internal/writeback"
)

const rewriteRules = td + "rewrite/rules.toml"

// rewriteCase gives the rules file and flags a golden case of
// testdata/rewrite asks for (as rewrite's own golden test does).
func rewriteCase(in string) []string {
	name := strings.TrimSuffix(filepath.Base(in), ".input")
	rules := rewriteRules
	if _, err := os.Stat(strings.TrimSuffix(in, ".input") + ".toml"); err == nil {
		rules = strings.TrimSuffix(in, ".input") + ".toml"
	}
	args := []string{"rewrite", "--rules", rules, "--progress", "never", "--jobs", "2"}
	if strings.Contains(name, "break-dkim") {
		args = append(args, "--break-dkim")
	}
	if strings.Contains(name, "annotate") {
		args = append(args, "--annotate")
	}
	if strings.Contains(name, "headers") {
		args = append(args, "--headers")
	}
	return args
}

func readFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRewriteGoldenCases runs the command on every golden case of
// testdata/rewrite with -o and checks that the file written is the
// splicer's golden output, that rewriting it again changes nothing, and
// that standard input to standard output gives the same bytes.
func TestRewriteGoldenCases(t *testing.T) {
	ins, _ := filepath.Glob(td + "rewrite/*.input")
	if len(ins) == 0 {
		t.Fatal("no golden cases")
	}
	for _, in := range ins {
		name := strings.TrimSuffix(filepath.Base(in), ".input")
		t.Run(name, func(t *testing.T) {
			want := readFile(t, strings.TrimSuffix(in, ".input")+".golden")
			out := filepath.Join(t.TempDir(), name+".mbox")
			args := append(rewriteCase(in), "-o", out, in)
			code, _, errs := runCmd("", args...)
			if code != exitOK && code != exitDamage {
				t.Fatalf("exit %d: %s", code, errs)
			}
			got := readFile(t, out)
			if !bytes.Equal(got, want) {
				t.Fatalf("-o output differs from %s.golden:\n%s", name, testutil.LineDiff(string(want), string(got)))
			}
			// idempotent: the output rewritten again is the same
			again := filepath.Join(t.TempDir(), "again")
			args = append(rewriteCase(in), "-o", again, out)
			if code, _, errs := runCmd("", args...); code != exitOK && code != exitDamage {
				t.Fatalf("second run: exit %d: %s", code, errs)
			}
			if got2 := readFile(t, again); !bytes.Equal(got2, got) {
				t.Fatalf("rewriting the output again changed it:\n%s", testutil.LineDiff(string(got), string(got2)))
			}
			// standard input to standard output
			code, stdout, errs := runCmd(string(readFile(t, in)), append(rewriteCase(in), "-")...)
			if code != exitOK && code != exitDamage {
				t.Fatalf("stdin: exit %d: %s", code, errs)
			}
			if stdout != string(want) {
				t.Fatalf("stdin to stdout differs from the golden output:\n%s", testutil.LineDiff(string(want), stdout))
			}
		})
	}
}

// TestRewriteDryRunReportGolden checks the diffs of --dry-run and the
// lines of --report against testdata/rewrite/cmd (-update rewrites them),
// and that --dry-run changes nothing.
func TestRewriteDryRunReportGolden(t *testing.T) {
	for _, name := range []string{"plain", "qp", "html-qp", "wrapped", "dkim", "crlf"} {
		t.Run(name, func(t *testing.T) {
			in := td + "rewrite/" + name + ".input"
			before := readFile(t, in)
			report := filepath.Join(t.TempDir(), "report.jsonl")
			args := append(rewriteCase(in), "--dry-run", "--report", report, in)
			code, diff, errs := runCmd("", args...)
			if code != exitOK && code != exitDamage {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if !bytes.Equal(readFile(t, in), before) {
				t.Fatal("--dry-run changed the input")
			}
			checkCmdGolden(t, td+"rewrite/cmd/"+name+".diff", []byte(diff))
			checkCmdGolden(t, td+"rewrite/cmd/"+name+".report", readFile(t, report))
		})
	}
}

func checkCmdGolden(t *testing.T, golden string, got []byte) {
	t.Helper()
	if *update {
		os.MkdirAll(filepath.Dir(golden), 0o755)
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/linkscan -run Rewrite -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("differs from %s (check, then -update):\n%s", golden, testutil.LineDiff(string(want), string(got)))
	}
}

// TestRewriteNoOp: a rules file without rules gives every archive of
// testdata/ and ../shared/corpus back byte for byte (standard output),
// and --in-place leaves the files untouched.
func TestRewriteNoOp(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.toml")
	os.WriteFile(empty, []byte("version = 1\n"), 0o644)
	var files []string
	for _, root := range []string{td, "../../../shared/corpus"} {
		filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
			// (a file in a Maildir's tmp/ is refused: TestRewriteMaildirTmp)
			if err == nil && fi.Mode().IsRegular() && fi.Size() < 4<<20 && !compressed(p) && !emlx(p) && !strings.HasSuffix(p, ".tar") && writeback.MaildirTmp(p) == "" {
				files = append(files, p)
			}
			return nil
		})
	}
	if len(files) < 50 {
		t.Fatalf("only %d files found", len(files))
	}
	for _, f := range files {
		code, out, errs := runCmd("", "rewrite", "--rules", empty, "--progress", "never", "--quiet", f)
		want := readFile(t, f)
		if out != string(want) {
			t.Errorf("%s: exit %d, output differs from the file (%d bytes, want %d): %s", f, code, len(out), len(want), errs)
		}
	}
	t.Logf("%d files", len(files))
}

func TestRewriteUsage(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.mbox")
	os.WriteFile(a, readFile(t, td+"rewrite/plain.input"), 0o644)
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "a.mbox"), []byte("From x\n\n"), 0o644)
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte("version = 1\n[[rule]]\naction = \"nope\"\n"), 0o644)
	tests := []struct {
		args []string
		err  string
	}{
		{[]string{"rewrite", a}, "--rules FILE is required"},
		{[]string{"rewrite", "--rules", rewriteRules, "-o", a, a}, "is the input"},
		{[]string{"rewrite", "--rules", rewriteRules, "-o", filepath.Join(dir, "x"), dir}, "input directory"},
		{[]string{"rewrite", "--rules", rewriteRules, "-o", dir, a}, "-o " + dir + ": the output directory may not be an input, inside one, or hold one"},
		{[]string{"rewrite", "--rules", rewriteRules, "--in-place", "--dry-run", a}, "go alone"},
		{[]string{"rewrite", "--rules", rewriteRules, "--backup", "~", a}, "--backup goes with --in-place"},
		{[]string{"rewrite", "--rules", rewriteRules, "--in-place", "-"}, "cannot replace standard input"},
		{[]string{"rewrite", "--rules", rewriteRules, "--report", a, a}, "is the input"},
		{[]string{"rewrite", "--rules", rewriteRules, dir}, "needs -o DIR"},
		{[]string{"rewrite", "--rules", rewriteRules, "-o", filepath.Join(dir, "y"), td + "mail/mboxrd.mbox.bz2"}, "compressed"},
		{[]string{"rewrite", "--rules", bad, a}, "bad.toml:3:"},
		{[]string{"rewrite", "--rules", rewriteRules, "--in-place", a, a}, "given twice"},
		{[]string{"rewrite", "--rules", rewriteRules, "-o", filepath.Join(dir, "z"), a, td + "mail/../mail/mime.eml", filepath.Join(dir, "sub", "a.mbox")}, "would both be written"},
	}
	before := readFile(t, a)
	for _, tc := range tests {
		code, _, errs := runCmd("", tc.args...)
		if code != exitUsage || !strings.Contains(errs, tc.err) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, errs, tc.err)
		}
	}
	if !bytes.Equal(readFile(t, a), before) {
		t.Fatal("a refused run changed the input")
	}
}

func hashFile(t testing.TB, name string) [32]byte {
	return sha256.Sum256(readFile(t, name))
}

// bigMbox writes n copies of the plain golden case into dir and returns
// its name and the bytes the rewrite must give.
func bigMbox(t testing.TB, dir string, n int) (string, []byte) {
	in, want := readFile(t, td+"rewrite/plain.input"), readFile(t, td+"rewrite/plain.golden")
	name := filepath.Join(dir, "big.mbox")
	if err := os.WriteFile(name, bytes.Repeat(in, n), 0o644); err != nil {
		t.Fatal(err)
	}
	return name, bytes.Repeat(want, n)
}

func TestRewriteInPlace(t *testing.T) {
	dir := t.TempDir()
	name, want := bigMbox(t, dir, 50)
	old := readFile(t, name)
	code, _, errs := runCmd("", "rewrite", "--rules", rewriteRules, "--progress", "never", "--in-place", "--backup", ".orig", name)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if got := readFile(t, name); !bytes.Equal(got, want) {
		t.Fatalf("in place: wrong content:\n%s", testutil.LineDiff(string(want), string(got)))
	}
	if b := readFile(t, name+".orig"); !bytes.Equal(b, old) {
		t.Fatal("the backup is not the old file")
	}
	// a second run changes nothing and leaves the file alone
	fi, _ := os.Stat(name)
	code, _, errs = runCmd("", "rewrite", "--rules", rewriteRules, "--progress", "never", "--in-place", name)
	fi2, _ := os.Stat(name)
	if code != exitOK || !os.SameFile(fi, fi2) {
		t.Fatalf("second run: exit %d (%s), file replaced: %v", code, errs, !os.SameFile(fi, fi2))
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Fatalf("files left in the directory: %v", ents)
	}
	// through a symbolic link: the file it points to is replaced, the
	// backup is of that file's old content, the link stays
	os.WriteFile(name, old, 0o644)
	link := filepath.Join(t.TempDir(), "link.mbox")
	os.Symlink(name, link)
	code, _, errs = runCmd("", "rewrite", "--rules", rewriteRules, "--progress", "never", "--in-place", "--backup", ".bak", link)
	if code != exitOK {
		t.Fatalf("symlink: exit %d: %s", code, errs)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the symbolic link was replaced")
	}
	if !bytes.Equal(readFile(t, name), want) || !bytes.Equal(readFile(t, name+".bak"), old) {
		t.Fatal("symlink: wrong file or backup content")
	}
}

// rwFailWriter fails every write after n bytes.
type rwFailWriter struct {
	w io.Writer
	n int
}

var errInjected = errors.New("injected write failure")

func (f *rwFailWriter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k, _ := f.w.Write(p[:f.n])
		f.n = 0
		return k, errInjected
	}
	f.n -= len(p)
	return f.w.Write(p)
}

// TestRewriteInPlaceWriteFailure: a write that fails after N bytes
// leaves the old file as it was, no temporary file behind, and exit 1.
func TestRewriteInPlaceWriteFailure(t *testing.T) {
	defer func() { testWrapOutput = nil }()
	dir := t.TempDir()
	name, want := bigMbox(t, dir, 80)
	old := hashFile(t, name)
	size := len(want)
	for _, n := range []int{0, 1, 4096, 65536, 65537, size - 1} {
		testWrapOutput = func(w io.Writer) io.Writer { return &rwFailWriter{w: w, n: n} }
		code, _, errs := runCmd("", "rewrite", "--rules", rewriteRules, "--progress", "never", "--in-place", name)
		if code != exitFail || !strings.Contains(errs, "injected write failure") || !strings.Contains(errs, "left as it was") {
			t.Errorf("fail after %d: exit %d, stderr %q", n, code, errs)
		}
		if hashFile(t, name) != old {
			t.Fatalf("fail after %d: the file changed", n)
		}
		// the file's changes are not counted: none was written
		if strings.Contains(errs, "rewrite: changed ") || !strings.Contains(errs, "messages left as they were") {
			t.Errorf("fail after %d: the messages of the file not written are counted as changed: %q", n, errs)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Fatalf("fail after %d: files left: %v", n, ents)
		}
	}
	// --report ends with a line saying the file was not written
	report := filepath.Join(t.TempDir(), "report.jsonl")
	code, _, _ := runCmd("", "rewrite", "--rules", rewriteRules, "--progress", "never", "--in-place", "--report", report, name)
	lines := strings.Split(strings.TrimSpace(string(readFile(t, report))), "\n")
	if last := lines[len(lines)-1]; code != exitFail || len(lines) < 2 || !strings.Contains(last, `"status":"file-not-written"`) || !strings.Contains(last, "injected write failure") {
		t.Fatalf("report after a failed write: exit %d, last line %q", code, last)
	}
	// -o: the target stays as it was
	target := filepath.Join(dir, "out.mbox")
	os.WriteFile(target, []byte("old\n"), 0o644)
	testWrapOutput = func(w io.Writer) io.Writer { return &rwFailWriter{w: w, n: 1000} }
	code, _, _ = runCmd("", "rewrite", "--rules", rewriteRules, "--progress", "never", "-o", target, name)
	if b := readFile(t, target); code != exitFail || string(b) != "old\n" {
		t.Fatalf("-o with a failing write: exit %d, target %q", code, b[:min(len(b), 20)])
	}
}

// TestRewriteKillHelper is the process TestRewriteKill kills.
func TestRewriteKillHelper(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv("LINKSCAN_REWRITE_KILL_AFTER"))
	if err != nil {
		t.Skip("run by TestRewriteKill")
	}
	testWrapOutput = func(w io.Writer) io.Writer {
		return &testutil.StallWriter{W: w, N: n, Mark: os.Getenv("LINKSCAN_REWRITE_KILL_MARK")}
	}
	os.Exit(run([]string{"rewrite", "--rules", rewriteRules, "--progress", "never", "--in-place", os.Getenv("LINKSCAN_REWRITE_KILL_FILE")}, nil, io.Discard, os.Stderr))
}

// TestRewriteKill runs the command --in-place in a child process and
// kills it (SIGKILL) mid-way through writing the new file: the file is
// then the old one, whole; a run let finish gives the new one whole.
func TestRewriteKill(t *testing.T) {
	if testing.Short() {
		t.Skip("re-runs the test binary")
	}
	dir := t.TempDir()
	name, want := bigMbox(t, dir, 80)
	oldBytes := readFile(t, name)
	old, neu := sha256.Sum256(oldBytes), sha256.Sum256(want)
	for _, n := range []int{0, 30000, 65536, 90000, 1 << 30} {
		os.WriteFile(name, oldBytes, 0o644)
		mark := filepath.Join(t.TempDir(), "mark")
		cmd := exec.Command(os.Args[0], "-test.run=^TestRewriteKillHelper$")
		cmd.Env = append(os.Environ(), "LINKSCAN_REWRITE_KILL_AFTER="+strconv.Itoa(n),
			"LINKSCAN_REWRITE_KILL_MARK="+mark, "LINKSCAN_REWRITE_KILL_FILE="+name)
		// the child stalls mid-write at the mark, or ends
		kill := testutil.RunUntilStall(t, cmd, mark, fmt.Sprintf("after %d", n))
		killed := kill != nil
		if killed {
			tmps, _ := filepath.Glob(filepath.Join(dir, ".big.mbox.tmp-*"))
			if len(tmps) != 1 {
				t.Errorf("after %d: no temporary file being written: %v", n, tmps)
			}
			kill()
		}
		got := hashFile(t, name)
		switch {
		case killed && got != old:
			t.Errorf("killed after %d bytes: the file is not the old one", n)
		case !killed && got != neu:
			t.Errorf("finished (limit %d): the file is not the new one", n)
		}
		// what a kill leaves: the old file and a temporary one
		tmps, _ := filepath.Glob(filepath.Join(dir, ".big.mbox.tmp-*"))
		for _, f := range tmps {
			os.Remove(f)
		}
		t.Logf("limit %d: killed %v", n, killed)
	}
}

// TestRewriteMaildir: in place, a changed message gets a name with its
// new ,S= size and the old name goes; -o mirrors the Maildir.
func TestRewriteMaildir(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "Mail")
	for _, sub := range []string{"cur", "new", "tmp"} {
		os.MkdirAll(filepath.Join(md, sub), 0o755)
	}
	changed := "From: a@example.org\nSubject: moved\nMessage-ID: <m1@example.org>\n\nSee <ftp://ftp.cs.example.edu/pub/lists/wg/1993.txt>.\n"
	same := "From: b@example.org\nSubject: stays\nMessage-ID: <m2@example.org>\n\nSee <http://info.cern.ch/>.\n"
	curName := filepath.Join(md, "cur", fmt.Sprintf("1000.1.host,S=%d:2,S", len(changed)))
	newName := filepath.Join(md, "new", "1001.2.host")
	os.WriteFile(curName, []byte(changed), 0o644)
	os.WriteFile(newName, []byte(same), 0o644)
	wantChanged := strings.Replace(changed, "ftp://ftp.cs.example.edu/pub/lists/", "https://archive.example.org/lists/", 1)
	wantName := filepath.Join(md, "cur", fmt.Sprintf("1000.1.host,S=%d:2,S", len(wantChanged)))

	out := filepath.Join(dir, "out")
	code, _, errs := runCmd("", "rewrite", "--rules", rewriteRules, "--progress", "never", "-o", out, md)
	if code != exitOK {
		t.Fatalf("-o: exit %d: %s", code, errs)
	}
	if b := readFile(t, filepath.Join(out, "Mail", "cur", filepath.Base(wantName))); string(b) != wantChanged {
		t.Fatalf("-o: changed message %q", b)
	}
	if b := readFile(t, filepath.Join(out, "Mail", "new", "1001.2.host")); string(b) != same {
		t.Fatalf("-o: unchanged message %q", b)
	}
	if fi, err := os.Stat(filepath.Join(out, "Mail", "tmp")); err != nil || !fi.IsDir() {
		t.Fatal("-o: the mirrored Maildir has no tmp/")
	}

	fi, _ := os.Stat(newName)
	code, _, errs = runCmd("", "rewrite", "--rules", rewriteRules, "--progress", "never", "--in-place", md)
	if code != exitOK {
		t.Fatalf("in place: exit %d: %s", code, errs)
	}
	if b := readFile(t, wantName); string(b) != wantChanged {
		t.Fatalf("in place: %q", b)
	}
	if _, err := os.Stat(curName); err == nil {
		t.Fatal("the old name is still there")
	}
	if fi2, _ := os.Stat(newName); !os.SameFile(fi, fi2) {
		t.Fatal("an unchanged message was written")
	}
	ents, _ := os.ReadDir(filepath.Join(md, "cur"))
	if len(ents) != 1 {
		t.Fatalf("cur holds %v", ents)
	}
}

// TestRewriteMaildirVsize: in place, each changed message whose name has
// ,W= gets the virtual size of its new file (counted here from the file's
// bytes), and ,S= its size: LF, CRLF and bare-CR messages, W= alone, a
// W= that was wrong before; a name whose size field is not a number keeps
// its name (said on standard error, exit 0) and gets its new bytes. -o
// names its copies the same way.
func TestRewriteMaildirVsize(t *testing.T) {
	body := func(eol string) string {
		return strings.ReplaceAll("From: a@example.org\nSubject: w\nMessage-ID: <w@example.org>\n\nSee <ftp://ftp.cs.example.edu/pub/lists/w.txt>.\nand\n<ftp://ftp.cs.example.edu/pub/lists/v.txt>\n", "\n", eol)
	}
	rewritten := func(s string) string {
		return strings.ReplaceAll(s, "ftp://ftp.cs.example.edu/pub/lists/", "https://archive.example.org/lists/")
	}
	lf, crlf, cr := body("\n"), body("\r\n"), body("\r")
	vs := func(s string) int64 { return virtualSize([]byte(s)) }
	type file struct {
		old, msg string
		// the name after, from the new bytes; "" = the old name
		want func(neu string) string
	}
	files := []file{
		{fmt.Sprintf("1.a.h,S=%d,W=%d:2,S", len(lf), vs(lf)), lf,
			func(n string) string { return fmt.Sprintf("1.a.h,S=%d,W=%d:2,S", len(n), vs(n)) }},
		{fmt.Sprintf("2.b.h,S=%d,W=%d:2,RS", len(crlf), vs(crlf)), crlf,
			func(n string) string { return fmt.Sprintf("2.b.h,S=%d,W=%d:2,RS", len(n), len(n)) }},
		{fmt.Sprintf("3.c.h,S=%d,W=%d:2,", len(cr), len(cr)), cr,
			func(n string) string { return fmt.Sprintf("3.c.h,S=%d,W=%d:2,", len(n), len(n)) }},
		{"4.d.h,W=1,X=y:2,S", lf, // W only, and wrong before
			func(n string) string { return fmt.Sprintf("4.d.h,W=%d,X=y:2,S", vs(n)) }},
		{fmt.Sprintf("5.e.h,S=%d,W=12k:2,S", len(lf)), lf, nil},
		{fmt.Sprintf("6.f.h,S=%dx:2,S", len(lf)), lf, nil},
	}
	for _, mode := range []string{"-o", "--in-place"} {
		dir := t.TempDir()
		md := filepath.Join(dir, "Mail")
		for _, sub := range []string{"cur", "new", "tmp"} {
			os.MkdirAll(filepath.Join(md, sub), 0o755)
		}
		for _, f := range files {
			os.WriteFile(filepath.Join(md, "cur", f.old), []byte(f.msg), 0o644)
		}
		args := []string{"rewrite", "--rules", rewriteRules, "--progress", "never"}
		where := filepath.Join(md, "cur")
		if mode == "-o" {
			args = append(args, "-o", filepath.Join(dir, "out"))
			where = filepath.Join(dir, "out", "Mail", "cur")
		} else {
			args = append(args, mode)
		}
		code, _, errs := runCmd("", append(args, md)...)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", mode, code, errs)
		}
		if n := strings.Count(errs, "is not a number"); n != 2 {
			t.Errorf("%s: %d notes of names left, want 2: %s", mode, n, errs)
		}
		var wantNames []string
		for _, f := range files {
			neu := rewritten(f.msg)
			if neu == f.msg {
				t.Fatalf("the rules change nothing in %q", f.msg)
			}
			name := f.old
			if f.want != nil {
				name = f.want(neu)
			} else if !strings.Contains(errs, filepath.Join(where, f.old)+": the size in the name") {
				t.Errorf("%s: %s not named on standard error: %s", mode, f.old, errs)
			}
			wantNames = append(wantNames, name)
			b, err := os.ReadFile(filepath.Join(where, name))
			if err != nil {
				t.Errorf("%s: %s: %v", mode, f.old, err)
				continue
			}
			if string(b) != neu {
				t.Errorf("%s: %s holds %q", mode, name, b)
			}
			// the name says what the file holds
			if m := regexp.MustCompile(`,W=([0-9]+)`).FindStringSubmatch(name); m != nil && f.want != nil && m[1] != strconv.FormatInt(virtualSize(b), 10) {
				t.Errorf("%s: %s: W=%s, the file's virtual size is %d", mode, name, m[1], virtualSize(b))
			}
			if m := regexp.MustCompile(`,S=([0-9]+)`).FindStringSubmatch(name); m != nil && f.want != nil && m[1] != strconv.Itoa(len(b)) {
				t.Errorf("%s: %s: S=%s, the file's size is %d", mode, name, m[1], len(b))
			}
		}
		ents, _ := os.ReadDir(where)
		var got []string
		for _, e := range ents {
			got = append(got, e.Name())
		}
		slices.Sort(wantNames)
		if !slices.Equal(got, wantNames) {
			t.Errorf("%s: %s holds\n%q, want\n%q", mode, where, got, wantNames)
		}
	}
}

// TestRewriteMaildirDovecot checks the names --in-place gives against
// the real Dovecot (doveadm, Debian package dovecot-core, which .ci/run
// installs; no server runs): copies of the rewritten files under names
// without sizes, whose sizes doveadm computes itself from the bytes, have
// the size.physical and size.virtual the rewritten names say; and doveadm
// reads the rewritten names to the same sizes. Dovecot refuses mail
// access as root: as root doveadm drops to nobody (mail_uid).
func TestRewriteMaildirDovecot(t *testing.T) {
	doveadm, err := exec.LookPath("doveadm")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("doveadm is not installed (CI=true: .ci/run installs the Debian package dovecot-core)")
		}
		t.Skip("doveadm is not installed (Debian package dovecot-core)")
	}
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		os.Chmod(d, 0o755)
	}
	md, plain := filepath.Join(dir, "Mail"), filepath.Join(dir, "Plain")
	for _, m := range []string{md, plain} {
		for _, sub := range []string{"cur", "new", "tmp"} {
			os.MkdirAll(filepath.Join(m, sub), 0o755)
		}
	}
	msg := "From: a@example.org\nSubject: d\nMessage-ID: <d@example.org>\n\nSee <ftp://ftp.cs.example.edu/pub/lists/d.txt>.\n\n<ftp://ftp.cs.example.edu/pub/lists/e.txt>\n"
	for i, b := range []string{
		msg,
		strings.ReplaceAll(msg, "\n", "\r\n"),
		strings.ReplaceAll(msg, "\n", "\r"),
		strings.Replace(msg, "\n\n", "\r\n\r\n", 1), // CRLF header, LF body
	} {
		name := fmt.Sprintf("%d.d.h,S=%d,W=%d:2,S", i, len(b), virtualSize([]byte(b)))
		if i == 3 {
			name = fmt.Sprintf("%d.d.h,W=%d:2,S", i, virtualSize([]byte(b)))
		}
		os.WriteFile(filepath.Join(md, "cur", name), []byte(b), 0o644)
	}
	code, _, errs := runCmd("", "rewrite", "--rules", rewriteRules, "--progress", "never", "--in-place", md)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// what the names say, by unique part
	named := map[string][2]string{}
	ents, _ := os.ReadDir(filepath.Join(md, "cur"))
	for i, e := range ents {
		b := readFile(t, filepath.Join(md, "cur", e.Name()))
		if !bytes.Contains(b, []byte("https://archive.example.org/lists/")) {
			t.Fatalf("%s was not rewritten: %q", e.Name(), b)
		}
		uniq, _, _ := strings.Cut(e.Name(), ":")
		var sz [2]string
		for _, f := range strings.Split(uniq, ",")[1:] {
			if k, v, _ := strings.Cut(f, "="); k == "S" {
				sz[0] = v
			} else if k == "W" {
				sz[1] = v
			}
		}
		named[fmt.Sprintf("%d.plain", i)] = sz
		named[uniq] = sz // Dovecot's guid of a Maildir message
		os.WriteFile(filepath.Join(plain, "cur", fmt.Sprintf("%d.plain:2,S", i)), b, 0o644)
	}
	if len(ents) != 4 {
		t.Fatalf("cur holds %v", ents)
	}
	uid, gid := os.Getuid(), os.Getgid()
	if uid == 0 {
		uid, gid = 65534, 65534
	}
	filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err == nil {
			os.Lchown(p, uid, gid)
		}
		return nil
	})
	home := filepath.Join(dir, "home")
	os.Mkdir(home, 0o755)
	os.Chown(home, uid, gid)
	conf := filepath.Join(dir, "dovecot.conf")
	os.WriteFile(conf, []byte(fmt.Sprintf("mail_uid = %d\nmail_gid = %d\nfirst_valid_uid = %d\nfirst_valid_gid = %d\nmail_home = %s\nbase_dir = %s\nlog_path = %s\n",
		uid, gid, min(uid, 500), min(gid, 500), home, filepath.Join(dir, "run"), filepath.Join(dir, "dovecot.log"))), 0o644)
	fetch := func(maildir string) map[string][2]string {
		cmd := exec.Command(doveadm, "-f", "tab", "-c", conf, "-o", "mail_location=maildir:"+maildir, "fetch", "guid size.physical size.virtual", "all")
		cmd.Env = []string{"HOME=" + home, "USER=linkscan-test", "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"}
		cmd.Dir = home
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || stderr.Len() > 0 {
			log, _ := os.ReadFile(filepath.Join(dir, "dovecot.log"))
			t.Fatalf("doveadm fetch %s: %v\n%s\n%s\n%s", maildir, err, out, &stderr, log)
		}
		got := map[string][2]string{}
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n")[1:] {
			if f := strings.Split(l, "\t"); len(f) == 3 {
				got[f[0]] = [2]string{f[1], f[2]}
			}
		}
		return got
	}
	for _, m := range []string{plain, md} {
		got := fetch(m)
		if len(got) != 4 {
			t.Fatalf("doveadm fetch %s: %v", m, got)
		}
		for guid, sizes := range got {
			want, ok := named[guid]
			if !ok {
				t.Errorf("doveadm: unknown message %s", guid)
				continue
			}
			if want[0] != "" && sizes[0] != want[0] || sizes[1] != want[1] {
				t.Errorf("%s: %s: Dovecot says size.physical %s, size.virtual %s; the name says S=%s, W=%s", m, guid, sizes[0], sizes[1], want[0], want[1])
			}
		}
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "dovecot.log")); bytes.Contains(log, []byte("rror")) || bytes.Contains(log, []byte("orrupt")) {
		t.Errorf("Dovecot logged:\n%s", log)
	}
}

// virtualSize is Dovecot's virtual size of b, counted here on its own:
// every line feed not preceded by a carriage return counts two bytes.
func virtualSize(b []byte) int64 {
	n := int64(len(b))
	for i, c := range b {
		if c == '\n' && (i == 0 || b[i-1] != '\r') {
			n++
		}
	}
	return n
}

func TestLineDiff(t *testing.T) {
	ops := lineDiff([]byte("a\nb\nc\nd\n"), []byte("a\nB\nc\nD\n"))
	var b strings.Builder
	for _, op := range ops {
		b.WriteByte(op.kind)
		b.Write(op.line)
	}
	if want := " a\n-b\n+B\n c\n-d\n+D\n"; b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
}

// TestRewriteLeftAlone: a message over --max-message-size is copied as
// it is, named on standard error, and the run ends with 1; the other
// messages are rewritten. Damage gives 4 and changes nothing else.
func TestRewriteLeftAlone(t *testing.T) {
	dir := t.TempDir()
	in := readFile(t, td+"rewrite/plain.input")
	golden := readFile(t, td+"rewrite/plain.golden")
	big := "From big@example.org Mon Jan  3 10:00:00 1994\nFrom: big@example.org\nMessage-ID: <big@example.org>\n\n" +
		"<URL:ftp://ftp.cs.example.edu/pub/lists/big.txt>\n" + strings.Repeat("x", 100) + "\n" + strings.Repeat("y\n", 20000) + "\n"
	name := filepath.Join(dir, "a.mbox")
	os.WriteFile(name, append([]byte(big), in...), 0o644)
	out := filepath.Join(dir, "out.mbox")
	code, _, errs := runCmd("", "rewrite", "--rules", rewriteRules, "--progress", "never", "--max-message-size", "16KiB", "-o", out, name)
	if code != exitFail || !strings.Contains(errs, "a.mbox#0 <big@example.org>") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if got := readFile(t, out); string(got) != big+string(golden) {
		t.Fatalf("output:\n%s", testutil.LineDiff(big+string(golden), string(got)))
	}

	trunc := readFile(t, td+"mail/truncated.mbox")
	code, stdout, errs := runCmd("", "rewrite", "--rules", rewriteRules, "--progress", "never", td+"mail/truncated.mbox")
	if code != exitOK || !strings.Contains(errs, "truncated") {
		t.Fatalf("damage: exit %d, stderr %q", code, errs)
	}
	if len(stdout) < len(trunc)-100 || !strings.HasSuffix(stdout, string(trunc[len(trunc)-50:])) {
		t.Fatalf("damage: output not whole:\n%s", stdout)
	}
}

// TestRewriteIdempotentCorpus: on a generated archive (internal/corpus)
// with the example rules, rewriting the output again changes nothing,
// and the command's output has as many messages as the input.
func TestRewriteIdempotentCorpus(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "corpus.mbox")
	var b bytes.Buffer
	if err := corpus.Write(&b, 2<<20, 7); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(in, b.Bytes(), 0o644)
	once, twice := filepath.Join(dir, "once"), filepath.Join(dir, "twice")
	for _, r := range [][2]string{{in, once}, {once, twice}} {
		code, _, errs := runCmd("", "rewrite", "--rules", rewriteRules, "--progress", "never", "--jobs", "2", "-o", r[1], r[0])
		if code != exitOK && code != exitDamage {
			t.Fatalf("%s: exit %d: %s", r[0], code, errs)
		}
	}
	a, c := readFile(t, once), readFile(t, twice)
	if bytes.Equal(a, b.Bytes()) {
		t.Fatal("the rules changed nothing in the corpus")
	}
	if !bytes.Equal(a, c) {
		t.Fatalf("not idempotent:\n%s", testutil.LineDiff(string(a), string(c)))
	}
	if n, m := bytes.Count(b.Bytes(), []byte("\nFrom ")), bytes.Count(a, []byte("\nFrom ")); n != m {
		t.Fatalf("%d From lines in the input, %d in the output", n, m)
	}
}

// TestRewriteDirNoOp: without rules, -o mirrors every message file of
// the Maildir and MH folders of testdata byte for byte, and --in-place
// touches none of them; standard input to -o FILE works too.
func TestRewriteDirNoOp(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.toml")
	os.WriteFile(empty, []byte("version = 1\n"), 0o644)
	for _, dir := range []string{td + "maildir", td + "mh", td + "refs/maildir"} {
		out := filepath.Join(t.TempDir(), "out")
		code, _, errs := runCmd("", "rewrite", "--rules", empty, "--progress", "never", "-o", out, dir)
		if code != exitOK && code != exitDamage {
			t.Fatalf("%s: exit %d: %s", dir, code, errs)
		}
		n := 0
		filepath.Walk(filepath.Join(out, filepath.Base(dir)), func(p string, fi os.FileInfo, err error) error {
			if err != nil || !fi.Mode().IsRegular() {
				return err
			}
			rel, _ := filepath.Rel(filepath.Join(out, filepath.Base(dir)), p)
			if !bytes.Equal(readFile(t, p), readFile(t, filepath.Join(dir, rel))) {
				t.Errorf("%s: %s differs", dir, rel)
			}
			n++
			return nil
		})
		if n == 0 {
			t.Errorf("%s: nothing written", dir)
		}
	}
	// in place: nothing changes, no file is replaced
	md := filepath.Join(t.TempDir(), "maildir")
	if err := os.CopyFS(md, os.DirFS(td+"maildir")); err != nil {
		t.Fatal(err)
	}
	stats := map[string]os.FileInfo{}
	filepath.Walk(md, func(p string, fi os.FileInfo, err error) error {
		stats[p] = fi
		return err
	})
	code, _, errs := runCmd("", "rewrite", "--rules", empty, "--progress", "never", "--in-place", md)
	if code != exitOK && code != exitDamage {
		t.Fatalf("in place: exit %d: %s", code, errs)
	}
	after := 0
	filepath.Walk(md, func(p string, fi os.FileInfo, err error) error {
		after++
		if old, ok := stats[p]; !ok || !os.SameFile(old, fi) || old.ModTime() != fi.ModTime() {
			t.Errorf("in place: %s changed", p)
		}
		return err
	})
	if after != len(stats) {
		t.Errorf("in place: %d entries, were %d", after, len(stats))
	}
	// standard input to a file
	out := filepath.Join(t.TempDir(), "stdin.mbox")
	code, _, errs = runCmd(string(readFile(t, td+"rewrite/plain.input")), "rewrite", "--rules", rewriteRules, "--progress", "never", "-o", out, "-")
	if code != exitOK || !bytes.Equal(readFile(t, out), readFile(t, td+"rewrite/plain.golden")) {
		t.Fatalf("stdin to -o: exit %d (%s)", code, errs)
	}
}

// FuzzLineDiff: the diff's kept and removed lines give the old text back,
// its kept and added lines the new one.
func FuzzLineDiff(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte("a\nB\nc\n"))
	f.Add([]byte("a\nb"), []byte("a\nb\nc\nd"))
	f.Add([]byte(""), []byte("x\r\n"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var oa, ob []byte
		for _, op := range lineDiff(a, b) {
			if op.kind != '+' {
				oa = append(oa, op.line...)
			}
			if op.kind != '-' {
				ob = append(ob, op.line...)
			}
		}
		if !bytes.Equal(oa, a) || !bytes.Equal(ob, b) {
			t.Fatalf("diff of %q and %q gives back %q and %q", a, b, oa, ob)
		}
	})
}

// TestRewriteFileChanged: a file changed between its reading and its
// writing: the message whose bytes differ goes out as the file now has
// it, named on standard error (exit 1); the others are rewritten.
func TestRewriteFileChanged(t *testing.T) {
	defer func() { testBeforeCopy = nil }()
	dir := t.TempDir()
	in := readFile(t, td+"rewrite/plain.input")
	golden := string(readFile(t, td+"rewrite/plain.golden"))
	name := filepath.Join(dir, "a.mbox")
	os.WriteFile(name, in, 0o644)
	changed := bytes.Replace(in, []byte("Subject: links in plain text"), []byte("Subject: LINKS IN PLAIN TEXT"), 1)
	testBeforeCopy = func(string) { os.WriteFile(name, changed, 0o644) }
	out := filepath.Join(dir, "out.mbox")
	code, _, errs := runCmd("", "rewrite", "--rules", rewriteRules, "--progress", "never", "-o", out, name)
	if code != exitFail || !strings.Contains(errs, "a.mbox#0 <plain-1@example.org>: the file's bytes differ") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	second := strings.Index(golden, "From bob@")
	want := string(changed[:bytes.Index(changed, []byte("From bob@"))]) + golden[second:]
	if got := string(readFile(t, out)); got != want {
		t.Fatalf("output:\n%s", testutil.LineDiff(want, got))
	}
}

// TestRewriteProgress: with the progress bar drawn, the output is the
// same and the last lines on standard error are the counts.
func TestRewriteProgress(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.mbox")
	code, _, errs := runCmd("", "rewrite", "--rules", rewriteRules, "--progress", "always", "-o", out, td+"rewrite/plain.input")
	if code != exitOK || !strings.HasSuffix(errs, "linkscan rewrite: changed 2 messages (10 links)\nlinkscan rewrite: skipped 1 link: 1 in wrappers that cannot be decoded offline\n") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if !bytes.Equal(readFile(t, out), readFile(t, td+"rewrite/plain.golden")) {
		t.Fatal("output differs from the golden one")
	}
}

// TestRewriteMaildirKillHelper is the process TestRewriteMaildirKill kills.
func TestRewriteMaildirKillHelper(t *testing.T) {
	mark := os.Getenv("LINKSCAN_REWRITE_MD_MARK")
	if mark == "" {
		t.Skip("run by TestRewriteMaildirKill")
	}
	testBetweenNames = func() {
		os.WriteFile(mark, nil, 0o644)
		select {}
	}
	os.Exit(run([]string{"rewrite", "--rules", rewriteRules, "--progress", "never", "--in-place", os.Getenv("LINKSCAN_REWRITE_MD")}, nil, io.Discard, os.Stderr))
}

// TestRewriteMaildirKill kills the command between a Maildir message's new
// name (,S= and ,W= corrected) and the removal of its old one: both are there,
// the message is not lost, and a second run leaves the new one only.
func TestRewriteMaildirKill(t *testing.T) {
	if testing.Short() {
		t.Skip("re-runs the test binary")
	}
	md := filepath.Join(t.TempDir(), "Mail")
	for _, sub := range []string{"cur", "new", "tmp"} {
		os.MkdirAll(filepath.Join(md, sub), 0o755)
	}
	msg := "From: a@example.org\nMessage-ID: <k@example.org>\n\nSee <ftp://ftp.cs.example.edu/pub/lists/k.txt>.\n"
	want := strings.Replace(msg, "ftp://ftp.cs.example.edu/pub/lists/", "https://archive.example.org/lists/", 1)
	oldName := filepath.Join(md, "cur", fmt.Sprintf("7.1.h,S=%d,W=%d:2,S", len(msg), virtualSize([]byte(msg))))
	newName := filepath.Join(md, "cur", fmt.Sprintf("7.1.h,S=%d,W=%d:2,S", len(want), virtualSize([]byte(want))))
	os.WriteFile(oldName, []byte(msg), 0o644)
	mark := filepath.Join(t.TempDir(), "mark")
	cmd := exec.Command(os.Args[0], "-test.run=^TestRewriteMaildirKillHelper$")
	cmd.Env = append(os.Environ(), "LINKSCAN_REWRITE_MD_MARK="+mark, "LINKSCAN_REWRITE_MD="+md)
	kill := testutil.RunUntilStall(t, cmd, mark, "between the names")
	if kill == nil {
		t.Fatal("the child ended before the window")
	}
	kill()
	if b := readFile(t, oldName); string(b) != msg {
		t.Fatalf("old name: %q", b)
	}
	if b := readFile(t, newName); string(b) != want {
		t.Fatalf("new name: %q", b)
	}
	code, _, errs := runCmd("", "rewrite", "--rules", rewriteRules, "--progress", "never", "--in-place", md)
	if code != exitOK {
		t.Fatalf("second run: exit %d: %s", code, errs)
	}
	ents, _ := os.ReadDir(filepath.Join(md, "cur"))
	if len(ents) != 1 || ents[0].Name() != filepath.Base(newName) || string(readFile(t, newName)) != want {
		t.Fatalf("after the second run: %v", ents)
	}
}

// FuzzRewriteCommand runs the command on any bytes as an mbox: without
// rules the output is the input byte for byte; with the example rules,
// rewriting the output again changes nothing.
// Each input runs the command three times: minimizing a new input takes
// long and shows as 0 execs/sec; use -fuzzminimizetime=10x.
func FuzzRewriteCommand(f *testing.F) {
	ins, _ := filepath.Glob(td + "rewrite/*.input")
	for _, in := range ins {
		b, err := os.ReadFile(in)
		if err == nil && len(b) < 8<<10 {
			f.Add(b)
		}
	}
	f.Add([]byte("From a\n\nhttp://www.example.com/x\nFrom b Mon Jan  3 10:00:00 1994\n\n<URL:ftp://ftp.cs.example.edu/pub/lists/\n y>\n"))
	dir := f.TempDir()
	empty := filepath.Join(dir, "empty.toml")
	os.WriteFile(empty, []byte("version = 1\n"), 0o644)
	f.Fuzz(func(t *testing.T, data []byte) {
		in := filepath.Join(dir, "in.mbox")
		os.WriteFile(in, data, 0o644)
		rw := func(rules, from string) []byte {
			out := filepath.Join(dir, "out")
			code, _, errs := runCmd("", "rewrite", "--rules", rules, "--progress", "never", "--as", "mbox", "--quiet", "-o", out, from)
			if code == exitUsage {
				t.Fatalf("exit 2: %s", errs)
			}
			b := readFile(t, out)
			os.Remove(out)
			return b
		}
		if got := rw(empty, in); !bytes.Equal(got, data) {
			t.Fatalf("no rules changed the input:\n%q\n%q", data, got)
		}
		once := rw(rewriteRules, in)
		os.WriteFile(in, once, 0o644)
		if twice := rw(rewriteRules, in); !bytes.Equal(twice, once) {
			t.Fatalf("not idempotent:\n%s", testutil.LineDiff(string(once), string(twice)))
		}
	})
}

// TestRewriteCutLink: a bare link longer than extract's length limit is
// cut by extract; the command leaves it as it is (it would otherwise
// write "<URL:" + the first 8,192 characters + ">" and leave the rest of
// the link behind), says why in --report, and still writes the link
// after it.
func TestRewriteCutLink(t *testing.T) {
	long := "http://127.0.0.1:18081/ok?q=" + strings.Repeat("a", 200000)
	msg := "From: a@b\n\n" + long + " http://x.example/ok2\n"
	report := filepath.Join(t.TempDir(), "report.jsonl")
	code, out, errs := runCmd(msg, "rewrite", "--rules", rewriteRules, "--progress", "never", "--report", report, "-")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	keep := "From: a@b\n\n" + long + " "
	if !strings.HasPrefix(out, keep) {
		t.Fatalf("the cut link was rewritten (output of %d bytes differs from the input before the second link)", len(out))
	}
	if got := strings.ReplaceAll(out[len(keep):], "\n  ", ""); got != "<URL:http://x.example/ok2>\n" {
		t.Fatalf("second link written as %q", got)
	}
	rep := string(readFile(t, report))
	if !strings.Contains(rep, `"status":"skipped","reason":"link cut at the length limit"}`) || strings.Count(rep, "\n") != 2 {
		t.Fatalf("report does not give the cut link as skipped:\n%.300s", rep)
	}
}

// TestRewriteBackupMaildir: --backup is refused, before anything is
// written, for a Maildir, a message file in its cur/, a folder holding
// a Maildir and a Maildir's cur/ itself (a FILE+SUFFIX in cur/ or new/ is
// one more message to every Maildir reader); an MH folder gets its
// backups (FILE+SUFFIX is not a number, so not a message there).
func TestRewriteBackupMaildir(t *testing.T) {
	msg := "From: a@example.org\nSubject: x\n\nsee http://www.example.com/x?utm_source=1&id=2\n"
	dir := t.TempDir()
	md := filepath.Join(dir, "tree", "Mail")
	for _, sub := range []string{"cur", "new", "tmp"} {
		os.MkdirAll(filepath.Join(md, sub), 0o755)
	}
	name := filepath.Join(md, "cur", "1700000000.1.host:2,S")
	if err := os.WriteFile(name, []byte(msg), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{md, name, filepath.Join(dir, "tree"), filepath.Join(md, "cur")} {
		code, _, errs := runCmd("", "rewrite", "--rules", rewriteRules, "--progress", "never", "--in-place", "--backup", ".orig", in)
		if code != exitUsage || !strings.Contains(errs, "--backup cannot be used on a Maildir") || !strings.Contains(errs, "-o DIR") {
			t.Errorf("%s: exit %d, %q; want a usage error", in, code, errs)
		}
		ents, _ := os.ReadDir(filepath.Join(md, "cur"))
		if len(ents) != 1 || string(readFile(t, name)) != msg {
			t.Fatalf("%s: the Maildir was written: %d files in cur/", in, len(ents))
		}
	}
	// without --backup the Maildir is rewritten in place
	if code, _, errs := runCmd("", "rewrite", "--rules", rewriteRules, "--progress", "never", "--in-place", md); code != exitOK {
		t.Fatalf("--in-place without --backup: exit %d: %s", code, errs)
	}
	// MH: the backup is kept beside the message
	mh := filepath.Join(dir, "mh")
	os.MkdirAll(mh, 0o755)
	for _, n := range []string{"1", "2"} {
		os.WriteFile(filepath.Join(mh, n), []byte(msg), 0o644)
	}
	if code, _, errs := runCmd("", "rewrite", "--rules", rewriteRules, "--progress", "never", "--in-place", "--backup", ".orig", mh); code != exitOK {
		t.Fatalf("MH: exit %d: %s", code, errs)
	}
	if string(readFile(t, filepath.Join(mh, "1.orig"))) != msg || string(readFile(t, filepath.Join(mh, "1"))) == msg {
		t.Fatal("MH: no backup, or the message was not rewritten")
	}
}

// TestRewriteCompressedInDir: a compressed mbox in a directory cannot be
// rewritten. With -o DIR it is copied into the mirror byte for byte and
// said in one line (not one per message); its messages are not counted
// as changed. With --in-place it is left as it is, said once too.
func TestRewriteCompressedInDir(t *testing.T) {
	var mbox strings.Builder
	for i := range 3 {
		fmt.Fprintf(&mbox, "From a@b Mon Jan  1 00:00:00 2001\nFrom: a@b\nSubject: %d\n\nhttp://www.example.com/x?utm_source=1&id=%d\n\n", i, i)
	}
	for _, mode := range []string{"-o", "--in-place"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "gzd")
			os.Mkdir(in, 0o755)
			var gz bytes.Buffer
			zw := gzip.NewWriter(&gz)
			zw.Write([]byte(mbox.String()))
			zw.Close()
			os.WriteFile(filepath.Join(in, "a.mbox.gz"), gz.Bytes(), 0o644)
			os.WriteFile(filepath.Join(in, "b.mbox"), []byte(mbox.String()), 0o644)
			report := filepath.Join(dir, "report.jsonl")
			args := []string{"rewrite", "--rules", rewriteRules, "--progress", "never", "--report", report}
			out := filepath.Join(dir, "out")
			if mode == "-o" {
				args = append(args, "-o", out)
			} else {
				args = append(args, "--in-place")
				out = dir
			}
			code, _, errs := runCmd("", append(args, in)...)
			if code != exitFail {
				t.Fatalf("exit %d, want %d: %s", code, exitFail, errs)
			}
			if n := strings.Count(errs, "a.mbox.gz"); n != 1 || strings.Contains(errs, "could not be written") {
				t.Errorf("a.mbox.gz named %d times, want once:\n%s", n, errs)
			}
			if !strings.Contains(errs, "changed 3 messages (3 links)") || !strings.Contains(errs, "3 messages left as they were") {
				t.Errorf("want only b.mbox's 3 messages counted as changed:\n%s", errs)
			}
			if got := readFile(t, filepath.Join(out, "gzd", "a.mbox.gz")); !bytes.Equal(got, gz.Bytes()) {
				t.Errorf("a.mbox.gz in %s is not the file byte for byte (%d bytes, want %d)", out, len(got), gz.Len())
			}
			if got := string(readFile(t, filepath.Join(out, "gzd", "b.mbox"))); !strings.Contains(got, "<URL:http://example.com/x?id=2>") {
				t.Errorf("b.mbox not rewritten:\n%s", got)
			}
			rep := string(readFile(t, report))
			if strings.Count(rep, `"status":"written"`) != 3 || strings.Count(rep, `"status":"not-written"`) != 3 {
				t.Errorf("report: want 3 written (b.mbox) and 3 not written (a.mbox.gz):\n%s", rep)
			}
		})
	}
}

// TestFollowHeap: the limit followHeap sets rises over a live heap that
// passes the floor (to half again as much), and nothing is set after
// stop returns.
func TestFollowHeap(t *testing.T) {
	var mu sync.Mutex
	var last int64
	calls := 0
	stopped := false
	set := func(n int64) {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			t.Error("limit set after stop")
		}
		last = n
		calls++
	}
	const floor = 8 << 20
	stop := followHeap(set, floor)
	live := make([][]byte, 48)
	for i := range live {
		live[i] = make([]byte, 1<<20)
		live[i][0] = 1
	}
	runtime.GC()
	var got int64
	for range 500 { // the tick is 10 ms: up to 5 s on a loaded machine
		time.Sleep(10 * time.Millisecond)
		mu.Lock()
		got = last
		mu.Unlock()
		if got >= 48<<20+16<<20 {
			break
		}
	}
	stop()
	mu.Lock()
	stopped = true
	mu.Unlock()
	runtime.KeepAlive(live)
	if got < 48<<20+16<<20 {
		// 1.5 times the live heap is some 72 MiB; the live heap the
		// runtime reports may be a little under the 48 MiB held
		t.Fatalf("limit %d after %d calls with 48 MiB live, want at least 64 MiB", got, calls)
	}
	time.Sleep(30 * time.Millisecond) // a tick after stop would call set
}

// TestRewriteUnreadableEntries: an unreadable folder inside a directory
// input and a dangling link in a Maildir are named on standard error and
// counted as inputs not read (exit 1) by rewrite -o DIR and --dry-run,
// which go on with the rest; the file passed over is counted. (As user
// nobody when the tests run as root.)
func TestRewriteUnreadableEntries(t *testing.T) {
	if testutil.AsNobody(t) { // root reads folders whatever their mode
		return
	}
	dir := t.TempDir()
	// the rules in the test's directory: user nobody may not reach ours
	rules := filepath.Join(dir, "rules.toml")
	os.WriteFile(rules, []byte("version = 1\n[[rule]]\naction = \"map\"\nfrom = \"http://www.example.com/\"\nto = \"http://example.com/\"\n"), 0o644)
	msg := []byte("From: a@b\nSubject: s\n\nsee http://www.example.com/x?id=2\n")
	fo := filepath.Join(dir, "fo")
	os.MkdirAll(filepath.Join(fo, "a"), 0o755)
	os.MkdirAll(filepath.Join(fo, "b"), 0o755)
	os.WriteFile(filepath.Join(fo, "a", "y.eml"), msg, 0o644)
	os.WriteFile(filepath.Join(fo, "b", "x.eml"), msg, 0o644)
	os.WriteFile(filepath.Join(fo, "b", "picture.png"), []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), 0o644)
	os.Chmod(filepath.Join(fo, "a"), 0)
	defer os.Chmod(filepath.Join(fo, "a"), 0o755)
	md := filepath.Join(dir, "md")
	for _, sub := range []string{"cur", "new", "tmp"} {
		os.MkdirAll(filepath.Join(md, sub), 0o755)
	}
	os.WriteFile(filepath.Join(md, "cur", "1:2,S"), msg, 0o644)
	os.Symlink(filepath.Join(dir, "gone"), filepath.Join(md, "cur", "2:2,S"))
	for _, mode := range [][]string{{"-o", filepath.Join(dir, "out")}, {"--dry-run"}} {
		args := append([]string{"rewrite", "--rules", rules, "--progress", "never"}, mode...)
		code, _, errs := runCmd("", append(args, fo, md)...)
		for _, name := range []string{filepath.Join(fo, "a"), filepath.Join(md, "cur", "2:2,S")} {
			if !strings.Contains(errs, name) {
				t.Errorf("%s: %s not named on standard error: %q", mode[0], name, errs)
			}
		}
		if code != exitFail || !strings.Contains(errs, "2 inputs could not be read") {
			t.Errorf("%s: exit %d, want %d and the count of inputs not read; stderr %q", mode[0], code, exitFail, errs)
		}
		if !strings.Contains(errs, "1 file in directories skipped") {
			t.Errorf("%s: the file passed over not counted: %q", mode[0], errs)
		}
	}
	if got := string(readFile(t, filepath.Join(dir, "out", "fo", "b", "x.eml"))); !strings.Contains(got, "see http://example.com/x?id=2\n") {
		t.Errorf("the readable message not rewritten into the mirror:\n%s", got)
	}
}

// TestRewriteBackupNotOurs: --backup never removes or replaces a file
// that is there already (FILE+SUFFIX another input, or another message
// of an MH folder): refused before anything is written
// for a file input, the file left as it was (and said so truly) for a
// file inside a directory input; a suffix of digits is refused.
func TestRewriteBackupNotOurs(t *testing.T) {
	in := readFile(t, td+"rewrite/plain.input")
	other := bytes.ReplaceAll(in, []byte("Subject:"), []byte("Subject: other"))
	dir := t.TempDir()
	a, abak := filepath.Join(dir, "a"), filepath.Join(dir, "a.bak")
	os.WriteFile(a, in, 0o644)
	os.WriteFile(abak, other, 0o644)
	code, _, errs := runCmd("", "rewrite", "--rules", rewriteRules, "--progress", "never", "--in-place", "--backup", ".bak", a, abak)
	if code != exitUsage || !strings.Contains(errs, "exists already") {
		t.Errorf("a a.bak: exit %d: %s", code, errs)
	}
	if !bytes.Equal(readFile(t, a), in) || !bytes.Equal(readFile(t, abak), other) {
		t.Error("a a.bak: an input changed")
	}
	// MH: --backup 1 would make f/11 the backup of f/1
	mh := filepath.Join(t.TempDir(), "f")
	os.Mkdir(mh, 0o755)
	os.WriteFile(filepath.Join(mh, "1"), in, 0o644)
	os.WriteFile(filepath.Join(mh, "11"), other, 0o644)
	code, _, errs = runCmd("", "rewrite", "--rules", rewriteRules, "--progress", "never", "--in-place", "--backup", "1", mh)
	if code != exitUsage || !strings.Contains(errs, "digits only") {
		t.Errorf("MH --backup 1: exit %d: %s", code, errs)
	}
	if !bytes.Equal(readFile(t, filepath.Join(mh, "1")), in) || !bytes.Equal(readFile(t, filepath.Join(mh, "11")), other) {
		t.Error("MH --backup 1: a message changed")
	}
	// inside a directory input: x.bak is another input file; x is left
	// as it was, x.bak rewritten (its own backup x.bak.bak)
	d := filepath.Join(t.TempDir(), "d")
	os.Mkdir(d, 0o755)
	x, xbak := filepath.Join(d, "x"), filepath.Join(d, "x.bak")
	os.WriteFile(x, in, 0o644)
	os.WriteFile(xbak, other, 0o644)
	code, _, errs = runCmd("", "rewrite", "--rules", rewriteRules, "--progress", "never", "--in-place", "--backup", ".bak", d)
	if code != exitFail || !strings.Contains(errs, "exists already") || !strings.Contains(errs, "left as it was") {
		t.Errorf("directory: exit %d: %s", code, errs)
	}
	if !bytes.Equal(readFile(t, x), in) {
		t.Error("directory: x was changed although its backup could not be made")
	}
	if !bytes.Equal(readFile(t, xbak+".bak"), other) || bytes.Equal(readFile(t, xbak), other) {
		t.Error("directory: x.bak not rewritten with its backup")
	}
}

// TestRewriteMirrorLinks: -o DIR never writes through a symbolic link
// in the output directory: a link at a mirrored file, a
// link at a mirrored directory, and the output directory a link to an
// input; the inputs stay as they were.
func TestRewriteMirrorLinks(t *testing.T) {
	in := readFile(t, td+"rewrite/plain.input")
	other := bytes.ReplaceAll(in, []byte("Subject:"), []byte("Subject: other"))
	setup := func() (top, d, a, b string) {
		top = t.TempDir()
		d = filepath.Join(top, "d")
		os.Mkdir(d, 0o755)
		a, b = filepath.Join(d, "a"), filepath.Join(d, "b")
		os.WriteFile(a, in, 0o644)
		os.WriteFile(b, other, 0o644)
		return
	}
	same := func(what, a, b string) {
		t.Helper()
		if !bytes.Equal(readFile(t, a), in) || !bytes.Equal(readFile(t, b), other) {
			t.Errorf("%s: an input was written", what)
		}
	}
	// out/d/a -> d/b
	top, d, a, b := setup()
	out := filepath.Join(top, "out")
	os.MkdirAll(filepath.Join(out, "d"), 0o755)
	os.Symlink(b, filepath.Join(out, "d", "a"))
	code, _, errs := runCmd("", "rewrite", "--rules", rewriteRules, "--progress", "never", "-o", out, d)
	if code == exitOK || !strings.Contains(errs, "symbolic link") {
		t.Errorf("file link: exit %d: %s", code, errs)
	}
	same("file link", a, b)
	// out/d -> ../d
	top, d, a, b = setup()
	out = filepath.Join(top, "out")
	os.Mkdir(out, 0o755)
	os.Symlink("../d", filepath.Join(out, "d"))
	code, _, errs = runCmd("", "rewrite", "--rules", rewriteRules, "--progress", "never", "-o", out, d)
	if code == exitOK {
		t.Errorf("directory link: exit %d: %s", code, errs)
	}
	same("directory link", a, b)
	// out -> d, inputs d and e
	top, d, a, b = setup()
	e := filepath.Join(top, "e")
	os.Mkdir(e, 0o755)
	os.Symlink(d, filepath.Join(top, "out"))
	code, _, errs = runCmd("", "rewrite", "--rules", rewriteRules, "--progress", "never", "-o", filepath.Join(top, "out"), d, e)
	if code != exitUsage {
		t.Errorf("output a link to an input: exit %d: %s", code, errs)
	}
	same("output a link to an input", a, b)
	if ents, _ := os.ReadDir(d); len(ents) != 2 {
		t.Errorf("output a link to an input: written inside it: %v", ents)
	}
}

// TestRewriteOutputModes: -o copies are never less private than the
// inputs: a 0600 file stays 0600, a 0700 directory's
// mirror 0700, standard input's copy 0600.
func TestRewriteOutputModes(t *testing.T) {
	in := readFile(t, td+"rewrite/plain.input")
	top := t.TempDir()
	priv := filepath.Join(top, "priv")
	os.WriteFile(priv, in, 0o600)
	pd := filepath.Join(top, "pd")
	os.Mkdir(pd, 0o700)
	os.Mkdir(filepath.Join(pd, "sub"), 0o750)
	os.WriteFile(filepath.Join(pd, "m1"), in, 0o600)
	os.WriteFile(filepath.Join(pd, "sub", "m2"), in, 0o640)
	mode := func(p string) os.FileMode {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	o1 := filepath.Join(top, "o1")
	if code, _, errs := runCmd("", "rewrite", "--rules", rewriteRules, "--progress", "never", "-o", o1, priv); code != exitOK {
		t.Fatalf("file: exit %d: %s", code, errs)
	}
	if m := mode(o1); m != 0o600 {
		t.Errorf("file: %v", m)
	}
	o2 := filepath.Join(top, "o2")
	if code, _, errs := runCmd("", "rewrite", "--rules", rewriteRules, "--progress", "never", "-o", o2, pd); code != exitOK {
		t.Fatalf("directory: exit %d: %s", code, errs)
	}
	for p, want := range map[string]os.FileMode{"pd": 0o700, "pd/m1": 0o600, "pd/sub": 0o750, "pd/sub/m2": 0o640 &^ umaskOf(t)} {
		if m := mode(filepath.Join(o2, p)); m != want {
			t.Errorf("directory: %s is %v, want %v", p, m, want)
		}
	}
	o3 := filepath.Join(top, "o3")
	if code, _, errs := runCmd(string(in), "rewrite", "--rules", rewriteRules, "--progress", "never", "-o", o3, "-"); code != exitOK {
		t.Fatalf("stdin: exit %d: %s", code, errs)
	}
	if m := mode(o3); m&0o077 != 0 {
		t.Errorf("stdin: %v", m)
	}
}

// umaskOf is the process's umask, seen through a file it makes.
func umaskOf(t *testing.T) os.FileMode {
	p := filepath.Join(t.TempDir(), "u")
	os.WriteFile(p, nil, 0o666)
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return 0o666 &^ fi.Mode().Perm()
}

// TestRewriteReportClash: --report may not be the -o file nor lie in the
// -o DIR, and -o may not be the rules file: exit 2 before
// anything is written.
func TestRewriteReportClash(t *testing.T) {
	in := readFile(t, td+"rewrite/plain.input")
	top := t.TempDir()
	a, b := filepath.Join(top, "a"), filepath.Join(top, "b")
	os.WriteFile(a, in, 0o644)
	os.WriteFile(b, in, 0o644)
	rules := filepath.Join(top, "rules.toml")
	os.WriteFile(rules, readFile(t, rewriteRules), 0o644)
	od := filepath.Join(top, "od")
	for _, args := range [][]string{
		{"-o", filepath.Join(top, "same.out"), "--report", filepath.Join(top, "same.out"), a},
		{"-o", filepath.Join(top, "same.out"), "--report", filepath.Join(top, ".", "same.out"), a},
		{"-o", od, "--report", filepath.Join(od, "a"), a, b},
		{"-o", od, "--report", filepath.Join(od, "x.json"), a, b},
		{"-o", rules, a},
		{"--report", rules, a},
	} {
		full := append([]string{"rewrite", "--rules", rules, "--progress", "never"}, args...)
		code, _, errs := runCmd("", full...)
		if code != exitUsage {
			t.Errorf("%q: exit %d: %s", args, code, errs)
		}
	}
	if !bytes.Equal(readFile(t, rules), readFile(t, rewriteRules)) {
		t.Error("the rules file was written")
	}
	for _, p := range []string{filepath.Join(top, "same.out"), od} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s written", p)
		}
	}
}

// TestRewriteMaildirTmp: a Maildir's tmp/ given as an input (a glob
// Maildir/* gives it), or a file in it, is refused in every write mode
// (the MDA may still be writing there); an empty cur/ or new/ is
// read, not "could not be read".
func TestRewriteMaildirTmp(t *testing.T) {
	m := filepath.Join(t.TempDir(), "M")
	for _, s := range []string{"cur", "new", "tmp"} {
		os.MkdirAll(filepath.Join(m, s), 0o700)
	}
	const msg = "From: a@b\nMessage-ID: <1@x>\n\nSee http://old.example/one\n"
	cur, tmp := filepath.Join(m, "cur", "1.2.h:2,"), filepath.Join(m, "tmp", "2.2.h")
	os.WriteFile(cur, []byte(msg), 0o600)
	os.WriteFile(tmp, []byte(msg), 0o600)
	rules := filepath.Join(t.TempDir(), "rules.toml")
	os.WriteFile(rules, []byte("version = 1\n[[rule]]\nname = \"mv\"\naction = \"map\"\nfrom = \"http://old.example/\"\nto = \"https://new.example/\"\n"), 0o644)
	for _, args := range [][]string{
		{"--in-place", filepath.Join(m, "cur"), filepath.Join(m, "new"), filepath.Join(m, "tmp")},
		{"--in-place", tmp},
		{"-o", filepath.Join(t.TempDir(), "out"), filepath.Join(m, "tmp")},
	} {
		code, _, errs := runCmd("", append([]string{"rewrite", "--rules", rules, "--progress", "never"}, args...)...)
		if code != exitUsage || !strings.Contains(errs, "tmp/") {
			t.Errorf("%q: exit %d: %s", args, code, errs)
		}
		if string(readFile(t, tmp)) != msg || string(readFile(t, cur)) != msg {
			t.Fatalf("%q: a message was written", args)
		}
	}
	code, _, errs := runCmd("", "rewrite", "--rules", rules, "--progress", "never", "--in-place", filepath.Join(m, "cur"), filepath.Join(m, "new"))
	if code != exitOK || strings.Contains(errs, "could not be read") {
		t.Errorf("cur new: exit %d: %s", code, errs)
	}
	if string(readFile(t, tmp)) != msg || string(readFile(t, cur)) == msg {
		t.Error("cur new: cur/ not rewritten, or tmp/ written")
	}
}

// TestRewriteMaildirFileSized: a Maildir message given by name gets the
// new size in its ,S= name as through a directory input.
func TestRewriteMaildirFileSized(t *testing.T) {
	m := filepath.Join(t.TempDir(), "M")
	for _, s := range []string{"cur", "new", "tmp"} {
		os.MkdirAll(filepath.Join(m, s), 0o700)
	}
	const msg = "From: a@b\nMessage-ID: <1@x>\n\nSee http://old.example/one\n"
	name := filepath.Join(m, "cur", fmt.Sprintf("123.4.host,S=%d:2,S", len(msg)))
	os.WriteFile(name, []byte(msg), 0o600)
	rules := filepath.Join(t.TempDir(), "rules.toml")
	os.WriteFile(rules, []byte("version = 1\n[[rule]]\nname = \"mv\"\naction = \"map\"\nfrom = \"http://old.example/\"\nto = \"https://new.example/\"\n"), 0o644)
	code, _, errs := runCmd("", "rewrite", "--rules", rules, "--progress", "never", "--in-place", name)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	ents, _ := os.ReadDir(filepath.Join(m, "cur"))
	if len(ents) != 1 {
		t.Fatalf("cur/: %v", ents)
	}
	b := readFile(t, filepath.Join(m, "cur", ents[0].Name()))
	if want := fmt.Sprintf("123.4.host,S=%d:2,S", len(b)); ents[0].Name() != want || string(b) == msg {
		t.Errorf("name %s, want %s (%q)", ents[0].Name(), want, b)
	}
}

// TestRewriteNotRegular: a FIFO (or a device) input is refused in every
// write mode before it is opened (a second open of a FIFO would block
// for ever); --dry-run reads it; "-" is spooled.
func TestRewriteNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "p")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	for _, args := range [][]string{
		{"-o", filepath.Join(dir, "out"), fifo},
		{fifo},
		{"--in-place", fifo},
		{"-o", filepath.Join(dir, "out"), "/dev/zero"},
	} {
		// refused before the FIFO is opened: an open would block
		code, _, errs := runCmd("", append([]string{"rewrite", "--rules", rewriteRules, "--progress", "never"}, args...)...)
		if code != exitUsage || !strings.Contains(errs, "standard input") {
			t.Errorf("%q: exit %d: %s", args, code, errs)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "out")); err == nil {
		t.Error("an output was made")
	}
}

// TestRewriteBackupMaildirLink: --backup on a symbolic link to a Maildir
// message is refused as for the message itself.
func TestRewriteBackupMaildirLink(t *testing.T) {
	m := filepath.Join(t.TempDir(), "M")
	for _, s := range []string{"cur", "new", "tmp"} {
		os.MkdirAll(filepath.Join(m, s), 0o700)
	}
	const msg = "From: a@b\nMessage-ID: <1@x>\n\nSee http://old.example/one\n"
	name := filepath.Join(m, "cur", "5.5.host:2,S")
	os.WriteFile(name, []byte(msg), 0o600)
	link := filepath.Join(t.TempDir(), "lnk")
	os.Symlink(name, link)
	code, _, errs := runCmd("", "rewrite", "--rules", rewriteRules, "--progress", "never", "--in-place", "--backup", ".bak", link)
	if code != exitUsage || !strings.Contains(errs, "Maildir") {
		t.Errorf("exit %d: %s", code, errs)
	}
	if ents, _ := os.ReadDir(filepath.Join(m, "cur")); len(ents) != 1 || string(readFile(t, name)) != msg {
		t.Errorf("cur/ written: %v", ents)
	}
}

// TestRewriteReportFails: a --report that cannot be written is exit 1
// and not called an input that could not be read.
func TestRewriteReportFails(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	code, _, errs := runCmd("", "rewrite", "--rules", rewriteRules, "--progress", "never", "--report", "/dev/full", td+"rewrite/plain.input")
	if code != exitFail || !strings.Contains(errs, "/dev/full") || strings.Contains(errs, "could not be read") {
		t.Errorf("exit %d: %s", code, errs)
	}
}

// TestRewriteEmlx: an Apple Mail .emlx file counts its message's bytes on
// its first line, which a rewrite of another length would leave wrong, so
// it is read but not rewritten: refused as an input of its own (but for
// --dry-run), copied as it is into a -o DIR mirror and left as it is in
// place, said once, as a compressed file is.
func TestRewriteEmlx(t *testing.T) {
	msg := "From: a@b\nSubject: x\n\nhttp://www.example.com/x?utm_source=1&id=1\n"
	file := fmt.Sprintf("%d\n%s<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\"><dict/></plist>\n", len(msg), msg)
	dir := t.TempDir()
	in := filepath.Join(dir, "mail")
	os.Mkdir(in, 0o755)
	p := filepath.Join(in, "1.emlx")
	os.WriteFile(p, []byte(file), 0o644)

	code, _, errs := runCmd("", "rewrite", "--rules", rewriteRules, "--progress", "never", "-o", filepath.Join(dir, "one.emlx"), p)
	if code != exitUsage || !strings.Contains(errs, ".emlx input can only be read with --dry-run") {
		t.Errorf("-o FILE of an .emlx: exit %d, want %d and the reason:\n%s", code, exitUsage, errs)
	}
	code, out, errs := runCmd("", "rewrite", "--rules", rewriteRules, "--progress", "never", "--dry-run", p)
	if code != 0 || !strings.Contains(out, "+<URL:http://example.com/x?id=1>") {
		t.Errorf("--dry-run of an .emlx: exit %d, want 0 and the change in the diff:\n%s\n%s", code, out, errs)
	}
	for _, mode := range []string{"-o", "--in-place"} {
		args := []string{"rewrite", "--rules", rewriteRules, "--progress", "never"}
		mirror := filepath.Join(dir, "out"+mode)
		if mode == "-o" {
			args = append(args, "-o", mirror)
		} else {
			args = append(args, "--in-place")
		}
		code, _, errs := runCmd("", append(args, in)...)
		if code != exitFail || strings.Count(errs, "1.emlx") != 1 {
			t.Errorf("%s DIR: exit %d, want %d and the file named once:\n%s", mode, code, exitFail, errs)
		}
		if got := string(readFile(t, p)); got != file {
			t.Errorf("%s: the input changed:\n%s", mode, got)
		}
		if mode == "-o" {
			if got := string(readFile(t, filepath.Join(mirror, "mail", "1.emlx"))); got != file {
				t.Errorf("-o DIR: the mirror's copy is not the file byte for byte:\n%s", got)
			}
		}
	}
}

// TestRewriteEmptyInput: an empty input given to rewrite is named with
// why it holds no message, as scan names it (not with --quiet), and is
// no error; it is left as it was.
func TestRewriteEmptyInput(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.mbox")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rules := td + "rewrite/rules.toml"
	for _, quiet := range []bool{false, true} {
		args := []string{"rewrite", "--rules", rules, "--in-place", empty}
		if quiet {
			args = append(args, "--quiet")
		}
		code, _, errs := runCmd("", args...)
		if code != exitOK {
			t.Fatalf("quiet %v: exit %d: %s", quiet, code, errs)
		}
		said := strings.Contains(errs, empty+": empty (0 bytes): no messages")
		if said == quiet {
			t.Errorf("quiet %v: standard error %q", quiet, errs)
		}
		if fi, err := os.Stat(empty); err != nil || fi.Size() != 0 {
			t.Fatalf("quiet %v: the input changed: %v %v", quiet, fi, err)
		}
	}
}
