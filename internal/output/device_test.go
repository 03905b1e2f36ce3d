//go:build unix

package output

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestDevice: a target that is not a regular file is written in place,
// and its write errors are reported (/dev/full: no space left).
func TestDevice(t *testing.T) {
	o, err := Create(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(o, "x"); err != nil {
		t.Fatal(err)
	}
	if err := o.Commit(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode().IsRegular() {
		t.Fatalf("%s replaced: %v", os.DevNull, err)
	}
	full := "/dev/full"
	if _, err := os.Stat(full); err != nil {
		// a container without it: a device node of the same kind
		full = filepath.Join(t.TempDir(), "full")
		if err := syscall.Mknod(full, syscall.S_IFCHR|0o666, 1<<8|7); err != nil {
			t.Skipf("no /dev/full, and none can be made: %v", err)
		}
	}
	o, err = Create(full)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(o, "x"); err == nil {
		t.Error("writing /dev/full succeeded")
	}
	if err := o.Commit(); err == nil {
		t.Error("Commit after a failed write to /dev/full succeeded")
	}
	if _, err := Create(t.TempDir()); err == nil {
		t.Error("Create on a directory succeeded")
	}
}
