package extract

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"unicode"
	"unicode/utf8"

	"github.com/linkscan/linkscan/internal/testutil"
	"github.com/linkscan/linkscan/uri"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

type want struct {
	url       string
	form      Form
	joined    bool
	heuristic bool
	problem   string // a substring of one problem, or ""
}

var cases = []struct {
	name string
	in   string
	opts *Options
	want []want
	// vary runs the case again in other contexts: inside (), quotes,
	// after a "> " prefix and before a period.
	vary bool
}{
	// RFC 1738 Appendix: <URL:...> wrappers, whitespace ignored
	{name: "wrapper", in: "<URL:ftp://ds.inter\n   nic.net/rfc>", want: []want{{"ftp://ds.internic.net/rfc", FormWrapper, true, false, ""}}},
	{name: "wrapper-type", in: "<URL:ftp://info.cern.ch/pub/www/doc\n   ;type=d>", want: []want{{"ftp://info.cern.ch/pub/www/doc;type=d", FormWrapper, true, false, ""}}},
	{name: "wrapper-case-space", in: "see <url: http://x.org/a> now", want: []want{{"http://x.org/a", FormWrapper, false, false, ""}}},
	{name: "wrapper-next-line", in: "at <URL:\n  http://x.org/b>.", want: []want{{"http://x.org/b", FormWrapper, true, false, ""}}},
	{name: "wrapper-scheme-split", in: "<URL:ftp:\n//myname@host.dom//etc/motd>", want: []want{{"ftp://myname@host.dom//etc/motd", FormWrapper, true, false, ""}}},
	// RFC 3986 Appendix C: delimited, split mid-word, closer alone
	{name: "angle", in: "Try <http://a.org/x>.", want: []want{{"http://a.org/x", FormAngle, false, false, ""}}},
	{name: "angle-midword", in: "from <ftp://ds.internic.ne\nt/rfc>.", want: []want{{"ftp://ds.internic.net/rfc", FormAngle, true, false, ""}}},
	{name: "angle-closer-alone", in: "   <ftp://info.cern.ch/pub/www/doc/http-spec.txt\n   > \n", want: []want{{"ftp://info.cern.ch/pub/www/doc/http-spec.txt", FormAngle, true, false, ""}}},
	{name: "quoted", in: `href "http://a.org/q?x=1" ok`, want: []want{{"http://a.org/q?x=1", FormQuoted, false, false, ""}}},
	{name: "no-trim-at-wrap", in: "<http://a.org/x.\nhtml>", want: []want{{"http://a.org/x.html", FormAngle, true, false, ""}}},
	{name: "hyphen-at-wrap", in: "<http://a.org/foo-\nbar>", want: []want{{"http://a.org/foo-bar", FormAngle, true, false, "hyphen"}}},
	// quote prefixes
	{name: "quoted-continuation", in: "> see <http://a.org/very/\n> long/path> ok", want: []want{{"http://a.org/very/long/path", FormAngle, true, false, ""}}},
	{name: "nested-quote", in: "> > <URL:http://a.org/x\n> > /y>", want: []want{{"http://a.org/x/y", FormWrapper, true, false, ""}}},
	{name: "tight-quote", in: ">><http://a.org/x\n>>/y>", want: []want{{"http://a.org/x/y", FormAngle, true, false, ""}}},
	{name: "bar-quote", in: "| <http://a.org/x\n| /y>", want: []want{{"http://a.org/x/y", FormAngle, true, false, ""}}},
	{name: "diff-prefix", in: "<   <ftp://info.cern.ch/pub/www/doc/http-spec.txt\n<   > \n", want: []want{{"ftp://info.cern.ch/pub/www/doc/http-spec.txt", FormAngle, true, false, ""}}},
	// when not to join
	{name: "other-prefix", in: "> <http://a.org/x\n>> y>", want: []want{{"http://a.org/x", FormBare, false, false, ProblemUnterminated}}},
	{name: "blank-line", in: "<http://a.org/x\n\ny>", want: []want{{"http://a.org/x", FormBare, false, false, ProblemUnterminated}}},
	{name: "two-tokens", in: "<http://a.org/x\nfoo bar>", want: []want{{"http://a.org/x", FormBare, false, false, ProblemUnterminated}}},
	{name: "too-many-lines", in: "<http://a.org/x\n" + strings.Repeat("y\n", 12) + ">", want: []want{{"http://a.org/x", FormBare, false, false, ProblemUnterminated}}},
	{name: "wrapper-unterminated-dropped", in: "<URL:\n\nnothing>", want: nil},
	{name: "space-inside-angle", in: "<http://a.org/x y>", want: []want{{"http://a.org/xy", FormAngle, false, false, ""}}},
	{name: "space-inside-quotes", in: `"http://a.org/x y"`, want: []want{{"http://a.org/x", FormBare, false, false, ""}}},
	// bare URLs
	{name: "bare", in: "http://a.org/x", want: []want{{"http://a.org/x", FormBare, false, false, ""}}, vary: true},
	{name: "bare-query", in: "https://a.org/p?q=1&r=2#f", want: []want{{"https://a.org/p?q=1&r=2#f", FormBare, false, false, ""}}, vary: true},
	{name: "bare-parens", in: "http://en.wikipedia.org/wiki/Foo_(bar)", want: []want{{"http://en.wikipedia.org/wiki/Foo_(bar)", FormBare, false, false, ""}}, vary: true},
	{name: "trailing-punct", in: "Go to http://a.org/x!?", want: []want{{"http://a.org/x", FormBare, false, false, ""}}},
	{name: "unbalanced", in: "(see http://a.org/x)", want: []want{{"http://a.org/x", FormBare, false, false, ""}}},
	{name: "any-scheme-slashes", in: "x-my+scheme://host/p", want: []want{{"x-my+scheme://host/p", FormBare, false, false, ""}}, vary: true},
	{name: "mid", in: "mid:abc@def.org/part1@def.org", want: []want{{"mid:abc@def.org/part1@def.org", FormBare, false, false, ""}}, vary: true},
	{name: "news", in: "news:comp.infosystems.www", want: []want{{"news:comp.infosystems.www", FormBare, false, false, ""}}, vary: true},
	{name: "news-star", in: "news:*", want: []want{{"news:*", FormBare, false, false, ""}}, vary: true},
	{name: "news-wildmat", in: "news:comp.infosystems.*", want: []want{{"news:comp.infosystems.*", FormBare, false, false, ""}}, vary: true},
	{name: "emphasis", in: "*http://a.org/x*", want: []want{{"http://a.org/x", FormBare, false, false, ""}}},
	{name: "urn", in: "urn:isbn:0451450523", want: []want{{"urn:isbn:0451450523", FormBare, false, false, ""}}, vary: true},
	{name: "cid", in: "cid:foo4%25foo1@bar.net", want: []want{{"cid:foo4%25foo1@bar.net", FormBare, false, false, ""}}, vary: true},
	{name: "mailto", in: "mailto:timbl@info.cern.ch", want: []want{{"mailto:timbl@info.cern.ch", FormBare, false, false, ""}}, vary: true},
	{name: "invalid-kept", in: "news:12345667123%asdghfh@info.cern.ch", want: []want{{"news:12345667123%asdghfh@info.cern.ch", FormBare, false, false, "hexadecimal"}}},
	{name: "unknown-opaque", in: "note:this is not a link, nor Re: this", want: nil},
	{name: "unknown-opaque-quoted", in: `printf("fingerprint:\n") and <foo:bar>`, want: nil},
	{name: "nothing-usable", in: `"http://" in a BNF, mailto: in prose, http://<host>:<port>/ and http:/// too`, want: nil},
	{name: "file-triple", in: "file:///etc/motd", want: []want{{"file:///etc/motd", FormBare, false, false, ""}}},
	// abbreviations and e-mail
	{name: "www", in: "www.example.org/path", want: []want{{"www.example.org/path", FormAbbrev, false, false, ""}}, vary: true},
	{name: "ftp-abbrev", in: "ftp.example.org", want: []want{{"ftp.example.org", FormAbbrev, false, false, ""}}, vary: true},
	{name: "not-abbrev", in: "x.www.y and www.nodot", want: nil},
	{name: "email-off", in: "mail timbl@info.cern.ch", want: nil},
	{name: "email-on", in: "mail timbl@info.cern.ch.", opts: &Options{Emails: true}, want: []want{{"timbl@info.cern.ch", FormEmail, false, false, ""}}},
	// Unicode
	{name: "nbsp-ends", in: "http://a.org/x\u00a0y", want: []want{{"http://a.org/x", FormBare, false, false, ""}}},
	{name: "ideographic-space", in: "http://a.org/x\u3000y", want: []want{{"http://a.org/x", FormBare, false, false, ""}}},
	{name: "nbsp-in-wrapper", in: "<URL:http://a.org/\u00a0x>", want: []want{{"http://a.org/x", FormWrapper, false, false, ""}}},
	{name: "iri", in: "http://例え.jp/パス", want: []want{{"http://例え.jp/パス", FormBare, false, false, "non-ASCII"}}, vary: true},
	// the mailer-wrap heuristic
	{name: "heuristic-seed-001", in: "  679.         http://www.library.my.town.va.us/Catalogue/76523471236%2Fwen44\n  680. --4.98\n",
		want: []want{{"http://www.library.my.town.va.us/Catalogue/76523471236%2Fwen44--4.98", FormBare, true, true, ""}}},
	{name: "heuristic-off", in: "  679.         http://www.library.my.town.va.us/Catalogue/76523471236%2Fwen44\n  680. --4.98\n",
		opts: &Options{NoHeuristic: true}, want: []want{{"http://www.library.my.town.va.us/Catalogue/76523471236%2Fwen44", FormBare, false, false, ""}}},
	{name: "two-links", in: "<http://a.org/1> and http://b.org/2, then <URL:c:d>", want: []want{
		{"http://a.org/1", FormAngle, false, false, ""}, {"http://b.org/2", FormBare, false, false, ""}, {"c:d", FormWrapper, false, false, ""}}},
	{name: "crlf", in: "<http://a.org/x\r\n/y>\r\nhttp://b.org/\r\n", want: []want{
		{"http://a.org/x/y", FormAngle, true, false, ""}, {"http://b.org/", FormBare, false, false, ""}}},
}

