package rewrite

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"mime/quotedprintable"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html"

	"github.com/linkscan/linkscan/extract"
	"github.com/linkscan/linkscan/internal/corpus"
	"github.com/linkscan/linkscan/mailbox"
)

// rewriteArchive rewrites every message of an archive file (mbox, MMDF
// or one message) and writes the file again: the bytes between messages
// (the "From " lines, separators) come from the file as they are. It is
// the test's stand-in for the command.
func rewriteArchive(t testing.TB, rs *Rules, data []byte, opts *Options) ([]byte, []LinkChange, []int) {
	t.Helper()
	rd, err := mailbox.NewReader(bytes.NewReader(data), "input", nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	var all []LinkChange
	var nparts []int
	lastMessages = nil
	at := int64(0)
	for {
		m, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if m.RawOffset < at || m.RawOffset+int64(len(m.Raw)) > int64(len(data)) || !bytes.Equal(data[m.RawOffset:m.RawOffset+int64(len(m.Raw))], fileBytes(m, m.Raw)) {
			t.Fatalf("message at %d: Raw is not the file's bytes", m.RawOffset)
		}
		out = append(out, data[at:m.RawOffset]...)
		b, chs, err := rs.Message(m, opts)
		if err != nil {
			t.Fatalf("message at %d: %v", m.RawOffset, err)
		}
		nparts = append(nparts, len(m.Parts()))
		out = append(out, b...)
		all = append(all, chs...)
		lastMessages = append(lastMessages, msgOut{bytes.Clone(b), chs})
		at = m.RawOffset + int64(len(m.Raw))
	}
	return append(out, data[at:]...), all, nparts
}

// msgOut is one message rewritten by rewriteArchive.
type msgOut struct {
	out []byte
	chs []LinkChange
}

// lastMessages are the messages of the last rewriteArchive call.
var lastMessages []msgOut

func emptyRules(t testing.TB) *Rules {
	rs, err := Parse(strings.NewReader(""), "empty.toml")
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// goldenOptions: the options a golden case's name asks for.
func goldenOptions(name string) *Options {
	o := &Options{}
	o.BreakDKIM = strings.Contains(name, "break-dkim")
	o.Annotate = strings.Contains(name, "annotate")
	o.Headers = strings.Contains(name, "headers")
	return o
}

// changesJSON writes the changes as JSON lines, rules by name only.
func changesJSON(chs []LinkChange) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, c := range chs {
		var rules []string
		for _, r := range c.Rules {
			rules = append(rules, r.Action+" "+r.Rule)
		}
		enc.Encode(struct {
			Part, Where  string
			Line, Column int
			Old, New     string
			OldForm      string `json:",omitempty"`
			NewForm      string `json:",omitempty"`
			Rules        []string
			Skipped      string `json:",omitempty"`
			Annotated    bool   `json:",omitempty"`
		}{c.Part, c.Where, c.Line, c.Column, c.Old, c.New, c.OldForm, c.NewForm, rules, c.Skipped, c.Annotated})
	}
	return b.Bytes()
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
		for i := 0; i < max(len(gl), len(wl)); i++ {
			var g, w []byte
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if !bytes.Equal(g, w) {
				t.Fatalf("%s line %d differs (run with -update if the change is meant)\ngot  %q\nwant %q", path, i+1, g, w)
			}
		}
		t.Fatalf("%s differs", path)
	}
}

