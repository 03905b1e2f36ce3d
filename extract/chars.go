package extract

import (
	"unicode"
	"unicode/utf8"
)

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlnum(c byte) bool { return isAlpha(c) || isDigit(c) }
func isSchemeChar(c byte) bool {
	return isAlnum(c) || c == '+' || c == '-' || c == '.'
}

// stopASCII marks the ASCII bytes that end a URL in running text.
var stopASCII = func() (t [128]bool) {
	for c := 0; c <= ' '; c++ {
		t[c] = true
	}
	t[0x7f] = true
	for _, c := range "<>\"`" {
		t[c] = true
	}
	return t
}()

// URL character classes of the ASCII bytes, for extent.
const (
	clPlain = iota // part of a URL
	clStop         // ends a URL (stopASCII)
	clOpen         // ( [ {
	clClose        // ) ] }
)

var urlClass = func() (t [128]uint8) {
	for c := range t {
		if stopASCII[c] {
			t[c] = clStop
		}
	}
	t['('], t['['], t['{'] = clOpen, clOpen, clOpen
	t[')'], t[']'], t['}'] = clClose, clClose, clClose
	return t
}()

// bracketIndex gives 0, 1, 2 for ( [ { and ) ] }.
func bracketIndex(c byte) int {
	switch c {
	case '(', ')':
		return 0
	case '[', ']':
		return 1
	}
	return 2
}

// asciiSpace marks the ASCII white space of spaceAt.
var asciiSpace = [utf8.RuneSelf]bool{' ': true, '\t': true, '\r': true, '\n': true, '\f': true, '\v': true}

// plainRun returns the end of the run of ASCII bytes that are no white
// space from t[i] on.
func plainRun(t []byte, i int) int {
	for i < len(t) && t[i] < utf8.RuneSelf && !asciiSpace[t[i]] {
		i++
	}
	return i
}

// spaceAt reports the size of the white space (ASCII or Unicode, such as
// NBSP and U+3000) at t[i], or 0.
func spaceAt(t []byte, i int) int {
	c := t[i]
	if c < utf8.RuneSelf {
		if asciiSpace[c] {
			return 1
		}
		return 0
	}
	r, n := utf8.DecodeRune(t[i:])
	if unicode.IsSpace(r) || r == '\u200b' || r == '\ufeff' {
		return n
	}
	return 0
}

// stopAt reports whether the character at t[i] ends a URL, and its size:
// white space, controls (C0, DEL and C1), invalid UTF-8, and the
// typographic and full-width punctuation that no URL in running text
// contains.
func stopAt(t []byte, i int) (bool, int) {
	c := t[i]
	if c < utf8.RuneSelf {
		return stopASCII[c], 1
	}
	r, n := utf8.DecodeRune(t[i:])
	switch {
	case r == utf8.RuneError && n == 1:
		return true, 1
	case r <= 0x9f: // C1 controls
		return true, n
	case unicode.IsSpace(r), r == '\u200b', r == '\ufeff':
		return true, n
	}
	return stopRune(r), n
}

// stopRune reports whether r, a rune past Latin-1's controls, is
// punctuation that ends a URL: typographic quotes and guillemets, CJK
// brackets and full stops, and the full-width forms of ASCII punctuation
// (U+FF01-U+FF0F, U+FF1A-U+FF20, U+FF3B-U+FF40, U+FF5B-U+FF65), which
// CJK text puts right after a link without a space.
func stopRune(r rune) bool {
	switch {
	case r >= 0xff01 && r <= 0xff0f, r >= 0xff1a && r <= 0xff20, r >= 0xff3b && r <= 0xff40, r >= 0xff5b && r <= 0xff65:
		return true
	case r >= 0x3001 && r <= 0x3003, r >= 0x3008 && r <= 0x3011, r >= 0x3014 && r <= 0x301f:
		return true // 、。〃 and the CJK brackets 〈〉《》「」『』【】〔〕〖〗〘〙〚〛 and quotes 〜〝〞〟
	}
	switch r {
	case '‘', '’', '‚', '“', '”', '„', '«', '»', '‹', '›', '…':
		return true
	}
	return false
}

func hasSpace(t []byte) bool {
	for i := 0; i < len(t); i++ {
		i = plainRun(t, i)
		if i == len(t) {
			return false
		}
		if t[i] < utf8.RuneSelf {
			return true // plainRun stops at ASCII only on white space
		}
		if spaceAt(t, i) > 0 {
			return true
		}
	}
	return false
}

func trimSpaceLeft(t []byte) int {
	i := 0
	for i < len(t) {
		n := spaceAt(t, i)
		if n == 0 {
			break
		}
		i += n
	}
	return i
}

func trimSpaceRight(t []byte) []byte {
	for len(t) > 0 {
		_, n := utf8.DecodeLastRune(t)
		if spaceAt(t, len(t)-n) == 0 {
			break
		}
		t = t[:len(t)-n]
	}
	return t
}