func check(t *testing.T, name, in string, opts *Options, ws []want) {
	t.Helper()
	links := All([]byte(in), opts)
	if len(links) != len(ws) {
		t.Errorf("%s: %q\ngot %d links %v\nwant %d", name, in, len(links), urls(links), len(ws))
		return
	}
	for i, w := range ws {
		l := links[i]
		if l.URL != w.url || l.Form != w.form || l.Joined != w.joined || l.Heuristic != w.heuristic ||
			(w.problem == "" && len(l.Problems) > 0 && w.form != FormBare) ||
			(w.problem != "" && !slices.ContainsFunc(l.Problems, func(p string) bool { return strings.Contains(p, w.problem) })) {
			t.Errorf("%s: %q\ngot  %q %s joined=%v heuristic=%v problems=%q\nwant %q %s joined=%v heuristic=%v problem~%q",
				name, in, l.URL, l.Form, l.Joined, l.Heuristic, l.Problems, w.url, w.form, w.joined, w.heuristic, w.problem)
		}
		checkSpan(t, name, in, l)
		if h := uri.HostOf(l.Canonical); l.Host != h {
			t.Errorf("%s: %q: Host %q, uri.HostOf gives %q", name, l.URL, l.Host, h)
		}
	}
}

// checkSpan checks the offsets, segments, line and column of a link
// against the input.
func checkSpan(t *testing.T, name, in string, l Link) {
	t.Helper()
	if l.Start < 0 || l.End < l.Start || l.End > int64(len(in)) {
		t.Errorf("%s: span [%d,%d) outside input of %d bytes", name, l.Start, l.End, len(in))
		return
	}
	if msg := segmentsProblem(in, l); msg != "" {
		t.Errorf("%s: %s", name, msg)
	}
	raw := in[l.Start:l.End]
	if strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '>' || r == '<' || r == '|' {
			return -1
		}
		return r
	}, raw) != "" && !strings.HasPrefix(l.URL, strings.TrimSpace(raw)[:1]) {
		t.Errorf("%s: span %q does not start the URL %q", name, raw, l.URL)
	}
	before := in[:l.Start]
	line := strings.Count(before, "\n") + 1
	col := len([]rune(before[strings.LastIndexByte(before, '\n')+1:])) + 1
	if l.Line != line || l.Column != col {
		t.Errorf("%s: %q at %d:%d, want %d:%d", name, l.URL, l.Line, l.Column, line, col)
	}
}

