package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkscan/linkscan/internal/corpus"
	"github.com/linkscan/linkscan/internal/testutil"
	"github.com/linkscan/linkscan/mailbox"
)

var update = flag.Bool("update", false, "rewrite golden files")

const td = "../../testdata/"

// TestScanGolden runs scan on the project's fixtures in every output
// format and compares with testdata/golden; -update rewrites them.
func TestScanGolden(t *testing.T) {
	inputs := map[string][]string{
		"mboxrd":  {td + "mail/mboxrd.mbox"},
		"mime":    {td + "mail/mime.eml"},
		"maildir": {td + "maildir"},
		"seed004": {"--as", "text", td + "seed-004.txt"},
	}
	for name, in := range inputs {
		for _, format := range []string{"jsonl", "csv", "text", "summary"} {
			args := append([]string{"scan", "--headers", "--jobs", "2", "--format", format}, in...)
			code, out, errs := runCmd("", args...)
			if code != 0 {
				t.Errorf("%s/%s: exit %d: %s", name, format, code, errs)
			}
			golden := filepath.Join(td, "golden", name+"."+format)
			if *update {
				os.MkdirAll(filepath.Dir(golden), 0o755)
				if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./cmd/linkscan -update)", err)
			}
			if out != string(want) {
				t.Errorf("%s/%s differs from %s (check, then run with -update):\n%s", name, format, golden, testutil.LineDiff(string(want), out))
			}
		}
	}
}

func TestScanRecordsJSON(t *testing.T) {
	code, out, _ := runCmd("", "scan", "--format", "jsonl", "--headers", td+"mail/mime.eml")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var recs []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, m)
	}
	for _, field := range []string{"url", "canonical", "form", "joined", "heuristic", "valid", "problems", "scheme", "host",
		"path", "offset", "message_id", "date", "from", "subject", "newsgroups", "part", "content_type", "where", "line", "column"} {
		if _, ok := recs[0][field]; !ok {
			t.Errorf("field %q missing from %v", field, recs[0])
		}
	}
	wheres := map[string]string{}
	for _, r := range recs {
		wheres[r["canonical"].(string)] = r["where"].(string)
	}
	for url, where := range map[string]string{
		"http://lists.example.org/archive/":        "header:List-Archive",
		"http://example.org/preamble":              "preamble",
		"http://example.org/html?x=1&y=2":          "html:href",
		"http://example.org/base/rel/page.html":    "html:href",
		"cid:logo@example.org":                     "html:src",
		"http://example.org/flowed/continued/here": "body",
		"http://archive.example.org/inner":         "header:Archived-At",
		"http://example.org/epilogue":              "epilogue",
	} {
		if wheres[url] != where {
			t.Errorf("%s: where %q, want %q (all: %v)", url, wheres[url], where, wheres)
		}
	}
	if recs[0]["message_id"] != "mime1@example.org" || recs[0]["date"] != "2002-06-03T12:00:00+02:00" || recs[0]["subject"] != "URLs in MIME" {
		t.Errorf("message fields %v", recs[0])
	}
}

// TestScanOrder checks that the output does not depend on --jobs.
func TestScanOrder(t *testing.T) {
	f := filepath.Join(t.TempDir(), "c.mbox")
	w, _ := os.Create(f)
	corpus.Write(w, 1<<20, 7)
	w.Close()
	_, one, _ := runCmd("", "scan", "--format", "jsonl", "--jobs", "1", f)
	_, many, _ := runCmd("", "scan", "--format", "jsonl", "--jobs", "8", f)
	if n := strings.Count(one, "\n"); n < 400 {
		t.Fatalf("only %d records from a 1 MiB corpus", n)
	}
	if one != many {
		t.Errorf("--jobs 8 output differs from --jobs 1")
	}
}

// TestScanDamaged: damaged and unreadable inputs give exit 1 and located
// errors, and every good message is still reported.
func TestScanDamaged(t *testing.T) {
	code, out, errs := runCmd("", "scan", "--format", "text", td+"mail/broken.eml", td+"mail/no-such.mbox", td+"mail/truncated.mbox")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, want := range []string{"broken.eml#0 <broken@example.org>: offset 396: missing final boundary",
		"no-such.mbox", "truncated.mbox#470 <second@example.org>: offset 591: file ends inside the message header",
		"linkscan scan: 1 input could not be read, 2 messages damaged (5 problems)"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	for _, want := range []string{"http://example.org/missing-final", "ftp://ds.internic.net/rfc"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q", want)
		}
	}
}

