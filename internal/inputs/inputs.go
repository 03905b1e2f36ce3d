// Package inputs opens the inputs of a command: files and directories
// through mailbox.Open, and "-" as standard input, which can be spooled
// to a temporary file so that a command can read it twice (index first,
// then scan), and public-inbox archives (package mailbox/pubinbox,
// registered with mailbox). Every command that reads archives (scan, resolve, index,
// and the rewrite, filter and audit to come) opens them through an
// Opener rather than with an opener of its own.
package inputs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"

	"github.com/linkscan/linkscan/mailbox"
	_ "github.com/linkscan/linkscan/mailbox/pubinbox" // public-inbox archives, detected by mailbox.Open
)

// Stdin is the name that stands for standard input.
const Stdin = "-"

// Opener opens inputs. Its zero value reads standard input from
// os.Stdin, once. Open may be called from several goroutines.
type Opener struct {
	// Stdin is standard input (nil: os.Stdin).
	Stdin io.Reader
	// Spool keeps standard input in a temporary file the first time it is
	// opened, so that each Open of "-" reads it again from the start.
	// Close removes the file.
	Spool bool
	// TempDir is where the spool goes ("": os.TempDir()).
	TempDir string

	mu       sync.Mutex
	spool    string // the temporary file, once made
	spoolErr error
	used     bool // standard input was read (without Spool)
}

func (o *Opener) stdin() io.Reader {
	if o.Stdin != nil {
		return o.Stdin
	}
	return os.Stdin
}

// ErrStdinUsed is returned when standard input is opened a second time
// without Spool: what the first reader took is gone.
var ErrStdinUsed = errors.New("inputs: standard input was read already")

// Open opens an archive: "-" is standard input (read as a stream, or from
// the spool), anything else goes to mailbox.Open.
func (o *Opener) Open(name string, opts *mailbox.Options) (*mailbox.Reader, error) {
	if name != Stdin {
		return mailbox.Open(name, opts)
	}
	f, err := o.openStdin()
	if err != nil {
		return nil, &mailbox.InputError{Path: Stdin, Offset: -1, Err: err}
	}
	r, err := mailbox.NewReader(f, Stdin, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

// OpenText opens an input to be read as plain text (no message
// structure): a file, or standard input.
func (o *Opener) OpenText(name string) (io.ReadCloser, error) {
	if name != Stdin {
		return os.Open(name)
	}
	return o.openStdin()
}

// OpenTextContent opens an input to be read as plain text (--as text):
// a file or standard input, decompressed as mailbox.Open decompresses
// (gzip, bzip2, xz and zstd, told by their magic numbers; any other
// bytes as they are). A compressed input whose start is damaged gives an
// *mailbox.InputError at once; a read or decompression error later
// (truncated data) comes from Read as an *mailbox.InputError with the
// name and the offset reached in the decompressed text. OpenText gives
// the bytes as they are.
func (o *Opener) OpenTextContent(name string) (io.ReadCloser, error) {
	r, err := o.OpenText(name)
	if err != nil {
		if name != Stdin {
			return nil, &mailbox.InputError{Path: name, Offset: -1, Err: pathErr(err)}
		}
		return nil, &mailbox.InputError{Path: Stdin, Offset: -1, Err: err}
	}
	d, _, err := mailbox.Decompress(r, name)
	if err != nil {
		r.Close()
		return nil, err
	}
	return &textReader{ReadCloser: d, file: r}, nil
}

// textReader is decompressed text over its file: Close closes both.
type textReader struct {
	io.ReadCloser
	file io.Closer
}

func (t *textReader) Close() error {
	err := t.ReadCloser.Close()
	if ferr := t.file.Close(); err == nil {
		err = ferr
	}
	return err
}

// pathErr takes the cause out of an *fs.PathError, whose path the
// InputError names.
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// openStdin returns standard input, or a new reader of its spool.
func (o *Opener) openStdin() (io.ReadCloser, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.Spool {
		if o.used {
			return nil, ErrStdinUsed
		}
		o.used = true
		return io.NopCloser(o.stdin()), nil
	}
	if o.spool == "" && o.spoolErr == nil {
		o.spool, o.spoolErr = o.makeSpool()
	}
	if o.spoolErr != nil {
		return nil, o.spoolErr
	}
	return os.Open(o.spool)
}

// makeSpool copies standard input into a temporary file.
func (o *Opener) makeSpool() (string, error) {
	f, err := os.CreateTemp(o.TempDir, "linkscan-stdin-*")
	if err != nil {
		return "", fmt.Errorf("inputs: spooling standard input: %w", err)
	}
	_, err = io.Copy(f, o.stdin())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("inputs: spooling standard input to %s: %w", f.Name(), err)
	}
	return f.Name(), nil
}

// Close removes the spool of standard input, if any.
func (o *Opener) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.spool == "" {
		return nil
	}
	err := os.Remove(o.spool)
	o.spool = ""
	return err
}
