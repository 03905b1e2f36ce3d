// Package writeback writes a rewritten copy of an archive file (an mbox,
// a Maildir or MH message, a single message, a news article) beside the
// original or in its place, replacing the bytes of the messages given new
// bytes and copying every other byte from the file itself.
//
// A File is the output of one input file. The caller hands it, in file
// order, the messages that changed (Replace) with their new bytes; the
// bytes before each, between them and after the last are copied from the
// input file, read a second time from the start; Flush copies the rest and
// Commit puts the new file in place. What it guarantees:
//
//   - Nothing is lost, and a kill at any moment leaves the old file whole
//     or the new one whole, never a mix. A file written to a target
//     (Create) is written to a temporary file beside the target
//     (internal/output), synced to disk and renamed over the target by
//     Commit, and its directory synced; a failure before that (a write,
//     the copy, the backup, the rename) leaves the target as it was and
//     removes the temporary file (Abort). A kill leaves at most the
//     temporary file behind, .NAME.tmp-RANDOM.
//   - Every byte but the new bytes of replaced messages comes from the
//     input file. Before a message's new bytes go out, the bytes they
//     replace are read from the file and compared with the message as the
//     reader gave it (mailbox.Message.Raw, where a file of bare-CR lines
//     reads each CR as LF); when they differ (the file changed since it
//     was read), the message is copied as the file now has it, and
//     Replace says so.
//   - In an mbox without Content-Length fields (mboxo, mboxrd), a line of
//     the new bytes that begins "From " and was not among the message's
//     lines before is quoted ">From " when the message has more such lines
//     than before: a reader would take it for the start of a message.
//   - With Options.InPlace, a file in which nothing was replaced is not
//     touched (not even its times); Options.Backup keeps the old file
//     as FILE+SUFFIX (a hard link, or else a copy) before the new one is
//     renamed over it.
//   - With Options.InPlace, Commit takes the locks of mail programs on
//     the file (a dotlock FILE.lock for an mbox, flock and fcntl; see
//     Options.LockWait, ErrLocked) and, holding them, copies what was
//     appended to the file since it was copied (mail delivered) to the
//     new file before the rename; a file made shorter, or rewritten with
//     its size kept, is left as it was (ErrChanged).
//   - A Maildir file whose name carries its size (",S=N") or Dovecot's
//     virtual size (",W=N") gets a name with the new file's sizes
//     (MaildirSized); the new name is put in place first and the old name
//     removed after, so that a kill between the two leaves the message
//     twice, under both names, never under none.
//
// A File written to a stream (NewStream: standard output) has none of the
// care of a target: its bytes go out as they are made, and an error there
// is the caller's to report.
//
// A File is used from one goroutine.
package writeback

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/linkscan/linkscan/internal/output"
	"github.com/linkscan/linkscan/mailbox"
)

// Options are the choices of a File written to a target.
type Options struct {
	// InPlace says that the target is the input file itself: Commit
	// leaves it untouched when no message was replaced.
	InPlace bool
	// Backup, with InPlace, is the suffix of the name the old file is kept
	// under (FILE+SUFFIX, beside the file a symbolic link points to),
	// made by Commit before the new file is put in place; "" for none.
	Backup string
	// Guard, if set, is called with the output file once it is created
	// (to remove its temporary file when the process is interrupted); the
	// function it returns is called when the File is done with.
	Guard func(*output.File) (stop func())
	// Wrap, if set, wraps the writer of the output file: for tests, to
	// make writes fail.
	Wrap func(io.Writer) io.Writer
	// BetweenNames, if set, is called by Commit after a renamed Maildir
	// file's new name is in place and before its old name is removed:
	// for tests that kill the process there.
	BetweenNames func()
	// LockWait, with InPlace, bounds the wait for the locks of the file
	// (a dotlock FILE.lock for an mbox, flock and fcntl): past it Commit
	// leaves the file as it was (ErrLocked). 0 is DefaultLockWait; a
	// value below a millisecond tries once.
	LockWait time.Duration
}

