package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linkscan/linkscan/internal/corpus"
	"github.com/linkscan/linkscan/internal/testutil"
	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/record"
)

// mboxMessage is one mbox message with the given Message-ID and body.
func mboxMessage(id, body string) string {
	return "From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <" + id + ">\nSubject: s\n\n" + body + "\n\n"
}

func writeTestFile(t *testing.T, name, s string) string {
	t.Helper()
	if err := os.WriteFile(name, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

func tmpLeft(t *testing.T, dir string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*"))
	return m
}

// TestOutputNeverDestroys: -o refuses an output that is an input, keeps
// the old file when nothing could be read, keeps what was read apart
// when some input could not be, and replaces the file only at the end.
func TestOutputNeverDestroys(t *testing.T) {
	dir := t.TempDir()
	archive := writeTestFile(t, filepath.Join(dir, "x.mbox"), mboxMessage("a@x", "http://example.org/a"))
	sym := filepath.Join(dir, "sym.mbox")
	hard := filepath.Join(dir, "hard.mbox")
	if err := os.Symlink("x.mbox", sym); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(archive, hard); err != nil {
		t.Fatal(err)
	}
	orig, _ := os.ReadFile(archive)
	for _, args := range [][]string{
		{"scan", "-o", archive, archive},
		{"scan", "-o", sym, archive},
		{"scan", "-o", archive, sym},
		{"scan", "-o", hard, archive},
		{"scan", "-o", archive, dir},
		{"resolve", "-o", archive, archive},
	} {
		code, _, errs := runCmd("", args...)
		if code != exitUsage || !strings.Contains(errs, "input") {
			t.Errorf("%q: exit %d, stderr %q; want 2 and a refusal", args, code, errs)
		}
		if b, _ := os.ReadFile(archive); !bytes.Equal(b, orig) {
			t.Fatalf("%q changed the archive to %q", args, b)
		}
	}

	keep := writeTestFile(t, filepath.Join(dir, "keep.txt"), "precious\n")
	missing := filepath.Join(dir, "nonexistent")
	code, _, errs := runCmd("", "scan", "-o", keep, missing)
	if b, _ := os.ReadFile(keep); code != exitFail || string(b) != "precious\n" || !strings.Contains(errs, "left as it was") {
		t.Errorf("-o keep.txt /nonexistent: exit %d, keep.txt %q, stderr %q", code, b, errs)
	}
	if _, err := os.Stat(keep + ".partial"); err == nil {
		t.Errorf("an empty .partial was left")
	}

	code, _, errs = runCmd("", "scan", "--format", "jsonl", "-o", keep, archive, missing)
	partial, _ := os.ReadFile(keep + ".partial")
	if b, _ := os.ReadFile(keep); code != exitFail || string(b) != "precious\n" || !strings.Contains(string(partial), "http://example.org/a") {
		t.Errorf("-o with a missing input: exit %d, keep.txt %q, partial %q, stderr %q", code, b, partial, errs)
	}

	code, _, errs = runCmd("", "scan", "--format", "jsonl", "-o", keep, archive)
	if b, _ := os.ReadFile(keep); code != 0 || !strings.Contains(string(b), "http://example.org/a") {
		t.Errorf("-o: exit %d, wrote %q, stderr %q", code, b, errs)
	}
	if l := tmpLeft(t, dir); len(l) != 0 {
		t.Errorf("temporary files left: %q", l)
	}
}

// failAfterWriter fails every write after the first n bytes with err.
type failAfterWriter struct {
	n      int
	err    error
	failed bool
	after  int // writes tried after the first failure
}

func (f *failAfterWriter) Write(p []byte) (int, error) {
	if f.failed {
		f.after++
		return 0, f.err
	}
	if len(p) > f.n {
		n := f.n
		f.n, f.failed = 0, true
		return n, f.err
	}
	f.n -= len(p)
	return len(p), nil
}

// runTo runs the command with standard output w.
func runTo(w io.Writer, stdin io.Reader, args ...string) (int, string) {
	var errb bytes.Buffer
	code := run(args, stdin, w, &errb)
	return code, errb.String()
}

// corpusFile writes a generated mbox of about size bytes.
func corpusFile(t *testing.T, size int) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "c.mbox")
	w, err := os.Create(f)
	if err != nil {
		t.Fatal(err)
	}
	corpus.Write(w, int64(size), 5)
	w.Close()
	return f
}

// TestWriteErrors: a write that fails after N bytes, in every command and
// every format, gives exit 1 and a message; an -o file is then left as it
// was.
func TestWriteErrors(t *testing.T) {
	in := corpusFile(t, 256<<10)
	formats := []string{"jsonl", "csv", "text", "summary", "summary-json"}
	for _, format := range formats {
		for _, unique := range []bool{false, true} {
			args := []string{"scan", "--format", format, in}
			if unique {
				args = append(args, "--unique")
			}
			_, all, _ := runCmd("", args...)
			for _, n := range []int{0, 100, len(all) / 2, len(all) - 1} {
				code, errs := runTo(&failAfterWriter{n: n, err: syscall.ENOSPC}, nil, args...)
				if code != exitFail || !strings.Contains(errs, "no space left") {
					t.Errorf("%q failing after %d bytes: exit %d, stderr %q", args, n, code, errs)
				}
			}
		}
	}
	for _, args := range [][]string{
		{"help"}, {"help", "scan"}, {"--help"}, {"--version"}, {"scan", "--help"},
		{"uri", "canon", "http://a/"}, {"uri", "resolve", "http://a/", "b"}, {"uri", "parse", "http://a/"},
		{"uri", "parse", "--json", "http://a/"},
	} {
		code, errs := runTo(&failAfterWriter{err: syscall.ENOSPC}, nil, args...)
		if code == 0 || !strings.Contains(errs, "no space left") {
			t.Errorf("%q on a full disk: exit %d, stderr %q", args, code, errs)
		}
	}
	code, errs := runTo(&failAfterWriter{err: syscall.ENOSPC}, strings.NewReader("http://a/\nhttp://b/\n"), "uri", "canon")
	if code == 0 || !strings.Contains(errs, "no space left") {
		t.Errorf("uri canon from standard input on a full disk: exit %d, stderr %q", code, errs)
	}

	devFull := fullDevice(t)
	for _, format := range formats {
		code, _, errs := runCmd("", "scan", "--format", format, "-o", devFull, in)
		if code != exitFail || !strings.Contains(errs, devFull) || !strings.Contains(errs, "no space left") {
			t.Errorf("-o %s --format %s: exit %d, stderr %q", devFull, format, code, errs)
		}
	}
	full, err := os.OpenFile(devFull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	for _, args := range [][]string{{"help", "scan"}, {"uri", "canon", "http://a/"}, {"scan", "--format", "csv", in}} {
		if code, errs := runTo(full, nil, args...); code == 0 || !strings.Contains(errs, "no space left") {
			t.Errorf("%q > /dev/full: exit %d, stderr %q", args, code, errs)
		}
	}
}

// fullDevice returns /dev/full or a device like it (testutil.FullDevice).
func fullDevice(t *testing.T) string { return testutil.FullDevice(t) }

// countReader counts the bytes read from it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// TestClosedPipe: when the reader of the output goes away (| head -1),
// the scan stops reading and ends quietly.
func TestClosedPipe(t *testing.T) {
	data, err := os.ReadFile(corpusFile(t, 8<<20))
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"jsonl", "csv", "text"} {
		in := &countReader{r: bytes.NewReader(data)}
		w := &failAfterWriter{n: 1000, err: syscall.EPIPE}
		code, errs := runTo(w, in, "scan", "--jobs", "2", "--format", format, "-")
		if code != 0 || errs != "" {
			t.Errorf("%s: exit %d, stderr %q; want a quiet end", format, code, errs)
		}
		if in.n > int64(len(data))/2 {
			t.Errorf("%s: %d of %d bytes read after the pipe closed", format, in.n, len(data))
		}
		if !w.failed || w.after > 0 {
			t.Errorf("%s: %d writes after the pipe closed", format, w.after)
		}
	}
	for _, format := range []string{"summary", "summary-json"} {
		code, errs := runTo(&failAfterWriter{err: syscall.EPIPE}, bytes.NewReader(data), "scan", "--format", format, "-")
		if code != 0 || errs != "" {
			t.Errorf("%s: exit %d, stderr %q; want a quiet end", format, code, errs)
		}
	}
}