// segmentsProblem checks the segment property of issue #11: the input at
// a link's spans, concatenated, is its URL as written (white space of a
// quoted e-mail local part aside, which the URL writes %20). Segments
// are in order, inside [Start, End), and set only when needed.
func segmentsProblem(in string, l Link) string {
	var b strings.Builder
	prev := l.Start
	for i, sg := range l.Spans() {
		if sg.Start < prev || sg.End <= sg.Start || sg.End > l.End || sg.End > int64(len(in)) {
			return fmt.Sprintf("%q: segment %d %v out of order or outside [%d,%d)", l.URL, i, sg, l.Start, l.End)
		}
		b.WriteString(in[sg.Start:sg.End])
		prev = sg.End
	}
	if sp := l.Spans(); sp[0].Start != l.Start {
		return fmt.Sprintf("%q: segments %v do not start at Start %d", l.URL, sp, l.Start)
	}
	if len(l.Segments) == 1 && l.Segments[0] == (Segment{l.Start, l.End}) {
		return fmt.Sprintf("%q: one segment %v, [Start, End): Segments should be nil", l.URL, l.Segments)
	}
	got := b.String()
	if l.Form == FormEmail && strings.HasPrefix(got, `"`) {
		got = string(escapeSpace([]byte(got)))
	}
	if got != l.URL {
		return fmt.Sprintf("segments %v give %q, URL %q", l.Spans(), got, l.URL)
	}
	return ""
}

