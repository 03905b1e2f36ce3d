package mailbox

// The span steps in a plain form, kept as the reference that
// spancompare_test.go holds the optimized ones to: every Span they write
// must stay the same. They share with the steps the functions that write
// no spans (lines, refLen,
// appendUnescaped, tagLinks ...).

import (
	"bytes"
	"slices"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/transform"
)

// refSpanBuilder composes the map of a decoding step with the map of its
// input: the step tells which of its output bytes came from which input
// bytes (emit, copyRun) or from none (insert), and the builder writes the
// output's map to the source.
type refSpanBuilder struct {
	in  []Span // the input's map
	out []Span
	i   int // in[i] holds the last input offset asked
	// inEnd is the input offset after the last input used.
	inEnd int
	// opaque: input the step skips does not decode to nothing (markup,
	// line structure), so the output runs on either side of it are cut.
	opaque bool
	// inserted: output from insAt on has no input (insert), and is to
	// lead the next span.
	inserted bool
	insAt    int
	insRaw   int64
	// shifted: what emit records next depends on a decoder's state
	// (Span.Shifted); set by convert
	shifted bool
}

// locate returns the index of the input span that holds x.
func (b *refSpanBuilder) locate(x int) int {
	if b.i >= len(b.in) || x < b.in[b.i].Text {
		b.i = max(spanAt(b.in, x), 0)
		return b.i
	}
	for b.i+1 < len(b.in) && b.in[b.i+1].Text <= x {
		b.i++
	}
	return b.i
}

// cutBefore reports whether output taken from input offset x on is cut
// from the output before it: the step skipped input and skips are
// opaque, or the input is cut (or not exact) between the last input used
// and x.
func (b *refSpanBuilder) cutBefore(x int) bool {
	if len(b.out) == 0 {
		return false
	}
	if b.opaque && x > b.inEnd {
		return true
	}
	k := min(b.i, len(b.in)-1)
	for k > 0 && b.in[k].Text > b.inEnd {
		k--
	}
	for ; k < len(b.in) && b.in[k].Text <= x; k++ {
		s := &b.in[k]
		if k > 0 && s.Text >= b.inEnd && (s.Cut || !s.Exact && s.Text < x) {
			return true
		}
	}
	return false
}

// push appends a span, or extends the last one when s continues it.
func (b *refSpanBuilder) push(s Span) {
	if b.inserted {
		// the text inserted before s leads it
		b.inserted = false
		if k := s.Text - b.insAt; k > 0 {
			if k > 0xffff || s.Lead > 0 {
				b.out = append(b.out, Span{Text: b.insAt, Raw: b.insRaw})
			} else {
				s.Text, s.Lead = b.insAt, uint16(k)
				b.out = append(b.out, s)
				return
			}
		}
	}
	if n := len(b.out); n > 0 {
		l := &b.out[n-1]
		switch {
		case l.Text == s.Text: // the last one is empty
			s.Cut = s.Cut || l.Cut
			*l = s
			return
		case s.Cut || s.Lead > 0:
			// a new run
		case s.Exact:
			if l.Exact && s.TextUnit == l.TextUnit && s.RawUnit == l.RawUnit && s.Shifted == l.Shifted {
				if r, ok := l.at(s.Text); ok && r == s.Raw {
					return // it goes on
				}
			}
		case !l.Exact && s.Raw == l.Raw:
			return
		}
	}
	b.out = append(b.out, s)
}

// emit records that output [o, o+t) was decoded from input [x, x+n),
// as one unit.
func (b *refSpanBuilder) emit(o, t, x, n int) {
	cut := b.cutBefore(x)
	i := b.locate(x)
	ra, ok := b.in[i].at(x)
	j := i
	for j+1 < len(b.in) && b.in[j+1].Text < x+n {
		j++
		if !b.in[j].Exact || b.in[j].Cut || b.in[j].Lead > 0 {
			ok = false
		}
	}
	rb, okb := b.in[j].at(x + n)
	s := Span{Text: o, Raw: ra, Cut: cut, Shifted: b.shifted || b.in[i].Shifted}
	if ok && okb {
		tu, tok := unitSize(t)
		ru, rok := unitSize(int(rb - ra))
		s.Exact, s.TextUnit, s.RawUnit = tok && rok, tu, ru
	}
	b.push(s)
	b.i = j
	b.inEnd = x + n
}

