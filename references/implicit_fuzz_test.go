package references

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/uri"
)

// unescapeID undoes EscapeID's %XX.
func unescapeID(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// FuzzImplicit: whatever the headers and text, every implicit reference
// is a mid: or news: URL of an id that is in the header value or at its
// offsets in the text, its position is on the right line and column,
// EscapeID round-trips, and the URL parses as its scheme.
func FuzzImplicit(f *testing.F) {
	f.Add("<a@b> <c@d>", "bare@z (Monday)", "In article <x@y>, someone writes:\n> In article <q@r> z\n", false)
	f.Add("<%/?#@x>", "", "  > In article <1991Jun21.055051.28165@milton.u.washington.edu>,", true)
	f.Add("<<a@b>>", "a@b@c", "In article <é@ü>\r\nIn article <a@b>", false)
	f.Fuzz(func(t *testing.T, refsHdr, replyTo, text string, news bool) {
		m := &mailbox.Message{Header: mailbox.Header{{Name: "References", Value: refsHdr}, {Name: "In-Reply-To", Value: replyTo}}}
		if news {
			m.Newsgroups = "comp.test"
		}
		p := &mailbox.Part{Path: "1", Text: []byte(text)}
		for _, r := range Implicit(m, []*mailbox.Part{p}) {
			scheme, esc, ok := strings.Cut(r.URL, ":")
			if !ok || (scheme != "mid" && scheme != "news") {
				t.Fatalf("%q: not a mid: or news: URL", r.URL)
			}
			id := unescapeID(esc)
			if EscapeID(id) != esc {
				t.Fatalf("EscapeID(%q) = %q, in the URL %q", id, EscapeID(id), esc)
			}
			if strings.ContainsAny(esc, " \t\r\n<>\"") {
				t.Fatalf("%q: characters not allowed in a URL", r.URL)
			}
			switch r.Where {
			case "header:References", "header:In-Reply-To":
				v := refsHdr
				if r.Where == "header:In-Reply-To" {
					v = replyTo
				}
				line := strings.TrimPrefix(r.Where, "header:") + ": " + v
				off := 0 // of the column, counted in characters as utf8 decodes them
				for c := 1; c < r.Column && off < len(line); c++ {
					_, n := utf8.DecodeRuneInString(line[off:])
					off += n
				}
				if r.Line != 1 || r.Column < 1 || !strings.HasPrefix(line[off:], id) {
					t.Fatalf("%s: id %q not at line %d column %d of %q", r.Where, id, r.Line, r.Column, line)
				}
			case "attribution":
				if r.Start < 0 || r.End > int64(len(text)) || text[r.Start:r.End] != id {
					t.Fatalf("attribution %q at %d-%d of %q", id, r.Start, r.End, text)
				}
				if line := bytes.Count([]byte(text[:r.Start]), []byte("\n")) + 1; line != r.Line {
					t.Fatalf("line %d, want %d", r.Line, line)
				}
				ls := strings.LastIndexByte(text[:r.Start], '\n') + 1
				if col := len([]rune(text[ls:r.Start])) + 1; col != r.Column {
					t.Fatalf("column %d, want %d", r.Column, col)
				}
			default:
				t.Fatalf("where %q", r.Where)
			}
			if u, err := uri.Parse(r.URL); u == nil || u.Scheme != scheme {
				t.Fatalf("%q does not parse as %s: %v", r.URL, scheme, err)
			}
		}
	})
}
