package mailbox

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"testing/iotest"
)

// walkParts reads one message through a one-byte reader and walks it.
func walkParts(t *testing.T, msg string, opts *Options) (*Message, []*Part) {
	t.Helper()
	o := Options{Format: FormatMessage}
	if opts != nil {
		o = *opts
		o.Format = FormatMessage
	}
	r, err := NewReader(iotest.OneByteReader(strings.NewReader(msg)), "case", &o)
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	return m, m.Parts()
}

// hasProblem reports whether a problem of kind is among probs, and its
// offset.
func hasProblem(probs []Problem, kind error) (int64, bool) {
	for _, p := range probs {
		if errors.Is(p, kind) {
			return p.Offset, true
		}
	}
	return 0, false
}

// TestMalformedTextTypes: a Content-Type that is not type/subtype is read
// as text/plain (RFC 2045 §5.2), with its charset if it has one, and
// reported.
func TestMalformedTextTypes(t *testing.T) {
	for _, tt := range []struct{ ct, body, want string }{
		{"text", "see http://e.org/a\n", "see http://e.org/a\n"},
		{"TEXT", "see http://e.org/a\n", "see http://e.org/a\n"},
		{"text; charset=iso-8859-1", "caf\xe9 http://e.org/a\n", "café http://e.org/a\n"},
		{"plain", "see http://e.org/a\n", "see http://e.org/a\n"},
		{"text/", "see http://e.org/a\n", "see http://e.org/a\n"},
		{"/plain", "see http://e.org/a\n", "see http://e.org/a\n"},
		{`"text/plain"`, "see http://e.org/a\n", "see http://e.org/a\n"},
		{"text/plain/html", "see http://e.org/a\n", "see http://e.org/a\n"},
	} {
		m, parts := walkParts(t, "From: a@b\nContent-Type: "+tt.ct+"\n\n"+tt.body, nil)
		p := parts[len(parts)-1]
		if string(p.Text) != tt.want || p.ContentType != "text/plain" {
			t.Errorf("%q: type %q, text %q, want text/plain %q", tt.ct, p.ContentType, p.Text, tt.want)
		}
		if off, ok := hasProblem(m.Problems, ErrStructure); !ok || off != int64(len("From: a@b\n")) {
			t.Errorf("%q: no structure problem at the field (%v)", tt.ct, m.Problems)
		}
	}
	// a multipart whose parameters do not parse keeps its boundary, and a
	// text type its charset
	m, parts := walkParts(t, "From: a@b\nContent-Type: multipart/mixed; boundary=\"b\" junk\n\n--b\nContent-Type: text/plain; charset=iso-8859-1; ;;=\n\ncaf\xe9\n--b--\n", nil)
	if p := parts[len(parts)-1]; len(parts) != 1 || p.Path != "1" || string(p.Text) != "café" {
		t.Errorf("salvaged multipart: %d parts, last %q %q", len(parts), p.Path, p.Text)
	}
	if _, ok := hasProblem(m.Problems, ErrStructure); !ok {
		t.Errorf("salvaged multipart: not reported (%v)", m.Problems)
	}
	// a well-formed type is not reported
	m, _ = walkParts(t, "From: a@b\nContent-Type: text/x-weird\n\nhttp://e.org/\n", nil)
	if len(m.Problems) != 0 {
		t.Errorf("text/x-weird: %v", m.Problems)
	}
}

// TestReportParts: the parts of delivery reports, feedback reports and
// disposition notifications are read as text.
func TestReportParts(t *testing.T) {
	msg := `From: MAILER-DAEMON@example.org
Content-Type: multipart/report; report-type=delivery-status; boundary=b

--b
Content-Type: text/plain

Your message could not be delivered.
--b
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.example.org
Final-Recipient: rfc822; x@example.org
Diagnostic-Code: smtp; 550 see http://mx.example.org/why
--b
Content-Type: message/feedback-report

Feedback-Type: abuse
Reported-URI: http://spam.example.org/offer
--b
Content-Type: message/disposition-notification

Reporting-UA: mua.example.org; http://mua.example.org/
--b
Content-Type: text/rfc822-headers

List-Unsubscribe: <http://lists.example.org/u>
--b
Content-Type: message/global-delivery-status

Diagnostic-Code: smtp; 550 see http://mx.example.org/ü
--b
Content-Type: message/global-headers

List-Unsubscribe: <http://lists.example.org/ü>
--b--
`
	_, parts := walkParts(t, msg, nil)
	want := map[string]string{
		"message/delivery-status":          "http://mx.example.org/why",
		"message/feedback-report":          "http://spam.example.org/offer",
		"message/disposition-notification": "http://mua.example.org/",
		"text/rfc822-headers":              "http://lists.example.org/u",
		"message/global-delivery-status":   "http://mx.example.org/ü",
		"message/global-headers":           "http://lists.example.org/ü",
	}
	for _, p := range parts {
		if w, ok := want[p.ContentType]; ok {
			if !bytes.Contains(p.Text, []byte(w)) {
				t.Errorf("%s: text %q lacks %s", p.ContentType, p.Text, w)
			}
			delete(want, p.ContentType)
		}
	}
	if len(want) > 0 {
		t.Errorf("parts not read: %v", want)
	}
}

