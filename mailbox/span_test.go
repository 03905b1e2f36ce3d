package mailbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/text/encoding"
	"golang.org/x/text/transform"
)

// The property of spans: for every range of a part's Text that RawSpan
// calls exact, decoding the file bytes it gives, by the part's transfer
// encoding and charset (and HTML references in HTML parts), gives exactly
// that text. The decoding here is written for the test, from the RFCs,
// and works on the range's bytes alone.

// qpFragment decodes quoted-printable bytes that may begin and end
// anywhere but inside an escape: "=" and a line ending is nothing, "=XX"
// is a byte, white space before a line ending (or before a soft break)
// is nothing, anything else stands for itself.
func qpFragment(b []byte, atEnd bool) []byte {
	var out []byte
	for len(b) > 0 {
		line := b
		nl := bytes.IndexByte(b, '\n')
		if nl >= 0 {
			line, b = b[:nl+1], b[nl+1:]
		} else {
			b = nil
		}
		// without its line ending: "\n", "\r\n", or a "\r" that ends the
		// part (a lone "\r" elsewhere is no line ending)
		body := line
		if n := len(body); n > 0 && body[n-1] == '\n' {
			body = body[:n-1]
			if n := len(body); n > 0 && body[n-1] == '\r' {
				body = body[:n-1]
			}
		} else if n := len(body); n > 0 && body[n-1] == '\r' && atEnd {
			body = body[:n-1]
		}
		eol := line[len(body):]
		if len(eol) > 0 {
			body = bytes.TrimRight(body, " \t")
		}
		soft := len(eol) > 0 && bytes.HasSuffix(body, []byte("="))
		if soft {
			body = body[:len(body)-1]
		}
		for i := 0; i < len(body); i++ {
			if body[i] == '=' && i+2 < len(body) && isHex(body[i+1]) && isHex(body[i+2]) {
				out = append(out, unhex(body[i+1])<<4|unhex(body[i+2]))
				i += 2
				continue
			}
			out = append(out, body[i])
		}
		if !soft {
			out = append(out, eol...)
		}
	}
	return out
}

// charsetBytes decodes b in one go, an undecodable byte as U+FFFD, and so
// a byte the decoder leaves at the end (half a UTF-16 unit).
func charsetBytes(enc encoding.Encoding, b []byte) []byte {
	if enc == nil {
		return b
	}
	t := enc.NewDecoder()
	var out []byte
	buf := make([]byte, 4*len(b)+64)
	for {
		nDst, nSrc, err := t.Transform(buf, b, true)
		out = append(out, buf[:nDst]...)
		b = b[nSrc:]
		if len(b) == 0 || err == nil && nSrc > 0 {
			return out
		}
		if err == transform.ErrShortDst {
			continue
		}
		out = append(out, "\uFFFD"...)
		b = b[1:]
		t.Reset()
	}
}

// statelessCharset tells charsets a range can be decoded in alone.
func statelessCharset(enc encoding.Encoding) bool {
	if enc == nil {
		return true
	}
	if _, ok := enc.(interface{ DecodeByte(byte) rune }); ok {
		return true
	}
	return asciiTransparent(enc)
}

