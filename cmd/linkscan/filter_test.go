package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

	"github.com/linkscan/linkscan/extract"
	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/rewrite"
)

const filterRules = "../../testdata/rewrite/rules.toml"

// The filter's rules cache goes by default to $XDG_CACHE_HOME/linkscan:
// the tests, and the children and delivery programs they start, keep it
// in a directory of their own, never in the user's.
func init() {
	if os.Getenv("LINKSCAN_TEST_CACHE") == "" {
		d := filepath.Join(os.TempDir(), fmt.Sprintf("linkscan-test-cache-%d", os.Geteuid()))
		os.Setenv("XDG_CACHE_HOME", d)
		os.Setenv("LINKSCAN_TEST_CACHE", d)
	}
}

// filterMsg is a message with a Safe Links wrapper the example rules
// unwrap (and wrap as <URL:...>).
const filterMsg = "Subject: x\nMessage-ID: <f1@example.org>\n\nsee https://nam02.safelinks.protection.outlook.com/?url=http%3A%2F%2Fexample.org%2Fa&data=x&reserved=0\nbye\n"

const filterWant = "Subject: x\nMessage-ID: <f1@example.org>\n\nsee <URL:http://example.org/a>\nbye\n"

// runFilterCmd runs filter in this process with stdin in and returns the
// exit status, standard output and standard error; it checks that all of
// the input was read.
func runFilterCmd(t *testing.T, in []byte, r func(io.Reader) io.Reader, args ...string) (int, []byte, string) {
	t.Helper()
	cr := &countReader{r: bytes.NewReader(in)}
	var stdin io.Reader = cr
	if r != nil {
		stdin = r(cr)
	}
	var out, errb bytes.Buffer
	code := run(append([]string{"filter"}, args...), stdin, &out, &errb)
	if cr.n != int64(len(in)) {
		t.Errorf("filter %q: read %d bytes of %d", args, cr.n, len(in))
	}
	return code, out.Bytes(), errb.String()
}

// TestFilterGolden: every single-message case of testdata/rewrite comes
// out of the filter as the splicer's golden file says, with its "From "
// line, CRLF or bare CR line endings, read whole, one byte or half a
// buffer at a time.
func TestFilterGolden(t *testing.T) {
	inputs, _ := filepath.Glob("../../testdata/rewrite/*.input")
	n := 0
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".input")
		data, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Count(bytes.ReplaceAll(data, []byte{'\r'}, []byte{'\n'}), []byte("\nFrom ")) > 0 {
			continue // more than one message: an archive, not a delivery
		}
		want, err := os.ReadFile(strings.TrimSuffix(in, ".input") + ".golden")
		if err != nil {
			t.Fatal(err)
		}
		rules := filterRules
		if _, err := os.Stat(strings.TrimSuffix(in, ".input") + ".toml"); err == nil {
			rules = strings.TrimSuffix(in, ".input") + ".toml"
		}
		args := []string{"--rules", rules}
		for flag, on := range map[string]bool{"--break-dkim": strings.Contains(name, "break-dkim"),
			"--annotate": strings.Contains(name, "annotate"), "--headers": strings.Contains(name, "headers")} {
			if on {
				args = append(args, flag)
			}
		}
		n++
		for _, rd := range []func(io.Reader) io.Reader{nil, iotest.OneByteReader, iotest.HalfReader} {
			code, out, errs := runFilterCmd(t, data, rd, args...)
			if code != 0 || !bytes.Equal(out, want) {
				t.Errorf("%s: exit %d, stderr %q, output differs from %s.golden:\n%s", name, code, errs, name, out)
			}
		}
	}
	if n < 10 {
		t.Fatalf("only %d single-message cases", n)
	}
}

// TestFilterForms: the "From " line, CRLF and a byte-order mark are
// kept; a message nothing changes comes out byte for byte.
func TestFilterForms(t *testing.T) {
	crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
	from := "From a@example.org  Mon Jan  1 00:00:00 2001\n"
	tests := []struct{ name, in, want string }{
		{"plain", filterMsg, filterWant},
		{"from line", from + filterMsg, from + filterWant},
		{"crlf", crlf(from + filterMsg), crlf(from + filterWant)},
		{"bom", "\xef\xbb\xbf" + filterMsg, "\xef\xbb\xbf" + filterWant},
		{"nothing to change", from + "Subject: y\n\n<URL:http://example.org/> stays\n", from + "Subject: y\n\n<URL:http://example.org/> stays\n"},
		{"no final newline", strings.TrimSuffix(filterMsg, "\n"), strings.TrimSuffix(filterWant, "\n")},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		code, out, errs := runFilterCmd(t, []byte(tt.in), nil, "--rules", filterRules)
		if code != 0 || string(out) != tt.want || errs != "" {
			t.Errorf("%s: exit %d, stderr %q, output\n%q\nwant\n%q", tt.name, code, errs, out, tt.want)
		}
	}
}