func urls(ls []Link) []string {
	var s []string
	for _, l := range ls {
		s = append(s, l.URL)
	}
	return s
}

func TestCases(t *testing.T) {
	for _, c := range cases {
		check(t, c.name, c.in, c.opts, c.want)
		if !c.vary {
			continue
		}
		for _, v := range []struct{ pre, post string }{
			{"(", ")"}, {"\"", "\""}, {"<", ">"}, {"> ", ""}, {"", "."}, {"\n", "\n"}, {"text ", " text"}, {"'", "'"},
		} {
			ws := slices.Clone(c.want)
			if v.pre == "<" && ws[0].form == FormBare {
				ws[0].form = FormAngle
			}
			if v.pre == "\"" && ws[0].form == FormBare {
				ws[0].form = FormQuoted
			}
			check(t, c.name+"/"+v.pre+"…"+v.post, v.pre+c.in+v.post, c.opts, ws)
		}
	}
}

func TestCanonicalAndScheme(t *testing.T) {
	for _, tt := range []struct{ in, canon, scheme string }{
		{"www.Example.org/a", "http://www.example.org/a", "http"},
		{"ftp.example.org", "ftp://ftp.example.org", "ftp"},
		{"<URL:HTTP://A.ORG:80>", "http://a.org/", "http"},
		{"http://例え.jp/パス", "http://xn--r8jz45g.jp/%E3%83%91%E3%82%B9", "http"},
	} {
		ls := All([]byte(tt.in), nil)
		if len(ls) != 1 || ls[0].Canonical != tt.canon || ls[0].Scheme != tt.scheme {
			t.Errorf("%q: got %+v, want canonical %q scheme %q", tt.in, ls, tt.canon, tt.scheme)
		}
	}
	ls := All([]byte("a x@y.org b"), &Options{Emails: true})
	if len(ls) != 1 || ls[0].Canonical != "mailto:x@y.org" || !ls[0].Valid {
		t.Errorf("email canonical: %+v", ls)
	}
}