// TestExitStatus: 0 all read (damage read past among it, or what
// --damage-exit says), 1 an input not read, 2 usage.
func TestExitStatus(t *testing.T) {
	dir := t.TempDir()
	good := writeTestFile(t, filepath.Join(dir, "good.mbox"), mboxMessage("a@x", "http://example.org/"))
	damaged := writeTestFile(t, filepath.Join(dir, "bad.eml"), "Message-ID: <b@x>\nContent-Type: multipart/mixed; boundary=b1\n\n--b1\n\nhttp://example.org/x\n")
	missing := filepath.Join(dir, "nonexistent")
	tests := []struct {
		args []string
		code int
	}{
		{[]string{"scan", good}, 0},
		{[]string{"scan", good, missing}, 1},
		{[]string{"scan", missing, good}, 1},
		{[]string{"scan", missing}, 1},
		{[]string{"scan", "--as", "text", good, missing}, 1},
		{[]string{"scan", damaged}, 0},
		{[]string{"scan", damaged, missing}, 1},
		{[]string{"scan", "--damage-exit", "4", damaged}, 4},
		{[]string{"scan", "--damage-exit", "4", damaged, missing}, 1},
		{[]string{"scan", "--damage-exit", "0", damaged}, 0},
		{[]string{"scan", "--damage-exit", "5", damaged}, 5},
		// the codes that mean something else are refused
		{[]string{"scan", "--damage-exit", "1", damaged}, 2},
		{[]string{"scan", "--damage-exit", "2", damaged}, 2},
		{[]string{"scan", "--damage-exit", "3", damaged}, 2},
		{[]string{"index", "--damage-exit", "2", damaged}, 2},
		{[]string{"resolve", "--damage-exit", "1", damaged}, 2},
		{[]string{"scan", "--quiet", damaged}, 0},
		{[]string{"scan", "--quiet", "--damage-exit", "4", damaged}, 4},
		{[]string{"scan", "--damage-exit", "-1", damaged}, 2},
		{[]string{"scan", "--nope", good}, 2},
	}
	for _, tt := range tests {
		if code, _, errs := runCmd("", tt.args...); code != tt.code {
			t.Errorf("%q: exit %d, want %d (stderr %q)", tt.args, code, tt.code, errs)
		}
	}
	help := helpText(t, "scan")
	for _, want := range []string{"Exit status", "--damage-exit 4", "--quiet", "--warn-limit"} {
		if !strings.Contains(help, want) {
			t.Errorf("help scan lacks %q", want)
		}
	}
}

func helpText(t *testing.T, cmd string) string {
	t.Helper()
	code, out, _ := runCmd("", "help", cmd)
	if code != 0 {
		t.Fatalf("help %s: exit %d", cmd, code)
	}
	return out
}

// TestQuietAndLimit: --quiet prints only the counts; a problem text seen
// more than --warn-limit times is printed that many times and then
// counted in one line.
func TestQuietAndLimit(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 25 {
		// a header line without a colon: the same problem text each time
		fmt.Fprintf(&b, "From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <m%d@x>\nno colon here\n\nhttp://example.org/%d\n\n", i, i)
	}
	in := writeTestFile(t, filepath.Join(dir, "many.mbox"), b.String())
	code, _, errs := runCmd("", "scan", "--format", "jsonl", "--warn-limit", "3", in)
	if code != exitOK {
		t.Errorf("exit %d", code)
	}
	if n := strings.Count(errs, "without a colon"); n != 4 || !strings.Contains(errs, "and 22 more like this: header line without a colon") {
		t.Errorf("--warn-limit 3: %d lines with the text:\n%s", n, errs)
	}
	if !strings.Contains(errs, "25 messages damaged (25 problems)") {
		t.Errorf("no final count:\n%s", errs)
	}
	_, _, errs = runCmd("", "scan", "--format", "jsonl", "--warn-limit", "0", in)
	if n := strings.Count(errs, "without a colon"); n != 25 {
		t.Errorf("--warn-limit 0: %d lines, want 25", n)
	}
	code, _, errs = runCmd("", "scan", "--format", "jsonl", "--quiet", in, filepath.Join(dir, "nonexistent"))
	if code != exitFail || strings.Contains(errs, "without a colon") || !strings.Contains(errs, "nonexistent") ||
		!strings.Contains(errs, "1 input could not be read, 25 messages damaged (25 problems)") {
		t.Errorf("--quiet: exit %d\n%s", code, errs)
	}
}