// TestMessageGolden rewrites testdata/rewrite/NAME.input by NAME.toml
// (or the example rules.toml) and compares the file written with
// NAME.golden and the changes with NAME.changes.golden. On every case it
// also checks the properties: no rules give the input byte for byte;
// rewriting the output again changes nothing; the output has the same
// messages and parts.
func TestMessageGolden(t *testing.T) {
	inputs, err := filepath.Glob("../testdata/rewrite/*.input")
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no inputs: %v", err)
	}
	example := loadExample(t)
	empty := emptyRules(t)
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".input")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			rs := example
			if _, err := os.Stat(strings.TrimSuffix(in, ".input") + ".toml"); err == nil {
				if rs, err = Load(strings.TrimSuffix(in, ".input") + ".toml"); err != nil {
					t.Fatal(err)
				}
			}
			opts := goldenOptions(name)
			out, chs, nparts := rewriteArchive(t, rs, data, opts)
			written := lastMessages
			checkGolden(t, strings.TrimSuffix(in, ".input")+".golden", out)
			checkGolden(t, strings.TrimSuffix(in, ".input")+".changes.golden", changesJSON(chs))
			checkProperties(t, rs, empty, data, out, opts, nparts)
			for _, mo := range written {
				checkWritten(t, mo.out, mo.chs, name)
			}
		})
	}
}

func checkProperties(t testing.TB, rs, empty *Rules, data, out []byte, opts *Options, nparts []int) {
	t.Helper()
	same, _, _ := rewriteArchive(t, empty, data, opts)
	if !bytes.Equal(same, data) {
		t.Fatalf("no rules changed the input:\n%s", same)
	}
	again, chs, np2 := rewriteArchive(t, rs, out, opts)
	if !bytes.Equal(again, out) {
		t.Fatalf("rewriting the output again changed it:\n%s\nchanges: %s", again, changesJSON(chs))
	}
	if len(np2) != len(nparts) {
		t.Fatalf("output has %d messages, input %d", len(np2), len(nparts))
	}
	for i := range np2 {
		if np2[i] != nparts[i] {
			t.Fatalf("message %d has %d parts, was %d", i, np2[i], nparts[i])
		}
	}
}

// corpusFiles lists the archives of testdata/ and ../shared/corpus/.
func corpusFiles(t testing.TB) []string {
	var files []string
	for _, root := range []string{"../testdata", "../../shared/corpus"} {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() {
				if strings.HasSuffix(p, "testdata/rewrite") || strings.HasSuffix(p, "/golden") {
					return filepath.SkipDir
				}
				return nil
			}
			if info, err := d.Info(); err == nil && info.Size() < 4<<20 && d.Type().IsRegular() {
				files = append(files, p)
			}
			return nil
		})
	}
	return files
}

// TestCorpusProperties: over every message of every file in testdata/
// and ../shared/corpus/ (read with mailbox.Open): no rules give m.Raw
// byte for byte; the example rules give an output that parses with as
// many parts and that the rules leave as it is.
func TestCorpusProperties(t *testing.T) {
	example, empty := loadExample(t), emptyRules(t)
	files := corpusFiles(t)
	if len(files) == 0 {
		t.Skip("no corpus")
	}
	msgs, changed, written, checked := 0, 0, 0, 0
	for _, f := range files {
		rd, err := mailbox.Open(f, nil)
		if err != nil {
			continue
		}
		for {
			m, err := rd.Next()
			if err != nil {
				break
			}
			msgs++
			raw := bytes.Clone(m.Raw)
			same, _, err := empty.Message(m, nil)
			if errors.Is(err, ErrIncomplete) {
				continue
			}
			if !bytes.Equal(same, fileBytes(m, raw)) {
				t.Fatalf("%s at %d: no rules changed the message", f, m.Offset)
			}
			if fb := inFile(files, m); fb != nil && !bytes.Equal(same, fb) {
				t.Fatalf("%s at %d: no rules gave other bytes than the file's", f, m.Offset)
			} else if fb != nil {
				checked++
			}
			m0 := readOne(t, raw)
			if m0 == nil {
				continue
			}
			nparts := len(m0.Parts())
			out, chs, _ := example.Message(m0, nil)
			for _, c := range chs {
				if c.Skipped == "" {
					written++
				}
			}
			if !bytes.Equal(out, raw) {
				changed++
			}
			checkMessage(t, example, out, nparts, f, m.Offset)
			checkWritten(t, out, chs, f)
		}
		rd.Close()
	}
	t.Logf("%d files, %d messages (%d compared with their file), %d changed, %d links written", len(files), msgs, checked, changed, written)
	if msgs == 0 {
		t.Fatal("no messages read")
	}
}

