package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linkscan/linkscan/internal/output"
	"github.com/linkscan/linkscan/rewrite"
)

// frictionRules maps http://old.example/ to https://new.example/.
func frictionRules(t *testing.T, dir string) string {
	return writeTestFile(t, filepath.Join(dir, "rules.toml"), "version = 1\n\n[[rule]]\naction = \"map\"\nfrom = \"http://old.example/\"\nto = \"https://new.example/\"\n")
}

// TestRewriteDeadDotlock: a.mbox.lock left by a killed rewrite (its PID
// gone, this host) does not hold the next rewrite --in-place: it is
// taken over at once and the file rewritten (it waited 30 s, then exit
// 1, for the 5 minutes a dotlock takes to be stale).
func TestRewriteDeadDotlock(t *testing.T) {
	dir := t.TempDir()
	in := writeTestFile(t, filepath.Join(dir, "a.mbox"), mboxMessage("a@x", "http://old.example/a"))
	dead := exec.Command(os.Args[0], "-test.run=^$")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	writeTestFile(t, in+".lock", fmt.Sprintf("%d\n%s\n", dead.Process.Pid, host))
	code, _, errs := childGuarded(t, nil, "rewrite", "--rules", frictionRules(t, dir), "--in-place", in)
	b, _ := os.ReadFile(in)
	if code != exitOK || !strings.Contains(string(b), "https://new.example/a") {
		t.Errorf("exit %d, %q; the file:\n%s", code, errs, b)
	}
	if _, err := os.Lstat(in + ".lock"); err == nil {
		t.Error("the dead run's dotlock is still there")
	}
}

// TestStaleTempRemoved: the temporary file a killed run left beside its
// target (.a.mbox.tmp-RANDOM, no process holding it, older than
// output.StaleAge) is removed by the next run writing there: rewrite
// --in-place, and scan -o.
func TestStaleTempRemoved(t *testing.T) {
	dir := t.TempDir()
	in := writeTestFile(t, filepath.Join(dir, "a.mbox"), mboxMessage("a@x", "http://old.example/a"))
	old := time.Now().Add(-2 * output.StaleAge)
	left := []string{filepath.Join(dir, ".a.mbox.tmp-0123456789ab"), filepath.Join(dir, ".out.jsonl.tmp-0123456789ab")}
	for _, p := range left {
		writeTestFile(t, p, "a killed run's partial output")
		os.Chtimes(p, old, old)
	}
	code, _, errs := childGuarded(t, nil, "rewrite", "--rules", frictionRules(t, dir), "--in-place", in)
	if _, err := os.Lstat(left[0]); code != exitOK || err == nil {
		t.Errorf("rewrite --in-place: exit %d, %q; the dead run's temporary file is left: %v", code, errs, err == nil)
	}
	code, _, errs = childGuarded(t, nil, "scan", "--format", "jsonl", "-o", filepath.Join(dir, "out.jsonl"), in)
	if _, err := os.Lstat(left[1]); code != exitOK || err == nil {
		t.Errorf("scan -o: exit %d, %q; the dead run's temporary file is left: %v", code, errs, err == nil)
	}
}

// TestRewriteInputInDirGiven: a file given beside the directory it lies
// in (either order, or a folder inside another) is given twice: exit 2
// before anything is written, said so (it was read twice and reported
// as "messages out of order", exit 1).
func TestRewriteInputInDirGiven(t *testing.T) {
	dir := t.TempDir()
	dd := filepath.Join(dir, "dd")
	os.MkdirAll(filepath.Join(dd, "sub"), 0o755)
	x := writeTestFile(t, filepath.Join(dd, "x.mbox"), mboxMessage("a@x", "http://old.example/a"))
	writeTestFile(t, filepath.Join(dd, "sub", "y.mbox"), mboxMessage("b@x", "http://old.example/b"))
	rules := frictionRules(t, dir)
	for _, args := range [][]string{{dd, x}, {x, dd}, {filepath.Join(dd, "sub"), dd}, {dd, filepath.Join(dd, "sub", ".", "y.mbox")}} {
		code, _, errs := runCmd("", append([]string{"rewrite", "--rules", rules, "--in-place"}, args...)...)
		if code != exitUsage || !strings.Contains(errs, "is given twice: it is in") {
			t.Errorf("%q: exit %d, %q", args, code, errs)
		}
	}
	if b, _ := os.ReadFile(x); !strings.Contains(string(b), "http://old.example/a") {
		t.Errorf("the file was rewritten:\n%s", b)
	}
}

// TestAuditZoneForbidden: a link to an IPv6 address with a zone
// (http://[fe80::1%25lo]/) is refused by the address policy, class
// forbidden, as the same address without a zone is; its robots.txt URL
// failed to parse and it was reported class robots.
func TestAuditZoneForbidden(t *testing.T) {
	dir := t.TempDir()
	in := writeTestFile(t, filepath.Join(dir, "a.mbox"), mboxMessage("a@x", "http://[fe80::1%25lo]/ http://[fe80::1]/"))
	code, out, errs := runCmd("", "audit", "--db", filepath.Join(dir, "a.db"), "--no-archives", "--progress", "never", "--format", "jsonl", in)
	if code != exitOK || strings.Count(out, `"status":"unchecked","class":"forbidden"`) != 2 {
		t.Errorf("exit %d, %q:\n%s", code, errs, out)
	}
}