// TestFilterFallback: every failure gives the input back unchanged with
// exit 0, or nothing with exit 75 under --tempfail, with the reason on
// standard error; standard input is read whole each time. The permanent
// ones (over --max-size or --max-links, not a message) give the input
// back under --tempfail too (deferred, they would bounce).
func TestFilterFallback(t *testing.T) {
	dir := t.TempDir()
	bad := writeTestFile(t, filepath.Join(dir, "bad.toml"), "[[rule]]\naction = \"mapp\"\n")
	big := []byte(filterMsg + strings.Repeat("https://nam02.safelinks.protection.outlook.com/?url=http%3A%2F%2Fexample.org%2Fb&data=x&reserved=0\n", 3000))
	junk := make([]byte, 200<<10)
	for i := range junk {
		junk[i] = byte(i*7 + i/13)
	}
	tests := []struct {
		name   string
		in     []byte
		args   []string
		reason string
		perm   bool // passed on under --tempfail too
	}{
		{"no rules", []byte(filterMsg), nil, "--rules FILE is required", false},
		{"bad flag", []byte(filterMsg), []string{"--rules", filterRules, "--frob"}, "bad flags", false},
		{"argument", []byte(filterMsg), []string{"--rules", filterRules, "x.mbox"}, "no PATH is taken", false},
		{"missing rules", []byte(filterMsg), []string{"--rules", filepath.Join(dir, "none.toml")}, "no such file", false},
		{"bad rules", []byte(filterMsg), []string{"--rules", bad}, `bad.toml:2:10: unknown action "mapp"`, false},
		{"over max-size", big, []string{"--rules", filterRules, "--max-size", "64K"}, "over --max-size 65536", true},
		{"over max-size by one", []byte(filterMsg), []string{"--rules", filterRules, "--max-size", fmt.Sprint(len(filterMsg) - 1)}, "over --max-size", true},
		{"binary junk", junk, []string{"--rules", filterRules}, "not a message", true},
		{"no header", []byte("\n\nhttp://www.example.com/?utm_source=x\n"), []string{"--rules", filterRules}, "not a message", true},
		{"over max-links", big, []string{"--rules", filterRules, "--max-links", "1", "--max-size", "1M"}, "more than 1 links", true},
		{"over max-links, bad rules", []byte(filterMsg), []string{"--rules", bad, "--max-links", "1"}, "unknown action", false},
		{"bad max-size", []byte(filterMsg), []string{"--rules", filterRules, "--max-size", "0"}, "--max-size must be positive", false},
		{"bad timeout", []byte(filterMsg), []string{"--rules", filterRules, "--timeout", "-1s"}, "--timeout must be positive", false},
		{"bad max-links", []byte(filterMsg), []string{"--rules", filterRules, "--max-links", "0"}, "--max-links must be positive", false},
	}
	for _, tt := range tests {
		for _, tempfail := range []bool{false, true} {
			args := tt.args
			if tempfail {
				args = append([]string{"--tempfail"}, args...)
			}
			code, out, errs := runFilterCmd(t, tt.in, iotest.HalfReader, args...)
			ok := code == 0 && bytes.Equal(out, tt.in) && strings.Contains(errs, "message passed on unchanged")
			if tempfail && !tt.perm {
				ok = code == exitTempFail && len(out) == 0 && strings.Contains(errs, "exit 75")
			}
			if !ok || !strings.Contains(errs, tt.reason) {
				t.Errorf("%s (tempfail %v): exit %d, %d bytes out of %d in, stderr %q; want the reason %q", tt.name, tempfail, code, len(out), len(tt.in), errs, tt.reason)
			}
		}
	}
	// exactly at the limit is rewritten
	code, out, _ := runFilterCmd(t, []byte(filterMsg), nil, "--rules", filterRules, "--max-size", fmt.Sprint(len(filterMsg)))
	if code != 0 || string(out) != filterWant {
		t.Errorf("at --max-size: exit %d, %q", code, out)
	}
}

// TestFilterWriteError: an output that cannot be written is exit 75,
// reported, never a silent short write.
func TestFilterWriteError(t *testing.T) {
	for _, in := range []string{filterMsg, "Subject: y\n\nnothing\n"} {
		cr := &countReader{r: strings.NewReader(in)}
		w := &failAfterWriter{n: 10, err: syscall.ENOSPC}
		var errb bytes.Buffer
		code := run([]string{"filter", "--rules", filterRules}, cr, w, &errb)
		if code != exitTempFail || !strings.Contains(errb.String(), "writing standard output") || cr.n != int64(len(in)) {
			t.Errorf("exit %d, stderr %q, read %d of %d", code, errb.String(), cr.n, len(in))
		}
		w = &failAfterWriter{n: 10, err: syscall.EPIPE}
		errb.Reset()
		if code := run([]string{"filter", "--rules", filterRules}, strings.NewReader(in), w, &errb); code != exitTempFail || !strings.Contains(errb.String(), "broken pipe") {
			t.Errorf("EPIPE: exit %d, stderr %q", code, errb.String())
		}
	}
}

// TestFilterSignedDKIM: DKIM-covered and signed messages are left alone
// and their links reported as skipped; --break-dkim rewrites the DKIM one.
func TestFilterSignedDKIM(t *testing.T) {
	dkim := "DKIM-Signature: v=1; a=rsa-sha256; d=example.org; s=s; h=from; bh=x; b=y\n" + filterMsg
	dir := t.TempDir()
	rep := filepath.Join(dir, "r.jsonl")
	code, out, errs := runFilterCmd(t, []byte(dkim), nil, "--rules", filterRules, "--report", rep, "--log")
	if code != 0 || string(out) != dkim || !strings.Contains(errs, "links=0 skipped=1 result=unchanged") {
		t.Errorf("dkim: exit %d, stderr %q, out %q", code, errs, out)
	}
	lines := reportLines(t, rep)
	if len(lines) != 1 || lines[0]["status"] != "skipped" || !strings.Contains(fmt.Sprint(lines[0]["reason"]), "DKIM") {
		t.Errorf("dkim report: %v", lines)
	}
	code, out, _ = runFilterCmd(t, []byte(dkim), nil, "--rules", filterRules, "--break-dkim")
	if want := "DKIM-Signature: v=1; a=rsa-sha256; d=example.org; s=s; h=from; bh=x; b=y\n" + filterWant; code != 0 || string(out) != want {
		t.Errorf("--break-dkim: exit %d, %q", code, out)
	}
	signed, err := os.ReadFile("../../testdata/rewrite/signed.input")
	if err != nil {
		t.Fatal(err)
	}
	if code, out, _ = runFilterCmd(t, signed, nil, "--rules", filterRules, "--break-dkim"); code != 0 || !bytes.Equal(out, signed) {
		t.Errorf("signed: exit %d, changed", code)
	}
}

func reportLines(t *testing.T, name string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var ls []map[string]any
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("report line %q: %v", l, err)
		}
		ls = append(ls, m)
	}
	return ls
}

