package mailbox

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

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
	reason  string // why format was chosen
	// the archive is decompressed as it is read
	compressed bool
	empty      bool   // nothing to read (Empty)
	skips      []Skip // the first maxSkips entries skipped in a directory
	skipCount  int
	onSkip     func(Skip)
	// Progress, if set, is called with the number of (compressed) bytes
	// read so far from a file archive.
	counter *countingReader
	sp      *spool // holds long messages aside (spool.go)
}

// maxSkips bounds the entries Reader.Skipped keeps; Options.OnSkip sees
// every one.
const maxSkips = 1000

func (r *Reader) addSkip(s Skip) {
	r.skipCount++
	if len(r.skips) < maxSkips {
		r.skips = append(r.skips, s)
	}
	if r.onSkip != nil {
		r.onSkip(s)
	}
}

// Skipped returns the entries of a directory passed over so far, with
// why: binary files, mail client metadata, hidden files and folders,
// deleted MH messages, FIFOs and other files that are not regular files,
// symbolic links to directories, entries that could not be read, and
// formats not read here (INN timecaf and CNFS, Outlook .msg; Err is then
// ErrUnsupported). A Skip whose Err is not nil is an entry that could
// not be read; when it is a file (opened and failed, or in a format not
// read) it also came from Next as a message with one problem (Length 0,
// the Problem's Err an *InputError); an unreadable folder or a dangling
// link is a Skip only. At most the first 1000 are kept;
// SkipCount counts them all, Options.OnSkip sees them all.
func (r *Reader) Skipped() []Skip { return r.skips }

// SkipCount returns how many entries were skipped so far.
func (r *Reader) SkipCount() int { return r.skipCount }

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
// damage comes with its Problems and a nil error; an error (an
// *InputError with the path and the offset reached) means the archive
// itself could not be read further: a read or decompression error, or a
// directory in which no message was found. A message may come with the
// error: the last one read before it. An empty input (Empty) has no
// message: io.EOF at once.
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
// directory (Maildir, MH, news spool, or a folder of message and mbox
// files). With opts.Format unset the format is detected. An input that
// cannot be read at all (missing, unreadable, a socket or block device, a
// format that is recognized but not read, a compressed file whose start
// is damaged) gives an *InputError; a FIFO or character device is read.
// A directory in which no message is found gives its *InputError from
// Reader.Next, once it has been read.
func Open(path string, opts *Options) (*Reader, error) {
	o := opts.withDefaults()
	fi, err := os.Stat(path)
	if err != nil {
		return nil, &InputError{Path: path, Offset: -1, Err: pathErr(err)}
	}
	if fi.IsDir() {
		return openDir(path, o)
	}
	// A FIFO or a character device named as an input is read: that is
	// how <(zcat a.gz) and /dev/stdin reach here. Inside directories only
	// regular files are opened (dir.go).
	if fi.Mode()&(fs.ModeSocket|fs.ModeDevice) != 0 && fi.Mode()&fs.ModeCharDevice == 0 {
		return nil, &InputError{Path: path, Offset: -1, Err: fmt.Errorf("not a file to read (%s)", FileKind(fi.Mode()))}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, &InputError{Path: path, Offset: -1, Err: pathErr(err)}
	}
	r, err := NewReader(f, path, &o)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closers = append(r.closers, f)
	if s, ok := r.src.(*singleSrc); ok && !r.compressed && fi.Mode().IsRegular() && r.sp.ra != nil {
		s.ls.sizeHint = fi.Size()
	}
	return r, nil
}

