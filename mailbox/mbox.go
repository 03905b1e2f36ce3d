package mailbox

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// lineSrc reads lines with their endings and knows the file offset of
// each. It can take bytes back (unread), which the Content-Length check
// needs.
type lineSrc struct {
	br      *bufio.Reader
	pend    []byte
	off     int64 // file offset of the next byte
	eol     byte
	atStart bool // the next byte starts a line
	err     error
	// sizeHint, if not 0, is the size of the file being read (not
	// compressed), for readN's first buffer
	sizeHint int64
	// sp holds the bytes of a long message aside (spool.go); nil: none
	sp *spool
	// joined holds a line begun in pend and ended in br (line)
	joined []byte
	// noFill makes readN leave the bytes it held aside in the spool
	// (spoolN), for the caller to fill or to replay (a Content-Length
	// body of a stream that may not land: mboxSrc.readBody)
	noFill bool
	// replays are the readers of bytes given back by replay under br,
	// the last one outermost (see replay)
	replays []*replayReader
}

func newLineSrc(r io.Reader, off int64, eol byte) *lineSrc {
	return &lineSrc{br: bufio.NewReaderSize(r, 64<<10), off: off, eol: eol, atStart: true}
}

// line returns the next line with its ending, or a piece of a line longer
// than the buffer; start tells whether it begins a line. The bytes are
// valid until the next call.
func (l *lineSrc) line() (b []byte, off int64, start bool, err error) {
	start, off = l.atStart, l.off
	if cap(l.joined) > 64<<10 {
		l.joined = nil // (a long line joined once is not kept)
	}
	if len(l.pend) > 0 {
		i := bytes.IndexByte(l.pend, l.eol)
		switch {
		case i >= 0:
			b, l.pend = l.pend[:i+1], l.pend[i+1:]
			l.atStart = true
		case l.err == nil && (mayStartFrom(l.pend) || len(l.pend) < l.br.Size()):
			// the line goes on past the bytes pushed back (a
			// Content-Length that ends inside a line): its rest is
			// joined to them, so that a "From " line cut there is still
			// seen whole, and a line that the read buffer holds comes
			// in one piece as it does when nothing was pushed back
			// (overflow decides a line that crosses MaxMessageSize
			// whole, and a piece of it kept before the limit would be
			// kept where the line read whole is left out)
			rest, err := l.br.ReadSlice(l.eol)
			if need := len(l.pend) + len(rest); cap(l.joined) < need {
				l.joined = make([]byte, 0, need) // once, not grown by append twice
			}
			l.joined = append(append(l.joined[:0], l.pend...), rest...)
			b, l.pend = l.joined, nil
			switch {
			case err == nil:
				l.atStart = true
			case err == bufio.ErrBufferFull:
				l.atStart = false
			default:
				l.err, l.atStart = err, false
			}
		default:
			b, l.pend = l.pend, nil
			l.atStart = false
		}
		l.off += int64(len(b))
		return b, off, start, nil
	}
	if l.err != nil {
		return nil, off, start, l.err
	}
	b, err = l.br.ReadSlice(l.eol)
	switch {
	case err == bufio.ErrBufferFull:
		err = nil
		l.atStart = false
	case err != nil:
		l.err = err
		l.atStart = false
		if len(b) > 0 {
			err = nil
		}
	default:
		l.atStart = true
	}
	l.off += int64(len(b))
	return b, off, start, err
}

// mayStartFrom reports whether p, pushed-back bytes without a line ending
// of the file's kind, may hold the start of a "From " line that the rest
// of the line completes: p starts like one, or holds a CR (a message of
// bare CR lines, see mboxSrc.line). Other bytes (a long line of base64 or
// binary) longer than the read buffer are returned alone, not copied to
// be joined with the rest.
func mayStartFrom(p []byte) bool {
	n := min(len(p), len(fromCRLF))
	return bytes.Equal(p[:n], fromCRLF[:n]) || bytes.IndexByte(p, '\r') >= 0
}

// unread puts b back in front of what is still to be read.
func (l *lineSrc) unread(b []byte, atStart bool) {
	l.pend = append(append([]byte{}, b...), l.pend...)
	l.off -= int64(len(b))
	l.atStart = atStart
}

// readN appends the next n bytes to dst, or as many as there are; with
// dst nil it makes the buffer (of the file's size when that is known).
// When the bytes outgrow spoolAfter, the rest is held aside (spool.go)
// and the whole read into one buffer of its size, with room for two
// bytes more (the blank line after a Content-Length body), instead of
// growing in copies.
func (l *lineSrc) readN(m *Message, dst []byte, n int64) []byte {
	out := dst
	exact := false // out has room for the whole file
	if out == nil {
		size := min(n, 1<<20)
		if l.sizeHint > 0 {
			size = min(n, l.sizeHint+1) // the whole file at once, not grown in copies
			exact = true
		}
		out = make([]byte, 0, size)
	}
	end := int64(len(out)) + n // out's length once n bytes are in
	got := int64(0)
	for int64(len(out)) < end {
		if len(l.pend) > 0 {
			k := min(int64(len(l.pend)), end-int64(len(out)))
			out = append(out, l.pend[:k]...)
			l.pend = l.pend[k:]
			got += k
			continue
		}
		if l.err != nil {
			break
		}
		// read into out's own room (up to spoolAfter, unless it was made
		// for the whole file), doubled up to spoolAfter
		room := cap(out)
		if !exact && room > spoolAfter {
			room = max(spoolAfter, len(out))
		}
		if len(out) == room {
			rest := end - int64(len(out))
			if len(out) >= spoolAfter && l.sp.start(l.off+got) {
				var k int64
				out, k = l.spoolN(m, out, rest)
				got += k
				break
			}
			if len(out) == cap(out) {
				if len(out) < spoolAfter {
					out = growTo(out, int(min(int64(len(out))+rest, int64(doubled(cap(out), 64<<10)))))
				} else {
					out = slices.Grow(out, int(min(rest, 64<<10))) // no spool: grown as append grows
				}
			}
			room = cap(out)
		}
		k, err := l.br.Read(out[len(out):min(int64(room), end)])
		out = out[:len(out)+k]
		got += int64(k)
		if err != nil {
			l.err = err
		}
	}
	l.off += got
	if l.sp != nil && l.sp.on && l.noFill {
		// (the last bytes are in the spool: spoolN set atStart)
	} else if got > 0 && len(out) > 0 {
		l.atStart = out[len(out)-1] == l.eol
	}
	return out
}