// TestFilterAnnotateLog: --annotate lists the change in a header and
// leaves the body; --log writes one syslog-style line.
func TestFilterAnnotateLog(t *testing.T) {
	code, out, errs := runFilterCmd(t, []byte(filterMsg), nil, "--rules", filterRules, "--annotate", "--log")
	if code != 0 || !strings.Contains(string(out), "X-Linkscan-Rewritten: https://nam02.safelinks") || !strings.HasSuffix(string(out), "\n\nsee https://nam02.safelinks.protection.outlook.com/?url=http%3A%2F%2Fexample.org%2Fa&data=x&reserved=0\nbye\n") {
		t.Errorf("annotate: exit %d, %q", code, out)
	}
	ls := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
	if len(ls) != 1 || !strings.Contains(ls[0], fmt.Sprintf(" linkscan-filter[%d]: message-id=<f1@example.org> size=%d links=1 skipped=0 result=rewritten time=", os.Getpid(), len(filterMsg))) {
		t.Errorf("log: %q", errs)
	}
	_, _, errs = runFilterCmd(t, []byte(filterMsg), nil, "--rules", "/nonexistent.toml", "--log")
	if !strings.Contains(errs, "result=passed time=") || !strings.Contains(errs, `reason="rewrite: open /nonexistent.toml`) {
		t.Errorf("log of a failure: %q", errs)
	}
}

// TestFilterRulesCache: the first run parses the rules and writes the
// cache, the next ones read it (--log says which), with the same output;
// a rules file edited since is parsed again; a cache directory that
// cannot be written, or --rules-cache off, parses, with the same output.
func TestFilterRulesCache(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	rules := filepath.Join(t.TempDir(), "rules.toml")
	src, err := os.ReadFile(filterRules)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(rules, src, 0o644)
	check := func(name, want, from, cacheErr string, args ...string) {
		t.Helper()
		code, out, errs := runFilterCmd(t, []byte(filterMsg), nil, append([]string{"--rules", rules, "--log"}, args...)...)
		if code != 0 || string(out) != want {
			t.Errorf("%s: exit %d, stderr %q, out %q", name, code, errs, out)
		}
		if !strings.Contains(errs, " rules="+from) || (cacheErr == "") != !strings.Contains(errs, "rules-cache=") || !strings.Contains(errs, cacheErr) {
			t.Errorf("%s: log %q, want rules=%s and %q", name, errs, from, cacheErr)
		}
	}
	check("first", filterWant, "parsed", "", "--rules-cache", dir)
	for range 3 {
		check("again", filterWant, "cache", "", "--rules-cache", dir)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d files in the cache directory", len(ents))
	}
	// the same size, another content: the link is left alone now
	os.WriteFile(rules, bytes.Replace(bytes.Replace(src, []byte(`action = "unwrap"`), []byte(`action = "keep"  `), 1), []byte("max-depth = 4"), []byte("#max-depth 4 "), 1), 0o644)
	check("edited", filterMsg, "parsed", "stale", "--rules-cache", dir)
	check("edited again", filterMsg, "cache", "", "--rules-cache", dir)
	os.WriteFile(rules, src, 0o644)
	check("under a file", filterWant, "parsed", "not a directory", "--rules-cache", filepath.Join(rules, "cache"))
	check("off", filterWant, "parsed", "", "--rules-cache", "off")
	check("default", filterWant, "parsed", "")
	check("default again", filterWant, "cache", "")
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
	check("no cache directory", filterWant, "parsed", "no cache directory")
}

// TestFilterRulesCacheConcurrent: filters started at once with no cache
// yet all rewrite the message, and leave one whole cache file.
func TestFilterRulesCacheConcurrent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	var rules strings.Builder
	rules.WriteString("[[rule]]\naction = \"unwrap\"\n[[rule]]\naction = \"wrap\"\n")
	for i := range 5000 {
		fmt.Fprintf(&rules, "[[rule]]\naction = \"map\"\nfrom-host = \"host%d.example\"\nto-host = \"www%d.example.net\"\n", i, i)
	}
	rf := writeTestFile(t, filepath.Join(t.TempDir(), "rules.toml"), rules.String())
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			st, out, errs := filterChild(t, []byte(filterMsg), nil, "--rules", rf, "--rules-cache", dir, "--log")
			if st.ExitCode() != 0 || string(out) != filterWant || strings.Contains(errs, "rules-cache=") {
				t.Errorf("exit %v, stderr %q, out %q", st, errs, out)
			}
		})
	}
	wg.Wait()
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("%d files in the cache directory, want 1", len(ents))
	}
	st, out, errs := filterChild(t, []byte(filterMsg), nil, "--rules", rf, "--rules-cache", dir, "--log")
	if st.ExitCode() != 0 || string(out) != filterWant || !strings.Contains(errs, " rules=cache") {
		t.Errorf("after: exit %v, stderr %q, out %q", st, errs, out)
	}
}

// filterChild runs the filter in a child process (the test binary, see
// TestMain) with env added.
func filterChild(t *testing.T, in []byte, env []string, args ...string) (*os.ProcessState, []byte, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "LINKSCAN_TEST_MAIN="+strings.Join(append([]string{"filter"}, args...), "\x1f")), env...)
	cmd.Stdin = bytes.NewReader(in)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Run()
	return cmd.ProcessState, out.Bytes(), errb.String()
}

// TestFilterFaults: the test hook's faults, in a child process: a panic,
// an error and a sleep past --timeout give the input back (exit 0); a
// crash ends the process by SIGKILL (the mail system then keeps the
// message: see the delivery tests).
func TestFilterFaults(t *testing.T) {
	in := []byte("From a@example.org  Mon Jan  1 00:00:00 2001\n" + filterMsg)
	for _, f := range []struct{ fault, reason string }{
		{"panic=1", "internal error: injected by LINKSCAN_FILTER_FAULT"},
		{"error=1", "injected error"},
		{"sleep=1", "over --timeout 200ms"},
	} {
		st, out, errs := filterChild(t, in, []string{filterFaultEnv + "=" + f.fault}, "--rules", filterRules, "--timeout", "200ms")
		if st.ExitCode() != 0 || !bytes.Equal(out, in) || !strings.Contains(errs, f.reason) {
			t.Errorf("%s: exit %v, stderr %q, output %q", f.fault, st, errs, out)
		}
		st, out, errs = filterChild(t, in, []string{filterFaultEnv + "=" + f.fault}, "--rules", filterRules, "--timeout", "200ms", "--tempfail")
		if st.ExitCode() != exitTempFail || len(out) != 0 || !strings.Contains(errs, f.reason) {
			t.Errorf("%s --tempfail: exit %v, stderr %q, output %q", f.fault, st, errs, out)
		}
	}
	for range 3 {
		st, out, _ := filterChild(t, in, []string{filterFaultEnv + "=crash=1"}, "--rules", filterRules)
		ws, ok := st.Sys().(syscall.WaitStatus)
		if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL || len(out) >= len(filterWant) {
			t.Errorf("crash: %v, %d bytes out", st, len(out))
		}
	}
	st, out, _ := filterChild(t, in, []string{filterFaultEnv + "=crash=0"}, "--rules", filterRules)
	if st.ExitCode() != 0 || !strings.HasSuffix(string(out), filterWant) {
		t.Errorf("crash=0: %v, %q", st, out)
	}
}

