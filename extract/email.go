package extract

import (
	"bytes"
	"unicode"
	"unicode/utf8"
)

func isLocalChar(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-'
}

// letterAt reports the size of the letter, digit or combining mark
// (Unicode, as in an internationalized address: RFC 6531) at t[i], or 0.
func letterAt(t []byte, i int) int {
	r, n := utf8.DecodeRune(t[i:])
	if r == utf8.RuneError || !(unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)) {
		return 0
	}
	return n
}

// letterBefore is letterAt for the character that ends at t[i].
func letterBefore(t []byte, lo, i int) int {
	_, n := utf8.DecodeLastRune(t[lo:i])
	if n == 0 || letterAt(t, i-n) != n {
		return 0
	}
	return n
}

// email finds user@domain around t[a] == '@': a dot-atom local part
// (ASCII or Unicode letters, RFC 6531), or a quoted one ("foo bar"@...),
// and a domain whose last label has two or more letters, no longer than
// MaxLinkLength in all. The white space
// of a quoted local part is written %20 in the URL, which never holds
// white space.
func (s *Scanner) email(a int) (found, bool) {
	t := s.text(0)
	// no address is longer than MaxLinkLength: the local part is looked
	// for that far back, the domain that far on
	lo := max(s.lowBound(), a-s.opt.MaxLinkLength-1)
	st := a
	quoted := false
	if a > lo && t[a-1] == '"' {
		q := bytes.LastIndexByte(t[lo:a-1], '"')
		if q < 0 || q+lo+1 == a-1 || bytes.ContainsAny(t[lo+q+1:a-1], "\"\\\r\n\t") || hasControl(t[lo+q+1:a-1]) {
			return found{}, false
		}
		st, quoted = lo+q, true
	} else {
		for st > lo {
			if isLocalChar(t[st-1]) {
				st--
			} else if t[st-1] >= utf8.RuneSelf {
				n := letterBefore(t, lo, st)
				if n == 0 {
					break
				}
				st -= n
			} else {
				break
			}
		}
		if st == lo && lo > s.lowBound() && (isLocalChar(t[st-1]) || letterBefore(t, 0, st) > 0) {
			return found{}, false // a local part longer than a link
		}
		for st < a && t[st] == '.' {
			st++
		}
		if st == a || t[a-1] == '.' {
			return found{}, false
		}
	}
	// not the user of a URL ("http://user@host", "sip:me@host"), but
	// ":me@a.example:" is an address after a colon
	if st > 0 && (t[st-1] == '/' || t[st-1] == ':' && st > 1 && isSchemeChar(t[st-2])) {
		return found{}, false
	}
	e := a + 1
	lim := min(len(t), st+s.opt.MaxLinkLength+2)
	for e < lim {
		if c := t[e]; isAlnum(c) || c == '-' || c == '.' {
			e++
		} else if c >= utf8.RuneSelf {
			n := letterAt(t, e)
			if n == 0 {
				break
			}
			e += n
		} else {
			break
		}
	}
	if e == lim && e < len(t) && (isAlnum(t[e]) || t[e] == '-' || t[e] == '.' || t[e] >= utf8.RuneSelf && letterAt(t, e) > 0) {
		return found{}, false // a domain longer than a link
	}
	dom := bytes.TrimRight(t[a+1:e], ".-")
	e = a + 1 + len(dom)
	dot := bytes.LastIndexByte(dom, '.')
	if dot <= 0 || utf8.RuneCount(dom[dot+1:]) < 2 {
		return found{}, false
	}
	for i := dot + 1; i < len(dom); {
		if c := dom[i]; c < utf8.RuneSelf {
			if !isAlpha(c) {
				return found{}, false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(dom[i:])
		if !unicode.IsLetter(r) && !unicode.IsMark(r) {
			return found{}, false
		}
		i += n
	}
	if e-st > s.opt.MaxLinkLength {
		return found{}, false // no address is that long
	}
	l0 := s.lines[0]
	u := t[st:e]
	if quoted && hasSpace(u) {
		u = escapeSpace(u)
	}
	lk := s.makeLink(u, nil, FormEmail, 0, st, l0.off+int64(st), l0.off+int64(e), nil)
	return found{lk.End}, true
}

// escapeSpace writes each white space character of u as %20.
func escapeSpace(u []byte) []byte {
	var out []byte
	for i := 0; i < len(u); {
		if n := spaceAt(u, i); n > 0 {
			out = append(out, "%20"...)
			i += n
			continue
		}
		out = append(out, u[i])
		i++
	}
	return out
}