// readers wraps input in the readers of testing/iotest.
var readers = []struct {
	name string
	fn   func(io.Reader) io.Reader
}{
	{"OneByte", iotest.OneByteReader},
	{"Half", iotest.HalfReader},
	{"DataErr", iotest.DataErrReader},
}

func seedInputs(t *testing.T) map[string][]byte {
	in := map[string][]byte{}
	for _, name := range []string{"seed-001.txt", "seed-002-unescaped.txt", "seed-004.txt"} {
		b, err := os.ReadFile(filepath.Join("..", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		in[name] = b
	}
	for _, c := range cases {
		in[c.name] = []byte(c.in)
	}
	for _, cs := range [][]classCase{falseJoinCases, endCases, startCases, refangCases, emailCases, spaceCases, domainCases} {
		for _, c := range cs {
			in["class/"+c.name] = []byte(c.in)
		}
	}
	return in
}

// allOptions turns every finder and reading on.
var allOptions = &Options{Emails: true, BareDomains: true, DataURIs: true, Refang: true}

func TestReaders(t *testing.T) {
	for name, b := range seedInputs(t) {
		for _, opts := range []*Options{nil, allOptions} {
			want := All(b, opts)
			for _, r := range readers {
				sc := NewScanner(r.fn(bytes.NewReader(b)), opts)
				var got []Link
				for sc.Scan() {
					got = append(got, sc.Link())
				}
				if err := sc.Err(); err != nil {
					t.Errorf("%s/%s: %v", name, r.name, err)
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s/%s (options %+v): links differ from a plain reader", name, r.name, opts)
				}
			}
		}
	}
}

// TestSmallBuffers runs the seeds with 200-byte line limits, as they are
// and made one line each (line breaks turned into spaces), so that the
// line is cut into pieces and the window must grow and slide: the links
// must be those of the whole line, in memory and through a one-byte
// reader.
func TestSmallBuffers(t *testing.T) {
	for name, b := range seedInputs(t) {
		want := urls(All(b, nil))
		got := urls(All(b, &Options{MaxLineLength: 200}))
		if !slices.Equal(got, want) {
			t.Errorf("%s: with 200-byte lines\ngot  %q\nwant %q", name, got, want)
		}
		small := *allOptions
		small.MaxLineLength = 200
		want, got = urls(All(b, allOptions)), urls(All(b, &small))
		if !slices.Equal(got, want) {
			t.Errorf("%s: all options, with 200-byte lines\ngot  %q\nwant %q", name, got, want)
		}
		one := bytes.ReplaceAll(b, []byte("\n"), []byte(" "))
		for _, o := range []Options{{}, *allOptions} {
			whole, small := o, o
			whole.MaxLineLength, small.MaxLineLength = -1, 200
			want := All(one, &whole)
			if got := All(one, &small); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s as one line (%d bytes), options %+v: 200-byte pieces differ from the whole line", name, len(one), o)
			}
			if got := scanWith(t, one, &small, iotest.OneByteReader); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s as one line, options %+v: 200-byte pieces through a one-byte reader differ from the whole line", name, o)
			}
		}
	}
	long := "x " + strings.Repeat("y", 20000) + " http://a.org/" + strings.Repeat("p", 300) + " z"
	ls := All([]byte(long), &Options{MaxLineLength: 64})
	if len(ls) != 1 || ls[0].URL != "http://a.org/"+strings.Repeat("p", 300) || ls[0].Joined || ls[0].Column != 20004 {
		t.Errorf("URL across cut pieces of a long line: %q", urls(ls))
	}
}

type errReader struct{ n int }

func (e *errReader) Read(p []byte) (int, error) {
	if e.n == 0 {
		return 0, io.ErrUnexpectedEOF
	}
	e.n--
	return copy(p, "see http://a.org/\n"), nil
}