// TestFilterReportLocked: filters running at once append whole lines to
// one --report file.
func TestFilterReportLocked(t *testing.T) {
	rep := filepath.Join(t.TempDir(), "r.jsonl")
	many := filterMsg + strings.Repeat("https://nam02.safelinks.protection.outlook.com/?url=http%3A%2F%2Fexample.org%2Fb&data=x&reserved=0\n", 200)
	const procs = 6
	var wg sync.WaitGroup
	for range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, _, errs := filterChild(t, []byte(many), nil, "--rules", filterRules, "--report", rep)
			if st.ExitCode() != 0 {
				t.Errorf("exit %v: %s", st, errs)
			}
		}()
	}
	wg.Wait()
	lines := reportLines(t, rep)
	if len(lines) != procs*201 {
		t.Fatalf("%d report lines, want %d", len(lines), procs*201)
	}
	for _, l := range lines {
		if l["status"] != "written" || l["path"] != "-" || l["message_id"] != "f1@example.org" {
			t.Fatalf("line %v", l)
		}
	}
}

// TestFilterReportLockHeld: a --report file whose lock another open
// file holds does not cost the rewrite (fails if the wait runs into
// --timeout and the message goes out unchanged): after --report-wait the
// rewritten message is delivered and the report's lines are printed on
// standard error; a lock let go within --report-wait gets the lines in
// the file.
func TestFilterReportLockHeld(t *testing.T) {
	rep := filepath.Join(t.TempDir(), "r.jsonl")
	fd, err := os.OpenFile(rep, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	if err := syscall.Flock(int(fd.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runFilterCmd(t, []byte(filterMsg), nil, "--rules", filterRules, "--report", rep, "--timeout", "1s", "--report-wait", "100ms", "--log")
	if code != 0 || string(out) != filterWant || !strings.Contains(errs, "result=rewritten") ||
		!strings.Contains(errs, "--report lost: {") || !strings.Contains(errs, `"message_id":"f1@example.org"`) {
		t.Errorf("report locked: exit %d, output %q, stderr %q", code, out, errs)
	}
	if b, _ := os.ReadFile(rep); len(b) != 0 {
		t.Errorf("report locked: %d bytes written to it", len(b))
	}
	// the lock let go while the filter waits: the line is in the file
	lockFD := int(fd.Fd())
	unlocked := make(chan struct{})
	go func() {
		defer close(unlocked)
		time.Sleep(200 * time.Millisecond)
		syscall.Flock(lockFD, syscall.LOCK_UN)
	}()
	code, out, errs = runFilterCmd(t, []byte(filterMsg), nil, "--rules", filterRules, "--report", rep, "--report-wait", "1m")
	<-unlocked // before fd is closed
	lines := reportLines(t, rep)
	if code != 0 || string(out) != filterWant || strings.Contains(errs, "lost") || len(lines) != 1 || lines[0]["status"] != "written" {
		t.Errorf("report let go: exit %d, output %q, stderr %q, report %v", code, out, errs, lines)
	}
}

// BenchmarkFilter is the filter's own work for one message (no process
// start): reading a rules file of 1,000 rules, a 10 KB message with 24
// links, the rewrite and the output. scripts/filter-bench.sh measures
// whole processes.
func BenchmarkFilter(b *testing.B) {
	var rules strings.Builder
	rules.WriteString("version = 1\n[[rule]]\naction = \"unwrap\"\n[[rule]]\naction = \"strip-params\"\n")
	for i := range 998 {
		fmt.Fprintf(&rules, "[[rule]]\naction = \"map\"\nfrom-host = \"host%d.example\"\nto-host = \"www%d.example.net\"\n", i, i)
	}
	rf := filepath.Join(b.TempDir(), "rules.toml")
	os.WriteFile(rf, []byte(rules.String()), 0o644)
	var msg strings.Builder
	msg.WriteString("From a@example.org  Mon Jan  1 00:00:00 2001\nFrom: a@example.org\nSubject: s\nMessage-ID: <b@example.org>\n\n")
	for i := 0; msg.Len() < 10<<10; i++ {
		msg.WriteString("the archive of the list moved to another server last year, read the thread ")
		switch i % 5 {
		case 0:
			fmt.Fprintf(&msg, "https://nam02.safelinks.protection.outlook.com/?url=http%%3A%%2F%%2Fhost%d.example%%2Fp&data=x&reserved=0", i)
		case 1:
			fmt.Fprintf(&msg, "http://host%d.example/a?utm_source=x&id=%d", i, i)
		case 2:
			fmt.Fprintf(&msg, "http://unrelated.example.org/%d.html", i)
		}
		msg.WriteString("\n")
	}
	in := []byte(msg.String())
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		var out, errb bytes.Buffer
		if code := run([]string{"filter", "--rules", rf}, bytes.NewReader(in), &out, &errb); code != 0 || bytes.Equal(out.Bytes(), in) {
			b.Fatalf("exit %d, unchanged %v: %s", code, bytes.Equal(out.Bytes(), in), errb.String())
		}
	}
}

// FuzzFilter: whatever comes in, the filter reads all of it, exits 0 and
// writes either the input itself or a message that filtering again
// leaves as it is (the rewrite settles), never an empty output for a
// non-empty input.
func FuzzFilter(f *testing.F) {
	inputs, _ := filepath.Glob("../../testdata/rewrite/*.input")
	for _, in := range inputs {
		if data, err := os.ReadFile(in); err == nil && len(data) < 16<<10 {
			f.Add(data)
		}
	}
	f.Add([]byte(filterMsg))
	f.Add([]byte("From a@b  Mon Jan  1 00:00:00 2001\r\n" + strings.ReplaceAll(filterMsg, "\n", "\r\n")))
	f.Add([]byte("\x00\xff\nFrom \n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		code, out, errs := runFilterCmd(t, in, nil, "--rules", filterRules, "--max-size", "64K")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		if len(in) > 0 && len(out) == 0 {
			t.Fatalf("empty output for %d bytes: %s", len(in), errs)
		}
		if bytes.Equal(out, in) {
			return
		}
		code, again, errs := runFilterCmd(t, out, nil, "--rules", filterRules, "--max-size", "64K")
		if code != 0 || !bytes.Equal(again, out) {
			t.Fatalf("filtering the output again changed it (exit %d, %s):\nin    %q\nout   %q\nagain %q", code, errs, in, out, again)
		}
	})
}

// TestFilterTimeoutInProcess: the rewrite goroutine left behind at
// --timeout shares nothing the command still writes (run under -race),
// and a --report that cannot be written is a line on standard error,
// the message still rewritten.
func TestFilterTimeoutInProcess(t *testing.T) {
	t.Setenv(filterFaultEnv, "sleep=1")
	code, out, errs := runFilterCmd(t, []byte(filterMsg), nil, "--rules", filterRules, "--timeout", "50ms", "--log")
	if code != 0 || string(out) != filterMsg || !strings.Contains(errs, "over --timeout 50ms") || !strings.Contains(errs, "result=passed") {
		t.Errorf("timeout: exit %d, stderr %q, out %q", code, errs, out)
	}
	t.Setenv(filterFaultEnv, "")
	code, out, errs = runFilterCmd(t, []byte(filterMsg), nil, "--rules", filterRules, "--report", t.TempDir())
	if code != 0 || string(out) != filterWant || !strings.Contains(errs, "--report ") {
		t.Errorf("report into a directory: exit %d, stderr %q, out %q", code, errs, out)
	}
}

// TestFilterArchive: with an archive rule and --db, each message of
// package rewrite's archive golden case comes out of the filter as
// rewrite writes it (its dead links the copies captured nearest its
// Date); without a history, the message goes on unchanged (exit 0), or
// nothing and 75 with --tempfail.
func TestFilterArchive(t *testing.T) {
	dir := t.TempDir()
	db, in, host := archiveInput(t, dir)
	split := func(b []byte) [][]byte {
		var ms [][]byte
		for len(b) > 0 {
			i := bytes.Index(b[1:], []byte("\nFrom "))
			if i < 0 {
				ms = append(ms, b)
				break
			}
			ms = append(ms, b[:i+2])
			b = b[i+2:]
		}
		return ms
	}
	msgs := split(readFile(t, in))
	want := split(bytes.ReplaceAll(readFile(t, archiveTD+"archive.golden"), []byte(archivePlaceholder), []byte(host)))
	if len(msgs) != 5 || len(want) != len(msgs) {
		t.Fatalf("%d messages, %d in the golden file", len(msgs), len(want))
	}
	rules := archiveTD + "archive.toml"
	changed := 0
	for i, m := range msgs {
		code, out, errs := runFilterCmd(t, m, nil, "--rules", rules, "--db", db, "--log")
		if code != 0 || !bytes.Equal(out, want[i]) || !strings.Contains(errs, "result=") || strings.Contains(errs, "result=passed") {
			t.Errorf("message %d: exit %d, stderr %q, output\n%s\nwant\n%s", i, code, errs, out, want[i])
		}
		if !bytes.Equal(out, m) {
			changed++
		}
	}
	if changed < 2 {
		t.Errorf("%d messages rewritten", changed)
	}
	missing := filepath.Join(dir, "none.db")
	code, out, errs := runFilterCmd(t, msgs[0], nil, "--rules", rules, "--db", missing)
	if code != 0 || !bytes.Equal(out, msgs[0]) || !strings.Contains(errs, "does not exist") || !strings.Contains(errs, "passed on unchanged") {
		t.Errorf("no history: exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("the missing history was created")
	}
	code, out, errs = runFilterCmd(t, msgs[0], nil, "--rules", rules, "--db", missing, "--tempfail")
	if code != exitTempFail || len(out) != 0 || !strings.Contains(errs, "does not exist") {
		t.Errorf("no history, --tempfail: exit %d, stderr %q", code, errs)
	}
	// rules without an archive rule touch no history
	code, out, _ = runFilterCmd(t, []byte(filterMsg), nil, "--rules", filterRules, "--db", missing)
	if code != 0 || string(out) != filterWant {
		t.Errorf("no archive rule: exit %d, %q", code, out)
	}
}

// TestFilterMaxLinks: a message with more links than --max-links (a link
// over 100 bytes counting once per 100 bytes begun) is passed on
// unchanged with the reason, and logged; at the limit it is rewritten.
// Links of HTML attributes count too.
// The default, 10,000, passes a link-dense message on without rewriting
// it (330,000 links would take 1 GB).
func TestFilterMaxLinks(t *testing.T) {
	link := "https://nam02.safelinks.protection.outlook.com/?url=http%3A%2F%2Fexample.org%2Fa&data=x&reserved=0\n" // 99 bytes: one
	long := "http://example.org/" + strings.Repeat("q", 230) + "?utm_source=x\n"                                   // 256 bytes: three
	head := "Subject: x\nMessage-ID: <ml@example.org>\n\n"
	tests := []struct {
		name     string
		body     string
		maxLinks string
		rewrite  bool
	}{
		{"12 links, max 12", strings.Repeat(link, 12), "12", true},
		{"12 links, max 11", strings.Repeat(link, 12), "11", false},
		{"long link, max 3", long, "3", true},
		{"long link, max 2", long, "2", false},
		{"two parts, max 4", "", "4", true},
		{"two parts, max 3", "", "3", false},
		{"html hrefs, max 3", "html", "3", true},
		{"html hrefs, max 2", "html", "2", false},
	}
	href := `<a href="https://nam02.safelinks.protection.outlook.com/?url=http%3A%2F%2Fexample.org%2Fh&amp;data=x&amp;reserved=0">here</a>`
	html := "MIME-Version: 1.0\nContent-Type: text/html\n\n<p>" + href + " " + href + " " + href + "</p>\n"
	mp := "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/plain\n\n" +
		link + link + "--b\nContent-Type: text/plain\n\n" + link + link + "--b--\n"
	for _, tt := range tests {
		in := []byte(head + tt.body)
		switch tt.body {
		case "":
			in = []byte(head[:len(head)-1] + mp)
		case "html":
			in = []byte(head[:len(head)-1] + html)
		}
		code, out, errs := runFilterCmd(t, in, iotest.OneByteReader, "--rules", filterRules, "--max-links", tt.maxLinks, "--log")
		if code != 0 {
			t.Errorf("%s: exit %d, stderr %q", tt.name, code, errs)
			continue
		}
		if tt.rewrite {
			if bytes.Equal(out, in) || !strings.Contains(errs, "result=rewritten") {
				t.Errorf("%s: not rewritten; stderr %q", tt.name, errs)
			}
			continue
		}
		if !bytes.Equal(out, in) || !strings.Contains(errs, "more than "+tt.maxLinks+" links (--max-links); message passed on unchanged") ||
			!strings.Contains(errs, "result=passed") {
			t.Errorf("%s: want the message unchanged with the reason; got %d bytes of %d, stderr %q", tt.name, len(out), len(in), errs)
		}
	}
	// the default: a message of 10,001 links, every one of them to
	// rewrite, goes on unchanged
	var b strings.Builder
	b.WriteString(head)
	for i := range 10001 {
		fmt.Fprintf(&b, "http://www.example.com/%d?utm_source=x\n", i)
	}
	in := []byte(b.String())
	code, out, errs := runFilterCmd(t, in, nil, "--rules", filterRules)
	if code != 0 || !bytes.Equal(out, in) || !strings.Contains(errs, "more than 10000 links") {
		t.Errorf("10,001 links: exit %d, %d bytes of %d, stderr %q", code, len(out), len(in), errs)
	}
}

// TestFilterOversizeNoTemp: a message over --max-size is passed on
// whole with exit 0 even when no temporary file can be made (TMPDIR a
// missing directory): what was read, then the rest of standard input
// copied as it comes, and with --tempfail too (a permanent failure).
// Standard input failing in the middle of the copy is exit 75, said.
func TestFilterOversizeNoTemp(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	big := []byte(filterMsg + strings.Repeat("https://nam02.safelinks.protection.outlook.com/?url=http%3A%2F%2Fexample.org%2Fb&data=x&reserved=0\n", 5000))
	for _, r := range []func(io.Reader) io.Reader{nil, iotest.OneByteReader, iotest.HalfReader} {
		code, out, errs := runFilterCmd(t, big, r, "--rules", filterRules, "--max-size", "64K", "--log")
		if code != 0 || !bytes.Equal(out, big) || !strings.Contains(errs, "over --max-size 65536; message passed on unchanged") ||
			!strings.Contains(errs, fmt.Sprintf("size=%d ", len(big))) {
			t.Errorf("oversize, no TMPDIR: exit %d, %d bytes out of %d, stderr %q", code, len(out), len(big), errs)
		}
	}
	code, out, errs := runFilterCmd(t, big, nil, "--rules", filterRules, "--max-size", "64K", "--tempfail")
	if code != 0 || !bytes.Equal(out, big) {
		t.Errorf("oversize, --tempfail: exit %d, %d bytes out, stderr %q", code, len(out), errs)
	}
	// a bad flag and an oversize message: passed on whole too
	code, out, errs = runFilterCmd(t, big, nil, "--rules", filterRules, "--max-size", "64K", "--frob")
	if code != 0 || !bytes.Equal(out, big) {
		t.Errorf("oversize, bad flag: exit %d, %d bytes out of %d, stderr %q", code, len(out), len(big), errs)
	}
	// standard input fails after 100 KB: what was written is short, so 75
	var o, e bytes.Buffer
	in := io.MultiReader(bytes.NewReader(big[:100<<10]), iotest.ErrReader(fmt.Errorf("disk gone")))
	code = run([]string{"filter", "--rules", filterRules, "--max-size", "64K"}, in, &o, &e)
	if code != exitTempFail || !strings.Contains(e.String(), "reading standard input: disk gone") {
		t.Errorf("oversize, input failing: exit %d, %d bytes out, stderr %q", code, o.Len(), e.String())
	}
}

// TestFilterReportAfterWrite: the --report lines of a message are
// appended once it is written; a message whose output fails (exit 75:
// the mail system keeps it and delivers it again) leaves none, so a
// redelivery does not report its changes twice.
func TestFilterReportAfterWrite(t *testing.T) {
	rep := filepath.Join(t.TempDir(), "r.jsonl")
	var errb bytes.Buffer
	code := run([]string{"filter", "--rules", filterRules, "--report", rep}, strings.NewReader(filterMsg), failWriter{syscall.ENOSPC}, &errb)
	if code != exitTempFail {
		t.Fatalf("output failing: exit %d, want %d: %s", code, exitTempFail, errb.String())
	}
	if b, _ := os.ReadFile(rep); len(b) != 0 {
		t.Errorf("output failing: %d bytes of report written: %q", len(b), b)
	}
	code, out, errs := runFilterCmd(t, []byte(filterMsg), nil, "--rules", filterRules, "--report", rep)
	if lines := reportLines(t, rep); code != 0 || string(out) != filterWant || len(lines) != 1 {
		t.Errorf("delivered again: exit %d, %d report lines, stderr %q", code, len(lines), errs)
	}
}

// TestFilterPanicAfterOutput: a panic once the output began (the test
// hook's panic-write, halfway through it) writes nothing more and exits
// 75, so that the mail system throws the half away and delivers again
// (fails if the input is passed on after the half: the message twice,
// the first cut); a panic once the output is whole (panic-late) keeps
// it and its exit, the message delivered once. Rewritten, unchanged and
// copied through (over --max-size), with and without --tempfail; all of
// standard input is read.
func TestFilterPanicAfterOutput(t *testing.T) {
	in := []byte("From a@example.org  Mon Jan  1 00:00:00 2001\n" + filterMsg)
	rewritten := "From a@example.org  Mon Jan  1 00:00:00 2001\n" + filterWant
	same := []byte("Subject: y\nMessage-ID: <f2@example.org>\n\nno link here\n") // nothing to change
	big := []byte(filterMsg + strings.Repeat("x\n", 40<<10))                     // over --max-size 64K
	for _, c := range []struct {
		name string
		in   []byte
		want string
		args []string
	}{
		{"rewritten", in, rewritten, nil},
		{"unchanged", same, string(same), nil},
		{"copied through", big, string(big), []string{"--max-size", "64K"}},
	} {
		for _, tempfail := range []bool{false, true} {
			args := append([]string{"--rules", filterRules, "--log"}, c.args...)
			if tempfail {
				args = append(args, "--tempfail")
			}
			t.Setenv(filterFaultEnv, "panic-write=1")
			code, out, errs := runFilterCmd(t, c.in, nil, args...)
			if code != exitTempFail || len(out) == 0 || len(out) >= len(c.want) || !strings.HasPrefix(c.want, string(out)) ||
				!strings.Contains(errs, "internal error: injected by "+filterFaultEnv+" while writing") || !strings.Contains(errs, "result=tempfail") {
				t.Errorf("%s, tempfail %v, panic while writing: exit %d, %d bytes out of %d (a prefix: %v), stderr %q",
					c.name, tempfail, code, len(out), len(c.want), strings.HasPrefix(c.want, string(out)), errs)
			}
			t.Setenv(filterFaultEnv, "panic-late=1")
			code, out, errs = runFilterCmd(t, c.in, nil, args...)
			if code != 0 || string(out) != c.want || !strings.Contains(errs, "internal error: injected by "+filterFaultEnv+" after the output") {
				t.Errorf("%s, tempfail %v, panic after the output: exit %d, %d bytes out of %d (as wanted: %v), stderr %q",
					c.name, tempfail, code, len(out), len(c.want), string(out) == c.want, errs)
			}
		}
	}
}

// boundMessages reads every message of testdata/ and ../shared/corpus.
func boundMessages(t *testing.T, each func(m *mailbox.Message)) {
	t.Helper()
	n := 0
	for _, root := range []string{"../../testdata", "../../../shared/corpus"} {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			rd, err := mailbox.Open(p, &mailbox.Options{})
			if err != nil {
				return nil
			}
			defer rd.Close()
			for {
				m, err := rd.Next()
				if m != nil {
					each(m)
					m.Release()
					n++
				}
				if err != nil {
					return nil
				}
			}
		})
	}
	if n < 100 {
		t.Fatalf("only %d messages read", n)
	}
}

