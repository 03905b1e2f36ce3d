package mailbox

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"slices"
	"sync"
)

// A message's bytes are one slice (Message.Raw), and a slice grown by
// append as a long message is read holds its old and its new array at
// once: a 60 MB message took about three times its size. So the bytes
// of a message past spoolAfter are not kept in memory while the splitter
// looks for its end: they are held aside, and once the end is found
// (and so the size) Raw is made once at its size and filled.
//
// Held aside means: for a file that can be read again at an offset (a
// plain file, not compressed), nothing but a checksum, and the bytes are
// read again from the file; for a stream (standard input, a compressed
// file) a temporary file, written as the bytes go by and read back. When
// neither can be had (no temporary file can be made), Raw grows in
// memory as before. Past Options.MaxMessageSize, what the message keeps
// (overflow.go) is held aside the same way, as ranges of the file.
//
// The buffer of the last long message released is kept, weakly, for the
// next one (scratch.go: putLong, takeLong).

// spoolAfter is the size past which a message's bytes are held aside:
// smaller messages are read into recycled buffers (scratch.go) as they
// always were, grown as append grows them up to 64 KiB and by doubling
// from there (growTo, doubled: mbox.go). (A variable: tests lower it.)
var spoolAfter = 4 << 20

// spool holds the bytes of one long message aside; a Reader has one.
type spool struct {
	// ra, if not nil, is the file itself: lineSrc offset o is at ra
	// offset base+o.
	ra   io.ReaderAt
	base int64
	dir  string // for the temporary file ("": os.TempDir)

	tmp    *os.File // a stream's bytes, made at the first long message
	remove bool     // tmp is still to be removed (not unlinked at once)
	noTmp  bool     // a temporary file could not be made, or written
	// a stream's bytes held: the first fileN in tmp, the rest in buf
	// (a write buffer; all of them from a failed write on: memory)
	fileN int64
	buf   []byte
	wfail bool // a write to tmp failed: the rest is held in buf

	on    bool
	fills int   // messages held aside so far
	from  int64 // the lineSrc offset of the first byte held
	end   int64 // the lineSrc offset past the last byte held
	// gaps: the bytes held may skip bytes of the file (what a message
	// past its size limit keeps: overflow.go); rs are their ranges
	gaps bool
	rs   []fileRange
	n    int64  // bytes held
	sum  uint32 // their checksum (ra)

	// released are the temporary files given up by release (replayed)
	released []*tmpFile
	// onFail is Options.OnTempFileError
	onFail func(error)
}

// tmpFailed tells Options.OnTempFileError that the temporary file could
// not be made or written (once: it is not tried again).
func (sp *spool) tmpFailed(err error) {
	if sp.onFail != nil {
		sp.onFail(err)
	}
}

// castagnoli is made on first use, not at start-up (linkscan filter
// starts once per message)
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// noSpool turns holding aside off: tests compare with it.
var noSpool bool

// start begins to hold bytes aside from lineSrc offset off on; it
// reports false when they cannot be (Raw then grows in memory), or are
// held already.
func (sp *spool) start(off int64) bool {
	if sp == nil || noSpool || sp.on {
		return false
	}
	if sp.ra == nil {
		if sp.noTmp {
			return false
		}
		if sp.tmp == nil {
			f, err := os.CreateTemp(sp.dir, "linkscan-message-*")
			if err != nil {
				sp.noTmp = true
				sp.tmpFailed(err)
				return false
			}
			// unlinked at once where the system allows it, so that
			// nothing is left behind even by a killed process
			sp.tmp, sp.remove = f, os.Remove(f.Name()) != nil
		}
		if cap(sp.buf) != tmpBuf {
			sp.buf = make([]byte, 0, tmpBuf) // (grown in memory after a failed write)
		}
		sp.fileN, sp.buf, sp.wfail = 0, sp.buf[:0], false
	}
	sp.on, sp.from, sp.end, sp.n, sp.sum, sp.gaps, sp.rs = true, off, off, 0, 0, false, sp.rs[:0]
	return true
}

// fileRange is a range of lineSrc offsets.
type fileRange struct{ from, n int64 }

// startGaps is start for bytes that may skip bytes of the file between
// them, at increasing offsets.
func (sp *spool) startGaps(off int64) bool {
	if !sp.start(off) {
		return false
	}
	sp.gaps = true
	return true
}

