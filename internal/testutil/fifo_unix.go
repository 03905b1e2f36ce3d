//go:build unix

package testutil

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// FIFOKinds are the kinds of pipe FIFOInput makes: a named pipe, and an
// anonymous one reached as /proc/self/fd/N, as a shell's <(zcat a.gz) is.
var FIFOKinds = []string{"named pipe", "pipe"}

// FIFOInput returns the name of a pipe of the given kind (FIFOKinds) that
// data is written into once, by a goroutine, for an input that can be
// read only once. The pipe's read end is closed at the test's end.
func FIFOInput(t testing.TB, kind string, data []byte) string {
	t.Helper()
	switch kind {
	case "named pipe":
		name := filepath.Join(t.TempDir(), "in.fifo")
		if err := syscall.Mkfifo(name, 0o600); err != nil {
			t.Fatal(err)
		}
		go func() {
			if f, err := os.OpenFile(name, os.O_WRONLY, 0); err == nil {
				f.Write(data)
				f.Close()
			}
		}()
		return name
	case "pipe":
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		go func() { w.Write(data); w.Close() }()
		return fmt.Sprintf("/proc/self/fd/%d", r.Fd())
	}
	t.Fatalf("no pipe of kind %q", kind)
	return ""
}
