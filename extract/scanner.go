package extract

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"sync"
	"unicode/utf8"
)

// lineRef is one line of the window, as indices into Scanner.buf; or,
// for a line longer than MaxLineLength plus the context, one piece of
// it with the context around the piece.
type lineRef struct {
	s, e   int   // the text finders see, without the line ending
	lo, hi int   // the piece's own range in that text: triggers in [lo, hi) are its own
	next   int   // index after the line ending, or after the piece
	off    int64 // absolute offset of buf[s]
	num    int   // 1-based line number
	soft   bool  // a piece: the line goes on after hi
	cont   bool  // a piece after the first of its line

	// column: text[:colPos] of the line holds colN characters (counted
	// from the line's real start, not the piece's); links are found in
	// order, so each is counted from the last
	colPos, colN int

	pfxDone bool
	pfx     int     // length of the quote prefix (for a piece after the first: where it ends, or 0 if before s)
	key     [8]byte // the prefix's quote marks, for comparing lines
	keyN    int

	traceDone, trace bool // traceLine of the line, after its prefix
}

// Scanner reads text and returns its links one by one:
//
//	sc := extract.NewScanner(r, nil)
//	for sc.Scan() {
//		l := sc.Link()
//		...
//	}
//	if err := sc.Err(); err != nil { ... }
//
// Links come in the order of their Start offsets.
type Scanner struct {
	// ResetBytes sets every field but lineBuf, ub and dropped (scratch
	// space, written before it is read): keep it so.
	r    io.Reader
	opt  Options
	buf  []byte
	end  int   // buf[:end] holds data
	base int64 // absolute offset of buf[0]
	cut  int   // buf[:cut] has been split into lines
	max  int   // largest buf may grow to

	lines    []lineRef
	lineBuf  [16]lineRef // lines' first backing array
	num      int         // number of the last line split
	prevSoft bool        // the last line split was a piece of a longer line
	eof      bool
	err      error

	// ctx is how many bytes of its line a piece of a long line carries
	// on either side of its own range (contextLen)
	ctx int
	// the long line being cut into pieces (while prevSoft): where it
	// starts (absolute), its characters before s.cut, and its quote
	// prefix's end (absolute), marks and trace-field test
	lineStart int64
	lineCol   int
	linePfx   int64
	lineKey   [8]byte
	lineKeyN  int
	lineTrace bool

	noNL   int64 // no line break from s.cut up to this offset (splitLine)
	skip   int64 // nothing before this offset is scanned again
	resume int64 // no trigger before this offset is looked at again

	// fastSkip's memory: where each trigger occurs next (if hasTrig),
	// else how far it is known not to occur; absolute offsets
	hasTrig  [nTriggers]bool
	trigAt   [nTriggers]int64
	searched [nTriggers]int64
	out      []Link
	outI     int
	link     Link

	ub urlBuf // scratch for links written in pieces; its contents live only during one finder
	// dropped is what makeLink answers for a link it does not report (a
	// data: URI without Options.DataURIs): its finder still learns
	// where it ends
	dropped Link
}

// NewScanner returns a Scanner reading r. opts may be nil.
func NewScanner(r io.Reader, opts *Options) *Scanner {
	o := opts.withDefaults()
	s := &Scanner{
		r:   r,
		opt: o,
		buf: make([]byte, min(o.MaxLineLength, 32<<10)),
		max: windowMax(&o),
		ctx: contextLen(&o),
	}
	s.lines = s.lineBuf[:0]
	return s
}

// windowMax is the largest the buffer of a Scanner over a reader may
// grow to: the context before line 0, and MaxJoinLines+2 lines (each at
// most MaxLineLength plus the context, and its line ending), or no
// limit.
func windowMax(o *Options) int {
	if o.MaxJoinLines >= noLimit || o.MaxLineLength >= noLimit || o.MaxLinkLength >= noLimit {
		return math.MaxInt
	}
	c := int64(contextLen(o))
	n := c + int64(o.MaxJoinLines+2)*(int64(o.MaxLineLength)+c+2)
	if n > math.MaxInt {
		return math.MaxInt
	}
	return int(n)
}

