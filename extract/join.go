package extract

import "bytes"

// minWrapLine is the shortest line, in characters, that the heuristic
// takes for one a mailer broke at its width.
const minWrapLine = 60

// heuristicJoin joins a bare URL t[st:e] that runs to the end of line 0
// with the start of line 1, on strong evidence only. d holds the
// brackets the URL left open. query says that t[e-1] is a "?" that ends
// the line: then the token must be a query of two parameters
// ("id=12345&view=full"), or of one alone on its line.
func (s *Scanner) heuristicJoin(st, e int, d brackets, query bool, probs []error) (*Link, bool) {
	t := s.text(0)
	if shorterThan(t, minWrapLine) || !s.fill(1) || !s.samePrefix(0, 1) {
		return nil, false
	}
	t = s.text(0)
	t1 := s.text(1)
	p := s.prefix(1)
	if p >= len(t1) || spaceAt(t1, p) > 0 {
		return nil, false
	}
	if l := &s.lines[0]; l.keyN > 0 && l.key[0] == '#' && (l.pfx >= len(t) || spaceAt(t, l.pfx) == 0) {
		// a numbered list ("1. http://..." then "2. ..."), not the
		// line-number gutter of a viewer, whose lines keep the
		// document's indentation after the number (seed 001)
		return nil, false
	}
	// the token, and the rest of its line, as far as they matter: a
	// token longer than MaxLinkLength is no URL's end, and the rest is
	// looked at runCap bytes on
	tokEnd := p
	for tokEnd < len(t1) && tokEnd-p <= s.opt.MaxLinkLength && spaceAt(t1, tokEnd) == 0 {
		tokEnd++
	}
	rest := t1[tokEnd:min(len(t1), tokEnd+runCap)]
	ue, _ := s.extent(t1, p, p+s.opt.MaxLinkLength, &d)
	if ue < tokEnd {
		return nil, false // the token has characters no URL has
	}
	ue = trimTrail(t1, p, ue)
	if ue == p || !s.wrapEvidence(t[st:e], t1[p:tokEnd], t1[p:ue], rest) {
		return nil, false
	}
	if query {
		// "...page?" then a new sentence, or a lone "id=12345 is mine":
		// only a query of two parameters, or one alone on its line
		q := t1[p:ue]
		alone := len(trimSpaceRight(rest)) == 0
		if bytes.IndexByte(q, '=') < 0 || bytes.IndexByte(q, '?') >= 0 || bytes.IndexByte(q, '&') < 0 && !alone {
			return nil, false
		}
	}
	l0, l1 := s.lines[0], s.lines[1]
	b := &s.ub
	b.u, b.segs = b.u[:0], b.segs[:0]
	b.add(t[st:e], l0.off+int64(st))
	b.add(t1[p:ue], l1.off+int64(p))
	lk := s.makeLink(b.u, b.segs, FormBare, 0, st, l0.off+int64(st), l1.off+int64(ue), probs)
	lk.Joined, lk.Heuristic, lk.Ending = true, true, EndUnproven
	return lk, true
}

