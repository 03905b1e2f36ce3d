package mailbox

import "bytes"

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

// appendQP is appendQPSpans without the map.
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
	for i := 0; i < len(body); {
		j := bytes.IndexByte(body[i:], '=')
		if j < 0 {
			out = append(out, body[i:]...)
			break
		}
		out = append(out, body[i:i+j]...)
		i += j
		if i+2 < len(body) && isHex(body[i+1]) && isHex(body[i+2]) {
			out = append(out, unhex(body[i+1])<<4|unhex(body[i+2]))
			i += 3
			continue
		}
		ok = false
		out = append(out, '=')
		i++
	}
	if !soft {
		out = append(out, eol...)
	}
	return out, ok
}

// convertTable is convert by a single-byte charset's table without the
// map, onto dst[:0].
func convertTable(dst []byte, tab *byteTable, data []byte) []byte {
	text := dst[:0]
	for x := 0; x < len(data); {
		r := x
		for r < len(data) && tab.same[data[r]] {
			r++
		}
		text = append(text, data[x:r]...)
		if r == len(data) {
			break
		}
		e := &tab.enc[data[r]]
		text = append(text, e.b[:e.n]...)
		x = r + 1
	}
	return text
}
