package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// RelTempDir returns a new temporary directory named relative to the
// working directory (as a relative --tmpdir is), or skips the test when
// there is no such name.
func RelTempDir(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, t.TempDir())
	if err != nil || filepath.IsAbs(rel) {
		t.Skipf("no relative name for the temporary directory: %q %v", rel, err)
	}
	return rel
}