// TestHostileText: control characters from an archive reach neither the
// terminal through standard error nor the text output.
func TestHostileText(t *testing.T) {
	dir := t.TempDir()
	evil := "From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <\x1b]0;owned\x07@x>\nno colon \x1b[2J\x00 here\n\nhttp://example.org/\x9b\n\n"
	in := writeTestFile(t, filepath.Join(dir, "evil\x1b[31m.mbox"), evil)
	for _, format := range []string{"text", "summary"} {
		_, out, errs := runCmd("", "scan", "--format", format, in)
		for _, s := range []string{out, errs} {
			if strings.ContainsAny(s, "\x1b\x00\x07") || strings.Contains(s, "\u009b") {
				t.Errorf("%s: control characters printed: %q", format, s)
			}
		}
		if format == "text" && (!strings.Contains(out, `evil\x1b[31m.mbox#0  <\x1b]0;owned\x07@x>`) || !strings.Contains(errs, `evil\x1b[31m.mbox#0 <\x1b]0;owned\x07@x>: offset`)) {
			t.Errorf("escapes missing:\nstdout %q\nstderr %q", out, errs)
		}
	}
	_, _, errs := runCmd("", "scan", filepath.Join(dir, "no\x1bsuch"))
	if strings.Contains(errs, "\x1b") {
		t.Errorf("file name echoed raw: %q", errs)
	}
}

// TestProgressWithWarnings: a warning is never written after the bar on
// the same line: the bar is cleared first.
func TestProgressWithWarnings(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <m%d@x>\nno colon here %d\n\n%s\n\n", i, i, strings.Repeat("http://example.org/ text\n", 400))
	}
	in := writeTestFile(t, filepath.Join(dir, "w.mbox"), b.String())
	// a file (known total: a bar) and standard input (unknown: a spinner)
	for _, stdin := range []bool{false, true} {
		name, args, input := in, []string{"scan", "--progress", "always", "--warn-limit", "0", "--format", "summary", in}, ""
		if stdin {
			name, args, input = "-", append(args[:len(args)-1], "-"), b.String()
		}
		_, _, errs := runCmd(input, args...)
		warnings := 0
		for _, line := range strings.Split(errs, "\n") {
			if !strings.Contains(line, "without a colon") {
				continue
			}
			warnings++
			// what the terminal shows is what follows the last carriage return
			if shown := line[strings.LastIndexByte(line, '\r')+1:]; !strings.HasPrefix(shown, name+"#") {
				t.Errorf("warning drawn after the bar: %q", line)
			}
		}
		if warnings != 200 || strings.Count(errs, "\r") == 0 {
			t.Errorf("stdin %v: %d warnings, bar drawn %v", stdin, warnings, strings.Count(errs, "\r") > 0)
		}
	}
}

// TestSizeFlags: sizes take suffixes, in every size flag.
func TestSizeFlags(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		bad  bool
	}{
		{"0", 0, false}, {"1234", 1234, false}, {"10MB", 10e6, false}, {"10mb", 10e6, false},
		{"64MiB", 64 << 20, false}, {"1G", 1 << 30, false}, {"1GiB", 1 << 30, false}, {"1GB", 1e9, false},
		{"512k", 512 << 10, false}, {"2KB", 2000, false}, {"1.5M", 3 << 19, false}, {"100B", 100, false},
		{"1T", 1 << 40, false}, {" 3 MiB ", 3 << 20, false},
		{"", 0, true}, {"MB", 0, true}, {"-1", 0, true}, {"-1M", 0, true}, {"ten", 0, true}, {"1X", 0, true},
		{"99999999999T", 0, true}, {"NaN", 0, true}, {"inf", 0, true}, {"0x10", 0, true},
	}
	for _, tt := range tests {
		got, err := parseSize(tt.in)
		if (err != nil) != tt.bad || got != tt.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.bad)
		}
	}
	dir := t.TempDir()
	in := writeTestFile(t, filepath.Join(dir, "big.mbox"), mboxMessage("big@x", "http://example.org/first\n"+strings.Repeat("filler text\n", 1000)+"http://example.org/last"))
	for _, flag := range []string{"--max-part-size", "--max-message-size"} {
		code, out, errs := runCmd("", "scan", "--format", "jsonl", flag, "10MB", in)
		if code != 0 || !strings.Contains(out, "/last") {
			t.Errorf("%s 10MB: exit %d, stderr %q", flag, code, errs)
		}
		code, out, _ = runCmd("", "scan", "--format", "jsonl", flag, "1KiB", in)
		if strings.Contains(out, "/last") || !strings.Contains(out, "/first") {
			t.Errorf("%s 1KiB: exit %d, the limit was not applied:\n%s", flag, code, out)
		}
		if code, _, errs := runCmd("", "scan", flag, "lots", in); code != exitUsage || !strings.Contains(errs, "lots") {
			t.Errorf("%s lots: exit %d, stderr %q", flag, code, errs)
		}
	}
}

// TestRepeatedFilters: --host and --scheme may be repeated and take
// lists; "*.cern.ch" matches cern.ch itself too.
func TestRepeatedFilters(t *testing.T) {
	in := td + "mail/mboxrd.mbox"
	count := func(args ...string) int {
		code, out, errs := runCmd("", append([]string{"scan", "--format", "jsonl"}, append(args, in)...)...)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, errs)
		}
		return strings.Count(out, "\n")
	}
	ftp, gopher, cern, internic := count("--scheme", "ftp"), count("--scheme", "gopher"), count("--host", "*.cern.ch"), count("--host", "ds.internic.net")
	if ftp == 0 || gopher == 0 || cern == 0 || internic == 0 {
		t.Fatalf("fixture changed: ftp %d gopher %d cern %d internic %d", ftp, gopher, cern, internic)
	}
	if n := count("--scheme", "ftp", "--scheme", "gopher"); n != ftp+gopher {
		t.Errorf("--scheme ftp --scheme gopher: %d records, want %d", n, ftp+gopher)
	}
	if n := count("--scheme", "ftp,gopher"); n != ftp+gopher {
		t.Errorf("--scheme ftp,gopher: %d records, want %d", n, ftp+gopher)
	}
	if n := count("--host", "*.cern.ch", "--host", "ds.internic.net"); n != cern+internic {
		t.Errorf("two --host: %d records, want %d", n, cern+internic)
	}
	if n := count("--host", "*.cern.ch,ds.internic.net"); n != cern+internic {
		t.Errorf("--host list: %d records, want %d", n, cern+internic)
	}
	if n := count("--host", "*.info.cern.ch"); n != count("--host", "info.cern.ch") {
		t.Errorf("*.info.cern.ch does not match info.cern.ch: %d records", n)
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runCmd("", "--version")
	if code != 0 || !strings.HasPrefix(out, "linkscan "+version) || !strings.Contains(out, "go1.") {
		t.Errorf("--version: exit %d, %q", code, out)
	}
}