// pathErr takes the cause out of an *fs.PathError, whose path the
// InputError already names.
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// NewReader reads an archive from a stream (a file or standard input);
// name is reported as each message's Path. Compression is detected.
// Directory formats cannot be read from a stream. A read or
// decompression error, at the start or later, comes back from Next as an
// *InputError with name and the offset reached.
func NewReader(rd io.Reader, name string, opts *Options) (*Reader, error) {
	o := opts.withDefaults()
	switch o.Format {
	case FormatMaildir, FormatMH, FormatSpool:
		return nil, fmt.Errorf("mailbox: %s: format %s needs a directory", name, o.Format)
	}
	sp := spoolFor(rd, o.TempDir) // before rd is read: it asks where rd stands
	sp.onFail = o.OnTempFileError
	cr := &countingReader{r: rd}
	r := &Reader{counter: cr, sp: sp}
	br, closer, what, err := decompress(cr, name)
	if err != nil {
		return nil, err
	}
	if closer != nil {
		r.closers = append(r.closers, closer)
	}
	r.compressed = what != ""
	if r.compressed {
		sp.ra = nil // offsets are in the decompressed data
	}
	r.closers = append(r.closers, sp)
	head := peekHead(br, o.Format != FormatAuto)
	var off int64
	if bytes.HasPrefix(head, []byte("\xef\xbb\xbf")) {
		br.Discard(3)
		off = 3
		head = head[3:]
	}
	if len(head) == 0 {
		if _, err := br.Peek(1); err == io.EOF {
			// nothing to read (a read error is not nothing: Next
			// returns it): no message, not a message of 0 bytes
			r.empty, r.src = true, emptySrc{}
			r.format, r.reason = o.Format, emptyReason(what, off > 0)
			if r.format == FormatAuto {
				r.format = FormatText
			}
			return r, nil
		}
	}
	eol := byte('\n')
	if bytes.IndexByte(head, '\n') < 0 && bytes.IndexByte(head, '\r') >= 0 {
		eol = '\r' // old Macintosh files: bare CR line endings
	}
	f := o.Format
	var src io.Reader = br
	var emlxProblem Problem // a count line found wrong, for the message
	if f == FormatAuto {
		if why, err := unreadFormat(head, name); err != nil {
			return nil, &InputError{Path: name, Offset: 0, Err: fmt.Errorf("%w: %s", err, why)}
		}
		f, r.reason = sniff(head)
		if e, ok := emlxParse(head); ok {
			// Apple Mail .emlx: the message after the count line, not
			// the property list after it (emlx.go)
			br.Discard(e.lineLen)
			emlxProblem = Problem{Offset: off, Msg: e.problem, Err: ErrStructure}
			off += int64(e.lineLen)
			src = &emlxReader{r: br, n: e.n, off: off, name: name, want: e.n, toEOF: e.toEOF}
			f, r.reason = FormatMessage, fmt.Sprintf("an Apple Mail .emlx file (a count line, a message of %d bytes, a property list not read)", e.count)
			if e.problem != "" {
				r.reason = "an Apple Mail .emlx file whose count line is wrong: " + e.problem
			}
			sp.ra = nil // (the message does not run to the end of the file)
		}
	} else {
		r.reason = "forced"
	}
	r.format = f
	ls := newLineSrc(src, off, eol)
	ls.sp = sp
	switch f {
	case FormatMbox:
		r.src = &mboxSrc{ls: ls, path: name, opts: o}
	case FormatMMDF:
		r.src = &mboxSrc{ls: ls, path: name, opts: o, mmdf: true}
	case FormatMessage:
		r.src = &singleSrc{ls: ls, path: name, opts: o}
		if emlxProblem.Msg != "" {
			r.src.(*singleSrc).note = &emlxProblem
		}
	case FormatText:
		r.src = &singleSrc{ls: ls, path: name, opts: o, text: true}
	default:
		return nil, fmt.Errorf("mailbox: unknown format %q", f)
	}
	return r, nil
}

// headSize is how much of a stream the format detection reads first.
const headSize = 4096

// peekHead returns the first bytes of br for the checks before the first
// message: all of headSize (or to the end) for the format detection; with
// the format forced only as far as the first LF, for the BOM and the
// line-ending checks, so that a live feed of small messages on a pipe is
// not held until headSize bytes or the end come. A read error is kept by
// stickyReader for Next.
func peekHead(br *bufio.Reader, forced bool) []byte {
	if !forced {
		head, _ := br.Peek(headSize)
		return head
	}
	n := max(br.Buffered(), 1)
	for {
		head, err := br.Peek(n)
		if err != nil || n >= headSize || bytes.IndexByte(head, '\n') >= 0 {
			return head
		}
		// one more byte than is there: waits for one Read, which may
		// bring more
		n = min(headSize, max(n+1, br.Buffered()))
	}
}

// FormatReason says why the format was chosen ("forced", or what the
// detection saw), for a --verbose message.
func (r *Reader) FormatReason() string { return r.reason }

