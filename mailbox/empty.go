package mailbox

import (
	"fmt"
	"io"
)

// Empty reports whether the input holds nothing to read: no bytes, only
// a UTF-8 byte-order mark, or nothing once decompressed (a .gz of an
// empty file). Next then returns io.EOF at once, with no message, and
// FormatReason says so ("empty (0 bytes): no messages"). A file with
// anything in it, even a single line ending, is not empty: it is read
// as text or as what it is. Known as soon as Open or NewReader returns.
func (r *Reader) Empty() bool { return r.empty }

// emptySrc is the source of an empty input: no messages.
type emptySrc struct{}

func (emptySrc) next() (*Message, error) { return nil, io.EOF }

// emptyReason says why an input is empty, for Reader.FormatReason and
// the Skip of an empty file in a directory: what is "gzip" etc. for a
// compressed file, "" for a plain one; bom tells a file that holds only
// a byte-order mark.
func emptyReason(what string, bom bool) string {
	switch {
	case what != "":
		return fmt.Sprintf("empty once decompressed (%s): no messages", what)
	case bom:
		return "empty but for a UTF-8 byte-order mark: no messages"
	}
	return "empty (0 bytes): no messages"
}

// utf8BOM is the UTF-8 byte-order mark, skipped at the start of a file.
var utf8BOM = []byte("\xef\xbb\xbf")
