package mailbox

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// emlxFile builds an Apple Mail .emlx: the count line, the message, a
// property list that names Apple's DTD by URL.
func emlxFile(msg string) string {
	return strconv.Itoa(len(msg)) + "       \n" + msg +
		`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0"><dict><key>flags</key><integer>8590195717</integer></dict></plist>
`
}

// TestEmlx: the message of an .emlx is read (its base64 body decoded),
// the property list after it is not, and offsets are those of the file,
// given alone and in a folder.
func TestEmlx(t *testing.T) {
	body := base64.StdEncoding.EncodeToString([]byte("see http://emlx.example/page\n"))
	msg := "From: a@example.org\nSubject: emlx\nMessage-ID: <e@x>\nContent-Transfer-Encoding: base64\n\n" + body + "\n"
	file := emlxFile(msg)
	root := t.TempDir()
	tree(t, root, map[string]string{"Messages/123.emlx": file, "Messages/notes.txt": "12\nnot a header http://text.example/\n"})
	check := func(m *Message) {
		t.Helper()
		if m.Format != FormatMessage || m.MessageID != "e@x" {
			t.Fatalf("format %s, id %q, problems %v", m.Format, m.MessageID, m.Problems)
		}
		var text string
		for _, p := range m.Parts() {
			text += string(p.Text)
		}
		if !strings.Contains(text, "http://emlx.example/page") || strings.Contains(text, "apple.com") {
			t.Errorf("text %q", text)
		}
		start := int64(strings.Index(file, "From:"))
		if m.Offset != start || m.RawOffset != start || string(m.Raw) != msg || m.Length != int64(len(msg)) || len(m.Problems) > 0 {
			t.Errorf("offset %d raw offset %d length %d (want %d, %d), raw %q, problems %v", m.Offset, m.RawOffset, m.Length, start, len(msg), m.Raw, m.Problems)
		}
	}
	p := filepath.Join(root, "Messages/123.emlx")
	r, err := Open(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	ms := readAll(t, r)
	r.Close()
	if len(ms) != 1 || !strings.Contains(r.FormatReason(), "emlx") {
		t.Fatalf("%d messages, %q", len(ms), r.FormatReason())
	}
	check(ms[0])
	_, ids, dms, err := readDirAll(t, root, nil)
	if err != nil || len(dms) != 2 {
		t.Fatalf("%q %v", ids, err)
	}
	check(dms[0])
	if dms[1].Format != FormatText {
		t.Errorf("notes.txt read as %s", dms[1].Format)
	}
	// a stream too, and a count line over nothing like a header is text
	f, _ := os.Open(p)
	defer f.Close()
	r2, err := NewReader(f, "stdin", nil)
	if err != nil {
		t.Fatal(err)
	}
	check(readAll(t, r2)[0])
	if !IsEmlx([]byte(file)) || IsEmlx([]byte(msg)) {
		t.Error("IsEmlx")
	}
	for _, in := range []string{"12\nnot a header\n", "2024\nFrom: x\nhttp://a.example/\nhttp://b.example/\n", "0\nFrom: a@b\nSubject: x\n\nb\n"} {
		if _, _, ok := emlxHead([]byte(in)); ok {
			t.Errorf("%q taken for an emlx", in)
		}
	}
}

// FuzzEmlx: an .emlx-like input (a count line, perhaps wrong, a header)
// never crashes the reader and its offsets stay inside the input
// (fuzzRead's checks).
func FuzzEmlx(f *testing.F) {
	f.Add([]byte(emlxFile("From: a@example.org\nSubject: x\n\nhttp://a.example/\n")))
	f.Add([]byte("999\nFrom: a@b\nSubject: x\n\nshort\n"))
	f.Add([]byte("5\nFrom: a@b\nSubject: x\n\nlonger than five\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzRead(t, data, &Options{MaxDepth: 8, MaxParts: 50})
		fuzzRead(t, data, &Options{MaxDepth: 8, MaxParts: 50, MaxMessageSize: 100, MaxPartSize: 60})
	})
}

// TestEmlxTruncated: an .emlx whose file ends before the message's length
// given on its first line was cut: the message is read as far as it goes
// and the cut comes from Next as an *InputError at the offset reached.
func TestEmlxTruncated(t *testing.T) {
	msg := "From: a@example.org\nMessage-ID: <cut@x>\n\nhttp://cut.example/a\n" + strings.Repeat("more\n", 100)
	file := emlxFile(msg)
	cut := file[:strings.Index(file, "more")+20]
	r, err := NewReader(strings.NewReader(cut), "cut.emlx", nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Next()
	var ie *InputError
	if m == nil || m.MessageID != "cut@x" || !errors.As(err, &ie) || ie.Offset != int64(len(cut)) || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("message %v, error %v", m, err)
	}
	if !strings.Contains(string(m.Parts()[0].Text), "http://cut.example/a") {
		t.Errorf("text %q", m.Parts()[0].Text)
	}
}

// TestEmlxCountWrong: a count line that does not end at the property list
// is still an .emlx when the head shows it: the message is read to the
// property list, or with none to the end of the file, with a problem
// that says so (its MIME read, no byte lost; fails if it is read as text);
// past the head, the bytes after the message are checked, and what is
// not a property list is reported, not dropped without a word.
func TestEmlxCountWrong(t *testing.T) {
	msg := "From: a@example.org\nMessage-ID: <w@x>\n\nhttp://w.example/a\n"
	plist := "<?xml version=\"1.0\"?><plist><dict><key>x</key><string>http://plist.example/</string></dict></plist>\n"
	for _, c := range []struct{ name, in, raw, problem string }{
		{"no plist", "10\n" + msg + "more http://after.example/\n", msg + "more http://after.example/\n", "no property list follows them: read to the end of the file"},
		{"count too long", strconv.Itoa(len(msg)+10) + "\n" + msg + plist, msg, fmt.Sprintf("says its message is %d bytes, but its property list begins after %d: read to there", len(msg)+10, len(msg))},
		{"count too short", strconv.Itoa(len(msg)-10) + "\n" + msg + plist, msg, "but its property list begins after"},
	} {
		if !IsEmlx([]byte(c.in)) {
			t.Errorf("%s: not an emlx", c.name)
		}
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "1.emlx"), []byte(c.in), 0o644)
		_, _, dms, err := readDirAll(t, dir, nil)
		if err != nil || len(dms) != 1 {
			t.Fatalf("%s: folder: %v %v", c.name, dms, err)
		}
		for how, rd := range map[string]io.Reader{"whole": strings.NewReader(c.in), "byte": iotest.OneByteReader(strings.NewReader(c.in)), "folder": nil} {
			var m *Message
			if rd == nil {
				m = dms[0]
			} else {
				r, err := NewReader(rd, "w.emlx", nil)
				if err != nil {
					t.Fatal(err)
				}
				if m, err = r.Next(); err != nil {
					t.Fatalf("%s %s: %v", c.name, how, err)
				}
			}
			m.Parse()
			if string(m.Raw) != c.raw || m.MessageID != "w@x" || m.Format != FormatMessage ||
				len(m.Problems) != 1 || !errors.Is(m.Problems[0], ErrStructure) || !strings.Contains(m.Problems[0].Msg, c.problem) || m.Problems[0].Offset != 0 {
				t.Errorf("%s %s: raw %q, id %q, %s, problems %v", c.name, how, m.Raw, m.MessageID, m.Format, m.Problems)
			}
		}
	}
	long := msg + strings.Repeat("filler line\n", 400)
	in := strconv.Itoa(len(long)) + "\n" + long + "more http://after.example/\n"
	r, err := NewReader(strings.NewReader(in), "w.emlx", nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Next()
	var ie *InputError
	if m == nil || m.MessageID != "w@x" || !errors.As(err, &ie) || ie.Offset != int64(len(in)-len("more http://after.example/\n")) {
		t.Fatalf("message %v, error %v", m, err)
	}
	if !strings.Contains(err.Error(), "not its property list") {
		t.Errorf("error %v", err)
	}
}