// File is the output of one input file.
type File struct {
	path      string   // the file read
	target    string   // the file written ("" for a stream)
	src       *os.File // the input, read a second time
	pos       int64    // of src, copied up to
	w         *bufio.Writer
	of        *output.File // nil: a stream
	changed   bool         // some message was replaced
	newSize   int64        // the change of the size, for a Maildir ,S= name
	maildir   bool         // a Maildir message of it was written anew
	vw        *vsizeWriter // counts the output, for a Maildir ,W= name
	mbox      bool         // an mbox or MMDF message of it was written anew
	inMaildir bool         // InPlace, and the file lies in a Maildir's cur/ or new/
	size0     int64        // of src when Create began
	mtime0    time.Time    // of src when Create began
	opts      Options
	stop      func() // from Options.Guard
}

// Create begins the output of the input file path, read from src (at its
// start), to a temporary file beside target; Commit puts it in place.
// src is the File's from then on, closed by Commit and Abort, and closed
// on an error too.
func Create(path string, src *os.File, target string, o *Options) (*File, error) {
	of, err := output.Create(target)
	if err != nil {
		src.Close()
		return nil, err
	}
	f := &File{path: path, target: target, src: src, of: of}
	if o != nil {
		f.opts = *o
	}
	// a Maildir file given by name is read as one message: its name's
	// sizes are still to be kept true
	f.inMaildir = f.opts.InPlace && maildirSub(filepath.Dir(of.Name()))
	if fi, err := src.Stat(); err == nil {
		f.size0, f.mtime0 = fi.Size(), fi.ModTime()
		if !f.opts.InPlace && of.TempName() != of.Name() {
			// a copy is never less private than the input (standard
			// input's spool is 0600): the mode output gave it (the old
			// target's, or 0666 less the umask) and the input's
			perm := fi.Mode().Perm()
			if tfi, err := of.File().Stat(); err == nil {
				perm &= tfi.Mode().Perm()
			}
			if err := of.File().Chmod(perm); err != nil {
				of.Abort()
				src.Close()
				return nil, err
			}
		}
	}
	if f.opts.Guard != nil {
		f.stop = f.opts.Guard(of)
	}
	var w io.Writer = of
	if f.opts.Wrap != nil {
		w = f.opts.Wrap(w)
	}
	if hasVsizeField(target) {
		f.vw = &vsizeWriter{w: w}
		w = f.vw
	}
	f.w = bufio.NewWriterSize(w, 64<<10)
	return f, nil
}

// NewStream begins the output of the input file path, read from src (at
// its start), to w (standard output). Flush flushes w; Commit only
// closes src.
func NewStream(path string, src *os.File, w *bufio.Writer) *File {
	return &File{path: path, src: src, w: w}
}

