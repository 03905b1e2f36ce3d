package rewrite

import "strings"

// Wrapped writes u as RFC 1738's Appendix recommends for URLs in running
// text: "<URL:" u ">".
func Wrapped(u string) string { return "<URL:" + u + ">" }

// BreakWrapped cuts Wrapped(u) into lines for text of limited width: the
// first line may hold first bytes, the others width bytes (the caller
// writes the line breaks and any indentation or quote prefix before each
// continuation; a reader ignores that white space, RFC 1738 Appendix,
// RFC 3986 Appendix C). A line is never cut right after a "-" (a reader
// cannot tell it from a hyphen added by the typesetter) nor inside a %XX
// escape, nor inside the scheme or before the "://" (or ":") after it
// (a reader would not join "htt" and "p://"); no cut leaves fewer than
// MinWrapTail bytes (the closing ">" counted) after it, so that the last
// line is not a lone "a>". It is cut after "/", "?", "&", ";", "#", "=",
// "." or "," where possible, else anywhere else allowed. A piece that
// cannot be cut at an allowed point within the width (a run of hyphens)
// is left longer. Concatenated, the lines give Wrapped(u) back. Widths
// below 8 are taken as 8.
func BreakWrapped(u string, first, width int) []string {
	s := Wrapped(u)
	first, width = max(first, 8), max(width, 8)
	var lines []string
	room := first
	for len(s) > room {
		low := 1
		if lines == nil {
			low = len("<URL:") + schemeLen(u) // keep "<URL:" and the scheme with what follows
		}
		cut := breakPoint(s, room, low)
		if cut <= 0 || cut >= len(s) {
			break
		}
		lines = append(lines, s[:cut])
		s = s[cut:]
		room = width
	}
	return append(lines, s)
}

// MinWrapTail is the fewest bytes BreakWrapped leaves after a cut.
const MinWrapTail = 8

// schemeLen returns the length of u's scheme with the "://" or ":" after
// it; 1 (one character) when u does not start with a scheme.
func schemeLen(u string) int {
	i := schemeColon(u)
	switch {
	case i < 0:
		return 1
	case strings.HasPrefix(u[i:], "://"):
		return i + 3
	}
	return i + 1
}

// breakPoint returns where to cut s so that the first piece is at most
// room bytes and at least low, leaving MinWrapTail bytes or more after
// it: after a preferred character if one is
// found, else at the last allowed point; if none within room, the first
// allowed point after it; 0 if none at all.
func breakPoint(s string, room, low int) int {
	allowed := func(i int) bool { // cut between s[i-1] and s[i]
		if i < low || len(s)-i < MinWrapTail || s[i-1] == '-' {
			return false
		}
		// not inside %XX: s[i-1] or s[i-2] must not be the "%"
		if s[i-1] == '%' || i >= 2 && s[i-2] == '%' {
			return false
		}
		return true
	}
	anyCut := 0
	for i := min(room, len(s)-1); i >= low; i-- {
		if !allowed(i) {
			continue
		}
		switch s[i-1] {
		case '/', '?', '&', ';', '#', '=', '.', ',':
			return i
		}
		if anyCut == 0 {
			anyCut = i
		}
	}
	if anyCut > 0 {
		return anyCut
	}
	for i := room + 1; i < len(s); i++ {
		if allowed(i) {
			return i
		}
	}
	return 0
}
