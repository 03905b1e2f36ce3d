package mailbox

import (
	"bufio"
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
// length of the message to read (see emlxParse), or ok=false.
func emlxHead(head []byte) (lineLen int, n int64, ok bool) {
	e, ok := emlxParse(head)
	return e.lineLen, e.n, ok
}

// emlxInfo is what the head of an .emlx says.
type emlxInfo struct {
	lineLen int   // the count line, with its line ending
	count   int64 // the message's length, as the count line says
	n       int64 // the length to read: count, or where the head shows the message ends
	toEOF   bool  // read to the end of the file (no property list seen)
	problem string
}

// emlxParse reads the head of a file as an .emlx. The count line must be
// digits alone and a mail header must follow it, so that a text starting
// with a number is not taken for one. When the head shows that the count
// does not end at the property list (a count changed by hand, or a
// message re-encoded), the message is read up to the property list when
// the head shows where it starts, else to the end of the file, with a
// problem saying so (read as text, its encoded parts' links would be
// lost). A count past the head is checked when it is reached
// (emlxReader).
func emlxParse(head []byte) (e emlxInfo, ok bool) {
	i := bytes.IndexByte(head, '\n')
	if i <= 0 || i > 24 {
		return e, false
	}
	count := bytes.TrimSpace(head[:i])
	if !isDigits(count) {
		return e, false
	}
	n, err := strconv.ParseInt(string(count), 10, 64)
	if err != nil || n <= 0 {
		return e, false
	}
	if v := readHeaderShape(head[i+1:]); !v.mail() && !v.cutMail(len(head)) {
		return e, false
	}
	e = emlxInfo{lineLen: i + 1, count: n, n: n}
	if end := int64(i+1) + n; end <= int64(len(head)) && !plistAt(head[end:]) {
		msg := head[i+1:]
		if k := plistLine(msg); k >= 0 {
			e.n = int64(k)
			e.problem = fmt.Sprintf("the first line of this Apple Mail .emlx says its message is %d bytes, but its property list begins after %d: read to there", n, k)
		} else if len(head) < headSize {
			e.n, e.toEOF = int64(len(msg)), true
			e.problem = fmt.Sprintf("the first line of this Apple Mail .emlx says its message is %d bytes, but no property list follows them: read to the end of the file (%d bytes)", n, len(msg))
		} else {
			e.n, e.toEOF = 1<<62, true
			e.problem = fmt.Sprintf("the first line of this Apple Mail .emlx says its message is %d bytes, but no property list follows them: read to the end of the file", n)
		}
	}
	return e, true
}

// plistLine returns the index in msg of the first line that starts an
// XML property list (<?xml, <!DOCTYPE, <plist), or -1.
func plistLine(msg []byte) int {
	for off := 0; off < len(msg); {
		if plistStart(msg[off:]) {
			return off
		}
		i := bytes.IndexByte(msg[off:], '\n')
		if i < 0 {
			return -1
		}
		off += i + 1
	}
	return -1
}

// plistStart reports whether b starts with the start of a property list.
func plistStart(b []byte) bool {
	for _, p := range []string{"<?xml", "<!DOCTYPE", "<plist"} {
		if bytes.HasPrefix(b, []byte(p)) {
			return true
		}
	}
	return false
}

// plistAt reports whether b, the bytes after an .emlx's message, is the
// end of the file or the start of its XML property list.
func plistAt(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return true
	}
	for _, p := range []string{"<?xml", "<!DOCTYPE", "<plist"} {
		if bytes.HasPrefix(b, []byte(p)) || len(b) < len(p) && bytes.HasPrefix([]byte(p), b) {
			return true
		}
	}
	return false
}

// emlxReader reads the n bytes of an .emlx's message; a file that ends
// before them was cut short: an *InputError at the offset reached. So is
// one where something other than the property list follows them (a count
// that is wrong, or a text that only starts like an .emlx): the rest is
// not read, and that is said.
type emlxReader struct {
	r       *bufio.Reader
	n       int64 // bytes of the message still to come
	off     int64 // the file offset reached
	name    string
	want    int64
	checked bool
	toEOF   bool // read to the end of the file (emlxInfo.toEOF)
}

func (e *emlxReader) Read(p []byte) (int, error) {
	if e.toEOF {
		k, err := e.r.Read(p)
		e.off += int64(k)
		return k, err
	}
	if e.n <= 0 {
		if !e.checked {
			e.checked = true
			after, _ := e.r.Peek(64)
			if !plistAt(after) {
				return 0, &InputError{Path: e.name, Offset: e.off, Err: fmt.Errorf("read as an Apple Mail .emlx, but what follows its message (%d bytes, its first line says) is not its property list: the rest is not read (read the file with --as text or --as message)", e.want)}
			}
		}
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

// IsEmlx reports whether head, the first bytes of a file (4 KiB, or the
// whole file if shorter), is an Apple Mail .emlx as Open reads it: its
// first line is the message's length in bytes. A writer that changes the
// message's length must write that line anew (or leave the file alone):
// Apple Mail reads exactly that many bytes.
func IsEmlx(head []byte) bool {
	_, _, ok := emlxHead(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")))
	return ok
}
