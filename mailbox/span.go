package mailbox

import (
	"bytes"
	"sort"
)

// Spans map a part's decoded Text back to the bytes it was decoded from,
// both ways and exactly wherever the encoding allows.
//
// The map is a list of runs. Within an exact run, text and source advance
// together in units: each TextUnit bytes of text were decoded from RawUnit
// bytes of source, the first unit from the source byte at Raw. Unencoded
// ASCII or UTF-8 is one run of 1:1 units; a quoted-printable escape "=E9"
// that an ISO-8859-1 decoder turns into "é" is a 2:3 unit; an HTML
// reference "&amp;" a 1:5 unit. A new run begins only where the ratio
// changes or where source bytes were left out: a soft line break, the
// escape sequence of a stateful charset, an HTML tag, the line break that
// format=flowed joins. What was left out either decodes to nothing by
// itself (a soft line break, a charset escape: the range around it is still
// exact, since decoding its bytes gives the text) or does not (a tag, a
// joined line break: Cut is set, and no exact range crosses it). Text that
// has no source (the line break after an HTML block element, a quote
// prefix written back by format=flowed) is the Lead of the run after it,
// or a run of its own that is not exact.
//
// Source offsets are file offsets, except in base64 parts, where they are
// offsets in the decoded bytes of the part (Part.Decoded): a change there
// means decoding, splicing and encoding the part again. (The file offset
// of each encoded line is kept apart, as runs of lines of the same
// length: lineMarks.)
//
// A long part decoded in chunks (chunk.go) does not keep its map: its
// Spans are one span per chunk, not exact (the chunk's first text byte
// and the file offset of its first line, never Cut), and the methods
// below make the map of the chunks around the range asked again and
// answer from it, as they would from the whole part's map.

// Span is one run of the map from a part's Text to its source: the text
// from Text up to the next span's Text came from the source bytes from
// Raw on. When Exact, the run is made of whole units of TextUnit text
// bytes each decoded from RawUnit source bytes; otherwise Raw is only
// near: the start of the encoded line, or where inserted text stands.
type Span struct {
	Text  int
	Raw   int64
	Exact bool
	// Cut tells that the source bytes between the end of the previous
	// span and Raw were dropped by a step whose output they do not decode
	// to (an HTML tag, a line break joined by format=flowed).
	Cut bool
	// TextUnit and RawUnit are the unit sizes of an exact run; 0 means 1.
	TextUnit, RawUnit uint16
	// Lead is the number of text bytes at the start of the span that have
	// no source (inserted text, standing at Raw); the run proper, exact
	// or not, starts after them.
	Lead uint16
	// Shifted tells that the run's bytes decode to its text only in the
	// state that the bytes before them leave a stateful charset's decoder
	// in (ISO-2022 after a shift sequence, UTF-16 after a byte order
	// mark): a range that starts in it is not exact; one that starts
	// before it and runs into it may be.
	Shifted bool
}

// units returns the span's unit sizes.
func (s *Span) units() (int, int) {
	tu, ru := int(s.TextUnit), int(s.RawUnit)
	if tu == 0 {
		tu = 1
	}
	if ru == 0 {
		ru = 1
	}
	return tu, ru
}

// at maps text offset x, at or after s.Text and not past its end, to a
// source offset: exact when x falls between whole units of an exact run.
// Inside a unit it gives the unit's start; in a run that is not exact,
// Raw.
func (s *Span) at(x int) (int64, bool) {
	d := x - s.Text - int(s.Lead)
	if !s.Exact || d < 0 {
		return s.Raw, false
	}
	ru := int64(max(s.RawUnit, 1))
	if s.TextUnit <= 1 {
		return s.Raw + int64(d)*ru, true
	}
	tu := int(s.TextUnit)
	return s.Raw + int64(d/tu)*ru, d%tu == 0
}

// unitSize is a unit size as a Span keeps it (1 as 0), and whether it fits.
func unitSize(n int) (uint16, bool) {
	if n == 1 {
		return 0, true
	}
	return uint16(n), n > 1 && n <= 0xffff
}

