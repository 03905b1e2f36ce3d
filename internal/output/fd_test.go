//go:build linux

package output

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func needProcFD(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/proc/self/fd/0"); err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
}

// TestProcFD: names that lead to a descriptor, directly or through
// symbolic links (to the entry, or to its directory), are told from
// names of files; this process's descriptors are named by number.
func TestProcFD(t *testing.T) {
	needProcFD(t)
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.txt")
	writeFile(t, plain, "x\n")
	link := filepath.Join(dir, "out")
	os.Symlink("/dev/stdout", link)
	fdlink := filepath.Join(dir, "fds")
	os.Symlink("/proc/self/fd", fdlink)
	chain := filepath.Join(dir, "chain")
	os.Symlink("out", chain)
	tolink := filepath.Join(dir, "toplain")
	os.Symlink("plain.txt", tolink)
	pid := strconv.Itoa(os.Getpid())
	tests := []struct {
		name string
		fd   int
		ok   bool
	}{
		{"/dev/stdout", 1, true},
		{"/dev/stderr", 2, true},
		{"/dev/stdin", 0, true},
		{"/dev/fd/2", 2, true},
		{"/proc/self/fd/1", 1, true},
		{"/proc/thread-self/fd/1", 1, true},
		{"/proc/" + pid + "/fd/2", 2, true},
		{"/proc/" + pid + "/task/" + pid + "/fd/2", 2, true},
		{"/proc/self/fd/../fd/1", 1, true},
		{link, 1, true},
		{chain, 1, true},
		{filepath.Join(fdlink, "2"), 2, true},
		{"/proc/1/fd/1", -1, pid != "1"},
		{"/proc/self/environ", -1, true}, // proc, not a descriptor: never renamed over either
		{plain, -1, false},
		{tolink, -1, false},
		{filepath.Join(dir, "new.txt"), -1, false},
		{filepath.Join(dir, "no", "such"), -1, false},
		{os.DevNull, -1, false},
	}
	if pid == "1" {
		tests[12].fd = 1
	}
	for _, tt := range tests {
		fd, ok := procFD(tt.name)
		if ok != tt.ok || ok && fd != tt.fd {
			t.Errorf("procFD(%q) = %d, %v; want %d, %v", tt.name, fd, ok, tt.fd, tt.ok)
		}
	}
}

// openFD opens name as a shell's redirection would, and returns it with
// the /dev/fd name of its descriptor.
func openFD(t *testing.T, name string, flag int) (*os.File, string) {
	t.Helper()
	f, err := os.OpenFile(name, flag, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, "/dev/fd/" + strconv.Itoa(int(f.Fd()))
}

// TestDescriptorTarget: -o /dev/stdout with standard output
// redirected to a file (>> log, or > log inside { echo; ...; echo; }) writes
// through the shell's descriptor: the file is not replaced by a rename,
// what it held stays, and what the shell writes after lands after the
// output. The same through /proc/self/fd/N, /dev/fd/N and a symbolic link
// to one, with Commit, Keep and KeepNew.
func TestDescriptorTarget(t *testing.T) {
	needProcFD(t)
	for _, via := range []string{"devfd", "proc", "link"} {
		for _, finish := range []string{"commit", "keep", "keepnew"} {
			dir := t.TempDir()
			log := filepath.Join(dir, "log.keep")
			writeFile(t, log, "important log line\n")
			before, _ := os.Stat(log)
			sh, name := openFD(t, log, os.O_WRONLY|os.O_APPEND) // >> log.keep
			switch via {
			case "proc":
				name = "/proc/self/fd/" + strings.TrimPrefix(name, "/dev/fd/")
			case "link":
				l := filepath.Join(dir, "out")
				if err := os.Symlink(name, l); err != nil {
					t.Fatal(err)
				}
				name = l
			}
			o, err := Create(name)
			if err != nil {
				t.Fatal(err)
			}
			if !o.Existed() || o.TempName() != o.Name() {
				t.Errorf("%s %s: Existed %v, TempName %q, Name %q: not written in place", via, finish, o.Existed(), o.TempName(), o.Name())
			}
			io.WriteString(o, "scan output\n")
			switch finish {
			case "commit":
				err = o.Commit()
			case "keep":
				err = o.Keep(log + ".partial")
			case "keepnew":
				var kept string
				kept, err = o.KeepNew(log + ".partial")
				if kept != name {
					t.Errorf("%s: KeepNew kept in %q, want %q", via, kept, name)
				}
			}
			if err != nil {
				t.Fatalf("%s %s: %v", via, finish, err)
			}
			io.WriteString(sh, "after\n") // the shell's descriptor is still open
			if got := readFile(t, log); got != "important log line\nscan output\nafter\n" {
				t.Errorf("%s %s: log holds %q", via, finish, got)
			}
			if after, err := os.Stat(log); err != nil || !os.SameFile(before, after) {
				t.Errorf("%s %s: the file was replaced", via, finish)
			}
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if e.Name() != "log.keep" && e.Name() != "out" {
					t.Errorf("%s %s: %s made", via, finish, e.Name())
				}
			}
		}
	}
}