// copyRun records that output [o, o+n) is input [x, x+n) as it stands.
func (b *refSpanBuilder) copyRun(o, x, n int) {
	if n <= 0 {
		return
	}
	// the common case: the input span that held the last input used
	// holds this run too, in units of one text byte
	if i := b.i; i < len(b.in) && b.in[i].Text+int(b.in[i].Lead) < b.inEnd && x >= b.inEnd && b.in[i].TextUnit <= 1 &&
		(i+1 == len(b.in) || b.in[i+1].Text >= x+n) {
		s := &b.in[i]
		r, _ := s.at(x)
		b.push(Span{Text: o, Raw: r, Exact: s.Exact, Cut: len(b.out) > 0 && b.opaque && x > b.inEnd, TextUnit: s.TextUnit, RawUnit: s.RawUnit, Shifted: s.Shifted})
		b.inEnd = x + n
		return
	}
	cut := b.cutBefore(x)
	end := x + n
	i := b.locate(x)
	for {
		s := &b.in[i]
		next := end
		if i+1 < len(b.in) && b.in[i+1].Text < end {
			next = b.in[i+1].Text
		}
		a := max(x, s.Text)
		ns := Span{Text: o + a - x, Raw: s.Raw, Exact: s.Exact && s.Lead == 0, Cut: cut, TextUnit: s.TextUnit, RawUnit: s.RawUnit, Shifted: s.Shifted}
		if ns.Exact && a > s.Text {
			tu, ru := s.units()
			d := a - s.Text
			ns.Raw = s.Raw + int64(d/tu)*int64(ru)
			if r := d % tu; r != 0 {
				// the copy starts inside a unit: its rest is not exact
				h := min(tu-r, next-a)
				b.push(Span{Text: ns.Text, Raw: ns.Raw, Cut: cut})
				a += h
				ns.Text += h
				ns.Raw += int64(ru)
				ns.Cut = false
			}
		}
		if a < next {
			b.push(ns)
		}
		if next >= end {
			break
		}
		i++
		cut = b.in[i].Cut
	}
	b.i = i
	b.inEnd = end
}

// insert records that output from o on has no input, up to the next
// span pushed, which it leads.
func (b *refSpanBuilder) insert(o int) {
	if b.inserted {
		return // more inserted text
	}
	b.inserted, b.insAt = true, o
	if n := len(b.out); n > 0 {
		b.insRaw, _ = b.out[n-1].at(o)
	} else if len(b.in) > 0 {
		b.insRaw = b.in[0].Raw
	}
}

// finish returns the output map, with a span for inserted text at its end.
func (b *refSpanBuilder) finish() []Span {
	if b.inserted {
		b.inserted = false
		b.out = append(b.out, Span{Text: b.insAt, Raw: b.insRaw})
	}
	return b.out
}

// rawAt maps input offset x to the source, for an AttrLink.
func (b *refSpanBuilder) rawAt(x int) int64 {
	if len(b.in) == 0 {
		return 0
	}
	r, _ := b.in[b.locate(x)].at(x)
	return r
}