// checkPart tries the span property on ranges of one part and returns
// how many exact ranges it checked.
func checkPart(t *testing.T, name string, m *Message, p *Part, rng *rand.Rand, ranges int) int {
	t.Helper()
	if p.Text == nil || len(p.Spans) == 0 {
		return 0
	}
	// spans are in order of text and of source
	for i := 1; i < len(p.Spans); i++ {
		if p.Spans[i].Text < p.Spans[i-1].Text || p.Spans[i].Raw < p.Spans[i-1].Raw {
			t.Fatalf("%s part %s: spans out of order at %d: %+v", name, p.Path, i, p.Spans[max(0, i-3):min(len(p.Spans), i+3)])
		}
	}
	var src []byte // the part's source: file bytes, or decoded base64
	base := p.RawStart
	if p.Reencode() {
		src, base = p.Decoded(), 0
	} else {
		lo, hi := p.RawStart-m.RawOffset, p.RawEnd-m.RawOffset
		if lo < 0 || hi > int64(len(m.Raw)) || lo > hi {
			t.Fatalf("%s part %s: body %d..%d outside the message", name, p.Path, p.RawStart, p.RawEnd)
		}
		src = m.Raw[lo:hi]
	}
	decode := func(a, b int64) []byte {
		d := src[a-base : b-base]
		if p.Encoding == "quoted-printable" {
			d = qpFragment(d, b-base == int64(len(src)))
		}
		if statelessCharset(p.decoder) {
			d = charsetBytes(p.decoder, d)
		} else {
			// a stateful charset: decode from the part's start, and keep
			// what the range's bytes add
			pre := src[:a-base]
			if p.Encoding == "quoted-printable" {
				// white space before a line ending is nothing; a lone CR
				// is a line ending only at the end of the part
				if rest := src[a-base:]; bytes.HasPrefix(rest, []byte("\n")) || bytes.HasPrefix(rest, []byte("\r\n")) || string(rest) == "\r" {
					pre = bytes.TrimRight(pre, " \t")
				}
				pre = qpFragment(pre, false)
			}
			all := charsetBytes(p.decoder, append(pre[:len(pre):len(pre)], d...))
			head := charsetBytes(p.decoder, pre)
			if !bytes.HasPrefix(all, head) {
				return nil
			}
			d = all[len(head):]
		}
		if p.ContentType == "text/html" {
			d = []byte(html.UnescapeString(string(d)))
		}
		return d
	}
	checked := 0
	try := func(a, b int) {
		if a >= b {
			return
		}
		var ra, rb int64
		var exact bool
		if p.Reencode() {
			var da, db int
			da, db, exact = p.DecodedSpan(a, b)
			ra, rb = int64(da), int64(db)
			if r1, r2, ex := p.RawSpan(a, b); ex || r1 != p.RawStart || r2 != p.RawEnd {
				t.Fatalf("%s part %s: base64 RawSpan %d %d %v", name, p.Path, r1, r2, ex)
			}
		} else {
			ra, rb, exact = p.RawSpan(a, b)
		}
		if !exact {
			return
		}
		checked++
		if ra < base || rb > base+int64(len(src)) || ra > rb {
			t.Fatalf("%s part %s: range %d..%d maps to %d..%d outside %d..%d", name, p.Path, a, b, ra, rb, base, base+int64(len(src)))
		}
		if got := decode(ra, rb); !bytes.Equal(got, p.Text[a:b]) {
			t.Fatalf("%s part %s (%s, %s, %s): text %d..%d %q maps to %d..%d %q, which decodes to %q\nspans %+v",
				name, p.Path, p.ContentType, p.Encoding, p.Charset, a, b, p.Text[a:b], ra, rb, src[ra-base:rb-base], got, p.Spans)
		}
		if !p.Reencode() {
			if ta, ok := p.TextOffset(ra); ta != a || !ok {
				t.Fatalf("%s part %s: TextOffset(%d) = %d %v, want %d true", name, p.Path, ra, ta, ok, a)
			}
		}
	}
	text := p.Text
	// every line, every word, and random ranges
	for i, line := range lines(text) {
		try(i, i+len(line))
		w := i
		for j, c := range line {
			if c == ' ' || c == '\n' || c == '\t' {
				try(w, i+j)
				w = i + j + 1
			}
		}
	}
	for range ranges {
		a := rng.IntN(len(text) + 1)
		b := a + rng.IntN(min(len(text)-a, 200)+1)
		try(a, b)
	}
	return checked
}

// spanInputs lists the files the property test reads: testdata and the
// shared corpus when it is there.
func spanInputs(t *testing.T) []string {
	var files []string
	for _, root := range []string{"../testdata", "../../shared/corpus"} {
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() && !strings.Contains(path, "golden") {
				files = append(files, path)
			}
			return nil
		})
	}
	if len(files) == 0 {
		t.Fatal("no inputs")
	}
	return files
}

