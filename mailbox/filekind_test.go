package mailbox

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestFileKind: every file type is named with its article, devices by
// their kind (the command's rewrite refusals use the same words).
func TestFileKind(t *testing.T) {
	for _, c := range []struct {
		mode fs.FileMode
		want string
	}{
		{fs.ModeNamedPipe, "a FIFO"},
		{fs.ModeSocket, "a socket"},
		{fs.ModeDevice | fs.ModeCharDevice, "a character device"},
		{fs.ModeDevice, "a block device"},
		{fs.ModeSymlink, "a symbolic link"},
		{fs.ModeDir, "a directory"},
		{fs.ModeIrregular, "an irregular file"},
		{0, "a regular file"},
	} {
		if got := FileKind(c.mode | 0o644); got != c.want {
			t.Errorf("FileKind(%v) = %q, want %q", c.mode, got, c.want)
		}
	}
}

// TestFileKindInMessages: the readers word what they refuse or skip with
// FileKind: a socket named as an input, a FIFO, a socket and a link to a
// character device in a folder.
func TestFileKindInMessages(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("no unix socket here: %v", err)
	}
	defer l.Close()
	if err := syscall.Mkfifo(filepath.Join(dir, "p"), 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	if err := os.Symlink("/dev/null", filepath.Join(dir, "n")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "a.eml"), []byte("From: a@b\nSubject: s\n\nhi\n"), 0o600)
	_, err = Open(sock, nil)
	var ie *InputError
	if !errors.As(err, &ie) || !strings.Contains(ie.Err.Error(), "(a socket)") {
		t.Errorf("Open(socket) = %v, want an InputError naming a socket", err)
	}
	r, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		if _, err := r.Next(); err != nil {
			break
		}
	}
	got := map[string]string{}
	for _, sk := range r.Skipped() {
		got[filepath.Base(sk.Path)] = sk.Reason
	}
	if got["p"] != "not a regular file (a FIFO)" || got["s"] != "not a regular file (a socket)" ||
		got["n"] != "not a regular file (a character device)" {
		t.Errorf("skips: %q", got)
	}
}
