package mailbox

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// source yields messages.
type source interface {
	next() (*Message, error)
}

// Reader returns the messages of one archive in order:
//
//	r, err := mailbox.Open(path, nil)
//	...
//	defer r.Close()
//	for {
//		m, err := r.Next()
//		if err == io.EOF {
//			break
//		}
//		if err != nil { ... } // I/O error: the archive cannot be read on
//		...                    // m.Problems: damage, reading goes on
//	}
type Reader struct {
	src     source
	closers []io.Closer
	format  Format
	// Progress, if set, is called with the number of (compressed) bytes
	// read so far from a file archive.
	counter *countingReader
}

// Format returns the detected or forced format.
func (r *Reader) Format() Format { return r.format }

// BytesRead returns how many bytes of the underlying file have been read,
// for progress reports; 0 for directories.
func (r *Reader) BytesRead() int64 {
	if r.counter == nil {
		return 0
	}
	return r.counter.n
}

// Next returns the next message, or io.EOF at the end. A message with
// damage comes with its Problems and a nil error; an error means the
// archive itself could not be read further.
func (r *Reader) Next() (*Message, error) { return r.src.next() }

// Close closes the files the Reader opened.
func (r *Reader) Close() error {
	var first error
	for _, c := range r.closers {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// Open opens the archive at path: a file (possibly compressed) or a
// directory (Maildir, MH, news spool). With opts.Format unset the format is
// detected.
func Open(path string, opts *Options) (*Reader, error) {
	o := opts.withDefaults()
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return openDir(path, o)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(f, path, &o)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closers = append(r.closers, f)
	return r, nil
}

// NewReader reads an archive from a stream (a file or standard input);
// name is reported as each message's Path. Compression is detected.
// Directory formats cannot be read from a stream.
func NewReader(rd io.Reader, name string, opts *Options) (*Reader, error) {
	o := opts.withDefaults()
	switch o.Format {
	case FormatMaildir, FormatMH, FormatSpool:
		return nil, fmt.Errorf("mailbox: %s: format %s needs a directory", name, o.Format)
	}
	cr := &countingReader{r: rd}
	r := &Reader{counter: cr}
	dr, closer, err := decompress(cr)
	if err != nil {
		return nil, fmt.Errorf("mailbox: %s: %w", name, err)
	}
	if closer != nil {
		r.closers = append(r.closers, closer)
	}
	br := bufio.NewReaderSize(dr, 64<<10)
	head, _ := br.Peek(4096)
	var off int64
	if bytes.HasPrefix(head, []byte("\xef\xbb\xbf")) {
		br.Discard(3)
		off = 3
		head = head[3:]
	}
	eol := byte('\n')
	if bytes.IndexByte(head, '\n') < 0 && bytes.IndexByte(head, '\r') >= 0 {
		eol = '\r' // old Macintosh files: bare CR line endings
	}
	f := o.Format
	if f == FormatAuto {
		f = sniff(head)
	}
	r.format = f
	ls := newLineSrc(br, off, eol)
	switch f {
	case FormatMbox:
		r.src = &mboxSrc{ls: ls, path: name, opts: o}
	case FormatMMDF:
		r.src = &mboxSrc{ls: ls, path: name, opts: o, mmdf: true}
	case FormatMessage:
		r.src = &singleSrc{ls: ls, path: name, opts: o}
	case FormatText:
		r.src = &singleSrc{ls: ls, path: name, opts: o, text: true}
	default:
		return nil, fmt.Errorf("mailbox: unknown format %q", f)
	}
	return r, nil
}

// decompress detects gzip, bzip2, xz and zstd by their magic numbers.
func decompress(r io.Reader) (io.Reader, io.Closer, error) {
	br := bufio.NewReader(r)
	magic, _ := br.Peek(6)
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		z, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, err
		}
		return z, z, nil
	case bytes.HasPrefix(magic, []byte("BZh")):
		return bzip2.NewReader(br), nil, nil
	case bytes.HasPrefix(magic, []byte{0xfd, '7', 'z', 'X', 'Z', 0}):
		x, err := xz.NewReader(br)
		return x, nil, err
	case bytes.HasPrefix(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		z, err := zstd.NewReader(br)
		if err != nil {
			return nil, nil, err
		}
		return z, closerFunc(func() error { z.Close(); return nil }), nil
	}
	return br, nil, nil
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// sniff tells the format of a stream from its first bytes.
func sniff(head []byte) Format {
	h := head
	for len(h) > 0 && (h[0] == '\n' || h[0] == '\r') {
		h = h[1:]
	}
	switch {
	case bytes.HasPrefix(h, []byte("From ")):
		return FormatMbox
	case bytes.HasPrefix(h, mmdfSep):
		return FormatMMDF
	case looksLikeHeader(h) || isANews(h):
		return FormatMessage
	}
	return FormatText
}

// looksLikeHeader reports whether b starts with a header field.
func looksLikeHeader(b []byte) bool {
	end := bytes.IndexAny(b, "\r\n")
	if end < 0 {
		end = len(b)
	}
	line := b[:end]
	colon := bytes.IndexByte(line, ':')
	return colon > 0 && validName(line[:colon]) && bytes.IndexByte(line[:colon], ' ') < 0
}
