package audit

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// need returns the path of a program the test runs; without it the test
// is skipped, except with CI=true, where .ci/run installs it.
func need(t *testing.T, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
		if filepath.IsAbs(n) {
			if fi, err := os.Stat(n); err == nil && !fi.IsDir() {
				return n
			}
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s not installed, and CI=true (.ci/run installs it)", names[0])
	}
	t.Skipf("%s not installed", names[0])
	return ""
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// start runs a server process for the test and waits, a bounded number of
// times, until its port takes connections.
func start(t *testing.T, port int, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for i := 0; i < 600; i++ {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return
		}
		select {
		case <-done:
			t.Fatalf("%s ended: %s", name, out.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("%s does not listen on %s after 30s: %s", name, addr, out.String())
}

// TestFTPServer runs Debian's vsftpd on 127.0.0.1, as the user running the
// test, anonymous and read-only, with a generated configuration.
func TestFTPServer(t *testing.T) {
	bin := need(t, "vsftpd", "/usr/sbin/vsftpd")
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	for _, d := range []string{root + "/pub/sub", dir + "/empty"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(root+"/pub/file.txt", []byte("hello\n"), 0o644)
	os.Chmod(dir, 0o755)
	port := freePort(t)
	conf := fmt.Sprintf(`listen=YES
listen_ipv6=NO
listen_address=127.0.0.1
listen_port=%d
background=NO
anonymous_enable=YES
local_enable=NO
write_enable=NO
anon_root=%s
no_anon_password=YES
run_as_launching_user=YES
secure_chroot_dir=%s/empty
seccomp_sandbox=NO
xferlog_enable=NO
syslog_enable=NO
vsftpd_log_file=%s/vsftpd.log
pasv_enable=YES
pasv_address=127.0.0.1
connect_from_port_20=NO
hide_ids=YES
`, port, root, dir, dir)
	cf := filepath.Join(dir, "vsftpd.conf")
	if err := os.WriteFile(cf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	start(t, port, bin, cf)
	base := fmt.Sprintf("ftp://127.0.0.1:%d", port)
	for _, c := range []struct {
		path   string
		status Status
		class  Class
	}{
		{"/pub/file.txt", OK, ""},
		{"/pub/", OK, ""},
		{"/", OK, ""},
		{"/pub/sub", OK, ""},
		{"/pub/missing.txt", Failing, ClassNotFound},
		{"/nowhere/", Failing, ClassNotFound},
	} {
		got := attemptURL(t, testConfig(nil), base+c.path)
		if got.Status != c.status || got.Class != c.class {
			t.Errorf("%s: %+v", c.path, got)
		}
	}
	// the guard holds for FTP too
	cfg := testConfig(&testResolver{hosts: map[string][]string{"ftp.example.com": {"127.0.0.1"}}})
	cfg.AllowPrivate = false
	if got := attemptURL(t, cfg, fmt.Sprintf("ftp://ftp.example.com:%d/pub/file.txt", port)); got.Class != ClassForbidden {
		t.Errorf("guard: %+v", got)
	}
}

// TestHTTPServerPython checks links on Python's http.server, a server the
// checker was not written against.
func TestHTTPServerPython(t *testing.T) {
	py := need(t, "python3")
	dir := t.TempDir()
	os.MkdirAll(dir+"/docs", 0o755)
	os.WriteFile(dir+"/index.html", []byte("<p>hello</p>"), 0o644)
	os.WriteFile(dir+"/docs/a.txt", []byte("a"), 0o644)
	port := freePort(t)
	start(t, port, py, "-m", "http.server", "--bind", "127.0.0.1", "--directory", dir, fmt.Sprint(port))
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	var links []Link
	for _, p := range []string{"/index.html", "/docs/a.txt", "/docs", "/missing.html"} {
		links = append(links, linkFor(base+p))
	}
	out := runAll(t, New(testConfig(nil), nil), links)
	got := map[string]Result{}
	for _, r := range out {
		got[strings.TrimPrefix(r.Link.URL, base)] = r
	}
	if r := got["/index.html"]; r.Status != OK {
		t.Errorf("index: %+v", r.Check)
	}
	if r := got["/docs/a.txt"]; r.Status != OK {
		t.Errorf("file: %+v", r.Check)
	}
	if r := got["/docs"]; r.Status != Redirected || !r.Check.Permanent || r.Check.FinalURL != base+"/docs/" {
		t.Errorf("directory without slash: %+v", r.Check)
	}
	if r := got["/missing.html"]; r.Status != Failing || r.Check.HTTPStatus != 404 {
		t.Errorf("missing: %+v", r.Check)
	}
}