// TestTruncatedBase64: base64 that stops inside a group of four is
// decoded as far as it goes and reported where it stops.
func TestTruncatedBase64(t *testing.T) {
	plain := "Links: http://example.org/a and http://example.org/b\n"
	enc := base64.StdEncoding.EncodeToString([]byte(plain))
	head := "From: a@b\nContent-Type: text/plain\nContent-Transfer-Encoding: base64\n\n"
	for _, cut := range []int{len(enc) - 1, len(enc) - 2, len(enc) - 3, len(enc) - 5, 41} {
		body := enc[:cut]
		if cut > 40 {
			body = enc[:40] + "\n" + enc[40:cut] // cut on the second line
		}
		m, parts := walkParts(t, head+body+"\n", nil)
		p := parts[0]
		if !strings.HasPrefix(plain, string(p.Text)) || len(p.Text) < cut*3/4-3 {
			t.Errorf("cut %d: text %q", cut, p.Text)
		}
		off, ok := hasProblem(p.Problems, ErrTruncated)
		if (cut%4 != 0) != ok {
			t.Errorf("cut %d: problems %v", cut, p.Problems)
			continue
		}
		if ok && off != m.RawOffset+int64(len(head)+len(body)) {
			t.Errorf("cut %d: truncation at %d, want %d (after the last character)", cut, off, len(head)+len(body))
		}
	}
	// whole base64, with padding: nothing to report
	_, parts := walkParts(t, head+enc+"\n", nil)
	if len(parts[0].Problems) != 0 || string(parts[0].Text) != plain {
		t.Errorf("whole: %q %v", parts[0].Text, parts[0].Problems)
	}
}

// TestPartSizeLimit: decoding stops soon after the limit, the text is cut
// at it, and the cut is reported as too long.
func TestPartSizeLimit(t *testing.T) {
	line := strings.Repeat("=41", 25) + "=\n"
	body := strings.Repeat(line, 4000) // 100 000 decoded bytes
	for _, enc := range []string{"quoted-printable", "8bit"} {
		b := body
		if enc == "8bit" {
			b = strings.Repeat("caf\xe9 ", 20000)
		}
		_, parts := walkParts(t, "From: a@b\nContent-Type: text/plain; charset=iso-8859-1\nContent-Transfer-Encoding: "+enc+"\n\n"+b, &Options{MaxPartSize: 1000})
		p := parts[0]
		if len(p.Text) != 1000 {
			t.Errorf("%s: %d bytes of text, want 1000", enc, len(p.Text))
		}
		if _, ok := hasProblem(p.Problems, ErrTooLong); !ok {
			t.Errorf("%s: no ErrTooLong in %v", enc, p.Problems)
		}
		if r, _, ok := p.RawSpan(0, 3); !ok || r != p.RawStart {
			t.Errorf("%s: first range not exact", enc)
		}
	}
}

// TestWalkProblemKinds: every problem of the walk has a kind.
func TestWalkProblemKinds(t *testing.T) {
	for _, tt := range []struct {
		msg  string
		kind error
	}{
		{"Content-Type: multipart/mixed\n\nx\n", ErrStructure},
		{"Content-Type: multipart/mixed; boundary=b\n\nno boundary here\n", ErrStructure},
		{"Content-Type: multipart/mixed; boundary=b\n\n--b\n\nx\n", ErrTruncated},
		{"Content-Type: text/plain; charset=x-nonesuch\n\ncaf\xe9\n", ErrCharset},
		{"Content-Type: text/plain\nContent-Transfer-Encoding: x-uuencode\n\nx\n", ErrDecode},
		{"Content-Type: text/plain\nContent-Transfer-Encoding: quoted-printable\n\na=ZZ\n", ErrDecode},
		{"Content-Type: text/plain; charset=utf-8\n\n\xff\n", ErrCharset},
	} {
		m, parts := walkParts(t, "From: a@b\n"+tt.msg, nil)
		probs := m.Problems
		for _, p := range parts {
			probs = append(probs, p.Problems...)
		}
		if len(probs) == 0 {
			t.Errorf("%q: no problem", tt.msg)
		}
		for _, p := range probs {
			if !errors.Is(p, tt.kind) {
				t.Errorf("%q: problem %q is not %v", tt.msg, p.Msg, tt.kind)
			}
		}
	}
	m, _ := walkParts(t, "From: a@b\nContent-Type: multipart/mixed; boundary=b\n\n--b\n\nx\n--b--\n", &Options{MaxParts: -1, MaxDepth: -1})
	if len(m.Problems) != 0 {
		t.Errorf("no limits: %v", m.Problems)
	}
	var nested strings.Builder
	nested.WriteString("From: a@b\n")
	for range 5 {
		nested.WriteString("Content-Type: message/rfc822\n\n")
	}
	nested.WriteString("x\n")
	m, _ = walkParts(t, nested.String(), &Options{MaxDepth: 2})
	if _, ok := hasProblem(m.Problems, ErrTooDeep); !ok {
		t.Errorf("nesting: %v", m.Problems)
	}
}