// TestSpanProperty checks the span property on every text part of every
// message in testdata/ and ../shared/corpus/.
func TestSpanProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	parts, checked := 0, 0
	kinds := map[string]bool{}
	for _, path := range spanInputs(t) {
		r, err := Open(path, nil)
		if err != nil {
			continue
		}
		for {
			m, err := r.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.Logf("%s: %v", path, err)
				}
				break
			}
			for _, p := range m.Parts() {
				n := checkPart(t, fmt.Sprintf("%s@%d", path, m.Offset), m, p, rng, 50)
				if n > 0 {
					parts++
					checked += n
					kinds[p.Encoding+"/"+strings.ToLower(p.Charset)] = true
				}
			}
			m.Release()
		}
		r.Close()
	}
	t.Logf("%d parts, %d exact ranges checked; encodings/charsets %v", parts, checked, kinds)
	if parts < 50 || checked < 1000 {
		t.Errorf("only %d parts and %d ranges checked", parts, checked)
	}
}

// spanCase builds a one-part message.
func spanCase(ct, cte, body string) []byte {
	h := "From: a@example.org\nMessage-ID: <span@example.org>\nContent-Type: " + ct + "\n"
	if cte != "" {
		h += "Content-Transfer-Encoding: " + cte + "\n"
	}
	return []byte(h + "\n" + body)
}

func onePart(t *testing.T, msg []byte) (*Message, *Part) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(msg), "case", &Options{Format: FormatMessage})
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	parts := m.Parts()
	if len(parts) == 0 {
		t.Fatal("no parts")
	}
	return m, parts[len(parts)-1]
}

// TestRawSpanCases: exact ranges where the map must be exact, and ranges
// that must not be.
func TestRawSpanCases(t *testing.T) {
	for _, tt := range []struct {
		name, ct, cte, body string
		find                string // a substring of Text whose range is asked
		exact               bool
		raw                 string // the file bytes it must map to, when exact
	}{
		{"latin1 8bit after an accent", "text/plain; charset=iso-8859-1", "8bit", "caf\xe9 au lait\nsee http://example.org/x\n", "http://example.org/x", true, "http://example.org/x"},
		{"latin1 accent", "text/plain; charset=iso-8859-1", "8bit", "caf\xe9 au lait\n", "café", true, "caf\xe9"},
		{"qp escape", "text/plain; charset=utf-8", "quoted-printable", "x=3Dy http://e.org/?a=3Db\n", "http://e.org/?a=b", true, "http://e.org/?a=3Db"},
		{"qp soft break", "text/plain", "quoted-printable", "see http://example.org/a/=\nb/c here\n", "http://example.org/a/b/c", true, "http://example.org/a/=\nb/c"},
		{"qp latin1", "text/plain; charset=iso-8859-1", "quoted-printable", "caf=E9 http://e.org/caf=E9\n", "http://e.org/café", true, "http://e.org/caf=E9"},
		{"qp utf-8 bytes", "text/plain; charset=utf-8", "quoted-printable", "=E2=80=94x\n", "\x80\x94x", true, "=80=94x"},
		{"inside a character", "text/plain; charset=iso-8859-1", "quoted-printable", "caf=E9s\n", "\xa9s", false, ""},
		{"shift_jis", "text/plain; charset=shift_jis", "8bit", "\x93\xfa\x96\x7b http://e.org/\n", "http://e.org/", true, "http://e.org/"},
		{"shift_jis char", "text/plain; charset=shift_jis", "8bit", "\x93\xfa\x96\x7b http://e.org/\n", "本", true, "\x96\x7b"},
		{"iso-2022-jp", "text/plain; charset=iso-2022-jp", "7bit", "\x1b$BF|K\\\x1b(B http://e.org/\n", "http://e.org/", true, "http://e.org/"},
		// "K\\" alone decodes as ASCII: a range that starts after the shift
		// is not exact; one that starts before it is
		{"iso-2022-jp char", "text/plain; charset=iso-2022-jp", "7bit", "\x1b$BF|K\\\x1b(B http://e.org/\n", "本", false, ""},
		{"iso-2022-jp into a shift", "text/plain; charset=iso-2022-jp", "7bit", "a \x1b$BF|K\\\x1b(B http://e.org/\n", "a 日本", true, "a \x1b$BF|K\\"},
		{"utf-16", "text/plain; charset=utf-16le", "8bit", "h\x00t\x00t\x00p\x00:\x00/\x00/\x00e\x00.\x00o\x00r\x00g\x00\n\x00", "http://e.org", true, "h\x00t\x00t\x00p\x00:\x00/\x00/\x00e\x00.\x00o\x00r\x00g\x00"},
		{"invalid utf-8 as windows-1252", "text/plain; charset=utf-8", "8bit", "a\x80b http://e.org/\n", "http://e.org/", true, "http://e.org/"},
		{"html reference", "text/html", "7bit", "<p>see http://e.org/?a=1&amp;b=2 now</p>", "http://e.org/?a=1&b=2", true, "http://e.org/?a=1&amp;b=2"},
		{"html across a tag", "text/html", "7bit", "<p>http://e.org/<b>x</b></p>", "http://e.org/x", false, ""},
		{"html qp", "text/html", "quoted-printable", "<p>http://e.org/?a=3D1&amp;b=3D2</p>", "http://e.org/?a=1&b=2", true, "http://e.org/?a=3D1&amp;b=3D2"},
		{"flowed line", "text/plain; format=flowed", "", "a line \nhttp://e.org/x\n", "http://e.org/x", true, "http://e.org/x"},
		{"flowed join", "text/plain; format=flowed", "", "see http://e.org/ \nx/y\n", "http://e.org/ x/y", false, ""},
		{"flowed stuffed", "text/plain; format=flowed", "", " From http://e.org/\n", "From http://e.org/", true, "From http://e.org/"},
		{"flowed quoted", "text/plain; format=flowed", "", "> quoted http://e.org/\n", "> quoted http://e.org/", true, "> quoted http://e.org/"},
		{"flowed quote written back", "text/plain; format=flowed", "", ">quoted http://e.org/\n", "> quoted", false, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			msg := spanCase(tt.ct, tt.cte, tt.body)
			m, p := onePart(t, msg)
			i := bytes.Index(p.Text, []byte(tt.find))
			if i < 0 {
				t.Fatalf("%q not in text %q", tt.find, p.Text)
			}
			ra, rb, exact := p.RawSpan(i, i+len(tt.find))
			if exact != tt.exact {
				t.Fatalf("exact %v, want %v (%d..%d, spans %+v)", exact, tt.exact, ra, rb, p.Spans)
			}
			if exact {
				got := string(m.Raw[ra-m.RawOffset : rb-m.RawOffset])
				if got != tt.raw {
					t.Errorf("maps to %q, want %q", got, tt.raw)
				}
				if off := p.RawOffset(i); !needsDecoding(p.Encoding) && off != ra {
					t.Errorf("RawOffset %d, RawSpan %d", off, ra)
				}
			}
		})
	}
}

