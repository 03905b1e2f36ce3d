package extract

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/linkscan/linkscan/uri"
)

// lineRef is one line of the window, as indices into Scanner.buf.
type lineRef struct {
	s, e int   // the line's text, without its line ending
	next int   // index after the line ending
	off  int64 // absolute offset of buf[s]
	num  int   // 1-based line number
	soft bool  // cut at MaxLineLength, not ended by a line break
	cont bool  // continues a soft line: no quote prefix of its own

	pfxDone bool
	pfx     int     // length of the quote prefix
	key     [8]byte // the prefix's quote marks, for comparing lines
	keyN    int
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
	// ResetBytes sets every field but lineBuf: keep it so.
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
	prevSoft bool        // the last line split was cut at MaxLineLength
	eof      bool
	err      error

	skip int64 // nothing before this offset is scanned again

	// fastSkip's memory: where each trigger occurs next (if hasTrig),
	// else how far it is known not to occur; absolute offsets
	hasTrig  [nTriggers]bool
	trigAt   [nTriggers]int64
	searched [nTriggers]int64
	out      []Link
	outI     int
	link     Link
}

// NewScanner returns a Scanner reading r. opts may be nil.
func NewScanner(r io.Reader, opts *Options) *Scanner {
	o := opts.withDefaults()
	s := &Scanner{
		r:   r,
		opt: o,
		buf: make([]byte, min(o.MaxLineLength, 32<<10)),
		max: (o.MaxJoinLines + 2) * o.MaxLineLength,
	}
	s.lines = s.lineBuf[:0]
	return s
}

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
	s.skip = 0
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

func (s *Scanner) addLine(st, e, next int, soft bool) {
	cont := s.prevSoft
	if !cont {
		s.num++ // the rest of a cut line keeps its number
	}
	s.lines = append(s.lines, lineRef{s: st, e: e, next: next, off: s.base + int64(st), num: s.num, soft: soft, cont: cont})
	s.prevSoft = soft
	s.cut = next
}

func (s *Scanner) splitLine() bool {
	for {
		data := s.buf[s.cut:s.end]
		if i := bytes.IndexByte(data, '\n'); i >= 0 && i < s.opt.MaxLineLength {
			e := s.cut + i
			if e > s.cut && s.buf[e-1] == '\r' {
				e--
			}
			s.addLine(s.cut, e, s.cut+i+1, false)
			return true
		}
		if len(data) > s.opt.MaxLineLength {
			c := s.cut + s.opt.MaxLineLength
			for k := 0; k < utf8.UTFMax && c > s.cut && !utf8.RuneStart(s.buf[c]); k++ {
				c--
			}
			s.addLine(s.cut, c, c, true)
			return true
		}
		if s.eof && len(data) <= s.opt.MaxLineLength {
			if len(data) > 0 {
				s.addLine(s.cut, s.end, s.end, false)
				return true
			}
			return false
		}
		if !s.readMore() {
			return false
		}
	}
}

