package spill

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestSetReadOnlyDir spills into a directory without write permission
// and wants a permission error naming it. Root may write anywhere, so
// as root the test runs itself again as user nobody (65534) on a
// directory of root's with mode 0755, from a copy of the test binary that
// nobody can run.
func TestSetReadOnlyDir(t *testing.T) {
	dir := os.Getenv("SPILL_READONLY_DIR")
	if dir == "" {
		dir = t.TempDir()
		if os.Geteuid() == 0 {
			asNobody(t, dir)
			return
		}
		if err := os.Chmod(dir, 0o500); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(dir, 0o700)
	}
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

func asNobody(t *testing.T, dir string) {
	// t.TempDir's directory and its parent, made by the test, 0700.
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for d := filepath.Dir(dir); d != "/" && d != "."; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm()&0o001 == 0 {
			t.Skipf("cannot arrange a directory that user nobody can reach (%s is not searchable by others)", d)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip("no test binary to run again:", err)
	}
	bin := filepath.Join(dir, "spill.test")
	if err := copyFile(exe, bin); err != nil {
		t.Skip("cannot copy the test binary:", err)
	}
	cmd := exec.Command(bin, "-test.run=^TestSetReadOnlyDir$", "-test.v")
	cmd.Env = append(os.Environ(), "SPILL_READONLY_DIR="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil && strings.Contains(string(out), "--- FAIL") {
		t.Fatalf("as user nobody:\n%s", out)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: TestSetReadOnlyDir") {
		t.Skipf("cannot run the test as user nobody: %v\n%s", err, out)
	}
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