// linksBoundOptions are extract options the bound must hold for.
var linksBoundOptions = []rewrite.Options{{}, {Extract: extract.Options{NoHeuristic: true}},
	{Extract: extract.Options{Emails: true, BareDomains: true, Refang: true, DataURIs: true}},
	{Extract: extract.Options{MaxLinkLength: 20, MaxJoinLines: 50}}}

// TestLinksBound: countLinks never exceeds linksBound, with each of
// linksBoundOptions, on every message of testdata and the shared corpus,
// and the bound spares the count of messages with links (some of them
// with more bytes of text than --max-links, which the bound of their
// length alone did not spare).
func TestLinksBound(t *testing.T) {
	spared, sparedLong := 0, 0
	boundMessages(t, func(m *mailbox.Message) {
		m.Parse()
		for i := range linksBoundOptions {
			b := linksBound(m, &linksBoundOptions[i].Extract)
			if c := countLinks(m, &linksBoundOptions[i], 1<<30); c > b {
				t.Errorf("%s#%d, options %d: %d links counted, bound %d", m.Path, m.Offset, i, c, b)
			}
		}
		if c := countLinks(m, &linksBoundOptions[0], 1<<30); c > 0 && linksBound(m, &linksBoundOptions[0].Extract) <= filterMaxLinks {
			spared++
			text := 0
			for _, p := range m.Parts() {
				text += len(p.Text)
			}
			if text > filterMaxLinks {
				sparedLong++
			}
		}
	})
	if spared == 0 || sparedLong == 0 {
		t.Errorf("the bound spared the count of %d messages, %d of them with more text than --max-links", spared, sparedLong)
	}
}