// Mirror returns the file that a copy of the file path of the input root
// mirrored under the directory dir is written to,
// dir/BASE(root)/PATH-FROM-ROOT (dir/BASE(root) for a file input), and
// makes the directories it goes in, each with the permission bits of
// the input directory it mirrors (0700 where that cannot be read). No
// symbolic link below dir is followed: a directory of the mirror that is
// a symbolic link, or a target that is one (or not a regular file), is
// an error (ErrMirrorLink), so that the mirror can never write over a
// file elsewhere (an input).
func Mirror(dir, root, path string) (string, error) {
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == "." {
		rel = ""
	}
	base := filepath.Base(filepath.Clean(root))
	target := filepath.Join(dir, base, rel)
	// the directories from dir/BASE(root) down to the target's
	var subs []string
	if rel != "" {
		subs = append(subs, base)
		if d := filepath.Dir(rel); d != "." {
			subs = append(subs, strings.Split(d, string(filepath.Separator))...)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	out, in := dir, filepath.Dir(filepath.Clean(root))
	for _, s := range subs {
		out, in = filepath.Join(out, s), filepath.Join(in, s)
		fi, err := os.Lstat(out)
		if err == nil {
			if !fi.IsDir() {
				return "", fmt.Errorf("%w: %s", ErrMirrorLink, out)
			}
			continue
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		perm := fs.FileMode(0o700)
		if ifi, err := os.Stat(in); err == nil && ifi.IsDir() {
			perm = ifi.Mode().Perm()
		}
		if err := os.Mkdir(out, perm|0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", err
		}
		os.Chmod(out, perm|0o700) // not narrowed by the umask, not wider than the input's
	}
	if fi, err := os.Lstat(target); err == nil && !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%w: %s", ErrMirrorLink, target)
	}
	return target, nil
}

// ErrMirrorLink is Mirror's error for a symbolic link (or another file
// that is not a directory or regular file) where the mirror puts a
// directory or a file: it is not followed nor replaced.
var ErrMirrorLink = errors.New("a symbolic link or special file in the output directory is not followed nor replaced")

// ErrMirrorOverlap is CheckMirror's error.
var ErrMirrorOverlap = errors.New("the output directory may not be an input, inside one, or hold one")

// CheckMirror refuses (ErrMirrorOverlap) a mirror directory dir that is
// one of the inputs paths, lies inside one or holds one: the mirror
// would be read as input while it is written, or be written over the
// inputs. Paths are compared as absolute paths, both as written and
// with their symbolic links resolved (for a path that does not exist
// yet, those of its longest existing parent).
func CheckMirror(dir string, paths []string) error {
	o, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	ro := resolved(o)
	for _, p := range paths {
		d, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		rd := resolved(d)
		for _, pair := range [][2]string{{o, d}, {ro, rd}, {o, rd}, {ro, d}} {
			if overlap(pair[0], pair[1]) {
				return ErrMirrorOverlap
			}
		}
	}
	return nil
}

// overlap reports whether the absolute paths a and b are the same or
// one lies inside the other.
func overlap(a, b string) bool {
	return a == b || strings.HasPrefix(a+"/", b+"/") || strings.HasPrefix(b+"/", a+"/") || a == "/" || b == "/"
}

// resolved is the absolute path p with the symbolic links of its
// longest existing part resolved.
func resolved(p string) string {
	rest := ""
	for q := p; ; {
		if r, err := filepath.EvalSymlinks(q); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(q)
		if parent == q {
			return p
		}
		rest = filepath.Join(filepath.Base(q), rest)
		q = parent
	}
}

// MirrorMaildir makes, in the mirror of the input directory root under
// dir (as Mirror lays it out), the cur/, new/ and tmp/ of every Maildir
// in root (root itself and the folders below it, Maildir++ .Sub
// folders included), as many of the three as the input has: a mirrored
// Maildir gets its directories even when they are empty (readers take a
// directory without them for no Maildir, and an empty folder would
// vanish). The messages' directories cur/, new/ and tmp/ are not
// descended into, nor symbolic links followed. A directory that cannot
// be made is left out, as one with no messages.
func MirrorMaildir(dir, root string) {
	var walk func(d string, depth int)
	walk = func(d string, depth int) {
		ents, err := os.ReadDir(d)
		if err != nil || depth > 64 {
			return
		}
		has := map[string]bool{}
		for _, e := range ents {
			if e.IsDir() && (e.Name() == "cur" || e.Name() == "new" || e.Name() == "tmp") {
				has[e.Name()] = true
			}
		}
		if has["cur"] && (has["new"] || has["tmp"]) || d == root && len(has) > 0 {
			for _, sub := range []string{"cur", "new", "tmp"} {
				if has[sub] {
					// made as Mirror makes directories (modes, no
					// links followed)
					Mirror(dir, root, filepath.Join(d, sub, "x"))
				}
			}
		}
		for _, e := range ents {
			if e.IsDir() && e.Name() != "cur" && e.Name() != "new" && e.Name() != "tmp" {
				walk(filepath.Join(d, e.Name()), depth+1)
			}
		}
	}
	walk(root, 0)
}

// Target is the file written, as given to Create; "" for a stream.
func (f *File) Target() string { return f.target }

// Name is the file Commit replaces: the target with its symbolic links
// resolved; "" for a stream.
func (f *File) Name() string {
	if f.of == nil {
		return ""
	}
	return f.of.Name()
}

// scratch holds the buffers Replace reads the old bytes through.
var scratch = sync.Pool{New: func() any { return new([64 << 10]byte) }}

// Replace writes out the bytes of the file up to message m, then out in
// place of m's bytes (m.Raw, at m.RawOffset). Messages are given in file
// order; m is whole (no Holes) and its header parsed (an mbox message's
// Content-Length decides its From quoting).
//
// differs reports that the file's bytes at m are not m.Raw (the file
// changed since it was read): they are copied as the file has them, and
// out is not written. An error is a failure of the output or of reading
// the file (with differs, of copying those bytes): the File must be
// aborted, or for a stream the error reported.
func (f *File) Replace(m *mailbox.Message, out []byte) (differs bool, err error) {
	if m.Format == mailbox.FormatMbox && !hasContentLength(m) {
		out = QuoteNewFromLines(m.Raw, out)
	}
	if err := f.copyTo(m.RawOffset); err != nil {
		return false, err
	}
	n := len(m.Raw)
	buf := scratch.Get().(*[64 << 10]byte)
	same, err := sameInFile(f.src, m.Raw, m.BareCR(), buf[:])
	scratch.Put(buf)
	if err != nil {
		return false, fmt.Errorf("reading %s again: %w", m.Path, err)
	}
	if !same {
		// the message goes out as the file has it
		if _, err := f.src.Seek(f.pos, io.SeekStart); err != nil {
			return true, err
		}
		return true, f.copyTo(f.pos + int64(n))
	}
	f.pos += int64(n)
	if m.Format == mailbox.FormatMaildir || f.inMaildir {
		f.newSize += int64(len(out)) - int64(n)
		f.maildir = true
	}
	if m.Format == mailbox.FormatMbox || m.Format == mailbox.FormatMMDF {
		f.mbox = true
	}
	f.changed = true
	_, err = f.w.Write(out)
	return false, err
}

// copyTo copies the file's bytes up to offset off.
func (f *File) copyTo(off int64) error {
	if off < f.pos {
		return fmt.Errorf("%s: messages out of order (%d after %d)", f.path, off, f.pos)
	}
	n, err := io.CopyN(f.w, f.src, off-f.pos)
	f.pos += n
	if err == io.EOF {
		err = fmt.Errorf("%s: shorter than read (changed meanwhile?)", f.path)
	}
	return err
}

// Flush copies the rest of the input file and flushes the output. An
// error is a failure of the output or of reading the file: the File must
// be aborted (a stream's error reported).
func (f *File) Flush() error {
	n, err := io.Copy(f.w, f.src)
	f.pos += n
	if err != nil {
		return err
	}
	return f.w.Flush()
}

// Result is what Commit did.
type Result struct {
	// Name is the file the output was put in place as: the target, or
	// for a Maildir file whose name carries its size, the name with the
	// new sizes (MaildirSized). "" for a stream, or when nothing was done
	// (Untouched).
	Name string
	// Untouched: InPlace, and no message was replaced; the file is as it
	// was.
	Untouched bool
	// SizesKept: the file's Maildir name holds ,S= or ,W= fields that
	// MaildirSized refuses (not a number, written twice, S= below zero):
	// the new file keeps the name as it was.
	SizesKept bool
}

// BackupError is Commit's error when the backup of Options.Backup could
// not be made; the file is left as it was.
type BackupError struct{ Err error }

func (e *BackupError) Error() string { return "backup: " + e.Err.Error() }
func (e *BackupError) Unwrap() error { return e.Err }

// Commit puts the output, flushed, in place of the target: the backup
// first (Options.Backup), then the output file renamed over the target
// (or, for a Maildir name with sizes, put in place under its new name
// and the old name removed). On an error (*BackupError, or of putting
// the file in place, Result.Name saying which name) the target is as it
// was, the temporary file removed. Commit releases the File: the source
// is closed. For a stream it only closes the source.
func (f *File) Commit() (Result, error) {
	defer f.Abort() // after the rename: closes the source only
	if f.of == nil {
		return Result{}, nil
	}
	if f.opts.InPlace && !f.changed {
		return Result{Untouched: true}, nil // Abort removes the copy
	}
	if f.opts.InPlace {
		// the locks of mail programs, held until after the rename
		unlock, err := f.lock()
		if err != nil {
			return Result{Name: f.target}, err
		}
		defer unlock()
		if err := f.catchUp(); err != nil {
			return Result{Name: f.target}, err
		}
		if err := f.stillThere(); err != nil {
			return Result{Name: f.target}, err
		}
		// the new file is the user's, as the old one was, where the
		// process may (root rewriting a user's mailbox)
		if fi, err := f.src.Stat(); err == nil {
			output.KeepOwner(f.of.File(), fi)
		}
	}
	if f.opts.Backup != "" {
		// beside the file itself: a symbolic link is followed, as the
		// rename of Commit follows it
		real := f.of.Name()
		b := real + f.opts.Backup
		if maildirSub(filepath.Dir(real)) {
			// (a symbolic link into a Maildir): every reader would
			// take FILE+SUFFIX for a second copy of the message
			return Result{}, &BackupError{fmt.Errorf("%s lies in a Maildir: no backup is made there", real)}
		}
		// a file already there is not ours (an older backup, another
		// input, another message of the folder): never removed or
		// written over
		if _, err := os.Lstat(b); err == nil {
			return Result{}, &BackupError{fmt.Errorf("%s exists already (an older backup, or another file); it is not replaced", b)}
		}
		if err := os.Link(real, b); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return Result{}, &BackupError{fmt.Errorf("%s exists already (an older backup, or another file); it is not replaced", b)}
			}
			if err := copyNew(real, b); err != nil {
				return Result{}, &BackupError{err}
			}
		}
	}
	res := Result{Name: f.target}
	if f.maildir {
		vsize := int64(-1)
		if f.vw != nil {
			vsize = f.vw.vsize()
		}
		var ok bool
		res.Name, ok = MaildirSized(f.target, f.newSize, vsize)
		res.SizesKept = !ok
	}
	if res.Name == f.target {
		return res, f.of.Commit()
	}
	// the file renamed is the file itself, beside itself: a symbolic
	// link (a search folder's) is left pointing to the new name
	real := f.of.Name()
	newReal := res.Name
	if real != f.target {
		newReal, _ = MaildirSized(real, f.newSize, f.vsizeOrNone())
		if newReal == real {
			return res, f.of.Commit()
		}
	}
	err := f.of.Keep(newReal) // the new name first, then the old removed
	if err == nil && f.opts.BetweenNames != nil {
		f.opts.BetweenNames()
	}
	if err == nil {
		old := f.target
		if real != f.target {
			old = real
		}
		if err = os.Remove(old); errors.Is(err, os.ErrNotExist) {
			err = nil
		}
	}
	if err == nil && real != f.target {
		res.Name = newReal
		if l, lerr := os.Readlink(f.target); lerr == nil {
			// the link retargeted (a temporary link renamed over it)
			nl := filepath.Join(filepath.Dir(l), filepath.Base(newReal))
			if !filepath.IsAbs(l) && filepath.Dir(l) == "." {
				nl = filepath.Base(newReal)
			}
			tmp := f.target + ".linkscan-tmp"
			if os.Symlink(nl, tmp) == nil {
				if os.Rename(tmp, f.target) != nil {
					os.Remove(tmp)
				}
			}
		}
	}
	return res, err
}