// htmlText turns HTML into text and collects the URLs of its attributes
// (href, src, cite, background, action, longdesc). The text is written to
// dst[:0], its spans to sdst[:0].
//
// It is written by hand rather than on golang.org/x/net/html's tokenizer,
// which reads every byte through a method call and took a fifth of a
// whole scan's instructions (docs/performance.md); this scanner jumps from
// "<" to "<" with bytes.IndexByte. It follows the HTML5 tokenizer where it
// matters for links: comments, doctypes and processing instructions are
// skipped, script and style contents are not text, a "<" that starts no
// tag is text, attribute values may be quoted with either quote and hold
// ">", and entities are decoded with x/net/html's UnescapeString. One
// deviation: in attribute values only references ending in ";" are
// decoded, so that "?a=1&copy=2" keeps its "&copy" (HTML5 leaves such a
// legacy reference alone before "=" too, but decodes it elsewhere).
// TestHTMLAgainstTokenizer compares it with the tokenizer's reading.
func refHTMLText(dst []byte, sdst []Span, p *Part, src []byte, spans []Span) ([]byte, []Span) {
	b := refSpanBuilder{in: spans, out: sdst[:0], opaque: true}
	out := dst[:0]
	text := func(from, to int) {
		if from >= to {
			return
		}
		t := src[from:to]
		if bytes.IndexByte(t, '&') < 0 {
			b.copyRun(len(out), from, to-from)
			out = append(out, t...)
			return
		}
		// a reference is a unit of its own, unless it stands for itself
		for len(t) > 0 {
			i := bytes.IndexByte(t, '&')
			if i < 0 {
				i = len(t)
			}
			if i > 0 {
				b.copyRun(len(out), from, i)
				out = append(out, t[:i]...)
				from, t = from+i, t[i:]
				continue
			}
			n := refLen(t)
			o := len(out)
			out = appendUnescaped(out, t[:n], false)
			if string(out[o:]) == string(t[:n]) {
				b.copyRun(o, from, n)
			} else {
				b.emit(o, len(out)-o, from, n)
			}
			from, t = from+n, t[n:]
		}
	}
	textStart := 0
	for pos := 0; pos < len(src); {
		j := bytes.IndexByte(src[pos:], '<')
		if j < 0 {
			break
		}
		k := pos + j
		if k+1 >= len(src) {
			break // a "<" at the end is text
		}
		switch c := src[k+1]; {
		case c == '!' || c == '?':
			text(textStart, k)
			if bytes.HasPrefix(src[k:], []byte("<!--")) {
				pos = commentEnd(src, k+4)
			} else {
				pos = skipPast(src, k+2, ">") // doctype, CDATA, bogus comment
			}
			textStart = pos
		case c == '/' && k+2 < len(src) && isLetter(src[k+2]):
			text(textStart, k)
			var nb [16]byte
			name, e := tagName(nb[:0], src, k+2)
			end, closed := forAttrs(src, e, func(_, _ []byte) {})
			pos, textStart = end, end
			if closed && isBlockTag(name) {
				b.insert(len(out))
				out = append(out, '\n')
			}
		case c == '/' && k+2 >= len(src):
			pos = len(src) // "</" at the end is text
		case c == '/':
			// "</>" is dropped, "</ x>" a bogus comment
			text(textStart, k)
			pos = skipPast(src, k+2, ">")
			textStart = pos
		case isLetter(c):
			text(textStart, k)
			var nb [16]byte
			name, e := tagName(nb[:0], src, k+1)
			found, base, end, closed, self := tagLinks(nil, src, e, name)
			pos, textStart = end, end
			if !closed {
				break // cut off by the end of the input: no tag
			}
			if isBlockTag(name) {
				b.insert(len(out))
				out = append(out, '\n')
			}
			if len(found) > 0 {
				r := b.rawAt(k)
				for _, a := range found {
					a.Text, a.Raw = len(out), r
					p.AttrLinks = append(p.AttrLinks, a)
				}
			}
			if base != "" {
				p.Base = base
			}
			if string(name) == "script" || string(name) == "style" {
				// its content is raw text up to its end tag: no tags inside,
				// and not text either, but after a "/>" (which HTML5 ignores
				// here) the tokenizer's reading gave it as text
				rt := rawTextEnd(src, pos, name)
				if self {
					text(pos, rt)
				}
				pos, textStart = rt, rt
			}
		default:
			pos = k + 1 // "<" that starts no tag: text
		}
	}
	text(textStart, len(src))
	return out, b.finish()
}