// TestEncodedMessage: the parts of a base64-encoded message/rfc822 come
// from the encoded body as a whole: they map to its start, never exactly.
func TestEncodedMessage(t *testing.T) {
	inner := "Subject: inner\nContent-Type: text/plain\n\nsee http://e.org/inner\n"
	head := "From: a@b\nContent-Type: message/rfc822\nContent-Transfer-Encoding: base64\n\n"
	m, parts := walkParts(t, head+base64.StdEncoding.EncodeToString([]byte(inner))+"\n", nil)
	p := parts[len(parts)-1]
	i := bytes.Index(p.Text, []byte("http://"))
	if i < 0 {
		t.Fatalf("text %q", p.Text)
	}
	body := m.RawOffset + int64(len(head))
	if r, _, ok := p.RawSpan(i, i+5); ok || r != body {
		t.Errorf("RawSpan %d %v, want %d false", r, ok, body)
	}
	if r := p.RawOffset(i); r != body {
		t.Errorf("RawOffset %d, want %d", r, body)
	}
	// so do its header's fields and its problems (Part.shift), which were
	// offsets in the decoded bytes
	if len(p.Header) == 0 {
		t.Fatal("inner part without its header")
	}
	for _, f := range p.Header {
		if f.Offset != body || f.End != body {
			t.Errorf("field %s at %d..%d, want %d", f.Name, f.Offset, f.End, body)
		}
	}
	inner = "Content-Type: text/plain\nContent-Transfer-Encoding: quoted-printable\n\nbad =ZZ escape\n"
	_, parts = walkParts(t, head+base64.StdEncoding.EncodeToString([]byte(inner))+"\n", nil)
	p = parts[len(parts)-1]
	if off, ok := hasProblem(p.Problems, ErrDecode); !ok || off != body {
		t.Errorf("inner problem at %d %v, want %d: %v", off, ok, body, p.Problems)
	}
}

// TestHoles: a message whose reader left part of an attachment out of
// Raw still maps the text after it to the file, and says what was lost.
func TestHoles(t *testing.T) {
	att := strings.Repeat(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xa5}, 57))+"\n", 100)
	file := "From: a@b\nContent-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/plain\n\nfirst http://e.org/1\n" +
		"--b\nContent-Type: image/png\nContent-Transfer-Encoding: base64\n\n" + att +
		"--b\nContent-Type: text/plain; charset=iso-8859-1\nContent-Transfer-Encoding: quoted-printable\n\ncaf=E9 http://e.org/2\n--b--\n"
	const base = 1000 // the message's offset in its file
	cut := strings.Index(file, att) + 78*10
	n := 78 * 80 // 80 lines of the attachment left out
	raw := file[:cut] + file[cut+n:]
	m := &Message{Raw: []byte(raw), RawOffset: base, Holes: []Hole{{At: cut, Len: int64(n)}}, opts: (&Options{}).withDefaults(), unparsed: true, Format: FormatMessage}
	if got, want := m.FileOffset(cut+5), int64(base+cut+n+5); got != want {
		t.Errorf("FileOffset after the hole %d, want %d", got, want)
	}
	if got, want := m.FileOffset(cut-1), int64(base+cut-1); got != want {
		t.Errorf("FileOffset before the hole %d, want %d", got, want)
	}
	parts := m.Parts()
	if len(parts) != 3 {
		t.Fatalf("%d parts", len(parts))
	}
	for _, p := range []*Part{parts[0], parts[2]} {
		i := bytes.Index(p.Text, []byte("http://"))
		ra, rb, ok := p.RawSpan(i, len(bytes.TrimRight(p.Text, "\n")))
		if !ok || file[ra-base:rb-base] != strings.TrimRight(string(p.Text[i:]), "\n") {
			t.Errorf("part %s: %d..%d %v maps to %q", p.Path, ra, rb, ok, file[max(ra-base, 0):max(rb-base, 0)])
		}
		if len(p.Problems) != 0 {
			t.Errorf("part %s: %v", p.Path, p.Problems)
		}
	}
	img := parts[1]
	if off, ok := hasProblem(img.Problems, ErrTooLong); !ok || off != base+int64(cut) {
		t.Errorf("attachment: %v, want ErrTooLong at %d", img.Problems, base+cut)
	}
	if got, want := img.RawEnd, int64(base+strings.Index(file, att)+len(att)-1); got != want {
		t.Errorf("attachment ends at %d, want %d", got, want)
	}
	if f := parts[2].Header[0]; file[f.Offset-base:f.End-base] != "Content-Type: text/plain; charset=iso-8859-1\n" {
		t.Errorf("field after the hole at %d..%d: %q", f.Offset, f.End, file[f.Offset-base:f.End-base])
	}
}

