package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/linkscan/linkscan/internal/termesc"
)

// safe reports whether s holds nothing a terminal acts on.
func safe(s string) bool { return termesc.String(s) == s }

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

// TestTextBlob: a message of a git archive is EPOCH#BLOB, and so is a
// target there.
func TestTextBlob(t *testing.T) {
	r := sample
	r.Path, r.Blob, r.Offset = "inbox/git/0.git", "0123abcd", 0
	r.Status, r.Target = "resolved", &Target{File: "inbox/git/1.git", Blob: "4567ef"}
	var b bytes.Buffer
	w, _ := NewWriter(&b, Text)
	w.Write(&r)
	w.Close()
	if got := b.String(); !strings.HasPrefix(got, "inbox/git/0.git#0123abcd  <id@x>") || !strings.Contains(got, "resolved -> inbox/git/1.git#4567ef\n") {
		t.Errorf("%q", got)
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