// spanAt returns the index of the span that holds text offset x: the last
// whose Text is x or less; -1 if there is none.
func spanAt(spans []Span, x int) int {
	return sort.Search(len(spans), func(i int) bool { return spans[i].Text > x }) - 1
}

// mapRange maps the text range [a, b) through spans to source offsets,
// and tells whether decoding those source bytes gives exactly that text.
// An empty range maps to a point.
func mapRange(spans []Span, a, b int) (int64, int64, bool) {
	i := spanAt(spans, a)
	if i < 0 {
		return 0, 0, false
	}
	ra, ok := spans[i].at(a)
	if b <= a {
		return ra, ra, ok
	}
	if spans[i].Shifted {
		ok = false // its bytes alone decode from the initial state
	}
	j := i
	for j+1 < len(spans) && spans[j+1].Text < b {
		j++
		if !spans[j].Exact || spans[j].Cut || spans[j].Lead > 0 {
			ok = false
		}
	}
	rb, okb := spans[j].at(b)
	return ra, rb, ok && okb
}

// spanRaw maps an offset in the decoded bytes that spans describe to a
// source offset, and tells whether the mapping is exact; before the first
// span it is the part's start.
func spanRaw(p *Part, spans []Span, off int) (int64, bool) {
	i := spanAt(spans, off)
	if i < 0 {
		return p.RawStart, false
	}
	return spans[i].at(off)
}

// RawSpan maps the range [start, end) of Text to the file bytes it was
// decoded from. exact tells that decoding file[rawStart:rawEnd] by the
// part's transfer encoding and charset (and, in an HTML part, its
// character references) gives exactly Text[start:end]: then a splice of
// those bytes replaces that text and nothing else. The range is not exact
// when it starts or ends inside a unit (a character, an escape, a
// reference), crosses bytes a step dropped that do not decode to nothing
// (an HTML tag, a format=flowed line break: see AppendRawPieces), holds
// text that has no source, or lies in a base64 part: there rawStart and
// rawEnd are the part's body, RawStart and RawEnd, and DecodedSpan gives
// the range in the decoded bytes (Reencode).
func (p *Part) RawSpan(start, end int) (rawStart, rawEnd int64, exact bool) {
	if p.Reencode() {
		return p.RawStart, p.RawEnd, false
	}
	if start < 0 || end > len(p.Text) || start > end {
		return p.RawStart, p.RawStart, false
	}
	spans, mu := p.mapFor(start, end)
	if mu != nil {
		defer mu.Unlock()
	}
	if len(spans) == 0 {
		return p.RawStart, p.RawStart, false
	}
	return mapRange(spans, start, end)
}

// Reencode reports whether the part's text cannot be changed in place in
// the file: its body is base64, so a change means decoding the body
// (Decoded), replacing the bytes DecodedSpan gives, and encoding the body
// again in place of RawStart..RawEnd.
func (p *Part) Reencode() bool { return p.Encoding == "base64" && p.Text != nil }

// DecodedSpan maps the range [start, end) of Text to the part's
// transfer-decoded bytes (Decoded), with exact as for RawSpan but
// regardless of base64. For a quoted-printable part it reports false: use
// RawSpan.
func (p *Part) DecodedSpan(start, end int) (dStart, dEnd int, exact bool) {
	if start < 0 || end > len(p.Text) || start > end || p.Encoding == "quoted-printable" {
		return 0, 0, false
	}
	spans, mu := p.mapFor(start, end)
	if mu != nil {
		defer mu.Unlock()
	}
	if len(spans) == 0 {
		return 0, 0, false
	}
	a, b, ok := mapRange(spans, start, end)
	if p.Encoding != "base64" {
		a, b = a-p.RawStart, b-p.RawStart
	}
	return int(a), int(b), ok
}