// TestHelpSame: "scan --help" prints what "help scan" prints, for every
// command.
func TestHelpSame(t *testing.T) {
	for _, c := range commands {
		if c == cmdHelp {
			continue
		}
		want := helpText(t, c.Name)
		for _, h := range []string{"--help", "-h", "-help"} {
			all := [][]string{{c.Name, h}}
			if c == cmdURI { // before the verb and after it
				all = append(all, []string{"uri", "canon", h})
			}
			for _, args := range all {
				code, out, _ := runCmd("", args...)
				if code != 0 || out != want {
					t.Errorf("%q: exit %d, printed %d bytes, want the %d of 'help %s'", args, code, len(out), len(want), c.Name)
				}
			}
		}
	}
}

// TestURICanonLines: one output line per input line, in place, also for
// blank, invalid and overlong lines.
func TestURICanonLines(t *testing.T) {
	in := "http://X.org\n\nnot a url\nmailto:A@B.ORG\r\n" + strings.Repeat("x", 2<<20) + "\nhttp://last/"
	code, out, errs := runCmd(in, "uri", "canon")
	want := "http://x.org/\n\n\nmailto:A@b.org\n\nhttp://last/\n"
	if out != want || code != exitFail {
		t.Errorf("exit %d, stdout %q, want %q", code, out, want)
	}
	if !strings.Contains(errs, "line 3:") || !strings.Contains(errs, "line 5:") || strings.Contains(errs, "line 2:") {
		t.Errorf("stderr %q", errs)
	}
	code, out, _ = runCmd("", "uri", "canon", "http://a/", "not a url", "http://b/")
	if out != "http://a/\n\nhttp://b/\n" || code != exitFail {
		t.Errorf("arguments: exit %d, %q", code, out)
	}
}

// TestStdinStreams: with standard input on a pipe, each message's records
// come out as soon as the next message begins, in every streaming format,
// not when a 64 KiB buffer fills.
func TestStdinStreams(t *testing.T) {
	for _, format := range []string{"jsonl", "csv", "text", "text --unique=first"} {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan int)
		go func() {
			code := run(append([]string{"scan", "--format"}, append(strings.Fields(format), "-")...), inR, outW, io.Discard)
			outW.Close()
			done <- code
		}()
		// more than the 4 KiB the format detection waits for
		io.WriteString(inW, mboxMessage("one@x", "http://example.org/first\n"+strings.Repeat("text\n", 1000)))
		io.WriteString(inW, "From a@b Sat Jan  1 00:00:00 2000\n")
		// the first message's link must come before any more input
		br := bufio.NewReader(outR)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("%s: %v before the first link", format, err)
			}
			if strings.Contains(line, "http://example.org/first") {
				break
			}
		}
		io.WriteString(inW, "Message-ID: <two@x>\n\nhttp://example.org/second\n")
		inW.Close()
		rest, _ := io.ReadAll(br)
		if code := <-done; code != 0 || !strings.Contains(string(rest), "/second") {
			t.Errorf("%s: exit %d, rest %q", format, code, rest)
		}
	}
}

