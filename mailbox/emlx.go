package mailbox

import (
	"bytes"
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
