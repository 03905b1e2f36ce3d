package mailbox

import (
	"errors"
	"fmt"
)

// The kinds of damage a Problem reports, in the manner of encoding/csv's
// ParseError and its Err values: errors.Is(p, ErrTruncated) tells a
// problem's kind, while its text stays the precise description.
var (
	// ErrTruncated: the input ends before what it started is complete (a
	// header, a base64 group, a multipart's final boundary).
	ErrTruncated = errors.New("truncated")
	// ErrTooLong: a size limit of Options was reached (message, header
	// block, decoded part text); the rest is not read.
	ErrTooLong = errors.New("longer than the limit")
	// ErrTooDeep: MIME nesting beyond Options.MaxDepth.
	ErrTooDeep = errors.New("nested too deep")
	// ErrTooManyParts: more parts than Options.MaxParts.
	ErrTooManyParts = errors.New("too many parts")
	// ErrBadHeader: a header line that is not a field (no colon, a "From "
	// line, a continuation first), or a message without header fields.
	ErrBadHeader = errors.New("bad header")
	// ErrNoBlankLine: a header block that a line that is no field (a URL,
	// text) ends instead of a blank line; that line starts the body. It
	// wraps ErrBadHeader: errors.Is(p, ErrBadHeader) is true too.
	ErrNoBlankLine = fmt.Errorf("%w: header ended without a blank line", ErrBadHeader)
	// ErrStructure: the message's structure is broken (no separator before
	// a message, a message that ends inside its header, a multipart
	// without a boundary or whose boundary never comes, a Content-Type that
	// cannot be parsed).
	ErrStructure = errors.New("bad structure")
	// ErrDecode: a transfer encoding that is unknown or whose data is bad.
	ErrDecode = errors.New("bad encoding")
	// ErrCharset: an unknown charset, or text not valid in its charset.
	ErrCharset = errors.New("bad charset")
	// ErrEmpty: an empty message or file.
	ErrEmpty = errors.New("empty")
	// ErrUnreadable: a file or directory entry could not be read (opened,
	// decompressed, not a regular file); the Problem's text says why, and
	// errors.As finds an *InputError with the path.
	ErrUnreadable = errors.New("unreadable")
)

// Problem is damage found in a message, with where it was found. Err is
// its kind (one of the Err values above, possibly wrapping a cause), nil
// for a problem of no particular kind; Msg is the description printed.
type Problem struct {
	Offset int64  // byte offset in the file (after decompression)
	Part   string // MIME part path, "" for the message as a whole
	Msg    string
	Err    error // kind: ErrTruncated, ErrTooLong, ...; nil if none
}

// String returns "offset N[, part P]: Msg".
func (p Problem) String() string {
	if p.Part != "" {
		return fmt.Sprintf("offset %d, part %s: %s", p.Offset, p.Part, p.Msg)
	}
	return fmt.Sprintf("offset %d: %s", p.Offset, p.Msg)
}

// Error is String, so that a Problem can be handled as an error.
func (p Problem) Error() string { return p.String() }

// Unwrap returns the problem's kind, for errors.Is and errors.As.
func (p Problem) Unwrap() error { return p.Err }

// problemErr records a problem of the given kind.
func (m *Message) problemErr(kind error, off int64, part, format string, args ...any) {
	m.Problems = append(m.Problems, Problem{Offset: off, Part: part, Msg: fmt.Sprintf(format, args...), Err: kind})
}

// InputError is an input that could not be read, or could not be read to
// its end: a missing or unreadable file, a directory without messages, a
// corrupt or truncated compressed file. Offset is how far reading got in
// the (decompressed) data, -1 when reading did not start. Open returns
// one, and Reader.Next returns one when reading breaks off; callers count
// it as an input that could not be read.
type InputError struct {
	Path   string
	Offset int64
	Err    error
}

func (e *InputError) Error() string {
	if e.Offset >= 0 {
		return fmt.Sprintf("%s: at offset %d: %v", e.Path, e.Offset, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Path, e.Err)
}

// Unwrap returns the cause.
func (e *InputError) Unwrap() error { return e.Err }

// Is makes errors.Is(e, ErrUnreadable) true for every InputError.
func (e *InputError) Is(target error) bool { return target == ErrUnreadable }

// Skip is a file or directory entry passed over while reading a
// directory, with why: Reader.Skipped lists them.
type Skip struct {
	Path   string
	Reason string
	Err    error    // the cause, if an error; nil for a deliberate skip (binary file, ...)
	Kind   SkipKind // what sort of entry, for a caller that counts them by sort
}

// SkipKind tells what sort of entry a Skip passed over, so that a count
// of them can be worded truly ("not messages" is not true of them all).
type SkipKind uint8

const (
	// SkipNotMessage: a file that is no message (binary, metadata, hidden,
	// not a regular file), or an entry that could not be read (Err set).
	SkipNotMessage SkipKind = iota
	// SkipDelivering: a file in a Maildir's tmp/, a message being
	// delivered (read it from new/ once it is there). An empty tmp/ is no
	// Skip at all.
	SkipDelivering
	// SkipDirectory: a directory not read on purpose (a symbolic link to
	// one, a hidden one): it may hold messages.
	SkipDirectory
	// SkipEmpty: an empty file (see empty.go), which holds no message.
	SkipEmpty
)

// String returns a plural noun phrase for a count of Skips of the kind:
// "not messages", "in Maildir tmp/ (being delivered)", "directories not
// followed".
func (k SkipKind) String() string {
	switch k {
	case SkipDelivering:
		return "in Maildir tmp/ (being delivered)"
	case SkipDirectory:
		return "directories not followed (links or hidden; they may hold messages)"
	case SkipEmpty:
		return "empty files (no messages)"
	}
	return "not messages"
}

func (s Skip) String() string { return s.Path + ": " + s.Reason }