// TestVerbose: --verbose says how each input is read.
func TestVerbose(t *testing.T) {
	_, _, errs := runCmd("", "scan", "--verbose", "--format", "jsonl", td+"mail/mboxrd.mbox", td+"maildir")
	for _, want := range []string{"mboxrd.mbox: read as mbox", "maildir: read as maildir"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
}

// TestExtractFlags: --bare-domains, --refang and --data-uris reach the
// link scanner.
func TestExtractFlags(t *testing.T) {
	dir := t.TempDir()
	in := writeTestFile(t, filepath.Join(dir, "f.mbox"), mboxMessage("f@x", "see example.com/path and hxxp://evil.example/x and data:text/plain,hi there"))
	tests := []struct {
		flag, want string
	}{
		{"--bare-domains", `"form":"domain"`},
		{"--refang", `"canonical":"http://evil.example/x"`},
		{"--data-uris", `"url":"data:text/plain,hi"`},
	}
	for _, tt := range tests {
		_, without, _ := runCmd("", "scan", "--format", "jsonl", in)
		code, with, errs := runCmd("", "scan", "--format", "jsonl", tt.flag, in)
		if code != 0 && code != exitDamage || !strings.Contains(with, tt.want) || strings.Contains(without, tt.want) {
			t.Errorf("%s: exit %d (%s)\nwith:    %s\nwithout: %s", tt.flag, code, errs, with, without)
		}
	}
}

// TestUniqueFlags: --unique=first streams (a closed pipe ends the scan
// early), --unique counts; --memory takes a size; a summary of --unique
// still counts unreadable inputs.
func TestUniqueFlags(t *testing.T) {
	data, err := os.ReadFile(corpusFile(t, 8<<20))
	if err != nil {
		t.Fatal(err)
	}
	in := &countReader{r: bytes.NewReader(data)}
	w := &failAfterWriter{n: 1000, err: syscall.EPIPE}
	code, errs := runTo(w, in, "scan", "--jobs", "2", "--format", "jsonl", "--unique=first", "-")
	if code != 0 || errs != "" || in.n > int64(len(data))/2 {
		t.Errorf("--unique=first on a closed pipe: exit %d, stderr %q, %d of %d bytes read", code, errs, in.n, len(data))
	}
	f := td + "mail/mboxrd.mbox"
	_, first, _ := runCmd("", "scan", "--format", "jsonl", "--unique=first", f)
	_, counted, _ := runCmd("", "scan", "--format", "jsonl", "--unique", "--memory", "1MiB", f)
	if strings.Count(first, "\n") != strings.Count(counted, "\n") || strings.Contains(first, `"count"`) || !strings.Contains(counted, `"count":2`) {
		t.Errorf("--unique=first:\n%s\n--unique:\n%s", first, counted)
	}
	code, out, _ := runCmd("", "scan", "--format", "summary", "--unique", f, filepath.Join(t.TempDir(), "nonexistent"))
	if code != exitFail || !strings.Contains(out, "unreadable inputs 1") {
		t.Errorf("--unique --format summary with a missing input: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{
		{"--unique=first", "--format", "summary"}, {"--unique=some"}, {"--memory", "0"}, {"--memory", "lots"},
	} {
		if code, _, errs := runCmd("", append(append([]string{"scan"}, args...), f)...); code != exitUsage {
			t.Errorf("%q: exit %d, stderr %q; want 2", args, code, errs)
		}
	}
}

// TestSkippedFiles: files of a directory that are not messages are
// counted at the end and named with --verbose; one that cannot be read
// (a cut .gz) is named always and makes the exit status 1.
func TestSkippedFiles(t *testing.T) {
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "a.eml"), "Message-ID: <a@x>\nSubject: a\n\nhttp://example.org/a\n")
	writeTestFile(t, filepath.Join(dir, "b.eml"), "Message-ID: <b@x>\nSubject: b\n\nhttp://example.org/b\n")
	writeTestFile(t, filepath.Join(dir, "logo.png"), "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00")
	code, out, errs := runCmd("", "scan", "--format", "jsonl", dir)
	if code != 0 || strings.Count(out, "\n") != 2 || !strings.Contains(errs, "1 file in directories skipped (not messages; --verbose names them)") || strings.Contains(errs, "logo.png") {
		t.Errorf("exit %d, %d records, stderr %q", code, strings.Count(out, "\n"), errs)
	}
	_, _, errs = runCmd("", "scan", "--format", "jsonl", "--verbose", dir)
	if !strings.Contains(errs, "logo.png: skipped: ") || !strings.Contains(errs, dir+": read as ") {
		t.Errorf("--verbose: %q", errs)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	io.WriteString(zw, "Message-ID: <c@x>\n\nhttp://example.org/c\n")
	zw.Close()
	writeTestFile(t, filepath.Join(dir, "c.eml.gz"), gz.String()[:20])
	code, out, errs = runCmd("", "scan", "--format", "jsonl", "--quiet", dir)
	if code != exitFail || strings.Count(out, "\n") != 2 || !strings.Contains(errs, "c.eml.gz") || !strings.Contains(errs, "1 input could not be read") {
		t.Errorf("cut .gz in a directory: exit %d, %d records, stderr %q", code, strings.Count(out, "\n"), errs)
	}
	// cut inside the gzip header: nothing of the file is read, it is an
	// input that could not be read, not a message
	writeTestFile(t, filepath.Join(dir, "c.eml.gz"), gz.String()[:8])
	_, out, _ = runCmd("", "scan", "--format", "summary", dir)
	if !strings.Contains(out, "messages          2\n") || !strings.Contains(out, "damaged messages  0\n") || !strings.Contains(out, "unreadable inputs 1\n") {
		t.Errorf("summary with a cut .gz in a directory:\n%s", out)
	}
}

// TestArgumentsEscaped: arguments echoed in messages and in uri parse's
// text are escaped too.
func TestArgumentsEscaped(t *testing.T) {
	for _, args := range [][]string{
		{"scan", "--\x1b[2J"}, {"scan", "--jobs", "\x1b[2J", "x"}, {"no\x1bsuch"}, {"help", "\x1b"},
		{"uri", "parse", "http://a/\x1b[2J"}, {"uri", "canon", "http://a/\x1b"}, {"scan", "--as", "\x1b", "x"},
	} {
		_, out, errs := runCmd("", args...)
		if strings.ContainsRune(out+errs, 0x1b) {
			t.Errorf("%q: raw ESC printed:\nstdout %q\nstderr %q", args, out, errs)
		}
	}
}

// TestHelpFields: the help of scan names every field of record.Fields.
func TestHelpFields(t *testing.T) {
	help := strings.Join(strings.Fields(helpText(t, "scan")), " ")
	if !strings.Contains(help, "Records carry: "+record.Summary()+".") {
		t.Errorf("help scan does not list the fields as record.Summary does:\n%s", help)
	}
	for _, f := range record.Fields {
		if !strings.Contains(help, f.Name) {
			t.Errorf("help scan lacks field %s", f.Name)
		}
	}
}

// TestUniqueSpillError: a --unique that cannot spill says so, not that the
// output could not be written.
func TestUniqueSpillError(t *testing.T) {
	in := corpusFile(t, 256<<10)
	code, _, errs := runCmd("", "scan", "--unique", "--memory", "1KiB", "--tmpdir", filepath.Join(t.TempDir(), "missing"), "--format", "jsonl", in)
	if code != exitFail || !strings.Contains(errs, "missing") || strings.Contains(errs, "writing standard output") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// TestMain lets a test run the command itself in a child process (its
// own standard output and signals): LINKSCAN_TEST_MAIN holds the
// arguments, separated by unit separators (0x1f).
func TestMain(m *testing.M) {
	if args := os.Getenv("LINKSCAN_TEST_MAIN"); args != "" {
		os.Args = append([]string{"linkscan"}, strings.Split(args, "\x1f")...)
		main()
	}
	os.Exit(m.Run())
}

// TestReaderGoes: when the reader of standard output (a pipe) goes away
// before anything is written, the command stops reading its input at
// once and ends quietly, for --unique and summaries (which write only at
// their end) as for the streaming formats. The input is fed through a
// pipe; the child must end without reading it all.
func TestReaderGoes(t *testing.T) {
	var data bytes.Buffer
	corpus.Write(&data, 32<<20, 9)
	for _, args := range [][]string{
		{"scan", "--unique", "--format", "jsonl", "-"},
		{"scan", "--format", "summary", "-"},
		{"scan", "--format", "jsonl", "-"},
		{"scan", "--as", "text", "--format", "text", "-"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "LINKSCAN_TEST_MAIN="+strings.Join(args, "\x1f"))
		outR, outW, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout = outW
		var errb bytes.Buffer
		cmd.Stderr = &errb
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		outW.Close()
		outR.Close() // the reader is gone before the first byte
		written := 0
		for chunk := data.Bytes(); len(chunk) > 0; {
			n, err := stdin.Write(chunk[:min(len(chunk), 64<<10)])
			written += n
			chunk = chunk[n:]
			if err != nil {
				break // the child has stopped reading
			}
		}
		stdin.Close()
		err = cmd.Wait()
		if err != nil || errb.Len() != 0 {
			t.Errorf("%q: %v, stderr %q; want a quiet end", args, err, errb.String())
		}
		if written >= data.Len() {
			t.Errorf("%q: all %d bytes of input were taken after the reader went away", args, written)
		}
	}
}

// FuzzParseSize: a size parses to a non-negative number or an error, and
// a number of bytes written out parses back to itself.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"10MB", "64MiB", "1G", "1.5k", "0x10", "-1", "inf", " 3 MiB ", "99999999999T"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseSize(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("parseSize(%q) = %d", s, n)
		}
		if m, err := parseSize(fmt.Sprint(n)); err != nil || m != n {
			t.Fatalf("parseSize(%q) = %d, but %d reads back as %d, %v", s, n, n, m, err)
		}
	})
}

