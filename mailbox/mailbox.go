// Package mailbox reads the archives that mail and news are kept in, one
// message at a time, and walks each message's MIME structure into decoded
// text parts, keeping for every byte where in the file it came from.
//
// Formats (see docs/formats.md): mbox in all its variants (mboxo, mboxrd,
// mboxcl, mboxcl2, MMDF), single messages, Maildir, MH, INN tradspool and
// timehash news spools and single news articles (RFC 5536, RFC 1036, and
// 1982 A-news articles that have no RFC 822 header), Apple Mail .emlx
// files (the message only), gzip, bzip2, xz and zstd compressed files
// (also single messages compressed inside a Maildir or MH folder, as
// Dovecot writes them), plain text, and folders of any of these, read
// recursively with each file detected on its own (files that are not
// read are listed by Reader.Skipped). Open detects the format
// (Reader.FormatReason says why); Options.Format overrides it.
//
// # What is written here by hand, and why
//
//   - The mbox splitter. github.com/emersion/go-mbox v1.0.3 rewrites every
//     line ending to CRLF, drops the "From " line, ignores Content-Length
//     and fails on a byte-order mark, so it can report neither byte offsets
//     nor the envelope, and cannot support byte-exact rewriting. The tests
//     use go-mbox as a cross-check on files it does read.
//   - The header reader and the multipart splitter. go-message returns no
//     header at all for a block with a colon-less line or a leading "From "
//     line, treats a missing final boundary as an error, does not apply
//     multipart/digest's default type, and reports no raw offsets for
//     parts. Messages here are held in memory one at a time (up to
//     Options.MaxMessageSize), and the splitter works on those bytes so that
//     every part keeps its span in the file. The tests read well-formed
//     messages with go-message too and compare the parts.
//   - The quoted-printable line decoder: mime/quotedprintable reads a
//     stream and needs a bufio.Reader per use, while the walk decodes line
//     by line to keep each line's file offset.
//   - The HTML scanner (html.go): golang.org/x/net/html's tokenizer reads
//     every byte through a method call and took a fifth of a whole scan;
//     the scanner jumps between tags with bytes.IndexByte, decodes entities
//     with x/net/html's UnescapeString, and is checked against the
//     tokenizer by a differential test and a fuzz test.
//   - Fast paths in front of libraries, each held to the library by a fuzz
//     test: the common Content-Type forms before mime.ParseMediaType
//     (FuzzMediaType), the common date form before net/mail.ParseDate
//     (FuzzDate), the common character references before
//     html.UnescapeString (FuzzUnescape). They exist because the libraries
//     allocate and cost several times more on every message.
//
// # Memory
//
// The bytes of a message, the decoded text of its parts and the spans
// that map that text to the file come from pools (scratch.go) and go back
// with Message.Release. A message longer than 4 MiB is not grown in
// copies while its end is looked for: its bytes are held aside (read
// again from the file when it is a plain file, else kept in a temporary
// file in Options.TempDir) and then read into one buffer of its size
// (spool.go), so that reading it takes its size once. A long text part
// that decodes line by line (as written, quoted-printable or base64, in
// UTF-8, a single-byte charset or a multibyte one without state but
// GB18030, or ISO-2022-JP as written; HTML and format=flowed too, their last step run on pieces
// that end where its reading is not open) is decoded in chunks of whole
// lines into its text alone (chunk.go): its map to the file is made again
// for the chunks around a range when asked, so that the part costs its
// text, not its text twice and two spans per escape or converted
// character (four per line of HTML). A header is unfolded into one buffer that is never
// written again and becomes its fields' one string through unsafe.String,
// the way strings.Builder makes its string, so that the fields cost one
// allocation instead of one each.
//
// Libraries do the rest: golang.org/x/text for charsets (chosen per part,
// never through a package-level hook), mime.WordDecoder for RFC 2047
// encoded-words, mime.ParseMediaType, encoding/base64, golang.org/x/net/html
// for HTML entities, net/mail for addresses and dates, and compress/gzip, compress/bzip2,
// github.com/ulikunitz/xz and github.com/klauspost/compress/zstd for
// compressed archives.
//
// # Bad input
//
// Damage is normal in archives. A damaged message is returned with the
// parts that could be read and a list of Problems, each with its byte
// offset; the reader goes on with the next message. Each Problem has a
// kind (ErrTruncated, ErrTooLong, ErrBadHeader, ...; errors.Is tells
// them apart) and prints as before. Only an input that cannot be read
// stops a Reader: Open and Reader.Next return an *InputError naming the
// file and the offset reached. Every buffer is bounded; see Options.
//
// # Limits
//
// One rule for every limit in Options: zero means the default, a negative
// value means no limit.
package mailbox

