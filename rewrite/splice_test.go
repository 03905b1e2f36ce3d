package rewrite

import (
	"bytes"
	"encoding/base64"
	"io"
	"mime/quotedprintable"
	"strings"
	"testing"
)

// qpEncodeLines: lines of at most 76 characters, white space escaped
// only at a line's end, decoding (by the standard library) gives the
// text back, hard line endings as given.
func TestQPEncodeLines(t *testing.T) {
	for _, tc := range []struct{ in, eol string }{
		{"short line", "\n"},
		{strings.Repeat("abcdefghij", 20), "\n"},
		{strings.Repeat("=é ", 60) + "end ", "\r\n"},
		{"trailing space \nand tab\t\r\nFrom here\n" + strings.Repeat("x", 75) + "From me", "\n"},
		{strings.Repeat("a", 75) + " ", "\n"},
		{strings.Repeat("a", 76), "\n"},
		{strings.Repeat("a", 77), "\n"},
		{".", "\n"},
		{"", "\n"},
	} {
		enc := qpEncodeLines([]byte(tc.in), []byte(tc.eol))
		for _, line := range strings.Split(string(enc), "\n") {
			line = strings.TrimSuffix(line, "\r")
			if len(line) > 76 {
				t.Errorf("%q: line of %d characters: %q", tc.in, len(line), line)
			}
			if strings.HasSuffix(line, " ") || strings.HasSuffix(line, "\t") {
				t.Errorf("%q: line ends in white space: %q", tc.in, line)
			}
			if strings.HasPrefix(line, "From ") {
				t.Errorf("%q: line starts with From: %q", tc.in, line)
			}
			if i := strings.Index(line, "=20"); i >= 0 && i != len(line)-3 {
				t.Errorf("%q: =20 inside a line: %q", tc.in, line)
			}
		}
		if tc.eol == "\r\n" && bytes.Contains(bytes.ReplaceAll(enc, []byte("\r\n"), nil), []byte("\n")) {
			t.Errorf("%q: a soft break not in CRLF: %q", tc.in, enc)
		}
		dec, err := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(enc)))
		if err != nil {
			t.Fatalf("%q: %v in %q", tc.in, err, enc)
		}
		want := strings.ReplaceAll(tc.in, "\r\n", "\n")
		if got := strings.ReplaceAll(string(dec), "\r\n", "\n"); got != want {
			t.Errorf("%q: decodes to %q", tc.in, got)
		}
		// decoded by this package's decoder too, line endings kept
		if d, _ := qpDecode(enc); string(d) != tc.in {
			t.Errorf("%q: qpDecode gives %q", tc.in, d)
		}
	}
}

// qpOffset maps the start of a unit to the decoded offset, and refuses
// the inside of an escape.
func TestQPOffset(t *testing.T) {
	body := []byte("ab=3Dc=\nde\r\nf=E9g\n")
	dec, lines := qpDecode(body)
	if string(dec) != "ab=cde\r\nf\xe9g\n" {
		t.Fatalf("decoded %q", dec)
	}
	for _, tc := range []struct {
		raw, dec int
		ok       bool
	}{{0, 0, true}, {2, 2, true}, {3, 0, false}, {5, 3, true}, {8, 4, true}, {12, 8, true}, {13, 9, true}, {14, 0, false}, {16, 10, true}, {17, 11, true}} {
		d, ok := qpOffset(body, lines, tc.raw)
		if ok != tc.ok || ok && d != tc.dec {
			t.Errorf("qpOffset(%d) = %d, %v; want %d, %v", tc.raw, d, ok, tc.dec, tc.ok)
		}
	}
}