// TestOutputKilled: a scan writing -o FILE that is interrupted (SIGTERM)
// removes its temporary file; one killed (SIGKILL) leaves it; FILE keeps
// its old content either way. The child reads standard input, which the
// test holds open, so it is stopped mid-scan.
func TestOutputKilled(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		dir := t.TempDir()
		target := writeTestFile(t, filepath.Join(dir, "keep.jsonl"), "precious\n")
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "LINKSCAN_TEST_MAIN="+strings.Join([]string{"scan", "--format", "jsonl", "-o", target, "-"}, "\x1f"))
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// enough messages for the output to reach the temporary file
		for i := range 2000 {
			io.WriteString(stdin, mboxMessage(fmt.Sprintf("m%d@x", i), fmt.Sprintf("http://example.org/%d %s", i, strings.Repeat("x", 100))))
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		// wait until the temporary file holds something
		for {
			l := tmpLeft(t, dir)
			if len(l) == 1 {
				if fi, err := os.Stat(l[0]); err == nil && fi.Size() > 0 {
					break
				}
			}
			select {
			case err := <-done:
				t.Fatalf("the child ended early: %v", err)
			case <-time.After(10 * time.Millisecond):
			}
		}
		cmd.Process.Signal(sig)
		<-done
		stdin.Close()
		if b, _ := os.ReadFile(target); string(b) != "precious\n" {
			t.Errorf("%v: target is now %q", sig, b)
		}
		left := tmpLeft(t, dir)
		if sig == syscall.SIGTERM && len(left) != 0 {
			t.Errorf("SIGTERM: temporary files left: %q", left)
		}
		if sig == syscall.SIGKILL && len(left) != 1 {
			t.Errorf("SIGKILL: %d temporary files, want the one being written", len(left))
		}
	}
}

// TestOutputInterruptedAtEnd: an interrupt that comes as the input ends,
// while the scan may be committing -o FILE, ends the process by the
// signal with FILE as it was (or complete, when the signal came after the
// commit), or exits 0 with FILE complete; never a
// failed rename of a removed temporary file (exit 1), never a temporary
// file left.
func TestOutputInterruptedAtEnd(t *testing.T) {
	var killed, completed int
	for round := range 36 {
		dir := t.TempDir()
		target := writeTestFile(t, filepath.Join(dir, "keep.jsonl"), "precious\n")
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "LINKSCAN_TEST_MAIN="+strings.Join([]string{"scan", "--format", "jsonl", "-o", target, "-"}, "\x1f"))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		n := 50 + 40*(round%12)
		for i := range n {
			io.WriteString(stdin, mboxMessage(fmt.Sprintf("m%d@x", i), fmt.Sprintf("http://example.org/%d", i)))
		}
		stdin.Close()
		time.Sleep(time.Duration(round%12) * time.Millisecond) // spread the signal over the end of the run
		cmd.Process.Signal(os.Interrupt)
		err = cmd.Wait()
		b, _ := os.ReadFile(target)
		var ee *exec.ExitError
		switch {
		case err == nil:
			if got := strings.Count(string(b), "\n"); got != n {
				t.Errorf("round %d: exit 0 with %d lines, want %d", round, got, n)
			}
			completed++
		case errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signaled():
			// the file as it was, or (the signal after the commit) complete
			if got := strings.Count(string(b), "\n"); string(b) != "precious\n" && got != n {
				t.Errorf("round %d: killed by the signal, target now %d lines, want the old one or %d", round, got, n)
			}
			killed++
		default:
			t.Errorf("round %d: %v, stderr %q", round, err, stderr.String())
		}
		if left := tmpLeft(t, dir); len(left) != 0 {
			t.Errorf("round %d: temporary files left: %q", round, left)
		}
	}
	t.Logf("%d runs ended by the signal, %d complete", killed, completed)
}

// TestOutputSignals: a SIGHUP the scan was started to ignore (nohup)
// does not end it, and its -o FILE is complete; an interrupt while -o
// names a FIFO nobody reads (the open blocks) still ends the process.
func TestOutputSignals(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to start the scan with SIGHUP ignored")
	}
	dir := t.TempDir()
	target := writeTestFile(t, filepath.Join(dir, "out.jsonl"), "old\n")
	cmd := exec.Command("sh", "-c", `trap "" HUP; exec "$0" -test.run='^$'`, os.Args[0])
	cmd.Env = append(os.Environ(), "LINKSCAN_TEST_MAIN="+strings.Join([]string{"scan", "--format", "jsonl", "-o", target, "-"}, "\x1f"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		io.WriteString(stdin, mboxMessage(fmt.Sprintf("m%d@x", i), fmt.Sprintf("http://example.org/%d", i)))
	}
	for len(tmpLeft(t, dir)) == 0 { // the scan has its temporary file, and its guard
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGHUP)
	time.Sleep(50 * time.Millisecond)
	for i := 200; i < 300; i++ {
		io.WriteString(stdin, mboxMessage(fmt.Sprintf("m%d@x", i), fmt.Sprintf("http://example.org/%d", i)))
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("SIGHUP ignored by the shell: the scan ended with %v", err)
	}
	if b, _ := os.ReadFile(target); strings.Count(string(b), "\n") != 300 {
		t.Errorf("SIGHUP ignored: the output holds %d lines, want 300", strings.Count(string(b), "\n"))
	}

	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO: %v", err)
	}
	cmd = exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LINKSCAN_TEST_MAIN="+strings.Join([]string{"scan", "--format", "jsonl", "-o", fifo, "-"}, "\x1f"))
	cmd.Stdin = strings.NewReader("")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	time.Sleep(200 * time.Millisecond) // in the open of the FIFO, or about to be
	cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Errorf("interrupted while opening a FIFO: %v, want the signal's end", err)
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Error("an interrupt while -o opens a FIFO nobody reads did not end the scan")
	}
}

// TestAuditGCPercent: audit, run as the command, collects at GOGC 100
// (main's 400 let an audit's live links take a quarter more memory), and
// sets no soft limit; in process (no setMemoryLimit) it changes nothing.
func TestAuditGCPercent(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: the command leaves the collector as it is")
	}
	in := writeTestFile(t, filepath.Join(t.TempDir(), "a.mbox"), mboxMessage("a@x", "http://127.0.0.1:1/x"))
	db := filepath.Join(t.TempDir(), "h.db")
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	var limit int64
	code := runWith([]string{"audit", "--offline", "--db", db, "--progress", "never", "--format", "summary", in},
		strings.NewReader(""), io.Discard, io.Discard, func(n int64) { limit = n })
	if got := debug.SetGCPercent(400); code != 0 || got != 100 || limit != 0 {
		t.Errorf("audit: exit %d, GOGC %d, limit %d; want 0, 100, none", code, got, limit)
	}
	code = runWith([]string{"audit", "--offline", "--db", db, "--progress", "never", "--format", "summary", in},
		strings.NewReader(""), io.Discard, io.Discard, nil)
	if got := debug.SetGCPercent(400); code != 0 || got != 400 {
		t.Errorf("audit in process: exit %d, GOGC %d; want 0, 400", code, got)
	}
}

