package extract

import "bytes"

type trigger int

const (
	trigColon  trigger = iota
	trigAbbrev         // "www." or "ftp."
	trigAt             // "@", with Options.Emails
	trigDot            // ".", with Options.BareDomains
	nTriggers
)

// runCap bounds how far a finder follows a run of characters that are
// not the link's own (white space, the word before " at ", a quote
// prefix's indentation, the punctuation after a host), so that what it
// finds depends only on the text near its trigger: a piece of a long
// line, which carries that text (contextLen), gives the links of the
// whole line. hostCap bounds the host characters domain follows either
// way from a dot (a host name has 253 at most), so that a long run of
// them costs the same in a piece and in the whole line.
const (
	runCap  = 256
	hostCap = 256
)

// trigLen is how many bytes of a trigger must be present to find it.
var trigLen = [nTriggers]int{1, 4, 1, 1}

// wants reports whether the options look for triggers of kind k.
func (o *Options) wants(k trigger) bool {
	switch k {
	case trigAt:
		return o.Emails
	case trigDot:
		return o.BareDomains
	}
	return true
}

// found is what a finder answers when it found a link, which it has
// appended to s.out (makeLink does): the absolute offset at which
// scanning resumes, after the link or, for a link that crossed lines,
// after its last piece or closing delimiter. A finder that found none
// may still say where the text it saw ends.
type found struct {
	next int64
}

// findTrigger returns the index in b of the first trigger of kind k, or
// -1. "www." and "ftp." are found together, by their dot: a dot is rarer
// in text than a "w" or an "f", so one pass over dots beats two searches.
func findTrigger(b []byte, k trigger) int {
	switch k {
	case trigColon:
		return bytes.IndexByte(b, ':')
	case trigAt:
		return bytes.IndexByte(b, '@')
	case trigDot:
		return bytes.IndexByte(b, '.')
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

// scanLine finds the links of line 0 (after s.skip), looking at each
// trigger in turn; a link that crosses into later lines ends the line.
// Of a piece of a long line, only the triggers of its own range count:
// those of its context are the pieces' before and after it.
func (s *Scanner) scanLine() {
	l := &s.lines[0]
	p := l.lo
	if q := max(s.skip, s.resume) - l.off; q > int64(p) {
		p = int(min(q, int64(l.hi)))
	}
	var next [nTriggers]int
	for k := range next {
		next[k] = -2 // not looked for yet
	}
	for {
		t := s.text(0)
		l0 := &s.lines[0]
		if p >= l0.hi {
			// a failed finder may have seen past the piece: the next piece
			// starts looking where it stopped
			s.resume = l0.off + int64(p)
			return
		}
		best, kind := -1, trigger(0)
		for k := trigger(0); k < nTriggers; k++ {
			if !s.opt.wants(k) {
				continue
			}
			if next[k] != -1 && next[k] < p {
				next[k] = -1
				// "www." is found by its dot, up to 3 bytes past the range
				if lim := min(len(t), l0.hi+trigLen[k]-1); p < lim {
					if i := findTrigger(t[p:lim], k); i >= 0 && p+i < l0.hi {
						next[k] = p + i
					}
				}
			}
			if next[k] >= 0 && (best < 0 || next[k] < best) {
				best, kind = next[k], k
			}
		}
		if best < 0 {
			return
		}
		var f found
		var ok bool
		switch kind {
		case trigColon:
			f, ok = s.atColon(best)
		case trigAbbrev:
			f, ok = s.abbrev(best)
		case trigAt:
			f, ok = s.email(best)
		case trigDot:
			f, ok = s.domain(best)
		}
		l0 = &s.lines[0]
		if !ok {
			p = best + 1
			if f.next > l0.off+int64(p) { // a finder that saw a whole non-link
				p = int(min(f.next-l0.off, int64(l0.e-l0.s)))
			}
			continue
		}
		s.skip = f.next
		if f.next >= l0.off+int64(l0.hi) {
			return // the link went on into later lines or pieces
		}
		p = int(f.next - l0.off)
	}
}

// isData reports whether u is a data: URI.
func isData(u []byte) bool {
	return len(u) >= 5 && u[4] == ':' && bytes.EqualFold(u[:4], []byte("data"))
}
