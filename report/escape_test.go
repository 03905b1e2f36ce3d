package report

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"plain ascii, tab\there", "plain ascii, tab\there"},
		{"Zoë ünïcode 日本", "Zoë ünïcode 日本"},
		{`back\slash`, `back\slash`},
		{"\x1b[2J\x1b]0;owned\x07", `\x1b[2J\x1b]0;owned\x07`},
		{"nul\x00del\x7f", `nul\x00del\x7f`},
		{"line\nfeed\rreturn", `line\nfeed\rreturn`},
		{"c1 \u009b31m csi", `c1 \u009b31m csi`},
		{"raw c1 byte \x9b", `raw c1 byte \x9b`},
		{"latin-1 \xe9t\xe9", `latin-1 \xe9t\xe9`},
		{"bidi \u202egnp.exe", `bidi \u202egnp.exe`},
		{"isolate \u2066x\u2069", `isolate \u2066x\u2069`},
		{"nbsp\u00a0ok", "nbsp\u00a0ok"},
	}
	for _, tt := range tests {
		if got := Escape(tt.in); got != tt.want {
			t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// safe reports whether s holds nothing a terminal acts on.
func safe(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if escapedRune(r) {
			return false
		}
	}
	return true
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "a\x1bb", "\xff\xfe", "\u009b", "\u202e", "ok text"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Escape(s)
		if !safe(got) {
			t.Fatalf("Escape(%q) = %q still drives a terminal", s, got)
		}
		if safe(s) && got != s {
			t.Fatalf("Escape(%q) = %q changed safe text", s, got)
		}
		if !safe(s) && got == s {
			t.Fatalf("Escape(%q) left unsafe text", s)
		}
	})
}

// TestTextEscaped: the text formats print no control character that came
// from an archive.
func TestTextEscaped(t *testing.T) {
	r := sample
	r.Path = "evil\x1b]0;title\x07.mbox"
	r.MessageID = "id\x1b[31m@x"
	r.URL = "http://a.org/\x9b2J"
	r.Part = "1\x00"
	for _, f := range []Format{Text, PlainText} {
		var b bytes.Buffer
		w, _ := NewWriter(&b, f)
		w.Write(&r)
		w.Close()
		out := strings.TrimSuffix(b.String(), "\n")
		if !safe(out) || strings.Contains(out, "\n") || !strings.Contains(out, `evil\x1b]0;title\x07.mbox`) {
			t.Errorf("%s: %q", f, out)
		}
	}
}

// TestTextLocation: the message's place is PATH#OFFSET, unambiguous for
// Maildir names with colons.
func TestTextLocation(t *testing.T) {
	r := sample
	r.Path, r.Offset = "Maildir/cur/1201.host:2,S", 0
	var b bytes.Buffer
	w, _ := NewWriter(&b, Text)
	w.Write(&r)
	w.Close()
	if !strings.HasPrefix(b.String(), "Maildir/cur/1201.host:2,S#0  <id@x>") {
		t.Errorf("%q", b.String())
	}
}

// TestTextFlush: Flush writes out the records held back for alignment.
func TestTextFlush(t *testing.T) {
	for _, f := range []Format{Text, CSV} {
		var b bytes.Buffer
		w, _ := NewWriter(&b, f)
		before := b.Len()
		w.Write(&sample)
		if err := w.(Flusher).Flush(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String()[before:], "dir/a.mbox") {
			t.Errorf("%s: nothing written by Flush: %q", f, b.String())
		}
	}
}