// hold takes b, the bytes at lineSrc offset off. It reports false, taking
// nothing, when b does not follow the bytes held (unless gaps are
// allowed).
func (sp *spool) hold(b []byte, off int64) bool {
	if off != sp.end && (!sp.gaps || off < sp.end) {
		return false
	}
	if sp.ra != nil {
		sp.sum = crc32.Update(sp.sum, castagnoli(), b)
		if sp.gaps {
			if k := len(sp.rs); k > 0 && sp.rs[k-1].from+sp.rs[k-1].n == off {
				sp.rs[k-1].n += int64(len(b))
			} else {
				sp.rs = append(sp.rs, fileRange{off, int64(len(b))})
			}
		}
	} else {
		sp.write(b)
	}
	sp.n += int64(len(b))
	sp.end = off + int64(len(b))
	return true
}

// tmpBuf is the write buffer of a stream's bytes held.
const tmpBuf = 64 << 10

// write holds b, a stream's bytes, in the temporary file through buf.
// When a write fails (a full disk), what could not be written and every
// byte after it are kept in buf, in memory, as when no temporary file
// can be made: no byte held is lost, and the next long message does not
// try the file again.
func (sp *spool) write(b []byte) {
	if !sp.wfail && len(sp.buf)+len(b) > cap(sp.buf) {
		sp.flush()
	}
	sp.buf = append(sp.buf, b...)
}

// flush writes buf to the temporary file; on an error what was not
// written stays in buf, and so does everything held after it.
func (sp *spool) flush() {
	if sp.wfail || len(sp.buf) == 0 {
		return
	}
	k, err := tmpWriteAt(sp.tmp, sp.buf, sp.fileN)
	sp.fileN += int64(k)
	sp.buf = sp.buf[:copy(sp.buf, sp.buf[k:])]
	if err != nil {
		sp.wfail, sp.noTmp = true, true
		sp.tmpFailed(err)
	}
}

// tmpWriteAt writes to the temporary file (tests make it fail).
var tmpWriteAt = func(f *os.File, b []byte, off int64) (int, error) { return f.WriteAt(b, off) }

