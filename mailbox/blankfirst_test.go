package mailbox

import (
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

// TestBlankLinesBeforeHeader: a message that starts with blank lines and
// then a header (a converter that dropped a From_ line and kept the blank
// line before it; a blank line after an mbox From_ line) has that header
// read: its Message-ID, and its base64 part decoded, with a problem that
// says the blank lines were skipped (fails if it says "no header
// fields" and reads the header and encoded parts as plain text). From a stream (whole,
// a byte at a time), a file, a Maildir, an MH folder and an mbox (also
// with DeferParse); LF and CRLF; empty lines and lines of spaces and
// tabs. Blank lines before text that is no header are left as they were:
// an empty header, the text its body.
func TestBlankLinesBeforeHeader(t *testing.T) {
	hdr := "Return-Path: <a@b>\nFrom: a@b\nMessage-ID: <n5@x>\nContent-Type: text/plain\nContent-Transfer-Encoding: base64\n\naHR0cDovL2JsYW5rZmlyc3QuZXhhbXBsZS8K\n"
	type msgCheck struct {
		m      *Message
		how    string
		blanks string
	}
	check := func(c msgCheck) {
		t.Helper()
		m := c.m
		m.Parse()
		found := false
		for _, p := range m.Parts() {
			found = found || strings.Contains(string(p.Text), "http://blankfirst.example/")
		}
		var skipped []Problem
		for _, p := range m.Problems {
			if strings.Contains(p.Msg, "no header fields") {
				t.Errorf("%s: %v", c.how, p)
			}
			if strings.Contains(p.Msg, "before the header; skipped") {
				skipped = append(skipped, p)
			}
		}
		if m.MessageID != "n5@x" || !found || len(skipped) != 1 || !errors.Is(skipped[0], ErrBadHeader) || skipped[0].Offset != m.RawOffset ||
			!strings.HasPrefix(skipped[0].Msg, c.blanks) {
			t.Errorf("%s: id %q, decoded %v, problems %v", c.how, m.MessageID, found, m.Problems)
		}
	}
	for _, eol := range []string{"\n", "\r\n"} {
		e := func(s string) string { return strings.ReplaceAll(s, "\n", eol) }
		for _, bl := range []struct{ blanks, lead string }{{"1 blank line", "\n"}, {"2 blank lines", "\n\n"},
			{"2 blank lines", " \n\t\n"}, {"1 blank line", "   \n"}} { // also lines of white space
			blanks, lead := bl.blanks, bl.lead
			in := e(lead + hdr)
			for how, wrap := range map[string]func(io.Reader) io.Reader{"whole": func(r io.Reader) io.Reader { return r }, "byte": iotest.OneByteReader} {
				r, err := NewReader(wrap(strings.NewReader(in)), "in", &Options{Format: FormatMessage})
				if err != nil {
					t.Fatal(err)
				}
				m, err := r.Next()
				if err != nil {
					t.Fatal(err)
				}
				check(msgCheck{m, "stream " + how + " " + blanks + " " + eol, blanks})
			}
			root := t.TempDir()
			tree(t, root, map[string]string{"a.eml": in, "md/cur/1:2,S": in, "md/new/": "", "mh/1": in,
				"box.mbox": e("From a@b Thu Mar 24 02:31:00 1994\n") + in + eol + e("From a@b Thu Mar 24 02:31:00 1994\nFrom: a@b\nMessage-ID: <ok@x>\n\nok\n")})
			for _, p := range []string{"a.eml", "md", "mh"} {
				_, _, ms, err := readDirAll(t, filepath.Join(root, p), nil)
				if p == "a.eml" {
					r, err2 := Open(filepath.Join(root, p), nil)
					if err2 != nil {
						t.Fatal(err2)
					}
					ms = readAll(t, r)
					err = nil
				}
				if err != nil || len(ms) != 1 {
					t.Fatalf("%s: %v %v", p, ms, err)
				}
				check(msgCheck{ms[0], p + " " + blanks, blanks})
			}
			for _, deferred := range []bool{false, true} {
				r, err := Open(filepath.Join(root, "box.mbox"), &Options{DeferParse: deferred})
				if err != nil {
					t.Fatal(err)
				}
				ms := readAll(t, r)
				if len(ms) != 2 {
					t.Fatalf("mbox: %d messages", len(ms))
				}
				check(msgCheck{ms[0], "mbox " + blanks, blanks})
				if ms[1].Parse(); ms[1].MessageID != "ok@x" || len(ms[1].Problems) > 0 {
					t.Errorf("mbox second: %q %v", ms[1].MessageID, ms[1].Problems)
				}
			}
		}
	}
	// blank lines before text that is no header: as before
	r, _ := NewReader(strings.NewReader("\n\nhello, no header here\nhttp://example.org/\n"), "t", &Options{Format: FormatMessage})
	m, _ := r.Next()
	if len(m.Header) != 0 || !strings.Contains(string(m.Raw[m.bodyStart:]), "hello") {
		t.Errorf("text: header %v, body %q", m.Header, m.Raw[m.bodyStart:])
	}
	for _, p := range m.Problems {
		if strings.Contains(p.Msg, "skipped, the header") {
			t.Errorf("text: %v", p)
		}
	}
}