// base64Body keeps the line length and ending found and what follows
// the base64.
func TestBase64Body(t *testing.T) {
	dec := bytes.Repeat([]byte("0123456789"), 20)
	for _, tc := range []struct{ body, eol string }{
		{"QUJD\r\nREVG\r\n\r\n", "\r\n"},
		{"QUJDREVG\nSElK\n", "\n"},
		{"QUJD", ""},
		{"\r\n  QUJD\r\nREVG\r\n", "\r\n"},
	} {
		s, e, enc := base64Body([]byte(tc.body), dec)
		out := tc.body[:s] + string(enc) + tc.body[e:]
		if !strings.HasSuffix(out, tc.body[e:]) || strings.TrimRight(tc.body[e:], " \t\r\n") != "" {
			t.Errorf("%q: tail %q", tc.body, tc.body[e:])
		}
		if !strings.HasPrefix(out, tc.body[:s]) || strings.TrimLeft(tc.body[:s], " \t\r\n") != "" {
			t.Errorf("%q: head %q", tc.body, tc.body[:s])
		}
		width := strings.IndexAny(strings.TrimLeft(tc.body, " \t\r\n"), "\r\n")
		for _, l := range strings.Split(strings.TrimRight(string(enc), "\r\n"), "\n") {
			l = strings.TrimSuffix(l, "\r")
			if tc.eol != "" && len(l) > width {
				t.Errorf("%q: line %q longer than %d", tc.body, l, width)
			}
		}
		if tc.eol == "\r\n" && bytes.Count(enc, []byte("\n")) != bytes.Count(enc, []byte("\r\n")) {
			t.Errorf("%q: line endings changed: %q", tc.body, enc)
		}
		got, err := base64.StdEncoding.DecodeString(strings.NewReplacer("\r", "", "\n", "").Replace(string(enc)))
		if err != nil || !bytes.Equal(got, dec) {
			t.Errorf("%q: %q does not decode back (%v)", tc.body, enc, err)
		}
	}
}

// distribute, the rule of docs/rewrite.md for links written in pieces.
func TestDistribute(t *testing.T) {
	for _, tc := range []struct {
		old        []string // the old URL's pieces
		nu         string
		join, html bool
		want       []string
	}{
		// the break in the shared end stays where it was
		{[]string{"ftp://a.b/pub/c", "d/e"}, "https://x.example/c" + "d/e", false, false, []string{"https://x.example/c", "d/e"}},
		// in the shared start too
		{[]string{"http://h/a/b/", "c/d?utm_source=1"}, "http://h/a/b/c/d", false, false, []string{"http://h/a/b/", "c/d"}},
		// nothing shared: old lengths
		{[]string{"ab", "cd"}, "wxyz", false, false, []string{"wx", "yz"}},
		// never after a hyphen nor inside %XX
		{[]string{"abc", "def"}, "ab-xyz", false, false, []string{"ab", "-xyz"}},
		{[]string{"abcd", "ef"}, "ab%20z", false, false, []string{"ab", "%20z"}},
		// in HTML not inside an escape; in text "&" is a character
		{[]string{"ab&am", "p;c"}, "xy&amp;cd", false, true, []string{"xy", "&amp;cd"}},
		{[]string{"ab&am", "p;c"}, "xy&amp;cd", false, false, []string{"xy&am", "p;cd"}},
		// shorter: ends in the first piece, the rest removed
		{[]string{"abcdefgh", "ijkl", "mnop"}, "xyz", false, false, []string{"xyz"}},
		// longer: the last piece takes the rest
		{[]string{"ab", "cd"}, "wxyz12345", false, false, []string{"wx", "yz12345"}},
		// joined by the mailer-wrap rule: one piece
		{[]string{"http://a/b", "c"}, "http://x/bc", true, false, []string{"http://x/bc"}},
	} {
		var pcs []piece
		var old []byte
		for _, p := range tc.old {
			pcs = append(pcs, piece{len(old), len(old) + len(p)})
			old = append(old, p...)
		}
		var got []string
		for _, b := range distribute([]byte(tc.nu), old, pcs, tc.join, tc.html) {
			got = append(got, string(b))
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("distribute(%q, %q) = %q, want %q", tc.nu, tc.old, got, tc.want)
		}
		if strings.Join(got, "") != tc.nu {
			t.Errorf("distribute(%q): pieces do not join back", tc.nu)
		}
	}
}

