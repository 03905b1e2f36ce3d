//go:build unix

package testutil

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// FullDevice returns /dev/full (every write fails with ENOSPC), or where
// it is missing (a container) a device node of the same kind made in a
// temporary directory; it skips the test when neither can be had.
func FullDevice(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat("/dev/full"); err == nil {
		return "/dev/full"
	}
	p := filepath.Join(t.TempDir(), "full")
	if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|7); err != nil {
		t.Skipf("no /dev/full, and none can be made: %v", err)
	}
	return p
}
