package mailbox

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
)

// Apple Mail keeps each message in a .emlx file: a first line holding the
// message's length in bytes (decimal, perhaps padded with spaces), the
// RFC 5322 message of that many bytes, then an XML property list of the
// client's flags. Only the message is read; its offsets are those of the
// file (the count line before it counted).

// emlxHead tells, from the first bytes of a file, whether it is an .emlx:
// it returns the length of the count line (with its line ending) and the
// message's length, or ok=false. The count line must be digits alone and
// a mail header must follow it, so that a text starting with a number is
// not taken for one.
func emlxHead(head []byte) (lineLen int, n int64, ok bool) {
	i := bytes.IndexByte(head, '\n')
	if i <= 0 || i > 24 {
		return 0, 0, false
	}
	count := bytes.TrimSpace(head[:i])
	if !isDigits(count) {
		return 0, 0, false
	}
	n, err := strconv.ParseInt(string(count), 10, 64)
	if err != nil || n <= 0 {
		return 0, 0, false
	}
	if !readHeaderShape(head[i+1:]).mail() {
		return 0, 0, false
	}
	return i + 1, n, true
}

// emlxReader reads the n bytes of an .emlx's message; a file that ends
// before them was cut short: an *InputError at the offset reached.
type emlxReader struct {
	r    io.Reader
	n    int64 // bytes of the message still to come
	off  int64 // the file offset reached
	name string
	want int64
}

func (e *emlxReader) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > e.n {
		p = p[:e.n]
	}
	k, err := e.r.Read(p)
	e.n -= int64(k)
	e.off += int64(k)
	if err == io.EOF && e.n > 0 {
		return k, &InputError{Path: e.name, Offset: e.off, Err: fmt.Errorf("%w: the file ends %d bytes before the end of the message (%d bytes, its first line says)", io.ErrUnexpectedEOF, e.n, e.want)}
	}
	return k, err
}