// Decoded returns the part's body with its transfer encoding undone, as
// the walk decoded it (in a new buffer), or nil after Message.Release.
func (p *Part) Decoded() []byte {
	if p.body == nil {
		return nil
	}
	d, _, _, _, _ := decodeBody(nil, nil, nil, p.Encoding, p.body, p.RawStart, -1)
	if sameStart(d, p.body) {
		d = bytes.Clone(d)
	}
	return d
}

// RawRange is a range of file offsets.
type RawRange struct{ Start, End int64 }

// AppendRawPieces appends to dst the file ranges that Text[start:end] was
// decoded from, split where a step dropped bytes that do not decode to
// nothing (an HTML tag, a format=flowed line break), and reports whether
// each piece is exact in the sense of RawSpan. A link that format=flowed
// joined from two lines is two pieces. Base64 parts give no pieces.
func (p *Part) AppendRawPieces(dst []RawRange, start, end int) ([]RawRange, bool) {
	if p.Reencode() || start < 0 || end > len(p.Text) || start >= end {
		return dst, false
	}
	spans, mu := p.mapFor(start, end)
	if mu != nil {
		defer mu.Unlock()
	}
	if len(spans) == 0 {
		return dst, false
	}
	i := spanAt(spans, start)
	if i < 0 {
		return dst, false
	}
	ok := true
	from := start
	for {
		// the piece runs from from to the next cut, or to end
		j := i
		for j+1 < len(spans) && spans[j+1].Text < end && !spans[j+1].Cut {
			j++
		}
		to := end
		if j+1 < len(spans) && spans[j+1].Text < end {
			to = spans[j+1].Text
		}
		a, b, exact := mapRange(spans, from, to)
		ok = ok && exact
		dst = append(dst, RawRange{a, b})
		if to >= end {
			return dst, ok
		}
		i, from = j+1, to
	}
}

// AppendCuts appends to dst the offsets inside Text[start:end], in
// order, where a step dropped bytes that do not decode to nothing (an
// HTML tag, a format=flowed line break): where AppendRawPieces splits
// the range.
func (p *Part) AppendCuts(dst []int, start, end int) []int {
	if start < 0 || end > len(p.Text) || start >= end {
		return dst
	}
	spans, mu := p.mapFor(start, end)
	if mu != nil {
		defer mu.Unlock()
	}
	i := sort.Search(len(spans), func(i int) bool { return spans[i].Text > start })
	for ; i < len(spans) && spans[i].Text < end; i++ {
		if spans[i].Cut {
			dst = append(dst, spans[i].Text)
		}
	}
	return dst
}

// RawOffset maps an offset in Text to a file offset: exact where the text
// maps exactly (see RawSpan), for quoted-printable and base64 parts the
// start of the encoded line it came from.
func (p *Part) RawOffset(text int) int64 {
	spans, mu := p.mapFor(text, text)
	r := p.dataOffset(spans, text)
	if mu != nil {
		mu.Unlock()
	}
	if p.Encoding == "quoted-printable" {
		if k := r - p.RawStart; k >= 0 && k <= int64(len(p.body)) {
			return p.RawStart + int64(bytes.LastIndexByte(p.body[:k], '\n')+1)
		}
	}
	return r
}

// dataOffset maps offset i of what spans map (the text, or the bytes of
// a step before it) to a file offset; in a base64 part, whose spans map
// to decoded bytes, to the start of the line those came from.
func (p *Part) dataOffset(spans []Span, i int) int64 {
	r, _ := spanRaw(p, spans, i)
	if p.Encoding != "base64" {
		return r
	}
	if l, ok := lineStart(p.lines, int(r)); ok {
		return l
	}
	return p.RawStart
}