// htmlAttrs finds link attributes, quoted or not, outside comments and
// scripts.
func TestHTMLAttrs(t *testing.T) {
	src := `<a href="h1" title='x'><IMG SRC=h2 alt=y><!-- <a href="no"> --><script>var s = '<a href="no2">'</script>` +
		`<form action = 'h3'><p class=q>text href="no3"</p><a  data-x="1" href=h4>`
	var got []string
	for _, a := range htmlAttrs([]byte(src)) {
		got = append(got, strings.TrimSuffix(a.name+"="+string(a.quote), "\x00")+src[a.vs:a.ve])
	}
	want := `href="h1 src=h2 action='h3 href=h4`
	if strings.Join(got, " ") != want {
		t.Errorf("htmlAttrs = %q, want %q", strings.Join(got, " "), want)
	}
}

// asciiForm percent-encodes non-ASCII bytes only.
func TestASCIIForm(t *testing.T) {
	for in, want := range map[string]string{
		"http://a/b":             "http://a/b",
		"http://é.example/ü?q=ß": "http://xn--9ca.example/%C3%BC?q=%C3%9F",
	} {
		if got := asciiForm(in); got != want {
			t.Errorf("asciiForm(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzQPEncode: any text (its line endings LF or CRLF) encodes to lines
// of at most 76 characters that qpDecode and mime/quotedprintable give
// back.
func FuzzQPEncode(f *testing.F) {
	f.Add([]byte("Caf\xe9 <URL:http://a/b=c> \r\nFrom here\t\n"), true)
	f.Add([]byte(strings.Repeat("x=", 50)), false)
	f.Fuzz(func(t *testing.T, dec []byte, crlf bool) {
		eol := []byte("\n")
		if crlf {
			eol = []byte("\r\n")
		}
		enc := qpEncodeLines(dec, eol)
		for _, line := range bytes.Split(enc, []byte("\n")) {
			if len(bytes.TrimSuffix(line, []byte("\r"))) > 76 {
				t.Fatalf("line of %d: %q", len(line), line)
			}
		}
		if got, _ := qpDecode(enc); !bytes.Equal(got, dec) {
			t.Fatalf("%q encodes to %q, which decodes to %q", dec, enc, got)
		}
	})
}

// FuzzDistribute: the texts join back to the new URL, one per piece at
// most.
func FuzzDistribute(f *testing.F) {
	f.Add("ftp://a.b/pub/c", "d/e", "x", "https://x.example/cd/e", false)
	f.Add("ab", "cd", "ef", "a-%20&amp;b", false)
	f.Fuzz(func(t *testing.T, p1, p2, p3, nu string, join bool) {
		var pcs []piece
		var old []byte
		for _, p := range []string{p1, p2, p3} {
			pcs = append(pcs, piece{len(old), len(old) + len(p)})
			old = append(old, p...)
		}
		texts := distribute([]byte(nu), old, pcs, join, false)
		if len(texts) == 0 || len(texts) > len(pcs) {
			t.Fatalf("%d texts for %d pieces", len(texts), len(pcs))
		}
		if string(bytes.Join(texts, nil)) != nu {
			t.Fatalf("texts %q do not join to %q", texts, nu)
		}
	})
}

// FuzzHTMLAttrs: values lie inside the input, in order.
func FuzzHTMLAttrs(f *testing.F) {
	f.Add([]byte(`<a href="x" src='y'><img src=z><!-- <a href=no> --><script><a href=q></script>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		last := 0
		for _, a := range htmlAttrs(b) {
			if a.vs < last || a.ve < a.vs || a.ve > len(b) {
				t.Fatalf("attribute %+v out of place (after %d) in %q", a, last, b)
			}
			last = a.ve
		}
	})
}