// FuzzLinksBound: countLinks never exceeds linksBound, on any body as
// plain text, quoted-printable and HTML, with each of linksBoundOptions.
func FuzzLinksBound(f *testing.F) {
	f.Add([]byte("see <URL:http://a.example/b\n c> and www.x.org, a@b.example\n"))
	f.Add([]byte(`<a href="http://a/">x</a> http://b/ &lt;http://c/&gt;`))
	f.Add([]byte("hxxp://evil[.]example/ mid:a@b cid:x news:comp.lang\n"))
	f.Add([]byte("a.b.c x@y.z ftp.q.r wwww.s.t http://" + strings.Repeat("p", 250) + "\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, h := range []string{"Content-Type: text/plain\n", "Content-Type: text/plain\nContent-Transfer-Encoding: quoted-printable\n",
			"Content-Type: text/html\n"} {
			raw := append([]byte("From: a@b\nMIME-Version: 1.0\n"+h+"\n"), body...)
			m := mailbox.ReadMessage(raw, "-", &mailbox.Options{MaxMessageSize: -1})
			for i := range linksBoundOptions {
				b := linksBound(m, &linksBoundOptions[i].Extract)
				if c := countLinks(m, &linksBoundOptions[i], 1<<30); c > b {
					t.Fatalf("%q, options %d: %d links counted, bound %d", raw, i, c, b)
				}
			}
			m.Release()
		}
	})
}

