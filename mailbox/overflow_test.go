package mailbox

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

// bigMessage is a three-part message: text, a large base64 attachment,
// text again.
func bigMessage(attBytes int) string {
	line := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xa5}, 57)) + "\n"
	att := strings.Repeat(line, attBytes/len(line)+1)
	return "From: a@example.org\nSubject: big\nMessage-ID: <big@example.org>\nContent-Type: multipart/mixed; boundary=\"b\"\n\n" +
		"--b\nContent-Type: text/plain\n\nfirst http://example.org/first\n" +
		"--b\nContent-Type: image/png\nContent-Transfer-Encoding: base64\n\n" + att +
		"--b\nContent-Type: text/plain; charset=iso-8859-1\nContent-Transfer-Encoding: quoted-printable\n\ncaf=E9 http://example.org/after\n--b--\n"
}

// checkBig checks that a message read past the limit kept its last text
// part, mapped to the file (whose bytes are file, the message at base).
func checkBig(t *testing.T, what string, m *Message, file []byte, limit int64) {
	t.Helper()
	if m.MessageID != "big@example.org" || len(m.Holes) == 0 || int64(len(m.Raw)) > 2*limit {
		t.Fatalf("%s: id %q, %d holes, %d bytes kept", what, m.MessageID, len(m.Holes), len(m.Raw))
	}
	if _, ok := hasProblem(m.Problems, ErrTooLong); !ok {
		t.Errorf("%s: problems %v", what, m.Problems)
	}
	parts := m.Parts()
	if len(parts) != 3 {
		t.Fatalf("%s: %d parts", what, len(parts))
	}
	for i, want := range map[int]string{0: "http://example.org/first", 2: "http://example.org/after"} {
		p := parts[i]
		j := bytes.Index(p.Text, []byte(want))
		if j < 0 {
			t.Errorf("%s: part %s text %q", what, p.Path, p.Text)
			continue
		}
		a, b, exact := p.RawSpan(j, j+len(want))
		if !exact || string(file[a:b]) != want {
			t.Errorf("%s: part %s: %q maps to %d..%d %v", what, p.Path, want, a, b, exact)
		}
	}
	if _, ok := hasProblem(parts[1].Problems, ErrTooLong); !ok {
		t.Errorf("%s: attachment problems %v", what, parts[1].Problems)
	}
	if end := parts[1].RawEnd; end < 0 || end > int64(len(file)) || !bytes.HasPrefix(file[end:], []byte("\n--b\nContent-Type: text/plain; charset=iso-8859-1")) {
		t.Errorf("%s: attachment ends at %d, not before the boundary", what, end)
	}
	// the bytes left out are the attachment's
	for _, h := range m.Holes {
		at := m.FileOffset(h.At) - h.Len // the file offset where the hole begins
		if at < parts[1].RawStart || at+h.Len > parts[2].RawStart {
			t.Errorf("%s: hole %+v (file %d..%d) outside the attachment %d..%d", what, h, at, at+h.Len, parts[1].RawStart, parts[2].RawStart)
		}
	}
}

// TestOverLimit: a message over MaxMessageSize keeps the text parts after
// a large attachment, in an mbox (also read a byte at a time and line by
// line), as a single file, and in a Maildir.
func TestOverLimit(t *testing.T) {
	const limit = 64 << 10
	msg := bigMessage(2 << 20)
	o := &Options{MaxMessageSize: limit}
	// mbox: the big message between two small ones
	before := "From a@b Thu Mar 24 02:31:00 1994\nSubject: one\n\nhttp://example.org/1\n\n"
	mbox := before + "From a@b Thu Mar 24 02:32:00 1994\n" + msg + "\nFrom a@b Thu Mar 24 02:33:00 1994\nSubject: three\n\nhttp://example.org/3\n"
	for name, r := range map[string]func() io.Reader{
		"whole":    func() io.Reader { return strings.NewReader(mbox) },
		"one byte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(mbox)) },
		"half":     func() io.Reader { return iotest.HalfReader(strings.NewReader(mbox)) },
	} {
		for _, slow := range []bool{false, true} {
			lineByLine = slow
			rd, err := NewReader(r(), "big.mbox", o)
			if err != nil {
				t.Fatal(err)
			}
			var ms []*Message
			for {
				m, err := rd.Next()
				if m != nil {
					ms = append(ms, m)
				}
				if err != nil {
					break
				}
			}
			lineByLine = false
			if len(ms) != 3 || ms[2].Subject != "three" {
				t.Fatalf("%s: %d messages", name, len(ms))
			}
			checkBig(t, fmt.Sprintf("mbox %s (line by line %v)", name, slow), ms[1], []byte(mbox), limit)
		}
	}
	dir := t.TempDir()
	eml := filepath.Join(dir, "big.eml")
	os.WriteFile(eml, []byte(msg), 0o644)
	ms := openAll(t, eml, o)
	checkBig(t, "single file", ms[0], []byte(msg), limit)
	md := filepath.Join(dir, "md")
	tree(t, md, map[string]string{"cur/1.a:2,S": msg, "new/": ""})
	ms = openAll(t, md, o)
	if len(ms) != 1 || ms[0].Format != FormatMaildir || ms[0].Name != "cur/1.a:2,S" {
		t.Fatalf("maildir: %d messages", len(ms))
	}
	checkBig(t, "maildir file", ms[0], []byte(msg), limit)
}
