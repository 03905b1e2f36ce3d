package extract

import (
	"bytes"
)

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
