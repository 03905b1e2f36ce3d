package extract

// prefix returns the quote prefix length of line k (for a piece after
// the first of a long line, where in its text the line's prefix ends, or
// 0 when it ends before).
func (s *Scanner) prefix(k int) int {
	l := &s.lines[k]
	if !l.pfxDone {
		l.pfxDone = true
		l.pfx, l.key, l.keyN = quotePrefix(s.buf[l.s:l.e])
	}
	return l.pfx
}

// traceLine0 reports whether line 0 starts with a trace field
// (traceLine, after its quote prefix).
func (s *Scanner) traceLine0() bool {
	l := &s.lines[0]
	if !l.traceDone {
		p := s.prefix(0)
		l.traceDone, l.trace = true, traceLine(s.buf[l.s+p:l.e])
	}
	return l.trace
}

func (s *Scanner) samePrefix(a, b int) bool {
	s.prefix(a)
	s.prefix(b)
	la, lb := &s.lines[a], &s.lines[b]
	return la.keyN == lb.keyN && la.key == lb.key
}

// quotePrefix finds the quote prefix of a line: an optional line-number
// gutter ("  679. ", indented by fewer than runCap spaces), then quote marks (">", "|", and "<" followed by a
// blank, as in diff output), each with at most one space after it. It
// returns the prefix length and the marks, which two lines must share to
// be joined.
func quotePrefix(t []byte) (n int, key [8]byte, kn int) {
	j := 0
	for j < len(t) && j < runCap && t[j] == ' ' {
		j++
	}
	d := j
	for d < len(t) && d-j <= 6 && t[d] >= '0' && t[d] <= '9' {
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