// vsizeOrNone is the output's virtual size, -1 when not counted.
func (f *File) vsizeOrNone() int64 {
	if f.vw != nil {
		return f.vw.vsize()
	}
	return -1
}

// Abort gives the output up: the temporary file is removed, the target
// left as it was, the source closed. After Commit it does nothing more;
// it may be called more than once.
func (f *File) Abort() {
	if f.src != nil {
		f.src.Close()
		f.src = nil
	}
	if f.of != nil {
		f.of.Abort()
	}
	if f.stop != nil {
		f.stop()
		f.stop = nil
	}
}

// copyNew copies the file from to the file to, with the care of
// internal/output, which must not exist: one made meanwhile is not
// replaced (the temporary file is linked to the name, not renamed).
func copyNew(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.CreateTemp(filepath.Dir(to), "."+filepath.Base(to)+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(out.Name())
	defer out.Close()
	if fi, err := in.Stat(); err == nil {
		out.Chmod(fi.Mode().Perm())
	}
	if _, err := io.Copy(out, in); err != nil {
		return err
	}
	if err := out.Sync(); err != nil {
		return err
	}
	err = os.Link(out.Name(), to)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		// no hard links here: renamed, if the name is still free
		if _, lerr := os.Lstat(to); lerr == nil {
			return fmt.Errorf("%s exists already; it is not replaced", to)
		}
		err = os.Rename(out.Name(), to)
	}
	return err
}

