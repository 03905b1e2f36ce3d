package extract

import (
	"bytes"
	"unicode/utf8"
)

// brackets counts the brackets ( [ { opened and not yet closed in a URL.
type brackets [3]int32

// extent returns the end of the URL characters of t starting at i, and
// whether MaxLinkLength cut it. A closing bracket that closes nothing
// opened since the URL started (d) ends it: "(http://a.example/x)tail",
// "[mailto:owner@lists.example]On Behalf Of".
func (s *Scanner) extent(t []byte, i, limit int, d *brackets) (int, bool) {
	for i < len(t) {
		if i >= limit {
			return i, true
		}
		if c := t[i]; c < utf8.RuneSelf { // ASCII without a call
			switch urlClass[c] {
			case clPlain:
				i++
				continue
			case clOpen:
				d[bracketIndex(c)]++
				i++
				continue
			case clClose:
				if k := bracketIndex(c); d[k] > 0 {
					d[k]--
					i++
					continue
				}
			}
			break
		}
		stop, n := stopAt(t, i)
		if stop {
			break
		}
		i += n
	}
	return i, false
}

// trimTrail drops what no URL in running text ends with from the URL
// t[st:e]: sentence punctuation, emphasis, "@", "|" (but not inside:
// "a||b" in a query stays), an apostrophe unless it closes one opened in
// the URL ("/x'y'"), and unbalanced closing brackets. It returns the new
// end.
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
		case '.', ',', ';', ':', '!', '?', '"', '@', '|':
			e--
			continue
		case '\'':
			if e-2 >= st && t[e-2] == '\'' {
				e-- // "''", wiki markup: ''http://a.example/''
				continue
			}
			if bytes.Count(t[st:e], []byte{'\''})%2 == 0 {
				return e // balanced by one inside the URL
			}
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

// bare finds a bare URL with scheme t[st:c] on line 0, hier telling
// whether "//" follows the colon. extra are problems to attach (an
// unterminated wrapper falling back here, a defanged scheme).
func (s *Scanner) bare(st, c int, hier bool, extra []error) (found, bool) {
	t := s.text(0)
	var d brackets
	e, cut := s.extent(t, c+1, st+s.opt.MaxLinkLength, &d)
	e2 := trimTrail(t, st, e)
	if !usable(t[st:e2], c-st, hier) {
		return found{}, false
	}
	probs := extra
	if cut {
		probs = append(probs, ErrTooLong)
	}
	l0 := s.lines[0]
	// A piece of a long line carries more of its line than any link
	// reaches (contextLen): e == len(t) only at the line's real end.
	//
	// A "?" at the line's end was trimmed as punctuation, but may start
	// the query that the next line holds
	query := e2 == e-1 && t[e2] == '?'
	gw := gwNone
	if hier && !cut && e == len(trimSpaceRight(t)) {
		// a gateway's link without its end marker is joined with the
		// lines that continue it up to the marker, or not at all
		if gw = gatewayOf(t[st:e], true); gw != gwNone && gatewayEnd(gw, t[st:e]) < 0 {
			if lk, ok := s.gatewayJoin(st, e, probs); ok {
				return found{lk.End}, true
			}
		}
	}
	if hier && !s.opt.NoHeuristic && e == len(t) && (e2 == e || query) && !cut && gw == gwNone {
		if lk, ok := s.heuristicJoin(st, e, d, query, probs); ok {
			return found{lk.End}, true
		}
	}
	t = s.text(0) // fill may have moved the buffer
	lk := s.makeLink(t[st:e2], nil, FormBare, 0, st, l0.off+int64(st), l0.off+int64(e2), probs)
	return found{lk.End}, true
}
