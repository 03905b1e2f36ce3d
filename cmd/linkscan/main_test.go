package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/linkscan/linkscan/record"
	"github.com/linkscan/linkscan/references"
	"github.com/linkscan/linkscan/report"

	"github.com/linkscan/linkscan/internal/testutil"
)

// runCmd runs the command line args with stdin and returns the exit code
// and both outputs.
func runCmd(stdin string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestURICommands(t *testing.T) {
	tests := []struct {
		stdin      string
		args       []string
		code       int
		out, inErr string
	}{
		{args: []string{"uri", "canon", "HTTP://Info.CERN.ch:80/a/./b"}, out: "http://info.cern.ch/a/b\n"},
		{stdin: "http://X.org\n\nmailto:A@B.ORG\n", args: []string{"uri", "canon"}, out: "http://x.org/\n\nmailto:A@b.org\n"},
		{args: []string{"uri", "canon", "news:12345667123%asdghfh@info.cern.ch", "http://ok.org/"}, code: 1,
			out: "news:12345667123%25asdghfh@info.cern.ch\nhttp://ok.org/\n", inErr: `:17: "%" not followed`},
		{args: []string{"uri", "canon", "not a url"}, code: 1, inErr: "missing scheme"},
		{args: []string{"uri", "equal", "http://info.cern.ch/albert/bertram/marie-claude", "http://info.cern.ch/albert/bertram/marie%2Dclaude"}},
		{args: []string{"uri", "equal", "http://info.cern.ch/albert/bertram/marie-claude", "http://info.cern.ch/albert/bertram%2Fmarie-claude"}, code: 1},
		{args: []string{"uri", "equal", "fxqn:/us/va/reston/cnri/ietf/24/asdf%*.fred", "http://x/"}, code: 2, inErr: "hexadecimal"},
		{args: []string{"uri", "equal", "a:b"}, code: 2},
		{args: []string{"uri", "resolve", "http://a/b/c/d;p?q", "../g", "//g"}, out: "http://a/b/g\nhttp://g\n"},
		{args: []string{"uri", "resolve", "--rfc1630", "magic://a/b/c//d/e/f", "/g", "//g"}, out: "magic://a/g\nmagic://g\n"},
		{args: []string{"uri", "resolve", "magic://a/b/c//d/e/f", "/g", "--rfc1630"}, out: "magic://a/g\n"},
		{args: []string{"uri", "parse", "--json", "mid:a@b/c@d"},
			out: `{"url":"mid:a@b/c@d","scheme":"mid","host":"","port":"","path":"","query":"","fragment":"","opaque":"a@b/c@d","view":{"message_id":"a@b","content_id":"c@d"},"valid":true,"problems":[],"canonical":"mid:a@b/c@d"}` + "\n"},
		{args: []string{"uri", "parse", "http://a/ b"}, code: 1, out: "problem:   column 10: character not allowed"},
		{args: []string{"uri", "frob"}, code: 2, inErr: "unknown verb"},
		{args: []string{"uri", "resolve", "--nope"}, code: 2},
		{args: []string{"nosuch"}, code: 2, inErr: "unknown command"},
		{args: []string{"help", "uri"}, out: "linkscan uri resolve [--rfc1630] BASE REF..."},
		{args: []string{}, code: 2, inErr: "Usage:"},
	}
	for _, tt := range tests {
		code, out, errs := runCmd(tt.stdin, tt.args...)
		if code != tt.code || !strings.Contains(out, tt.out) || (tt.out == "" && out != "") && tt.code == 0 || !strings.Contains(errs, tt.inErr) {
			t.Errorf("linkscan %q: code %d, stdout %q, stderr %q\nwant code %d, stdout with %q, stderr with %q",
				tt.args, code, out, errs, tt.code, tt.out, tt.inErr)
		}
	}
}

// flagsOf runs args (a command and "--help") and returns the help it
// printed and the names of the flags its flag set registered.
func flagsOf(t *testing.T, args ...string) (help string, names []string) {
	t.Helper()
	var out, errb bytes.Buffer
	cw := &checkedWriter{w: &out}
	e := &env{stdin: strings.NewReader(""), stdout: cw, stderr: &errb, out: cw}
	parsed := false
	e.onFlags = func(fs *flag.FlagSet) {
		parsed, names = true, nil // the last flag set parsed printed the help
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	}
	if code := dispatch(e, args); code != exitOK {
		t.Fatalf("%q: exit %d, stderr %q", args, code, errb.String())
	}
	if !parsed {
		t.Fatalf("%q: no flag set parsed", args)
	}
	return out.String(), names
}

// flagToken is how a help text writes flag name: -o, --format.
func flagToken(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// namesFlag reports whether text names the flag tok as a whole word
// ("--as", not the start of "--ask" nor the end of "--x-as").
func namesFlag(text, tok string) bool {
	return regexp.MustCompile(`(^|[^-\w])` + regexp.QuoteMeta(tok) + `($|[^-\w])`).MatchString(text)
}

// flagRefs are the flags a text names: -x and --name words.
var flagRefs = regexp.MustCompile(`(?:^|[^-\w])(--?[a-z][a-z0-9-]*)`)

// TestHelpNamesFlags: for every command (and every verb of uri), each
// flag its flag set registers is named in its help; the usage line
// names only flags it registers, and one without "[flags]" names them
// all (index's lacked --as). Shown to fail with --as dropped from index's
// usage line, or a flag registered that no help names.
func TestHelpNamesFlags(t *testing.T) {
	var runs [][]string
	for _, c := range commands {
		switch c {
		case cmdHelp:
		case cmdURI:
			for _, v := range []string{"canon", "equal", "resolve", "parse"} {
				runs = append(runs, []string{c.Name, v, "--help"})
			}
		default:
			runs = append(runs, []string{c.Name, "--help"})
		}
	}
	for _, args := range runs {
		help, names := flagsOf(t, args...)
		usage, _, _ := strings.Cut(strings.TrimPrefix(help, "usage: "), "\n")
		registered := map[string]bool{}
		for _, n := range names {
			tok := flagToken(n)
			registered[tok] = true
			if !namesFlag(help, tok) {
				t.Errorf("%q: the help does not name %s", args, tok)
			}
			if !strings.Contains(usage, "[flags]") && !namesFlag(usage, tok) {
				t.Errorf("%q: the usage line %q lacks %s", args, usage, tok)
			}
		}
		for _, m := range flagRefs.FindAllStringSubmatch(usage, -1) {
			if !registered[m[1]] {
				t.Errorf("%q: the usage line %q names %s, which is not a flag of the command", args, usage, m[1])
			}
		}
	}
}

// TestDocsUsageLines: the docs open with each command's usage line as
// its help prints it (docs/references.md's of index had --as before the
// help did), and resolve's longer line there names only its flags.
func TestDocsUsageLines(t *testing.T) {
	for _, tc := range []struct {
		doc string
		c   *command
	}{
		{"../../docs/scan.md", cmdScan},
		{"../../docs/references.md", cmdIndex},
		{"../../docs/rewrite.md", cmdRewrite},
		{"../../docs/filter.md", cmdFilter},
		{"../../docs/pick.md", cmdPick},
	} {
		b, err := os.ReadFile(tc.doc)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "    "+tc.c.UsageLine+"\n") && !strings.Contains(string(b), "`"+tc.c.UsageLine+"`") {
			t.Errorf("%s lacks the usage line of %s: %s", tc.doc, tc.c.Name, tc.c.UsageLine)
		}
	}
	b, err := os.ReadFile("../../docs/references.md")
	if err != nil {
		t.Fatal(err)
	}
	_, names := flagsOf(t, "resolve", "--help")
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "    linkscan resolve ") {
			continue
		}
		for _, m := range flagRefs.FindAllStringSubmatch(line, -1) {
			if !slices.ContainsFunc(names, func(n string) bool { return flagToken(n) == m[1] }) {
				t.Errorf("docs/references.md: %q names %s, not a flag of resolve", line, m[1])
			}
		}
	}
}