// sameInFile reads len(raw) bytes of f, through buf, and reports whether
// they are raw as a reader gave it (in a file of bare CR lines each CR
// reads as LF). It reads them all even when they differ early.
func sameInFile(f io.Reader, raw []byte, bareCR bool, buf []byte) (bool, error) {
	same := true
	for len(raw) > 0 {
		b := buf[:min(len(buf), len(raw))]
		if _, err := io.ReadFull(f, b); err != nil {
			if err == io.ErrUnexpectedEOF || err == io.EOF {
				err = errors.New("shorter than read (changed meanwhile?)")
			}
			return false, err
		}
		same = same && sameAsRaw(b, raw[:len(b)], bareCR)
		raw = raw[len(b):]
	}
	return same, nil
}

// sameAsRaw reports whether file bytes b are raw as a reader gave it (in
// a file of bare CR lines each CR reads as LF).
func sameAsRaw(b, raw []byte, bareCR bool) bool {
	if !bareCR {
		return bytes.Equal(b, raw)
	}
	if len(b) != len(raw) {
		return false
	}
	for i := range b {
		c := b[i]
		if c == '\r' {
			c = '\n'
		}
		if c != raw[i] {
			return false
		}
	}
	return true
}

// hasContentLength reports whether the message's header has a
// Content-Length field (mboxcl, mboxcl2: no From quoting there).
func hasContentLength(m *mailbox.Message) bool {
	return m.Header.Get("Content-Length") != ""
}

