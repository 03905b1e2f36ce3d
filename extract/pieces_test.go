package extract

import (
	"bytes"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

// Lines longer than MaxLineLength plus the context (contextLen) are
// scanned in pieces. These tests make pieces cheap: 50-byte pieces and
// links of 64 bytes at most, so a line is cut when it is longer than
// 50+64+ctxSlack bytes.
const testPiece, testLinkMax = 50, 64

// pieceOptions returns o with small pieces, and o with no line limit (a
// line is always seen whole), both with links of testLinkMax at most.
func pieceOptions(o Options) (small, whole *Options) {
	o.MaxLinkLength = testLinkMax
	s, w := o, o
	s.MaxLineLength, w.MaxLineLength = testPiece, -1
	return &s, &w
}

// scanWith returns the links of text read through r (nil: in memory).
func scanWith(t *testing.T, text []byte, opts *Options, r func(io.Reader) io.Reader) []Link {
	t.Helper()
	if r == nil {
		return All(text, opts)
	}
	sc := NewScanner(r(bytes.NewReader(text)), opts)
	var ls []Link
	for sc.Scan() {
		ls = append(ls, sc.Link())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return ls
}

// pieceReaders are the ways text is read in the piece tests.
var pieceReaders = []struct {
	name string
	fn   func(io.Reader) io.Reader
}{{"bytes", nil}, {"OneByte", iotest.OneByteReader}, {"Half", iotest.HalfReader}}

// samePieces checks that text gives the same links in pieces (in memory
// and through readers) as seen whole, and returns them.
func samePieces(t *testing.T, name string, text []byte, o Options) []Link {
	t.Helper()
	small, whole := pieceOptions(o)
	want := All(text, whole)
	for _, r := range pieceReaders {
		if got := scanWith(t, text, small, r.fn); !reflect.DeepEqual(got, want) {
			t.Errorf("%s, %s in pieces:\ngot  %s\nwant %s", name, r.name, linksString(got), linksString(want))
		}
	}
	return want
}

func linksString(ls []Link) string {
	var b strings.Builder
	for _, l := range ls {
		fmt.Fprintf(&b, "\n  %q %s [%d,%d) %d:%d segs %v joined %v heur %v %q", l.URL, l.Form, l.Start, l.End, l.Line, l.Column, l.Segments, l.Joined, l.Heuristic, l.Problems)
	}
	return b.String()
}

// every kind of link the extractor finds, as written and as reported
var pieceCases = []struct {
	name, text string
	url        string
	at         int // where url starts in text
	form       Form
	opts       Options
}{
	{"http", "http://cross.example/path/abc", "http://cross.example/path/abc", 0, FormBare, Options{}},
	{"https-query", "https://q.example/a?b=1&c=2", "https://q.example/a?b=1&c=2", 0, FormBare, Options{}},
	{"mailto", "mailto:joe@m.example", "mailto:joe@m.example", 0, FormBare, Options{}},
	{"news", "news:comp.lang.go", "news:comp.lang.go", 0, FormBare, Options{}},
	{"mid", "mid:1234@host.example", "mid:1234@host.example", 0, FormBare, Options{}},
	{"cid", "cid:part1.abc@host.example", "cid:part1.abc@host.example", 0, FormBare, Options{}},
	{"glued", "seehttp://glued.example/p", "http://glued.example/p", 3, FormBare, Options{}},
	{"wrapper", "<URL:http://wrap.example/p>", "http://wrap.example/p", 5, FormWrapper, Options{}},
	{"wrapper-space", "<URL: ftp://wrap.example/p >", "ftp://wrap.example/p", 6, FormWrapper, Options{}},
	{"angle", "<http://angle.example/p>", "http://angle.example/p", 1, FormAngle, Options{}},
	{"angle-opaque", "<mid:77@angle.example>", "mid:77@angle.example", 1, FormAngle, Options{}},
	{"angle-padded", "< http://pad.example/ >", "http://pad.example/", 2, FormAngle, Options{}},
	{"quoted", `"http://quoted.example/p"`, "http://quoted.example/p", 1, FormQuoted, Options{}},
	{"json", `{"u":"http://json.example/a"}`, "http://json.example/a", 6, FormQuoted, Options{}},
	{"paren", "(http://paren.example/x_(y))", "http://paren.example/x_(y)", 1, FormBare, Options{}},
	{"www", "www.abbrev.example/p", "www.abbrev.example/p", 0, FormAbbrev, Options{}},
	{"ftp-abbrev", "ftp.abbrev.example", "ftp.abbrev.example", 0, FormAbbrev, Options{}},
	{"email", "joe.user@mail.example", "joe.user@mail.example", 0, FormEmail, Options{Emails: true}},
	{"email-quoted", `"joe user"@mail.example`, `"joe%20user"@mail.example`, 0, FormEmail, Options{Emails: true}},
	{"domain", "bare-domain.com/path", "bare-domain.com/path", 0, FormDomain, Options{BareDomains: true}},
	{"domain-port", "host.example.org:8080", "host.example.org:8080", 0, FormDomain, Options{BareDomains: true}},
	{"ipv4", "192.0.2.10:8080/x", "192.0.2.10:8080/x", 0, FormDomain, Options{BareDomains: true}},
	{"ipv6", "[2001:db8::1]:8080/x", "[2001:db8::1]:8080/x", 0, FormDomain, Options{BareDomains: true}},
	{"defanged", "hxxp://fang[.]example/p", "hxxp://fang[.]example/p", 0, FormBare, Options{Refang: true}},
	{"data", "data:text/plain,hello", "data:text/plain,hello", 0, FormBare, Options{DataURIs: true}},
}

// TestPieceBoundaries puts each kind of link at every offset around a
// piece boundary of a long line, after fillers of one, two and three
// bytes a character: it is found, whole, with its line's column in
// characters, in pieces as when the line is seen whole, from memory and
// through readers. The old scanner lost a link whose scheme (or "www.",
// "<URL:", an address's "@") was cut by the boundary, and counted
// columns from the piece.
func TestPieceBoundaries(t *testing.T) {
	const boundary = 20 * testPiece // a piece boundary well inside the line
	for _, c := range pieceCases {
		for _, fill := range []string{"z", "é", "€"} {
			for b := boundary - len(c.text) - 4; b <= boundary+4; b++ {
				n := (b - 1) / len(fill) // characters of filler; then a space
				head := strings.Repeat(fill, n) + " "
				line := head + c.text + " " + strings.Repeat("y", 3000)
				text := []byte(line + "\nnext http://next.example/\n")
				name := fmt.Sprintf("%s/%s/%d", c.name, fill, len(head))
				ls := samePieces(t, name, text, c.opts)
				if len(ls) != 2 {
					t.Errorf("%s: %d links, want 2:%s", name, len(ls), linksString(ls))
					continue
				}
				l := ls[0]
				if l.URL != c.url || l.Form != c.form || l.Start != int64(len(head)+c.at) || l.Line != 1 || l.Column != n+2+c.at || l.Joined {
					t.Errorf("%s: got%s\nwant %q %s at %d, 1:%d", name, linksString(ls[:1]), c.url, c.form, len(head)+c.at, n+2+c.at)
				}
				if l2 := ls[1]; l2.URL != "http://next.example/" || l2.Line != 2 || l2.Column != 6 {
					t.Errorf("%s: link of the next line:%s", name, linksString(ls[1:]))
				}
			}
		}
	}
}

// TestPieceJoins: links that go on into the next line from the end of
// a long line (its last piece), or whose line's quote prefix is pieces
// back, are joined as when the line is seen whole.
func TestPieceJoins(t *testing.T) {
	long := strings.Repeat("word ", 700) // 3500 bytes
	for _, c := range []struct {
		name, text, url string
		opts            Options
	}{
		{"heuristic", long + "http://wrap.example/a/long/path/cut/\nby-mailer.html and more\n",
			"http://wrap.example/a/long/path/cut/by-mailer.html", Options{}},
		{"heuristic-quoted", "> " + long + "http://wrap.example/path/cut/\n> next-part.html more\n",
			"http://wrap.example/path/cut/next-part.html", Options{}},
		{"wrapper", long + "<URL:http://wrap.example/x/\n   y/z>\n", "http://wrap.example/x/y/z", Options{}},
		{"wrapper-alone", long + "<URL:\n   http://wrap.example/x>\n", "http://wrap.example/x", Options{}},
		{"angle-quoted", "> " + long + "<http://wrap.example/x/\n> y>\n", "http://wrap.example/x/y", Options{}},
		{"prefix-gutter", "  679. " + long + "http://g.example/p\n", "http://g.example/p", Options{}},
		{"trace-field", "Received: from " + long + "relay.example.com by mx.example.org\nhttp://t.example/\n", "http://t.example/", Options{BareDomains: true}},
		{"hidden-address", "From: " + strings.Repeat("x", 1200) + " keith at keithp.com wrote:\nhttp://h.example/\n", "http://h.example/", Options{BareDomains: true}},
	} {
		ls := samePieces(t, c.name, []byte(c.text), c.opts)
		if len(ls) != 1 || ls[0].URL != c.url {
			t.Errorf("%s: got%s\nwant %q alone", c.name, linksString(ls), c.url)
		}
	}
}

// TestLongLineColumn: the column of a link far into a long line is
// counted in characters from the line's start, in pieces of the default
// size (64 KiB), in memory and through a reader; the same with a piece
// cut inside a character.
func TestLongLineColumn(t *testing.T) {
	for _, fill := range []string{"b", "é", "€", "😀"} {
		for _, n := range []int{524288, 1<<20 + 3, 3 << 20} {
			k := n / len(fill)
			text := []byte(strings.Repeat(fill, k) + " http://end.example/\n")
			for _, r := range []int{0, 2} { // in memory, HalfReader
				r := pieceReaders[r]
				ls := scanWith(t, text, nil, r.fn)
				if len(ls) != 1 || ls[0].URL != "http://end.example/" || ls[0].Column != k+2 || ls[0].Line != 1 || ls[0].Start != int64(k*len(fill)+1) {
					t.Errorf("%q x %d, %s: got%s\nwant column %d", fill, k, r.name, linksString(ls), k+2)
				}
			}
		}
	}
	// broken UTF-8 counts a character a byte, in pieces too
	text := []byte(strings.Repeat("\xf0\x9f\x98", 30000) + strings.Repeat("\x80", 7) + " http://end.example/\n")
	want := utf8.RuneCount(text[:bytes.Index(text, []byte("http"))]) + 1
	if ls := All(text, &Options{MaxLineLength: 1000}); len(ls) != 1 || ls[0].Column != want {
		t.Errorf("broken UTF-8: got%s\nwant column %d", linksString(ls), want)
	}
}

// TestSyncCut: a piece never ends inside a valid UTF-8 sequence.
func TestSyncCut(t *testing.T) {
	for _, c := range []struct {
		b      string
		lo, at int
		want   int
	}{
		{"abcdef", 0, 3, 3},
		{"ab€def", 0, 3, 2},    // inside €: before it
		{"ab€def", 0, 4, 2},    // still inside
		{"ab€def", 0, 5, 5},    // after it
		{"€def", 0, 1, 3},      // the piece would be empty: after it
		{"a\xe2\x82", 0, 2, 2}, // a broken sequence may be cut
		{"a\x80\x80\x80\x80b", 0, 4, 4},
	} {
		if got := syncCut([]byte(c.b+"    "), c.lo, c.at); got != c.want {
			t.Errorf("syncCut(%q, %d, %d) = %d, want %d", c.b, c.lo, c.at, got, c.want)
		}
	}
}

// FuzzPieces compares the links of long lines scanned in small pieces
// (in memory and through a one-byte reader) with those of the lines seen
// whole: the input is repeated to over 2,500 bytes, so that its links
// fall at many offsets from the pieces' boundaries, and with oneLine its
// line breaks are made spaces.
func FuzzPieces(f *testing.F) {
	for _, c := range pieceCases {
		f.Add("x "+c.text+" y", uint8(7), true)
	}
	for _, c := range cases {
		f.Add(c.in, uint8(13), false)
	}
	f.Add("> see <URL:http://a.example/x\n>   y> and keith at keithp.com wrote:\n", uint8(0), false)
	f.Add("Received: from relay.example.com ([192.0.2.1]) by mx.example.org", uint8(3), true)
	f.Fuzz(func(t *testing.T, in string, piece uint8, oneLine bool) {
		if in == "" || len(in) > 400 {
			return
		}
		if oneLine {
			in = strings.ReplaceAll(in, "\n", " ")
		}
		text := []byte(strings.Repeat(in, 2500/len(in)+1))
		o := Options{Emails: true, BareDomains: true, DataURIs: true, Refang: true, MaxLinkLength: 40}
		whole, small := o, o
		whole.MaxLineLength, small.MaxLineLength = -1, 1+int(piece)%100
		want := All(text, &whole)
		if got := All(text, &small); !reflect.DeepEqual(got, want) {
			t.Fatalf("pieces of %d bytes:\ngot  %s\nwant %s", small.MaxLineLength, linksString(got), linksString(want))
		}
		if got := scanWith(t, text, &small, iotest.OneByteReader); !reflect.DeepEqual(got, want) {
			t.Fatalf("pieces of %d bytes, one-byte reader:\ngot  %s\nwant %s", small.MaxLineLength, linksString(got), linksString(want))
		}
	})
}

// TestPieceMemory: a Scanner over a reader keeps its bound on a 4 MiB
// line followed by long lines and a link joined over lines, and finds the
// same links as in memory.
func TestPieceMemory(t *testing.T) {
	text := append(append([]byte{}, longLine...), strings.Repeat(strings.Repeat("v", 70000)+" <URL:http://m.example/a\n  b>\n", 12)...)
	o := (*Options)(nil).withDefaults()
	sc := NewScanner(iotest.HalfReader(bytes.NewReader(text)), nil)
	n := 0
	for sc.Scan() {
		n++
	}
	if want := len(All(text, nil)); n != want || sc.Err() != nil {
		t.Errorf("reader: %d links (%v), in memory %d", n, sc.Err(), want)
	}
	if max := windowMax(&o); len(sc.buf) > max || max > 760<<10 {
		t.Errorf("buffer %d bytes, bound %d (documented: about 740 KiB)", len(sc.buf), max)
	}
}

// TestUnterminatedDataURI: an unterminated "URL:data:..." whose data:
// URI is not reported used to panic (index out of range: the link it
// looked at had been dropped); it is passed over, or reported with
// Options.DataURIs.
func TestUnterminatedDataURI(t *testing.T) {
	for _, in := range []string{"\"URL:dAtA:0", "<URL:data:text/plain,x"} {
		if ls := All([]byte(in), nil); len(ls) != 0 {
			t.Errorf("%q: got%s\nwant nothing (data: URIs are not reported)", in, linksString(ls))
		}
		ls := All([]byte(in), &Options{DataURIs: true})
		if len(ls) != 1 || !isData([]byte(ls[0].URL)) || !slices.Contains(ls[0].Errors, ErrUnterminated) {
			t.Errorf("%q with DataURIs: got%s\nwant the data: URI, unterminated", in, linksString(ls))
		}
	}
	in := "<URL:data:text/plain,x http://after.example/"
	if ls := All([]byte(in), nil); !slices.Equal(urls(ls), []string{"http://after.example/"}) {
		t.Errorf("%q: got%s\nwant the link after it", in, linksString(ls))
	}
}

// TestPieceReach: text whose finders follow long runs (white space after
// "<URL:" or "<", a host name, the word and the field before " at ", the
// dots after a host, a wrapped line's leading white space), at offsets
// all around a piece boundary: the runs are cut (runCap, hostCap,
// MaxLinkLength) before they reach past a piece's context, so pieces
// still give what the whole line gives.
func TestPieceReach(t *testing.T) {
	sp := func(n int) string { return strings.Repeat(" ", n) }
	for _, c := range []struct {
		name, text string
		opts       Options
	}{
		{"wrapper-space", "<URL:" + sp(1500) + "http://w.example/>", Options{}},
		{"wrapper-space-ok", "<URL:" + sp(200) + "http://w.example/>", Options{}},
		{"padded-angle", "<" + sp(1500) + "http://p.example/ >", Options{}},
		{"angle-long", "<http://a.example/" + strings.Repeat("p", 1500) + " q>", Options{}},
		{"host-run", strings.Repeat("a.", 800) + "example.com", Options{BareDomains: true}},
		{"host-dots", "example.com" + strings.Repeat(".", 1500) + " x", Options{BareDomains: true}},
		{"hidden", "From:" + sp(1500) + "lars at example.edu", Options{BareDomains: true}},
		{"hidden-user", strings.Repeat("u", 1500) + " at example.edu wrote:", Options{BareDomains: true}},
		{"assigned", "self.example.com" + sp(1500) + "= 1", Options{BareDomains: true}},
		{"email-long", strings.Repeat("l", 1500) + "@" + strings.Repeat("d", 1500) + ".example", Options{Emails: true}},
		{"www-long", "www." + strings.Repeat("h", 1500) + ".example", Options{}},
		{"ipv6-port", "[2001:db8::1]:" + strings.Repeat("9", 1500), Options{BareDomains: true}},
	} {
		// the boundary near the text's start, its middle and its end
		const boundary = 100 * testPiece
		for _, at := range []int{0, len(c.text) / 2, len(c.text)} {
			for d := -6; d <= 6; d++ {
				b := boundary - at + d // filler before the text
				text := []byte(strings.Repeat("z", b) + " " + c.text + " " + strings.Repeat("y", 3000) + "\n" + sp(1500) + "next line\n")
				samePieces(t, fmt.Sprintf("%s/%d", c.name, b), text, c.opts)
			}
		}
	}
	// what a line's start says (an address field, a trace field, a quote
	// prefix), with white space up to and across a piece boundary before
	// what it bears on
	for _, c := range []struct{ name, head, tail string }{
		{"from-field", "From:", "lars at example.edu"},
		{"received", "Received: from", "relay.example.com by mx.example.org"},
		{"indented-by", "\t", "by relay.example.com"},
		{"gutter", "  679.", "http://g.example/a/long/path/that/was/cut/\n  680. --4.98 next"},
		{"quoted", ">", "http://q.example/a/long/path/cut/\n> rest.html more"},
	} {
		for _, n := range []int{100, 250, 300, 1100, 2000, 4000} {
			for d := -6; d <= 6; d++ {
				text := []byte(c.head + sp(n+d) + c.tail + " " + strings.Repeat("y", 3000) + "\n")
				samePieces(t, fmt.Sprintf("%s/%d", c.name, n+d), text, Options{BareDomains: true})
			}
		}
	}
}