// TestBareCR: a message of bare-CR lines says so, one of LF lines not.
func TestBareCR(t *testing.T) {
	for _, tt := range []struct {
		msg  string
		want bool
	}{
		{"From: a@b\rSubject: x\r\rsee http://e.org/\r", true},
		{"From: a@b\nSubject: x\n\nsee http://e.org/\n", false},
		{"From: a@b\r\nSubject: x\r\n\r\nsee http://e.org/\r\n", false},
	} {
		m, parts := walkParts(t, tt.msg, nil)
		if m.BareCR() != tt.want {
			t.Errorf("%q: BareCR %v", tt.msg, m.BareCR())
		}
		if !bytes.Contains(parts[0].Text, []byte("http://e.org/")) {
			t.Errorf("%q: text %q", tt.msg, parts[0].Text)
		}
	}
}

// TestDecodeProblemOffset: bad quoted-printable or base64 data is
// reported at the line that holds it, not at the start of the part.
func TestDecodeProblemOffset(t *testing.T) {
	for _, tt := range []struct{ enc, body, bad string }{
		{"quoted-printable", "good line\nalso =C3=A9 good\nbad =ZZ here\nand =Q again\n", "bad =ZZ here"},
		{"base64", "aGVsbG8gd29y\nbGQgaGVsbG8g\nd2=ybGQ=\nd2=ybGQ=\n", "d2=ybGQ="},
	} {
		msg := "From: a@b\nContent-Type: text/plain\nContent-Transfer-Encoding: " + tt.enc + "\n\n" + tt.body
		_, parts := walkParts(t, msg, nil)
		if len(parts) != 1 {
			t.Fatalf("%s: %d parts", tt.enc, len(parts))
		}
		var got []int64
		for _, p := range parts[0].Problems {
			if errors.Is(p, ErrDecode) {
				got = append(got, p.Offset)
			}
		}
		want := int64(strings.Index(msg, tt.bad))
		if len(got) != 1 || got[0] != want {
			t.Errorf("%s: decode problems at %v, want one at %d (the first bad line; the part starts at %d)", tt.enc, got, want, parts[0].RawStart)
		}
	}
}

// TestCharsetProblemOffset: text not valid in its charset is reported at
// the first byte that is not (at its line in a base64 part).
func TestCharsetProblemOffset(t *testing.T) {
	for _, tt := range []struct{ head, body, bad string }{
		{"Content-Type: text/plain; charset=utf-8\n", "caf\xc3\xa9 ok\nbad \xff here\n", "\xff here"},
		{"Content-Type: text/plain\n", "plain\nnot ascii: \xe9t\xe9\n", "\xe9t\xe9"},
		{"Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n", "ok =C3=A9\nbad =FF\n", "=FF"},
		{"Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n", "b2sgb2sgb2sg\nYmFk/w==\n", "YmFk/w=="},
	} {
		msg := "From: a@b\n" + tt.head + "\n" + tt.body
		_, parts := walkParts(t, msg, nil)
		var got []int64
		for _, p := range parts[0].Problems {
			if errors.Is(p, ErrCharset) {
				got = append(got, p.Offset)
			}
		}
		want := int64(strings.Index(msg, tt.bad))
		if len(got) != 1 || got[0] != want {
			t.Errorf("%q: charset problems at %v, want one at %d", tt.head, got, want)
		}
	}
}

// FuzzValidMediaType: the media types validMediaType knows by name are
// those the rule (a token, "/", a token) accepts, and it agrees with the
// rule on anything else.
func FuzzValidMediaType(f *testing.F) {
	for _, s := range []string{"text/plain", "text/html", "multipart/alternative", "multipart/mixed", "multipart/related",
		"message/rfc822", "application/octet-stream", "image/png", "image/jpeg", "image/gif", "application/pdf",
		"text", "text/", "/plain", "text/plain/html", `"text/plain"`, "text/x-weird", "te xt/plain", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, mt string) {
		if got, want := validMediaType(mt), isTypeSubtype(mt); got != want {
			t.Errorf("validMediaType(%q) = %v, the rule says %v", mt, got, want)
		}
	})
}