// ctxSlack is how far beyond MaxLinkLength a finder may read from the
// character that triggered it, either way: the runs it follows that are
// not the link's own (white space, a word before " at ", a host's
// characters, the punctuation after a host) are cut at runCap or hostCap
// bytes, and a quote prefix at quotePrefix's limits. It is the margin
// that makes a piece's context cover every finder's reach.
const ctxSlack = 1024

// contextLen is how many bytes of its line a piece of a long line
// carries before and after its own range: a finder reads at most that
// far from a trigger, so it finds in a piece what it finds in the whole
// line.
func contextLen(o *Options) int { return min(o.MaxLinkLength, noLimit) + ctxSlack }

// Scan advances to the next link. It returns false at the end of the
// input or on a read error; Err tells which.
func (s *Scanner) Scan() bool {
	for s.outI >= len(s.out) {
		s.out, s.outI = s.out[:0], 0
		if len(s.lines) == 0 {
			s.fastSkip()
		}
		if !s.fill(0) {
			return false
		}
		s.scanLine()
		s.dropLine()
	}
	s.link = s.out[s.outI]
	s.outI++
	return true
}

// Link returns the link found by the last call to Scan.
func (s *Scanner) Link() Link { return s.link }

// Err returns the first read error, or nil at a clean end of input.
func (s *Scanner) Err() error { return s.err }

// NewBytesScanner returns a Scanner over text held in memory. It reads
// text in place, without copying it; text must not change while the
// Scanner is in use.
func NewBytesScanner(text []byte, opts *Options) *Scanner {
	s := new(Scanner)
	s.ResetBytes(text, opts)
	return s
}

// ResetBytes makes s scan text from its start, as NewBytesScanner(text,
// opts) would, but keeps the memory s already has: a caller scanning many
// texts in turn (the parts of a message) uses one Scanner for all.
func (s *Scanner) ResetBytes(text []byte, opts *Options) {
	// field by field, so that lineBuf (written before it is read) is not
	// cleared: a new Scanner value would clear 1.5 KB for every part
	s.r, s.opt, s.err = nil, opts.withDefaults(), nil
	s.buf, s.end, s.base, s.cut, s.max = text, len(text), 0, 0, len(text)
	s.lines, s.num, s.prevSoft, s.eof = s.lineBuf[:0], 0, false, true
	s.ctx = contextLen(&s.opt)
	s.lineStart, s.lineCol, s.linePfx, s.lineKey, s.lineKeyN, s.lineTrace = 0, 0, 0, [8]byte{}, 0, false
	s.skip, s.resume, s.noNL = 0, 0, 0
	s.hasTrig, s.trigAt, s.searched = [nTriggers]bool{}, [nTriggers]int64{}, [nTriggers]int64{}
	s.out, s.outI, s.link = s.out[:0], 0, Link{}
}

// scanners recycles the Scanners of All.
var scanners = sync.Pool{New: func() any { return new(Scanner) }}

// All scans text held in memory and returns its links.
func All(text []byte, opts *Options) []Link {
	var links []Link
	sc := scanners.Get().(*Scanner)
	sc.ResetBytes(text, opts)
	for sc.Scan() {
		links = append(links, sc.Link())
	}
	sc.ResetBytes(nil, nil) // keep no reference to text
	scanners.Put(sc)
	return links
}

// ---- the line window ----

func (s *Scanner) text(k int) []byte { l := &s.lines[k]; return s.buf[l.s:l.e] }

// fill makes sure the window holds line k; it reports false if there is
// no such line (end of input, or a window too large to hold it).
func (s *Scanner) fill(k int) bool {
	for len(s.lines) <= k {
		if !s.splitLine() {
			return false
		}
	}
	return true
}