// TestMemoryLimit: a plain scan sets the soft memory limit; --unique and
// --resolve, whose --memory budgets are live data, do not.
func TestMemoryLimit(t *testing.T) {
	in := td + "mail/mboxrd.mbox"
	for _, tt := range []struct {
		args []string
		set  bool
	}{
		{[]string{"scan", "--format", "jsonl", in}, true},
		{[]string{"scan", "--format", "summary", in}, true},
		{[]string{"scan", "--unique", "--format", "jsonl", in}, false},
		{[]string{"scan", "--unique=first", "--format", "jsonl", in}, false},
		{[]string{"scan", "--resolve", "--format", "jsonl", in}, true}, // over the index kept live
		{[]string{"resolve", "--format", "jsonl", in}, true},
		{[]string{"resolve", "--unique", "--format", "jsonl", in}, false},
	} {
		var limit int64
		code := runWith(tt.args, strings.NewReader(""), io.Discard, io.Discard, func(n int64) { limit = n })
		if code != 0 || (limit != 0) != tt.set {
			t.Errorf("%q: exit %d, limit %d; want set %v", tt.args, code, limit, tt.set)
		}
	}
}

// TestLimitByKind: the warning limit counts problems by kind and
// template, so that problems whose text differs from message to message
// (a Content-Length, an unknown charset's name) are capped too.
func TestLimitByKind(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 30 {
		// an unknown charset, a different name each time
		fmt.Fprintf(&b, "From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <c%d@x>\nContent-Type: text/plain; charset=x-unknown-%c%c\n\nhttp://example.org/c%d\n\n", i, 'a'+i/26, 'a'+i%26, i)
	}
	for i := range 30 {
		// a Content-Length that does not match, a different one each time
		fmt.Fprintf(&b, "From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <l%d@x>\nContent-Length: %d\n\nhttp://example.org/l%d\n\n", i, 1000+i, i)
	}
	b.WriteString("From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <end@x>\n\nhttp://example.org/end\n")
	in := writeTestFile(t, filepath.Join(dir, "kinds.mbox"), b.String())
	code, _, errs := runCmd("", "scan", "--format", "jsonl", "--warn-limit", "3", in)
	if code != exitOK {
		t.Errorf("exit %d\n%s", code, errs)
	}
	if n := strings.Count(errs, "unknown charset"); n != 4 {
		t.Errorf("unknown charsets: %d lines, want 3 and a summary:\n%s", n, errs)
	}
	if !strings.Contains(errs, `and 27 more like this: unknown charset "…"; the text is valid UTF-8 and read as such`) {
		t.Errorf("no summary of the charsets:\n%s", errs)
	}
	if n := strings.Count(errs, "Content-Length"); n != 4 {
		t.Errorf("Content-Length: %d lines, want 3 and a summary:\n%s", n, errs)
	}
	if !strings.Contains(errs, `and 27 more like this: Content-Length: N does not match the message: its body is N bytes, from offset N to the next "…" line (offset N); split there`) {
		t.Errorf("no summary of the Content-Lengths:\n%s", errs)
	}
}

func TestProblemTemplate(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`unknown charset "x-foo"; decoded as windows-1252`, `unknown charset "…"; decoded as windows-1252`},
		{`Content-Length: 1234 does not match the message: its body is 56 bytes, from offset 789 to offset 1000; split there`,
			`Content-Length: N does not match the message: its body is N bytes, from offset N to offset N; split there`},
		{`text is not valid UTF-8; decoded as windows-1252`, `text is not valid UTF-8; decoded as windows-1252`},
		{`text is not valid ISO-8859-1`, `text is not valid ISO-8859-1`},
		{`a "quoted \" one" and 8bit and 1.5 and "open`, `a "…" and 8bit and N and "open`},
		{`header line without a colon`, `header line without a colon`},
	} {
		if got := template(tc.in); got != tc.want {
			t.Errorf("template(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	a := problemKey(mailbox.Problem{Msg: `unknown charset "a"`, Err: mailbox.ErrCharset})
	b := problemKey(mailbox.Problem{Msg: `unknown charset "b"`, Err: mailbox.ErrCharset})
	c := problemKey(mailbox.Problem{Msg: `unknown charset "b"`, Err: mailbox.ErrDecode})
	if a != b || a == c {
		t.Errorf("keys: %q %q %q", a, b, c)
	}
}

// TestDeviceNeverReplaced: no command replaces a character device named
// as a file it writes (-o, --report, --db, --index), and rewrite
// --in-place refuses a device or a FIFO named as an input at once
// instead of reading it without end. The device is a private copy of
// /dev/full (character device 1, 7) made with mknod in a temporary
// directory: root and Linux only.
func TestDeviceNeverReplaced(t *testing.T) {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("needs root on Linux to make a character device with mknod")
	}
	dir := t.TempDir()
	dev := filepath.Join(dir, "full")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|7); err != nil {
		t.Skipf("mknod: %v (a container without the capability?)", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	check := func(what string) {
		t.Helper()
		fi, err := os.Lstat(dev)
		if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
			t.Fatalf("%s: the device was replaced: %v %v", what, fi.Mode(), err)
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Rdev != 1<<8|7 {
			t.Fatalf("%s: the device is now %#x", what, st.Rdev)
		}
		if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
			t.Fatalf("%s: the FIFO was replaced: %v", what, err)
		}
	}
	// a message without links: audit checks nothing on the network
	plain := writeTestFile(t, filepath.Join(dir, "plain.mbox"), "From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <p@x>\n\nno links\n")
	in := writeTestFile(t, filepath.Join(dir, "in.mbox"), "From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <a@x>\n\nhttp://old.example/a\n")
	rules := writeTestFile(t, filepath.Join(dir, "rules.toml"), "version = 1\n\n[[rule]]\naction = \"map\"\nfrom = \"http://old.example/\"\nto = \"https://new.example/\"\n")
	out := filepath.Join(dir, "out.mbox")
	for _, args := range [][]string{
		// the device as input first: --in-place must refuse it (the
		// FIFO before it, so that a run that does not refuse it
		// blocks instead of reading zeros without end)
		{"rewrite", "--rules", rules, "--in-place", fifo},
		{"rewrite", "--rules", rules, "--in-place", dev},
		{"rewrite", "--rules", rules, "--in-place", in, dev},
		{"scan", "--format", "jsonl", "-o", dev, in},
		{"scan", "--resolve", "--index", dev, in},
		{"index", "--index", dev, in},
		{"resolve", "--index", dev, in},
		{"resolve", "-o", dev, in},
		{"rewrite", "--rules", rules, "-o", dev, in},
		{"rewrite", "--rules", rules, "--report", dev, "-o", out, in},
		{"rewrite", "--rules", rules, "--db", dev, "-o", out, in},
		{"audit", "--offline", "--db", dev, plain},
		{"audit", "--offline", "--db", filepath.Join(dir, "a.db"), "-o", dev, plain},
		{"audit", "--offline", "--db", filepath.Join(dir, "a.db"), "--index", dev, plain},
	} {
		code, _, errs := runCmd("", args...)
		check(strings.Join(args, " "))
		t.Logf("%v: exit %d: %s", args[:4], code, errs)
		if args[2] == "--in-place" || args[3] == "--in-place" {
			if code != exitUsage || !strings.Contains(errs, "--in-place replaces regular files") {
				t.Errorf("%v: exit %d, want 2 with a reason:\n%s", args, code, errs)
			}
			if b, err := os.ReadFile(in); err != nil || !strings.Contains(string(b), "http://old.example/a") {
				t.Errorf("%v: the regular input was rewritten before the device was refused", args)
			}
		}
	}
	code, _, _ := runCmd("From: a@b\n\nhttp://old.example/x\n", "filter", "--rules", rules, "--report", dev)
	check("filter --report")
	if code != 0 {
		t.Errorf("filter --report to a device: exit %d", code)
	}
}

// TestGzipTrailingGarbage: a .gz with bytes after its member that are no
// gzip member is an input not read to its end, named once with the
// codec's message, its prefix not doubled ("gzip: gzip: invalid header").
func TestGzipTrailingGarbage(t *testing.T) {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte("From: a@x\nMessage-ID: <g@x>\n\nhttp://a.example/\n"))
	zw.Close()
	b.WriteString("not gzip at all, trailing garbage")
	in := writeTestFile(t, filepath.Join(t.TempDir(), "trail.gz"), b.String())
	for _, args := range [][]string{{"scan", "--format", "jsonl", in}, {"scan", "--as", "text", "--format", "jsonl", in}} {
		code, out, errs := runCmd("", args...)
		if code != exitFail || !strings.Contains(out, "http://a.example/") || !strings.Contains(errs, "trail.gz: at offset 47: gzip: invalid header") || strings.Contains(errs, "gzip: gzip:") {
			t.Errorf("%v: exit %d\n%s", args, code, errs)
		}
	}
}