// QuoteNewFromLines quotes (">From ") the lines of out that begin with
// "From " and are not among old's lines, when out has more such lines
// than old: an mbox reader would take a new one for the start of a
// message. With as many as old, out is returned as it is (a link changed
// inside such a line leaves it unquoted, as the file had it). The splicer
// of package rewrite writes link text only, so this does not happen with
// the rules of today; it is a safety net. out is returned when nothing is
// quoted; else a new slice.
func QuoteNewFromLines(old, out []byte) []byte {
	if !bytes.Contains(out, []byte("\nFrom ")) && !bytes.HasPrefix(out, []byte("From ")) {
		return out
	}
	had := map[string]int{}
	nOld, nOut := 0, 0
	forEachLine(old, func(l []byte) {
		if bytes.HasPrefix(l, []byte("From ")) {
			had[string(l)]++
			nOld++
		}
	})
	forEachLine(out, func(l []byte) {
		if bytes.HasPrefix(l, []byte("From ")) {
			nOut++
		}
	})
	if nOut <= nOld {
		// as many as before: the same lines, a link in one of them
		// perhaps changed (the splicer edits within lines)
		return out
	}
	var b []byte
	last := 0
	pos := 0
	forEachLine(out, func(l []byte) {
		start := pos
		pos += len(l)
		if !bytes.HasPrefix(l, []byte("From ")) {
			return
		}
		if had[string(l)] > 0 {
			had[string(l)]--
			return
		}
		b = append(b, out[last:start]...)
		b = append(b, '>')
		last = start
	})
	if b == nil {
		return out
	}
	return append(b, out[last:]...)
}