// TestCharsetDamageExit: scan and rewrite agree on the exit status of
// charset damage (an unknown charset, text that is not its charset):
// --damage-exit 4 gives 4 for both, and both say it on standard error
// (rewrite counted only the damage of the message's framing, exit 0).
func TestCharsetDamageExit(t *testing.T) {
	dir := t.TempDir()
	rules := frictionRules(t, dir)
	for i, body := range []string{
		"Content-Type: text/plain; charset=x-unknown-charset\n\nsee http://old.example/a\n",
		"Content-Type: text/plain; charset=utf-8\n\nsee http://old.example/a \xff\xfe\n",
		"Content-Type: text/plain; charset=utf-8\n\nno link here \xff\xfe\n",
	} {
		in := writeTestFile(t, filepath.Join(dir, fmt.Sprintf("%d.mbox", i)), "From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <c@x>\n"+body)
		for _, args := range [][]string{
			{"scan", "--format", "jsonl", in},
			{"rewrite", "--rules", rules, "-o", filepath.Join(dir, "out"), in},
			{"rewrite", "--rules", rules, "--dry-run", in},
		} {
			code, _, errs := runCmd("", append([]string{args[0], "--damage-exit", "4"}, args[1:]...)...)
			if code != exitDamage || !strings.Contains(errs, "1 message damaged (1 problem)") {
				t.Errorf("%d: %s: exit %d, %q", i, args[:2], code, errs)
			}
			if code, _, _ := runCmd("", args...); code != exitOK {
				t.Errorf("%d: %s: exit %d without --damage-exit", i, args[:2], code)
			}
		}
	}
}

// TestPathologicalRulesBounded: a rule that repeats the whole URL ten
// times ("^(.*)$" -> "$1" x 10) on a message of 2,000 links: rewrite and
// filter end (the hang guard of childGuarded) with the message written
// whole and within MaxGrowth of its size, and neither takes more than
// 1 GiB (before, 44 s and 8 GB for rewrite, 2.8 GB for filter).
func TestPathologicalRulesBounded(t *testing.T) {
	dir := t.TempDir()
	rules := writeTestFile(t, filepath.Join(dir, "grow.toml"), "version = 1\n\n[[rule]]\naction = \"replace\"\npattern = \"^(.*)$\"\nwith = \""+strings.Repeat("$1", 10)+"\"\n")
	var msg strings.Builder
	msg.WriteString("From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <g@x>\n\n")
	for i := range 2000 {
		fmt.Fprintf(&msg, "see http://e.example/%d here\n", i)
	}
	in := writeTestFile(t, filepath.Join(dir, "in.mbox"), msg.String())
	out := filepath.Join(dir, "out.mbox")
	for _, args := range [][]string{
		{"rewrite", "--rules", rules, "-o", out, in},
		{"filter", "--rules", rules, "--timeout", "10m"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "LINKSCAN_TEST_MAIN="+strings.Join(args, "\x1f"))
		cmd.Stdin = strings.NewReader(msg.String())
		var stdout strings.Builder
		cmd.Stdout = &stdout
		done := make(chan error, 1)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: %v", args[0], err)
			}
		case <-time.After(5 * time.Minute):
			cmd.Process.Kill()
			<-done
			t.Fatalf("%s: still running after 5 minutes", args[0])
		}
		written := stdout.String()
		if args[0] == "rewrite" {
			b, _ := os.ReadFile(out)
			written = string(b)
		}
		if len(written) < msg.Len() || len(written) > msg.Len()+rewrite.MaxGrowth || !strings.Contains(written, "Message-ID: <g@x>") {
			t.Errorf("%s: %d bytes written of a message of %d", args[0], len(written), msg.Len())
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > 1<<20 { // KiB
			t.Errorf("%s: %d MiB of memory at its peak", args[0], ru.Maxrss>>10)
		}
	}
}

// TestIndexFullDisk: index on a small file system that fills up (a
// tmpfs of 5 MiB; the test needs to mount one) says the disk is full,
// not "SQL logic error: cannot commit - no transaction is active", exit
// 1, and its JSON counts as added the messages the index holds.
func TestIndexFullDisk(t *testing.T) {
	small := t.TempDir()
	if err := syscall.Mount("tmpfs", small, "tmpfs", 0, "size=5m"); err != nil {
		t.Skipf("cannot mount a small tmpfs: %v", err)
	}
	defer syscall.Unmount(small, 0)
	var b strings.Builder
	for i := range 40000 {
		fmt.Fprintf(&b, "From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <m%d.%s@example.org>\nReferences: <r%d@example.org>\n\nhttp://e.example/%d\n\n", i, strings.Repeat("x", 40), i, i)
	}
	in := writeTestFile(t, filepath.Join(t.TempDir(), "a.mbox"), b.String())
	code, out, errs := childGuarded(t, nil, "index", "--index", filepath.Join(small, "refs.db"), "--format", "json", in)
	var counts struct{ Messages, Added int }
	json.Unmarshal(out, &counts)
	if code != exitFail || !strings.Contains(errs, "database or disk is full") || strings.Contains(errs, "no transaction") || counts.Added != counts.Messages {
		t.Errorf("exit %d, stderr %q, counts %+v:\n%s", code, errs, counts, out)
	}
}
