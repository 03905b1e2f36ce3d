package output

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// failAfter is a writer that takes n bytes, then fails.
type failAfter struct {
	w io.Writer
	n int
}

var errInjected = errors.New("injected write failure")

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		n, _ := f.w.Write(p[:f.n])
		f.n = 0
		return n, errInjected
	}
	f.n -= len(p)
	return f.w.Write(p)
}

// leftovers lists the temporary files in dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, ".*.tmp-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func writeFile(t *testing.T, name, s string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(s), 0o640); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCommitReplaces(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "out.txt")
	writeFile(t, target, "old content\n")
	o, err := Create(target)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(o, "new ")
	if got := readFile(t, target); got != "old content\n" {
		t.Errorf("target changed before Commit: %q", got)
	}
	io.WriteString(o, "content\n")
	if err := o.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, target); got != "new content\n" {
		t.Errorf("after Commit: %q", got)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the replaced file's 0640", fi.Mode().Perm())
	}
	if l := leftovers(t, dir); len(l) != 0 {
		t.Errorf("temporary files left: %q", l)
	}
	if err := o.Abort(); err != nil {
		t.Errorf("Abort after Commit: %v", err)
	}
	if got := readFile(t, target); got != "new content\n" {
		t.Errorf("Abort after Commit changed the file: %q", got)
	}
}

func TestCreateNew(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "new.txt")
	o, err := Create(target)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("target exists before Commit: %v", err)
	}
	io.WriteString(o, "x\n")
	if err := o.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, target); got != "x\n" {
		t.Errorf("%q", got)
	}
}

// TestWriteFailure: a write that fails after N bytes, for every N, leaves
// the target as it was and no temporary file, whether the caller aborts
// or (wrongly) commits.
func TestWriteFailure(t *testing.T) {
	const payload = "line one\nline two\nline three\n"
	for n := 0; n < len(payload); n += 3 {
		for _, commit := range []bool{false, true} {
			dir := t.TempDir()
			target := filepath.Join(dir, "keep.txt")
			writeFile(t, target, "precious\n")
			o, err := Create(target)
			if err != nil {
				t.Fatal(err)
			}
			o.w = &failAfter{w: o.f, n: n}
			var werr error
			for _, line := range strings.SplitAfter(payload, "\n") {
				if _, werr = io.WriteString(o, line); werr != nil {
					break
				}
			}
			if !errors.Is(werr, errInjected) {
				t.Fatalf("n=%d: write error %v", n, werr)
			}
			if _, err := io.WriteString(o, "more"); !errors.Is(err, errInjected) {
				t.Errorf("n=%d: a write after the failure gave %v", n, err)
			}
			if commit {
				if err := o.Commit(); !errors.Is(err, errInjected) {
					t.Errorf("n=%d: Commit after a failed write: %v", n, err)
				}
			} else if err := o.Abort(); err != nil {
				t.Errorf("n=%d: Abort: %v", n, err)
			}
			if got := readFile(t, target); got != "precious\n" {
				t.Errorf("n=%d commit=%v: target is %q", n, commit, got)
			}
			if l := leftovers(t, dir); len(l) != 0 {
				t.Errorf("n=%d commit=%v: temporary files left: %q", n, commit, l)
			}
		}
	}
}

func TestKeep(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "out.txt")
	writeFile(t, target, "old\n")
	o, err := Create(target)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(o, "partial\n")
	if err := o.Keep(target + ".partial"); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, target); got != "old\n" {
		t.Errorf("target changed by Keep: %q", got)
	}
	if got := readFile(t, target+".partial"); got != "partial\n" {
		t.Errorf("kept output %q", got)
	}
	if l := leftovers(t, dir); len(l) != 0 {
		t.Errorf("temporary files left: %q", l)
	}
}

func TestSymlinkTarget(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.txt")
	link := filepath.Join(dir, "link.txt")
	writeFile(t, real, "old\n")
	if err := os.Symlink("real.txt", link); err != nil {
		t.Skip("no symbolic links:", err)
	}
	o, err := Create(link)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(o, "new\n")
	if err := o.Commit(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi, err)
	}
	if got := readFile(t, real); got != "new\n" {
		t.Errorf("link target %q", got)
	}
	// a dangling link is written through
	dangling := filepath.Join(dir, "dangling.txt")
	os.Symlink("later.txt", dangling)
	o, err = Create(dangling)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(o, "later\n")
	if err := o.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "later.txt")); got != "later\n" {
		t.Errorf("dangling link target %q", got)
	}
}