// forEachLine calls f with each line of b, its line ending included.
func forEachLine(b []byte, f func(l []byte)) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			f(b)
			return
		}
		f(b[:i+1])
		b = b[i+1:]
	}
}

// Dovecot's Maildir names (doc.dovecot.org/2.3/admin_manual/
// mailbox_formats/maildir, "Maildir filename extensions"; checked against
// doveadm by cmd/linkscan's TestRewriteMaildirDovecot): fields read from
// the base filename, the part before ":2,": ",S=<size>" is the file size,
// ",W=<vsize>" the file's RFC822.SIZE, the size with every line feed a CR
// LF pair (equal to S= for a message stored with CR LF line endings).
// Example: 1035478339.27041_118.foo.org,S=1000,W=1030:2,S

// maildirBase returns the part of a Maildir file name base that holds
// its fields: up to the ':' of its info (":2,FLAGS"), if any.
func maildirBase(base string) string {
	if i := strings.IndexByte(base, ':'); i >= 0 {
		return base[:i]
	}
	return base
}

// hasVsizeField reports whether the file name path carries a ,W= field.
func hasVsizeField(path string) bool {
	return strings.Contains(maildirBase(filepath.Base(path)), ",W=")
}

// MaildirSized returns name with its Maildir size fields made the new
// file's: ,S=SIZE grown by delta, and ,W=VSIZE set to vsize (when vsize
// >= 0; Commit counts it from the bytes written). Every other byte of the
// name stays. ok is false, and name is returned as it is, when a size
// field is not a number (digits only), a field is there twice, or the
// new S= would be below zero: such a name is not one whose fields can be
// trusted to describe this file.
func MaildirSized(name string, delta, vsize int64) (newName string, ok bool) {
	dir, base := filepath.Split(name)
	fields := maildirBase(base)
	var out strings.Builder
	seenS, seenW := false, false
	first := true
	for f := range strings.SplitSeq(fields, ",") {
		if !first {
			out.WriteByte(',')
		}
		isFirst := first
		first = false
		key, val, isSize := "", "", false
		if !isFirst && len(f) >= 2 && f[1] == '=' && (f[0] == 'S' || f[0] == 'W') {
			key, val, isSize = f[:2], f[2:], true
		}
		if !isSize {
			out.WriteString(f)
			continue
		}
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil || val == "" || val[0] < '0' || val[0] > '9' {
			return name, false // not a number (ParseInt takes a sign)
		}
		m := n
		switch key {
		case "S=":
			if seenS || n+delta < 0 {
				return name, false
			}
			seenS = true
			m += delta
		case "W=":
			if seenW {
				return name, false
			}
			seenW = true
			if vsize >= 0 {
				m = vsize
			}
		}
		out.WriteString(key)
		if m == n {
			out.WriteString(val) // as written (leading zeros too)
		} else {
			out.WriteString(strconv.FormatInt(m, 10))
		}
	}
	if out.String() == fields {
		return name, true
	}
	return dir + out.String() + base[len(fields):], true
}

