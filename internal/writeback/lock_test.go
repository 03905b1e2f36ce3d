package writeback

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/linkscan/linkscan/mailbox"
)

// inPlaceFlushed writes testMbox to DIR/mbox, rewrites its messages in
// place up to Flush, and returns the File (Commit not yet called).
func inPlaceFlushed(t *testing.T, o Options) (*File, string) {
	t.Helper()
	name := filepath.Join(t.TempDir(), "mbox")
	if err := os.WriteFile(name, []byte(testMbox), 0o600); err != nil {
		t.Fatal(err)
	}
	ms := readMessages(t, name, mailbox.FormatMbox)
	src, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	o.InPlace = true
	f, err := Create(name, src, name, &o)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if out := change(m.Raw); !bytes.Equal(out, m.Raw) {
			if _, err := f.Replace(m, out); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := f.Flush(); err != nil {
		t.Fatal(err)
	}
	return f, name
}

// A message delivered (appended, as an MDA does) after Flush copied the
// file's end and before Commit renames is in the new file.
func TestCommitTakesAppendedMail(t *testing.T) {
	f, name := inPlaceFlushed(t, Options{})
	const delivered = "\nFrom x@y Mon Jan  1 00:00:00 2001\nFrom: x@y\nMessage-ID: <new@x>\n\nnew mail\n"
	a, err := os.OpenFile(name, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	a.WriteString(delivered)
	a.Close()
	if _, err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(name)
	if !bytes.HasSuffix(b, []byte(delivered)) {
		t.Errorf("the message delivered before the rename is not at the end; file now:\n%s", b)
	}
	if !bytes.Contains(b, []byte("https://new.example.org/")) {
		t.Errorf("the rewrite is lost:\n%s", b)
	}
	if _, err := os.Lstat(name + ".lock"); !os.IsNotExist(err) {
		t.Errorf("the dotlock is left behind: %v", err)
	}
}

// A file made shorter, or rewritten with its size kept, after it was
// copied: Commit leaves it as it was, ErrChanged.
func TestCommitRefusesChangedFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		do   func(name string)
	}{
		{"shorter", func(name string) { os.Truncate(name, 10) }},
		{"same size", func(name string) {
			b, _ := os.ReadFile(name)
			b[len(b)-2] = 'X'
			os.WriteFile(name, b, 0o600)
			later := time.Now().Add(time.Hour)
			os.Chtimes(name, later, later)
		}},
	} {
		f, name := inPlaceFlushed(t, Options{})
		tc.do(name)
		before, _ := os.ReadFile(name)
		_, err := f.Commit()
		if !errors.Is(err, ErrChanged) {
			t.Errorf("%s: Commit: %v, want ErrChanged", tc.name, err)
		}
		after, _ := os.ReadFile(name)
		if !bytes.Equal(before, after) {
			t.Errorf("%s: the file was not left as it was:\n%s", tc.name, after)
		}
		if ents, _ := os.ReadDir(filepath.Dir(name)); len(ents) != 1 {
			t.Errorf("%s: files left beside it: %v", tc.name, ents)
		}
	}
}