// appendQPSpans decodes one quoted-printable line (RFC 2045 §6.7), which
// starts at file offset at, onto out, and its map onto b. A soft line
// break drops the line ending; trailing white space is dropped (rule 3);
// an "=" not followed by two hex digits is kept as written (as the RFC's
// note on robustness suggests), and reported by ok=false. Literal bytes
// map one to one, an escape is a unit of three bytes, and what is dropped
// decodes to nothing, so that ranges across soft line breaks stay exact.
// It is written here rather than with mime/quotedprintable because that
// reader works on a stream and needs a bufio.Reader per use, and the walk
// decodes line by line to keep each line's offset.
func refAppendQPSpans(out []byte, b *refSpanBuilder, line []byte, at int64) ([]byte, bool) {
	full := trimEOL(line)
	eol := line[len(full):]
	body := trimBlanks(full)
	soft := false
	if n := len(body); n > 0 && body[n-1] == '=' {
		soft = true
		body = body[:n-1]
	}
	ok := true
	lit := false // the last byte out was a literal one
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '=' {
			// copy up to the next "=" in one go
			j := bytes.IndexByte(body[i:], '=')
			if j < 0 {
				j = len(body) - i
			}
			b.push(Span{Text: len(out), Raw: at + int64(i), Exact: true})
			out = append(out, body[i:i+j]...)
			i += j - 1
			lit = true
			continue
		}
		if i+2 < len(body) && isHex(body[i+1]) && isHex(body[i+2]) {
			b.push(Span{Text: len(out), Raw: at + int64(i), Exact: true, RawUnit: 3})
			out = append(out, unhex(body[i+1])<<4|unhex(body[i+2]))
			i += 2
			lit = false
			continue
		}
		ok = false
		b.push(Span{Text: len(out), Raw: at + int64(i), Exact: true})
		out = append(out, c)
		lit = true
	}
	if !soft && len(eol) > 0 {
		if !(lit && len(body) == len(full)) {
			// (after literal bytes that end the line the span goes on)
			sp := Span{Text: len(out), Raw: at + int64(len(full)), Exact: true}
			if len(body) < len(full) && len(eol) == 2 {
				// white space dropped before a CRLF: the CRLF is one unit,
				// since the bytes up to its CR alone would keep the space
				sp.TextUnit, sp.RawUnit = 2, 2
			}
			b.push(sp)
		}
		out = append(out, eol...)
	}
	return out, ok
}

// convert runs a charset decoder over data into one buffer, dst[:0], and
// the map of the text it writes into sdst[:0], a unit per character:
// bytes that decode to themselves are copied in runs, a single-byte
// charset's other bytes are read from a table, and any other decoder is
// given one character at a time (the shortest input it takes), so that
// what each character came from is known, stateful charsets included.
// An undecodable byte becomes U+FFFD, as a unit of its own.
func refConvert(dst []byte, sdst []Span, enc encoding.Encoding, data []byte, spans []Span) ([]byte, []Span) {
	b := refSpanBuilder{in: spans, out: sdst[:0]}
	text := dst[:0]
	if cm, ok := enc.(*charmap.Charmap); ok {
		tab := byteTableOf(cm)
		for x := 0; x < len(data); {
			r := x
			for r < len(data) && tab.same[data[r]] {
				r++
			}
			if r > x {
				b.copyRun(len(text), x, r-x)
				text = append(text, data[x:r]...)
				x = r
				continue
			}
			e := &tab.enc[data[x]]
			b.emit(len(text), int(e.n), x, 1)
			text = append(text, e.b[:e.n]...)
			x++
		}
		return text, b.finish()
	}
	t := enc.NewDecoder()
	ascii := asciiTransparent(enc)
	var fresh *encoding.Decoder // for stateful charsets: a character's bytes decoded alone
	var alone [64]byte
	if !ascii {
		fresh = enc.NewDecoder()
	}
	for x := 0; x < len(data); {
		if ascii && data[x] < utf8.RuneSelf {
			r := x + 1
			for r < len(data) && data[r] < utf8.RuneSelf {
				r++
			}
			b.copyRun(len(text), x, r-x)
			text = append(text, data[x:r]...)
			x = r
			continue
		}
		if cap(text)-len(text) < 64 {
			text = slices.Grow(text, 64+len(data)-x)
		}
		// one character: the shortest input that the decoder takes
		var nDst, nSrc int
		var err error
		for k := 1; ; k++ {
			end := min(x+k, len(data))
			nDst, nSrc, err = t.Transform(text[len(text):cap(text)], data[x:end], end == len(data))
			if nSrc == 0 && nDst == 0 && err == transform.ErrShortSrc && end < len(data) && k < 16 {
				continue
			}
			break
		}
		switch {
		case nSrc > 0 && nDst > 0:
			if fresh != nil {
				// a character that its bytes alone decode otherwise depends
				// on the state before it (a shift, a byte order mark)
				fresh.Reset()
				n, _, _ := fresh.Transform(alone[:], data[x:x+nSrc], true)
				b.shifted = string(alone[:n]) != string(text[len(text):len(text)+nDst])
			}
			b.emit(len(text), nDst, x, nSrc)
			b.shifted = false
		case nDst > 0:
			b.insert(len(text)) // output of no input (a decoder's flush)
		case nSrc == 0:
			// undecodable bytes: replace one and go on
			b.emit(len(text), 3, x, 1)
			text = append(text, "\uFFFD"...)
			x++
			t.Reset()
			continue
		}
		// nSrc > 0, nDst == 0: an escape sequence, which decodes to nothing
		text = text[:len(text)+nDst]
		x += nSrc
	}
	return text, b.finish()
}