// csvRows runs a command with --format csv and --format jsonl and
// returns the CSV rows (header first) and the JSON records, in the
// same order.
func csvRows(t *testing.T, args ...string) ([][]string, []map[string]any) {
	t.Helper()
	code, out, errs := runCmd("", append([]string{args[0], "--format", "csv"}, args[1:]...)...)
	if code != exitOK {
		t.Fatalf("%q csv: exit %d: %s", args, code, errs)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	_, out, _ = runCmd("", append([]string{args[0], "--format", "jsonl"}, args[1:]...)...)
	var recs []map[string]any
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v: %q", args, err, l)
		}
		recs = append(recs, m)
	}
	if len(rows) != len(recs)+1 {
		t.Fatalf("%q: %d CSV rows, %d JSON records", args, len(rows), len(recs))
	}
	return rows, recs
}

// TestCSVAsDocumented: docs/scan.md's paragraph on csv is what the
// writer does: the same header row in every run, count 0 without
// --unique (and with --unique=first), status and target columns empty
// without --resolve, the target in the five columns named, targets the
// number of targets when several and 0 for one, problems joined by
// "; ". Written after the paragraph said only "the same fields as
// columns", which named no target_ column and had count and status
// appear "with --unique" and "with --resolve" only.
func TestCSVAsDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/scan.md")
	if err != nil {
		t.Fatal(err)
	}
	_, para, _ := strings.Cut(string(b), "`csv` writes a header row")
	para, _, _ = strings.Cut(para, "`text` prints")
	para = strings.Join(strings.Fields(para), " ")
	var tcols []string
	for _, f := range record.Fields {
		if f.Name == "target" {
			tcols = f.Columns
		}
	}
	var named []string
	for _, c := range tcols {
		named = append(named, "`"+c+"`")
	}
	if want := "`target` takes six columns, " + strings.Join(named, ", "); len(tcols) != 6 || !strings.Contains(para, want) {
		t.Errorf("docs/scan.md: the target's columns are %v; its paragraph on csv:\n%s", tcols, para)
	}
	for _, s := range []string{"`count` as `0`", "`targets` is a number", "joined by `; `", "every column in every run"} {
		if !strings.Contains(para, s) {
			t.Errorf("docs/scan.md's paragraph on csv no longer says %q: check the test against it", s)
		}
	}

	in := writeTestFile(t, filepath.Join(t.TempDir(), "p.mbox"), "From a@b Thu Mar 24 02:31:00 1994\nFrom: a@b\nMessage-ID: <p@x>\n\n"+
		"see http://exa%zz.org/%G1 and <URL:http://ok.example/> and http://ok.example/ again, mid:p@x\n")
	header := strings.Join(report.Fields, ",")
	col := map[string]int{}
	for i, c := range report.Fields {
		col[c] = i
	}
	cell := func(row []string, name string) string { return row[col[name]] }
	empty := func(row []string) bool {
		for _, c := range append([]string{"status"}, tcols...) {
			if cell(row, c) != "" {
				return false
			}
		}
		return cell(row, "targets") == "0"
	}
	for _, tc := range []struct {
		args  []string
		count func(n int) bool
	}{
		{[]string{"scan", in}, func(n int) bool { return n == 0 }},
		{[]string{"scan", "--unique=first", in}, func(n int) bool { return n == 0 }},
		{[]string{"scan", "--unique", in}, func(n int) bool { return n >= 1 }},
	} {
		rows, recs := csvRows(t, tc.args...)
		if strings.Join(rows[0], ",") != header {
			t.Errorf("%q: header %q", tc.args, rows[0])
		}
		for i, row := range rows[1:] {
			n, err := strconv.Atoi(cell(row, "count"))
			if err != nil || !tc.count(n) || !empty(row) {
				t.Errorf("%q: row %q", tc.args, row)
			}
			var probs []string
			for _, p := range recs[i]["problems"].([]any) {
				probs = append(probs, p.(string))
			}
			if cell(row, "problems") != strings.Join(probs, "; ") {
				t.Errorf("%q: problems %q, JSON %q", tc.args, cell(row, "problems"), probs)
			}
			for _, c := range []string{"joined", "heuristic", "valid"} {
				if v := cell(row, c); v != "true" && v != "false" {
					t.Errorf("%q: %s %q", tc.args, c, v)
				}
			}
		}
	}
	rows, _ := csvRows(t, "scan", in)
	if p := cell(rows[1], "problems"); strings.Count(p, "; ") != 1 {
		t.Errorf("the first link's problems: %q, want two joined by \"; \"", p)
	}

	var several, one, none, other int
	for _, args := range [][]string{
		{"resolve", td + "refs/list.mbox", td + "refs/maildir"},
		{"scan", "--resolve", td + "refs/list.mbox", td + "refs/maildir", in},
	} {
		rows, recs := csvRows(t, args...)
		if strings.Join(rows[0], ",") != header {
			t.Errorf("%q: header %q", args, rows[0])
		}
		for i, row := range rows[1:] {
			r := recs[i]
			targets, _ := r["targets"].([]any)
			target, _ := r["target"].(map[string]any)
			want := strconv.Itoa(len(targets))
			switch {
			case r["status"] == nil:
				other++
				if !empty(row) {
					t.Errorf("%q: a link that is not a reference: %q", args, row)
				}
				continue
			case len(targets) > 1:
				several++
			case target != nil:
				one++
			default:
				none++
			}
			if cell(row, "targets") != want || cell(row, "status") != r["status"] {
				t.Errorf("%q: status %q, targets %q; JSON %v with %d targets", args, cell(row, "status"), cell(row, "targets"), r["status"], len(targets))
			}
			if target == nil {
				if cell(row, "target_offset") != "" || cell(row, "target_file") != "" {
					t.Errorf("%q: no target, and %q", args, row)
				}
				continue
			}
			for _, c := range tcols {
				v := fmt.Sprint(target[strings.TrimPrefix(c, "target_")])
				if target[strings.TrimPrefix(c, "target_")] == nil {
					v = ""
				}
				if cell(row, c) != v {
					t.Errorf("%q: %s %q, JSON %q", args, c, cell(row, c), v)
				}
			}
		}
	}
	if several == 0 || one == 0 || none == 0 || other == 0 {
		t.Errorf("records with several targets %d, one %d, none %d, not references %d: want each", several, one, none, other)
	}
}

