// Package termesc makes text from archives safe to print on a terminal.
// It sits below report, audit and the command, which all print such text.
package termesc

import (
	"strings"
	"unicode/utf8"
)

// String makes s safe to print on a terminal: control characters (C0
// but tab, DEL, and C1), bytes that are not UTF-8 and the Unicode
// bidirectional overrides and isolates are written as Go escapes
// (\x1b, \n, \u009b, \u202e), so that text from an archive cannot move
// the cursor, change colours or reorder what is shown. Everything else,
// back slashes included, is left as it is: String is for people to read,
// not to be undone. It returns s itself when nothing needs escaping.
func String(s string) string {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' || c == 0x7f {
				return escapeFrom(s, i)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || escapedRune(r) {
			return escapeFrom(s, i)
		}
		i += size
	}
	return s
}

func escapedRune(r rune) bool {
	return r < 0x20 && r != '\t' || 0x7f <= r && r <= 0x9f ||
		0x202a <= r && r <= 0x202e || 0x2066 <= r && r <= 0x2069
}

func escapeFrom(s string, i int) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[s[i]>>4])
			b.WriteByte(hexDigits[s[i]&0xf])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < utf8.RuneSelf && escapedRune(r):
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[r>>4])
			b.WriteByte(hexDigits[r&0xf])
		case escapedRune(r):
			b.WriteString(`\u`)
			for shift := 12; shift >= 0; shift -= 4 {
				b.WriteByte(hexDigits[r>>shift&0xf])
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

const hexDigits = "0123456789abcdef"