// TestFilterReportNotRules: --report may not be the rules file (also
// through a symbolic link) nor lie in the rules cache directory
// (so that it cannot overwrite them): the message passes unchanged, the rules stay as they
// were, and every later message is still rewritten.
func TestFilterReportNotRules(t *testing.T) {
	top := t.TempDir()
	rules := filepath.Join(top, "rules.toml")
	src, err := os.ReadFile(filterRules)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(rules, src, 0o644)
	link := filepath.Join(top, "link.toml")
	os.Symlink(rules, link)
	cache := filepath.Join(top, "cache")
	for _, args := range [][]string{
		{"--report", rules},
		{"--report", link},
		{"--report", filepath.Join(top, ".", "rules.toml"), "--rules-cache", "off"},
		{"--report", filepath.Join(cache, "r.json"), "--rules-cache", cache},
	} {
		code, out, errs := runFilterCmd(t, []byte(filterMsg), nil, append([]string{"--rules", rules, "--rules-cache", "off"}, args...)...)
		if code != 0 || string(out) != filterMsg || !strings.Contains(errs, "--report") {
			t.Errorf("%q: exit %d, stderr %q, out %q", args, code, errs, out)
		}
	}
	if b, _ := os.ReadFile(rules); !bytes.Equal(b, src) {
		t.Fatal("the rules file was written")
	}
	code, out, errs := runFilterCmd(t, []byte(filterMsg), nil, "--rules", rules, "--rules-cache", "off")
	if code != 0 || string(out) != filterWant {
		t.Errorf("after: exit %d, stderr %q", code, errs)
	}
}