// wrapEvidence decides whether tok, the first token of the next line
// (raw as written, without the punctuation trimmed off its end), is the
// rest of the URL u that a mailer wrapped; rest is what follows raw on
// that line. Precision matters more than recall.
//
// Never a continuation: a rule or separator line ("-----Original
// Message-----", "---------- Forwarded message", "____", "~~~~", "===="),
// the signature separator "-- " (with a name after it or not), a token
// starting with "[" or "#", a label ending in ":" (newLine), a list item
// ("- item", "* item", "1. item", "2) item"), a new URL (a known scheme
// and its colon, "www."), and a capitalized word (a new sentence or a
// header) unless u ends in one of "= & ? % _", where a value or a name
// is expected.
//
// Then evidence is needed: u ends with one of "- = & ? _ %", or tok
// starts with one of "- . / % ? & = _ ~ #", or holds one of
// "/ % = & ? # ~ _", or ends in a file name extension (".html", ".gz").
// A word that u ends with "-" before is taken only alone on its line:
// "foo-" and "bar and more words" is a hyphenated sentence.
func (s *Scanner) wrapEvidence(u, raw, tok, rest []byte) bool {
	if ruleLine(raw) || listItem(raw) || newLine(raw) {
		return false
	}
	if bytes.Contains(tok, []byte("://")) || bytes.HasPrefix(tok, []byte("www.")) {
		return false
	}
	if c := bytes.IndexByte(tok, ':'); c > 0 {
		if s.bareScheme(tok[:c], bytes.HasPrefix(tok[c+1:], []byte("//"))) {
			return false // a new link: mailto:..., news:...
		}
	}
	last := u[len(u)-1]
	word := isWord(tok)
	if word && tok[0] >= 'A' && tok[0] <= 'Z' && bytes.IndexByte([]byte("=&?%_"), last) < 0 {
		return false // a new sentence, "Thanks", "Regards", "From:"
	}
	if bytes.IndexByte([]byte("=&?_%"), last) >= 0 {
		return true
	}
	if last == '-' {
		return !word || len(trimSpaceRight(rest)) == 0
	}
	if bytes.IndexByte([]byte("-./%?&=_~#"), tok[0]) >= 0 {
		return true
	}
	if bytes.ContainsAny(tok, "/%=&?#~_") {
		return true
	}
	// a file name extension: "0017.html"
	if i := bytes.LastIndexByte(tok, '.'); i > 0 && fileExt[string(bytes.ToLower(tok[i+1:]))] {
		return true
	}
	return false
}

// newLine reports whether tok, the first token of a line, starts a line
// of its own in modern list mail: the signature separator "--" (with a
// name after it or not: "-- Daniel"), a bracket ("[PATCH v2 1/3]",
// "[[PATCH/RFC] ...]", "[1] https://..."), a "#" (a bisect log's "# good:
// [...]", a "# [PATCH ...]" comment after a Link: trailer, "#syz test:"),
// or a label ending in ":" ("Cc:", "git tree:", a patch subject's
// "xfs:", a diff line's "-P:").
func newLine(tok []byte) bool {
	switch {
	case bytes.Equal(tok, []byte("--")):
		return true
	case tok[0] == '[' || tok[0] == '#':
		return true
	}
	return tok[len(tok)-1] == ':'
}

// ruleLine reports whether tok starts with three or more of the same
// rule character: "-----Original", "____", "~~~~", "====", "****", "####".
func ruleLine(tok []byte) bool {
	if len(tok) < 3 || bytes.IndexByte([]byte("-_~=*#+"), tok[0]) < 0 {
		return false
	}
	return tok[1] == tok[0] && tok[2] == tok[0]
}

// listItem reports whether tok is a list marker: "-", "*", "+", "•",
// "1.", "12)", "a)".
func listItem(tok []byte) bool {
	switch string(tok) {
	case "-", "*", "+", "•", "o":
		return true
	}
	n := len(tok)
	if n < 2 || n > 4 || (tok[n-1] != '.' && tok[n-1] != ')') {
		return false
	}
	for _, c := range tok[:n-1] {
		if !isDigit(c) {
			return n == 2 && isAlpha(c) && tok[n-1] == ')'
		}
	}
	return true
}

// isWord reports whether tok is made of ASCII letters only.
func isWord(tok []byte) bool {
	for _, c := range tok {
		if !isAlpha(c) {
			return false
		}
	}
	return len(tok) > 0
}

// fileExt lists name extensions common at the end of URLs in mail.
var fileExt = map[string]bool{
	"html": true, "htm": true, "shtml": true, "txt": true, "ps": true, "pdf": true, "gz": true,
	"z": true, "tar": true, "tgz": true, "zip": true, "jpg": true, "jpeg": true, "gif": true,
	"png": true, "cgi": true, "php": true, "asp": true, "aspx": true, "jsp": true, "xml": true, "doc": true,
}

// shorterThan reports whether t holds fewer than n characters, as
// utf8.RuneCount counts them (an invalid byte is one), without counting
// a long line to its end: a character takes one to four bytes, so fewer
// than n bytes are fewer than n characters and 4n bytes or more are not.
func shorterThan(t []byte, n int) bool {
	switch {
	case len(t) < n:
		return true
	case len(t) >= 4*n:
		return false
	}
	return runeCount(t) < n
}
