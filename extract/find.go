package extract

import (
	"bytes"
)

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