// unflow undoes format=flowed (RFC 3676 §4): a line ending in a space is
// joined with the next line of the same quote depth; space-stuffing is
// removed; with DelSp=yes the space before the soft break goes too. The
// text is written to dst[:0], its spans to sdst[:0]: each line's content
// maps to where it stands, a joined line break cuts the map, and a quote
// prefix written back differently from the line's own has no source.
func refUnflow(dst []byte, sdst []Span, text []byte, spans []Span, delsp bool) ([]byte, []Span) {
	out := dst[:0]
	b := refSpanBuilder{in: spans, out: sdst[:0], opaque: true}
	prevFlowed := false
	prevDepth := -1
	for i, full := range lines(text) {
		line := trimEOL(full)
		eol := full[len(line):]
		depth := 0
		for depth < len(line) && line[depth] == '>' {
			depth++
		}
		cs := depth // where the content starts
		if cs < len(line) && line[cs] == ' ' {
			cs++ // space-stuffing, or the space after ">"
		}
		content := line[cs:]
		flowed := len(content) > 0 && content[len(content)-1] == ' ' && string(content) != "-- "
		if flowed && delsp {
			content = content[:len(content)-1]
		}
		from := i + cs // the input the line's output is copied from
		if !(prevFlowed && depth == prevDepth) && depth > 0 {
			// a new line: write its quote prefix back
			if cs == depth+1 {
				from = i // as it stands
			} else {
				b.insert(len(out))
			}
			for range depth {
				out = append(out, '>')
			}
			out = append(out, ' ')
		}
		n := len(out) - (i + cs - from) // where the copy starts in out
		out = append(out, content...)
		if !flowed {
			out = append(out, eol...)
		}
		b.copyRun(n, from, len(out)-n)
		prevFlowed, prevDepth = flowed, depth
	}
	return out, b.finish()
}

// refDecodeQP is the quoted-printable branch of decodeBody on
// refSpanBuilder.
func refDecodeQP(dst []byte, sdst []Span, body []byte, off int64, limit int) ([]byte, []Span) {
	out := dst[:0]
	b := refSpanBuilder{out: sdst[:0]}
	for i, line := range lines(body) {
		if limit >= 0 && len(out) > limit {
			break
		}
		out, _ = refAppendQPSpans(out, &b, line, off+int64(i))
	}
	if len(b.out) == 0 {
		b.out = append(b.out, Span{Text: 0, Raw: off, Exact: true})
	}
	return out, b.out
}