// addLine adds the line (or piece) whose own text runs from s.cut to e,
// next being where the next one starts; soft says that the line goes on
// after e, in another piece.
func (s *Scanner) addLine(e, next int, soft bool) {
	cont := s.prevSoft
	st := s.cut
	if !cont {
		s.num++ // the rest of a cut line keeps its number
		s.lineStart, s.lineCol = s.base+int64(s.cut), 0
	} else {
		st = max(int(s.lineStart-s.base), s.cut-s.ctx)
	}
	l := lineRef{s: st, e: e, lo: s.cut - st, hi: e - st, next: next, off: s.base + int64(st), num: s.num, soft: soft, cont: cont}
	l.colPos, l.colN = l.lo, s.lineCol
	if soft {
		// the piece's context after its own range; the next piece starts
		// at e
		l.e = e + s.ctx
		s.lineCol += runeCount(s.buf[s.cut:e])
	}
	switch {
	case cont:
		// a later piece: the prefix and trace test of its line's start
		l.pfxDone, l.pfx, l.key, l.keyN = true, int(max(0, s.linePfx-l.off)), s.lineKey, s.lineKeyN
		l.traceDone, l.trace = true, s.lineTrace
	case soft:
		// the first piece of a long line: its text holds the line's
		// start, which later pieces no longer do
		t := s.buf[l.s:l.e]
		l.pfxDone = true
		l.pfx, l.key, l.keyN = quotePrefix(t)
		l.traceDone, l.trace = true, s.opt.BareDomains && traceLine(t[l.pfx:])
		s.linePfx, s.lineKey, s.lineKeyN, s.lineTrace = l.off+int64(l.pfx), l.key, l.keyN, l.trace
	}
	s.lines = append(s.lines, l)
	s.prevSoft = soft
	s.cut = next
}

// splitLine adds the next line to the window. A line of up to
// MaxLineLength plus the context (contextLen) is one line; a longer one
// is cut into pieces of MaxLineLength, each seen by the finders with the
// context of its line on either side, the last one running to the
// line's end.
func (s *Scanner) splitLine() bool {
	n, c := s.opt.MaxLineLength, s.ctx
	for {
		data := s.buf[s.cut:s.end]
		long := len(data) > n && len(data)-n > c // more than n+c bytes at hand
		w := data
		if long {
			w = data[:n+c+1]
		}
		// look only at what was not looked at already: a reader handing
		// a byte at a time would make this quadratic
		from := int(min(max(s.noNL-s.base-int64(s.cut), 0), int64(len(w))))
		if i := bytes.IndexByte(w[from:], '\n'); i >= 0 {
			i += from
			e := s.cut + i
			if e > s.cut && s.buf[e-1] == '\r' {
				e--
			}
			s.addLine(e, s.cut+i+1, false)
			return true
		}
		s.noNL = s.base + int64(s.cut+len(w))
		if long {
			e := syncCut(s.buf, s.cut, s.cut+n)
			s.addLine(e, e, true)
			return true
		}
		if s.eof {
			if len(data) > 0 {
				s.addLine(s.end, s.end, false)
				return true
			}
			return false
		}
		if !s.readMore() {
			return false
		}
	}
}

// syncCut returns where to end a piece that starts at b[lo] near b[c]:
// c, or the start of the valid UTF-8 sequence that would be cut there,
// so that characters are counted alike in pieces and in the whole line
// (utf8.RuneCount counts each byte of a broken sequence).
func syncCut(b []byte, lo, c int) int {
	for j := c - 1; j >= lo && j >= c-(utf8.UTFMax-1); j-- {
		if !utf8.RuneStart(b[j]) {
			continue
		}
		if _, n := utf8.DecodeRune(b[j:]); j+n > c {
			if j > lo {
				return j
			}
			return j + n
		}
		break
	}
	return c
}

