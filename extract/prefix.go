package extract

// prefix returns the quote prefix length of line k.
func (s *Scanner) prefix(k int) int {
	l := &s.lines[k]
	if !l.pfxDone {
		l.pfxDone = true
		if !l.cont {
			l.pfx, l.key, l.keyN = quotePrefix(s.buf[l.s:l.e])
		}
	}
	return l.pfx
}

func (s *Scanner) samePrefix(a, b int) bool {
	s.prefix(a)
	s.prefix(b)
	la, lb := &s.lines[a], &s.lines[b]
	return la.keyN == lb.keyN && la.key == lb.key
}

// quotePrefix finds the quote prefix of a line: an optional line-number
// gutter ("  679. "), then quote marks (">", "|", and "<" followed by a
// blank, as in diff output), each with at most one space after it. It
// returns the prefix length and the marks, which two lines must share to
// be joined.
func quotePrefix(t []byte) (n int, key [8]byte, kn int) {
	j := 0
	for j < len(t) && t[j] == ' ' {
		j++
	}
	d := j
	for d < len(t) && t[d] >= '0' && t[d] <= '9' {
		d++
	}
	if d > j && d-j <= 6 && d < len(t) && t[d] == '.' && (d+1 == len(t) || t[d+1] == ' ') {
		key[kn] = '#'
		kn++
		n = min(d+2, len(t))
	}
	k := n
	if k < len(t) && t[k] == ' ' {
		k++
	}
	for k < len(t) && kn < len(key) {
		c := t[k]
		if c == '>' || c == '|' || c == '<' && k+1 < len(t) && (t[k+1] == ' ' || t[k+1] == '\t') {
			key[kn] = c
			kn++
			k++
			n = k
			if k < len(t) && t[k] == ' ' {
				k++
				n = k
			}
			continue
		}
		break
	}
	return n, key, kn
}
