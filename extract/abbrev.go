package extract

import (
	"bytes"
)

// abbrev finds www.host... or ftp.host... at t[w].
func (s *Scanner) abbrev(w int) (found, bool) {
	t := s.text(0)
	if w > 0 {
		b := t[w-1]
		if isAlnum(b) || bytes.IndexByte([]byte("./@-_:%+"), b) >= 0 {
			return found{}, false
		}
	}
	h := w + 4
	dots := 0
	lim := min(len(t), w+s.opt.MaxLinkLength+1)
	for h < lim && (isAlnum(t[h]) || t[h] == '-' || t[h] == '.') {
		if t[h] == '.' {
			dots++
		}
		h++
	}
	l0 := s.lines[0]
	if h-w > s.opt.MaxLinkLength {
		// longer than a link may be: cut there (makeLink), whatever
		// follows
		if !bytes.Contains(t[w+4:h], []byte(".")) {
			return found{}, false
		}
		lk := s.makeLink(t[w:h], nil, FormAbbrev, 0, w, l0.off+int64(w), l0.off+int64(h), nil)
		return found{lk.End}, true
	}
	host := bytes.TrimRight(t[w:h], ".-")
	if dots == 0 || len(host) <= 4 || !bytes.Contains(host[4:], []byte(".")) || !isAlpha(host[len(host)-1]) {
		return found{}, false
	}
	e := w + len(host)
	if e < len(t) && (t[e] == '/' || t[e] == ':' || t[e] == '?' || t[e] == '#') {
		var d brackets
		e, _ = s.extent(t, e, w+s.opt.MaxLinkLength, &d)
		e = trimTrail(t, w, e)
	}
	lk := s.makeLink(t[w:e], nil, FormAbbrev, 0, w, l0.off+int64(w), l0.off+int64(e), nil)
	return found{lk.End}, true
}