func TestReadError(t *testing.T) {
	sc := NewScanner(&errReader{n: 2}, nil)
	n := 0
	for sc.Scan() {
		n++
	}
	if n != 2 || sc.Err() != io.ErrUnexpectedEOF {
		t.Errorf("got %d links, err %v; want 2 and ErrUnexpectedEOF", n, sc.Err())
	}
}

// TestGolden compares the links of the seed documents with golden files;
// run "go test ./extract -update" to rewrite them after a reviewed change.
func TestGolden(t *testing.T) {
	for _, name := range []string{"seed-001.txt", "seed-002-unescaped.txt", "seed-004.txt"} {
		b, err := os.ReadFile(filepath.Join("..", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		for _, l := range All(b, nil) {
			fmt.Fprintf(&out, "%d:%d\t%s\tjoined=%v\theuristic=%v\t%s\t%s\t%q\n", l.Line, l.Column, l.Form, l.Joined, l.Heuristic, l.URL, l.Canonical, l.Problems)
			checkSpan(t, name, string(b), l)
		}
		golden := filepath.Join("testdata", name+".golden")
		if *update {
			if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), want) {
			t.Errorf("%s: links differ from %s (run with -update after checking):\n%s", name, golden, testutil.LineDiff(string(want), out.String()))
		}
	}
}

// TestHeuristicPrecision measures the mailer-wrap heuristic on the
// labelled examples of testdata/heuristic.txt. The figures are in
// docs/extract.md; run with -v to see them.
func TestHeuristicPrecision(t *testing.T) {
	joinPrecision(t, "heuristic.txt", 0.95, 0.7)
}

// TestModernJoinPrecision measures the joins of bare links (the
// mailer-wrap heuristic and the joins of gateway links) on labelled
// modern list mail.
func TestModernJoinPrecision(t *testing.T) {
	joinPrecision(t, "heuristic-modern.txt", 0.95, 0.7)
}

// joinPrecision reads the labelled blocks of testdata/name and fails when
// the joins of bare links made on them fall below the precision and
// recall given.
func joinPrecision(t *testing.T, name string, minPrecision, minRecall float64) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type block struct{ want, text string }
	var blocks []block
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "### join "):
			blocks = append(blocks, block{want: strings.TrimPrefix(line, "### join ")})
		case strings.HasPrefix(line, "### nojoin"):
			blocks = append(blocks, block{})
		case strings.HasPrefix(line, "#") && len(blocks) == 0:
		default:
			blocks[len(blocks)-1].text += line + "\n"
		}
	}
	var tp, fp, fn int
	for _, b := range blocks {
		var got string
		for _, l := range All([]byte(b.text), nil) {
			if l.Joined && l.Form == FormBare {
				got = l.URL
			}
		}
		switch {
		case got != "" && got == b.want:
			tp++
		case got != "":
			fp++
			t.Logf("false join: %q (want %q)", got, b.want)
		case b.want != "":
			fn++
			t.Logf("missed join: %q", b.want)
		}
	}
	precision := float64(tp) / float64(max(tp+fp, 1))
	recall := float64(tp) / float64(max(tp+fn, 1))
	t.Logf("%s: %d examples: precision %.2f (%d/%d), recall %.2f (%d/%d)", name, len(blocks), precision, tp, tp+fp, recall, tp, tp+fn)
	if precision < minPrecision || recall < minRecall {
		t.Errorf("precision %.2f, recall %.2f: below %.2f / %.2f", precision, recall, minPrecision, minRecall)
	}
}

