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

// stopAt reports whether the character at t[i] ends a URL, and its size.
func stopAt(t []byte, i int) (bool, int) {
	c := t[i]
	if c < utf8.RuneSelf {
		return stopASCII[c], 1
	}
	r, n := utf8.DecodeRune(t[i:])
	switch {
	case r == utf8.RuneError && n == 1:
		return true, 1
	case unicode.IsSpace(r), r == '\u200b', r == '\ufeff':
		return true, n
	}
	switch r {
	case '‘', '’', '‚', '“', '”', '„', '«', '»', '‹', '›', '「', '」', '『', '』', '〈', '〉', '《', '》', '、', '。':
		return true, n
	}
	return false, n
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

func removeSpace(t []byte) []byte {
	out := make([]byte, 0, len(t))
	for i := 0; i < len(t); {
		if j := plainRun(t, i); j > i { // no space among ASCII: copy the run
			out = append(out, t[i:j]...)
			i = j
			continue
		}
		if n := spaceAt(t, i); n > 0 {
			i += n
			continue
		}
		out = append(out, t[i])
		i++
	}
	return out
}
