package mailbox

import (
	"bytes"
	"iter"
	"mime"
	"net/mail"
	"strings"
	"unsafe"
)

// Field is one header field.
type Field struct {
	Name  string // as written
	Value string // unfolded, not decoded
	// Offset is the file offset of the field's first byte; End of the byte
	// after its last line ending.
	Offset, End int64
}

// Header is a header block, in order.
type Header []Field

// fieldIs reports whether a field name is name, in ASCII case folding:
// field names are printable ASCII (RFC 5322 §3.6.8), and those that are
// not never match a name asked for.
func fieldIs(fname, name string) bool {
	if len(fname) != len(name) {
		return false
	}
	for i := 0; i < len(name); i++ {
		a, b := fname[i], name[i]
		if a == b {
			continue
		}
		if a|0x20 != b|0x20 || a|0x20 < 'a' || a|0x20 > 'z' {
			return false
		}
	}
	return true
}

// Get returns the value of the first field named name (case-insensitive).
func (h Header) Get(name string) string {
	for _, f := range h {
		if fieldIs(f.Name, name) {
			return f.Value
		}
	}
	return ""
}

// Values returns the values of every field named name.
func (h Header) Values(name string) []string {
	var v []string
	for _, f := range h {
		if fieldIs(f.Name, name) {
			v = append(v, f.Value)
		}
	}
	return v
}

// Decoded returns the value of field name with RFC 2047 encoded-words
// decoded, charsets included.
func (h Header) Decoded(name string) string { return decodeWords(h.Get(name)) }

var wordDecoder = &mime.WordDecoder{CharsetReader: charsetReader}

func decodeWords(s string) string {
	if !strings.Contains(s, "=?") {
		return s
	}
	d, err := wordDecoder.DecodeHeader(s)
	if err != nil {
		return s
	}
	return d
}

// parseHeader reads the header block at the start of raw, whose first byte
// is at file offset base. It is tolerant: a line without a colon is
// skipped with a problem when fields follow it (fieldsFollow), a "From "
// line too, and a URL line ("http://...") then is read as a continuation
// of the field before it (a broken fold); a line without a colon or a URL
// line that no field follows ends the block with a problem, and is the
// body's first line; a block larger than max ends there. It returns the header, the index of the body in raw and the
// problems.
func parseHeader(raw []byte, base int64, max int, part string) (Header, int, []Problem) {
	// The end of the header is found with one search for the blank line,
	// and the lines before it counted at once (an upper bound on the
	// fields); then the values are unfolded into one buffer of the
	// header's size, which is never written again and so becomes one
	// string without a copy: names and values are substrings of it, not
	// one allocation each.
	end, bodyStart := headerEnd(raw)
	tooLong := false
	if end >= max {
		// the first line starting at or after max, if any, ends it
		ls := -1
		if max <= 0 {
			ls = 0
		} else if k := bytes.IndexByte(raw[max-1:], '\n'); k >= 0 && max+k < len(raw) {
			ls = max + k
		}
		if ls >= 0 && ls <= end {
			tooLong, end, bodyStart = true, ls, ls
		}
	}
	if end == 0 {
		if tooLong {
			return Header{}, bodyStart, []Problem{{Offset: base, Part: part, Msg: "header block longer than the limit; the rest is read as body", Err: ErrTooLong}}
		}
		return Header{}, bodyStart, nil
	}
	nf := bytes.Count(raw[:end], newline) + 1
	buf := make([]byte, 0, end) // unfolding only shortens
	str := func(from int) string { return unsafe.String(unsafe.SliceData(buf[from:]), len(buf)-from) }
	h := make(Header, 0, min(nf, 32))
	var probs []Problem
	for i, full := range lines(raw[:end]) {
		line := trimEOL(full)
		next := base + int64(i+len(full))
		switch colon := nameColon(line); {
		case line[0] == ' ' || line[0] == '\t':
			if len(h) > 0 {
				f := &h[len(h)-1]
				from := len(buf) - len(f.Value)
				buf = append(buf, ' ')
				buf = append(buf, bytes.TrimSpace(line)...)
				f.Value, f.End = str(from), next
			} else {
				probs = append(probs, Problem{Offset: base + int64(i), Part: part, Msg: "header starts with a continuation line", Err: ErrBadHeader})
			}
		case colon > 0 && urlAfter(line, colon):
			// a URL, not a field: a broken fold when fields follow it,
			// else the blank line is missing
			if !fieldsFollow(raw[i+len(full) : end]) {
				return h, i, append(probs, Problem{Offset: base + int64(i), Part: part, Msg: msgNoBlankLine, Err: ErrNoBlankLine})
			}
			if len(h) == 0 {
				probs = append(probs, Problem{Offset: base + int64(i), Part: part, Msg: "URL line before the first header field, skipped", Err: ErrBadHeader})
				continue
			}
			f := &h[len(h)-1]
			probs = append(probs, Problem{Offset: base + int64(i), Part: part, Msg: "URL line inside the header without indentation; read as part of the field before it (" + f.Name + ")", Err: ErrBadHeader})
			from := len(buf) - len(f.Value)
			buf = append(buf, ' ')
			buf = append(buf, bytes.TrimSpace(line)...)
			f.Value, f.End = str(from), next
		case colon <= 0:
			if bytes.HasPrefix(line, []byte("From ")) || bytes.HasPrefix(line, []byte(">From ")) {
				probs = append(probs, Problem{Offset: base + int64(i), Part: part, Msg: "\"From \" line inside the header, skipped", Err: ErrBadHeader})
			} else if fieldsFollow(raw[i+len(full) : end]) {
				probs = append(probs, Problem{Offset: base + int64(i), Part: part, Msg: "header line without a colon, skipped", Err: ErrBadHeader})
			} else {
				// text: the header ended at it without a blank line
				return h, i, append(probs, Problem{Offset: base + int64(i), Part: part, Msg: msgNoColonEnd, Err: ErrNoBlankLine})
			}
		default:
			name := len(buf)
			buf = append(buf, line[:colon]...)
			value := len(buf)
			buf = append(buf, bytes.TrimSpace(line[colon+1:])...)
			h = append(h, Field{Name: str(name)[:colon], Value: str(value), Offset: base + int64(i), End: next})
		}
	}
	if tooLong {
		probs = append(probs, Problem{Offset: base + int64(end), Part: part, Msg: "header block longer than the limit; the rest is read as body", Err: ErrTooLong})
	}
	return h, bodyStart, probs
}

