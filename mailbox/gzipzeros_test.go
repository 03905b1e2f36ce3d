package mailbox

import (
	"compress/gzip"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestGzipTrailingZeros: zero bytes after a gzip file's last member (a
// tape's or dd's padding; gzip(1): "trailing zero bytes ignored") end it
// as its end does: every message read, no error (fails with "gzip:
// invalid header" and the input not read). Several members are read one
// after the other; other bytes after a member, or after the zeros, are
// still an error at the offset reached.
func TestGzipTrailingZeros(t *testing.T) {
	a, b := mboxOf("a1", "a2"), mboxOf("b1")
	zeros := strings.Repeat("\x00", 100)
	for _, c := range []struct {
		name, in string
		ids      string
		bad      bool
	}{
		{"zeros", gz(a) + zeros, "a1 a2", false},
		{"one zero", gz(a) + "\x00", "a1 a2", false},
		{"two members and zeros", gz(a) + gz(b) + zeros, "a1 a2 b1", false},
		{"no padding", gz(a) + gz(b), "a1 a2 b1", false},
		{"junk", gz(a) + "junk", "a1 a2", true},
		{"zeros then junk", gz(a) + "\x00\x00x", "a1 a2", true},
		{"long junk", gz(a) + strings.Repeat("garbage after the stream ", 400), "a1 a2", true},
	} {
		for rn, wrap := range map[string]func(io.Reader) io.Reader{"whole": func(r io.Reader) io.Reader { return r }, "byte": iotest.OneByteReader, "half": iotest.HalfReader} {
			r, err := NewReader(wrap(strings.NewReader(c.in)), "in.gz", nil)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			var end error
			for {
				m, err := r.Next()
				if m != nil {
					m.Parse()
					ids = append(ids, m.MessageID)
				}
				if err != nil {
					end = err
					break
				}
			}
			var ie *InputError
			if strings.Join(ids, " ") != c.ids || c.bad != (end != io.EOF) ||
				c.bad && (!errors.As(end, &ie) || !errors.Is(end, gzip.ErrHeader) || ie.Offset != int64(len(a))) {
				t.Errorf("%s/%s: %q, %v", c.name, rn, ids, end)
			}
		}
	}
}