func TestCheckInputs(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "x.mbox")
	writeFile(t, in, "From a\n")
	sub := filepath.Join(dir, "Maildir")
	os.MkdirAll(filepath.Join(sub, "cur"), 0o755)
	hard := filepath.Join(dir, "hard.mbox")
	sym := filepath.Join(dir, "sym.mbox")
	symdir := filepath.Join(dir, "symdir")
	haveLinks := os.Link(in, hard) == nil && os.Symlink("x.mbox", sym) == nil && os.Symlink(dir, symdir) == nil
	tests := []struct {
		out    string
		inputs []string
		bad    bool
	}{
		{in, []string{in}, true},
		{in, []string{"-", filepath.Join(dir, "other.mbox"), in}, true},
		{filepath.Join(dir, "out.txt"), []string{in}, false},
		{filepath.Join(dir, "new.txt"), []string{in, "-"}, false},
		{filepath.Join(sub, "cur", "links.txt"), []string{sub}, true},
		{filepath.Join(sub, "links.txt"), []string{sub}, true},
		{filepath.Join(dir, "links.txt"), []string{sub}, false},
		{filepath.Join(dir, "Maildir2.txt"), []string{sub}, false},
		{os.DevNull, []string{in}, false},
	}
	if haveLinks {
		tests = append(tests, []struct {
			out    string
			inputs []string
			bad    bool
		}{
			{hard, []string{in}, true},
			{sym, []string{in}, true},
			{in, []string{sym}, true},
			{filepath.Join(symdir, "Maildir", "x.txt"), []string{sub}, true},
			{filepath.Join(sub, "x.txt"), []string{filepath.Join(symdir, "Maildir")}, true},
		}...)
	}
	for _, tt := range tests {
		err := CheckInputs(tt.out, tt.inputs)
		if (err != nil) != tt.bad {
			t.Errorf("CheckInputs(%q, %q) = %v, want error %v", tt.out, tt.inputs, err, tt.bad)
		}
	}
}

// TestKilled re-runs the test binary as a child that writes half of its
// output and waits; the parent kills it (SIGKILL) and checks that the
// target still holds its old content in full.
func TestKilled(t *testing.T) {
	if os.Getenv("OUTPUT_TEST_CHILD") != "" {
		return // the child's work is done in TestMain
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "keep.txt")
	writeFile(t, target, "precious\n")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilled$")
	cmd.Env = append(os.Environ(), "OUTPUT_TEST_CHILD="+target)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe() // the child waits on it
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "written\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child said %q, %v", line, err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if got := readFile(t, target); got != "precious\n" {
		t.Errorf("target after the kill: %q", got)
	}
	l := leftovers(t, dir)
	if len(l) != 1 {
		t.Fatalf("temporary files after the kill: %q, want the one being written", l)
	}
	if got := readFile(t, l[0]); !strings.HasPrefix(got, "half of the output") {
		t.Errorf("temporary file holds %q", got)
	}
}

