package extract

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// lowBound returns the first position of line 0 that a finder may look
// back to: after the quote prefix and after the last link reported.
func (s *Scanner) lowBound() int {
	lo := s.prefix(0)
	if s.skip > s.lines[0].off {
		lo = max(lo, int(s.skip-s.lines[0].off))
	}
	return lo
}

// atColon looks for a link whose scheme ends at t[c] == ':' in line 0:
// a wrapper <URL:...> or "URL:...", a delimited <scheme:...> or
// "scheme:...", or else a bare URL.
func (s *Scanner) atColon(c int) (found, bool) {
	t := s.text(0)
	lo := s.lowBound()
	st := c
	for st > lo && isSchemeChar(t[st-1]) && c-st < maxWord {
		st--
	}
	// glued: the word goes on before st (past maxWord), so st is no word
	// start
	glued := st > lo && isSchemeChar(t[st-1])
	if st == c {
		return s.ipv6(c)
	}
	var extra []error
	if !glued && isAlpha(t[st]) && st > 0 {
		before := t[st-1]
		switch {
		case (before == '<' || before == '"') && c-st == 3 && bytes.EqualFold(t[st:c], []byte("URL")):
			closer := byte('>')
			if before == '"' {
				closer = '"'
			}
			r := s.delimited(c+1, closer, FormWrapper, false)
			if r.ok || closer == '>' {
				return r.f, r.ok
			}
		case before == '<' || before == '"':
			closer, form := byte('>'), FormAngle
			if before == '"' {
				closer, form = '"', FormQuoted
			}
			r := s.delimited(st, closer, form, false)
			if r.ok {
				return r.f, true
			}
			if r.unterminated {
				extra = []error{ErrUnterminated}
			}
		case spaceAt(t, st-1) > 0 || st > 1 && t[st-1] >= 0x80:
			// "< http://a.example/ >", NBSP padding inside <...>
			if paddedOpen(t, lo, st) {
				if r := s.delimited(st, '>', FormAngle, true); r.ok {
					return r.f, true
				}
			}
		}
	}
	t = s.text(0) // delimited may have read more and moved the buffer
	if c+1 == len(t) || t[c+1] < utf8.RuneSelf && asciiSpace[t[c+1]] {
		return found{}, false // "Subject: ", "Note:" at a line's end: no bare link
	}
	hier := c+2 < len(t) && t[c+1] == '/' && t[c+2] == '/'
	ok := !glued && s.bareScheme(t[st:c], hier)
	if !ok && (hier || c-st > 6 && bytes.EqualFold(t[c-6:c], []byte("mailto"))) {
		// a scheme glued to the word before it: "wordhttp://",
		// "see...http://", "spam.https://", "Email:mailto:"
		for g := max(st+1, c-maxGlued); g < c; g++ {
			if gluedScheme(t[g:c], s.opt.Refang) {
				if ok = s.bareScheme(t[g:c], hier); ok {
					st = g
					break
				}
			}
		}
	}
	if !ok {
		return s.ipv6(c)
	}
	return s.bare(st, c, hier, extra)
}

// maxScheme is the longest scheme name looked for; the longest in the
// IANA registry has 32 characters. maxWord is how far back a scheme's
// word is followed to find where it starts.
const (
	maxScheme = 32
	maxWord   = 64
	maxGlued  = 6 // the longest of gluedSchemes
)

