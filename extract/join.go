package extract

import (
	"bytes"
	"unicode/utf8"
)

// minWrapLine is the shortest line, in characters, that the heuristic
// takes for one a mailer broke at its width.
const minWrapLine = 60

// heuristicJoin joins a bare URL t[st:e] that runs to the end of line 0
// with the start of line 1, on strong evidence only.
func (s *Scanner) heuristicJoin(st, e int, probs []string) (Link, bool) {
	t := s.text(0)
	if utf8.RuneCount(t) < minWrapLine || !s.fill(1) || !s.samePrefix(0, 1) {
		return Link{}, false
	}
	t = s.text(0)
	t1 := s.text(1)
	p := s.prefix(1)
	if p >= len(t1) || spaceAt(t1, p) > 0 {
		return Link{}, false
	}
	tokEnd := p
	for tokEnd < len(t1) && spaceAt(t1, tokEnd) == 0 {
		tokEnd++
	}
	ue, _ := s.extent(t1, p, p+s.opt.MaxLinkLength)
	if ue < tokEnd {
		return Link{}, false // the token has characters no URL has
	}
	ue = trimTrail(t1, p, ue)
	tok := t1[p:ue]
	if len(tok) == 0 || !wrapEvidence(t[st:e], tok) {
		return Link{}, false
	}
	u := append(append([]byte{}, t[st:e]...), tok...)
	l0, l1 := s.lines[0], s.lines[1]
	lk := s.makeLink(u, FormBare, 0, st, l0.off+int64(st), l1.off+int64(ue), probs)
	lk.Joined, lk.Heuristic = true, true
	return lk, true
}

// wrapEvidence decides whether tok, the first token of the next line, is
// the rest of the URL u that a mailer wrapped. Precision matters more
// than recall: a plain word is never taken unless u ends in a character
// that cannot end a URL sentence ("-", "=", "&", "?", "_", "%").
func wrapEvidence(u, tok []byte) bool {
	// a new link, or a word that starts a sentence, is not a continuation
	if bytes.Contains(tok, []byte("://")) || bytes.HasPrefix(tok, []byte("www.")) {
		return false
	}
	last := u[len(u)-1]
	if bytes.IndexByte([]byte("-=&?_%"), last) >= 0 {
		return true
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

// fileExt lists name extensions common at the end of URLs in mail.
var fileExt = map[string]bool{
	"html": true, "htm": true, "shtml": true, "txt": true, "ps": true, "pdf": true, "gz": true,
	"z": true, "tar": true, "tgz": true, "zip": true, "jpg": true, "jpeg": true, "gif": true,
	"png": true, "cgi": true, "php": true, "asp": true, "aspx": true, "jsp": true, "xml": true, "doc": true,
}