var newline = []byte{'\n'}

// msgNoBlankLine and msgNoColonEnd are the problems of a header block
// that ends at a line that is no field (a URL, a line of text) instead of
// at a blank line.
const (
	msgNoBlankLine = "header ended without a blank line at a URL line; read as body from here"
	msgNoColonEnd  = "header line without a colon and no field after it: header ended without a blank line; read as body from here"
)

// lookAhead bounds the lines fieldsFollow reads after a line without a
// colon: lookAhead lines that are not continuation lines, lookAheadAll
// lines in all.
const (
	lookAhead    = 4
	lookAheadAll = 64
)

// urlAfter reports whether the colon at line[colon] ends a URL's scheme
// (RFC 3986 §3.1: a letter, then letters, digits, "+", "-" and ".") and
// "//" follows it: "http://..." is a line of text, never a field named
// "http".
func urlAfter(line []byte, colon int) bool {
	if !bytes.HasPrefix(line[colon+1:], []byte("//")) || !isAlpha(line[0]) {
		return false
	}
	for _, c := range line[1:colon] {
		if !isAlpha(c) && (c < '0' || c > '9') && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// fieldsFollow reports whether a header field (a URL line is none) comes
// within the next lookAhead lines of rest (the header block after a line
// without a colon or a URL line; continuation lines not counted, but
// lookAheadAll lines at most): the line was then a stray line among the
// fields, or a broken fold; else it is the first line of a body that no
// blank line set apart.
func fieldsFollow(rest []byte) bool {
	n, all := 0, 0
	for _, full := range lines(rest) {
		if all++; all > lookAheadAll {
			return false
		}
		line := trimEOL(full)
		if len(line) == 0 || line[0] == ' ' || line[0] == '\t' {
			continue
		}
		if n++; n > lookAhead {
			return false
		}
		if colon := nameColon(line); colon > 0 && !urlAfter(line, colon) {
			return true
		}
	}
	return false
}

// headerEnd returns the index of the blank line that ends the header at
// the start of raw and the index of the body after it; both are len(raw)
// if there is none.
func headerEnd(raw []byte) (end, body int) {
	if len(raw) > 0 && raw[0] == '\n' {
		return 0, 1
	}
	if len(raw) > 1 && raw[0] == '\r' && raw[1] == '\n' {
		return 0, 2
	}
	if len(raw) == 1 && raw[0] == '\r' {
		return 0, 1
	}
	end, body = len(raw), len(raw)
	if i := bytes.Index(raw, []byte("\n\n")); i >= 0 {
		end, body = i+1, i+2
	}
	// a CRLF blank line before it
	if head := raw[:min(end+1, len(raw))]; bytes.IndexByte(head, '\r') >= 0 {
		if i := bytes.Index(head, []byte("\n\r\n")); i >= 0 {
			end, body = i+1, i+3
		}
	}
	// a last line of a lone CR
	if n := len(raw); n > 0 && end == n && raw[n-1] == '\r' && (n == 1 || raw[n-2] == '\n') {
		end = n - 1
	}
	return end, body
}

// nameColon returns the index of the colon that ends a field name at the
// start of line, or -1 if a byte that no name has (RFC 5322 §3.6.8: control
// characters, space, non-ASCII) comes first.
func nameColon(line []byte) int {
	for i, c := range line {
		if c == ':' {
			return i
		}
		if c <= ' ' || c >= 0x7f {
			return -1
		}
	}
	return -1
}

func validName[T string | []byte](b T) bool {
	for i := 0; i < len(b); i++ {
		if c := b[i]; c <= ' ' || c >= 0x7f {
			return false
		}
	}
	return true
}

// lines yields the lines of b with their endings, and the index of each
// in b. A last line without an ending is yielded too.
func lines(b []byte) iter.Seq2[int, []byte] {
	return func(yield func(int, []byte) bool) {
		for i := 0; i < len(b); {
			next := len(b)
			if j := bytes.IndexByte(b[i:], '\n'); j >= 0 {
				next = i + j + 1
			}
			if !yield(i, b[i:next]) {
				return
			}
			i = next
		}
	}
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

// fillSummary sets the message's MessageID, Date, From, Subject and
// Newsgroups from its header. Dates and addresses in their common forms
// are read directly; anything else goes through net/mail (with RFC 2047
// decoding), then through the older layouts of parseOldDate.
func (m *Message) fillSummary() {
	// one pass over the fields for the five, the first of each
	var id, date, from, subject, groups string
	var seen uint8
	for i := range m.Header {
		f := &m.Header[i]
		var slot *string
		var bit uint8
		switch len(f.Name) {
		case 4:
			if fieldIs(f.Name, "Date") {
				slot, bit = &date, 1
			} else if fieldIs(f.Name, "From") {
				slot, bit = &from, 2
			}
		case 7:
			if fieldIs(f.Name, "Subject") {
				slot, bit = &subject, 4
			}
		case 10:
			if fieldIs(f.Name, "Message-ID") {
				slot, bit = &id, 8
			} else if fieldIs(f.Name, "Newsgroups") {
				slot, bit = &groups, 16
			}
		}
		if slot != nil && seen&bit == 0 {
			*slot, seen = f.Value, seen|bit
		}
	}
	m.MessageID = normalizeID(id)
	if date != "" {
		m.Date, _ = parseDate(date)
	}
	if from != "" {
		m.From = parseFrom(from)
	}
	m.Subject = decodeWords(subject)
	if ng := groups; ng != "" {
		m.Newsgroups = strings.Join(strings.Fields(strings.ReplaceAll(ng, ",", " ")), ",")
	}
}

var addrParser = &mail.AddressParser{WordDecoder: wordDecoder}

// byte sets for the fast paths: strings.ContainsAny builds its set on
// every call
var (
	addrSpecials = byteSet("\"(),;\\")
	idSpecials   = byteSet(" \t<>")
	commentChars = byteSet("()")
)

func byteSet(chars string) (t [256]bool) {
	for i := 0; i < len(chars); i++ {
		t[chars[i]] = true
	}
	return t
}

func hasAny(s string, set *[256]bool) bool {
	for i := 0; i < len(s); i++ {
		if set[s[i]] {
			return true
		}
	}
	return false
}

// parseFrom returns the first address of a From field as "Name <addr>" or
// "addr", or the decoded field itself when it is no address.
func parseFrom(v string) string {
	// the common simple forms: "addr" and "Name <addr>"
	if !hasAny(v, &addrSpecials) && !strings.Contains(v, "=?") {
		if i := strings.IndexByte(v, '<'); i >= 0 && strings.HasSuffix(v, ">") && strings.Count(v, "<") == 1 {
			name, addr := strings.TrimSpace(v[:i]), v[i+1:len(v)-1]
			if strings.Contains(addr, "@") && !strings.ContainsAny(addr, " \t") {
				if name == "" {
					return addr
				}
				return name + " <" + addr + ">"
			}
		} else if strings.Count(v, "@") == 1 && !hasAny(v, &idSpecials) {
			return v
		}
	}
	if as, err := addrParser.ParseList(v); err == nil && len(as) > 0 {
		if as[0].Name != "" {
			return as[0].Name + " <" + as[0].Address + ">"
		}
		return as[0].Address
	}
	return decodeWords(v)
}

func normalizeID(s string) string {
	// the common form first: "<id>" with nothing else
	if t := strings.TrimSpace(s); len(t) > 2 && t[0] == '<' && t[len(t)-1] == '>' &&
		!hasAny(t[1:len(t)-1], &idSpecials) && !hasAny(t, &commentChars) {
		return t[1 : len(t)-1]
	}
	s = strings.TrimSpace(stripComments(s))
	if i := strings.IndexByte(s, '<'); i >= 0 {
		if j := strings.IndexByte(s[i:], '>'); j >= 0 {
			s = s[i+1 : i+j]
		} else {
			s = s[i+1:]
		}
	}
	return strings.Join(strings.Fields(s), "")
}

func stripComments(s string) string {
	if !strings.Contains(s, "(") {
		return s
	}
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}