import (
	"fmt"
	"io/fs"
	"time"
)

// Format names an archive format.
type Format string

// The formats Open knows.
const (
	FormatAuto    Format = ""
	FormatMbox    Format = "mbox"    // mboxo, mboxrd, mboxcl, mboxcl2
	FormatMMDF    Format = "mmdf"    // ^A^A^A^A separated
	FormatMessage Format = "message" // one RFC 5322 message or news article
	FormatMaildir Format = "maildir"
	FormatMH      Format = "mh"
	FormatSpool   Format = "spool" // INN tradspool
	FormatText    Format = "text"  // no message structure
	// FormatFolder is the format Reader.Format gives a directory that is
	// none of the above: each file in it is detected on its own. It
	// cannot be forced.
	FormatFolder Format = "folder"
)

// Formats lists the formats that can be forced with Options.Format.
var Formats = []Format{FormatMbox, FormatMMDF, FormatMessage, FormatMaildir, FormatMH, FormatSpool, FormatText}

// Options sets the format and the limits. The zero value means
// auto-detection and the defaults below. For every limit, zero means the
// default and a negative value means no limit.
type Options struct {
	Format Format

	// MaxMessageSize bounds the bytes of one message held in memory
	// (default 64 MiB). Of a longer message only the structure and the
	// text past it are kept (at most the limit again), the rest left out
	// as Message.Holes, with a problem; of plain text the rest is
	// skipped.
	MaxMessageSize int64
	// MaxHeaderBytes bounds a header block (default 256 KiB).
	MaxHeaderBytes int
	// MaxLineLength bounds one line of an mbox file while splitting
	// (default 1 MiB); a longer line is read in pieces.
	MaxLineLength int
	// MaxDepth bounds the nesting of multiparts and message/rfc822 parts
	// (default 32).
	MaxDepth int
	// MaxParts bounds the parts of one message (default 10000).
	MaxParts int
	// MaxPartSize bounds the decoded text of one part (default 32 MiB).
	MaxPartSize int
	// NoHTML leaves text/html parts undecoded (no text, no attribute links).
	NoHTML bool
	// DeferParse makes the mbox and MMDF readers return each message split
	// but with its header not yet read: the caller calls Message.Parse,
	// typically in a worker goroutine, so that the reader only splits.
	DeferParse bool
	// SkipText walks the structure and headers only: no part is decoded.
	// Indexing Content-IDs needs no more.
	SkipText bool
	// SkipFile, if set, is asked before each message file of a directory
	// (Maildir, MH, spool) is read; returning true skips it. An index
	// uses it to pass over files it holds already.
	SkipFile func(path string, size int64, mtime time.Time) bool
	// OnSkip, if set, is called for each file or directory entry passed
	// over while reading a directory (see Reader.Skipped), when it is.
	OnSkip func(Skip)
	// OnFile, if set, is called for each file of a directory that is
	// read, before its first message comes from Next, with the format it
	// is read as and why, as Reader.Format and FormatReason say for the
	// input itself: a message file of a Maildir, an MH folder or a
	// spool (FormatMaildir, FormatMH, FormatSpool), or what detection
	// found in any other file (an mbox, a single message, text, ...).
	// Files passed over (OnSkip) are not read and not given here.
	OnFile func(FileRead)
	// EpochSince, if set, is asked for each epoch repository of a
	// public-inbox archive before it is read, with the commit it will be
	// read up to (its head): it returns a commit read up to before, and
	// then only the commits after it are read (all of them when it is not
	// in the repository, "" for none: every message). Returning head
	// itself passes the epoch over. An index uses it to add only what is
	// new.
	EpochSince func(repo, head string) string
	// TempDir is where a temporary file goes ("": os.TempDir()): the
	// bytes of a message longer than 4 MiB read from a stream (standard
	// input, a compressed file) are held there until its end is found,
	// so that the message is read into one buffer of its size.
	TempDir string
	// OnTempFileError, if set, is called when that temporary file cannot
	// be made or written (a TempDir that does not exist, a full disk):
	// the message, and the long messages after it, are then held in
	// memory instead, none of their bytes lost. Once per Reader (each
	// file of a directory read as a stream has its own).
	OnTempFileError func(error)
}

