package spill

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/linkscan/linkscan/internal/testutil"
)

// TestSetReadOnlyDir spills into a directory without write permission
// and wants a permission error naming it. Root may write anywhere, so as
// root the test runs itself again as user nobody (testutil.AsNobody).
func TestSetReadOnlyDir(t *testing.T) {
	if testutil.AsNobody(t) {
		return
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o700)
	s := NewSet(1<<10, dir)
	defer s.Close()
	hs := NewHasher()
	var err error
	for i := 0; i < 1000 && err == nil; i++ {
		_, _, err = s.Add(hs.String(fmt.Sprint(i)))
	}
	if err == nil || !strings.Contains(err.Error(), dir) || !errors.Is(err, os.ErrPermission) {
		t.Fatalf("error %v; want a permission error naming %s", err, dir)
	}
}

// TestCounterReadOnlyDir: as TestSetReadOnlyDir, for a Counter.
func TestCounterReadOnlyDir(t *testing.T) {
	if testutil.AsNobody(t) {
		return
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o700)
	c := NewCounter(1<<10, dir)
	defer c.Close()
	var err error
	for i := 0; i < 1000 && err == nil; i++ {
		err = c.Add(fmt.Sprint(i), 1)
	}
	if err == nil || !strings.Contains(err.Error(), dir) || !errors.Is(err, os.ErrPermission) {
		t.Fatalf("error %v; want a permission error naming %s", err, dir)
	}
}