// TestDocsNameFlags: each command's page in docs/ names every flag its
// flag set registers (a flag added to the command and its help but not
// to its docs fails here).
func TestDocsNameFlags(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		args []string
	}{
		{"scan.md", []string{"scan"}},
		{"references.md", []string{"resolve"}},
		{"references.md", []string{"index"}},
		{"rewrite.md", []string{"rewrite"}},
		{"filter.md", []string{"filter"}},
		{"audit.md", []string{"audit"}},
		{"pick.md", []string{"pick"}},
		{"uri.md", []string{"uri", "resolve"}},
		{"uri.md", []string{"uri", "parse"}},
	} {
		b, err := os.ReadFile("../../docs/" + tc.doc)
		if err != nil {
			t.Fatal(err)
		}
		_, names := flagsOf(t, append(tc.args, "--help")...)
		for _, n := range names {
			if !namesFlag(string(b), flagToken(n)) {
				t.Errorf("docs/%s does not name %s of %q", tc.doc, flagToken(n), tc.args)
			}
		}
	}
}

// TestOutputNotIndex: -o naming the --index file of scan --resolve or
// resolve (the file itself, a link to it, a file SQLite keeps beside
// it, an index not made yet, through a linked directory) is a usage
// error, and the index is left as it was; another -o is written
// (fails if the index is replaced by the report with exit 0).
func TestOutputNotIndex(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "idx.db")
	in := td + "refs/list.mbox"
	if code, _, errs := runCmd("", "index", "--index", db, in); code != exitOK {
		t.Fatalf("index: exit %d: %s", code, errs)
	}
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	os.Symlink(db, filepath.Join(dir, "link.db"))
	os.Link(db, filepath.Join(dir, "hard.db"))
	other := t.TempDir()
	viaLink := filepath.Join(other, "d", "idx.db")
	os.Symlink(dir, filepath.Join(other, "d"))
	for _, cmd := range [][]string{{"scan", "--resolve"}, {"resolve"}} {
		for _, tc := range []struct{ out, index string }{
			{db, db},
			{filepath.Join(dir, "link.db"), db},
			{filepath.Join(dir, "hard.db"), db},
			{db + "-wal", db},
			{db + "-writers", db},
			{viaLink, db},
			{db, viaLink},
			{filepath.Join(dir, "new.db"), filepath.Join(dir, "new.db")},
			{filepath.Join(dir, ".", "new.db"), filepath.Join(dir, "new.db")},
		} {
			args := append(append([]string{}, cmd...), "--index", tc.index, "-o", tc.out, "--format", "jsonl", in)
			code, _, errs := runCmd("", args...)
			if code != exitUsage || !strings.Contains(errs, "is the --index file") {
				t.Errorf("%q: exit %d, stderr %q", args, code, errs)
			}
		}
	}
	if after, _ := os.ReadFile(db); !bytes.Equal(after, before) {
		t.Error("the index changed")
	}
	if _, err := os.Stat(filepath.Join(dir, "new.db")); err == nil {
		t.Error("new.db was made")
	}
	out := filepath.Join(dir, "r.jsonl")
	if code, _, errs := runCmd("", "resolve", "--index", db, "-o", out, "--format", "jsonl", in); code != exitOK {
		t.Errorf("another -o: exit %d: %s", code, errs)
	}
	if b, _ := os.ReadFile(out); !bytes.Contains(b, []byte(`"status":"resolved"`)) {
		t.Errorf("another -o: %q", b)
	}
}

