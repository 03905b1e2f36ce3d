package mailbox

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	netmail "net/mail"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	gombox "github.com/emersion/go-mbox"
	"github.com/klauspost/compress/zstd"
	"github.com/linkscan/linkscan/internal/testutil"
	"github.com/ulikunitz/xz"
)

const mailDir = "../testdata/mail/"

func readAll(t testing.TB, r *Reader) []*Message {
	t.Helper()
	var ms []*Message
	for {
		m, err := r.Next()
		if err == io.EOF {
			return ms
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		ms = append(ms, m)
	}
}

func openAll(t testing.TB, path string, opts *Options) []*Message {
	t.Helper()
	r, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return readAll(t, r)
}

func ids(ms []*Message) []string {
	var s []string
	for _, m := range ms {
		s = append(s, m.MessageID)
	}
	return s
}

// TestMboxVariants splits the same four messages written with LF, CRLF,
// bare CR and a byte-order mark, and checks every offset against an
// independent count: each message must start at its "From " line, and
// the messages must tile the file.
func TestMboxVariants(t *testing.T) {
	wantIDs := []string{"9403231758.AA14263@ptpc00.cern.ch", "second@example.org", "third@example.org", ""}
	for _, name := range []string{"mboxrd.mbox", "crlf.mbox", "cr.mbox", "bom.mbox", "mboxrd.mbox.bz2"} {
		data, err := os.ReadFile(mailDir + name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, ".bz2") {
			data, _ = os.ReadFile(mailDir + "mboxrd.mbox")
		}
		ms := openAll(t, mailDir+name, nil)
		if got := ids(ms); !slices.Equal(got, wantIDs) {
			t.Errorf("%s: ids %q, want %q", name, got, wantIDs)
			continue
		}
		start := int64(0)
		if strings.HasPrefix(string(data), "\ufeff") {
			start = 3
		}
		for i, m := range ms {
			if m.Offset != start {
				t.Errorf("%s: message %d at %d, want %d", name, i, m.Offset, start)
			}
			if !bytes.HasPrefix(data[m.Offset:], []byte("From ")) {
				t.Errorf("%s: message %d offset %d is not a From line", name, i, m.Offset)
			}
			if got := string(data[m.Offset : m.Offset+int64(len(m.FromLine))]); got != m.FromLine {
				t.Errorf("%s: FromLine %q, file has %q", name, m.FromLine, got)
			}
			start = m.Offset + m.Length
		}
		if start != int64(len(data)) {
			t.Errorf("%s: messages end at %d, file has %d bytes", name, start, len(data))
		}
		if ms[1].Date.IsZero() || ms[0].Subject != "URLs in context" || ms[0].Newsgroups != "comp.infosystems.www" {
			t.Errorf("%s: summary fields %+v", name, ms[0])
		}
		// "From the desk" follows text, so it does not split message 2
		if !bytes.Contains(ms[1].Raw, []byte("From the desk")) {
			t.Errorf("%s: body line \"From the desk\" split the message", name)
		}
	}
}

// TestReaders checks that the splitter gives the same messages through
// readers that return one byte, or half of what is asked, at a time.
func TestReaders(t *testing.T) {
	for _, name := range []string{"mboxrd.mbox", "crlf.mbox", "mboxcl2.mbox", "archive.mmdf", "mime.eml", "broken.eml"} {
		data, _ := os.ReadFile(mailDir + name)
		want := fmt.Sprint(summarize(t, bytes.NewReader(data)))
		for _, wrap := range []func(io.Reader) io.Reader{iotest.OneByteReader, iotest.HalfReader, iotest.DataErrReader} {
			if got := fmt.Sprint(summarize(t, wrap(bytes.NewReader(data)))); got != want {
				t.Errorf("%s: through a slow reader\ngot  %s\nwant %s", name, got, want)
			}
		}
	}
}

func summarize(t *testing.T, r io.Reader) []string {
	rd, err := NewReader(r, "x", nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range readAll(t, rd) {
		s := fmt.Sprintf("%d+%d %s %d", m.Offset, m.Length, m.MessageID, len(m.Problems))
		for _, p := range m.Parts() {
			s += fmt.Sprintf(" [%s %s %q]", p.Path, p.ContentType, p.Text)
		}
		out = append(out, s)
	}
	return out
}

func TestGoMboxCrossCheck(t *testing.T) {
	f, err := os.Open(mailDir + "mboxrd.mbox")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mr := gombox.NewReader(f)
	n := 0
	for {
		_, err := mr.NextMessage()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	// go-mbox splits at every line that starts with "From ", so the body
	// line "From the desk of the editor" starts a fifth message for it;
	// we split only at lines that look like separators.
	ours := len(openAll(t, mailDir+"mboxrd.mbox", nil))
	if ours != 4 || n != 5 {
		t.Errorf("go-mbox found %d messages, we %d; want 5 and 4", n, ours)
	}
}

func TestContentLength(t *testing.T) {
	ms := openAll(t, mailDir+"mboxcl2.mbox", nil)
	if got := ids(ms); !slices.Equal(got, []string{"cl1@example.org", "cl2@example.org", "cl3@example.org"}) {
		t.Fatalf("ids %q", got)
	}
	if !bytes.Contains(ms[0].Raw, []byte("From here on, an unescaped From line")) {
		t.Error("a trusted Content-Length did not keep the body whole")
	}
	if !bytes.Contains(ms[1].Raw, []byte("http://example.org/two")) {
		t.Error("a wrong Content-Length cut the message")
	}
	// the wrong one is reported at the field, the right one not
	data, _ := os.ReadFile(mailDir + "mboxcl2.mbox")
	at := int64(bytes.Index(data, []byte("Content-Length: 5")))
	if len(ms[0].Problems) != 0 || len(ms[1].Problems) != 1 || !errors.Is(ms[1].Problems[0], ErrContentLength) || ms[1].Problems[0].Offset != at {
		t.Errorf("problems %v, %v; want one Content-Length problem at %d in the second", ms[0].Problems, ms[1].Problems, at)
	}
}

func TestMMDF(t *testing.T) {
	ms := openAll(t, mailDir+"archive.mmdf", nil)
	if got := ids(ms); !slices.Equal(got, []string{"m1@mmdf", "m2@mmdf"}) || ms[0].Format != FormatMMDF {
		t.Fatalf("ids %q format %s", got, ms[0].Format)
	}
	for _, m := range ms {
		if len(m.Problems) > 0 {
			t.Errorf("%s: %v", m.MessageID, m.Problems)
		}
	}
}

func TestMaildirAndMH(t *testing.T) {
	md := openAll(t, "../testdata/maildir", nil)
	if got := ids(md); !slices.Equal(got, []string{"md3@example.org", "md1@example.org", "md2@example.org"}) {
		t.Errorf("maildir ids %q", got)
	}
	for _, m := range md {
		if m.Format != FormatMaildir || m.Name == "" {
			t.Errorf("maildir message %+v", m)
		}
	}
	mh := openAll(t, "../testdata/mh", nil)
	if got := ids(mh); !slices.Equal(got, []string{"mh1@example.org", "mh2@example.org", "mh10@example.org", "mh-sub@example.org"}) {
		t.Errorf("mh ids %q", got)
	}
}

// TestSpool builds an INN tradspool with a crosspost (a hard link) and
// an article in wire format.
func TestSpool(t *testing.T) {
	root := t.TempDir()
	art := "Path: local!not-for-mail\r\nFrom: a@example.org\r\nNewsgroups: alt.test,comp.lang.go\r\n" +
		"Subject: cross\r\nMessage-ID: <cross@example.org>\r\nXref: local alt.test:1 comp.lang.go:7\r\n\r\nhttp://example.org/cross\r\n.\r\n"
	for _, d := range []string{"alt/test", "comp/lang/go"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	os.WriteFile(filepath.Join(root, "alt/test/1"), []byte(art), 0o644)
	if err := os.Link(filepath.Join(root, "alt/test/1"), filepath.Join(root, "comp/lang/go/7")); err != nil {
		t.Skip("no hard links here:", err)
	}
	os.WriteFile(filepath.Join(root, "comp/lang/go/8"), []byte("Path: x\nNewsgroups: comp.lang.go\nMessage-ID: <lf@example.org>\n\nplain LF\n"), 0o644)
	os.WriteFile(filepath.Join(root, "comp/lang/go/.overview"), []byte("junk"), 0o644)
	ms := openAll(t, root, nil)
	if got := ids(ms); !slices.Equal(got, []string{"cross@example.org", "lf@example.org"}) {
		t.Fatalf("spool ids %q", got)
	}
	if ms[0].Format != FormatSpool || !slices.Equal(ms[0].Groups, []string{"alt.test:1", "comp.lang.go:7"}) || ms[0].Name != "alt.test:1" {
		t.Errorf("crosspost: format %s groups %q name %q", ms[0].Format, ms[0].Groups, ms[0].Name)
	}
	if bytes.HasSuffix(ms[0].Raw, []byte(".\r\n")) {
		t.Error("wire-format final dot kept")
	}
}

func TestMIMEWalk(t *testing.T) {
	data, _ := os.ReadFile(mailDir + "mime.eml")
	ms := openAll(t, mailDir+"mime.eml", nil)
	if len(ms) != 1 {
		t.Fatalf("%d messages", len(ms))
	}
	m := ms[0]
	if m.Subject != "URLs in MIME" || m.From != "André <andre@example.org>" {
		t.Errorf("decoded header: subject %q from %q", m.Subject, m.From)
	}
	parts := m.Parts()
	type pw struct{ path, ct, where, text string }
	want := []pw{
		{"", "text/plain", "preamble", "http://example.org/preamble"},
		{"1.1", "text/plain", "body", "http://example.org/a/very/long/path/that/is/broken/by/quoted-printable/index.html and — a dash"},
		{"1.2", "text/html", "body", "See the page and  and rel."},
		{"2", "text/plain", "body", "Café list: http://example.org/caf%E9"},
		{"3", "text/plain", "body", "http://example.org/flowed/continued/here as one. And with DelSp=yes a spacestuffed line"},
		{"4", "message/rfc822", "body", ""},
		{"4.1", "text/plain", "body", "Forwarded link: <http://example.org/forwarded>"},
		{"5", "image/png", "body", ""},
		{"", "text/plain", "epilogue", "http://example.org/epilogue"},
	}
	if len(parts) != len(want) {
		for _, p := range parts {
			t.Logf("part %s %s %s %q", p.Path, p.ContentType, p.Where, p.Text)
		}
		t.Fatalf("%d parts, want %d", len(parts), len(want))
	}
	for i, w := range want {
		p := parts[i]
		if p.Path != w.path || p.ContentType != w.ct || p.Where != w.where || !strings.Contains(string(p.Text), w.text) {
			t.Errorf("part %d: %s %s %s %q\nwant %s %s %s containing %q", i, p.Path, p.ContentType, p.Where, p.Text, w.path, w.ct, w.where, w.text)
		}
		if p.RawStart < m.RawOffset || p.RawEnd > int64(len(data)) || p.RawEnd < p.RawStart {
			t.Errorf("part %s: raw span [%d,%d) outside the message", p.Path, p.RawStart, p.RawEnd)
		}
	}
	// exact mapping for a 7bit part; line start for a QP one
	html := parts[2]
	if len(html.AttrLinks) != 3 || html.AttrLinks[0].URL != "http://example.org/html?x=1&y=2" || html.AttrLinks[1].Attr != "src" {
		t.Errorf("html attribute links %+v", html.AttrLinks)
	}
	if html.Base != "http://example.org/base/" {
		t.Errorf("html base %q", html.Base)
	}
	if off := html.AttrLinks[0].Raw; !bytes.HasPrefix(data[off:], []byte("<a href")) {
		t.Errorf("attribute link raw offset %d points at %q", off, data[off:off+10])
	}
	pre := parts[0]
	i := bytes.Index(pre.Text, []byte("http://"))
	if off := pre.RawOffset(i); !bytes.HasPrefix(data[off:], []byte("http://example.org/preamble")) {
		t.Errorf("preamble RawOffset points at %q", data[off:off+20])
	}
	qp := parts[1]
	i = bytes.Index(qp.Text, []byte("http://"))
	if off := qp.RawOffset(i); !bytes.HasPrefix(data[off:], []byte("A soft-broken link")) {
		t.Errorf("QP RawOffset points at %q", data[off:off+20])
	}
}

func TestBrokenMIME(t *testing.T) {
	m := openAll(t, mailDir+"broken.eml", nil)[0]
	parts := m.Parts()
	var probs []string
	for _, p := range m.Problems {
		probs = append(probs, p.Msg)
	}
	for _, p := range parts {
		for _, q := range p.Problems {
			probs = append(probs, q.Msg)
		}
	}
	all := strings.Join(probs, "\n")
	for _, want := range []string{"header line without a colon", "missing final boundary", "x-uuencode", "unknown charset"} {
		if !strings.Contains(all, want) {
			t.Errorf("problems lack %q:\n%s", want, all)
		}
	}
	if len(parts) != 2 || !bytes.Contains(parts[1].Text, []byte("http://example.org/missing-final")) {
		t.Errorf("parts after damage: %d", len(parts))
	}
}

func TestNews(t *testing.T) {
	a := openAll(t, mailDir+"anews.txt", nil)[0]
	if a.MessageID != "mhtsa.157" || a.Newsgroups != "net.games" || a.Date.Year() != 1982 || a.Subject != "Re: Raster vs. Vector" {
		t.Errorf("A-news: %q %q %v %q", a.MessageID, a.Newsgroups, a.Date, a.Subject)
	}
	if p := a.Parts(); len(p) != 1 || !bytes.HasPrefix(p[0].Text, []byte("A-news had no header")) {
		t.Errorf("A-news body: %q", p[0].Text)
	}
	b := openAll(t, mailDir+"bnews.txt", nil)[0]
	if b.Newsgroups != "comp.ai,comp.graphics" || b.Date.Year() != 1991 || b.From != "Dean Johnson <dtj@sumac.cray.com>" {
		t.Errorf("B-news: %q %v %q", b.Newsgroups, b.Date, b.From)
	}
}

func TestCompressed(t *testing.T) {
	plain, _ := os.ReadFile(mailDir + "mboxrd.mbox")
	var gz, xzb, zst bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(plain)
	zw.Close()
	xw, _ := xz.NewWriter(&xzb)
	xw.Write(plain)
	xw.Close()
	sw, _ := zstd.NewWriter(&zst)
	sw.Write(plain)
	sw.Close()
	want := fmt.Sprint(summarize(t, bytes.NewReader(plain)))
	for name, b := range map[string][]byte{"gzip": gz.Bytes(), "xz": xzb.Bytes(), "zstd": zst.Bytes()} {
		if got := fmt.Sprint(summarize(t, bytes.NewReader(b))); got != want {
			t.Errorf("%s: differs from the plain file", name)
		}
	}
}

func TestBadFiles(t *testing.T) {
	for _, name := range []string{"empty.mbox", "one-byte.eml", "junk.bin", "truncated.mbox"} {
		ms := openAll(t, mailDir+name, nil)
		for _, m := range ms {
			m.Parts()
		}
		switch name {
		case "truncated.mbox":
			if len(ms) != 2 || len(ms[1].Problems) == 0 {
				t.Errorf("truncated: %d messages, last problems %v", len(ms), ms[len(ms)-1].Problems)
			}
		case "junk.bin":
			if ms[0].Format != FormatText {
				t.Errorf("junk read as %s", ms[0].Format)
			}
		}
	}
	if _, err := Open(mailDir+"no-such-file", nil); err == nil {
		t.Error("no error for a missing file")
	}
	if _, err := Open("../testdata/maildir", &Options{Format: FormatMbox}); err == nil {
		t.Error("no error for a directory read as mbox")
	}
}

func TestLimits(t *testing.T) {
	ms := openAll(t, mailDir+"mboxrd.mbox", &Options{MaxMessageSize: 100})
	if len(ms) != 4 || len(ms[0].Raw) > 200 || len(ms[0].Holes) == 0 || len(ms[0].Problems) == 0 || !errors.Is(ms[0].Problems[0], ErrTooLong) {
		t.Errorf("MaxMessageSize: %d messages, first %d bytes, holes %v, problems %v", len(ms), len(ms[0].Raw), ms[0].Holes, ms[0].Problems)
	}
	m := openAll(t, mailDir+"mime.eml", &Options{MaxDepth: 1})[0]
	m.Parts()
	found := false
	for _, p := range m.Problems {
		found = found || strings.Contains(p.Msg, "nesting deeper")
	}
	if !found {
		t.Errorf("MaxDepth: no problem in %v", m.Problems)
	}
}

func TestQuoteRoundTrip(t *testing.T) {
	for _, body := range []string{"From a\n>From b\n>>From c\nFrom\nx From y\n", "", "no newline From", ">>>From end"} {
		q := QuoteFrom([]byte(body))
		if bytes.Contains([]byte("\n"+string(q)), []byte("\nFrom ")) {
			t.Errorf("QuoteFrom(%q) = %q leaves a From line", body, q)
		}
		if got := string(UnquoteFrom(q)); got != body {
			t.Errorf("round trip of %q gave %q", body, got)
		}
	}
	// a message written with QuoteFrom reads back with the same body
	body := "From the start\n>From quoted\n"
	file := "From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <q@x>\n\n" + string(QuoteFrom([]byte(body)))
	r, _ := NewReader(strings.NewReader(file), "q", nil)
	m := readAll(t, r)[0]
	if got := string(UnquoteFrom(m.Raw[m.bodyStart:])); got != body {
		t.Errorf("mbox round trip body %q, want %q", got, body)
	}
}

// TestINNSpool reads the tradspool a real INN server wrote (wire format,
// a crosspost as a hard link): three articles, the crosspost once.
func TestINNSpool(t *testing.T) {
	root := testutil.Untar(t, "../testdata/inn-spool.tar")
	ms := openAll(t, root, nil)
	if got := ids(ms); !slices.Equal(got, []string{"alt-1994@test.invalid", "root-1994@test.invalid", "reply-1994@test.invalid"}) {
		t.Fatalf("ids %q", got)
	}
	cross := ms[1]
	if !slices.Equal(cross.Groups, []string{"test.links:1", "comp.infosystems.www:1"}) || cross.Format != FormatSpool {
		t.Errorf("crosspost groups %q format %s", cross.Groups, cross.Format)
	}
	for _, m := range ms {
		if bytes.HasSuffix(m.Raw, []byte("\r\n.\r\n")) || len(m.Problems) > 0 {
			t.Errorf("%s: final dot kept or problems %v", m.MessageID, m.Problems)
		}
		for _, p := range m.Parts() {
			if !bytes.Contains(p.Text, []byte("://")) {
				t.Errorf("%s: part %s has no link: %q", m.MessageID, p.Path, p.Text)
			}
		}
	}
}

func TestCharsetFastPath(t *testing.T) {
	ebcdic, _ := lookupCharset("ibm037")
	latin, _ := lookupCharset("iso-8859-1")
	for _, tt := range []struct {
		label string
		in    string
		want  string
	}{
		{"iso-8859-1", "plain ASCII http://a.org/", "plain ASCII http://a.org/"},
		{"iso-8859-1", "caf\xe9", "café"},
		{"ibm037", "\xc1\xc2", "AB"},
		{"ibm037", "\x40\x40", "  "}, // EBCDIC: bytes below 0x80 are not ASCII
	} {
		p := &Part{}
		w := &walker{m: &Message{}}
		got, _ := w.decodeCharset(p, tt.label, []byte(tt.in), []Span{{Text: 0}})
		if string(got) != tt.want {
			t.Errorf("%s %q: got %q, want %q", tt.label, tt.in, got, tt.want)
		}
	}
	if ebcdic == nil || latin == nil {
		t.Fatal("charsets not found")
	}
}

func TestFromLines(t *testing.T) {
	for line, want := range map[string][2]bool{ // after a blank line, elsewhere
		"From a@b Thu Mar 24 02:31:00 1994\n":       {true, true},
		"From a@b Thu Mar 24 2:31 1994\n":           {true, true},
		"From a@b Thu Mar 24 02:31:00 +0100 1994\n": {true, true},
		"From - Thu Mar 24 02:31:00 1994\n":         {true, true},
		"From - \n":                                 {true, true}, // Netscape; isSep also wants a header after it
		"From ???@??? \n":                           {true, false},
		"From MAILER-DAEMON\n":                      {true, false},
		"From the desk of the editor\n":             {false, false},
		"From the desk at 10:30 in 1994\n":          {true, true},
		"From a@b 1994\n":                           {true, false},
		"From a@b Thu Mar 24 02:31:00 94\n":         {true, false},
		">From a@b Thu Mar 24 02:31:00 1994\n":      {false, false},
		"From a@b Thu Mar 24 02:3:00 1994\n":        {true, false},
		"From a@b Thu Mar 24 123:31:00 1994\n":      {true, false},
	} {
		if got := [2]bool{isFromLine([]byte(line), true), isFromLine([]byte(line), false)}; got != want {
			t.Errorf("isFromLine(%q) = %v, want %v", line, got, want)
		}
	}
}

// TestDateFastPath checks the hand-written date reader against net/mail.
func TestDateFastPath(t *testing.T) {
	for _, d := range []string{
		"Wed, 23 Mar 1994 18:58:05 +0100", "23 Mar 1994 18:58:05 -0500", "Thu, 1 Jan 2004 00:00 +0000",
		"Mon, 3 Jun 2002 12:00:00 +0200", "Sat, 21 Nov 2026 11:00:00 +0000", "Wed, 23 Mar 1994 18:58:05 EST",
	} {
		fast, ok := parseDate5322(d)
		slow, err := netmail.ParseDate(d)
		slow = namedZone(slow, d) // a zone name: the offset it stands for
		if !ok || err != nil || !fast.Equal(slow) || fast.Format(time.RFC3339) != slow.Format(time.RFC3339) {
			t.Errorf("%q: fast %v %v, net/mail %v %v", d, fast, ok, slow, err)
		}
	}
	for _, d := range []string{"21 Jun 91 05:50:51 GMT", "Wed May  5 22:33:48 1982", "32 Mar 1994 10:00:00 +0000",
		"Wed, 23 Mar 1994 18:58:05 XYZ", "Wed, 23 Xyz 1994 18:58:05 +0100", "23 Mar 1994 25:00 +0000", "31 Feb 1994 10:00:00 +0000", ""} {
		if _, ok := parseDate5322(d); ok {
			t.Errorf("%q: taken by the fast path", d)
		}
	}
	for in, want := range map[string]string{"<a@b>": "a@b", " <a@b> ": "a@b", "<a@b> (comment)": "a@b", "a@b": "a@b", "<a b@c>": "ab@c"} {
		if got := normalizeID(in); got != want {
			t.Errorf("normalizeID(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestBase64Lines decodes base64 however it is cut into lines, and with
// junk, and compares with encoding/base64 on the whole.
func TestBase64Lines(t *testing.T) {
	plain := []byte("Links in base64: http://example.org/b64 and <URL:ftp://ds.internic.net/rfc> — done.\n")
	enc := base64.StdEncoding.EncodeToString(plain)
	for _, width := range []int{76, 4, 5, 7, 13, 1000} {
		var body bytes.Buffer
		for i := 0; i < len(enc); i += width {
			body.WriteString(enc[i:min(i+width, len(enc))])
			body.WriteString("\r\n")
		}
		got, spans, err := transferDecode(nil, nil, "base64", body.Bytes(), 100)
		if err != nil || !bytes.Equal(got, plain) {
			t.Errorf("width %d: %q %v", width, got, err)
		}
		if len(spans) == 0 || spans[0].Raw != 100 {
			t.Errorf("width %d: spans %+v", width, spans)
		}
	}
	got, _, err := transferDecode(nil, nil, "base64", []byte(enc[:20]+" !*-\n"+enc[20:]+"\n"), 0)
	if !bytes.Equal(got, plain) || err != nil {
		t.Errorf("with junk: %q %v", got, err)
	}
}