func TestMain(m *testing.M) {
	if target := os.Getenv("OUTPUT_TEST_CHILD"); target != "" {
		o, err := Create(target)
		if err != nil {
			os.Exit(3)
		}
		io.WriteString(o, "half of the output, cut in the mid")
		os.Stdout.WriteString("written\n")
		io.Copy(io.Discard, os.Stdin) // until killed
		os.Exit(4)
	}
	if os.Getenv("OUTPUT_TEST_WAIT") != "" {
		// a process holding its standard output open (TestOtherProcessFD);
		// it says it is ready on standard error
		os.Stderr.WriteString("ready\n")
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestInterrupt: after Interrupt the temporary file is gone, Commit and
// Keep return ErrInterrupted without touching the target, and Abort does
// nothing; an Interrupt after Commit leaves the committed file.
func TestInterrupt(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "out.txt")
	if err := os.WriteFile(target, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, finish := range []string{"commit", "keep", "abort"} {
		o, err := Create(target)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := o.Write([]byte("new, cut short\n")); err != nil {
			t.Fatal(err)
		}
		tmp := o.TempName()
		if !o.Interrupt() {
			t.Errorf("%s: Interrupt says the target was touched", finish)
		}
		if _, err := os.Stat(tmp); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: temporary file still there: %v", finish, err)
		}
		// a write after it goes to the removed file, not the target
		if _, err := o.Write([]byte("more\n")); err != nil {
			t.Errorf("%s: write after Interrupt: %v", finish, err)
		}
		switch finish {
		case "commit":
			err = o.Commit()
		case "keep":
			err = o.Keep(target + ".partial")
		case "abort":
			err = o.Abort()
		}
		if finish == "abort" && err != nil || finish != "abort" && !errors.Is(err, ErrInterrupted) {
			t.Errorf("%s after Interrupt: %v", finish, err)
		}
		if b, _ := os.ReadFile(target); string(b) != "old\n" {
			t.Errorf("%s: target now %q", finish, b)
		}
		if _, err := os.Stat(target + ".partial"); err == nil {
			t.Errorf("%s: a .partial file was made", finish)
		}
		ents, _ := os.ReadDir(dir)
		if len(ents) != 1 {
			t.Errorf("%s: directory holds %d entries, want the target alone", finish, len(ents))
		}
	}
	o, err := Create(target)
	if err != nil {
		t.Fatal(err)
	}
	o.Write([]byte("done\n"))
	if err := o.Commit(); err != nil {
		t.Fatal(err)
	}
	if o.Interrupt() {
		t.Error("Interrupt after Commit says the target was left as it was")
	}
	if b, _ := os.ReadFile(target); string(b) != "done\n" {
		t.Errorf("committed file now %q", b)
	}
}

// TestInterruptWhileCommitting: Interrupt from another goroutine while
// Commit runs leaves either the old file or the whole new one, and never
// a failed rename (run with -race).
func TestInterruptWhileCommitting(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "out.txt")
	for i := 0; i < 200; i++ {
		os.WriteFile(target, []byte("old\n"), 0o644)
		o, err := Create(target)
		if err != nil {
			t.Fatal(err)
		}
		o.Write([]byte("new\n"))
		done := make(chan bool)
		go func() { done <- o.Interrupt() }()
		cerr := o.Commit()
		untouched := <-done
		b, _ := os.ReadFile(target)
		switch {
		case cerr == nil && !untouched && string(b) == "new\n":
		case errors.Is(cerr, ErrInterrupted) && untouched && string(b) == "old\n":
		default:
			t.Fatalf("round %d: Commit %v, Interrupt untouched=%v, target %q", i, cerr, untouched, b)
		}
	}
}

// TestKeepNewNeverReplaces: KeepNew does not rename over an
// existing file (a user's, an input, a symbolic link, a dangling one,
// another run's partial output): that file, the link's file and the
// target stay as they were, and the output is in NAME-1, as KeepNew
// says.
func TestKeepNewNeverReplaces(t *testing.T) {
	for _, kind := range []string{"file", "symlink", "dangling"} {
		dir := t.TempDir()
		target := filepath.Join(dir, "arch")
		partial := target + ".partial"
		other := filepath.Join(dir, "other")
		writeFile(t, other, "someone else's\n")
		switch kind {
		case "file":
			writeFile(t, partial, "an input mbox\n")
		case "symlink":
			if os.Symlink("other", partial) != nil {
				continue
			}
		case "dangling":
			if os.Symlink("nowhere", partial) != nil {
				continue
			}
		}
		o, err := Create(target)
		if err != nil {
			t.Fatal(err)
		}
		if o.Existed() {
			t.Errorf("%s: Existed for a target not there", kind)
		}
		io.WriteString(o, "partial output\n")
		kept, err := o.KeepNew(partial)
		if err != nil || kept != partial+"-1" {
			t.Errorf("%s: KeepNew over an existing name: %q, %v", kind, kept, err)
		}
		if got := readFile(t, partial+"-1"); got != "partial output\n" {
			t.Errorf("%s: output kept is %q", kind, got)
		}
		switch kind {
		case "file":
			if got := readFile(t, partial); got != "an input mbox\n" {
				t.Errorf("%s: %s now %q", kind, partial, got)
			}
		default:
			if fi, err := os.Lstat(partial); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("%s: the link was replaced", kind)
			}
		}
		if got := readFile(t, other); got != "someone else's\n" {
			t.Errorf("%s: the link's file now %q", kind, got)
		}
		if _, err := os.Lstat(target); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: target made: %v", kind, err)
		}
		if l := leftovers(t, dir); len(l) != 0 {
			t.Errorf("%s: temporary files left: %q", kind, l)
		}
	}
}

