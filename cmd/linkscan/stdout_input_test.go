package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// child runs the command line args in a child process (the test binary
// as linkscan, see TestMain) in dir, with the given standard input and
// output (nil: none, /dev/null), and returns its exit status and
// standard error. A child still running after a minute is killed: a
// command that reads what it writes would not end by itself.
func child(t *testing.T, dir string, stdin, stdout *os.File, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LINKSCAN_TEST_MAIN="+strings.Join(args, "\x1f"))
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if stdin != nil {
		cmd.Stdin = stdin
	}
	if stdout != nil {
		cmd.Stdout = stdout
	}
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Errorf("%q: killed after a minute: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), errb.String()
}

const stdoutMbox = "From a@example.org Mon Jan  1 00:00:00 2024\nMessage-ID: <m1@example.org>\n\nsee http://example.org/a and mid:m2@example.org\n\n" +
	"From b@example.org Mon Jan  1 00:00:00 2024\nMessage-ID: <m2@example.org>\n\nsee https://nam02.safelinks.protection.outlook.com/?url=http%3A%2F%2Fexample.org%2Fb&data=x&reserved=0\n"

// TestStdoutIsInput: every command refuses to run when its standard
// output (a shell's >> FILE or > FILE) is one of its inputs, as cat
// does: "input file is output file", exit 2, the file as it was. So
// when standard output is a file inside an input directory, or reaches
// one through a link there, or is standard input's file. Standard
// output on /dev/null or another file is fine.
func TestStdoutIsInput(t *testing.T) {
	rules, err := filepath.Abs(filterRules)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, s string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	msg := "From: a@example.org\nMessage-ID: <d1@example.org>\n\nsee http://example.org/d\n"
	write("a.mbox", stdoutMbox)
	write("Maildir/cur/1:2,S", msg)
	os.MkdirAll(filepath.Join(dir, "Maildir/new"), 0o755)
	os.MkdirAll(filepath.Join(dir, "Maildir/tmp"), 0o755)
	write("MH/1", msg)
	write("out.txt", "")
	if err := os.Link(filepath.Join(dir, "out.txt"), filepath.Join(dir, "MH/2")); err != nil {
		t.Fatal(err)
	}
	write("links/1", msg)
	if err := os.Symlink("../out.txt", filepath.Join(dir, "links/2")); err != nil {
		t.Fatal(err)
	}
	copies := []string{"a.mbox", "Maildir/cur/1:2,S", "MH/1", "links/1", "out.txt"}
	before := map[string]string{}
	for _, f := range copies {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		before[f] = string(b)
	}
	tests := []struct {
		stdout string   // the file standard output is opened on
		stdin  string   // and standard input, "" none
		in     string   // the input named in the message
		args   []string // the command line
	}{
		{"a.mbox", "", "a.mbox", []string{"scan", "a.mbox"}},
		{"a.mbox", "", "a.mbox", []string{"scan", "--format", "csv", "Maildir", "a.mbox"}},
		{"a.mbox", "", "a.mbox", []string{"index", "a.mbox"}},
		{"a.mbox", "", "a.mbox", []string{"index", "--index", "i.db", "a.mbox"}},
		{"a.mbox", "", "a.mbox", []string{"resolve", "a.mbox"}},
		{"a.mbox", "", "a.mbox", []string{"scan", "--resolve", "a.mbox"}},
		{"a.mbox", "", "a.mbox", []string{"rewrite", "--rules", rules, "a.mbox"}},
		{"a.mbox", "", "a.mbox", []string{"rewrite", "--rules", rules, "--dry-run", "a.mbox"}},
		{"a.mbox", "", "a.mbox", []string{"audit", "--offline", "--db", "h.db", "a.mbox"}},
		{"a.mbox", "a.mbox", "-", []string{"filter", "--rules", rules}},
		{"a.mbox", "a.mbox", "-", []string{"scan", "-"}},
		{"Maildir/cur/1:2,S", "", "Maildir", []string{"scan", "Maildir"}},
		{"Maildir/cur/1:2,S", "", "Maildir", []string{"rewrite", "--rules", rules, "--dry-run", "Maildir"}},
		{"out.txt", "", "MH", []string{"index", "MH"}},
		{"out.txt", "", "links", []string{"resolve", "links"}},
	}
	for _, tt := range tests {
		for _, trunc := range []bool{false, true} {
			if trunc {
				if tt.stdin != "" {
					continue // > empties standard input's file first
				}
				// > FILE empties the file: a backup to put back
				b, _ := os.ReadFile(filepath.Join(dir, tt.stdout))
				defer os.WriteFile(filepath.Join(dir, tt.stdout), b, 0o644)
			}
			flag := os.O_WRONLY | os.O_APPEND
			if trunc {
				flag = os.O_WRONLY | os.O_TRUNC
			}
			out, err := os.OpenFile(filepath.Join(dir, tt.stdout), flag, 0)
			if err != nil {
				t.Fatal(err)
			}
			var in *os.File
			if tt.stdin != "" {
				if in, err = os.Open(filepath.Join(dir, tt.stdin)); err != nil {
					t.Fatal(err)
				}
			}
			code, errs := child(t, dir, in, out, tt.args...)
			out.Close()
			if in != nil {
				in.Close()
			}
			want := "linkscan: " + tt.in + ": input file is output file\n"
			if code != exitUsage || errs != want {
				t.Errorf("%q (truncated %v): exit %d, stderr %q; want exit 2, %q", tt.args, trunc, code, errs, want)
			}
			if trunc {
				b, _ := os.ReadFile(filepath.Join(dir, tt.stdout))
				os.WriteFile(filepath.Join(dir, tt.stdout), []byte(before[tt.stdout]), 0o644)
				if len(b) != 0 {
					t.Errorf("%q: %d bytes written to the input", tt.args, len(b))
				}
			}
			for _, f := range copies {
				if b, _ := os.ReadFile(filepath.Join(dir, f)); string(b) != before[f] {
					t.Fatalf("%q (truncated %v): %s changed: %d bytes, was %d", tt.args, trunc, f, len(b), len(before[f]))
				}
			}
			for _, f := range []string{"i.db", "h.db"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
					t.Errorf("%q: %s was made", tt.args, f)
				}
			}
		}
	}
	// standard output elsewhere: a file, /dev/null, a pipe (nil)
	other, err := os.OpenFile(filepath.Join(dir, "report.txt"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	for _, out := range []*os.File{other, null, nil} {
		if code, errs := child(t, dir, nil, out, "scan", "a.mbox", "Maildir", "MH", "links"); code != exitOK {
			t.Errorf("scan to %v: exit %d, stderr %q", out, code, errs)
		}
	}
}