// A dotlock or flock held by another program: Commit waits at most
// LockWait and leaves the file as it was (ErrLocked); a stale dotlock is
// removed and the file rewritten.
func TestCommitLocks(t *testing.T) {
	f, name := inPlaceFlushed(t, Options{LockWait: time.Nanosecond})
	os.WriteFile(name+".lock", nil, 0o644)
	if _, err := f.Commit(); !errors.Is(err, ErrLocked) {
		t.Errorf("dotlock held: Commit: %v, want ErrLocked", err)
	}
	if b, _ := os.ReadFile(name); string(b) != testMbox {
		t.Errorf("dotlock held: the file changed:\n%s", b)
	}
	if _, err := os.Lstat(name + ".lock"); err != nil {
		t.Errorf("another program's dotlock was removed: %v", err)
	}

	f, name = inPlaceFlushed(t, Options{LockWait: time.Nanosecond})
	os.WriteFile(name+".lock", nil, 0o644)
	old := time.Now().Add(-2 * DotlockStale)
	os.Chtimes(name+".lock", old, old)
	if _, err := f.Commit(); err != nil {
		t.Errorf("stale dotlock: Commit: %v", err)
	}
	if b, _ := os.ReadFile(name); string(b) == testMbox {
		t.Errorf("stale dotlock: the file was not rewritten")
	}

	f, name = inPlaceFlushed(t, Options{LockWait: time.Nanosecond})
	h, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := syscall.Flock(int(h.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Skipf("no flock here: %v", err)
	}
	if _, err := f.Commit(); !errors.Is(err, ErrLocked) {
		t.Errorf("flock held: Commit: %v, want ErrLocked", err)
	}
	if b, _ := os.ReadFile(name); string(b) != testMbox {
		t.Errorf("flock held: the file changed:\n%s", b)
	}
}

// deadPID is the process ID of a process that has ended (and been
// waited for).
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestDotlockDeadProcess: a dotlock of ours ("PID\nHOST\n") whose
// process is gone, on this host, is taken over at once, however young;
// one whose process lives, one of another host, and one in another
// program's form are waited for (ErrLocked past LockWait) and left.
func TestDotlockDeadProcess(t *testing.T) {
	host, _ := os.Hostname()
	dead := deadPID(t)
	for _, c := range []struct {
		name, lock string
		taken      bool
	}{
		{"dead, this host", fmt.Sprintf("%d\n%s\n", dead, host), true},
		{"alive, this host", fmt.Sprintf("%d\n%s\n", os.Getpid(), host), false},
		{"dead, another host", fmt.Sprintf("%d\n%s.elsewhere\n", dead, host), false},
		{"dead, no host", fmt.Sprintf("%d\n", dead), false},
		{"not ours", "locked\n", false},
	} {
		f, name := inPlaceFlushed(t, Options{LockWait: time.Nanosecond})
		os.WriteFile(name+".lock", []byte(c.lock), 0o644)
		_, err := f.Commit()
		b, _ := os.ReadFile(name)
		_, lerr := os.Lstat(name + ".lock")
		if c.taken && (err != nil || string(b) == testMbox || lerr == nil) {
			t.Errorf("%s: Commit: %v, rewritten %v, lock left %v", c.name, err, string(b) != testMbox, lerr == nil)
		}
		if !c.taken && (!errors.Is(err, ErrLocked) || string(b) != testMbox || lerr != nil) {
			t.Errorf("%s: Commit: %v, want ErrLocked and the lock left (%v)", c.name, err, lerr)
		}
	}
	// the lock dotlock makes is read back as ours
	name := filepath.Join(t.TempDir(), "m.lock")
	undo, err := dotlock(name, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(name)
	undo()
	if pid, h, ok := parseDotlock(b); !ok || pid != os.Getpid() || h != host {
		t.Errorf("our dotlock %q reads back as %d %q %v", b, pid, h, ok)
	}
}

// A file at FILE+SUFFIX is never removed or replaced: Commit refuses
// (BackupError), both files as they were.
func TestBackupNotReplaced(t *testing.T) {
	f, name := inPlaceFlushed(t, Options{Backup: ".bak"})
	os.WriteFile(name+".bak", []byte("another message\n"), 0o600)
	_, err := f.Commit()
	var be *BackupError
	if !errors.As(err, &be) {
		t.Errorf("Commit: %v, want a BackupError", err)
	}
	if b, _ := os.ReadFile(name + ".bak"); string(b) != "another message\n" {
		t.Errorf("FILE.bak replaced: %q", b)
	}
	if b, _ := os.ReadFile(name); string(b) != testMbox {
		t.Errorf("the file changed:\n%s", b)
	}
}

// copyNew (the backup where hard links fail) does not replace a file.
func TestCopyNewNotReplacing(t *testing.T) {
	dir := t.TempDir()
	from, to := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(from, []byte("a"), 0o600)
	if err := copyNew(from, to); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(to); string(b) != "a" {
		t.Fatalf("copy: %q", b)
	}
	os.WriteFile(from, []byte("new"), 0o600)
	if err := copyNew(from, to); err == nil {
		t.Error("an existing file replaced")
	}
	if b, _ := os.ReadFile(to); string(b) != "a" {
		t.Errorf("replaced: %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("files left: %v", ents)
	}
}

// A Maildir message renamed (flags changed by an IMAP server or mail
// reader) or removed between the read and Commit, or an mbox replaced by
// another file: Commit drops its copy (ErrChanged); the message is
// there once, as the other program left it.
func TestCommitFileGoneMeanwhile(t *testing.T) {
	for _, tc := range []struct{ base, how string }{
		{"1.2.host:2,", "rename"}, {"1.2.host,S=70:2,", "rename"},
		{"1.2.host:2,", "remove"}, {"1.2.host,S=70:2,", "replace"},
	} {
		dir := t.TempDir()
		for _, s := range []string{"cur", "new", "tmp"} {
			os.Mkdir(filepath.Join(dir, s), 0o755)
		}
		name := filepath.Join(dir, "cur", tc.base)
		const msg = "From: a@b\nMessage-ID: <1@x>\n\nSee http://old.example/one.\n"
		os.WriteFile(name, []byte(msg), 0o600)
		ms := readMessages(t, dir, mailbox.FormatAuto)
		src, _ := os.Open(name)
		f, err := Create(name, src, name, &Options{InPlace: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if _, err := f.Replace(m, change(m.Raw)); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.Flush(); err != nil {
			t.Fatal(err)
		}
		want := 1
		switch tc.how {
		case "rename":
			os.Rename(name, name+"S")
		case "remove":
			os.Remove(name)
			want = 0
		case "replace":
			os.WriteFile(name+".x", []byte(msg), 0o600)
			os.Rename(name+".x", name)
		}
		_, err = f.Commit()
		if !errors.Is(err, ErrChanged) {
			t.Errorf("%s %s: Commit: %v, want ErrChanged", tc.base, tc.how, err)
		}
		ents, _ := os.ReadDir(filepath.Join(dir, "cur"))
		n := 0
		for _, e := range ents {
			if b, _ := os.ReadFile(filepath.Join(dir, "cur", e.Name())); bytes.Contains(b, []byte("<1@x>")) {
				n++
			}
		}
		if n != want || len(ents) != want {
			t.Errorf("%s %s: message <1@x> %d times, %d files in cur/ (%v), want %d", tc.base, tc.how, n, len(ents), ents, want)
		}
	}
}

// A backup is never made in a Maildir, also when the file was reached
// through a symbolic link: BackupError, the file as it was.
func TestBackupNotInMaildir(t *testing.T) {
	dir := t.TempDir()
	for _, s := range []string{"cur", "new", "tmp"} {
		os.Mkdir(filepath.Join(dir, s), 0o755)
	}
	name := filepath.Join(dir, "cur", "5.5.host:2,S")
	const msg = "From: a@b\nMessage-ID: <1@x>\n\nSee http://old.example/one.\n"
	os.WriteFile(name, []byte(msg), 0o600)
	link := filepath.Join(t.TempDir(), "lnk")
	os.Symlink(name, link)
	ms := readMessages(t, link, mailbox.FormatMessage)
	src, _ := os.Open(link)
	f, err := Create(link, src, link, &Options{InPlace: true, Backup: ".bak"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if _, err := f.Replace(m, change(m.Raw)); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Flush(); err != nil {
		t.Fatal(err)
	}
	_, err = f.Commit()
	var be *BackupError
	if !errors.As(err, &be) {
		t.Errorf("Commit: %v, want a BackupError", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "cur")); len(ents) != 1 {
		t.Errorf("cur/: %v", ents)
	}
	if b, _ := os.ReadFile(name); string(b) != msg {
		t.Errorf("the message changed: %q", b)
	}
}

// In place, the new file keeps the old one's owner and group where the
// process may give them (run as root only).
func TestCommitKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a file away")
	}
	f, name := inPlaceFlushed(t, Options{})
	if err := os.Chown(name, 65534, 65534); err != nil {
		t.Skip(err)
	}
	if _, err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != 65534 || st.Gid != 65534 {
		t.Errorf("owner %d:%d, want 65534:65534", st.Uid, st.Gid)
	}
	if b, _ := os.ReadFile(name); string(b) == testMbox {
		t.Error("not rewritten")
	}
}

// MirrorMaildir mirrors every Maildir of a Maildir++ tree with its three
// directories, an empty folder too, with the input's modes.
func TestMirrorMaildirTree(t *testing.T) {
	root := filepath.Join(t.TempDir(), "M")
	for _, f := range []string{"", ".Sent", ".Archive.2020", ".Empty"} {
		for _, s := range []string{"cur", "new", "tmp"} {
			os.MkdirAll(filepath.Join(root, f, s), 0o700)
		}
	}
	os.WriteFile(filepath.Join(root, ".Sent", "cur", "1.2.h:2,"), []byte("x"), 0o600)
	out := filepath.Join(t.TempDir(), "out")
	MirrorMaildir(out, root)
	for _, f := range []string{"", ".Sent", ".Archive.2020", ".Empty"} {
		for _, s := range []string{"cur", "new", "tmp"} {
			fi, err := os.Stat(filepath.Join(out, "M", f, s))
			if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
				t.Errorf("%s/%s: %v %v", f, s, fi, err)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(out, "M", ".Sent", "cur", "1.2.h:2,")); err == nil {
		t.Error("a message copied by MirrorMaildir")
	}
}

// A Maildir of symbolic links with ,S= names (a search folder): the
// file pointed to is renamed beside itself with its new size and the
// link retargeted to it; no regular copy in the link's folder.
func TestMaildirSizedThroughLink(t *testing.T) {
	top := t.TempDir()
	for _, m := range []string{"R", "V"} {
		for _, s := range []string{"cur", "new", "tmp"} {
			os.MkdirAll(filepath.Join(top, m, s), 0o755)
		}
	}
	const msg = "From: a@b\nMessage-ID: <1@x>\n\nSee http://old.example/one.\n"
	base := "7.7.host,S=" + strconv.Itoa(len(msg)) + ":2,S"
	real := filepath.Join(top, "R", "cur", base)
	os.WriteFile(real, []byte(msg), 0o600)
	link := filepath.Join(top, "V", "cur", base)
	os.Symlink(real, link)
	ms := readMessages(t, filepath.Join(top, "V"), mailbox.FormatAuto)
	src, _ := os.Open(link)
	f, err := Create(link, src, link, &Options{InPlace: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if _, err := f.Replace(m, change(m.Raw)); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	rents, _ := os.ReadDir(filepath.Join(top, "R", "cur"))
	vents, _ := os.ReadDir(filepath.Join(top, "V", "cur"))
	if len(rents) != 1 || len(vents) != 1 {
		t.Fatalf("R/cur %v, V/cur %v", rents, vents)
	}
	b, _ := os.ReadFile(filepath.Join(top, "R", "cur", rents[0].Name()))
	if want := "7.7.host,S=" + strconv.Itoa(len(b)) + ":2,S"; rents[0].Name() != want || string(b) == msg {
		t.Errorf("R/cur/%s (%q), want %s rewritten", rents[0].Name(), b, want)
	}
	if vents[0].Type()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced by a regular file")
	}
	if lb, err := os.ReadFile(link); err != nil || !bytes.Equal(lb, b) {
		t.Errorf("the link does not reach the new file: %v", err)
	}
}
