package mailbox

import (
	"fmt"
	"io"
	"sync"
)

// FormatPublicInbox is a public-inbox archive: a v2 inbox (its epochs
// git/0.git, git/1.git, ...), a v1 inbox, or one epoch repository. Its
// messages are git blobs, read by package mailbox/pubinbox, which
// registers itself with RegisterDirReader when it is imported; each
// message's Blob is its object id, Offset and RawOffset lie within the
// blob. It can be forced on a directory that is such an archive.
const FormatPublicInbox Format = "public-inbox"

// Source yields the messages of an input that a DirReader reads: Next
// as Reader.Next, io.EOF at the end.
type Source interface {
	Next() (*Message, error)
	Close() error
}

// DirReader reads a directory format that another package knows: ok is
// false when dir is not of its format (mailbox then reads the directory
// itself); err, when it is but cannot be read at all. reason says why
// the format was chosen (Reader.FormatReason).
type DirReader func(dir string, opts *Options) (src Source, f Format, reason string, ok bool, err error)

var (
	dirReadersMu sync.Mutex
	dirReaders   []DirReader
)

// RegisterDirReader adds a reader that Open asks first about every
// directory it is given, and about each folder met inside a directory
// read as a folder, an MH folder or a spool (not inside a Maildir).
// Packages register theirs in an init function, as image decoders do.
func RegisterDirReader(r DirReader) {
	dirReadersMu.Lock()
	defer dirReadersMu.Unlock()
	dirReaders = append(dirReaders, r)
}

// openRegistered asks the registered readers about dir, in the order
// they were registered.
func openRegistered(dir string, o Options) (*Reader, bool, error) {
	dirReadersMu.Lock()
	rs := dirReaders[:len(dirReaders):len(dirReaders)]
	dirReadersMu.Unlock()
	for _, rd := range rs {
		src, f, reason, ok, err := rd(dir, &o)
		if err != nil {
			return nil, true, &InputError{Path: dir, Offset: -1, Err: err}
		}
		if ok {
			if o.Format != FormatAuto {
				reason = "forced"
			}
			return &Reader{src: sourceOf{src}, format: f, reason: reason, closers: []io.Closer{src}}, true, nil
		}
	}
	if o.Format == FormatPublicInbox {
		why := "no reader of public-inbox archives is built in"
		if len(rs) > 0 {
			why = "not a public-inbox archive (no git/N.git epochs, not a git repository of messages)"
		}
		return nil, true, &InputError{Path: dir, Offset: -1, Err: fmt.Errorf("format %s forced: %s", FormatPublicInbox, why)}
	}
	return nil, false, nil
}

// sourceOf adapts a Source to the readers of this package.
type sourceOf struct{ s Source }

func (s sourceOf) next() (*Message, error) { return s.s.Next() }

// NewUnreadable returns the message that stands for a message that could
// not be read at all (a git object missing or damaged): no bytes, one
// problem of kind ErrUnreadable whose *InputError names path and says
// why, as a message file of a directory that cannot be opened comes from
// Reader.Next.
func NewUnreadable(path string, f Format, err error) *Message {
	m := &Message{Path: path, Format: f}
	ie := &InputError{Path: path, Offset: -1, Err: err}
	m.problemErr(ie, 0, "", "%v", err)
	return m
}
