package mailbox

import (
	"bytes"
	"slices"
)

// The decoders below give the bytes that decodeBody and convert give,
// without their maps: a part decoded in chunks (chunk.go) keeps only its
// text, and makes the map of the chunks around a range when it is asked
// (lazyMap.window), so that the first pass over it costs what decoding
// costs, not a span for each escape or character converted.

// decodeQP decodes a quoted-printable body as decodeBody does, onto
// out[:0]: the same bytes, up to the same line when limit >= 0, and the
// file offset of the first line with bad data (the body being at off), or
// -1.
func decodeQP(out, body []byte, off int64, limit int) ([]byte, int64) {
	out = out[:0]
	badAt := int64(-1)
	for i, line := range lines(body) {
		if limit >= 0 && len(out) > limit {
			break
		}
		if bytes.IndexByte(line, '=') < 0 {
			if full := trimEOL(line); len(full) == 0 || full[len(full)-1] != ' ' && full[len(full)-1] != '\t' {
				out = append(out, line...)
				continue
			}
		}
		var ok bool
		out, ok = appendQP(out, line)
		if !ok && badAt < 0 {
			badAt = off + int64(i)
		}
	}
	return out, badAt
}

// appendQP is appendQPSpans without the map, a byte at a time (the
// literal runs between escapes are short where escapes are many).
func appendQP(out, line []byte) ([]byte, bool) {
	full := trimEOL(line)
	eol := line[len(full):]
	body := trimBlanks(full)
	soft := false
	if n := len(body); n > 0 && body[n-1] == '=' {
		soft = true
		body = body[:n-1]
	}
	ok := true
	out = slices.Grow(out, len(body)+len(eol))
	o := len(out)
	buf := out[:o+len(body)]
	for i := 0; i < len(body); {
		c := body[i]
		if c == '=' {
			if i+2 < len(body) {
				if h, l := hexVal[body[i+1]], hexVal[body[i+2]]; h|l < 16 {
					buf[o] = h<<4 | l
					o++
					i += 3
					continue
				}
			}
			ok = false
		}
		buf[o] = c
		o++
		i++
	}
	out = buf[:o]
	if !soft {
		out = append(out, eol...)
	}
	return out, ok
}

// hexVal is the value of each hexadecimal digit, either case; 0xff for
// any other byte.
var hexVal = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := byte('0'); c <= '9'; c++ {
		t[c] = c - '0'
	}
	for c := byte('a'); c <= 'f'; c++ {
		t[c], t[c-'a'+'A'] = c-'a'+10, c-'a'+10
	}
	return t
}()

// convertTable is convert by a single-byte charset's table without the
// map, onto dst[:0]. (A character of such a charset is three bytes of
// UTF-8 at most: each is written as three, of which the next overwrites
// those past its length.)
func convertTable(dst []byte, tab *byteTable, data []byte) []byte {
	buf := slices.Grow(dst[:0], 3*len(data))[:3*len(data)]
	o := 0
	for _, c := range data {
		// without a branch (a byte that decodes to itself is its own
		// entry, of length 1): in Latin-1 text the bytes that do not come
		// at random, as a branch would guess them
		e := &tab.enc[c]
		_ = buf[o+2]
		buf[o], buf[o+1], buf[o+2] = e.b[0], e.b[1], e.b[2]
		o += int(e.n)
	}
	return buf[:o]
}
