package extract

import (
	"bytes"
)

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