func TestScanFlags(t *testing.T) {
	in := td + "mail/mboxrd.mbox"
	_, out, _ := runCmd("", "scan", "--format", "csv", "--scheme", "ftp", in)
	if n := strings.Count(out, "\n"); n != 4 || strings.Contains(out, "http://") {
		t.Errorf("--scheme ftp: %d lines\n%s", n, out)
	}
	_, out, _ = runCmd("", "scan", "--format", "jsonl", "--unique", in)
	if !strings.Contains(out, `"count":2`) || strings.Count(out, "\n") != 7 {
		t.Errorf("--unique:\n%s", out)
	}
	_, out, _ = runCmd("", "scan", "--format", "text", "--host", "*.cern.ch", in)
	if strings.Count(out, "\n") != 3 || strings.Contains(out, "internic") {
		t.Errorf("--host *.cern.ch:\n%s", out)
	}
	seed, _ := os.ReadFile(td + "mail/mboxrd.mbox")
	_, out, _ = runCmd(string(seed), "scan", "--format", "text", "-")
	if !strings.HasPrefix(out, "-#0 ") {
		t.Errorf("stdin: %q", out)
	}
	o := filepath.Join(t.TempDir(), "out.jsonl")
	if code, _, _ := runCmd("", "scan", "-o", o, in); code != 0 {
		t.Errorf("-o: exit %d", code)
	}
	if b, _ := os.ReadFile(o); strings.Count(string(b), "\n") != 8 || b[0] != '{' {
		t.Errorf("-o wrote %q", b)
	}
	_, out, _ = runCmd("", "scan", "--as", "text", "--format", "text", "--emails", td+"mail/mboxrd.mbox")
	if !strings.Contains(out, "mboxrd.mbox:4:24 timbl@info.cern.ch") {
		t.Errorf("--emails on text:\n%s", out)
	}
}

func TestScanUsage(t *testing.T) {
	for _, args := range [][]string{
		{"scan", "--format", "xml", "x"}, {"scan", "--as", "pdf", "x"}, {"scan", "--jobs", "-1", "x"},
		{"scan", "--progress", "sometimes", "x"}, {"scan", "--bogus", "x"},
	} {
		if code, _, errs := runCmd("", args...); code != 2 || errs == "" {
			t.Errorf("%q: exit %d, stderr %q; want 2 with a message", args, code, errs)
		}
	}
	if code, out, _ := runCmd("", "help", "scan"); code != 0 || !strings.Contains(out, "--max-part-size") {
		t.Errorf("help scan: %d", code)
	}
}

// TestScanProgress: --progress always draws a bar on standard error even
// when it is not a terminal; never draws none.
func TestScanProgress(t *testing.T) {
	f := filepath.Join(t.TempDir(), "c.mbox")
	w, _ := os.Create(f)
	corpus.Write(w, 4<<20, 3)
	w.Close()
	_, _, errs := runCmd("", "scan", "--progress", "always", "--format", "summary", f)
	if !strings.Contains(errs, "%") || !strings.Contains(errs, "MB") {
		t.Errorf("--progress always drew no bar: %q", errs)
	}
	_, _, errs = runCmd("", "scan", "--progress", "never", "--format", "summary", f)
	if errs != "" {
		t.Errorf("--progress never wrote %q", errs)
	}
}