// TestDescriptorSharedOffset: with > (no append) and a line written by the
// shell first, the output goes after it, at the descriptor's offset, not
// over it from the start of the file.
func TestDescriptorSharedOffset(t *testing.T) {
	needProcFD(t)
	dir := t.TempDir()
	name := filepath.Join(dir, "so2.txt")
	writeFile(t, name, "old content, truncated by the shell\n")
	sh, fd := openFD(t, name, os.O_WRONLY|os.O_TRUNC)
	io.WriteString(sh, "before\n")
	o, err := Create(fd)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(o, "scan\n")
	if err := o.Commit(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(sh, "after rc=0\n")
	if got := readFile(t, name); got != "before\nscan\nafter rc=0\n" {
		t.Errorf("file holds %q", got)
	}
}

// TestDescriptorWriteFailure: a write that fails on a descriptor target
// makes Commit fail; what the file held before is still there (it is
// written in place, never truncated), with what was written before the
// failure after it; nothing is made beside it. Interrupt leaves it too.
func TestDescriptorWriteFailure(t *testing.T) {
	needProcFD(t)
	for n := 0; n < 12; n += 5 {
		dir := t.TempDir()
		name := filepath.Join(dir, "log")
		writeFile(t, name, "precious\n")
		_, fd := openFD(t, name, os.O_WRONLY|os.O_APPEND)
		o, err := Create(fd)
		if err != nil {
			t.Fatal(err)
		}
		o.w = &failAfter{w: o.f, n: n}
		if _, err := io.WriteString(o, "line one\nline two\n"); !errors.Is(err, errInjected) {
			t.Fatalf("n=%d: write error %v", n, err)
		}
		if o.Interrupt() {
			t.Errorf("n=%d: Interrupt says a descriptor target was left untouched", n)
		}
		if got, want := readFile(t, name), "precious\n"+"line one\nline two\n"[:n]; got != want {
			t.Errorf("n=%d: file holds %q, want %q", n, got, want)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Errorf("n=%d: %d entries in the directory", n, len(ents))
		}
	}
	// a read-only descriptor (/dev/stdin from a file): the write fails
	// and the file is not replaced
	dir := t.TempDir()
	name := filepath.Join(dir, "in")
	writeFile(t, name, "input\n")
	_, fd := openFD(t, name, os.O_RDONLY)
	o, err := Create(fd)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(o, "x"); err == nil {
		t.Error("writing a read-only descriptor succeeded")
	}
	if err := o.Commit(); err == nil {
		t.Error("Commit after the failed write succeeded")
	}
	if got := readFile(t, name); got != "input\n" {
		t.Errorf("read-only descriptor's file now %q", got)
	}
	// a descriptor that is not open
	if _, err := Create("/dev/fd/987654"); err == nil {
		t.Error("Create of a descriptor not open succeeded")
	}
}

// TestOtherProcessFD: /proc/PID/fd/1 of another process whose standard
// output is a file: the file is appended to, not replaced nor written
// over from its start.
func TestOtherProcessFD(t *testing.T) {
	needProcFD(t)
	dir := t.TempDir()
	name := filepath.Join(dir, "child.out")
	writeFile(t, name, "the child's file\n")
	before, _ := os.Stat(name)
	out, err := os.OpenFile(name, os.O_WRONLY, 0) // at offset 0
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "OUTPUT_TEST_WAIT=1")
	cmd.Stdout = out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	if l, err := bufio.NewReader(stderr).ReadString('\n'); l != "ready\n" {
		t.Fatalf("child said %q, %v", l, err)
	}
	target := "/proc/" + strconv.Itoa(cmd.Process.Pid) + "/fd/1"
	o, err := Create(target)
	if err != nil {
		t.Skip("cannot open another process's descriptor here:", err)
	}
	io.WriteString(o, "output\n")
	if err := o.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, name); got != "the child's file\noutput\n" {
		t.Errorf("file holds %q", got)
	}
	if after, err := os.Stat(name); err != nil || !os.SameFile(before, after) {
		t.Error("the file was replaced")
	}
	if l := leftovers(t, dir); len(l) != 0 {
		t.Errorf("temporary files: %q", l)
	}
}

// TestCheckInputsDescriptor: -o /dev/fd/N with N open on an input is
// refused, as the input named itself is.
func TestCheckInputsDescriptor(t *testing.T) {
	needProcFD(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mbox")
	writeFile(t, in, "From a\n")
	_, fd := openFD(t, in, os.O_WRONLY|os.O_APPEND)
	if err := CheckInputs(fd, []string{in}); err == nil {
		t.Errorf("CheckInputs(%s open on the input) passed", fd)
	}
	if err := CheckInputs(fd, []string{filepath.Join(dir, "other")}); err != nil {
		t.Errorf("CheckInputs(%s, another input): %v", fd, err)
	}
}

// TestKeepsOwner: run as root, the file that replaces a
// user's file is the user's, with its group and mode; a NAME.partial kept
// beside it too; a new file is the process's.
func TestKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a file to another user")
	}
	dir := t.TempDir()
	name := filepath.Join(dir, "own.txt")
	writeFile(t, name, "old\n")
	if err := os.Chown(name, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	os.Chmod(name, 0o640)
	check := func(what, name string, uid, gid uint32) {
		t.Helper()
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if st.Uid != uid || st.Gid != gid {
			t.Errorf("%s: owner %d:%d, want %d:%d", what, st.Uid, st.Gid, uid, gid)
		}
		if uid != 0 && fi.Mode().Perm() != 0o640 {
			t.Errorf("%s: mode %v, want 0640", what, fi.Mode().Perm())
		}
	}
	o, err := Create(name)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(o, "new\n")
	if err := o.Commit(); err != nil {
		t.Fatal(err)
	}
	check("committed", name, 65534, 65534)
	if got := readFile(t, name); got != "new\n" {
		t.Errorf("committed %q", got)
	}
	o, err = Create(name)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(o, "partial\n")
	kept, err := o.KeepNew(name + ".partial")
	if err != nil {
		t.Fatal(err)
	}
	check("kept", kept, 65534, 65534)
	o, err = Create(filepath.Join(dir, "fresh.txt"))
	if err != nil {
		t.Fatal(err)
	}
	o.Commit()
	check("new file", filepath.Join(dir, "fresh.txt"), 0, 0)
}