// doubled is the capacity a buffer of capacity c that must hold need
// bytes (need <= spoolAfter) grows to: doubled, but spoolAfter when that is
// less than twice as much, so that growing to spoolAfter costs about
// spoolAfter in all.
func doubled(c, need int) int {
	n := max(need, 2*c)
	if 2*n > spoolAfter {
		n = spoolAfter
	}
	return n
}

// growTo returns b in a buffer of capacity n (not more, as append's
// growth would give: a buffer of spoolAfter must stay within the pool's
// largest class, scratch.go).
func growTo(b []byte, n int) []byte {
	nb := make([]byte, len(b), n)
	copy(nb, b)
	return nb
}

// spoolN reads up to n bytes more through the spool, which has begun,
// and returns out with them appended (in a new buffer) and how many were
// read.
func (l *lineSrc) spoolN(m *Message, out []byte, n int64) ([]byte, int64) {
	got := int64(0)
	for got < n {
		if l.br.Buffered() == 0 {
			if _, err := l.br.Peek(1); err != nil {
				l.err = err
				break
			}
		}
		p, _ := l.br.Peek(int(min(int64(l.br.Buffered()), n-got)))
		l.sp.hold(p, l.sp.end)
		l.atStart = p[len(p)-1] == l.eol
		l.br.Discard(len(p))
		got += int64(len(p))
	}
	if l.noFill {
		return out, got // held: the caller fills or replays
	}
	return l.fill(m, out, 2), got
}

// replayReader gives the bytes of a stream held aside in the spool's
// temporary file (held, perhaps with the stream's read error after
// them) again, then what was to be read after them (next).
type replayReader struct {
	held io.Reader
	tmp  *tmpFile // the temporary file held is in, closed once read
	done bool
	next *bufio.Reader
}

func (r *replayReader) Read(p []byte) (int, error) {
	if !r.done {
		n, err := r.held.Read(p)
		if err == io.EOF {
			r.done, err = true, nil
			r.tmp.Close()
		}
		if n > 0 || err != nil {
			return n, err
		}
	}
	return r.next.Read(p)
}

// replay gives back the bytes of a stream just read: head (in memory),
// then the bytes the spool holds (in its temporary file, which the spool
// gives up: spool.release), to be read again before what follows them;
// it is unread for bytes that are not all in memory. The bytes held are
// never read into memory whole: a Content-Length up to the message size
// limit that does not land on a separator costs a read buffer, not its
// size twice. It reports false when the spool's bytes cannot be had
// (its temporary file failed): nothing is given back then.
func (l *lineSrc) replay(head []byte) bool {
	held, n, tmp, err := l.sp.release()
	if err != nil {
		return false
	}
	if l.err != nil && l.err != io.EOF {
		held = io.MultiReader(held, &errReader{l.err}) // the stream failed after them
	}
	l.err = nil // (at the end of the stream, it says so again)
	l.replays = append(l.replays, &replayReader{held: held, tmp: tmp, next: l.br})
	l.br = bufio.NewReaderSize(l.replays[len(l.replays)-1], 64<<10)
	l.pend = append(append([]byte{}, head...), l.pend...)
	l.off -= int64(len(head)) + n
	l.atStart = true
	return true
}

// unstack drops the replay readers whose bytes have all been read, so
// that reading goes on from the reader under them without a copy more.
func (l *lineSrc) unstack() {
	for k := len(l.replays); k > 0; k-- {
		r := l.replays[k-1]
		if !r.done || l.br.Buffered() > 0 {
			return
		}
		l.br, l.replays = r.next, l.replays[:k-1]
	}
}

// errReader returns its error on every Read.
type errReader struct{ err error }

func (e *errReader) Read([]byte) (int, error) { return 0, e.err }

// peek returns up to n bytes ahead without consuming them.
func (l *lineSrc) peek(n int) []byte {
	if len(l.pend) >= n {
		return l.pend[:n]
	}
	p, _ := l.br.Peek(n - len(l.pend))
	return append(append([]byte{}, l.pend...), p...)
}

// ---- separator lines ----

var fromCRLF = []byte("From ")