// stickyReader turns the first error other than io.EOF from a reader (a
// file, a decompressor) into an *InputError with the offset reached, and
// returns it again on every later Read, so that an error met by a
// detection read that discarded it is still seen by the next one.
type stickyReader struct {
	r    io.Reader
	name string
	what string // "gzip" etc., or "" for a plain file
	n    int64  // bytes returned so far
	err  error
	// atEOF, if set, checks that the compressed data really ended
	atEOF func() error
}

func (s *stickyReader) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.r.Read(p)
	s.n += int64(n)
	if err == io.EOF && s.atEOF != nil {
		if e := s.atEOF(); e != nil {
			err = e
		}
	}
	if err != nil && err != io.EOF {
		var ie *InputError
		if errors.As(err, &ie) {
			err = ie.Err // the file under the decompressor failed
		}
		if s.what != "" {
			if err == io.ErrUnexpectedEOF {
				err = fmt.Errorf("%s data truncated: %w", s.what, err)
			} else {
				err = codecErr(s.what, err)
			}
		}
		s.err = &InputError{Path: s.name, Offset: s.n, Err: err}
		return n, s.err
	}
	return n, err
}

// zstdMaxWindow bounds the window of a zstd stream, and so the memory its
// decoder takes: 128 MiB, what "zstd --long=27" writes (the default levels
// use 8 MiB at most).
const zstdMaxWindow = 128 << 20

// readSize is the read buffer of a file or of its decompressed data.
const readSize = 64 << 10

// compressions are the magic numbers decompress knows, with the file name
// endings that go with them.
var compressions = []struct {
	what, ext string
	magic     []byte
}{
	{"gzip", ".gz", []byte{0x1f, 0x8b}},
	{"bzip2", ".bz2", []byte("BZh")},
	{"xz", ".xz", []byte{0xfd, '7', 'z', 'X', 'Z', 0}},
	{"zstd", ".zst", []byte{0x28, 0xb5, 0x2f, 0xfd}},
}

// decompress detects gzip, bzip2, xz and zstd by their magic numbers and
// returns a buffered reader of the content, and which compression it was
// ("" for none). Errors while reading come as
// *InputError through stickyReader. A file named as compressed that is
// empty or ends inside the magic number is an error.
func decompress(r io.Reader, name string) (*bufio.Reader, io.Closer, string, error) {
	plain := &stickyReader{r: r, name: name}
	br := bufio.NewReaderSize(plain, readSize)
	magic, _ := br.Peek(6)
	if err := magicCut(name, magic); err != nil && plain.err == nil {
		return nil, nil, "", err
	}
	for _, c := range compressions {
		if !bytes.HasPrefix(magic, c.magic) {
			continue
		}
		var dr io.Reader
		var closer io.Closer
		var check func() error
		var err error
		switch c.what {
		case "gzip":
			var z *gzip.Reader
			if z, err = gzip.NewReader(br); err == nil {
				z.Multistream(false)
				dr, closer = &gzipMembers{br: br, z: z}, z
			}
		case "bzip2":
			dr = bzip2.NewReader(br)
		case "xz":
			t := &tailReader{r: br}
			if dr, err = xz.NewReader(t); err == nil {
				check = t.xzEnd
			}
		case "zstd":
			var z *zstd.Decoder
			if z, err = zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(zstdMaxWindow)); err == nil {
				dr, closer = z, closerFunc(func() error { z.Close(); return nil })
			}
		}
		if err != nil {
			var ie *InputError
			if errors.As(err, &ie) {
				return nil, nil, "", ie
			}
			if err == io.ErrUnexpectedEOF || err == io.EOF {
				err = fmt.Errorf("%s data truncated in its header: %w", c.what, io.ErrUnexpectedEOF)
			} else {
				err = codecErr(c.what, err)
			}
			return nil, nil, "", &InputError{Path: name, Offset: 0, Err: err}
		}
		return bufio.NewReaderSize(&stickyReader{r: dr, name: name, what: c.what, atEOF: check}, readSize), closer, c.what, nil
	}
	return br, nil, "", nil
}