// TestSchemesTableFresh fails when schemes_table.go is out of date with
// its sources: regenerate with "go generate ./extract".
func TestSchemesTableFresh(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out := filepath.Join(t.TempDir(), "table.go")
	cmd := exec.Command(goTool, "run", "gen_schemes.go", "-o", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen_schemes.go: %v\n%s", err, b)
	}
	want, _ := os.ReadFile(out)
	got, _ := os.ReadFile("schemes_table.go")
	if !bytes.Equal(got, want) {
		t.Error("schemes_table.go is out of date: regenerate with 'go generate ./extract'")
	}
	for s := range opaqueSchemes {
		if _, ok := KnownScheme(s); !ok {
			t.Errorf("opaque scheme %q is not known", s)
		}
	}
	if _, ok := KnownScheme("x-my-thing"); !ok {
		t.Error("x- schemes are not known")
	}
	if _, ok := KnownScheme("notascheme"); ok {
		t.Error("an unknown scheme is known")
	}
}

// TestResetBytes scans every input with one Scanner in turn, options
// changing between them, and compares with a new Scanner for each.
func TestResetBytes(t *testing.T) {
	in := seedInputs(t)
	names := slices.Sorted(maps.Keys(in))
	sc := new(Scanner)
	for round, opts := range []*Options{nil, {MaxLineLength: 200}, {Emails: true}, allOptions} {
		for _, name := range names {
			fresh := NewBytesScanner(in[name], opts)
			var want []Link
			for fresh.Scan() {
				want = append(want, fresh.Link())
			}
			sc.ResetBytes(in[name], opts)
			var got []Link
			for sc.Scan() {
				got = append(got, sc.Link())
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("round %d, %s: a reset Scanner found\n%v\nwant\n%v", round, name, got, want)
			}
		}
	}
}

func TestLastNewline(t *testing.T) {
	for _, s := range []string{"", "\n", "abc", "a\nb", "0123456789abcdef\n", "\n0123456789abcdefghij",
		"01234567\n01234567", "0123456\n01234567", "x\n\n0123456789012345678901234567890", "\x0a\x8a\x0b\x09\x0a\x00\xff\x0a1"} {
		if got, want := lastNewline([]byte(s)), strings.LastIndexByte(s, '\n'); got != want {
			t.Errorf("lastNewline(%q) = %d, want %d", s, got, want)
		}
	}
}

func FuzzLastNewline(f *testing.F) {
	f.Add([]byte("0123456\n01234567"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := lastNewline(b), bytes.LastIndexByte(b, '\n'); got != want {
			t.Errorf("lastNewline(%q) = %d, want %d", b, got, want)
		}
	})
}

func FuzzRuneCount(f *testing.F) {
	f.Add([]byte("0123456789abcdé0123456789"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := runeCount(b), utf8.RuneCount(b); got != want {
			t.Errorf("runeCount(%q) = %d, want %d", b, got, want)
		}
	})
}

// FuzzAddNoSpace holds urlBuf.addNoSpace and hasSpace to spaceAt read
// byte by byte, and checks that the segments it records give its text.
func FuzzAddNoSpace(f *testing.F) {
	f.Add([]byte("http://a.org/ x\u00a0y\u3000z\t\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var want []byte
		has := false
		for i := 0; i < len(b); {
			if n := spaceAt(b, i); n > 0 {
				i += n
				has = true
				continue
			}
			want = append(want, b[i])
			i++
		}
		const off = 100
		var ub urlBuf
		ub.add([]byte("x"), off-1) // a piece before, to merge with
		ub.addNoSpace(b, off)
		if got := ub.u[1:]; !bytes.Equal(got, want) {
			t.Errorf("addNoSpace(%q) = %q, want %q", b, got, want)
		}
		var cat []byte
		for i, sg := range ub.segs {
			if i > 0 && sg.Start <= ub.segs[i-1].End {
				t.Fatalf("segments %v touch or overlap", ub.segs)
			}
			if i == 0 {
				cat = append(cat, 'x')
				sg.Start = off
			}
			cat = append(cat, b[sg.Start-off:sg.End-off]...)
		}
		if !bytes.Equal(cat, ub.u) {
			t.Errorf("segments %v of %q give %q, want %q", ub.segs, b, cat, ub.u)
		}
		if hasSpace(b) != has {
			t.Errorf("hasSpace(%q) = %v", b, !has)
		}
	})
}