// readHeld reads the stream's bytes held, from the pos-th on, into p.
func (sp *spool) readHeld(p []byte, pos int64) error {
	if pos < sp.fileN {
		k := min(int64(len(p)), sp.fileN-pos)
		n, err := sp.tmp.ReadAt(p[:k], pos)
		if n < int(k) {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		p, pos = p[k:], pos+k
	}
	if len(p) > 0 && copy(p, sp.buf[pos-sp.fileN:]) < len(p) {
		return io.ErrUnexpectedEOF
	}
	return nil
}

// allowGaps lets the bytes held from now on skip bytes of the file.
func (sp *spool) allowGaps() {
	if sp.gaps {
		return
	}
	sp.gaps = true
	if sp.ra != nil && sp.n > 0 {
		sp.rs = append(sp.rs[:0], fileRange{sp.from, sp.n})
	}
}

// readBack reads bytes held, from the pos-th on, into p, while they are
// held; false if they cannot be read.
func (sp *spool) readBack(p []byte, pos int64) bool {
	if pos < 0 || pos+int64(len(p)) > sp.n {
		return false
	}
	if sp.ra == nil {
		return sp.readHeld(p, pos) == nil
	}
	// (called before gaps are allowed: the bytes held are one range)
	if sp.gaps {
		return false
	}
	k, err := sp.ra.ReadAt(p, sp.base+sp.from+pos)
	return k == len(p) && (err == nil || err == io.EOF)
}

// readAt reads the bytes held into p (len(p) == n) from the file.
func (sp *spool) readAt(p []byte) (int, error) {
	if !sp.gaps {
		return sp.ra.ReadAt(p, sp.base+sp.from)
	}
	got := 0
	for _, r := range sp.rs {
		k, err := sp.ra.ReadAt(p[got:got+int(r.n)], sp.base+r.from)
		got += k
		if k < int(r.n) {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return got, err
		}
	}
	return got, nil
}

// fill ends the holding: it returns raw with the bytes held appended, in
// a new buffer of that size and room for extra bytes more (raw's goes
// back to the pool). Bytes that cannot be read back are a Hole, with a
// problem, and fill returns the *InputError, which stops the reader (the
// lineSrc's error); bytes that read back changed (the file was written
// to meanwhile) are kept, with a problem.
func (l *lineSrc) fill(m *Message, raw []byte, extra int) []byte {
	out, err := l.sp.fill(m, raw, extra)
	if err != nil {
		l.err = err
	}
	return out
}

func (sp *spool) fill(m *Message, raw []byte, extra int) ([]byte, error) {
	sp.on = false
	sp.fills++
	out := takeLong(int64(len(raw)) + sp.n + int64(extra))[:len(raw)]
	copy(out, raw)
	if cap(raw) <= 4<<20 {
		rawPool.Put(m.bytes.box(raw[:0]))
	} else {
		putLong(raw) // (a message past its limit, filled twice)
	}
	at := len(out)
	out = out[:at+int(sp.n)]
	var err error
	switch {
	case sp.n == 0:
	case sp.ra != nil:
		var k int
		k, err = sp.readAt(out[at:])
		if k == len(out[at:]) {
			err = nil // (io.EOF may come with the last bytes)
		}
		if err == nil && crc32.Checksum(out[at:], castagnoli()) != sp.sum {
			m.problemErr(&InputError{Path: m.Path, Offset: sp.from, Err: errChanged}, sp.from, "", "the file changed while the message was read: the bytes from here on are as read the second time")
		}
	default:
		err = sp.readHeld(out[at:], 0)
	}
	if err != nil {
		out = out[:at]
		// the bytes held, and the holes among and after them, are one
		// hole
		lost, kept := sp.n, m.Holes[:0]
		for _, h := range m.Holes {
			if h.At > at {
				lost += h.Len
			} else {
				kept = append(kept, h)
			}
		}
		if k := len(kept); k > 0 && kept[k-1].At == at {
			kept[k-1].Len += lost // one hole with the one before
		} else {
			kept = append(kept, Hole{At: at, Len: lost})
		}
		m.Holes = kept
		ie := &InputError{Path: m.Path, Offset: sp.from, Err: spoolErr(err)}
		m.problemErr(ie, sp.from, "", "%d bytes of the message could not be read again (%v); they are left out", sp.n, ie.Err)
		sp.n = 0
		return out, ie
	}
	sp.n = 0
	return out, nil
}

var errChanged = errors.New("the file changed while it was read")

func spoolErr(err error) error {
	if err == io.EOF {
		return fmt.Errorf("the file ends sooner: %w", io.ErrUnexpectedEOF)
	}
	return err
}

// Close removes the temporary file, if one was made, and those given up
// by release and not yet read to their end.
func (sp *spool) Close() error {
	var err error
	for _, t := range sp.released {
		if e := t.Close(); err == nil {
			err = e
		}
	}
	sp.released = nil
	if sp.tmp == nil {
		return err
	}
	if e := (&tmpFile{f: sp.tmp, remove: sp.remove}).Close(); err == nil {
		err = e
	}
	sp.tmp = nil
	return err
}

// tmpFile is a temporary file given up by the spool (release).
type tmpFile struct {
	f              *os.File
	remove, closed bool // remove: it was not unlinked when made
}

// Close closes the file, and removes it if it was not unlinked when
// made; called again, it does nothing.
func (t *tmpFile) Close() error {
	if t.closed {
		return nil
	}
	t.closed = true
	err := t.f.Close()
	if t.remove {
		if e := os.Remove(t.f.Name()); err == nil {
			err = e
		}
	}
	return err
}

// release ends the holding of a stream's bytes without reading them into
// memory: it returns a reader of the n bytes held, in the temporary
// file, which the spool gives up (the next long message makes another),
// and that file, to be closed once read (Close closes it otherwise).
// Only for a stream (ra nil), held without gaps.
func (sp *spool) release() (held io.Reader, n int64, t *tmpFile, err error) {
	if sp.ra != nil || sp.gaps || !sp.on {
		return nil, 0, nil, errors.New("mailbox: nothing to release")
	}
	// the bytes in buf are copied (buf is the next message's), the
	// file's are read from it
	mem := bytes.Clone(sp.buf)
	t, n = &tmpFile{f: sp.tmp, remove: sp.remove}, sp.n
	held = io.MultiReader(io.NewSectionReader(t.f, 0, sp.fileN), bytes.NewReader(mem))
	// (the files read to their end and closed are dropped from the list)
	sp.released = slices.DeleteFunc(sp.released, func(t *tmpFile) bool { return t.closed })
	sp.released = append(sp.released, t)
	sp.tmp, sp.on, sp.n, sp.fileN, sp.buf = nil, false, 0, 0, sp.buf[:0]
	return held, n, t, nil
}

// spoolFor makes the spool of a Reader of rd: rd is read again at an
// offset if it is a plain file (or another io.ReaderAt that can say
// where it stands), else the spool uses a temporary file in dir. It must
// be called before rd is first read.
func spoolFor(rd io.Reader, dir string) *spool {
	sp := &spool{dir: dir}
	ra, ok := rd.(io.ReaderAt)
	sk, ok2 := rd.(io.Seeker)
	if !ok || !ok2 {
		return sp
	}
	if f, isFile := rd.(*os.File); isFile {
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			return sp // a pipe, a terminal: a stream
		}
	}
	if pos, err := sk.Seek(0, io.SeekCurrent); err == nil {
		sp.ra, sp.base = ra, pos
	}
	return sp
}