// magicCut returns the *InputError of a file whose name says it is
// compressed (.gz, .bz2, .xz, .zst) and whose bytes, all of them in head
// (its first 6 bytes, or fewer: the whole file), end inside that
// compression's magic number, empty included: a file cut short, not an
// empty input or text. nil otherwise.
func magicCut(name string, head []byte) error {
	for _, c := range compressions {
		if strings.HasSuffix(strings.ToLower(name), c.ext) && !bytes.HasPrefix(head, c.magic) && bytes.HasPrefix(c.magic, head) {
			return &InputError{Path: name, Offset: 0, Err: fmt.Errorf("%s data truncated: the file ends inside the %s magic number (%s)", c.what, c.what, plural(len(head), "byte"))}
		}
	}
	return nil
}

// gzipMembers reads the members of a gzip file one after the other, as
// gzip(1) does, and takes zero bytes after the last one for its end
// ("trailing zero bytes ignored": the padding of a tape or of dd), not a
// damaged header, so that such a file is read whole. Other bytes after a
// member are an error.
type gzipMembers struct {
	br *bufio.Reader
	z  *gzip.Reader
}

func (g *gzipMembers) Read(p []byte) (int, error) {
	for {
		n, err := g.z.Read(p)
		if n > 0 && err == io.EOF {
			return n, nil // (the member's end comes again next time)
		}
		if err != io.EOF || n > 0 {
			return n, err
		}
		next, err := g.br.Peek(2)
		switch {
		case len(next) == 0 && err == io.EOF:
			return 0, io.EOF
		case len(next) == 2 && next[0] == 0x1f && next[1] == 0x8b:
			if err := g.z.Reset(g.br); err != nil {
				return 0, err
			}
			g.z.Multistream(false)
		case len(next) > 0 && next[0] == 0:
			if err := zerosToEnd(g.br); err != nil {
				return 0, err
			}
			return 0, io.EOF
		case err != nil && err != io.EOF:
			return 0, err
		default:
			return 0, gzip.ErrHeader
		}
	}
}

// zerosToEnd reads br to its end: nil when every byte is zero.
func zerosToEnd(br *bufio.Reader) error {
	for {
		b, err := br.Peek(br.Buffered())
		if len(b) == 0 {
			if _, err = br.Peek(1); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
			continue
		}
		for _, c := range b {
			if c != 0 {
				return fmt.Errorf("gzip: bytes other than zeros after the trailing zeros: %w", gzip.ErrHeader)
			}
		}
		br.Discard(len(b))
		_ = err
	}
}

// Decompress returns a reader of r's content: decompressed if it starts
// with a gzip, bzip2, xz or zstd magic number, r's bytes otherwise; what
// is "gzip", "bzip2", "xz", "zstd" or "". A read or decompression error
// comes from Read as an *InputError with name and the offset reached in
// the decompressed data, as for NewReader; a damaged start of a
// compressed stream is an *InputError from Decompress itself. Close
// closes the decompressor, not r.
func Decompress(r io.Reader, name string) (rc io.ReadCloser, what string, err error) {
	br, closer, what, err := decompress(r, name)
	if err != nil {
		return nil, "", err
	}
	if closer == nil {
		closer = closerFunc(func() error { return nil })
	}
	return struct {
		io.Reader
		io.Closer
	}{br, closer}, what, nil
}

// codecErr puts the codec's name before err, unless err's text starts
// with it already (compress/gzip's "gzip: invalid header").
func codecErr(what string, err error) error {
	if strings.HasPrefix(err.Error(), what+":") {
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// tailReader keeps the last two bytes of a stream before any zero bytes
// at its end.
type tailReader struct {
	r     io.Reader
	tail  [2]byte
	zeros bool // the bytes read so far end in zeros
}

func (t *tailReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	b := p[:n]
	k := len(b)
	for k > 0 && b[k-1] == 0 {
		k--
	}
	switch {
	case k >= 2:
		t.tail = [2]byte{b[k-2], b[k-1]}
	case k == 1 && t.zeros:
		t.tail = [2]byte{0, b[0]}
	case k == 1:
		t.tail = [2]byte{t.tail[1], b[0]}
	}
	if n > 0 {
		t.zeros = k < n
	}
	return n, err
}

// xzEnd checks that an xz stream ended with its footer's magic "YZ"
// (and stream padding): github.com/ulikunitz/xz v0.5 returns a clean end
// for a file cut inside a block header.
func (t *tailReader) xzEnd() error {
	if t.tail != [2]byte{'Y', 'Z'} {
		return fmt.Errorf("the stream ends without its footer: %w", io.ErrUnexpectedEOF)
	}
	return nil
}