// TestKeepNew: the output goes to NAME, or when it exists to the first
// of NAME-1, NAME-2 ... that does not; KeepNew says which; no file is
// replaced; the target stays as it was (Existed says whether it was
// there at all). Run with hard links and with a file system that has
// none (the link failing: a rename after a look).
func TestKeepNew(t *testing.T) {
	for _, nolink := range []bool{false, true} {
		if nolink {
			linkFile = func(old, new string) error {
				return &os.LinkError{Op: "link", Old: old, New: new, Err: errors.ErrUnsupported}
			}
		}
		dir := t.TempDir()
		target := filepath.Join(dir, "arch")
		writeFile(t, target, "old\n")
		partial := target + ".partial"
		var names []string
		for i := 0; i < 3; i++ {
			o, err := Create(target)
			if err != nil {
				t.Fatal(err)
			}
			if !o.Existed() {
				t.Error("Existed false for an existing target")
			}
			io.WriteString(o, "run "+string(rune('0'+i))+"\n")
			kept, err := o.KeepNew(partial)
			if err != nil {
				t.Fatalf("nolink=%v run %d: %v", nolink, i, err)
			}
			names = append(names, kept)
		}
		want := []string{partial, partial + "-1", partial + "-2"}
		for i, n := range names {
			if n != want[i] {
				t.Errorf("nolink=%v: run %d kept in %q, want %q", nolink, i, n, want[i])
				continue
			}
			if got := readFile(t, n); got != "run "+string(rune('0'+i))+"\n" {
				t.Errorf("nolink=%v: %s holds %q", nolink, n, got)
			}
		}
		if got := readFile(t, target); got != "old\n" {
			t.Errorf("nolink=%v: target now %q", nolink, got)
		}
		if l := leftovers(t, dir); len(l) != 0 {
			t.Errorf("nolink=%v: temporary files left: %q", nolink, l)
		}
	}
	linkFile = os.Link
}

// TestKeepNewFailure: a failed write makes KeepNew fail without making
// NAME.partial or touching an existing one, and without leftovers.
func TestKeepNewFailure(t *testing.T) {
	for n := 0; n < 10; n += 4 {
		dir := t.TempDir()
		target := filepath.Join(dir, "arch")
		partial := target + ".partial"
		if n > 0 {
			writeFile(t, partial, "precious\n")
		}
		o, err := Create(target)
		if err != nil {
			t.Fatal(err)
		}
		o.w = &failAfter{w: o.f, n: n}
		io.WriteString(o, "partial output\n")
		if _, err := o.KeepNew(partial); !errors.Is(err, errInjected) {
			t.Errorf("n=%d: KeepNew after a failed write: %v", n, err)
		}
		ents, _ := os.ReadDir(dir)
		switch {
		case n == 0 && len(ents) != 0:
			t.Errorf("n=%d: %d entries made", n, len(ents))
		case n > 0 && (len(ents) != 1 || readFile(t, partial) != "precious\n"):
			t.Errorf("n=%d: %d entries, %s changed", n, len(ents), partial)
		}
	}
}

// TestCheckPartial: NAME.partial is refused when it is an
// input, named or through a symbolic or hard link; not when it is
// another file or does not exist.
func TestCheckPartial(t *testing.T) {
	dir := t.TempDir()
	partial := filepath.Join(dir, "arch.partial")
	writeFile(t, partial, "From a\n")
	other := filepath.Join(dir, "other.mbox")
	writeFile(t, other, "From b\n")
	tests := []struct {
		partial string
		inputs  []string
		bad     bool
	}{
		{partial, []string{partial}, true},
		{partial, []string{"-", "/no/such", other, partial}, true},
		{partial, []string{other}, false},
		{partial, []string{"-"}, false},
		{filepath.Join(dir, "new.partial"), []string{other, dir}, false},
		{os.DevNull, []string{other}, false},
	}
	if os.Symlink("arch.partial", filepath.Join(dir, "sym")) == nil && os.Link(partial, filepath.Join(dir, "hard")) == nil {
		tests = append(tests, []struct {
			partial string
			inputs  []string
			bad     bool
		}{
			{partial, []string{filepath.Join(dir, "sym")}, true},
			{partial, []string{filepath.Join(dir, "hard")}, true},
			{filepath.Join(dir, "sym"), []string{partial}, true},
		}...)
	}
	for _, tt := range tests {
		err := CheckPartial(tt.partial, tt.inputs)
		if (err != nil) != tt.bad {
			t.Errorf("CheckPartial(%q, %q) = %v, want error %v", tt.partial, tt.inputs, err, tt.bad)
		}
	}
}
