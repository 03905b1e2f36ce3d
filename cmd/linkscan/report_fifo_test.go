package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linkscan/linkscan/internal/output"
)

// childGuarded runs the command (the test binary, see TestMain) with its
// arguments and standard input; a child still running after a minute
// (blocked for ever, as the filter was in the open of a FIFO) is killed
// and the test fails: a guard against a hang, not a timing.
func childGuarded(t *testing.T, in []byte, args ...string) (int, []byte, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LINKSCAN_TEST_MAIN="+strings.Join(args, "\x1f"))
	cmd.Stdin = bytes.NewReader(in)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%q: still running after a minute (killed); stderr %q", args, errb.String())
	}
	return cmd.ProcessState.ExitCode(), out.Bytes(), errb.String()
}

// TestFilterReportFIFO: a --report FIFO never holds the filter: with no
// reader the open does not block (it waits --report-wait for one), with
// a reader that does not read the write ends at --report-wait; either
// way the rewritten message is delivered, exit 0, and the report's lines
// are printed on standard error.
func TestFilterReportFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "r.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := childGuarded(t, []byte(filterMsg), "filter", "--rules", filterRules, "--report", fifo, "--report-wait", "200ms", "--timeout", "1s")
	if code != 0 || string(out) != filterWant || !strings.Contains(errs, "no process reads the FIFO") || !strings.Contains(errs, "--report lost: {") {
		t.Errorf("no reader: exit %d, output %q, stderr %q", code, out, errs)
	}

	// a reader that never reads: 400 lines fill the pipe's buffer
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	many := filterMsg + strings.Repeat("https://nam02.safelinks.protection.outlook.com/?url=http%3A%2F%2Fexample.org%2Fb&data=x&reserved=0\n", 400)
	// the message as delivered with a report file that takes the lines
	_, want, _ := childGuarded(t, []byte(many), "filter", "--rules", filterRules, "--report", filepath.Join(t.TempDir(), "r.jsonl"))
	code, out, errs = childGuarded(t, []byte(many), "filter", "--rules", filterRules, "--report", fifo, "--report-wait", "200ms", "--timeout", "1s")
	if code != 0 || !bytes.Equal(out, want) || bytes.Equal(out, []byte(many)) || !strings.Contains(errs, "timeout") || strings.Count(errs, "--report lost: {") != 401 {
		t.Errorf("reader that does not read: exit %d, %d bytes out (want %d), %d lines lost, stderr %.300q", code, len(out), len(want), strings.Count(errs, "--report lost: {"), errs)
	}
}

// TestReportFIFONoReader: rewrite --report and audit -o on a FIFO that
// no process reads end with exit 1 and a reason after output.FIFOWait,
// before reading any input, instead of blocking in the open for ever.
func TestReportFIFONoReader(t *testing.T) {
	defer func(w time.Duration) { output.FIFOWait = w }(output.FIFOWait)
	output.FIFOWait = 100 * time.Millisecond
	dir := t.TempDir()
	fifo := filepath.Join(dir, "r.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	in := writeTestFile(t, filepath.Join(dir, "in.mbox"), mboxMessage("a@x", "http://old.example/a"))
	rules := writeTestFile(t, filepath.Join(dir, "rules.toml"), "version = 1\n\n[[rule]]\naction = \"map\"\nfrom = \"http://old.example/\"\nto = \"https://new.example/\"\n")
	for _, args := range [][]string{
		{"rewrite", "--rules", rules, "--report", fifo, "-o", filepath.Join(dir, "out.mbox"), in},
		{"audit", "--offline", "--db", filepath.Join(dir, "a.db"), "--format", "jsonl", "-o", fifo, in},
	} {
		type result struct {
			code int
			errs string
		}
		done := make(chan result, 1)
		go func() {
			code, _, errs := runCmd("", args...)
			done <- result{code, errs}
		}()
		select {
		case r := <-done:
			if r.code != exitFail || !strings.Contains(r.errs, "no process reads the FIFO") {
				t.Errorf("%s: exit %d, stderr %q", args[0], r.code, r.errs)
			}
		case <-time.After(time.Minute):
			if f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
				defer f.Close() // lets the blocked open go on
			}
			t.Fatalf("%s: blocked in the open of the FIFO", args[0])
		}
		if _, err := os.Stat(filepath.Join(dir, "out.mbox")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: the output was written: %v", args[0], err)
		}
	}
}