// fileCache holds the files inFile read.
var fileCache = map[string][]byte{}

// inFile returns the bytes of the file a message was read from, at its
// place, when the file is not compressed and small; nil otherwise.
func inFile(_ []string, m *mailbox.Message) []byte {
	switch filepath.Ext(m.Path) {
	case ".gz", ".bz2", ".xz", ".zst", ".tar":
		return nil
	}
	b, ok := fileCache[m.Path]
	if !ok {
		if info, err := os.Stat(m.Path); err == nil && info.Mode().IsRegular() && info.Size() < 8<<20 {
			b, _ = os.ReadFile(m.Path)
		}
		fileCache[m.Path] = b
	}
	end := m.RawOffset + int64(len(m.Raw))
	if b == nil || m.RawOffset < 0 || end > int64(len(b)) {
		return nil
	}
	return b[m.RawOffset:end]
}

// readOne reads raw as one message.
func readOne(t testing.TB, raw []byte) *mailbox.Message {
	rd, err := mailbox.NewReader(bytes.NewReader(raw), "raw", &mailbox.Options{Format: mailbox.FormatMessage})
	if err != nil {
		return nil
	}
	m, err := rd.Next()
	if err != nil {
		return nil
	}
	return m
}

// checkMessage reads out as one message: it has nparts parts and the
// rules leave it as it is.
func checkMessage(t testing.TB, rs *Rules, out []byte, nparts int, where string, off int64) {
	t.Helper()
	rd, err := mailbox.NewReader(bytes.NewReader(out), "out", &mailbox.Options{Format: mailbox.FormatMessage})
	if err != nil {
		t.Fatalf("%s at %d: %v", where, off, err)
	}
	m2, err := rd.Next()
	if err != nil {
		if len(out) == 0 {
			return
		}
		t.Fatalf("%s at %d: output does not read: %v", where, off, err)
	}
	again, chs, _ := rs.Message(m2, nil)
	if n := len(m2.Parts()); n != nparts {
		t.Fatalf("%s at %d: output has %d parts, input %d", where, off, n, nparts)
	}
	if !bytes.Equal(again, out) {
		t.Fatalf("%s at %d: rewriting the output again changed it\n%s\n--- again\n%s\n%s", where, off, out, again, changesJSON(chs))
	}
}

// linksOf returns the URLs (as written, and canonical) of the links of
// a message's parts and HTML attributes.
func linksOf(m *mailbox.Message) map[string]bool {
	set := map[string]bool{}
	for _, f := range m.Header {
		for _, l := range extract.All([]byte(f.Name+": "+f.Value), nil) {
			set[l.URL], set[l.Canonical] = true, true
		}
	}
	for _, p := range m.Parts() {
		if p.Text == nil {
			continue
		}
		for _, l := range extract.All(p.Text, nil) {
			set[l.URL], set[l.Canonical] = true, true
		}
		for _, a := range p.AttrLinks {
			if u, ok := cleanAttr(a.URL); ok {
				set[u] = true
			}
		}
	}
	return set
}

// checkWritten: every link written is found in the output as it was
// meant to be written.
func checkWritten(t testing.TB, out []byte, chs []LinkChange, where string) {
	t.Helper()
	var want []LinkChange
	for _, c := range chs {
		if c.Skipped == "" && !c.Annotated && c.OldForm != "email" && c.OldForm != "abbrev" && c.OldForm != "domain" {
			want = append(want, c)
		}
	}
	if len(want) == 0 {
		return
	}
	m := readOne(t, out)
	if m == nil {
		t.Fatalf("%s: output does not read", where)
	}
	set := linksOf(m)
	for _, c := range want {
		if !set[c.New] && !set[asciiForm(c.New)] {
			t.Errorf("%s: %q written for %q (line %d) is not a link of the output", where, c.New, c.Old, c.Line)
		}
	}
}

