package scan

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/linkscan/linkscan/extract"
	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/record"
	"github.com/linkscan/linkscan/report"
)

const td = "../testdata/"

func open(name string) (*mailbox.Reader, error) { return mailbox.Open(name, nil) }

func TestMessageRecords(t *testing.T) {
	data, _ := os.ReadFile(td + "mail/mime.eml")
	r, _ := mailbox.Open(td+"mail/mime.eml", nil)
	m, _ := r.Next()
	res := Message(m, &Config{Headers: true})
	byCanon := map[string]report.Record{}
	for _, rec := range res.Records {
		byCanon[rec.Canonical] = rec
	}
	rel, ok := byCanon["http://example.org/base/rel/page.html"]
	if !ok || rel.URL != "rel/page.html" || rel.Where != "html:href" || !rel.Valid {
		t.Errorf("relative href resolved against Content-Base: %+v", rel)
	}
	pre := byCanon["http://example.org/preamble"]
	if !bytes.HasPrefix(data[pre.RawOffset:], []byte("http://example.org/preamble")) {
		t.Errorf("raw_offset %d of the preamble link points at %q", pre.RawOffset, data[pre.RawOffset:pre.RawOffset+20])
	}
	hdr := byCanon["http://lists.example.org/archive/"]
	if hdr.Where != "header:List-Archive" || !bytes.HasPrefix(data[hdr.RawOffset:], []byte("List-Archive:")) {
		t.Errorf("header link %+v", hdr)
	}
	if res.Parts != 9 || m.Raw != nil {
		t.Errorf("parts %d, raw kept %v", res.Parts, m.Raw != nil)
	}
	// filters
	res = Message(mustFirst(t, td+"mail/mime.eml"), &Config{Schemes: map[string]bool{"cid": true}})
	if len(res.Records) != 1 || res.Records[0].Canonical != "cid:logo@example.org" {
		t.Errorf("--scheme cid: %+v", res.Records)
	}
	res = Message(mustFirst(t, td+"mail/mime.eml"), &Config{HostPattern: "archive.*"})
	if len(res.Records) != 0 {
		t.Errorf("host filter without --headers: %+v", res.Records)
	}
}