// TestRawSpanBase64: base64 parts map into their decoded bytes.
func TestRawSpanBase64(t *testing.T) {
	body := "Q2Fm6SBsaXN0OiBodHRwOi8vZXhhbXBsZS5vcmcvY2FmJUU5IGFuZCBodHRwOi8vZXhhbXBsZS5v\ncmcvbGF0aW4K\n"
	m, p := onePart(t, spanCase("text/plain; charset=iso-8859-1", "base64", body))
	if !p.Reencode() {
		t.Fatal("Reencode false for base64")
	}
	find := "http://example.org/latin"
	i := bytes.Index(p.Text, []byte(find))
	if ra, rb, exact := p.RawSpan(i, i+len(find)); exact || ra != p.RawStart || rb != p.RawEnd {
		t.Errorf("RawSpan %d %d %v, want the body %d %d false", ra, rb, exact, p.RawStart, p.RawEnd)
	}
	da, db, exact := p.DecodedSpan(i, i+len(find))
	if !exact || string(p.Decoded()[da:db]) != find {
		t.Errorf("DecodedSpan %d %d %v: %q", da, db, exact, p.Decoded()[da:db])
	}
	// RawOffset: the encoded line the link starts in (the first)
	if off := p.RawOffset(i); string(m.Raw[off-m.RawOffset:][:4]) != "Q2Fm" {
		t.Errorf("RawOffset points at %q", m.Raw[off-m.RawOffset:][:4])
	}
	if i := bytes.Index(p.Text, []byte("Café")); i != 0 {
		t.Fatalf("text %q", p.Text)
	}
	if da, db, exact := p.DecodedSpan(0, len("Café")); !exact || da != 0 || db != 4 {
		t.Errorf("café maps to %d %d %v", da, db, exact)
	}
}

