//go:build unix

package testutil

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// AsNobody runs the calling test again as user nobody (65534) when the
// tests run as root, for tests of unreadable files and folders: root
// reads whatever the mode, so there the test could check nothing. It
// reports whether it did so, in which case the caller returns at once: the
// test passed or failed in the child, and this test says which. When not
// root it returns false and the test runs as it is. The child runs a copy
// of the test binary from a directory nobody can reach; where that cannot
// be arranged the test is skipped with the reason.
func AsNobody(t *testing.T) bool {
	t.Helper()
	if os.Geteuid() != 0 {
		return false
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip("running as root, and no test binary to run again as nobody:", err)
	}
	dir, err := os.MkdirTemp("", "asnobody-")
	if err != nil {
		t.Skip("running as root, and no directory for a copy of the test binary:", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for d := dir; d != "/" && d != "."; d = filepath.Dir(d) {
		if d == dir {
			if err := os.Chmod(d, 0o755); err != nil {
				t.Skip("running as root:", err)
			}
			continue
		}
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm()&0o001 == 0 {
			t.Skipf("running as root, and %s cannot be searched by user nobody", d)
		}
	}
	bin := filepath.Join(dir, filepath.Base(exe))
	if err := copyExecutable(exe, bin); err != nil {
		t.Skip("running as root, and the test binary cannot be copied:", err)
	}
	tmp := filepath.Join(dir, "tmp") // the child's own temporary files
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Skip("running as root:", err)
	}
	if err := os.Chown(tmp, 65534, 65534); err != nil {
		t.Skip("running as root, and no directory can be given to user nobody:", err)
	}
	cmd := exec.Command(bin, "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "HOME="+tmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	switch {
	case strings.Contains(string(out), "--- FAIL: "+t.Name()):
		t.Fatalf("as user nobody:\n%s", out)
	case strings.Contains(string(out), "--- SKIP: "+t.Name()):
		t.Skipf("skipped as user nobody:\n%s", out)
	case err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()):
		t.Skipf("running as root, and the test cannot run as user nobody: %v\n%s", err, out)
	}
	t.Logf("passed as user nobody")
	return true
}

func copyExecutable(from, to string) error {
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
