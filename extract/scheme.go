package extract

import (
	"bytes"
)

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
