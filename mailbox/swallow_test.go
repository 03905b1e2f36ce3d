package mailbox

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestContentLengthSwallows: a Content-Length that lands (on the end of
// the file or a "From " line) but runs over what looks like a message of
// its own, a "From " line after a blank line and a header whose own
// Content-Length agrees with its body, is reported at the field (kind
// ErrContentLength), and the message is kept whole as the field says
// (fails if it is merged without a word). A body holding a forwarded mbox
// message (a "From " line and a header without such a field, or with
// one that does not agree) is not reported. From a file, a stream, a byte
// and half a read at a time; LF and CRLF.
func TestContentLengthSwallows(t *testing.T) {
	for _, eol := range []string{"\n", "\r\n"} {
		e := func(s string) string { return strings.ReplaceAll(s, "\n", eol) }
		msg := func(id, cl, body string) string {
			h := e("From a@b Thu Mar 24 02:31:00 1994\nFrom: a@b\nMessage-ID: <" + id + ">\n")
			if cl != "" {
				h += "Content-Length: " + cl + eol
			}
			return h + eol + body
		}
		b2, b3 := e("http://m2.example/\n"), e("http://m3.example/\n")
		m2 := msg("2@x", fmt.Sprint(len(b2)), b2) + eol
		m3 := msg("3@x", fmt.Sprint(len(b3)), b3)
		inner := e("http://m1.example/\n\n") + m2 + m3
		toEOF := msg("1@x", fmt.Sprint(len(inner)), inner)
		inner2 := e("http://m1.example/\n\n") + m2
		toThird := msg("1@x", fmt.Sprint(len(inner2)-len(eol)), inner2) + m3
		fwd := e("http://m1.example/\n\n") + msg("2@x", "", e("forwarded\n")) + eol
		forwarded := msg("1@x", fmt.Sprint(len(fwd)-len(eol)), fwd) + m3
		bad := e("http://m1.example/\n\n") + msg("2@x", "5", b2) + eol
		disagrees := msg("1@x", fmt.Sprint(len(bad)-len(eol)), bad) + m3
		inFrom := func(in string) int { return strings.Index(in, eol+"From a@b") + len(eol) }
		for _, c := range []struct {
			name, in string
			ids      []string
			at       int // offset of the inner "From " line reported, 0: none
		}{
			{"to the end", toEOF, []string{"1@x"}, inFrom(toEOF)},
			{"to the third", toThird, []string{"1@x", "3@x"}, inFrom(toThird)},
			{"forwarded", forwarded, []string{"1@x", "3@x"}, 0},
			{"inner field disagrees", disagrees, []string{"1@x", "3@x"}, 0},
		} {
			for how, wrap := range map[string]func(io.Reader) io.Reader{
				"file":   func(r io.Reader) io.Reader { return r },
				"stream": func(r io.Reader) io.Reader { return struct{ io.Reader }{r} },
				"byte":   iotest.OneByteReader,
				"half":   iotest.HalfReader,
			} {
				r, err := NewReader(wrap(strings.NewReader(c.in)), "in", &Options{Format: FormatMbox})
				if err != nil {
					t.Fatal(err)
				}
				var ids []string
				reported := -1
				for {
					m, err := r.Next()
					if m != nil {
						ids = append(ids, m.MessageID)
						for _, p := range m.Problems {
							if errors.Is(p, ErrContentLength) && strings.Contains(p.Msg, "runs over what looks like a message of its own") {
								fmt.Sscanf(p.Msg[strings.Index(p.Msg, "at offset ")+len("at offset "):], "%d", &reported)
							} else {
								t.Errorf("%s, %q, %s: problem %v", c.name, eol, how, p)
							}
						}
					}
					if err != nil {
						break
					}
				}
				if strings.Join(ids, " ") != strings.Join(c.ids, " ") || (c.at == 0) != (reported < 0) || c.at != 0 && reported != c.at {
					t.Errorf("%s, %q, %s: messages %q, reported at %d, want %q at %d", c.name, eol, how, ids, reported, c.ids, c.at)
				}
			}
		}
	}
}