// TestHostPatternIDNA: --host with an internationalized name matches the
// host field's A-label form; a bad glob is a usage error (exit 2), not a
// filter that keeps nothing.
func TestHostPatternIDNA(t *testing.T) {
	in := writeTestFile(t, filepath.Join(t.TempDir(), "idn.eml"),
		"From: a@b\nContent-Type: text/plain; charset=utf-8\n\nhttp://bücher.example/a http://www.BÜCHER.example/b http://other.example/c\n")
	for _, tc := range []struct {
		pattern string
		want    int // links kept
	}{
		{"bücher.example", 1},
		{"BÜCHER.EXAMPLE", 1},
		{"*.bücher.example", 2},
		{"xn--bcher-kva.example", 1},
		{"*.example", 3},
	} {
		code, out, errs := runCmd("", "scan", "--format", "jsonl", "--host", tc.pattern, in)
		if n := strings.Count(out, "\n"); code != 0 || n != tc.want {
			t.Errorf("--host %q: exit %d, %d links, want %d\n%s%s", tc.pattern, code, n, tc.want, out, errs)
		}
	}
	for _, bad := range []string{"[x", "*.[x", `a\`, "b*cher.ü*", "ü\x00.example"} {
		code, out, errs := runCmd("", "scan", "--format", "jsonl", "--host", bad, in)
		if code != exitUsage || out != "" || !strings.Contains(errs, "--host") {
			t.Errorf("--host %q: exit %d, stderr %q, want a usage error", bad, code, errs)
		}
	}
}

// TestAsTextDecompresses: --as text reads a compressed file decompressed
// (it read the compressed bytes: no link, exit 0), and a truncated one is
// an input not read to its end, named with the offset: exit 1.
func TestAsTextDecompresses(t *testing.T) {
	dir := t.TempDir()
	var text strings.Builder
	for i := range 300 {
		fmt.Fprintf(&text, "line %d http://example.org/%d\n", i, i)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(text.String()))
	zw.Close()
	in := writeTestFile(t, filepath.Join(dir, "log.gz"), gz.String())
	code, out, errs := runCmd("", "scan", "--as", "text", "--format", "text", in)
	if code != 0 || strings.Count(out, "\n") != 300 || !strings.Contains(out, in+":300:10 http://example.org/299") {
		t.Errorf("--as text of a .gz: exit %d, %d lines\n%s", code, strings.Count(out, "\n"), errs)
	}
	cut := writeTestFile(t, filepath.Join(dir, "cut.gz"), gz.String()[:gz.Len()/2])
	code, _, errs = runCmd("", "scan", "--as", "text", "--format", "jsonl", cut)
	if code != exitFail || !strings.Contains(errs, cut+": at offset ") || !strings.Contains(errs, "gzip data truncated") ||
		!strings.Contains(errs, "1 input could not be read") || strings.Count(errs, cut) != 1 {
		t.Errorf("--as text of a cut .gz: exit %d\n%s", code, errs)
	}
	// standard input too
	code, out, _ = runCmd(gz.String(), "scan", "--as", "text", "--format", "jsonl", "-")
	if code != 0 || strings.Count(out, "\n") != 300 {
		t.Errorf("--as text of gzip on standard input: exit %d, %d lines", code, strings.Count(out, "\n"))
	}
}

// gzipOf returns s gzip-compressed.
func gzipOf(s string) string {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.String()
}

// summaryMessages runs a command with --format summary-json and returns
// its exit status, the count of messages and standard error.
func summaryMessages(t *testing.T, stdin string, args ...string) (int, int, string) {
	t.Helper()
	code, out, errs := runCmd(stdin, append(args, "--format", "summary-json")...)
	var s struct{ Messages int }
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%q: %v: %q %s", args, err, out, errs)
	}
	return code, s.Messages, errs
}

// TestScanEmptyInputs: an empty input (a 0-byte file, a byte-order mark
// alone, a .gz of nothing, an empty standard input) is no message: 0
// messages, exit 0 (nothing was left unread and nothing is damaged), and
// a line naming it; an empty file in a folder or a Maildir is counted at
// the end and named with --verbose (it was a text of 0 bytes, and in a
// Maildir a damaged "empty message"); --quiet counts them all.
// scan --as text and resolve say the same.
func TestScanEmptyInputs(t *testing.T) {
	dir := t.TempDir()
	eml := "From: a@b\nSubject: s\nMessage-ID: <e@x>\n\nhttp://example.org/e\n"
	files := map[string]string{
		"empty.eml": "", "bom.txt": "\xef\xbb\xbf", "empty.mbox.gz": gzipOf(""),
		"folder/a.eml": eml, "folder/b.eml": "",
		"md/cur/1:2,S": eml, "md/new/2": "", "md/tmp/.keep": "",
	}
	for name, content := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		writeTestFile(t, filepath.Join(dir, name), content)
	}
	os.Remove(filepath.Join(dir, "md/tmp/.keep"))
	p := func(name string) string { return filepath.Join(dir, name) }
	for _, c := range []struct {
		name, stdin string
		args        []string
		messages    int
		errs        []string // each a line of standard error, in order
	}{
		{"empty file", "", []string{"scan", p("empty.eml")}, 0, []string{p("empty.eml") + ": empty (0 bytes): no messages"}},
		{"bom", "", []string{"scan", p("bom.txt")}, 0, []string{p("bom.txt") + ": empty but for a UTF-8 byte-order mark: no messages"}},
		{"gzip of nothing", "", []string{"scan", p("empty.mbox.gz")}, 0, []string{p("empty.mbox.gz") + ": empty once decompressed (gzip): no messages"}},
		{"stdin", "", []string{"scan", "-"}, 0, []string{"-: empty (0 bytes): no messages"}},
		{"stdin forced", "", []string{"scan", "--as", "mbox", "-"}, 0, []string{"-: empty (0 bytes): no messages"}},
		{"folder", "", []string{"scan", p("folder")}, 1, []string{"1 empty file (no messages; --verbose names them)"}},
		{"folder verbose", "", []string{"scan", "--verbose", p("folder")}, 1, []string{p("folder/b.eml") + ": empty (0 bytes): no messages", "1 empty file (no messages)"}},
		{"maildir", "", []string{"scan", p("md")}, 1, []string{"1 empty file (no messages; --verbose names them)"}},
		{"maildir verbose", "", []string{"scan", "--verbose", p("md")}, 1, []string{p("md/new/2") + ": empty (0 bytes): no messages"}},
		{"quiet", "", []string{"scan", "--quiet", p("empty.eml"), p("folder"), p("md"), p("empty.mbox.gz")}, 2, []string{"4 empty files (no messages; --verbose names them)"}},
		{"all", "", []string{"scan", p("empty.eml"), p("folder"), p("md")}, 2, []string{p("empty.eml") + ": empty", "2 empty files (no messages; --verbose names them)"}},
		{"as text", "", []string{"scan", "--as", "text", p("empty.eml"), p("empty.mbox.gz")}, 0, []string{p("empty.eml") + ": empty: no messages", p("empty.mbox.gz") + ": empty: no messages"}},
		{"resolve", "", []string{"resolve", p("empty.eml")}, 0, []string{p("empty.eml") + ": empty (0 bytes): no messages"}},
	} {
		code, n, errs := summaryMessages(t, c.stdin, append(c.args, "--progress", "never")...)
		if code != 0 || n != c.messages {
			t.Errorf("%s: exit %d, %d messages, want 0 and %d: %s", c.name, code, n, c.messages, errs)
		}
		rest := errs
		for _, want := range c.errs {
			i := strings.Index(rest, want)
			if i < 0 {
				t.Errorf("%s: no %q in order in:\n%s", c.name, want, errs)
				break
			}
			rest = rest[i+len(want):]
		}
		if strings.Contains(errs, "damage") || strings.Contains(errs, "empty message") {
			t.Errorf("%s: damage reported: %s", c.name, errs)
		}
		if c.name == "quiet" && strings.Count(errs, "\n") != 1 {
			t.Errorf("quiet: more than the count: %s", errs)
		}
	}
	// index counts them as scan does (in a Maildir it reported an
	// "empty message", exit 4, and kept the file to read again)
	for _, in := range []string{"folder", "md"} {
		code, out, errs := runCmd("", "index", p(in))
		if code != 0 || !strings.Contains(errs, "1 empty file (no messages)") || strings.Contains(out, "incomplete") {
			t.Errorf("index %s: exit %d: %s%s", in, code, errs, out)
		}
	}
	// the records: none for an empty input, through the jsonl writer too
	if code, out, _ := runCmd("", "scan", "--format", "jsonl", "--progress", "never", p("empty.eml"), p("folder")); code != 0 || strings.Count(out, "\n") != 1 {
		t.Errorf("jsonl: exit %d: %q", code, out)
	}
}

// TestScanVerboseFiles: --verbose says how each file read inside a
// directory is read ("PATH: read as FORMAT: why"), as it does for each
// input: the loose files of a folder by what detection found, a
// Maildir's messages by where they are; without --verbose none of it.
func TestScanVerboseFiles(t *testing.T) {
	dir := t.TempDir()
	from := "From a@b Thu Mar 24 02:31:00 1994\n"
	msg := "From: a@b\nSubject: s\nMessage-ID: <%s@x>\n\nhttp://example.org/%s\n"
	files := map[string]string{
		"mail/a.eml":     fmt.Sprintf(msg, "a", "a"),
		"mail/b.mbox":    from + fmt.Sprintf(msg, "b1", "b1") + "\n" + from + fmt.Sprintf(msg, "b2", "b2"),
		"mail/c.txt":     "notes\nhttp://example.org/c\n",
		"mail/d.mbox.gz": gzipOf(from + fmt.Sprintf(msg, "d", "d")),
		"md/cur/1:2,S":   fmt.Sprintf(msg, "m", "m"),
		"md/new/2":       gzipOf(fmt.Sprintf(msg, "n", "n")),
	}
	for name, content := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		writeTestFile(t, filepath.Join(dir, name), content)
	}
	os.MkdirAll(filepath.Join(dir, "md", "tmp"), 0o755)
	p := func(name string) string { return filepath.Join(dir, name) }
	want := []string{
		p("mail") + ": read as folder: a directory: each file is detected on its own",
		p("mail/a.eml") + ": read as message: a header block with mail or news fields (From, Subject, Message-ID)",
		p("mail/b.mbox") + `: read as mbox: the first line is an mbox "From " line (a sender and a date)`,
		p("mail/c.txt") + ": read as text: no mbox separator, header field or A-news article at the start",
		p("mail/d.mbox.gz") + `: read as mbox: the first line is an mbox "From " line (a sender and a date)`,
		p("md") + ": read as maildir: a directory with cur/ or new/ in it, or in a folder below",
		p("md/cur/1:2,S") + ": read as maildir: a file in a Maildir's cur/ or new/: one message",
		p("md/new/2") + ": read as maildir: a file in a Maildir's cur/ or new/: one message, gzip-compressed",
	}
	for _, cmd := range []string{"scan", "resolve"} {
		code, out, errs := runCmd("", cmd, "--verbose", "--format", "jsonl", "--progress", "never", p("mail"), p("md"))
		if code != 0 || cmd == "scan" && strings.Count(out, "\n") != 7 { // (resolve: references only)
			t.Errorf("%s: exit %d, %d records: %s", cmd, code, strings.Count(out, "\n"), errs)
		}
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(errs), "\n") {
			lines = append(lines, strings.TrimPrefix(l, "linkscan "+cmd+": "))
		}
		if strings.Join(lines, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s --verbose:\n%s\nwant\n%s", cmd, strings.Join(lines, "\n"), strings.Join(want, "\n"))
		}
	}
	if _, _, errs := runCmd("", "scan", "--format", "jsonl", "--progress", "never", p("mail"), p("md")); errs != "" {
		t.Errorf("without --verbose: %s", errs)
	}
}

// TestScanCutCompressedInFolder: in a folder, a .gz cut inside its magic
// number (or empty) is an input not read, named, exit 1, as when it is
// given alone (fails if it is read as a message of garbage, exit 0).
func TestScanCutCompressedInFolder(t *testing.T) {
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "t1.mbox.gz"), "\x1f")
	writeTestFile(t, filepath.Join(dir, "t0.mbox.gz"), "")
	writeTestFile(t, filepath.Join(dir, "a.eml"), "From: a@b\nSubject: s\n\nhttp://example.org/a\n")
	code, n, errs := summaryMessages(t, "", "scan", "--progress", "never", dir)
	if code != exitFail || n != 1 || !strings.Contains(errs, "t1.mbox.gz: at offset 0: gzip data truncated: the file ends inside the gzip magic number (1 byte)") ||
		!strings.Contains(errs, "t0.mbox.gz") || !strings.Contains(errs, "2 inputs could not be read") {
		t.Errorf("exit %d, %d messages: %s", code, n, errs)
	}
}

// TestScanOutputReadThroughLink: an -o file that is read as an input
// through a symbolic or a hard link inside an input directory is not
// replaced by the output: it is left as it was, the output kept in
// FILE.partial, exit 1, said (fails if the mbox is replaced by the
// report with exit 0).
func TestScanOutputReadThroughLink(t *testing.T) {
	const precious = "From a@b Thu Mar 24 02:31:00 1994\nFrom: a@b\nMessage-ID: <1@x>\n\nhttp://one.example/\n"
	for _, how := range []string{"symbolic", "hard"} {
		dir := t.TempDir()
		out := writeTestFile(t, filepath.Join(dir, "precious.mbox"), precious)
		os.MkdirAll(filepath.Join(dir, "folder"), 0o755)
		link := filepath.Join(dir, "folder", "linked.mbox")
		var err error
		if how == "symbolic" {
			err = os.Symlink(out, link)
		} else {
			err = os.Link(out, link)
		}
		if err != nil {
			t.Fatal(err)
		}
		code, _, errs := runCmd("", "scan", "--format", "text", "--progress", "never", "-o", out, filepath.Join(dir, "folder"))
		if code != exitFail || !strings.Contains(errs, "was read as an input ("+link+")") {
			t.Errorf("%s link: exit %d: %s", how, code, errs)
		}
		if b, _ := os.ReadFile(out); string(b) != precious {
			t.Errorf("%s link: the -o file was replaced: %q", how, b)
		}
		if b, _ := os.ReadFile(out + ".partial"); !strings.Contains(string(b), "http://one.example/") {
			t.Errorf("%s link: the output is not in .partial: %q", how, b)
		}
	}
}

// TestScanTmpdirUnusable: a --tmpdir where the temporary file of a long
// message of standard input cannot be made is said once; the messages
// are read all the same, in memory, exit 0 (fails if nothing is said).
func TestScanTmpdirUnusable(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a 5 MiB message")
	}
	long := "From a@b Thu Mar 24 02:31:00 1994\nFrom: a@b\nMessage-ID: <l@x>\n\n" + strings.Repeat("a line of a long message http://long.example/\n", 5<<20/46) + "\n"
	in := long + long + "From a@b Thu Mar 24 02:31:00 1994\nFrom: a@b\nMessage-ID: <s@x>\n\nhttp://short.example/\n"
	code, n, errs := summaryMessages(t, in, "scan", "--progress", "never", "--tmpdir", filepath.Join(t.TempDir(), "no", "such"), "-")
	if code != 0 || n != 3 || strings.Count(errs, "cannot be made or written") != 1 {
		t.Errorf("exit %d, %d messages: %s", code, n, errs)
	}
}

// shrinkingFile is a plain file as the reader sees it (a ReaderAt and a
// Seeker, read again at offsets) whose reads at an offset fail past cut:
// it shrank while a long message was held aside by its offsets.
type shrinkingFile struct {
	*strings.Reader
	cut int64
}

func (f *shrinkingFile) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > f.cut {
		n, _ := f.Reader.ReadAt(p[:max(0, f.cut-off)], off)
		return n, io.EOF
	}
	return f.Reader.ReadAt(p, off)
}

// TestScanFillFailsCountedOnce: the bytes of a long message that cannot
// be read again from its file are one input not read, said once, with
// no invented damage, in scan and in a folder (fails if it is counted
// twice, or an "empty message" comes after it).
func TestScanFillFailsCountedOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a 5 MiB message")
	}
	long := "From a@b Thu Mar 24 02:31:00 1994\nFrom: a@b\nMessage-ID: <l@x>\n\n" + strings.Repeat("a line of a long message http://long.example/\n", 5<<20/46) + "\n"
	in := long + "From a@b Thu Mar 24 02:31:00 1994\nFrom: a@b\nMessage-ID: <s@x>\n\nhttp://short.example/\n"
	var errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &errb}
	var c scanConfig
	fs := newFlagSet(cmdScan, e)
	c.register(fs)
	paths, _, ok := parseFlags(fs, []string{"--format", "summary-json", "--progress", "never", "shrunk.mbox"})
	if !ok {
		t.Fatal(errb.String())
	}
	cfg, _ := c.config(e, "scan", paths)
	c.openFn = func(name string) (*mailbox.Reader, error) {
		return mailbox.NewReader(&shrinkingFile{Reader: strings.NewReader(in), cut: 5 << 20}, name, &cfg.Mailbox)
	}
	code := c.run(e, cfg, paths)
	errs := errb.String()
	if code != exitFail || strings.Count(errs, "the file ends sooner") != 1 || strings.Contains(errs, "empty message") ||
		!strings.Contains(errs, "1 input could not be read") {
		t.Errorf("exit %d: %s", code, errs)
	}
}