// readMore reads into buf, first making room by dropping the bytes before
// the window and then by growing buf up to its limit. It reports false if
// there was no room.
func (s *Scanner) readMore() bool {
	if s.end == len(s.buf) {
		keep := s.cut
		if s.prevSoft {
			keep = max(int(s.lineStart-s.base), s.cut-s.ctx) // the next piece's context
		}
		if len(s.lines) > 0 {
			keep = min(keep, s.lines[0].s)
		}
		if keep > 0 {
			copy(s.buf, s.buf[keep:s.end])
			s.end -= keep
			s.cut -= keep
			s.base += int64(keep)
			for i := range s.lines {
				s.lines[i].s -= keep
				s.lines[i].e -= keep
				s.lines[i].next -= keep
			}
		} else if len(s.buf) < s.max {
			nb := make([]byte, min(2*len(s.buf), s.max))
			copy(nb, s.buf[:s.end])
			s.buf = nb
		} else {
			return false
		}
	}
	for tries := 0; tries < 100; tries++ {
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		if err != nil {
			s.eof = true
			if err != io.EOF {
				s.err = err
			}
			return true
		}
		if n > 0 {
			return true
		}
	}
	s.eof, s.err = true, io.ErrNoProgress
	return true
}

// fastSkip passes over whole lines that hold no trigger (":", "www.",
// "ftp.", and "@" when looking for e-mail) without splitting them, so
// that link-free text is scanned at the speed of bytes.IndexByte. It runs
// only when the window is empty.
func (s *Scanner) fastSkip() {
	if s.prevSoft {
		return
	}
	for {
		data := s.buf[s.cut:s.end]
		cutOff := s.base + int64(s.cut)
		endOff := s.base + int64(s.end)
		lim := len(data)
		found := false
		for k := trigger(0); k < nTriggers; k++ {
			if !s.opt.wants(k) {
				continue
			}
			if !s.hasTrig[k] || s.trigAt[k] < cutOff {
				from := cutOff
				if !s.hasTrig[k] && s.searched[k] > from {
					from = s.searched[k]
				}
				s.hasTrig[k] = false
				if i := findTrigger(s.buf[from-s.base:s.end], k); i >= 0 {
					s.hasTrig[k], s.trigAt[k] = true, from+int64(i)
				} else {
					s.searched[k] = max(from, endOff-int64(trigLen[k]-1))
				}
			}
			if s.hasTrig[k] && int(s.trigAt[k]-cutOff) < lim {
				lim, found = int(s.trigAt[k]-cutOff), true
			}
		}
		if nl := lastNewline(data[:lim]); nl >= 0 {
			s.num += bytes.Count(data[:nl+1], []byte{'\n'})
			s.cut += nl + 1
		}
		if found || s.eof || s.end-s.cut > s.opt.MaxLineLength {
			return
		}
		if !s.readMore() {
			return
		}
	}
}

// runeCount is utf8.RuneCount with ASCII counted eight bytes at a time.
func runeCount(b []byte) int {
	n := 0
	for len(b) >= 8 && binary.LittleEndian.Uint64(b)&0x8080808080808080 == 0 {
		n += 8
		b = b[8:]
	}
	return n + utf8.RuneCount(b)
}

// lastNewline is bytes.LastIndexByte(b, '\n') eight bytes at a time
// (LastIndexByte reads one at a time).
func lastNewline(b []byte) int {
	const ones, highs, nls = 0x0101010101010101, 0x8080808080808080, 0x0a0a0a0a0a0a0a0a
	i := len(b)
	for i >= 8 {
		y := binary.LittleEndian.Uint64(b[i-8:]) ^ nls // a zero byte where '\n' was
		if (y-ones)&^y&highs != 0 {
			break
		}
		i -= 8
	}
	for i > 0 {
		i--
		if b[i] == '\n' {
			return i
		}
	}
	return -1
}

func (s *Scanner) dropLine() {
	copy(s.lines, s.lines[1:])
	s.lines = s.lines[:len(s.lines)-1]
}
