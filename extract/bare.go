package extract

import (
	"bytes"
	"unicode/utf8"
)

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