// FuzzMessage: any message; no rules give it back byte for byte; the
// example rules never panic, give an output that reads with as many
// parts, and that they leave as it is.
func FuzzMessage(f *testing.F) {
	inputs, _ := filepath.Glob("../testdata/rewrite/*.input")
	for _, in := range inputs {
		if b, err := os.ReadFile(in); err == nil {
			f.Add(b)
		}
	}
	for _, p := range []string{"../testdata/mail/mime.eml", "../testdata/mail/broken.eml", "../testdata/seed-004.txt"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	example, empty := loadExample(f), emptyRules(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		m := readOne(t, data)
		if m == nil {
			return
		}
		raw := bytes.Clone(m.Raw)
		same, _, _ := empty.Message(m, nil)
		if !bytes.Equal(same, fileBytes(m, raw)) || !m.BareCR() && !bytes.Equal(same, data[m.RawOffset:m.RawOffset+int64(len(raw))]) {
			t.Fatalf("no rules changed the message")
		}
		m0 := readOne(t, raw)
		nparts := len(m0.Parts())
		out, _, err := example.Message(m0, nil)
		if err != nil {
			return
		}
		checkMessage(t, example, out, nparts, "fuzz", 0)
	})
}

// TestGeneratedProperties: the properties of the golden cases over a
// generated mbox of the stress mix (internal/corpus: a link every six
// lines, two thirds of the messages encoded or HTML), with the example
// rules and with a rule that moves a host the generator uses.
func TestGeneratedProperties(t *testing.T) {
	var buf bytes.Buffer
	if err := corpus.WriteDense(&buf, 256<<10, 7); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	moved, err := Parse(strings.NewReader("[[rule]]\naction = \"map\"\nfrom-host = \"info.cern.ch\"\nto-host = \"home.web.cern.example\"\n[[rule]]\naction = \"wrap\"\nmatch.form = \"bare\"\n"), "moved.toml")
	if err != nil {
		t.Fatal(err)
	}
	empty := emptyRules(t)
	for _, rs := range []*Rules{loadExample(t), moved} {
		out, chs, nparts := rewriteArchive(t, rs, data, nil)
		written := lastMessages
		checkProperties(t, rs, empty, data, out, nil, nparts)
		n := 0
		for _, mo := range written {
			checkWritten(t, mo.out, mo.chs, "generated")
		}
		for _, c := range chs {
			if c.Skipped == "" {
				n++
			}
		}
		t.Logf("%d messages, %d links written, %d changes", len(nparts), n, len(chs))
		if n == 0 {
			t.Fatal("no link written")
		}
	}
}

// TestConcurrent: one Rules used by several goroutines, a message each,
// gives what it gives serially (run with -race to check the sharing).
func TestConcurrent(t *testing.T) {
	var buf bytes.Buffer
	if err := corpus.WriteDense(&buf, 64<<10, 3); err != nil {
		t.Fatal(err)
	}
	rs := loadExample(t)
	var raws [][]byte
	rd, err := mailbox.NewReader(bytes.NewReader(buf.Bytes()), "c", nil)
	if err != nil {
		t.Fatal(err)
	}
	for {
		m, err := rd.Next()
		if err != nil {
			break
		}
		raws = append(raws, bytes.Clone(m.Raw))
	}
	want := make([][]byte, len(raws))
	for i, raw := range raws {
		want[i], _, _ = rs.Message(readOne(t, raw), nil)
	}
	got := make([][]byte, len(raws))
	done := make(chan bool)
	for w := 0; w < 4; w++ {
		go func(w int) {
			for i := w; i < len(raws); i += 4 {
				got[i], _, _ = rs.Message(readOne(t, raws[i]), nil)
			}
			done <- true
		}(w)
	}
	for w := 0; w < 4; w++ {
		<-done
	}
	for i := range raws {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("message %d differs when rewritten concurrently", i)
		}
	}
}

