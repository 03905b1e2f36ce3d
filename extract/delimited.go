package extract

import (
	"bytes"
)

// delimResult is what delimited found.
type delimResult struct {
	f            found
	ok           bool
	unterminated bool // it looked like a delimited URL, but no closer stood where one may
}

// delimited collects a URL whose text starts at t[from] of line 0, up to
// closer, across lines with the same prefix.
//
// White space inside is ignored (RFC 3986 Appendix C, RFC 1738) inside
// <URL:...> everywhere, and inside <...> on the line of its closer.
// Around the URL only, as padding: inside "URL:..." (quotes often hold
// prose) and inside a padded <...> (padded: a "<" and white space before
// the scheme). Inside "..." white space means the quotes hold prose, not
// a URL. A delimited URL that crosses lines has one token a line, but
// for <URL:...>.
func (s *Scanner) delimited(from int, closer byte, form Form, padded bool) delimResult {
	t := s.text(0)
	// inner: white space inside ignored on the closer's line; around:
	// white space allowed around the URL; multiInner: white space inside
	// ignored on every line of a URL that crosses lines
	mode, inner, around, multiInner := anyHier, !padded, padded, false
	switch {
	case form == FormWrapper && closer == '>':
		mode, inner, multiInner = anyScheme, true, true
	case form == FormWrapper:
		mode, inner, around = anyScheme, false, true
	case form == FormQuoted:
		mode, inner = knownScheme, false
	}
	lead := 0
	if form == FormWrapper {
		lead = trimSpaceLeft(t[from:min(len(t), from+runCap)])
		if from+lead < len(t) && spaceAt(t, from+lead) > 0 {
			return delimResult{} // more white space than runCap: no wrapper
		}
	}
	start := from + lead
	seg := t[start:]
	l0 := s.lines[0]
	b := &s.ub
	b.u, b.segs = b.u[:0], b.segs[:0]
	if i := bytes.IndexByte(seg[:min(len(seg), s.opt.MaxLinkLength)], closer); i >= 0 {
		raw := seg[:i]
		u := raw
		var segs []Segment
		if hasSpace(raw) {
			switch {
			case inner:
				b.addNoSpace(raw, l0.off+int64(start))
				u, segs = b.u, b.segs
				if hasSpace(u) { // invalid UTF-8 on both sides of white space
					return delimResult{}
				}
			case around && !hasSpace(trimSpaceRight(raw)):
				u = trimSpaceRight(raw)
				b.add(u, l0.off+int64(start))
				segs = b.segs
			default:
				return delimResult{}
			}
		}
		if !s.looksLikeURL(u, mode) {
			return delimResult{}
		}
		s.makeLink(u, segs, form, 0, start, l0.off+int64(start), l0.off+int64(start+i), nil)
		return delimResult{f: found{l0.off + int64(start+i+1)}, ok: true}
	}
	if len(seg) > s.opt.MaxLinkLength {
		// no closer within MaxLinkLength and more of the line after it:
		// too long to go on over lines (judged by what is near, so that a
		// piece of a long line says the same)
		if !multiInner && hasSpace(trimSpaceRight(seg[:s.opt.MaxLinkLength+1])) {
			return delimResult{}
		}
		return s.unterminated(form, start)
	}
	first := trimSpaceRight(seg)
	if multiInner {
		b.addNoSpace(first, l0.off+int64(start))
	} else if hasSpace(first) {
		return delimResult{}
	} else {
		b.add(first, l0.off+int64(start))
	}
	var probs []error
	for k := 1; k <= s.opt.MaxJoinLines && len(b.u) <= s.opt.MaxLinkLength; k++ {
		if !s.fill(k) || !s.samePrefix(0, k) {
			break
		}
		tk := s.text(k)
		p := s.prefix(k)
		p += trimSpaceLeft(tk[p:min(len(tk), p+runCap)])
		c := tk[p:]
		if len(c) == 0 || spaceAt(c, 0) > 0 {
			break // a blank line (or more white space than runCap)
		}
		i := bytes.IndexByte(c[:min(len(c), s.opt.MaxLinkLength+1)], closer)
		if i < 0 && len(c) > s.opt.MaxLinkLength {
			break // no closer within MaxLinkLength on a longer line
		}
		tok := c
		if i >= 0 {
			tok = c[:i]
		}
		tok = trimSpaceRight(tok)
		if !multiInner && hasSpace(tok) || !s.continues(b.u, tok, multiInner) {
			break
		}
		if len(b.u) > 0 && b.u[len(b.u)-1] == '-' && len(tok) > 0 {
			probs = append(probs, ErrHyphenWrap)
		}
		if multiInner {
			b.addNoSpace(tok, s.lines[k].off+int64(p))
		} else {
			b.add(tok, s.lines[k].off+int64(p))
		}
		if i < 0 {
			continue
		}
		if !s.looksLikeURL(b.u, mode) || hasSpace(b.u) {
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
		lk := s.makeLink(b.u, b.segs, form, startLine, startCol, startOff, s.lines[k].off+int64(p+len(tok)), probs)
		lk.Joined = true
		if form == FormQuoted && lk.Ending == EndDelimiter {
			// quotes hold prose as often as links: the word before a
			// closing quote on a later line may be the sentence's
			lk.Ending = EndUnproven
		}
		return delimResult{f: found{s.lines[k].off + int64(p+i+1)}, ok: true}
	}
	return s.unterminated(form, start)
}

// unterminated is what delimited answers for a delimited URL starting at
// t[start] of line 0 without a closer: for <URL:scheme:..., the bare URL
// alone on the first line, with ErrUnterminated.
func (s *Scanner) unterminated(form Form, start int) delimResult {
	l0 := s.lines[0]
	if form == FormWrapper {
		// "<URL:" then a scheme on the same line
		t := s.text(0)
		for c := start; c < len(t) && c-start <= maxScheme; c++ {
			if t[c] == ':' {
				n := len(s.out)
				if f, ok := s.bareAt(start, c, []error{ErrUnterminated}); ok {
					// a data: URI not reported (makeLink drops it) is
					// passed over all the same
					if len(s.out) == n || s.out[len(s.out)-1].Start == l0.off+int64(start) {
						return delimResult{f: f, ok: true, unterminated: true}
					}
					s.out = s.out[:len(s.out)-1]
				}
				break
			}
			if !isSchemeChar(t[c]) {
				break
			}
		}
	}
	return delimResult{unterminated: true}
}

// bareAt finds a bare URL whose scheme is exactly t[st:c] of line 0.
func (s *Scanner) bareAt(st, c int, extra []error) (found, bool) {
	t := s.text(0)
	hier := c+2 < len(t) && t[c+1] == '/' && t[c+2] == '/'
	if !s.bareScheme(t[st:c], hier) {
		return found{}, false
	}
	return s.bare(st, c, hier, extra)
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

// continues reports whether tok, the token of a later line, may continue
// the delimited URL u: never when it holds a delimiter ("<", ">", '"':
// another link, or markup), nor after a gateway link's end marker, nor
// with a character the gateway's links do not have (inner says white
// space inside is ignored: only the end marker is looked at then).
func (s *Scanner) continues(u, tok []byte, inner bool) bool {
	for _, c := range tok {
		if c == '<' || c == '>' || c == '"' {
			return false
		}
	}
	g := gatewayOf(u, true)
	if g == gwNone {
		return true
	}
	if gatewayEnd(g, u) >= 0 {
		return false
	}
	if inner {
		return true
	}
	chars := &gatewayChars[g]
	for _, c := range tok {
		if c >= 0x80 || !chars[c] {
			return false
		}
	}
	return true
}