// TextOffset maps a file offset inside the part's body to an offset in
// Text: exact when the byte starts a unit of an exact run; otherwise the
// text offset of the run or unit it falls in, or of the next run when it
// falls in bytes that decoded to nothing. A base64 part maps the offset
// as one in its decoded bytes.
func (p *Part) TextOffset(raw int64) (text int, exact bool) {
	spans, after := p.Spans, -2
	if l := p.lazy; l != nil {
		// the chunk that holds raw and the one before it, whose last run
		// holds raw when the chunk's first bytes decode to nothing
		k := sort.Search(len(spans), func(i int) bool { return spans[i].Raw > raw }) - 1
		if k < 0 {
			return 0, false
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		var k1 int
		spans, k1 = l.window(l.from(p.body), max(k-1, 0), k+1)
		if l.lazyRuns {
			after = l.runEndOf(l.from(p.body), k1-1)
		} else {
			after = l.marks[k1-1].runEnd
		}
	}
	i := sort.Search(len(spans), func(i int) bool { return spans[i].Raw > raw }) - 1
	if i < 0 {
		return 0, false
	}
	// the last of the runs that start at or before raw
	s := &spans[i]
	end := len(p.Text)
	if i+1 < len(spans) {
		end = spans[i+1].Text
	} else if after >= 0 {
		end = after // where the next run starts, past the chunks decoded
	}
	if !s.Exact {
		return s.Text, false
	}
	tu, ru := s.units()
	k := (raw - s.Raw) / int64(ru)
	t := s.Text + int(s.Lead) + int(k)*tu
	if t >= end {
		// in bytes dropped after the run: the next run
		return min(end, len(p.Text)), false
	}
	return t, (raw-s.Raw)%int64(ru) == 0
}

// spanBuilder composes the map of a decoding step with the map of its
// input: the step tells which of its output bytes came from which input
// bytes (emit, copyRun) or from none (insert), and the builder writes the
// output's map to the source.
type spanBuilder struct {
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
	// shifted: what emit records next depends on a decoder's state
	// (Span.Shifted); set by convert
	shifted bool
	// ident: the input's map is one exact run of 1:1 units from text
	// offset 0 (unencoded ASCII or UTF-8, the most common input), and
	// raw0 its Raw; copyRun takes a shorter way there (newSpanBuilder
	// sets it; a builder without it takes the general way, to the same
	// spans)
	ident bool
	raw0  int64
	// identCut: ident, and skips are opaque; leadCut: so, and text is
	// inserted (inserted is set), and out was not empty at insert
	// (copyLead)
	identCut, leadCut bool
}

// newSpanBuilder returns a builder of the map of a step's output onto
// sdst[:0], from in, the map of its input.
func newSpanBuilder(in, sdst []Span, opaque bool) spanBuilder {
	b := spanBuilder{in: in, out: sdst[:0], opaque: opaque}
	if len(in) == 1 {
		s := &in[0]
		b.ident = s.Text == 0 && s.Exact && !s.Cut && s.TextUnit == 0 && s.RawUnit == 0 && s.Lead == 0 && !s.Shifted
		b.raw0 = s.Raw
		b.identCut = b.ident && opaque
	}
	return b
}

// locate returns the index of the input span that holds x.
func (b *spanBuilder) locate(x int) int {
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
func (b *spanBuilder) cutBefore(x int) bool {
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

// push appends the span {Text: t, Raw: r, Exact: exact, Cut: cut,
// TextUnit: tu, RawUnit: ru, Lead: lead, Shifted: shifted}, or extends
// the last one when it continues it. The fields come one by one and are
// written one by one (add): a Span built on the stack and copied whole
// is read back before its fields' stores have landed, which stalls every
// call.
func (b *spanBuilder) push(t int, r int64, exact, cut bool, tu, ru, lead uint16, shifted bool) {
	if b.inserted {
		// the text inserted before the span leads it
		b.inserted, b.leadCut = false, false
		if k := t - b.insAt; k > 0 {
			if k > 0xffff || lead > 0 {
				b.add(b.insAt, b.insRaw(), false, false, 0, 0, 0, false)
			} else {
				b.add(b.insAt, r, exact, cut, tu, ru, uint16(k), shifted)
				return
			}
		}
	}
	if n := len(b.out); n > 0 {
		l := &b.out[n-1]
		switch {
		case l.Text == t: // the last one is empty
			l.Raw, l.Exact, l.Cut, l.TextUnit, l.RawUnit, l.Lead, l.Shifted = r, exact, cut || l.Cut, tu, ru, lead, shifted
			return
		case cut || lead > 0:
			// a new run
		case exact:
			if l.Exact && tu == l.TextUnit && ru == l.RawUnit && shifted == l.Shifted {
				if lr, ok := l.at(t); ok && lr == r {
					return // it goes on
				}
			}
		case !l.Exact && r == l.Raw:
			return
		}
	}
	b.add(t, r, exact, cut, tu, ru, lead, shifted)
}

// pushIdent is push(t, r, true, cut, 0, 0, 0, false), for copyRun on an
// ident input: an exact run of 1:1 units, without lead or shift.
func (b *spanBuilder) pushIdent(t int, r int64, cut bool) {
	if b.inserted {
		b.inserted, b.leadCut = false, false
		if k := t - b.insAt; k > 0 {
			if k > 0xffff {
				b.add(b.insAt, b.insRaw(), false, false, 0, 0, 0, false)
			} else {
				b.add(b.insAt, r, true, cut, 0, 0, uint16(k), false)
				return
			}
		}
	}
	if n := len(b.out); n > 0 {
		l := &b.out[n-1]
		switch {
		case l.Text == t: // the last one is empty
			l.Raw, l.Exact, l.Cut, l.TextUnit, l.RawUnit, l.Lead, l.Shifted = r, true, cut || l.Cut, 0, 0, 0, false
			return
		case cut:
			// a new run
		case l.Exact && l.TextUnit == 0 && l.RawUnit == 0 && !l.Shifted:
			if d := t - l.Text - int(l.Lead); d >= 0 && l.Raw+int64(d) == r {
				return // it goes on
			}
		}
	}
	b.add(t, r, true, cut, 0, 0, 0, false)
}

// copyLead does copyRun(o, x, n), n > 0, where that is a new span after
// a cut from an ident input, led by inserted text: in htmlText the text
// after a block tag and its line break, most of its copies. It reports
// whether it did; small enough to be inlined there, where copyRun's call
// was most of the cost.
func (b *spanBuilder) copyLead(o, x, n int) bool {
	lead := o - b.insAt
	if !b.leadCut || x <= b.inEnd || uint(lead-1) >= 0xffff {
		return false
	}
	b.inserted, b.leadCut = false, false
	// the fields that vary are set in place (see push)
	b.out = append(b.out, Span{Exact: true, Cut: true})
	s := &b.out[len(b.out)-1]
	s.Text, s.Raw, s.Lead = b.insAt, b.raw0+int64(x), uint16(lead)
	b.inEnd = x + n
	return true
}

// continues reports whether the last span is an exact run of 1:1 units
// that runs on to text offset t at source offset r, so that
// pushIdent(t, r, false) would change nothing: a check small enough to
// be inlined where most pushes continue a run (quoted-printable lines).
func (b *spanBuilder) continues(t int, r int64) bool {
	n := len(b.out)
	if n == 0 || b.inserted {
		return false
	}
	l := &b.out[n-1]
	d := t - l.Text - int(l.Lead)
	return l.Exact && l.TextUnit == 0 && l.RawUnit == 0 && !l.Shifted && d >= 0 && l.Raw+int64(d) == r
}

// add appends a span, field by field (see push).
func (b *spanBuilder) add(t int, r int64, exact, cut bool, tu, ru, lead uint16, shifted bool) {
	n := len(b.out)
	if n < cap(b.out) {
		b.out = b.out[:n+1]
	} else {
		b.out = append(b.out, Span{})
	}
	s := &b.out[n]
	s.Text, s.Raw, s.Exact, s.Cut, s.TextUnit, s.RawUnit, s.Lead, s.Shifted = t, r, exact, cut, tu, ru, lead, shifted
}

// emit records that output [o, o+t) was decoded from input [x, x+n),
// as one unit.
func (b *spanBuilder) emit(o, t, x, n int) {
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
	var tu, ru uint16
	exact := false
	if ok && okb {
		var tok, rok bool
		tu, tok = unitSize(t)
		ru, rok = unitSize(int(rb - ra))
		exact = tok && rok
	}
	b.push(o, ra, exact, cut, tu, ru, 0, b.shifted || b.in[i].Shifted)
	b.i = j
	b.inEnd = x + n
}

// copyRun records that output [o, o+n) is input [x, x+n) as it stands.
func (b *spanBuilder) copyRun(o, x, n int) {
	if n <= 0 {
		return
	}
	if b.ident && x >= b.inEnd {
		// the copy is its source from x on: what copyRun does below, with
		// all that is known of the input taken out, and the two common
		// ways of pushIdent (after inserted text, after a cut) written out
		r := b.raw0 + int64(x)
		cut := len(b.out) > 0 && b.opaque && x > b.inEnd
		b.inEnd = x + n
		if b.inserted {
			if k := o - b.insAt; k > 0 && k <= 0xffff {
				b.inserted, b.leadCut = false, false
				b.add(b.insAt, r, true, cut, 0, 0, uint16(k), false)
				return
			}
		} else if cut && b.out[len(b.out)-1].Text != o {
			b.add(o, r, true, true, 0, 0, 0, false)
			return
		}
		b.pushIdent(o, r, cut)
		return
	}
	// the common case: the input span that held the last input used
	// holds this run too, in units of one text byte
	if i := b.i; i < len(b.in) && b.in[i].Text+int(b.in[i].Lead) < b.inEnd && x >= b.inEnd && b.in[i].TextUnit <= 1 &&
		(i+1 == len(b.in) || b.in[i+1].Text >= x+n) {
		s := &b.in[i]
		r := s.Raw
		if s.Exact {
			// x is past the span's Lead (x >= inEnd > Text+Lead)
			r += int64(x-s.Text-int(s.Lead)) * int64(max(s.RawUnit, 1))
		}
		b.push(o, r, s.Exact, len(b.out) > 0 && b.opaque && x > b.inEnd, s.TextUnit, s.RawUnit, 0, s.Shifted)
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
				b.push(ns.Text, ns.Raw, false, cut, 0, 0, 0, false)
				a += h
				ns.Text += h
				ns.Raw += int64(ru)
				ns.Cut = false
			}
		}
		if a < next {
			b.push(ns.Text, ns.Raw, ns.Exact, ns.Cut, ns.TextUnit, ns.RawUnit, 0, ns.Shifted)
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
func (b *spanBuilder) insert(o int) {
	if !b.inserted { // else more inserted text
		b.inserted, b.insAt, b.leadCut = true, o, b.identCut && len(b.out) > 0
	}
}

// insRaw is where inserted text stands in the source when it is a span
// of its own: where the last span maps insAt, or the input's start. (Out
// does not change from insert to the push that takes the inserted text,
// so this is what it was at insert.)
func (b *spanBuilder) insRaw() int64 {
	if n := len(b.out); n > 0 {
		r, _ := b.out[n-1].at(b.insAt)
		return r
	}
	if len(b.in) > 0 {
		return b.in[0].Raw
	}
	return 0
}

// seed makes the builder build the map of a step's output that goes on
// from output before it, whose input ended where this input starts, as
// the map of the whole output would go on from there: last is the last
// span of the map before, its Text counted from this output's start
// (below 0). It is the map's first span: a run that goes on from it
// extends it, as a run after skipped input is cut from it, and text
// inserted leads the run after it, as they would in the whole map. The
// input before must not end in inserted text (a piece ends on text).
func (b *spanBuilder) seed(last Span) {
	b.out = append(b.out[:0], last)
}

// finish returns the output map, with a span for inserted text at its end.
func (b *spanBuilder) finish() []Span {
	if b.inserted {
		b.inserted, b.leadCut = false, false
		b.add(b.insAt, b.insRaw(), false, false, 0, 0, 0, false)
	}
	return b.out
}

// rawAt maps input offset x to the source, for an AttrLink.
func (b *spanBuilder) rawAt(x int) int64 {
	if len(b.in) == 0 {
		return 0
	}
	r, _ := b.in[b.locate(x)].at(x)
	return r
}