// hasDate reports whether the rest of a From line carries a ctime(3)-like
// date ("Thu Mar 24 02:31:00 1994", also with a zone or without seconds):
// a time hh:mm[:ss] and a four-digit year among the words.
func hasDate(rest []byte) bool {
	clock, year := false, false
	for i := 0; i < len(rest) && !(clock && year); {
		if rest[i] == ' ' || rest[i] == '\t' {
			i++
			continue
		}
		j := i
		for j < len(rest) && rest[j] != ' ' && rest[j] != '\t' {
			j++
		}
		f := rest[i:j]
		switch {
		case isClock(f):
			clock = true
		case len(f) == 4 && (f[0] == '1' || f[0] == '2') && isDigits(f):
			year = true
		}
		i = j
	}
	return clock && year
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// isClock matches h:mm, hh:mm and hh:mm:ss.
func isClock(f []byte) bool {
	d := func(b byte) bool { return b >= '0' && b <= '9' }
	switch len(f) {
	case 4: // h:mm
		return d(f[0]) && f[1] == ':' && d(f[2]) && d(f[3])
	case 5: // hh:mm
		return d(f[0]) && d(f[1]) && f[2] == ':' && d(f[3]) && d(f[4])
	case 7: // h:mm:ss
		return d(f[0]) && f[1] == ':' && d(f[2]) && d(f[3]) && f[4] == ':' && d(f[5]) && d(f[6])
	case 8: // hh:mm:ss
		return d(f[0]) && d(f[1]) && f[2] == ':' && d(f[3]) && d(f[4]) && f[5] == ':' && d(f[6]) && d(f[7])
	}
	return false
}

// isFromLine reports whether line can separate messages in an mbox.
// After a blank line (or at the start) a loose form is enough: "From "
// and a sender ("-", "???@???", an address, MAILER-DAEMON) or a date.
// Elsewhere, as in files written without blank lines before "From ", the
// line must carry a ctime-like date or be Netscape's "From - ", and
// mboxSrc.isSep also wants a header block after it, so that an unescaped
// "From the desk of" in a body does not split it.
func isFromLine(line []byte, afterBlank bool) bool {
	if !bytes.HasPrefix(line, fromCRLF) {
		return false
	}
	rest := bytes.TrimSpace(line[5:])
	if len(rest) == 0 {
		return false
	}
	sender := rest
	if i := bytes.IndexByte(rest, ' '); i >= 0 {
		sender = rest[:i]
	}
	if !afterBlank {
		return hasDate(rest) || string(sender) == "-"
	}
	return string(sender) == "-" || bytes.IndexByte(sender, '@') > 0 ||
		bytes.EqualFold(sender, []byte("MAILER-DAEMON")) || bytes.Contains(sender, []byte("???")) ||
		hasDate(rest)
}

// fullFromLine reports whether line has the whole From_ form mail
// delivery writes: "From ", a sender, and a ctime(3) date after it that
// starts with a day name ("From a@b Thu Mar 24 02:31:00 1994").
func fullFromLine(line []byte) bool {
	if !bytes.HasPrefix(line, fromCRLF) {
		return false
	}
	rest := bytes.TrimSpace(line[5:])
	i := bytes.IndexAny(rest, " \t")
	if i <= 0 {
		return false // no sender, or nothing after it
	}
	rest = bytes.TrimLeft(rest[i:], " \t")
	return len(rest) > 3 && isDayName(string(rest[:3])) && (len(rest) == 3 || rest[3] == ' ' || rest[3] == '\t') && hasDate(rest)
}

var mmdfSep = []byte("\x01\x01\x01\x01")

func isBlank(line []byte) bool { return len(trimEOL(line)) == 0 || (len(line) == 1 && line[0] == '\r') }

// ---- the mbox and MMDF splitter ----

type mboxSrc struct {
	ls   *lineSrc
	path string
	opts Options
	mmdf bool

	pending     []byte // a separator line already read, starting the next message
	pendingOff  int64
	havePending bool
	sepPat      []byte // see sepPattern
	lineCopy    []byte // see isSep
	// one: the input is one message (singleSrc), read by readBody to its
	// end: no separator, no header (no Content-Length), only its bytes
	// gathered as a long message's are (held aside, and past the limit
	// its structure and text kept)
	one bool
}

func (s *mboxSrc) next() (*Message, error) {
	s.ls.unstack()
	m := &Message{Path: s.path, Format: FormatMbox, opts: s.opts, crOnly: s.ls.eol == '\r'}
	if s.mmdf {
		m.Format = FormatMMDF
	}
	// Find the start of the message.
	var sep []byte
	var sepOff int64
	if s.havePending {
		sep, sepOff, s.havePending = s.pending, s.pendingOff, false
	} else {
		for {
			line, off, _, err := s.line()
			if err != nil {
				if err == io.EOF {
					return nil, io.EOF
				}
				return nil, err
			}
			if isBlank(line) {
				continue
			}
			if s.mmdf && bytes.HasPrefix(line, mmdfSep) {
				sep, sepOff = append([]byte{}, line...), off
				break
			}
			if !s.mmdf && isFromLine(line, true) {
				sep, sepOff = append([]byte{}, line...), off
				break
			}
			// Text where a separator should be: read it as a message.
			s.ls.unread(line, true)
			sepOff = off
			m.problemErr(ErrStructure, off, "", "no separator line before the message")
			break
		}
	}
	m.Offset = sepOff
	m.RawOffset = sepOff + int64(len(sep))
	if !s.mmdf {
		m.FromLine = string(trimEOL(sep))
	}
	err := s.readBody(m)
	if err != nil && err != io.EOF && len(m.Raw) == 0 && len(m.Problems) == 0 && s.ls.off == m.RawOffset {
		// the reading broke off (an error met before: the bytes of a
		// long message that could not be read again) before a byte of
		// this message: no message made of its "From " line alone,
		// only the error
		return nil, err
	}
	m.Length = s.ls.off - m.Offset
	if s.havePending {
		m.Length = s.pendingOff - m.Offset
	}
	if s.opts.DeferParse {
		m.unparsed = true // Parse, in the caller's goroutine, does the rest
	} else {
		finishMessage(m)
	}
	if err != nil && err != io.EOF {
		return m, err
	}
	return m, nil
}

// readBody reads the message after its separator line, up to the next
// separator (kept pending) or the end.
func (s *mboxSrc) readBody(m *Message) error {
	raw := m.rawBuf()
	limit := s.opts.MaxMessageSize
	truncated := false
	var over *overflow
	var tally *bodyTally // see checkContentLength
	sp := s.ls.sp
	add := func(b []byte, off int64) {
		if tally != nil {
			tally.add(b)
		}
		if over != nil {
			raw = over.feed(m, raw, b, off)
			return
		}
		// a long message: its bytes are held aside until its end is
		// found, then read into one buffer of its size (spool.go)
		if sp != nil && sp.on {
			if int64(len(raw))+sp.n+int64(len(b)) <= limit && sp.hold(b, off) {
				return
			}
			if int64(len(raw))+sp.n+int64(len(b)) > limit && off == sp.end && limit >= int64(spoolAfter) {
				// past the limit: whole lines up to it held too, and
				// what overflow keeps after them, without making raw of
				// the limit's size first (when the part being read can
				// be told from the bytes held: overflowHeld)
				k := limit - (int64(len(raw)) + sp.n)
				if i := bytes.LastIndexByte(b[:k], s.ls.eol); i >= 0 {
					sp.hold(b[:i+1], off)
					b, off = b[i+1:], off+int64(i+1)
				}
				truncated = true
				if v := s.overflowHeld(raw, sp); v != nil {
					over = v
					raw = over.feed(m, raw, b, off)
					return
				}
			}
			raw = s.ls.fill(m, raw, len(b))
		} else if need := len(raw) + len(b); need > spoolAfter && (len(raw) <= spoolAfter || need > cap(raw)) {
			// (not in a buffer made for the message by fill, while it has
			// room)
			if int64(need) <= limit && sp.start(off) {
				sp.hold(b, off)
				return
			}
		} else if need > cap(raw) && need > 64<<10 {
			// doubled: a buffer of at most spoolAfter goes back to the
			// pool (scratch.go) for the next message (a small message's
			// grows as append grows it: less held in the pool)
			raw = growTo(raw, doubled(cap(raw), need))
		}
		if int64(len(raw)+len(b)) > limit {
			// whole lines up to the limit; past it, what overflow keeps
			k := int(limit) - len(raw)
			if i := bytes.LastIndexByte(b[:k], s.ls.eol); i >= 0 {
				raw = append(raw, b[:i+1]...)
				b, off = b[i+1:], off+int64(i+1)
			}
			truncated = true
			over = newOverflow(raw, s.ls.eol, &s.opts)
			over.holdIn(sp, limit)
			if len(raw) > 0 && raw[len(raw)-1] != s.ls.eol {
				over.continueLine() // the rest of a line begun: as the part's lines
			}
			raw = over.feed(m, raw, b, off)
			return
		}
		raw = append(raw, b...)
	}
	defer func() {
		if sp != nil && sp.on {
			m.Raw = s.ls.fill(m, raw, 0)
		}
		if truncated {
			overLimit(m, limit)
		}
	}()
	// The header, watching for Content-Length: in one piece when it is all
	// in the read buffer, else line by line.
	clf := clField{n: -1}
	inHeader := !s.one
	if inHeader {
		if n, hcl, ok := s.headerInBuffer(); ok {
			buf, _ := s.ls.br.Peek(n)
			add(buf, s.ls.off)
			s.ls.br.Discard(n)
			s.ls.off += int64(n)
			clf, inHeader = hcl, false
		}
	}
	for inHeader {
		line, off, start, err := s.line()
		if err != nil {
			m.Raw = raw
			if err == io.EOF && (len(raw) > 0 || sp != nil && sp.on) {
				m.problemErr(ErrTruncated, off, "", "file ends inside the message header (truncated?)")
			}
			return err
		}
		if start && s.isSep(&line, false) {
			if s.mmdf {
				m.Raw = raw // the closing ^A^A^A^A of a message without body
				return nil
			}
			s.keep(line, off)
			m.problemErr(ErrStructure, off, "", "message ends inside its header")
			m.Raw = raw
			return nil
		}
		add(line, off)
		// (a line ending alone that ends a piece of a line, given back
		// in pieces after a push-back, is no blank line)
		if start && isBlank(line) || s.ls.eol == '\n' && bareBlank(line) {
			inHeader = false // (a header of bare CR lines ends at "\r\r")
		} else {
			clf.line(line, off)
		}
	}
	// mboxcl/mboxcl2: trust Content-Length only if it lands on a separator
	// or the end of the file.
	cl := clf.n
	bodyOff := s.ls.off
	kept := int64(len(raw))
	if sp != nil && sp.on {
		kept += sp.n
	}
	if cl >= 0 && !s.mmdf && cl <= limit-kept && s.mayLand(bodyOff, cl) {
		// the body is read into raw itself (or, while raw's bytes are
		// held aside, into a buffer of its own)
		at := len(raw)
		direct := sp == nil || !sp.on
		var body []byte
		// a stream's body past spoolAfter stays in the spool until it is
		// known to land (spooled, its held bytes): one that does not is
		// read again from there (replay), not held in memory twice
		spooled, held := false, int64(0)
		if direct {
			s.ls.noFill = sp != nil && sp.ra == nil
			raw = s.ls.readN(m, raw, cl)
			s.ls.noFill = false
			if spooled = sp != nil && sp.on; spooled {
				held = sp.n
			}
			body = raw[at:]
		} else {
			body = s.ls.readN(m, nil, cl)
		}
		if s.landsOnSeparator(int64(len(body))+held == cl) {
			if spooled {
				raw = s.ls.fill(m, raw, 2) // the body, in one buffer of its size
				body = raw[at:]
			}
			if at, n, ok := swallowed(body); ok {
				m.problemErr(ErrContentLength, clf.off, "", "Content-Length: %d runs over what looks like a message of its own: a \"From \" line at offset %d and a header whose Content-Length (%d) agrees with its body; read as one message, as the field says", cl, bodyOff+int64(at), n)
			}
			if !direct {
				add(body, bodyOff)
			}
			// the blank line before the next "From " belongs to this message
			if p := s.ls.peek(2); len(p) > 0 && (p[0] == '\n' || p[0] == '\r' && len(p) > 1 && p[1] == '\n') {
				line, off, _, _ := s.ls.line()
				add(line, off)
			}
			m.Raw = raw
			return nil
		}
		switch {
		case !spooled:
			s.ls.unread(body, true)
		case !s.ls.replay(body):
			// the spool's temporary file failed: read back as before
			// (fill reports what it could not) and unread
			raw = s.ls.fill(m, raw, 2)
			s.ls.unread(raw[at:], true)
		}
		if direct {
			raw = raw[:at]
			if cap(raw) > spoolAfter && at <= spoolAfter {
				// a buffer fill made for the body: the header goes back
				// into a pooled one, and the buffer to the spool's next
				// fill (scratch.go), so that the body is not held twice
				// more as it is read again
				hdr := append(m.rawBuf(), raw...)
				putLong(raw)
				raw = hdr
			}
		}
	}
	// A Content-Length not trusted: the body is split at "From " lines and
	// measured as it goes, to tell a Content-Length that disagrees with
	// where the message ends (damage) from one that only counts its line
	// endings or its last blank line otherwise (checkContentLength).
	if (cl >= 0 || clf.bad) && !s.mmdf {
		tally = &bodyTally{}
	}
	prevBlank := true
	sepPat := s.sepPattern()
	for {
		// Fast path: copy whole runs of lines up to the next line that
		// could be a separator, found with bytes.Index in the buffer.
		if n, blank, ok := s.skipToCandidate(sepPat, prevBlank); ok {
			if n > 0 {
				buf, _ := s.ls.br.Peek(n)
				add(buf, s.ls.off)
				s.ls.br.Discard(n)
				s.ls.off += int64(n)
				prevBlank = blank
			}
		}
		line, off, start, err := s.line()
		if err != nil {
			m.Raw = raw
			if err == io.EOF && tally != nil {
				checkContentLength(m, &clf, tally, bodyOff, off, true)
			}
			if err == io.EOF && s.mmdf && !s.one {
				// an MMDF message ends with its own ^A^A^A^A line: a
				// file that ends without it was cut short
				m.problemErr(ErrTruncated, off, "", "file ends inside the message: no closing ^A^A^A^A line (truncated?)")
			}
			if err == io.EOF && truncated {
				return nil
			}
			return err
		}
		if start && !s.one && s.isSep(&line, prevBlank) {
			if !s.mmdf {
				s.keep(line, off) // the "From " line of the next message
			}
			if tally != nil {
				checkContentLength(m, &clf, tally, bodyOff, off, false)
			}
			m.Raw = raw // for MMDF, the closing ^A^A^A^A ends this one
			return nil
		}
		add(line, off)
		prevBlank = start && isBlank(line)
	}
}

// lineByLine turns off the fast paths that work in the read buffer
// (headerInBuffer, skipToCandidate): tests compare them with it.
var lineByLine bool

// ErrContentLength is the kind of a problem with an mbox message's
// Content-Length field (mboxcl, mboxcl2): it is not a number, or it does
// not agree with where the message ends, which is then found by its
// "From " lines. It wraps ErrStructure: errors.Is(p, ErrStructure) is true
// too.
var ErrContentLength = fmt.Errorf("%w: Content-Length does not match the message", ErrStructure)

// clField is what a message header says in its Content-Length fields:
// the last one that is a byte count (n, -1 if none) and the first one
// that is not (bad), each with the file offset of its line.
type clField struct {
	n, off    int64
	bad       bool
	badValue  string
	badOffset int64
}

// line takes a header line read at file offset off.
func (c *clField) line(line []byte, off int64) {
	if len(line) < 15 || line[0] != 'C' && line[0] != 'c' || !bytes.EqualFold(line[:15], []byte("Content-Length:")) {
		return
	}
	v := bytes.TrimSpace(line[15:])
	if n, err := strconv.ParseInt(string(v), 10, 64); err == nil && n >= 0 {
		c.n, c.off = n, off
		return
	}
	if !c.bad {
		if len(v) > 40 {
			v = append(v[:40:40], "..."...)
		}
		c.bad, c.badValue, c.badOffset = true, string(v), off
	}
}

// bodyTally measures the body of a message as it is split: its line
// endings and how it ends.
type bodyTally struct {
	n          int64 // bytes
	crlf, lone int64 // line endings: CRLF, and LF or CR alone
	quoted     int64 // lines ">From ", ">>From " ...: one '>' each added by From-quoting
	tail       [3]byte
}

var quotedFrom = []byte(">From ")

func (t *bodyTally) add(b []byte) {
	if len(b) == 0 {
		return
	}
	if bytes.Contains(b, quotedFrom) {
		t.quoted += countQuotedFrom(b, t.n == 0 || isEOL(t.tail[2]))
	}
	if t.n > 0 && t.tail[2] == '\r' && b[0] == '\n' {
		t.crlf++ // a CRLF across two pieces
	}
	crlf := int64(bytes.Count(b, crlf))
	t.crlf += crlf
	t.lone += int64(bytes.Count(b, []byte{'\n'})+bytes.Count(b, []byte{'\r'})) - 2*crlf
	if t.n > 0 && t.tail[2] == '\r' && b[0] == '\n' {
		t.lone -= 2 // (counted alone, each)
	}
	t.n += int64(len(b))
	if len(b) >= 3 {
		copy(t.tail[:], b[len(b)-3:])
	} else {
		for _, c := range b {
			t.tail[0], t.tail[1], t.tail[2] = t.tail[1], t.tail[2], c
		}
	}
}

var crlf = []byte("\r\n")

// countQuotedFrom counts the lines of b that are From-quoted (">From ",
// ">>From ", ...: mboxo and mboxrd writers, Python's mailbox among them,
// add one '>'), b starting at a line start when atStart.
func countQuotedFrom(b []byte, atStart bool) int64 {
	var n int64
	for from := 0; ; {
		i := bytes.Index(b[from:], quotedFrom)
		if i < 0 {
			return n
		}
		i += from
		j := i
		for j > 0 && b[j-1] == '>' {
			j--
		}
		if j == 0 && atStart || j > 0 && isEOL(b[j-1]) {
			n++
		}
		from = i + len(quotedFrom)
	}
}

// isEOL reports whether c ends lines: LF, or CR (CRLF, bare CR).
func isEOL(c byte) bool { return c == '\n' || c == '\r' }

// blank returns the length of the blank line the body ends with (LF,
// CRLF or a bare CR alone on its line), 0 if it does not end with one.
func (t *bodyTally) blank() int64 {
	tl := t.tail[3-min(t.n, 3):]
	switch {
	case len(tl) >= 2 && string(tl[len(tl)-2:]) == "\r\n":
		if len(tl) == 2 || isEOL(tl[0]) {
			return 2
		}
	case len(tl) >= 1 && isEOL(tl[len(tl)-1]):
		if len(tl) == 1 || isEOL(tl[len(tl)-2]) {
			return 1
		}
	}
	return 0
}

// lastEOL returns the length of the line ending the body ends with (0 if
// none).
func (t *bodyTally) lastEOL() int64 {
	tl := t.tail[3-min(t.n, 3):]
	switch {
	case len(tl) >= 2 && string(tl[len(tl)-2:]) == "\r\n":
		return 2
	case len(tl) >= 1 && isEOL(tl[len(tl)-1]):
		return 1
	}
	return 0
}

// agrees reports whether a Content-Length of cl agrees with the body
// measured, which ends at the next separator (atEOF: at the end of the
// file). It agrees when it counts the body as stored, or as it would be
// with each CRLF written LF, or each LF written CRLF (a file whose line
// endings were converted after the field was written: only the count of
// line endings differs), in each case with or without the blank line
// that ends the body before a "From " line (mutt, Mail::Box and Solaris
// mail write the field without it), or, at the end of the file and
// when the body does not end with a blank line, with one line ending
// more than there is (the last message's blank line, or its last line
// ending, missing). When the body does not end with a blank line, the
// field may also leave out its last line ending (the writer's own line
// ending before the next "From " line, as landsOn accepts when it follows
// the field). Each form may also count the body before From-quoting: one
// '>' fewer on each ">From " line (a message that carried its own
// Content-Length into an mboxo or mboxrd archive, as Python's mailbox
// writes it).
func (t *bodyTally) agrees(cl int64, atEOF bool) bool {
	blank, last := t.blank(), t.lastEOL()
	ends := last > 0
	if last == 0 {
		last = 1
	}
	isBlank := blank > 0
	forms := [3]struct{ n, blank, eol int64 }{
		{t.n, blank, last},                  // as stored
		{t.n - t.crlf, b2i(isBlank), 1},     // CRLF counted as LF
		{t.n + t.lone, 2 * b2i(isBlank), 2}, // LF (or CR) counted as CRLF
	}
	for _, q := range []int64{0, t.quoted} {
		for _, f := range forms {
			n := f.n - q
			if cl == n || f.blank > 0 && cl == n-f.blank || atEOF && f.blank == 0 && cl == n+f.eol ||
				f.blank == 0 && ends && cl == n-f.eol {
				return true
			}
		}
		if t.quoted == 0 {
			break
		}
	}
	return false
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// checkContentLength reports a message's Content-Length that is not a
// number, or that does not agree (bodyTally.agrees) with its body as
// split at "From " lines: from bodyOff to end, the offset of the next
// separator or of the end of the file. The split stands.
func checkContentLength(m *Message, c *clField, t *bodyTally, bodyOff, end int64, atEOF bool) {
	if c.bad {
		m.problemErr(ErrContentLength, c.badOffset, "", "Content-Length %q is not a number of bytes; the message ends at its next \"From \" line", c.badValue)
	}
	if c.n < 0 || t.agrees(c.n, atEOF) {
		return
	}
	where := fmt.Sprintf("the next \"From \" line (offset %d)", end)
	if atEOF {
		where = "the end of the file"
	}
	m.problemErr(ErrContentLength, c.off, "", "Content-Length: %d does not match the message: its body is %d bytes, from offset %d to %s; split there", c.n, end-bodyOff, bodyOff, where)
}

// headerInBuffer looks in the read buffer, at a line start, for a whole
// message header (up to and with its blank line) in which no line begins
// like a separator. It returns its length and its Content-Length fields,
// and ok=false when the line-by-line reading must do it: bytes pushed
// back, a file of bare CR line endings, a header longer than what is
// buffered, or a separator-like line in it.
func (s *mboxSrc) headerInBuffer() (n int, cl clField, ok bool) {
	l := s.ls
	cl.n = -1
	if len(l.pend) > 0 || !l.atStart || l.err != nil || l.eol != '\n' || lineByLine {
		return 0, cl, false
	}
	if l.br.Buffered() == 0 {
		if _, err := l.br.Peek(1); err != nil {
			return 0, cl, false
		}
	}
	buf, _ := l.br.Peek(l.br.Buffered())
	sep := s.sepPattern()[1:]
	for p := 0; p < len(buf); {
		k := bytes.IndexByte(buf[p:], '\n')
		if k < 0 {
			return 0, cl, false // the header goes on past the buffer
		}
		line := buf[p : p+k+1]
		lineOff := l.off + int64(p)
		p += k + 1
		if k == 0 || (k == 1 && line[0] == '\r') {
			if bytes.Contains(buf[:p], crFrom) {
				return 0, cl, false // bare CR lines: for the careful reading
			}
			return p, cl, true // the blank line
		}
		if bytes.HasPrefix(line, sep) {
			return 0, cl, false // a separator-like line: for the careful reading
		}
		cl.line(line, lineOff)
	}
	return 0, cl, false
}

// sepPattern is a line ending and the start of a separator line; it is
// made once per file.
func (s *mboxSrc) sepPattern() []byte {
	if s.sepPat == nil {
		if s.mmdf {
			s.sepPat = []byte{s.ls.eol, 1, 1, 1, 1}
		} else {
			s.sepPat = []byte{s.ls.eol, 'F', 'r', 'o', 'm', ' '}
		}
	}
	return s.sepPat
}

// skipToCandidate looks in the read buffer, at a line start, for the next
// line that begins like a separator. It returns how many bytes come
// before that line (whole lines), whether the last of those lines is
// blank, and ok=false when the fast path does not apply (bytes pushed
// back, not at a line start, a separator-like line first, or a line
// longer than the buffer).
func (s *mboxSrc) skipToCandidate(pat []byte, prevBlank bool) (int, bool, bool) {
	l := s.ls
	if len(l.pend) > 0 || !l.atStart || l.err != nil || lineByLine {
		return 0, false, false
	}
	if l.br.Buffered() == 0 {
		if _, err := l.br.Peek(1); err != nil {
			return 0, false, false
		}
	}
	buf, _ := l.br.Peek(l.br.Buffered())
	if bytes.HasPrefix(buf, pat[1:]) {
		return 0, false, false // the line here starts like a separator
	}
	i := indexAtLineStart(buf, pat)
	if i < 0 {
		k := bytes.LastIndexByte(buf, l.eol)
		if k < 0 {
			return 0, false, false
		}
		return k + 1, lineBlankAt(buf, k), true
	}
	if buf[i] != l.eol {
		// a bare CR before "From ": the line it ends is cut by line
		// (the CR line before it first), as it is when read line by
		// line: the run stops at the last whole line before it, so
		// that a cut at MaxMessageSize (readBody's add, which looks
		// for line endings of the file's kind) falls where line's
		// would
		k := bytes.LastIndexByte(buf[:i], l.eol)
		if k < 0 {
			return 0, false, false
		}
		return k + 1, lineBlankAt(buf, k), true
	}
	return i + 1, lineBlankAt(buf, i), true
}

// indexAtLineStart finds pat (a line ending then a separator's start) in
// buf. It looks for the separator's first bytes and checks the byte before,
// which is faster than looking for the line ending: "F" and ^A are rarer
// than line endings.
func indexAtLineStart(buf, pat []byte) int {
	for from := 1; from < len(buf); {
		i := bytes.Index(buf[from:], pat[1:])
		if i < 0 {
			return -1
		}
		i += from
		if buf[i-1] == pat[0] || pat[0] == '\n' && buf[i-1] == '\r' {
			return i - 1 // (a bare CR may end a line before "From ": see line)
		}
		from = i + 1
	}
	return -1
}

// lineBlankAt reports whether the line that ends with the line ending at
// buf[k] is blank (buf starts at a line start).
func lineBlankAt(buf []byte, k int) bool {
	switch {
	case k == 0:
		return true
	case buf[k-1] == '\n' || buf[k-1] == '\r' && buf[k] == '\r':
		return true
	case buf[k-1] == '\r':
		return k == 1 || buf[k-2] == '\n'
	}
	return false
}

// isSep reports whether *line separates messages. A "From " line that
// does not follow a blank line must also be followed by a header block,
// so that "From - " lines Netscape wrote right after a message split, and
// a "From ..." line in a body does not. After a blank line the whole
// From_ form (a sender and a ctime date from its day name on) is enough;
// a shorter "From " line ("From bob@example.org about the plan:", an
// unescaped body line) must have a header block after it too. Looking
// ahead for the header block may move the bytes in the read buffer, which
// *line points into: *line is then a copy.
func (s *mboxSrc) isSep(line *[]byte, afterBlank bool) bool {
	if s.mmdf {
		return bytes.HasPrefix(*line, mmdfSep)
	}
	if !isFromLine(*line, afterBlank) {
		return false
	}
	if afterBlank && fullFromLine(*line) {
		return true
	}
	s.lineCopy = append(s.lineCopy[:0], *line...)
	*line = s.lineCopy
	return s.headerFollows()
}

// headerFollows reports whether the bytes after the line just read start
// a header block: a header field with a mail or news name, or a field
// followed by another field or a continuation line.
func (s *mboxSrc) headerFollows() bool {
	return headerBlockAt(s.ls.peek(1024))
}

// headerBlockAt reports whether p starts a header block: a header field
// with a mail or news name, or a field followed by another field or a
// continuation line.
func headerBlockAt(p []byte) bool {
	first, rest := nextLine(p)
	colon := bytes.IndexByte(first, ':')
	if colon <= 0 || !validName(first[:colon]) || bytes.IndexByte(first[:colon], ' ') >= 0 || urlAfter(first, colon) {
		return false
	}
	if mailField(string(first[:colon])) {
		return true
	}
	second, _ := nextLine(rest)
	if len(second) > 0 && (second[0] == ' ' || second[0] == '\t') {
		return true
	}
	colon = bytes.IndexByte(second, ':')
	return colon > 0 && validName(second[:colon]) && bytes.IndexByte(second[:colon], ' ') < 0 && !urlAfter(second, colon)
}

// nextLine splits off the first line of b (ended by LF, CRLF or a bare
// CR), without its ending.
func nextLine(b []byte) (line, rest []byte) {
	i := bytes.IndexAny(b, "\r\n")
	if i < 0 {
		return b, nil
	}
	line, rest = b[:i], b[i+1:]
	if b[i] == '\r' && len(rest) > 0 && rest[0] == '\n' {
		rest = rest[1:]
	}
	return line, rest
}

var crFrom = []byte("\rFrom ")

// line reads the next line for the splitter. In a file of LF line
// endings a message written with bare CR line endings is one long "line":
// a bare CR before "From " ends a line too (and the CR line before it is
// given as a line of its own, so that a blank one counts as blank), and a
// "From " line ended by a bare CR is cut there when it is a separator.
// Neither message then swallows the other.
func (s *mboxSrc) line() ([]byte, int64, bool, error) {
	b, off, start, err := s.ls.line()
	if err != nil || s.mmdf || s.ls.eol != '\n' {
		return b, off, start, err
	}
	i := bytes.IndexByte(b, '\r')
	if i < 0 || i == len(b)-2 && b[i+1] == '\n' {
		return b, off, start, err // the common cases: LF, CRLF
	}
	cut := -1
	if start && bytes.HasPrefix(b, fromCRLF) {
		if j := bareCR(b); j >= 0 && isFromLine(b[:j+1], true) {
			cut = j + 1
		}
	}
	if cut < 0 {
		if k := bytes.Index(b, crFrom); k >= 0 {
			cut = k + 1
			if p := bytes.LastIndexByte(b[:k], '\r'); p >= 0 {
				cut = p + 1 // the CR line before the "From " line first
			}
		}
	}
	if cut > 0 && cut < len(b) {
		s.ls.unread(b[cut:], true)
		b = b[:cut]
	}
	return b, off, start, err
}

// bareCR returns the index of the first CR in b not followed by LF, or -1.
func bareCR(b []byte) int {
	for i := 0; i < len(b); i++ {
		if b[i] == '\r' && (i+1 == len(b) || b[i+1] != '\n') {
			return i
		}
	}
	return -1
}

// bareBlank reports whether line holds an empty line of bare CR endings
// ("\r\r" not followed by LF).
func bareBlank(line []byte) bool {
	for {
		i := bytes.Index(line, []byte("\r\r"))
		if i < 0 {
			return false
		}
		if i+2 == len(line) || line[i+2] != '\n' {
			return true
		}
		line = line[i+2:]
	}
}

func (s *mboxSrc) keep(line []byte, off int64) {
	s.pending = append(s.pending[:0], line...)
	s.pendingOff, s.havePending = off, true
}

// swallowed looks in body, the body a Content-Length was trusted for
// (it lands on a separator or the end of the file), for a message of its
// own: a "From " line at its start or after a blank line, a header block
// after it with a Content-Length of its own, and that field landing too
// (on a separator or blank line inside the body, or at its end). It
// returns the offset of that "From " line in body and the field's
// value. A forwarded mbox in a body (a "From " line and a header without
// such a field) is not one: a field that lies over whole messages is,
// and it is said rather than silently merged.
func swallowed(body []byte) (at int, n int64, ok bool) {
	for i := 0; i < len(body); {
		if bytes.HasPrefix(body[i:], fromCRLF) && (i == 0 || lineBlankBefore(body, i)) {
			line, rest := nextLine(body[i:])
			if isFromLine(line, true) && headerBlockAt(rest) {
				if n, b2, ok := headerContentLength(body, i+len(body[i:])-len(rest)); ok && int64(b2)+n <= int64(len(body)) {
					end := b2 + int(n)
					if landsOn(body[end:min(len(body), end+7)]) {
						return i, n, true
					}
				}
			}
		}
		k := bytes.Index(body[i+1:], []byte("\nFrom "))
		if k < 0 {
			return 0, 0, false
		}
		i += 1 + k + 1
	}
	return 0, 0, false
}

// lineBlankBefore reports whether the line before body[i] (a line start)
// is blank.
func lineBlankBefore(body []byte, i int) bool {
	switch {
	case i >= 2 && body[i-1] == '\n' && body[i-2] == '\n':
		return true
	case i >= 3 && body[i-1] == '\n' && body[i-2] == '\r' && body[i-3] == '\n':
		return true
	}
	return false
}

// headerContentLength reads the header block at body[h:] (up to its
// blank line) for a Content-Length field: its value and the offset of
// the body after the blank line.
func headerContentLength(body []byte, h int) (n int64, bodyAt int, ok bool) {
	c := clField{n: -1}
	for p := h; p < len(body); {
		e := bytes.IndexByte(body[p:], '\n')
		if e < 0 {
			return 0, 0, false
		}
		line := body[p : p+e+1]
		p += e + 1
		if isBlank(line) {
			return c.n, p, c.n >= 0
		}
		c.line(line, 0)
	}
	return 0, 0, false
}

// landsOnSeparator reports whether what follows a Content-Length body is
// the end of the file or a "From " line, after at most one blank line.
func (s *mboxSrc) landsOnSeparator(complete bool) bool {
	return complete && landsOn(s.ls.peek(7))
}

// mayLand reports whether a Content-Length of cl for a body at lineSrc
// offset bodyOff may land on a separator (landsOnSeparator): false when
// the file, read again at that offset, says it does not, so that a
// wrong Content-Length (up to the message size limit) is not read into
// memory first and pushed back. Streams cannot say: true.
func (s *mboxSrc) mayLand(bodyOff, cl int64) bool {
	sp := s.ls.sp
	if sp == nil || sp.ra == nil || noSpool {
		return true
	}
	// the body's last byte, to know that the file reaches so far, and
	// what follows it
	var b [8]byte
	at, p := sp.base+bodyOff+cl-1, b[:]
	if cl == 0 {
		at, p = at+1, b[1:]
	}
	n, err := sp.ra.ReadAt(p, at)
	if err != nil && err != io.EOF {
		return true // the reading will say
	}
	if cl > 0 {
		if n == 0 {
			return false // the file ends before the body does
		}
		n--
		p = p[1:]
	}
	return landsOn(p[:n])
}

// landsOn reports whether p, up to 7 bytes after a Content-Length body
// (fewer: the end of the file), is the end of the file or a "From " line,
// after at most one blank line.
func landsOn(p []byte) bool {
	if len(p) == 0 {
		return true
	}
	for _, pre := range []string{"", "\n", "\r\n"} {
		if bytes.HasPrefix(p, []byte(pre+"From ")) {
			return true
		}
		if string(p) == pre {
			return true
		}
	}
	return false
}
