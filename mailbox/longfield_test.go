package mailbox

import (
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

// TestLongFirstField: a message whose first header field is longer than
// the 4 KiB that detection looks at (a folded References:, a one-line
// X- field, a DKIM-Signature) is a message, not text: its base64 part is
// decoded and its Message-ID read, from a stream (whole, a byte and half
// a read at a time), as a file, and in a folder (fails if it is read as
// text, the links of encoded parts lost). Text whose first line only
// looks like a field stays text: short, without a mail field name, or
// with other lines before the window ends.
func TestLongFirstField(t *testing.T) {
	var refs []string
	for i := range 120 {
		refs = append(refs, fmt.Sprintf("<%d.abcdefghijkl@mail.example.com>", i))
	}
	body := base64.StdEncoding.EncodeToString([]byte("Hello, see http://lost-in-base64.example/page\n"))
	rest := "\nFrom: a@b\nSubject: s\nMessage-ID: <lr@x>\nMIME-Version: 1.0\nContent-Type: text/plain\nContent-Transfer-Encoding: base64\n\n" + body + "\n"
	messages := map[string]string{
		"references": "References: " + strings.Join(refs, "\n ") + rest,
		"x-field":    "X-Long: " + strings.Repeat("y", 6000) + rest,
		"dkim":       "DKIM-Signature: v=1; a=rsa-sha256;\n\tb=" + strings.Repeat("QUJD", 1500) + rest,
		"bom":        "\xef\xbb\xbfReferences: " + strings.Join(refs, "\n ") + rest,
	}
	texts := map[string]string{
		"short field":  "Subject: hello",
		"no mail name": "Notes: " + strings.Repeat("z", 6000) + "\nhttp://example.org/n\n",
		"other lines":  "From: me\nTo: you\n" + strings.Repeat("http://example.com/a\n", 300),
	}
	dir := t.TempDir()
	check := func(name, how string, r *Reader, err error, wantMessage bool) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s %s: %v", name, how, err)
		}
		defer r.Close()
		m, err := r.Next()
		if err != nil && err != io.EOF {
			t.Fatalf("%s %s: %v", name, how, err)
		}
		if !wantMessage {
			if m == nil || m.Format != FormatText {
				t.Errorf("%s %s: not text: %v", name, how, m)
			}
			return
		}
		m.Parse()
		found := false
		for _, p := range m.Parts() {
			found = found || strings.Contains(string(p.Text), "http://lost-in-base64.example/page")
		}
		if m.Format != FormatMessage || m.MessageID != "lr@x" || !found {
			t.Errorf("%s %s: format %s, id %q, base64 text decoded %v (%s)", name, how, m.Format, m.MessageID, found, r.FormatReason())
		}
	}
	for want, set := range map[bool]map[string]string{true: messages, false: texts} {
		for name, in := range set {
			for how, wrap := range map[string]func(io.Reader) io.Reader{
				"whole": func(r io.Reader) io.Reader { return r },
				"byte":  iotest.OneByteReader,
				"half":  iotest.HalfReader,
			} {
				r, err := NewReader(wrap(strings.NewReader(in)), name, nil)
				check(name, how, r, err, want)
			}
			p := filepath.Join(dir, "folder", strings.ReplaceAll(name, " ", "-")+".eml")
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(in), 0o644)
			r, err := Open(p, nil)
			check(name, "file", r, err, want)
			// alone in a folder, detected on its own
			sub := filepath.Join(dir, "alone-"+strings.ReplaceAll(name, " ", "-"))
			os.MkdirAll(sub, 0o755)
			os.WriteFile(filepath.Join(sub, "m.eml"), []byte(in), 0o644)
			r, err = Open(sub, nil)
			check(name, "folder", r, err, want)
		}
	}
}