// vsizeWriter passes bytes on to w and counts them for a Maildir name's
// ,W= (Dovecot's virtual size): the bytes written, plus one for each line
// feed not preceded by a carriage return. It holds no bytes, only counts.
type vsizeWriter struct {
	w      io.Writer
	n      int64 // bytes written
	bareLF int64 // of them, line feeds with no CR before them
	lastCR bool  // the last byte written was a CR
}

func (v *vsizeWriter) Write(p []byte) (int, error) {
	n, err := v.w.Write(p)
	if n > 0 {
		b := p[:n]
		if lf := bytes.Count(b, []byte{'\n'}); lf > 0 {
			crlf := bytes.Count(b, []byte("\r\n"))
			if v.lastCR && b[0] == '\n' {
				crlf++ // a CR LF pair across two writes
			}
			v.bareLF += int64(lf - crlf)
		}
		v.lastCR = b[n-1] == '\r'
		v.n += int64(n)
	}
	return n, err
}

// vsize is the virtual size of what was written.
func (v *vsizeWriter) vsize() int64 { return v.n + v.bareLF }

// MaildirIn returns a Maildir directory (its cur/ or new/) that the
// input path is, holds or lies in, "" if none. A backup FILE+SUFFIX
// (Options.Backup) must not be made there: every Maildir reader
// (Dovecot, mutt, notmuch, linkscan) takes each file in cur/ and new/
// as a message, and would show it as a second copy of the message. (An
// MH folder or news spool is fine: only numeric names are messages
// there, and FILE+SUFFIX is not numeric.) A path that cannot be read is
// in none.
func MaildirIn(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	if !fi.IsDir() {
		if d := filepath.Dir(filepath.Clean(path)); maildirSub(d) {
			return d
		}
		return ""
	}
	if maildirSub(filepath.Clean(path)) {
		return filepath.Clean(path)
	}
	found := ""
	filepath.WalkDir(path, func(p string, de fs.DirEntry, err error) error {
		if err != nil || !de.IsDir() {
			return nil
		}
		if maildirSub(p) {
			found = p
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// maildirSub reports whether dir is the cur/ or new/ of a Maildir: so
// named, beside another of cur/, new/ and tmp/.
func maildirSub(dir string) bool {
	base := filepath.Base(dir)
	if base != "cur" && base != "new" {
		return false
	}
	parent := filepath.Dir(dir)
	for _, sib := range []string{"cur", "new", "tmp"} {
		if sib == base {
			continue
		}
		if fi, err := os.Stat(filepath.Join(parent, sib)); err == nil && fi.IsDir() {
			return true
		}
	}
	return false
}

// MaildirTmp returns the Maildir tmp/ directory that the input path is
// or lies in (symbolic links resolved), "" if none: a tmp/ beside a cur/
// or new/. Files there are messages being delivered, still written by
// the MDA through its open descriptor: a rewrite must never replace one
// (the rest of the message would go to the old file) nor read one as a
// whole message.
func MaildirTmp(path string) string {
	p := path
	if r, err := filepath.EvalSymlinks(path); err == nil {
		p = r
	}
	p = filepath.Clean(p)
	for _, d := range []string{p, filepath.Dir(p)} {
		if filepath.Base(d) != "tmp" {
			continue
		}
		parent := filepath.Dir(d)
		for _, sib := range []string{"cur", "new"} {
			if fi, err := os.Stat(filepath.Join(parent, sib)); err == nil && fi.IsDir() {
				return d
			}
		}
	}
	return ""
}

// EmptyMaildirSub reports whether dir is a Maildir's cur/ or new/ that
// was read and holds nothing (no file but dot files): no messages, yet
// not unreadable.
func EmptyMaildirSub(dir string) bool {
	if !maildirSub(filepath.Clean(dir)) {
		return false
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") {
			return false
		}
	}
	return true
}