// TestIndexFileStreams: standard input or a pipe given to index with an
// index file is a usage error, the index left as it was (else the next
// standard input replaces the entries of the last, silently); in
// memory it is indexed; resolve with an index file indexes it all the
// same, saying plainly that it replaces an earlier standard input's
// entries.
func TestIndexFileStreams(t *testing.T) {
	db := filepath.Join(t.TempDir(), "i.db")
	in := td + "refs/list.mbox"
	mbox, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCmd("", "index", "--index", db, in); code != exitOK {
		t.Fatalf("index: exit %d: %s", code, errs)
	}
	_, before, _ := runCmd("", "index", "--index", db, "--format", "json", in)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() { w.Write(mbox); w.Close() }()
	pipe := fmt.Sprintf("/proc/self/fd/%d", r.Fd())
	for _, args := range [][]string{
		{"index", "--index", db, "-"},
		{"index", "--index", db, in, "-"},
		{"index", "--index", db, "--format", "json", pipe},
	} {
		code, out, errs := runCmd(string(mbox), args...)
		if code != exitUsage || out != "" || !strings.Contains(errs, "cannot be kept in the index file") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	if _, after, _ := runCmd("", "index", "--index", db, "--format", "json", in); after != before {
		t.Errorf("the index changed:\n%s\nwas\n%s", after, before)
	}
	if code, out, errs := runCmd(string(mbox), "index", "-"); code != exitOK || !strings.Contains(out, "added messages     5") {
		t.Errorf("index - in memory: exit %d, %q, %s", code, out, errs)
	}
	code, out, errs := runCmd(string(mbox), "resolve", "--index", db, "--format", "jsonl", "-")
	if code != exitOK || !strings.Contains(out, `"status":"resolved"`) || !strings.Contains(errs, "standard input is indexed into "+db) {
		t.Errorf("resolve --index FILE -: exit %d, stderr %q", code, errs)
	}
	if isStreamInput(in) || isStreamInput(td+"refs/maildir") || isStreamInput("/dev/shm/a.mbox") || !isStreamInput("/dev/stdin") || !isStreamInput("-") || !isStreamInput("/dev/fd/63") {
		t.Error("isStreamInput")
	}
}

// TestIndexInInputs: an index file that is an input or lies in an input
// directory is a usage error for index, resolve and scan --resolve, and
// nothing is made there (else its empty FILE-writers in a Maildir's
// cur/ is read as a damaged message by every scan).
func TestIndexInInputs(t *testing.T) {
	md := filepath.Join(t.TempDir(), "Mail")
	for _, sub := range []string{"cur", "new", "tmp"} {
		os.MkdirAll(filepath.Join(md, sub), 0o755)
	}
	msg := "From: a@example.org\nMessage-ID: <k@example.org>\n\nSee mid:k@example.org\n"
	writeTestFile(t, filepath.Join(md, "cur", "1.1.h:2,S"), msg)
	mbox := writeTestFile(t, filepath.Join(t.TempDir(), "a.mbox"), "From a@b Thu Mar 24 02:31:00 1994\n"+msg)
	for _, tc := range []struct {
		index string
		args  []string
	}{
		{filepath.Join(md, "cur", "idx.db"), []string{"index"}},
		{filepath.Join(md, "idx.db"), []string{"index"}},
		{filepath.Join(md, "idx.db"), []string{"resolve", "--format", "jsonl"}},
		{filepath.Join(md, "idx.db"), []string{"scan", "--resolve", "--format", "jsonl"}},
	} {
		args := append(append([]string{}, tc.args...), "--index", tc.index, md)
		code, out, errs := runCmd("", args...)
		if code != exitUsage || out != "" || !strings.Contains(errs, "is inside the input directory") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
		if _, err := os.Stat(tc.index); err == nil {
			t.Errorf("%q: the index was made", args)
		}
	}
	code, _, errs := runCmd("", "index", "--index", mbox, mbox)
	if code != exitUsage || !strings.Contains(errs, "is the input") {
		t.Errorf("--index an input: exit %d, %q", code, errs)
	}
	if code, _, errs := runCmd("", "index", "--index", filepath.Join(t.TempDir(), "idx.db"), md); code != exitOK {
		t.Errorf("an index outside: exit %d, %s", code, errs)
	}
}

// TestResolveFIFO: resolve and scan --resolve read a FIFO input (a
// named pipe, a pipe reached as /proc/self/fd/N as <(zcat a.gz) is)
// twice, index then scan, from one copy: the same records as from the
// file, under the FIFO's name, and no copy left in --tmpdir (fails if
// the scan pass finds the pipe drained, 0 records and exit 0, or blocks
// for ever opening a named pipe with no writer left).
func TestResolveFIFO(t *testing.T) {
	in := td + "refs/list.mbox"
	mbox, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	for _, cmd := range [][]string{{"resolve"}, {"scan", "--resolve"}} {
		_, want, _ := runCmd("", append(append([]string{}, cmd...), "--format", "jsonl", in)...)
		if strings.Count(want, "\n") < 10 {
			t.Fatalf("%q: %d records from the file", cmd, strings.Count(want, "\n"))
		}
		for _, kind := range testutil.FIFOKinds {
			name := testutil.FIFOInput(t, kind, mbox)
			args := append(append([]string{}, cmd...), "--format", "jsonl", "--tmpdir", tmp, name)
			code, out, errs := runCmd("", args...)
			if code != exitOK || strings.ReplaceAll(out, `"path":"`+name+`"`, `"path":"`+in+`"`) != strings.ReplaceAll(want, `"file":"`+in+`"`, `"file":"`+name+`"`) {
				t.Errorf("%q (%s): exit %d, %d records, want %d; stderr %q", args, kind, code, strings.Count(out, "\n"), strings.Count(want, "\n"), errs)
			}
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left in --tmpdir: %v", left)
	}
}

// addFails is a store whose Add fails for the messages of files under
// dir (a FileKey, as the store is given): indexing them fails as on a
// full disk.
type addFails struct {
	references.Store
	dir string
	cur string
}

func (a *addFails) BeginFile(file string, size int64, mtime time.Time) error {
	a.cur = file
	return a.Store.BeginFile(file, size, mtime)
}

func (a *addFails) Add(e *references.Entry) error {
	if strings.HasPrefix(a.cur, a.dir) {
		return errors.New("database or disk is full")
	}
	return a.Store.Add(e)
}

// TestResolveIndexFails: when building the index fails for an input
// (not because it cannot be read: a full disk), a reference the index
// does not hold gets status error, never dangling, said once on
// standard error, exit 1; what the index holds still resolves, and cid:
// links (found in their own message) are not affected (fails if every
// reference into the failed input is said dangling).
func TestResolveIndexFails(t *testing.T) {
	defer func(f func(*env, string, refFlags) (references.Store, error)) { openStoreFn = f }(openStoreFn)
	md := td + "refs/maildir"
	openStoreFn = func(e *env, name string, rf refFlags) (references.Store, error) {
		s, err := openStore(e, name, rf)
		return &addFails{Store: s, dir: references.FileKey(md)}, err
	}
	code, out, errs := runCmd("", "resolve", "--format", "jsonl", "--no-implicit", td+"refs/list.mbox", md)
	if code != exitFail || !strings.Contains(errs, "disk is full") || strings.Count(errs, "the index is incomplete") != 1 {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	statuses := map[string]int{}
	for _, r := range decodeLines(t, out) {
		statuses[r.Status]++
		switch {
		case r.URL == "mid:minutes@example.org" && r.Status != "error": // in the maildir, not indexed
			t.Errorf("%s: status %q, want error", r.URL, r.Status)
		case r.Status == "dangling" && !strings.HasPrefix(r.URL, "cid:"):
			t.Errorf("%s: dangling in an index known to be incomplete", r.URL)
		}
	}
	if statuses["resolved"] == 0 || statuses["error"] == 0 {
		t.Errorf("statuses %v: want some resolved (list.mbox was indexed) and some error", statuses)
	}
	openStoreFn = openStore
	if code, _, errs := runCmd("", "resolve", "--format", "jsonl", td+"refs/list.mbox", md); code != exitOK || strings.Contains(errs, "incomplete") {
		t.Errorf("without a failure: exit %d, %q", code, errs)
	}
}

// TestBarFitsWidth: drawn through fitWriter, every line of scan's
// progress bar (counts, percentage, bar, sizes, rate, time) fits a
// terminal of 20, 40 or 80 columns, less one; drawn straight, it does
// not fit 40 (on a narrow terminal each redraw would wrap and leave a
// row behind). fitLines keeps line breaks and cuts each line.
func TestBarFitsWidth(t *testing.T) {
	in := writeTestFile(t, filepath.Join(t.TempDir(), "a.mbox"), strings.Repeat("x", 150<<20>>10))
	draw := func(w io.Writer) {
		bar := newBar([]string{in}, w)
		bar.Describe("3921 messages, 6103 links")
		bar.RenderBlank()
		bar.Add64(14 << 10)
		bar.RenderBlank()
		bar.Clear()
	}
	var plain bytes.Buffer
	draw(&plain)
	if longest(plain.String()) < 40 {
		t.Fatalf("the bar drawn straight is %d columns at most: the test shows nothing", longest(plain.String()))
	}
	for _, width := range []int{20, 40, 80} {
		var b bytes.Buffer
		draw(&fitWriter{w: &b, width: func() int { return width }})
		if n := longest(b.String()); n > width-1 || n == 0 {
			t.Errorf("width %d: a line of %d characters:\n%q", width, n, b.String())
		}
	}
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"\rabcdef\r", 3, "\rabc\r"},
		{"ab\ncdef", 2, "ab\ncd"},
		{"\r█████ x", 4, "\r████"},
		{"", 5, ""},
	} {
		if got := fitLines(tc.in, tc.max); got != tc.want {
			t.Errorf("fitLines(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

// longest returns the characters of the longest line of s, lines ended
// by carriage returns or line feeds.
func longest(s string) int {
	n := 0
	for _, l := range strings.FieldsFunc(s, func(r rune) bool { return r == '\r' || r == '\n' }) {
		n = max(n, utf8.RuneCountInString(l))
	}
	return n
}

// TestIndexEmptyInput: index names an input that holds no message (0
// bytes, nothing once decompressed) with why, as scan does, exit 0;
// --quiet leaves the line out.
func TestIndexEmptyInput(t *testing.T) {
	empty := writeTestFile(t, filepath.Join(t.TempDir(), "e.mbox"), "")
	code, out, errs := runCmd("", "index", empty, td+"refs/list.mbox")
	if code != exitOK || !strings.Contains(errs, empty+": empty (0 bytes): no messages") || !strings.Contains(out, "added messages     5") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if code, _, errs := runCmd("", "index", "--quiet", empty); code != exitOK || strings.Contains(errs, "empty (0 bytes)") {
		t.Errorf("--quiet: exit %d, stderr %q", code, errs)
	}
}