func (o *Options) withDefaults() Options {
	var r Options
	if o != nil {
		r = *o
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		} else if *v < 0 {
			*v = int(^uint(0) >> 1)
		}
	}
	if r.MaxMessageSize == 0 {
		r.MaxMessageSize = 64 << 20
	} else if r.MaxMessageSize < 0 {
		r.MaxMessageSize = 1 << 62
	}
	def(&r.MaxHeaderBytes, 256<<10)
	def(&r.MaxLineLength, 1<<20)
	def(&r.MaxDepth, 32)
	def(&r.MaxParts, 10000)
	def(&r.MaxPartSize, 32<<20)
	return r
}

// FileRead is a file of a directory as it is read (Options.OnFile).
type FileRead struct {
	Path string
	// Info is the file's: through a symbolic link, its target's, so
	// that os.SameFile tells the file whatever name reached it
	Info   fs.FileInfo
	Format Format // the format it is read as
	Reason string // why
	// Head is, for an epoch repository of a public-inbox archive
	// (FormatPublicInbox), the commit its messages are read up to, and
	// Since the commit after which they are read ("": all of them; see
	// Options.EpochSince).
	Head, Since string
}

// Message is one message of an archive.
type Message struct {
	Path   string // the file the message is in
	Format Format
	// Offset and Length locate the message in the (decompressed) file,
	// its mbox "From " line included.
	Offset, Length int64
	FromLine       string   // the mbox "From " line, without its line ending
	Name           string   // Maildir or MH file name, or spool "group:number"
	Groups         []string // news groups the spool files it under (crossposts)

	// Blob is the git object id of a message read from a git repository
	// (FormatPublicInbox), "" otherwise; Path is then the repository,
	// and Offset and RawOffset lie within the blob.
	Blob string

	// Raw is the message itself (header and body, without the "From "
	// line), exactly as in the file, except that in a file whose lines
	// end in a bare CR each CR reads as LF; RawOffset is the file offset
	// of Raw[0]. Past Options.MaxMessageSize only structure and text
	// are kept (Holes).
	Raw       []byte
	RawOffset int64
	// Holes are the places where a reader left bytes of the file out of
	// Raw (a message over Options.MaxMessageSize keeps its structure and
	// text but not all of its attachments); none for most messages.
	// Message.FileOffset maps an index in Raw to the file.
	Holes []Hole

	Header Header

	// From the header, decoded; zero when absent or unreadable.
	MessageID  string // without angle brackets
	Date       time.Time
	From       string
	Subject    string
	Newsgroups string

	Problems []Problem

	opts      Options
	bodyStart int  // index of the body in Raw
	crOnly    bool // the file ends its lines with a bare CR
	unparsed  bool // DeferParse: the header is still to be read

	// buffers lent to the message until Release (scratch.go)
	bytes lender[byte]
	spans lender[Span]
	// the first part and the first part pointers of Parts, in the message
	// itself
	part0    Part
	partUsed bool
	partPtrs [2]*Part
}

// Damaged reports whether the message has problems.
func (m *Message) Damaged() bool { return len(m.Problems) > 0 }

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
