package mailbox

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// shrinkingFile is a file that can be read again at an offset (a
// ReaderAt, a Seeker), whose reads at an offset fail past cut: the file
// shrank while a long message was held aside by its offsets.
type shrinkingFile struct {
	*bytes.Reader
	cut int64
}

func (f *shrinkingFile) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > f.cut {
		n, _ := f.Reader.ReadAt(p[:max(0, f.cut-off)], off)
		return n, io.EOF
	}
	return f.Reader.ReadAt(p, off)
}

// TestFillFailsOnce: when the bytes of a long message held aside by
// their offsets in a plain file cannot be read again (the file shrank),
// the message comes with the hole and its *InputError, and Next then
// gives that same error alone: no message of the next "From " line
// alone with invented damage ("empty message"), and a caller can tell it
// is one failure.
func TestFillFailsOnce(t *testing.T) {
	defer func(n int) { spoolAfter = n }(spoolAfter)
	spoolAfter = 64 << 10
	long := "From a@b Thu Mar 24 02:31:00 1994\nFrom: a@b\nMessage-ID: <l@x>\n\n" + strings.Repeat("a line of a long message\n", 20000) + "\n"
	in := long + "From a@b Thu Mar 24 02:31:00 1994\nFrom: a@b\nMessage-ID: <s@x>\n\nshort\n"
	f := &shrinkingFile{Reader: bytes.NewReader([]byte(in)), cut: int64(len(long) / 2)}
	r, err := NewReader(f, "in", &Options{Format: FormatMbox})
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Next()
	if m == nil || len(m.Holes) == 0 {
		t.Fatalf("first: %v, %v", m, err)
	}
	var first *InputError
	for _, p := range m.Problems {
		errors.As(p, &first)
	}
	if first == nil {
		t.Fatalf("first: no InputError in %v", m.Problems)
	}
	m2, err2 := r.Next()
	var ie *InputError
	if m2 != nil || !errors.As(err2, &ie) || ie != first && err == nil {
		t.Errorf("then: message %v, error %v (the first's %v, with it %v)", m2, err2, first, err)
	}
}