// lowerName writes the scheme name n in lower case into b, or returns
// nil if it is too long to be one.
func lowerName(b *[maxScheme]byte, n []byte) []byte {
	if len(n) > maxScheme {
		return nil
	}
	for i, c := range n {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	return b[:len(n)]
}

// bareScheme reports whether a bare URL may start with the scheme name n,
// hier telling whether "//" follows its colon. In running text only known
// schemes count: the registered and historic ones of KnownScheme with
// "//", and those of schemes.txt without. An experimental "x-" scheme
// needs "//" (X-Header:value lines and DKIM h= lists are not links), and
// an opaque scheme written as a capitalized word ("Tel:", "Fax:",
// "News:") is a label, as in a header-like "Name:value" line. With
// Options.Refang, hxxp and hxxps count too.
func (s *Scanner) bareScheme(n []byte, hier bool) bool {
	// the schemes of most links, without a map look-up
	switch string(n) {
	case "http", "https", "ftp":
		return hier
	case "mailto", "news":
		return true
	}
	if len(n) == 0 || !isAlpha(n[0]) {
		return false
	}
	var b [maxScheme]byte
	name := lowerName(&b, n)
	if name == nil {
		return false
	}
	if hier {
		if s.opt.Refang && (string(name) == "hxxp" || string(name) == "hxxps") {
			return true
		}
		_, ok := KnownScheme(string(name))
		return ok
	}
	return opaqueSchemes[string(name)] && !titleCase(n)
}

// titleCase reports whether n is written as a capitalized word: an upper
// case letter, then letters of which at least one is lower case.
func titleCase(n []byte) bool {
	if n[0] < 'A' || n[0] > 'Z' {
		return false
	}
	lower := false
	for _, c := range n[1:] {
		switch {
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= 'A' && c <= 'Z':
		default:
			return false
		}
	}
	return lower
}

// gluedSchemes are the schemes recognized at the end of a word glued to
// them ("wordhttp://"): the common ones, so that the tail of any word
// ("2go://", "ago://") is not taken for a scheme. Without "//" only
// mailto: is looked for so.
var gluedSchemes = map[string]bool{
	"http": true, "https": true, "ftp": true, "ftps": true, "sftp": true, "mailto": true,
	"news": true, "nntp": true, "gopher": true, "telnet": true, "wais": true, "file": true,
}

func gluedScheme(n []byte, refang bool) bool {
	var b [maxScheme]byte
	name := lowerName(&b, n)
	if refang && (string(name) == "hxxp" || string(name) == "hxxps") {
		return true
	}
	return gluedSchemes[string(name)]
}

// defanged reports whether u is a defanged URL: hxxp:// or hxxps://.
func defanged(u []byte) bool {
	return len(u) > 7 && bytes.EqualFold(u[:4], []byte("hxxp")) && (u[4] == ':' || u[4]|0x20 == 's' && u[5] == ':')
}

// refanged returns a defanged URL (hxxp://a[.]example/) read back as the
// URL it stands for, or u unchanged.
func refanged(u string) string {
	if !defanged([]byte(u)) {
		return u
	}
	u = "http" + u[4:]
	return strings.ReplaceAll(u, "[.]", ".")
}

// paddedOpen reports whether a "<" stands before st on line t, only
// white space between them (runCap bytes at most).
func paddedOpen(t []byte, lo, st int) bool {
	i := st
	for i > lo && st-i < runCap {
		_, n := utf8.DecodeLastRune(t[lo:i])
		if spaceAt(t, i-n) == 0 {
			break
		}
		i -= n
	}
	return i > lo && i < st && t[i-1] == '<'
}

// delimMode says which schemes a delimited URL may have.
type delimMode int

const (
	anyScheme   delimMode = iota // <URL:...>: the author said it is a URL
	anyHier                      // <...>: any scheme with "//", known opaque ones
	knownScheme                  // "...": the schemes of running text
)

// looksLikeURL reports whether a delimited token is a URL: a scheme, a
// colon and something usable after it (not "http://" alone, as in a BNF),
// with a scheme that mode allows, and no control character (a NUL of a
// stray "=00", which a URL never holds: the delimiters then hold no URL,
// and a bare one ends at the control).
func (s *Scanner) looksLikeURL(u []byte, mode delimMode) bool {
	c := bytes.IndexByte(u, ':')
	if c <= 0 || c == len(u)-1 || !isAlpha(u[0]) || c > maxScheme || hasControl(u) {
		return false
	}
	for _, b := range u[:c] {
		if !isSchemeChar(b) {
			return false
		}
	}
	hier := len(u) >= c+3 && u[c+1] == '/' && u[c+2] == '/'
	switch {
	case mode == anyScheme, mode == anyHier && hier:
	case mode == anyHier:
		// <scheme:...> with a scheme nobody registered is more often
		// markup than a link
		var b [maxScheme]byte
		if !opaqueSchemes[string(lowerName(&b, u[:c]))] {
			return false
		}
	default: // "scheme:...", as in running text: C strings, labels
		if !s.bareScheme(u[:c], hier) {
			return false
		}
	}
	return usable(u, c, hier)
}

// hasControl reports whether u holds a C0 control, DEL or a C1 control
// (U+0080-U+009F).
func hasControl(u []byte) bool {
	for i, c := range u {
		if controlByte[c] && (c != 0xc2 || i+1 < len(u) && u[i+1] >= 0x80 && u[i+1] <= 0x9f) {
			return true
		}
	}
	return false
}

// controlByte marks the C0 controls, DEL and 0xC2, the first byte of a
// C1 control in UTF-8.
var controlByte = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t[0x7f], t[0xc2] = true, true
	return t
}()