// TestFileKindWords: scan (an entry of a folder skipped) and rewrite (an
// input refused) name a file type in the same words, mailbox.FileKind's:
// a link to a character device in a folder was "a device" to the
// reader and "a character device" to rewrite.
func TestFileKindWords(t *testing.T) {
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "a.eml"), "From: a@b\nSubject: s\n\nhttp://example.org/\n")
	if err := os.Symlink("/dev/null", filepath.Join(dir, "null")); err != nil {
		t.Fatal(err)
	}
	_, _, errs := runCmd("", "scan", "--verbose", "--format", "jsonl", "--progress", "never", dir)
	if !strings.Contains(errs, "null: skipped: not a regular file (a character device)") {
		t.Errorf("scan: %s", errs)
	}
	code, _, errs := runCmd("", "rewrite", "--rules", rewriteRules, "--progress", "never", "-o", filepath.Join(dir, "out"), "/dev/zero")
	if code != exitUsage || !strings.Contains(errs, "/dev/zero is a character device") {
		t.Errorf("rewrite: exit %d: %s", code, errs)
	}
}

// TestOutputPartialNeverReplaces: FILE.partial that is an
// input is refused before anything is read (exit 2); an existing
// FILE.partial that is not an input is not replaced: the output goes to
// FILE.partial-1 and the message names it; a FILE that did not exist is
// said not to have been created, not "left as it was".
func TestOutputPartialNeverReplaces(t *testing.T) {
	dir := t.TempDir()
	mbox := "From a@b Thu Mar 24 02:31:00 1994\nFrom: a@b\nMessage-ID: <1@x>\n\nhttp://one.example/\n"
	arch := filepath.Join(dir, "arch")
	in := writeTestFile(t, arch+".partial", mbox)
	missing := filepath.Join(dir, "no-such")
	for _, cmd := range []string{"scan", "resolve"} {
		code, _, errs := runCmd("", cmd, "--format", "text", "-o", arch, in, missing)
		if b, _ := os.ReadFile(in); code != exitUsage || string(b) != mbox || !strings.Contains(errs, "is the input") {
			t.Errorf("%s -o arch arch.partial: exit %d, arch.partial %q, stderr %q", cmd, code, b, errs)
		}
	}
	other := filepath.Join(dir, "other.mbox")
	writeTestFile(t, other, mbox)
	code, _, errs := runCmd("", "scan", "--format", "text", "-o", arch, other, missing)
	if b, _ := os.ReadFile(in); code != exitFail || string(b) != mbox {
		t.Errorf("existing arch.partial: exit %d, now %q", code, b)
	}
	kept, err := os.ReadFile(arch + ".partial-1")
	if err != nil || !strings.Contains(string(kept), "http://one.example/") {
		t.Errorf("output not in arch.partial-1: %q, %v", kept, err)
	}
	if !strings.Contains(errs, arch+" was not created, the output is in "+arch+".partial-1") {
		t.Errorf("stderr %q", errs)
	}
	if _, err := os.Stat(arch); err == nil {
		t.Error("arch made")
	}
	writeTestFile(t, arch, "old\n")
	code, _, errs = runCmd("", "scan", "--format", "text", "-o", arch, other, missing)
	if b, _ := os.ReadFile(arch); code != exitFail || string(b) != "old\n" || !strings.Contains(errs, "is left as it was, the output is in "+arch+".partial-2") {
		t.Errorf("existing arch: exit %d, arch %q, stderr %q", code, b, errs)
	}
	code, _, errs = runCmd("", "scan", "--format", "text", "-o", filepath.Join(dir, "fresh"), missing)
	if code != exitFail || !strings.Contains(errs, "nothing could be read: "+filepath.Join(dir, "fresh")+" was not created") {
		t.Errorf("nothing read: exit %d, stderr %q", code, errs)
	}
}