func mustFirst(t *testing.T, path string) *mailbox.Message {
	r, err := mailbox.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRunOrderAndErrors(t *testing.T) {
	inputs := []string{td + "mail/mboxrd.mbox", td + "mail/missing.mbox", td + "mail/archive.mmdf"}
	var got []string
	err := Run(inputs, open, &Config{Jobs: 3}, nil, func(r *Result) error {
		if r.Err != nil {
			got = append(got, "error:"+r.Path)
			return nil
		}
		got = append(got, r.Message.MessageID)
		return nil
	})
	want := "9403231758.AA14263@ptpc00.cern.ch second@example.org third@example.org  error:" + td + "mail/missing.mbox m1@mmdf m2@mmdf"
	if err != nil || strings.Join(got, " ") != want {
		t.Errorf("Run: %v\ngot  %q\nwant %q", err, strings.Join(got, " "), want)
	}
	// a budget smaller than any message still lets one through at a time
	got = got[:0]
	err = Run(inputs, open, &Config{Jobs: 3, InFlightBytes: 1}, nil, func(r *Result) error {
		if r.Err == nil {
			got = append(got, r.Message.MessageID)
		}
		return nil
	})
	if err != nil || len(got) != 6 || got[5] != "m2@mmdf" {
		t.Errorf("Run with a 1-byte budget: %v %q", err, got)
	}
	stop := errors.New("stop")
	n := 0
	err = Run([]string{td + "mail/mboxrd.mbox", td + "mail/mboxrd.mbox"}, open, &Config{Jobs: 1}, nil, func(*Result) error {
		n++
		return stop
	})
	if err != stop || n != 1 {
		t.Errorf("emit error: Run returned %v after %d results", err, n)
	}
}

type countBytes struct{ n int64 }

func (c *countBytes) BytesRead(n int64) { c.n += n }

func TestRunProgress(t *testing.T) {
	var c countBytes
	Run([]string{td + "mail/mboxrd.mbox"}, open, &Config{}, &c, func(*Result) error { return nil })
	fi, _ := os.Stat(td + "mail/mboxrd.mbox")
	if c.n != fi.Size() {
		t.Errorf("progress counted %d bytes, file has %d", c.n, fi.Size())
	}
}

func TestText(t *testing.T) {
	var recs []report.Record
	err := Text("t", strings.NewReader("see <URL:http://a.org/x\n  /y> and www.b.org\n"), &Config{}, func(r *report.Record) error {
		recs = append(recs, *r)
		return nil
	})
	if err != nil || len(recs) != 2 || recs[0].Canonical != "http://a.org/x/y" || recs[1].Canonical != "http://www.b.org/" || recs[1].Line != 2 || recs[1].Column != 11 {
		t.Errorf("Text: %v %+v", err, recs)
	}
}

// TestStdinNotBatched: a message from standard input is reported while
// the pipe is still open, before later messages arrive.
func TestStdinNotBatched(t *testing.T) {
	pr, pw := io.Pipe()
	open := func(string) (*mailbox.Reader, error) {
		return mailbox.NewReader(pr, "-", &mailbox.Options{Format: mailbox.FormatMbox})
	}
	got := make(chan string, 10)
	done := make(chan error, 1)
	go func() {
		done <- Run([]string{"-"}, open, &Config{}, nil, func(r *Result) error {
			got <- r.Message.MessageID
			return nil
		})
	}()
	// more than the 4 KiB mailbox.NewReader looks at first
	io.WriteString(pw, "From a@b Sat Jan  3 01:05:34 1996\nMessage-ID: <one@x>\n\nhttp://example.org/\n"+strings.Repeat("text\n", 1000)+"\n")
	io.WriteString(pw, "From a@b Sat Jan  3 01:05:35 1996\n") // the end of the first message
	select {
	case id := <-got:
		if id != "one@x" {
			t.Errorf("first result %q", id)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the first message was held back while the pipe stayed open")
	}
	io.WriteString(pw, "Message-ID: <two@x>\n\nbody\n")
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if id := <-got; id != "two@x" {
		t.Errorf("second result %q", id)
	}
}

// TestRunLastInputError: an input that cannot be opened is reported
// wherever it stands, the last one included (its result was once left in
// a batch that was never queued).
func TestRunLastInputError(t *testing.T) {
	for _, inputs := range [][]string{
		{td + "mail/mboxrd.mbox", td + "mail/missing.mbox"},
		{td + "mail/missing.mbox"},
		{td + "mail/missing.mbox", td + "mail/missing2.mbox"},
		{td + "mail/missing.mbox", td + "mail/mboxrd.mbox"},
	} {
		var errs []string
		err := Run(inputs, open, &Config{Jobs: 2}, nil, func(r *Result) error {
			if r.Err != nil {
				errs = append(errs, r.Path)
			}
			return nil
		})
		want := 0
		for _, in := range inputs {
			if strings.Contains(in, "missing") {
				want++
			}
		}
		if err != nil || len(errs) != want {
			t.Errorf("%q: %v, errors reported for %q; want %d", inputs, err, errs, want)
		}
	}
}

// messageOf reads the one message in raw.
func messageOf(t *testing.T, raw string) *mailbox.Message {
	t.Helper()
	r, err := mailbox.NewReader(strings.NewReader(raw), "m.eml", nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestAttrLinks: URLs of HTML attributes never hold white space, and
// data: URIs are reported only when asked for (issue #12).
func TestAttrLinks(t *testing.T) {
	const html = "Message-ID: <h@x>\nContent-Type: text/html\n\n" +
		"<a href=\"http://example.org/broken\n  /over/lines\">a</a>\n" +
		"<a href=\"  http://example.org/my file.html\t\">b</a>\n" +
		"<img src=\"data:image/png;base64,iVBORw0KGgo\nAAAANSUhEUg==\">\n" +
		"<img src=\"DATA:text/plain,hi\">\n" +
		"<a href=\"#top\">c</a><a href=\" JavaScript:alert(1)\">d</a>\n"
	for _, dataURIs := range []bool{false, true} {
		cfg := &Config{}
		cfg.Extract.DataURIs = dataURIs
		res := Message(messageOf(t, html), cfg)
		var urls []string
		for _, r := range res.Records {
			if strings.IndexFunc(r.URL, unicode.IsSpace) >= 0 || strings.IndexFunc(r.Canonical, unicode.IsSpace) >= 0 {
				t.Errorf("white space in %q (canonical %q)", r.URL, r.Canonical)
			}
			urls = append(urls, r.URL)
		}
		want := []string{"http://example.org/broken/over/lines", "http://example.org/my%20file.html"}
		if dataURIs {
			want = append(want, "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==", "DATA:text/plain,hi")
		}
		if strings.Join(urls, " ") != strings.Join(want, " ") {
			t.Errorf("DataURIs %v:\ngot  %q\nwant %q", dataURIs, urls, want)
		}
	}
}

func TestAttrURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://a/b":            "http://a/b",
		" \thttp://a/b \n":      "http://a/b",
		"http://a/\r\nb":        "http://a/b",
		"http://a/\n   b":       "http://a/b",
		"http://a/ \t b":        "http://a/b",
		"http://a/x  y":         "http://a/x%20%20y",
		"http://a/x y":          "http://a/x%20y",
		"http://a/x\u00a0y":     "http://a/x%C2%A0y",
		"\u3000http://a/\u3000": "http://a/",
		"":                      "",
	} {
		if got := attrURL(in); got != want {
			t.Errorf("attrURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestHostPatterns: a host is kept when it matches any pattern; "*.x"
// matches x itself.
func TestHostPatterns(t *testing.T) {
	tests := []struct {
		patterns []string
		host     string
		keep     bool
	}{
		{[]string{"*.example.org"}, "example.org", true},
		{[]string{"*.example.org"}, "a.b.example.org", true},
		{[]string{"*.example.org"}, "badexample.org", false},
		{[]string{"*.Example.ORG"}, "www.example.org", true},
		{[]string{"a.org", "b.org"}, "b.org", true},
		{[]string{"a.org", "b.org"}, "c.org", false},
		{[]string{"example.org"}, "www.example.org", false},
		{[]string{"example.org"}, "example.org.", true}, // fully qualified
		{[]string{"example.org."}, "example.org", true}, // the pattern too
		{[]string{"*.example.org"}, "www.example.org.", true},
		{[]string{"example.org"}, "example.org..", false}, // not a name
	}
	for _, tt := range tests {
		cfg := &Config{HostPatterns: tt.patterns}
		if got := cfg.keep(&report.Record{Host: tt.host}); got != tt.keep {
			t.Errorf("%q on %q: keep %v", tt.patterns, tt.host, got)
		}
		cfg = &Config{HostPattern: tt.patterns[0], HostPatterns: tt.patterns[1:]}
		if got := cfg.keep(&report.Record{Host: tt.host}); got != tt.keep {
			t.Errorf("HostPattern %q + %q on %q: keep %v", tt.patterns[0], tt.patterns[1:], tt.host, got)
		}
	}
}

// TestNormalizeAgreesWithExtract: a URL read from an HTML attribute or an
// implicit reference gets the canonical form, scheme, host, validity and
// problems that extract gives the same URL found in text.
func TestNormalizeAgreesWithExtract(t *testing.T) {
	compared, withProblems := 0, 0
	for _, u := range []string{
		"http://example.org/", "HTTP://Example.ORG:80/a/./b", "http://exa mple.org/", "http://a/%zz", "mid:abc@x",
		"news:comp.lang.go", "ftp://ftp.example.org/pub;type=d", "mailto:A@B.ORG", "http://[::1]/x", "http://a/b?c#d",
		"gopher://boombox.micro.umn.edu/11/gopher", "cid:part1@example.org", "http://xn--nxasmq6b.example/",
	} {
		links := extract.All([]byte("<"+u+">"), &extract.Options{})
		if len(links) != 1 {
			continue // not a link in text: nothing to compare
		}
		l := links[0]
		var fromText, fromAttr record.Record
		fill(&fromText, &l)
		record.Normalize(&fromAttr, l.URL)
		got := fmt.Sprint(fromAttr.Canonical, fromAttr.Scheme, fromAttr.Host, fromAttr.Valid, fromAttr.Problems)
		want := fmt.Sprint(fromText.Canonical, fromText.Scheme, fromText.Host, fromText.Valid, fromText.Problems)
		if got != want {
			t.Errorf("%q:\nnormalize %s\nextract   %s", u, got, want)
		}
		compared++
		if len(fromText.Problems) > 0 {
			withProblems++
		}
	}
	if compared < 10 || withProblems == 0 {
		t.Errorf("only %d URLs compared, %d with problems", compared, withProblems)
	}
}

// addStage adds a record of each URL and drops records of drop.
type addStage struct {
	add  []string
	drop string
}

func (s addStage) Records(m *mailbox.Message, _ []*mailbox.Part, recs []record.Record) []record.Record {
	kept := recs[:0]
	for _, r := range recs {
		if r.Canonical != s.drop {
			kept = append(kept, r)
		}
	}
	for _, u := range s.add {
		r := record.Record{Path: m.Path, MessageID: m.MessageID, URL: u, Form: "stage"}
		record.Normalize(&r, u)
		kept = append(kept, r)
	}
	return kept
}

// TestStages: stages run in order after extraction, may add and drop
// records, and what they add is filtered as extracted records are.
func TestStages(t *testing.T) {
	cfg := &Config{Stages: []Stage{
		addStage{add: []string{"ftp://added.example/", "http://added.example/"}},
		addStage{drop: "ftp://added.example/"},
	}, Schemes: map[string]bool{"http": true, "ftp": true}}
	res := Message(mustFirst(t, td+"mail/mboxrd.mbox"), cfg)
	var got []string
	for _, r := range res.Records {
		got = append(got, r.Canonical)
	}
	want := "ftp://info.cern.ch/pub/www/doc;type=d ftp://ds.internic.net/rfc http://info.cern.ch/hypertext/WWW/Addressing/URL/Overview.html http://added.example/"
	if strings.Join(got, " ") != want {
		t.Errorf("got  %q\nwant %q", strings.Join(got, " "), want)
	}
	cfg.Schemes = map[string]bool{"ftp": true}
	res = Message(mustFirst(t, td+"mail/mboxrd.mbox"), cfg)
	for _, r := range res.Records {
		if r.Scheme != "ftp" {
			t.Errorf("--scheme ftp let a stage's %s through", r.Canonical)
		}
	}
}

// TestHold: with Hold, emit gets each message with its bytes, which are
// the caller's to release.
func TestHold(t *testing.T) {
	file := td + "mail/mboxrd.mbox"
	data, _ := os.ReadFile(file)
	for _, hold := range []bool{false, true} {
		n := 0
		err := Run([]string{file}, open, &Config{Jobs: 2, Hold: hold}, nil, func(r *Result) error {
			m := r.Message
			if hold {
				if m.Raw == nil || !bytes.Equal(m.Raw, data[m.RawOffset:m.RawOffset+int64(len(m.Raw))]) {
					t.Errorf("message at %d: bytes not kept", m.Offset)
				}
				m.Release()
			} else if m.Raw != nil {
				t.Errorf("message at %d kept its bytes without Hold", m.Offset)
			}
			n++
			return nil
		})
		if err != nil || n != 4 {
			t.Errorf("hold %v: %v, %d messages", hold, err, n)
		}
	}
}

// TestRawEnd: raw_start..raw_end are the file bytes of the link's own
// characters in unencoded and quoted-printable parts, the field for a
// header link.
func TestRawEnd(t *testing.T) {
	raw := "Message-ID: <q@x>\nList-Archive: <http://lists.example.org/>\nMIME-Version: 1.0\n" +
		"Content-Type: multipart/mixed; boundary=b\n\n--b\n" +
		"Content-Type: text/plain\n\nplain http://example.org/plain here\n--b\n" +
		"Content-Type: text/plain\nContent-Transfer-Encoding: quoted-printable\n\n" +
		"qp http://example.org/a=3Db=\n/c done\n--b--\n"
	res := Message(messageOf(t, raw), &Config{Headers: true})
	ends := map[string]string{}
	for _, r := range res.Records {
		if r.RawEnd < r.RawStart || r.RawStart < r.RawOffset || r.RawEnd > int64(len(raw)) {
			t.Errorf("%s: raw_offset %d, raw_start %d, raw_end %d", r.URL, r.RawOffset, r.RawStart, r.RawEnd)
			continue
		}
		ends[r.URL] = raw[r.RawStart:r.RawEnd]
	}
	for url, want := range map[string]string{
		"http://example.org/plain":  "http://example.org/plain",
		"http://example.org/a=b/c":  "http://example.org/a=3Db=\n/c",
		"http://lists.example.org/": "List-Archive: <http://lists.example.org/>\n",
	} {
		if got, ok := ends[url]; !ok || got != want {
			t.Errorf("%s: raw_start..raw_end is %q, want %q (records %v)", url, got, want, ends)
		}
	}
}

// FuzzAttrURL: an attribute's URL comes out without white space, and
// cleaning it again changes nothing.
func FuzzAttrURL(f *testing.F) {
	for _, s := range []string{"http://a/b", " http://a/\n  b ", "x y\tz", "\u3000a\u00a0b", "data:,a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := attrURL(s)
		if slow := attrURLSpaces(s); got != slow {
			t.Fatalf("attrURL(%q) = %q, the careful way %q", s, got, slow)
		}
		if strings.IndexFunc(got, unicode.IsSpace) >= 0 {
			t.Fatalf("attrURL(%q) = %q holds white space", s, got)
		}
		if again := attrURL(got); again != got {
			t.Fatalf("attrURL(%q) = %q, and again %q", s, got, again)
		}
	})
}

// TestAttrWhere: the Where of an attribute link is "html:" and the
// attribute, a constant (no allocation) for those mailbox gives.
func TestAttrWhere(t *testing.T) {
	for _, a := range []string{"href", "src", "cite", "background", "action", "longdesc", "data", ""} {
		if got := attrWhere(a); got != "html:"+a {
			t.Errorf("attrWhere(%q) = %q", a, got)
		}
	}
	for _, a := range []string{"href", "src", "cite", "background", "action", "longdesc"} {
		if n := testing.AllocsPerRun(100, func() { sinkWhere = attrWhere(a) }); n != 0 {
			t.Errorf("attrWhere(%q): %v allocations", a, n)
		}
	}
}

var sinkWhere string