// TestMessageForms: links written without a scheme keep their form when
// the new URL allows it; delimiters added and removed.
func TestMessageForms(t *testing.T) {
	const hostMap = "[[rule]]\naction = \"map\"\nfrom-host = \"*.old.example\"\nto-host = \"*.new.example\"\n"
	for _, tc := range []struct {
		rules, body, want string
		opts              Options
	}{
		{"[[rule]]\naction = \"replace\"\npattern = 'old\\.example'\nwith = \"new.example\"\n", "mail joe@cs.old.example now\n", "mail joe@cs.new.example now\n", Options{Extract: extract.Options{Emails: true}}},
		{hostMap, "see www.old.example/a now\n", "see www.new.example/a now\n", Options{}},
		{hostMap, "see ftp.old.example/pub now\n", "see ftp.new.example/pub now\n", Options{}},
		{"[[rule]]\naction = \"map\"\nfrom-host = \"*.oldsite.com\"\nto-host = \"*.newsite.com\"\n", "see docs.oldsite.com/a now\n", "see docs.newsite.com/a now\n", Options{Extract: extract.Options{BareDomains: true}}},
		{"[[rule]]\naction = \"map\"\nfrom = \"http://www.old.example/\"\nto = \"https://w3.example/\"\n", "see www.old.example/a now\n", "see https://w3.example/a now\n", Options{}},
		{"[[rule]]\naction = \"drop-wrapper\"\n", "see <URL: http://a.example/x > and <http://b.example/> now\n", "see http://a.example/x and http://b.example/ now\n", Options{}},
		{"[[rule]]\naction = \"wrap\"\n", "see http://a.example/x, now\n", "see <URL:http://a.example/x>, now\n", Options{}},
	} {
		rs, err := Parse(strings.NewReader(tc.rules), "t.toml")
		if err != nil {
			t.Fatal(err)
		}
		msg := "From: a@example.org\nSubject: forms\n\n" + tc.body
		out, chs, err := rs.Message(readOne(t, []byte(msg)), &tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimPrefix(string(out), "From: a@example.org\nSubject: forms\n\n"); got != tc.want {
			t.Errorf("%q: got %q, want %q\n%s", tc.body, got, tc.want, changesJSON(chs))
		}
		again, _, _ := rs.Message(readOne(t, out), &tc.opts)
		if !bytes.Equal(again, out) {
			t.Errorf("%q: a second pass gave %q", tc.body, again)
		}
	}
}

// TestIncomplete: a message a reader did not hold whole is given back as
// it is, with ErrIncomplete.
func TestIncomplete(t *testing.T) {
	m := readOne(t, []byte("From: a@example.org\n\nsee <URL:ftp://ftp.cs.example.edu/pub/lists/x>\n"))
	m.Holes = []mailbox.Hole{{At: len(m.Raw) - 2, Len: 100}}
	out, chs, err := loadExample(t).Message(m, nil)
	if !errors.Is(err, ErrIncomplete) || !bytes.Equal(out, m.Raw) || len(chs) != 0 {
		t.Fatalf("got %q, %v, %v", out, chs, err)
	}
}

// TestCorpusArchives: every mbox, MMDF or single-message file of
// testdata/ and ../shared/corpus/ that is not compressed, rewritten
// whole by the example rules (the bytes between messages copied): no
// rules give the file back; the output reads as as many messages with
// as many parts (Content-Length of mboxcl files fixed), and the rules
// leave it as it is.
func TestCorpusArchives(t *testing.T) {
	example, empty := loadExample(t), emptyRules(t)
	n := 0
	for _, f := range corpusFiles(t) {
		switch filepath.Ext(f) {
		case ".gz", ".bz2", ".xz", ".zst", ".tar":
			continue
		}
		rd, err := mailbox.Open(f, nil)
		if err != nil {
			continue
		}
		format := rd.Format()
		rd.Close()
		if format != mailbox.FormatMbox && format != mailbox.FormatMMDF && format != mailbox.FormatMessage {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out, _, nparts := rewriteArchive(t, example, data, nil)
		checkProperties(t, example, empty, data, out, nil, nparts)
		n++
	}
	t.Logf("%d archives", n)
	if n == 0 {
		t.Fatal("no archive read")
	}
}

// TestAnnotateLong: a change too long for one header line is reported,
// the others listed, every line of the field within 998 characters.
func TestAnnotateLong(t *testing.T) {
	long := "ftp://ftp.cs.example.edu/pub/lists/" + strings.Repeat("a", 980)
	msg := "From: a@example.org\nSubject: long\n\n<URL:" + long + ">\n<URL:ftp://ftp.cs.example.edu/pub/lists/b>\n"
	out, chs, err := loadExample(t).Message(readOne(t, []byte(msg)), &Options{Annotate: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(chs) != 2 || chs[0].Annotated || chs[0].Skipped == "" || !chs[1].Annotated {
		t.Fatalf("changes %s", changesJSON(chs))
	}
	for _, l := range strings.Split(string(out), "\n") {
		if len(l) > 998 && !strings.HasPrefix(l, "<URL:") {
			t.Fatalf("header line of %d characters", len(l))
		}
	}
	if !strings.Contains(string(out), AnnotateField+": ftp://ftp.cs.example.edu/pub/lists/b -> https://archive.example.org/lists/b\n") {
		t.Fatalf("no annotation in\n%s", out)
	}
}

// TestLongLine: an edit that would make a line of an unencoded part
// pass 998 characters is reported, not written.
func TestLongLine(t *testing.T) {
	rs, err := Parse(strings.NewReader("[[rule]]\naction = \"map\"\nfrom = \"http://a.example/\"\nto = \"http://b.example/"+strings.Repeat("x", 990)+"/\"\n"), "t.toml")
	if err != nil {
		t.Fatal(err)
	}
	msg := "From: a@example.org\n\nsee <http://a.example/p> now\n"
	out, chs, _ := rs.Message(readOne(t, []byte(msg)), nil)
	if string(out) != msg || len(chs) != 1 || !strings.Contains(chs[0].Skipped, "998") {
		t.Fatalf("got %q, %s", out, changesJSON(chs))
	}
}

// htmlTags counts the tags, comments and declarations of HTML text as
// an HTML tokenizer reads them: a "<" inside an attribute value
// (href=http://#<A0, unquoted) starts none, and may come back as "&lt;".
func htmlTags(b []byte) int {
	n := 0
	for z := html.NewTokenizer(bytes.NewReader(b)); ; {
		switch z.Next() {
		case html.ErrorToken:
			return n
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken, html.CommentToken, html.DoctypeToken:
			n++
		}
	}
}

// FuzzBuiltMessage builds a message around any text: plain, flowed or
// HTML, 8bit, quoted-printable or base64, LF or CRLF, and checks it as
// FuzzMessage does, plus that every URL written is a link of the output.
func FuzzBuiltMessage(f *testing.F) {
	for _, s := range []string{
		"see <URL:ftp://ftp.cs.example.edu/pub/lists/a-b/c.txt> and http://www.example.com/x?utm_source=y&z=1\n",
		"> <URL:ftp://ftp.cs.example.edu/pub/\n>  lists/x.txt>\nhttp://www.example.com/a/b/c/\nd.html?utm_medium=x\n",
		"<p><a href=\"https://www.example.com/?fbclid=1&amp;q=2\">https://www.example.com/?fbclid=1&amp;q=2</a> &lt;mid:x@y&gt;</p>\n",
		"Caf\u00e9 www.example.com/caf\u00e9 <https://nam02.safelinks.protection.outlook.com/?url=https%3A%2F%2Fwww.example.com%2F&data=1&reserved=0>\n",
		"<p>see http://www.example.com/a<b>b/c</b>?utm_source=x&amp;q=1 now</p>\n",
	} {
		for k := range uint8(3) {
			for e := range uint8(3) {
				f.Add(s, k, e, e == 1)
			}
		}
	}
	example, empty := loadExample(f), emptyRules(f)
	f.Fuzz(func(t *testing.T, text string, kind, enc uint8, crlf bool) {
		if !utf8.ValidString(text) {
			return
		}
		text = builtText(text, crlf)
		msg := buildMessage(text, kind, enc, crlf, "")
		m := readOne(t, []byte(msg))
		if m == nil {
			return
		}
		same, _, _ := empty.Message(m, nil)
		if !bytes.Equal(same, fileBytes(m, []byte(msg)[m.RawOffset:])) {
			t.Fatalf("no rules changed the message")
		}
		m0 := readOne(t, []byte(msg))
		nparts := len(m0.Parts())
		out, chs, err := example.Message(m0, nil)
		if err != nil {
			return
		}
		checkMessage(t, example, out, nparts, "built", 0)
		checkWritten(t, out, chs, "built")
		if kind%3 == 2 {
			// HTML: no tag lost or made, as a tokenizer reads them
			m1 := readOne(t, out)
			if a, b := htmlTags([]byte(text)), htmlTags(m1.Parts()[0].Decoded()); a != b {
				t.Fatalf("%d tags before, %d after:\n%s", a, b, out)
			}
		}
	})
}

// builtText is the text of a built message: with CRLF line endings when
// crlf.
func builtText(text string, crlf bool) string {
	if crlf {
		return strings.ReplaceAll(strings.ReplaceAll(text, "\r", ""), "\n", "\r\n")
	}
	return text
}

// buildMessage makes text (builtText) the body of a message: a plain,
// flowed or HTML part (kind) in 8bit, quoted-printable or base64 (enc),
// with LF or CRLF line endings; header is added to the header (its lines
// end in LF: they are made CRLF when crlf).
func buildMessage(text string, kind, enc uint8, crlf bool, header string) string {
	eol := "\n"
	if crlf {
		eol = "\r\n"
		header = strings.ReplaceAll(header, "\n", "\r\n")
	}
	ct := [3]string{"text/plain; charset=utf-8", "text/plain; charset=utf-8; format=flowed; delsp=yes", "text/html; charset=utf-8"}[kind%3]
	var body, cte string
	switch enc % 3 {
	case 0:
		cte, body = "8bit", text
	case 1:
		var b bytes.Buffer
		w := quotedprintable.NewWriter(&b)
		w.Write([]byte(text))
		w.Close()
		cte, body = "quoted-printable", b.String()
		if !crlf {
			body = strings.ReplaceAll(body, "\r\n", "\n")
		}
	case 2:
		e := base64.StdEncoding.EncodeToString([]byte(text))
		var lines []string
		for len(e) > 76 {
			lines, e = append(lines, e[:76]), e[76:]
		}
		cte, body = "base64", strings.Join(append(lines, e), eol)+eol
	}
	return "From: a@example.org" + eol + "Subject: built" + eol + header + "MIME-Version: 1.0" + eol +
		"Content-Type: " + ct + eol + "Content-Transfer-Encoding: " + cte + eol + eol + body
}

// TestMessageSettle: links whose new text would make the text around
// them read otherwise (found by FuzzBuiltMessage).
func TestMessageSettle(t *testing.T) {
	rs := loadExample(t)
	for _, tc := range []struct {
		body, want string
		skipped    int
	}{
		// "<" unterminated: wrapping the second link once the first is
		// wrapped reads right; the second pass does it
		{"<ftp://0 http://00\n", "<<URL:ftp://0> <URL:http://00>\n", 0},
		// "<URL:" unterminated would swallow the wrapped link
		{"0000<URL:A00:http://00\n", "0000<URL:A00:http://00\n", 1},
	} {
		msg := "From: a@example.org\n\n" + tc.body
		out, chs, err := rs.Message(readOne(t, []byte(msg)), nil)
		if err != nil {
			t.Fatal(err)
		}
		skipped := 0
		for _, c := range chs {
			if c.Skipped != "" {
				skipped++
			}
		}
		if got := strings.TrimPrefix(string(out), "From: a@example.org\n\n"); got != tc.want || skipped != tc.skipped {
			t.Errorf("%q: got %q, %d skipped, want %q, %d\n%s", tc.body, got, skipped, tc.want, tc.skipped, changesJSON(chs))
		}
	}
	// a flowed line where the new URLs do not read back: the message is
	// given back as it was, both changes reported
	msg := "From: a@example.org\nMIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8; format=flowed; delsp=yes\n\n0<ftp.Cs.eXAmple.edu/pub/lists/ http://00\n"
	out, chs, _ := rs.Message(readOne(t, []byte(msg)), nil)
	if string(out) != msg || len(chs) != 2 || !strings.Contains(chs[0].Skipped, "read back") || !strings.Contains(chs[1].Skipped, "read back") {
		t.Errorf("flowed: got %q\n%s", out, changesJSON(chs))
	}
}

// TestHTMLAcrossTags: a link of HTML text that crosses tags is written
// in its pieces; the tags stay.
func TestHTMLAcrossTags(t *testing.T) {
	msg := "From: a@example.org\nContent-Type: text/html\n\n<p>see http://www.example.com/a<b>b/c</b>?utm_source=x&amp;q=1 now</p>\n"
	out, chs, _ := loadExample(t).Message(readOne(t, []byte(msg)), nil)
	want := "<p>see http://example.com/ab/c?<b>q=1</b> now</p>\n"
	if got := string(out[len(out)-len(want):]); got != want || len(chs) != 1 || chs[0].Skipped != "" {
		t.Fatalf("got %q\n%s", out, changesJSON(chs))
	}
}

// TestCutLink: a link that package extract cut at its length limit
// (extract.ErrTooLong) is not written, in the body (bare, so the
// example rules would wrap it, and mapped) or in a header field: only
// its start would be replaced and the rest of it left behind. The short
// link after it is still written.
func TestCutLink(t *testing.T) {
	long := "http://a.example/ok?q=" + strings.Repeat("a", 9000)
	msg := "From: a@example.org\nX-URL: " + long + "\nSubject: long\n\n" + long + " http://a.example/ok2\n"
	mapRules, err := Parse(strings.NewReader("[[rule]]\naction = \"map\"\nfrom = \"http://a.example/\"\nto = \"http://b.example/\"\n"), "t.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		rs   *Rules
		opts *Options
		want string
	}{
		{"wrap", loadExample(t), nil, " <URL:http://a.example/ok2>\n"},
		{"map", mapRules, &Options{Headers: true}, " http://b.example/ok2\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, chs, err := tc.rs.Message(readOne(t, []byte(msg)), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			// the long line is kept up to the short link, which is
			// written (the wrapper may be cut over two lines)
			keep := strings.TrimSuffix(msg, " http://a.example/ok2\n") + " "
			if !strings.HasPrefix(string(out), keep) {
				t.Fatalf("the cut link was written: output %d bytes differs from the input at the long link", len(out))
			}
			if got := strings.ReplaceAll(string(out[len(keep)-1:]), "\n  ", ""); got != tc.want {
				t.Fatalf("the short link came out as %q, want %q", got, tc.want)
			}
			cut := 0
			for _, c := range chs {
				switch {
				case strings.HasPrefix(c.Old, "http://a.example/ok?q="):
					if c.Skipped != SkipCut {
						t.Errorf("cut link %s (%d bytes): skipped %q, want %q", c.Where, len(c.Old), c.Skipped, SkipCut)
					}
					cut++
				case c.Skipped != "":
					t.Errorf("link %s skipped: %s", c.Old, c.Skipped)
				}
			}
			if want := 1 + btoi(tc.opts != nil && tc.opts.Headers); cut != want {
				t.Fatalf("%d cut links reported, want %d (%d changes)", cut, want, len(chs))
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