// TestAppendRawPieces: a link joined by format=flowed is two pieces, each
// exact.
func TestAppendRawPieces(t *testing.T) {
	m, p := onePart(t, spanCase("text/plain; format=flowed", "", "see http://e.org/a/ \nb/c\n"))
	find := "http://e.org/a/ b/c"
	i := bytes.Index(p.Text, []byte(find))
	if i < 0 {
		t.Fatalf("text %q", p.Text)
	}
	pieces, ok := p.AppendRawPieces(nil, i, i+len(find))
	var got []string
	for _, r := range pieces {
		got = append(got, string(m.Raw[r.Start-m.RawOffset:r.End-m.RawOffset]))
	}
	if !ok || len(got) != 2 || got[0] != "http://e.org/a/ " || got[1] != "b/c" {
		t.Errorf("pieces %q %v", got, ok)
	}
}

// TestTextOffset maps file offsets back, and says where they fall between.
func TestTextOffset(t *testing.T) {
	m, p := onePart(t, spanCase("text/plain; charset=iso-8859-1", "quoted-printable", "caf=E9 =\nau lait\n"))
	if string(p.Text) != "café au lait\n" {
		t.Fatalf("text %q", p.Text)
	}
	at := func(s string) int64 { return m.RawOffset + int64(bytes.Index(m.Raw, []byte(s))) }
	for _, tt := range []struct {
		raw   int64
		text  int
		exact bool
	}{
		{at("caf="), 0, true},
		{at("=E9"), 3, true},
		{at("=E9") + 1, 3, false}, // inside the escape
		{at("au"), 6, true},
		{at("=\nau"), 6, false}, // the soft break: the text after it
	} {
		if got, ex := p.TextOffset(tt.raw); got != tt.text || ex != tt.exact {
			t.Errorf("TextOffset(%d) = %d %v, want %d %v", tt.raw, got, ex, tt.text, tt.exact)
		}
	}
}

// fuzzCharsets are the charsets FuzzRawSpan decodes with.
var fuzzCharsets = []string{"utf-8", "iso-8859-1", "windows-1252", "koi8-r", "shift_jis", "euc-jp", "iso-2022-jp", "gb18030", "big5", "euc-kr", "utf-16le", "ibm037"}

// FuzzRawSpan: for quoted-printable and 8-bit bodies in many charsets,
// plain, flowed and HTML, every exact range decodes to its text, and the
// walk never panics.
func FuzzRawSpan(f *testing.F) {
	f.Add(uint8(0), uint8(1), "caf=E9 http://e.org/a=\n/b=3D1 \n")
	f.Add(uint8(4), uint8(1), "=93=FA=96=7B http://e.org/\n")
	f.Add(uint8(6), uint8(0), "\x1b$BF|K\\\x1b(B http://e.org/\n\x1b$B\x1b(B")
	f.Add(uint8(10), uint8(0), "h\x00t\x00\n\x00")
	f.Add(uint8(1), uint8(2), "<p>a&amp;b=\n&#233;</p>&copy2")
	f.Add(uint8(3), uint8(3), "> a \n> b\n>>c \n d\n")
	f.Fuzz(func(t *testing.T, cs, kind uint8, body string) {
		charset := fuzzCharsets[int(cs)%len(fuzzCharsets)]
		ct, cte := "text/plain; charset="+charset, "8bit"
		switch kind % 4 {
		case 1:
			cte = "quoted-printable"
		case 2:
			ct, cte = "text/html; charset="+charset, "quoted-printable"
		case 3:
			ct += "; format=flowed; delsp=yes"
		}
		m, p := onePart(t, spanCase(ct, cte, body))
		checkPart(t, "fuzz", m, p, rand.New(rand.NewPCG(uint64(len(body)), 7)), 100)
		if len(p.Text) <= 40 {
			for a := 0; a <= len(p.Text); a++ {
				for b := a; b <= len(p.Text); b++ {
					p.RawSpan(a, b)
					p.AppendRawPieces(nil, a, b)
				}
			}
		}
		if !utf8.Valid(p.Text) && p.decoder != nil {
			t.Errorf("text %q is not UTF-8", p.Text)
		}
	})
}

// needsDecoding tells the transfer encodings whose text is not the body's
// bytes as they are.
func needsDecoding(enc string) bool { return enc == "quoted-printable" || enc == "base64" }