// TestFilterLinksFoundOnce: the filter looks for a message's links
// before the rewrite (countLinks) only when linksBound says the message
// could be over --max-links: a 20 KB message with a hundred links, more
// bytes of text than --max-links, has them found once, by the rewrite
// (the bound of its length alone had them counted first: twice); one of
// 10,001 links is counted (and passed on), and so is, still, one with
// more than a megabyte of text (its length over linkUnit is past the
// default --max-links). Shown to fail with linksBound's length bound
// back.
func TestFilterLinksFoundOnce(t *testing.T) {
	counts := 0
	countLinksHook = func() { counts++ }
	defer func() { countLinksHook = nil }()
	head := "From: a@example.org\nSubject: s\nMessage-ID: <once@example.org>\n\n"
	body := func(size int) string {
		var b strings.Builder
		for i := 0; b.Len() < size; i++ {
			b.WriteString("the archive of the list moved to another server last year, read the thread ")
			if i%2 == 0 {
				fmt.Fprintf(&b, "http://host%d.example/a?utm_source=x&id=%d", i, i)
			}
			b.WriteString("\n")
		}
		return b.String()
	}
	var dense strings.Builder
	for i := range 10001 {
		fmt.Fprintf(&dense, "http://www.example.com/%d?utm_source=x\n", i)
	}
	for _, tc := range []struct {
		name    string
		body    string
		counted int
		result  string
	}{
		{"20 KB, 100 links", body(20 << 10), 0, "result=rewritten"},
		{"10,001 links", dense.String(), 1, "result=passed"},
		{"1.2 MB of text", body(1200 << 10), 1, "result=rewritten"},
	} {
		counts = 0
		in := []byte(head + tc.body)
		code, out, errs := runFilterCmd(t, in, nil, "--rules", filterRules, "--log")
		if code != 0 || !strings.Contains(errs, tc.result) || (tc.result == "result=rewritten") == bytes.Equal(out, in) {
			t.Errorf("%s: exit %d, stderr %q", tc.name, code, errs)
		}
		if counts != tc.counted {
			t.Errorf("%s: the links were counted %d times before the rewrite, want %d", tc.name, counts, tc.counted)
		}
	}
}

// TestLinksBoundLongLines: the bound holds on lines longer than
// extract's window (64 KiB), scanned in pieces, with links and triggers
// on each side of every piece's end.
func TestLinksBoundLongLines(t *testing.T) {
	for _, sep := range []string{" ", "", "\n"} {
		var b strings.Builder
		for b.Len() < 300<<10 {
			for _, s := range []string{"http://a.example/" + strings.Repeat("p", 150), "www.b.example", "x@y.example", "c.d", "mid:e@f", ":", "ftp.g"} {
				b.WriteString(s + sep)
			}
		}
		raw := []byte("From: a@b\nContent-Type: text/plain\n\n" + b.String())
		m := mailbox.ReadMessage(raw, "-", &mailbox.Options{MaxMessageSize: -1})
		for i := range linksBoundOptions {
			bound := linksBound(m, &linksBoundOptions[i].Extract)
			if c := countLinks(m, &linksBoundOptions[i], 1<<30); c > bound || c == 0 {
				t.Errorf("separator %q, options %d: %d links counted, bound %d", sep, i, c, bound)
			}
		}
		m.Release()
	}
}

// BenchmarkFilterText: the filter on a 64 KB plain-text message with 400
// links and two rules (unwrap, strip-params), no rules cache: more text
// than --max-links, so that before linksBound counted triggers its links
// were looked for twice (docs/filter.md, "Memory").
func BenchmarkFilterText(b *testing.B) {
	rf := filepath.Join(b.TempDir(), "rules.toml")
	os.WriteFile(rf, []byte("version = 1\n[[rule]]\naction = \"unwrap\"\n[[rule]]\naction = \"strip-params\"\n"), 0o644)
	var msg strings.Builder
	msg.WriteString("From: a@example.org\nSubject: s\nMessage-ID: <t@example.org>\n\n")
	for i := 0; msg.Len() < 64<<10; i++ {
		msg.WriteString("the archive of the list moved to another server last year, read the thread ")
		if i%2 == 0 {
			fmt.Fprintf(&msg, "http://host%d.example/a?utm_source=x&id=%d", i, i)
		}
		msg.WriteString("\n")
	}
	in := []byte(msg.String())
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		var out, errb bytes.Buffer
		if code := run([]string{"filter", "--rules", rf, "--rules-cache", "off"}, bytes.NewReader(in), &out, &errb); code != 0 || bytes.Equal(out.Bytes(), in) {
			b.Fatalf("exit %d, unchanged %v: %s", code, bytes.Equal(out.Bytes(), in), errb.String())
		}
	}
}