// readMore reads into buf, first making room by dropping the bytes before
// the window and then by growing buf up to its limit. It reports false if
// there was no room.
func (s *Scanner) readMore() bool {
	if s.end == len(s.buf) {
		keep := s.cut
		if len(s.lines) > 0 {
			keep = s.lines[0].s
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
			if k == trigAt && !s.opt.Emails {
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

// prefix returns the quote prefix length of line k.
func (s *Scanner) prefix(k int) int {
	l := &s.lines[k]
	if !l.pfxDone {
		l.pfxDone = true
		if !l.cont {
			l.pfx, l.key, l.keyN = quotePrefix(s.buf[l.s:l.e])
		}
	}
	return l.pfx
}

func (s *Scanner) samePrefix(a, b int) bool {
	s.prefix(a)
	s.prefix(b)
	la, lb := &s.lines[a], &s.lines[b]
	return la.keyN == lb.keyN && la.key == lb.key
}

// quotePrefix finds the quote prefix of a line: an optional line-number
// gutter ("  679. "), then quote marks (">", "|", and "<" followed by a
// blank, as in diff output), each with at most one space after it. It
// returns the prefix length and the marks, which two lines must share to
// be joined.
func quotePrefix(t []byte) (n int, key [8]byte, kn int) {
	j := 0
	for j < len(t) && t[j] == ' ' {
		j++
	}
	d := j
	for d < len(t) && t[d] >= '0' && t[d] <= '9' {
		d++
	}
	if d > j && d-j <= 6 && d < len(t) && t[d] == '.' && (d+1 == len(t) || t[d+1] == ' ') {
		key[kn] = '#'
		kn++
		n = min(d+2, len(t))
	}
	k := n
	if k < len(t) && t[k] == ' ' {
		k++
	}
	for k < len(t) && kn < len(key) {
		c := t[k]
		if c == '>' || c == '|' || c == '<' && k+1 < len(t) && (t[k+1] == ' ' || t[k+1] == '\t') {
			key[kn] = c
			kn++
			k++
			n = k
			if k < len(t) && t[k] == ' ' {
				k++
				n = k
			}
			continue
		}
		break
	}
	return n, key, kn
}

// ---- character classes ----

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlnum(c byte) bool { return isAlpha(c) || isDigit(c) }
func isSchemeChar(c byte) bool {
	return isAlnum(c) || c == '+' || c == '-' || c == '.'
}

// stopASCII marks the ASCII bytes that end a URL in running text.
var stopASCII = func() (t [128]bool) {
	for c := 0; c <= ' '; c++ {
		t[c] = true
	}
	t[0x7f] = true
	for _, c := range "<>\"`" {
		t[c] = true
	}
	return t
}()

// asciiSpace marks the ASCII white space of spaceAt.
var asciiSpace = [utf8.RuneSelf]bool{' ': true, '\t': true, '\r': true, '\n': true, '\f': true, '\v': true}

// plainRun returns the end of the run of ASCII bytes that are no white
// space from t[i] on.
func plainRun(t []byte, i int) int {
	for i < len(t) && t[i] < utf8.RuneSelf && !asciiSpace[t[i]] {
		i++
	}
	return i
}

// spaceAt reports the size of the white space (ASCII or Unicode, such as
// NBSP and U+3000) at t[i], or 0.
func spaceAt(t []byte, i int) int {
	c := t[i]
	if c < utf8.RuneSelf {
		if asciiSpace[c] {
			return 1
		}
		return 0
	}
	r, n := utf8.DecodeRune(t[i:])
	if unicode.IsSpace(r) || r == '\u200b' || r == '\ufeff' {
		return n
	}
	return 0
}

// stopAt reports whether the character at t[i] ends a URL, and its size.
func stopAt(t []byte, i int) (bool, int) {
	c := t[i]
	if c < utf8.RuneSelf {
		return stopASCII[c], 1
	}
	r, n := utf8.DecodeRune(t[i:])
	switch {
	case r == utf8.RuneError && n == 1:
		return true, 1
	case unicode.IsSpace(r), r == '\u200b', r == '\ufeff':
		return true, n
	}
	switch r {
	case '‘', '’', '‚', '“', '”', '„', '«', '»', '‹', '›', '「', '」', '『', '』', '〈', '〉', '《', '》', '、', '。':
		return true, n
	}
	return false, n
}

func hasSpace(t []byte) bool {
	for i := 0; i < len(t); i++ {
		i = plainRun(t, i)
		if i == len(t) {
			return false
		}
		if t[i] < utf8.RuneSelf {
			return true // plainRun stops at ASCII only on white space
		}
		if spaceAt(t, i) > 0 {
			return true
		}
	}
	return false
}

func trimSpaceLeft(t []byte) int {
	i := 0
	for i < len(t) {
		n := spaceAt(t, i)
		if n == 0 {
			break
		}
		i += n
	}
	return i
}

func trimSpaceRight(t []byte) []byte {
	for len(t) > 0 {
		_, n := utf8.DecodeLastRune(t)
		if spaceAt(t, len(t)-n) == 0 {
			break
		}
		t = t[:len(t)-n]
	}
	return t
}

func removeSpace(t []byte) []byte {
	out := make([]byte, 0, len(t))
	for i := 0; i < len(t); {
		if j := plainRun(t, i); j > i { // no space among ASCII: copy the run
			out = append(out, t[i:j]...)
			i = j
			continue
		}
		if n := spaceAt(t, i); n > 0 {
			i += n
			continue
		}
		out = append(out, t[i])
		i++
	}
	return out
}

// ---- finding links in line 0 ----

type trigger int

const (
	trigColon  trigger = iota
	trigAbbrev         // "www." or "ftp."
	trigAt
	nTriggers
)

// trigLen is how many bytes of a trigger must be present to find it.
var trigLen = [nTriggers]int{1, 4, 1}

// findTrigger returns the index in b of the first trigger of kind k, or
// -1. "www." and "ftp." are found together, by their dot: a dot is rarer
// in text than a "w" or an "f", so one pass over dots beats two searches.
func findTrigger(b []byte, k trigger) int {
	switch k {
	case trigColon:
		return bytes.IndexByte(b, ':')
	case trigAt:
		return bytes.IndexByte(b, '@')
	}
	for from := 3; from < len(b); {
		i := bytes.IndexByte(b[from:], '.')
		if i < 0 {
			return -1
		}
		i += from
		if p := b[i-3 : i]; (p[0] == 'w' && p[1] == 'w' && p[2] == 'w') || (p[0] == 'f' && p[1] == 't' && p[2] == 'p') {
			return i - 3
		}
		from = i + 1
	}
	return -1
}

func (s *Scanner) scanLine() {
	l := &s.lines[0]
	p := 0
	if s.skip > l.off {
		p = int(s.skip - l.off)
		if p >= l.e-l.s {
			return
		}
	}
	var next [nTriggers]int
	for k := range next {
		next[k] = -2 // not looked for yet
	}
	for {
		t := s.text(0)
		if p >= len(t) {
			return
		}
		best, kind := -1, trigger(0)
		for k := trigger(0); k < nTriggers; k++ {
			if k == trigAt && !s.opt.Emails {
				continue
			}
			if next[k] != -1 && next[k] < p {
				next[k] = -1
				if i := findTrigger(t[p:], k); i >= 0 {
					next[k] = p + i
				}
			}
			if next[k] >= 0 && (best < 0 || next[k] < best) {
				best, kind = next[k], k
			}
		}
		if best < 0 {
			return
		}
		var lk Link
		var end int
		var ok, joined bool
		switch kind {
		case trigColon:
			lk, end, joined, ok = s.atColon(best)
		case trigAbbrev:
			lk, end, ok = s.abbrev(best)
		case trigAt:
			lk, end, ok = s.email(best)
		}
		if !ok {
			p = best + 1
			continue
		}
		s.out = append(s.out, lk)
		if joined {
			s.skip = lk.End
			if end > 0 {
				s.skip = int64(end)
			}
			return
		}
		p = end
		s.skip = s.lines[0].off + int64(end)
	}
}

// atColon looks for a link whose scheme ends at t[c] == ':' in line 0.
// It returns the link, the position after it (for a link that stays on
// line 0) or the absolute offset after it (for a joined link), and
// whether it was joined.
func (s *Scanner) atColon(c int) (Link, int, bool, bool) {
	t := s.text(0)
	lo := s.prefix(0)
	if s.skip > s.lines[0].off {
		lo = max(lo, int(s.skip-s.lines[0].off))
	}
	st := c
	for st > lo && isSchemeChar(t[st-1]) {
		st--
		if c-st > maxScheme {
			return Link{}, 0, false, false
		}
	}
	for st < c && !isAlpha(t[st]) {
		st++
	}
	if st == c {
		return Link{}, 0, false, false
	}
	var before byte
	if st > 0 {
		before = t[st-1]
	}
	var extra []string
	switch {
	case before == '<' && c-st == 3 && bytes.EqualFold(t[st:c], []byte("URL")):
		lk, end, joined, ok, _ := s.delimited(c+1, '>', FormWrapper)
		return lk, end, joined, ok
	case before == '<' || before == '"':
		closer, form := byte('>'), FormAngle
		if before == '"' {
			closer, form = '"', FormQuoted
		}
		lk, end, joined, ok, unterminated := s.delimited(st, closer, form)
		if ok {
			return lk, end, joined, true
		}
		if unterminated {
			extra = []string{ProblemUnterminated}
		}
	}
	return s.bare(st, c, extra)
}

// maxScheme is the longest scheme name looked for; the longest in the
// IANA registry has 32 characters.
const maxScheme = 32

// schemeOK reports whether a link may start with scheme at t[st:c],
// given what follows the colon.
func schemeOK(t []byte, st, c int) (hier bool, ok bool) {
	var lb [32]byte
	if c-st > len(lb) {
		return false, false
	}
	for i := st; i < c; i++ {
		lb[i-st] = t[i] | 0x20
		if !isAlpha(t[i]) {
			lb[i-st] = t[i]
		}
	}
	name := lb[:c-st]
	rest := t[c+1:]
	if len(rest) >= 2 && rest[0] == '/' && rest[1] == '/' {
		return true, true
	}
	return false, opaqueSchemes[string(name)] || (len(name) > 2 && name[0] == 'x' && name[1] == '-')
}

// extent returns the end of the URL characters of t starting at i, and
// whether MaxLinkLength cut it.
func (s *Scanner) extent(t []byte, i, limit int) (int, bool) {
	for i < len(t) {
		if i >= limit {
			return i, true
		}
		if c := t[i]; c < utf8.RuneSelf { // ASCII without a call
			if stopASCII[c] {
				break
			}
			i++
			continue
		}
		stop, n := stopAt(t, i)
		if stop {
			break
		}
		i += n
	}
	return i, false
}

// trimTrail drops trailing punctuation and unbalanced closing brackets
// from the URL t[st:e], returning the new end.
func trimTrail(t []byte, st, e int) int {
	var opens, closes [3]int
	counted := false
	for e > st {
		c := t[e-1]
		switch c {
		case '*':
			// emphasis (*http://x*), but not a wildcard: news:*, news:comp.*
			if e-2 >= st && (t[e-2] == ':' || t[e-2] == '.') {
				return e
			}
			e--
			continue
		case '.', ',', ';', ':', '!', '?', '\'', '"':
			e--
			continue
		case ')', ']', '}':
			if !counted {
				for _, b := range t[st:e] {
					if k := bytes.IndexByte([]byte("([{"), b); k >= 0 {
						opens[k]++
					} else if k := bytes.IndexByte([]byte(")]}"), b); k >= 0 {
						closes[k]++
					}
				}
				counted = true
			}
			k := bytes.IndexByte([]byte(")]}"), c)
			if opens[k] < closes[k] {
				closes[k]--
				e--
				continue
			}
		}
		break
	}
	return e
}

// usable reports whether a URL has something after its scheme.
func usable(u []byte, c int, hier bool) bool {
	if hier {
		rest := u[c+3:]
		if len(rest) == 0 {
			return false
		}
		if rest[0] == '/' {
			// file:///path; but not "http:///"
			return len(rest) > 1 && bytes.EqualFold(u[:c], []byte("file"))
		}
		return true
	}
	return len(u) > c+1
}

// bare finds a bare URL with scheme t[st:c] on line 0. extra, if not nil,
// is a problem to attach (an unterminated wrapper falling back here).
func (s *Scanner) bare(st, c int, extra []string) (Link, int, bool, bool) {
	t := s.text(0)
	hier, ok := schemeOK(t, st, c)
	if !ok {
		return Link{}, 0, false, false
	}
	e, cut := s.extent(t, c+1, st+s.opt.MaxLinkLength)
	e2 := trimTrail(t, st, e)
	if !usable(t[st:e2], c-st, hier) {
		return Link{}, 0, false, false
	}
	probs := extra
	if cut {
		probs = append(probs, ProblemTooLong)
	}
	l0 := s.lines[0]
	// A long line cut by MaxLineLength: the URL simply goes on into the
	// next pieces, over MaxJoinLines of them at most (which a streaming
	// window always holds, so that a Scanner over a reader and one over
	// bytes agree).
	if e == len(t) && e2 == e && l0.soft && s.fill(1) {
		u := append([]byte{}, s.text(0)[st:e]...)
		var endOff int64
		for k := 1; ; k++ {
			tk := s.text(k)
			ek, _ := s.extent(tk, 0, s.opt.MaxLinkLength)
			if ek == len(tk) && s.lines[k].soft && len(u)+ek < s.opt.MaxLinkLength && k < s.opt.MaxJoinLines && s.fill(k+1) {
				u = append(u, tk...)
				continue
			}
			ek = trimTrail(tk, 0, ek)
			u = append(u, tk[:ek]...)
			endOff = s.lines[k].off + int64(ek)
			break
		}
		lk := s.makeLink(u, FormBare, 0, st, l0.off+int64(st), endOff, probs)
		return lk, 0, true, true
	}
	if hier && !s.opt.NoHeuristic && e == len(t) && e2 == e && !cut {
		if lk, ok := s.heuristicJoin(st, e, probs); ok {
			return lk, 0, true, true
		}
	}
	t = s.text(0) // fill may have moved the buffer
	lk := s.makeLink(t[st:e2], FormBare, 0, st, l0.off+int64(st), l0.off+int64(e2), probs)
	return lk, e2, false, true
}

// minWrapLine is the shortest line, in characters, that the heuristic
// takes for one a mailer broke at its width.
const minWrapLine = 60

// heuristicJoin joins a bare URL t[st:e] that runs to the end of line 0
// with the start of line 1, on strong evidence only.
func (s *Scanner) heuristicJoin(st, e int, probs []string) (Link, bool) {
	t := s.text(0)
	if utf8.RuneCount(t) < minWrapLine || !s.fill(1) || !s.samePrefix(0, 1) {
		return Link{}, false
	}
	t = s.text(0)
	t1 := s.text(1)
	p := s.prefix(1)
	if p >= len(t1) || spaceAt(t1, p) > 0 {
		return Link{}, false
	}
	tokEnd := p
	for tokEnd < len(t1) && spaceAt(t1, tokEnd) == 0 {
		tokEnd++
	}
	ue, _ := s.extent(t1, p, p+s.opt.MaxLinkLength)
	if ue < tokEnd {
		return Link{}, false // the token has characters no URL has
	}
	ue = trimTrail(t1, p, ue)
	tok := t1[p:ue]
	if len(tok) == 0 || !wrapEvidence(t[st:e], tok) {
		return Link{}, false
	}
	u := append(append([]byte{}, t[st:e]...), tok...)
	l0, l1 := s.lines[0], s.lines[1]
	lk := s.makeLink(u, FormBare, 0, st, l0.off+int64(st), l1.off+int64(ue), probs)
	lk.Joined, lk.Heuristic = true, true
	return lk, true
}

// wrapEvidence decides whether tok, the first token of the next line, is
// the rest of the URL u that a mailer wrapped. Precision matters more
// than recall: a plain word is never taken unless u ends in a character
// that cannot end a URL sentence ("-", "=", "&", "?", "_", "%").
func wrapEvidence(u, tok []byte) bool {
	// a new link, or a word that starts a sentence, is not a continuation
	if bytes.Contains(tok, []byte("://")) || bytes.HasPrefix(tok, []byte("www.")) {
		return false
	}
	last := u[len(u)-1]
	if bytes.IndexByte([]byte("-=&?_%"), last) >= 0 {
		return true
	}
	if bytes.IndexByte([]byte("-./%?&=_~#"), tok[0]) >= 0 {
		return true
	}
	if bytes.ContainsAny(tok, "/%=&?#~_") {
		return true
	}
	// a file name extension: "0017.html"
	if i := bytes.LastIndexByte(tok, '.'); i > 0 && fileExt[string(bytes.ToLower(tok[i+1:]))] {
		return true
	}
	return false
}

// fileExt lists name extensions common at the end of URLs in mail.
var fileExt = map[string]bool{
	"html": true, "htm": true, "shtml": true, "txt": true, "ps": true, "pdf": true, "gz": true,
	"z": true, "tar": true, "tgz": true, "zip": true, "jpg": true, "jpeg": true, "gif": true,
	"png": true, "cgi": true, "php": true, "asp": true, "aspx": true, "jsp": true, "xml": true, "doc": true,
}

// delimited collects a URL whose text starts at t[from] of line 0, up to
// closer, across lines with the same prefix. It reports unterminated when
// the text looked like a delimited URL but no closer was found where one
// may stand.
func (s *Scanner) delimited(from int, closer byte, form Form) (lk Link, end int, joined, ok, unterminated bool) {
	t := s.text(0)
	seg := t[from:]
	lead := 0
	if form == FormWrapper {
		lead = trimSpaceLeft(seg)
	}
	start := from + lead
	seg = t[start:]
	l0 := s.lines[0]
	if i := bytes.IndexByte(seg[:min(len(seg), s.opt.MaxLinkLength)], closer); i >= 0 {
		tok := seg[:i]
		if form == FormWrapper {
			tok = removeSpace(tok)
		} else if hasSpace(tok) {
			return Link{}, 0, false, false, false
		}
		if !looksLikeURL(tok, form == FormWrapper) {
			return Link{}, 0, false, false, false
		}
		lk := s.makeLink(tok, form, 0, start, l0.off+int64(start), l0.off+int64(start+i), nil)
		return lk, start + i + 1, false, true, false
	}
	first := trimSpaceRight(seg)
	if form != FormWrapper && hasSpace(first) {
		return Link{}, 0, false, false, false
	}
	var u []byte
	if form == FormWrapper {
		u = removeSpace(first)
	} else {
		u = append(u, first...)
	}
	var probs []string
	for k := 1; k <= s.opt.MaxJoinLines && len(u) <= s.opt.MaxLinkLength; k++ {
		if !s.fill(k) || !s.samePrefix(0, k) {
			break
		}
		tk := s.text(k)
		p := s.prefix(k)
		p += trimSpaceLeft(tk[p:])
		c := tk[p:]
		if len(c) == 0 {
			break // a blank line
		}
		i := bytes.IndexByte(c, closer)
		tok := c
		if i >= 0 {
			tok = c[:i]
		}
		tok = trimSpaceRight(tok)
		if hasSpace(tok) {
			break
		}
		if len(u) > 0 && u[len(u)-1] == '-' && len(tok) > 0 {
			probs = append(probs, ProblemHyphenWrap)
		}
		u = append(u, tok...)
		if i < 0 {
			continue
		}
		if !looksLikeURL(u, form == FormWrapper) {
			break
		}
		// Start may be on line 0 or, for "<URL:" at a line end, later.
		t = s.text(0)
		startOff := l0.off + int64(start)
		startLine, startCol := 0, start
		if start >= len(trimSpaceRight(t)) {
			startLine = firstNonEmpty(s, k)
			lt := s.text(startLine)
			q := s.prefix(startLine)
			startCol = q + trimSpaceLeft(lt[q:])
			startOff = s.lines[startLine].off + int64(startCol)
		}
		lk := s.makeLink(u, form, startLine, startCol, startOff, s.lines[k].off+int64(p+len(tok)), probs)
		lk.Joined = true
		return lk, int(s.lines[k].off) + p + i + 1, true, true, false
	}
	// Unterminated: what stood on the first line may be a link alone.
	if form == FormWrapper {
		// "<URL:" then a scheme on the same line
		t = s.text(0)
		for c := start; c < len(t); c++ {
			if t[c] == ':' {
				if lk, end, _, ok := s.bare(start, c, []string{ProblemUnterminated}); ok && lk.Start == l0.off+int64(start) {
					return lk, end, false, true, true
				}
				break
			}
			if !isSchemeChar(t[c]) {
				break
			}
		}
		return Link{}, 0, false, false, true
	}
	return Link{}, 0, false, false, true
}

func firstNonEmpty(s *Scanner, upto int) int {
	for k := 1; k <= upto; k++ {
		t := s.text(k)
		if q := s.prefix(k); len(trimSpaceRight(t[q:])) > 0 {
			return k
		}
	}
	return upto
}

// looksLikeURL reports whether a delimited token is a URL: a scheme, a
// colon and something usable after it (not "http://" alone, as in a BNF).
// Unless strict (inside <URL:...>, which says it holds a URL), a scheme
// without "//" must be one of the known opaque schemes.
func looksLikeURL(u []byte, strict bool) bool {
	c := bytes.IndexByte(u, ':')
	if c <= 0 || c == len(u)-1 || !isAlpha(u[0]) {
		return false
	}
	for _, b := range u[:c] {
		if !isSchemeChar(b) {
			return false
		}
	}
	hier := len(u) >= c+3 && u[c+1] == '/' && u[c+2] == '/'
	if !hier && !strict {
		// <scheme:...> and "scheme:..." with a scheme nobody registered
		// are more often C strings and markup than links
		var lb [maxScheme]byte
		if c > maxScheme {
			return false
		}
		for i := range c {
			lb[i] = u[i] | 0x20
			if !isAlpha(u[i]) {
				lb[i] = u[i]
			}
		}
		if !opaqueSchemes[string(lb[:c])] {
			return false
		}
	}
	return usable(u, c, hier)
}

// abbrev finds www.host... or ftp.host... at t[w].
func (s *Scanner) abbrev(w int) (Link, int, bool) {
	t := s.text(0)
	if w > 0 {
		b := t[w-1]
		if isAlnum(b) || bytes.IndexByte([]byte("./@-_:%+"), b) >= 0 {
			return Link{}, 0, false
		}
	}
	h := w + 4
	dots := 0
	for h < len(t) && (isAlnum(t[h]) || t[h] == '-' || t[h] == '.') {
		if t[h] == '.' {
			dots++
		}
		h++
	}
	host := bytes.TrimRight(t[w:h], ".-")
	if dots == 0 || len(host) <= 4 || !bytes.Contains(host[4:], []byte(".")) || !isAlpha(host[len(host)-1]) {
		return Link{}, 0, false
	}
	e := w + len(host)
	if e < len(t) && (t[e] == '/' || t[e] == ':' || t[e] == '?' || t[e] == '#') {
		e, _ = s.extent(t, e, w+s.opt.MaxLinkLength)
		e = trimTrail(t, w, e)
	}
	l0 := s.lines[0]
	lk := s.makeLink(t[w:e], FormAbbrev, 0, w, l0.off+int64(w), l0.off+int64(e), nil)
	return lk, e, true
}

func isLocalChar(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-'
}

// email finds user@domain around t[a] == '@'.
func (s *Scanner) email(a int) (Link, int, bool) {
	t := s.text(0)
	lo := s.prefix(0)
	if s.skip > s.lines[0].off { // not back into the link before
		lo = max(lo, int(s.skip-s.lines[0].off))
	}
	st := a
	for st > lo && isLocalChar(t[st-1]) {
		st--
	}
	for st < a && t[st] == '.' {
		st++
	}
	if st == a || (st > 0 && (t[st-1] == ':' || t[st-1] == '/')) {
		return Link{}, 0, false
	}
	e := a + 1
	for e < len(t) && (isAlnum(t[e]) || t[e] == '-' || t[e] == '.') {
		e++
	}
	dom := bytes.TrimRight(t[a+1:e], ".-")
	e = a + 1 + len(dom)
	dot := bytes.LastIndexByte(dom, '.')
	if dot <= 0 || len(dom)-dot-1 < 2 {
		return Link{}, 0, false
	}
	for _, c := range dom[dot+1:] {
		if !isAlpha(c) {
			return Link{}, 0, false
		}
	}
	l0 := s.lines[0]
	lk := s.makeLink(t[st:e], FormEmail, 0, st, l0.off+int64(st), l0.off+int64(e), nil)
	return lk, e, true
}

// makeLink fills a Link for URL text u written in form, starting at
// column position pos of window line k.
func (s *Scanner) makeLink(u []byte, form Form, k, pos int, start, end int64, probs []string) Link {
	if len(u) > s.opt.MaxLinkLength {
		u = u[:s.opt.MaxLinkLength]
		probs = append(probs, ProblemTooLong)
	}
	l := &s.lines[k]
	lk := Link{
		URL:      string(u),
		Form:     form,
		Start:    start,
		End:      end,
		Line:     l.num,
		Column:   runeCount(s.buf[l.s:l.s+pos]) + 1,
		Problems: probs,
	}
	full := lk.URL
	switch form {
	case FormAbbrev:
		if u[0]|0x20 == 'f' {
			full = "ftp://" + full
		} else {
			full = "http://" + full
		}
	case FormEmail:
		full = "mailto:" + full
	}
	canonicalize(&lk, full)
	return lk
}

func canonicalize(lk *Link, full string) {
	// uri.Canonical does not allocate for a URL already canonical; the
	// full parse runs only for the few links with problems.
	c, err := uri.Canonical(full)
	if c == "" {
		lk.Problems = append(lk.Problems, err.Error())
		return
	}
	lk.Canonical = c
	lk.Scheme = c[:strings.IndexByte(c, ':')]
	lk.Valid = err == nil
	if err == nil {
		return
	}
	u, _ := uri.Parse(full)
	for _, p := range u.Problems {
		lk.Problems = append(lk.Problems, fmt.Sprintf("%v (offset %d)", p.Err, p.Offset))
	}
}
