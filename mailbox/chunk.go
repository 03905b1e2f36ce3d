package mailbox

import (
	"bytes"
	"sort"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/transform"
)

// A long text part whose decoding starts afresh at every line, as
// written, quoted-printable or base64, in UTF-8, US-ASCII, a single-byte
// charset or one of the multibyte charsets without state but GB18030
// (Shift_JIS, EUC-JP, EUC-KR, GBK, Big5), is decoded in chunks of whole
// lines (in quoted-printable, chunks end at a hard line break, never at a
// soft one, which may fall inside a character; in base64, where no
// character is carried over to the next line and the decoded bytes end
// where a character does): each chunk's transfer encoding and charset
// are undone by the same code as a whole part's, into small buffers
// reused from chunk to chunk, and only the text is kept. The map from
// text to file is not kept: the part holds where each chunk starts (a
// span per chunk in Part.Spans, not exact, and a chunkMark), and RawSpan,
// TextOffset and the rest decode the chunks around the range asked
// again, with their map, and read it there (the last chunks decoded are
// kept for the next question). The answers are those of the whole part's
// map: decoding starts afresh at a line of the decoded bytes, and that
// map is the same runs cut at the chunks' starts, which the marks join
// again (chunkMark.carry, chunkMark.runEnd).
//
// An HTML or format=flowed part has a last step, its stage, whose
// reading carries from line to line (a tag, a comment or a script over
// several lines, a flowed line joined to the next): the stage is run on
// pieces of the text that end at the end of a chunk where its reading is
// not open (htmlTextState, unflowState), a chunk after which it is open
// joining the next, and the map of each piece is built from the whole
// map's last span before it (spanBuilder.seed), so that it is the whole
// map's from there on. A base64 part whose decoding cannot be cut where
// a character ends may still run its stage in pieces over its text
// decoded whole (stagedText).
//
// The text, the problems reported, the attribute links and every answer
// are the same as for the part decoded whole (TestChunkedSameAsWhole,
// TestChunkedStagesSameAsWhole, FuzzChunked, FuzzChunkedStages); what is
// saved is the whole part's map (two spans, 64 bytes, for each escape or
// each character a charset converts: 40 MB for a 47 MiB part with one a
// line; four spans, 128 bytes, a line of HTML) and the transfer-decoded
// bytes before the charset. ISO-2022-JP as written is decoded in chunks
// that end where the decoder is back in ASCII (jisClean). Parts in
// GB18030 (whose four-byte characters hold ASCII digits), in UTF-16 and
// in ISO-2022-JP encoded are decoded whole.

// chunkMin is the body length above which a part is decoded in chunks
// where it can be; chunkSize the raw bytes a chunk holds at least (it
// ends at the end of a line). Tests lower them.
var (
	chunkMin  = 1 << 20
	chunkSize = 64 << 10
)

// A part without a stage whose charset is UTF-8 (or US-ASCII, or not
// known) or a single-byte one is decoded in chunks from lazyMin bytes on,
// in chunks of lazyChunk raw bytes at least, and its first pass makes no
// map at all (decodeQP, convertTable): the map of a chunk is made when a
// range in it is asked, most often for a link, and a short chunk costs
// little to decode again. Nor are the marks' carries kept (the map of a
// chunk alone gives the answers the whole map gives: a run that goes on
// from the chunk before maps the chunk's bytes as its first piece does),
// and where the run that holds a chunk's last byte ends is found when
// TextOffset asks (lazyMap.runEndOf). Tests lower them.
var (
	lazyMin   = 256
	lazyChunk = 256
)

// runUnknown is a chunkMark.runEnd not found yet.
const runUnknown = -2

// lazyCharset tells the charsets of the parts decoded in chunks without
// their maps: none (UTF-8, US-ASCII, unknown) and the single-byte ones.
func lazyCharset(enc encoding.Encoding) bool {
	_, single := enc.(*charmap.Charmap)
	return enc == nil || single
}

// chunkMark is where a chunk starts: in the body, in the
// transfer-decoded bytes and in the text (counted past the limit), and
// the span of the whole part's map that holds the chunk's first text
// byte (its Text and Raw from before the chunk when a run goes on from
// the chunk before; Raw as decoded, not shifted), and the text offset
// where the run that holds the chunk's last byte ends in that map, -1 if
// it runs to the end.
//
// In a part with a stage (HTML, format=flowed: see stage), text is
// counted in the stage's output and src in its input, and carry is the
// last span of the whole map before the chunk, which seeds the stage's
// map of the chunk (spanBuilder.seed).
type chunkMark struct {
	raw, data, text, src int
	carry                Span
	runEnd               int
	// carryOK: carry is known (lazyRuns: found when asked, carryOf)
	carryOK bool
}

// A stage is the last step of a part decoded in chunks, if it has one:
// HTML (htmlTextState) or format=flowed (unflowState), run on a piece of
// the text at a time. A piece ends where the step does not end open (see
// those), at the end of a chunk of lines; a chunk after which it is open
// joins the next, up to stageMax bytes of input, past which the part is
// decoded whole after all. seed is nil for the part's first piece.
type stage func(dst []byte, sdst []Span, p *Part, src []byte, spans []Span, seed *Span) ([]byte, []Span, bool)

// htmlStage is htmlTextState as a stage.
func htmlStage(dst []byte, sdst []Span, p *Part, src []byte, spans []Span, seed *Span) ([]byte, []Span, bool) {
	return htmlTextState(dst, sdst, p, src, spans, seed)
}

// flowedStage returns unflowState as a stage.
func flowedStage(delsp bool) stage {
	return func(dst []byte, sdst []Span, _ *Part, src []byte, spans []Span, seed *Span) ([]byte, []Span, bool) {
		return unflowState(dst, sdst, src, spans, delsp, seed)
	}
}

// stageMax is the most input a stage's piece may hold (an HTML comment,
// a script or a paragraph of flowed lines that long) before the part is
// decoded whole instead. Tests lower it.
var stageMax = 4 << 20

// lazyMap is the map of a part decoded in chunks.
type lazyMap struct {
	qp    bool              // the body is quoted-printable (else as written)
	b64   bool              // the body is base64: spans map to decoded bytes
	cm    encoding.Encoding // the charset the map converts from; nil: none
	off   int64             // the body's file offset when decoded
	limit int               // the limit it was decoded with
	stage stage             // the last step, nil if none
	// lazyRuns: the marks have no carries, and runEnd is found when
	// asked (see lazyMin)
	lazyRuns bool
	// src is the text the stage reads when it is not the body decoded
	// again but kept whole (stagedText): marks' raw are offsets in it
	src   []byte
	marks []chunkMark
	// fix is the composition of the shifts applied to the part since
	// (Part.shift), nil when none; inexact is set when a hole took bytes
	// of the part (fillHoles), whose map is then not exact anywhere.
	fix     func(int64) int64
	inexact bool

	mu sync.Mutex
	// the map of chunks [w0, w1), when wok, and buffers for the next
	wok        bool
	w0, w1     int
	wspans     []Span
	dbuf, tbuf []byte
	dsp        []Span
	// with a stage: its output, the map of its input, and a part for the
	// attribute links found again
	sbuf    []byte
	lsp     []Span
	scratch Part
}

// from returns what the map is decoded from: the body, or the text kept.
func (l *lazyMap) from(body []byte) []byte {
	if l.src != nil {
		return l.src
	}
	return body
}

// shift records that f moves the part's file offsets.
func (l *lazyMap) shift(f func(int64) int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if g := l.fix; g != nil {
		l.fix = func(v int64) int64 { return f(g(v)) }
	} else {
		l.fix = f
	}
	l.wok = false
}

// holed records that a hole took bytes of the part.
func (l *lazyMap) holed() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inexact, l.wok = true, false
}

// textChunks returns the chunks [k0, k1) whose text holds [a, b): from
// the last that starts at or before a to the last that starts before b.
func (l *lazyMap) textChunks(a, b int) (int, int) {
	at := func(x int) int {
		return sort.Search(len(l.marks), func(i int) bool { return l.marks[i].text > x }) - 1
	}
	k0 := max(at(a), 0)
	k1 := k0
	if b > a {
		k1 = max(at(b-1), k0)
	}
	return k0, k1 + 1
}

// window returns the map of chunks [k0, k1) of body, or of chunks around
// them kept from before, and the chunk after the last it maps. l.mu is
// held.
func (l *lazyMap) window(body []byte, k0, k1 int) ([]Span, int) {
	if l.wok && l.w0 <= k0 && k1 <= l.w1 {
		return l.wspans, l.w1
	}
	if cap(l.wspans) > 1<<14 {
		l.wspans = nil // from a long window: not kept for short ones
	}
	m := &l.marks[k0]
	end := len(body)
	if k1 < len(l.marks) {
		end = l.marks[k1].raw
	}
	raw := body[m.raw:end]
	at := l.off + int64(m.raw)
	var data []byte
	var ds []Span
	if l.qp {
		data, ds, _, _, _ = decodeBody(l.dbuf, l.dsp, nil, "quoted-printable", raw, at, l.limit-m.data)
		l.dbuf = data
	} else if l.b64 {
		// a chunk of base64 starts where no character is carried over
		d := b64Decoder{badAt: -1, lastChar: -1, noLines: true}
		data = d.decode(l.dbuf[:0], raw, at, m.data, l.limit-m.data)
		l.dbuf = data
		ds = append(l.dsp[:0], Span{Raw: int64(m.data), Exact: true})
	} else {
		data, ds = raw, append(l.dsp[:0], Span{Raw: at, Exact: true})
	}
	l.dsp = ds
	var spans []Span
	sdst := l.wspans // where the map goes: the stage's input's, with one
	if l.stage != nil {
		sdst = l.lsp
	}
	text := data
	if l.cm != nil {
		if c := l.limit + 16 - m.data; len(data) > c {
			data = data[:c]
		}
		l.tbuf, spans = convert(l.tbuf, sdst, l.cm, data, ds)
		text = l.tbuf
	} else {
		spans = append(sdst[:0], ds...)
	}
	if l.stage != nil {
		// the stage's input as it was cut at the limit, and its map
		l.lsp = spans
		if c := l.limit - m.src; len(text) > c {
			text = text[:max(c, 0)]
		}
		var seed *Span
		if k0 > 0 {
			s := m.carry
			s.Text -= m.text
			seed = &s
		}
		l.scratch.AttrLinks = l.scratch.AttrLinks[:0]
		l.sbuf, spans, _ = l.stage(l.sbuf, l.wspans, &l.scratch, text, spans, seed)
	}
	for i := range spans {
		spans[i].Text += m.text
	}
	if n := len(spans); n > 0 && k0 > 0 && l.stage == nil && (!l.lazyRuns || l.fix != nil) {
		// the run that goes on from before the chunk starts where it
		// starts (which tells only once a shift moves its bytes apart)
		carry := m.carry
		if l.lazyRuns {
			carry = l.carryOf(body, k0)
		}
		if carry.Text < spans[0].Text {
			spans[0].Text, spans[0].Raw = carry.Text, carry.Raw
		}
	}
	if l.fix != nil || l.inexact {
		for i := range spans {
			if l.fix != nil {
				spans[i].Raw = l.fix(spans[i].Raw)
			}
			if l.inexact {
				spans[i].Exact = false
			}
		}
	}
	l.wspans, l.wok, l.w0, l.w1 = spans, true, k0, k1
	if k1-k0 > 4 {
		l.dbuf, l.tbuf, l.dsp, l.sbuf, l.lsp = nil, nil, nil, nil, nil // nor their buffers
	}
	return spans, k1
}

// runEndOf returns chunkMark.runEnd of mark k of a map with lazyRuns:
// the text offset where the run that holds the mark's last text byte
// ends, -1 if it runs to the end; found by making the map of the marks
// from k on, as many as it takes, and kept. l.mu is held.
func (l *lazyMap) runEndOf(body []byte, k int) int {
	m := &l.marks[k]
	if m.runEnd != runUnknown {
		return m.runEnd
	}
	m.runEnd = -1
	if k+1 == len(l.marks) {
		return -1
	}
	last := l.marks[k+1].text - 1
	for n := 2; ; n *= 2 {
		k1 := min(k+n, len(l.marks))
		spans := l.spansOf(body, k, k1)
		if i := spanAt(spans, last); i >= 0 && i+1 < len(spans) {
			m.runEnd = spans[i+1].Text
			break
		}
		if k1 == len(l.marks) {
			break
		}
	}
	return m.runEnd
}

// carryOf returns chunkMark.carry of mark k of a map with lazyRuns: the
// span of the whole map that holds the mark's first text byte, its Text
// and Raw from where its run starts, before any shift; found by making
// the map of the marks before it as far back as the run goes, and kept.
// l.mu is held.
func (l *lazyMap) carryOf(body []byte, k int) Span {
	m := &l.marks[k]
	if m.carryOK {
		return m.carry
	}
	f := l.spansOf(body, k, k+1)[0]
	m.carry, m.carryOK = f, true
	if k == 0 {
		return f
	}
	// the whole map's last span before the mark: the last of the mark
	// before, or, if that is one run, that mark's carry
	before := l.spansOf(body, k-1, k)
	prev := before[len(before)-1]
	if len(before) == 1 {
		prev = l.carryOf(body, k-1)
	}
	if spansContinue(&prev, &f) {
		m.carry = prev
	}
	return m.carry
}

// spansOf makes the map of marks [k0, k1) of a part without a stage, in
// buffers of its own, its Text counted from the part's start and its Raw
// as decoded.
func (l *lazyMap) spansOf(body []byte, k0, k1 int) []Span {
	m := &l.marks[k0]
	end := len(body)
	if k1 < len(l.marks) {
		end = l.marks[k1].raw
	}
	raw := body[m.raw:end]
	at := l.off + int64(m.raw)
	var data []byte
	var spans []Span
	switch {
	case l.qp:
		data, spans, _, _, _ = decodeBody(nil, nil, nil, "quoted-printable", raw, at, l.limit-m.data)
	case l.b64:
		d := b64Decoder{badAt: -1, lastChar: -1, noLines: true}
		data = d.decode(nil, raw, at, m.data, l.limit-m.data)
		spans = []Span{{Raw: int64(m.data), Exact: true}}
	default:
		data, spans = raw, []Span{{Raw: at, Exact: true}}
	}
	if l.cm != nil {
		if c := l.limit + 16 - m.data; len(data) > c {
			data = data[:c]
		}
		_, spans = convert(nil, nil, l.cm, data, spans)
	}
	for i := range spans {
		spans[i].Text += m.text
	}
	return spans
}

// mapFor returns the map that holds the text range [a, b) (the part's
// spans, or for a part decoded in chunks those of the chunks around it),
// and, for the latter, the lock held while it is read.
func (p *Part) mapFor(a, b int) ([]Span, *sync.Mutex) {
	l := p.lazy
	if l == nil {
		return p.Spans, nil
	}
	l.mu.Lock()
	k0, k1 := l.textChunks(a, b)
	spans, _ := l.window(l.from(p.body), k0, k1)
	return spans, &l.mu
}

// spansContinue reports whether run f goes on from run g, so that
// spanBuilder.push would have extended g over it rather than begun f.
func spansContinue(g, f *Span) bool {
	if !f.Exact || f.Cut || f.Lead > 0 || !g.Exact || f.TextUnit != g.TextUnit || f.RawUnit != g.RawUnit || f.Shifted != g.Shifted {
		return false
	}
	r, ok := g.at(f.Text)
	return ok && r == f.Raw
}

// chunkable reports whether a part can be decoded in chunks: a long body,
// as written or quoted-printable, in UTF-8, US-ASCII, a single-byte
// charset or a multibyte one as said above; and, unless the part has a
// stage (staged), not a body as written whose text is the body itself
// (valid UTF-8, or ASCII in a charset that keeps it), which costs no
// decoding at all.
func chunkable(cte string, enc encoding.Encoding, body []byte, limit int, staged bool) (qp, b64 bool, cm encoding.Encoding, ok bool) {
	least := chunkMin
	if !staged && lazyCharset(enc) && !(cte == "base64" && enc == nil) {
		// (base64 in UTF-8 maps its text in one span: nothing to save)
		least = min(least, lazyMin)
	}
	if len(body) <= least || limit < 0 {
		return false, false, nil, false
	}
	switch cte {
	case "quoted-printable":
		qp = true
	case "base64":
		b64 = true
	case "", "7bit", "8bit", "binary", "7-bit", "8-bit", "none":
	default:
		return false, false, nil, false
	}
	if enc != nil {
		// a single-byte charset, or a multibyte one without state whose
		// characters never hold the byte of a line feed (asciiTransparent:
		// Shift_JIS, EUC-JP, EUC-KR, GBK, Big5), but GB18030, whose
		// four-byte characters cut by a line feed decode otherwise at the
		// end of a chunk (TestChunkedSameAsWhole found it)
		_, single := enc.(*charmap.Charmap)
		switch {
		case enc == japanese.ISO2022JP && !qp && !b64:
			// as written: a chunk ends where the decoder is back in
			// ASCII (chunkEnd), as each line of RFC 1468 mail is
		case !single && (!asciiTransparent(enc) || enc == simplifiedchinese.GB18030):
			return false, false, nil, false
		}
		cm = enc
	}
	if !qp && !b64 && !staged {
		if cm == nil && len(body) <= chunkMin {
			return false, false, nil, false // seldom not UTF-8: not looked at twice
		}
		d := body[:min(len(body), limit+16)]
		if cm == nil && utf8.Valid(d) || keepsASCII(cm) && isASCII(d) {
			return false, false, nil, false
		}
	}
	return qp, b64, cm, true
}

// chunkEnd returns where a chunk that holds body[:end] at least ends:
// after the line feed that ends the line holding body[end-1], or, in
// quoted-printable, after the first such line that does not end in a
// soft line break (which may fall inside a character: decoded, the
// chunk ends where a line does); the end of body if there is none.
// With jis (ISO-2022-JP as written, the chunk starting at start in
// ASCII), the chunk ends after the first such line after which the
// decoder is in ASCII again (jisClean).
func chunkEnd(body []byte, start, end int, qp, jis bool) int {
	e := chunkEndLine(body, end, qp)
	for jis && e < len(body) && !jisClean(body[start:e]) {
		e = chunkEndLine(body, e+1, qp)
	}
	return e
}

// jisProbe is text that ISO-2022-JP decodes as it stands in ASCII only:
// not in JIS X 0201 Roman (a yen sign, an overline), nor katakana, nor
// JIS X 0208 (pairs of bytes).
const jisProbe = "A\\~\n"

// jisClean reports whether decoding chunk (which ends in a line feed),
// ISO-2022-JP from ASCII, as convert decodes it (whose state an
// undecodable byte resets), leaves the decoder in ASCII: the probe after
// it decodes as it stands. Not the last escape sequence: in JIS X 0208
// an escape's bytes may be read as a pair, and a bad byte resets the
// state.
func jisClean(chunk []byte) bool {
	if bytes.IndexByte(chunk, 0x1b) < 0 {
		return true // no shift at all
	}
	in := append(chunk[:len(chunk):len(chunk)], jisProbe...)
	var b []byte
	if isASCII(chunk) {
		// seven bits, as ISO-2022-JP is: the decoder always goes on, so
		// that convert never resets it, and one call decodes as convert
		b, _, _ = transform.Bytes(japanese.ISO2022JP.NewDecoder(), in)
	} else {
		b, _ = convert(nil, nil, japanese.ISO2022JP, in, []Span{{Exact: true}})
	}
	return bytes.HasSuffix(b, []byte(jisProbe))
}

// chunkEndLine is chunkEnd without jis.
func chunkEndLine(body []byte, end int, qp bool) int {
	if end >= len(body) {
		return len(body)
	}
	start := bytes.LastIndexByte(body[:end-1], '\n') + 1 // of the line
	for {
		j := bytes.IndexByte(body[end-1:], '\n')
		if j < 0 {
			return len(body)
		}
		end += j
		if !qp {
			return end
		}
		if l := trimBlanks(trimEOL(body[start:end])); len(l) == 0 || l[len(l)-1] != '=' {
			return end
		}
		if end >= len(body) {
			return end
		}
		start = end
		end++
	}
}

// chunkPass is what one pass over a body in chunks found.
type chunkPass struct {
	text      []byte // the text, up to the limit
	textLen   int    // its length before the cut at the limit
	dataLen   int    // the transfer-decoded bytes' (as far as decoded)
	badAt     int64  // the first line of bad quoted-printable data, or -1
	ascii     bool   // the transfer-decoded bytes (to limit+16) are ASCII
	invalidAt int64  // with checkUTF8: the file offset of the first byte that is not UTF-8, or -1
	marks     []chunkMark
	// the carries and run ends of the marks for the map of the
	// transfer-decoded bytes (no charset converted) and of the text
	// converted by cm
	carryData, carryText []Span
	endData, endText     []int
	// with a stage: the carries (the spans that seed the chunks) and run
	// ends of its map; abort tells that a piece grew past stageMax
	carryStage []Span
	endStage   []int
	abort      bool
	// base64: the line marks and bad data, as decodeBody gives them
	lines []Span
	bad   error
}

// runEnds follows where the runs that hold the chunks' last bytes end.
type runEnds struct {
	open []int // the chunks whose last run has not ended
}

// chunk records chunk k's map spans (their Text offset by base), whose
// first run goes on from the last chunk's when cont.
func (e *runEnds) chunk(ends []int, k int, spans []Span, base int, cont bool) {
	switch {
	case !cont:
		e.end(ends, spans[0].Text+base)
	case len(spans) > 1:
		e.end(ends, spans[1].Text+base)
	}
	// chunk k's last run is this one's (a chunk of base64 that joins
	// the one before is of the same mark): not ended yet
	ends[k] = -1
	if n := len(e.open); n == 0 || e.open[n-1] != k {
		e.open = append(e.open, k)
	}
}

func (e *runEnds) end(ends []int, at int) {
	for _, k := range e.open {
		ends[k] = at
	}
	e.open = e.open[:0]
}

// decodeChunks decodes body (at file offset off) chunk by chunk: the
// transfer encoding (quoted-printable when qp), then the charset cm (nil:
// none), keeping up to limit bytes of text, then the stage st if not nil,
// as leaf, decodeBody, decodeCharset, unflow and htmlText decode it
// whole; the stage adds p's attribute links (and may set its Base). With
// checkUTF8 (cm nil) it stops at the first chunk that is not valid UTF-8
// and gives back its text.
func (w *walker) decodeChunks(p *Part, body []byte, off int64, qp, b64 bool, cm encoding.Encoding, st stage, limit int, checkUTF8 bool) chunkPass {
	dec := qp || b64 // transfer-decoded
	jis := cm == japanese.ISO2022JP
	// fast: no maps are made (see lazyMin)
	fast := st == nil && lazyCharset(cm)
	size := chunkSize
	var tab *byteTable
	if fast {
		// a long part in longer chunks: no more than 4096 marks
		size = max(lazyChunk, len(body)>>12)
		if single, ok := cm.(*charmap.Charmap); ok {
			tab = byteTableOf(single)
		}
	}
	r := chunkPass{badAt: -1, ascii: true, invalidAt: -1}
	// a chunk holds size bytes or more
	r.marks = make([]chunkMark, 0, len(body)/size+1)
	cut := limit + 16 // decoded bytes given to the charset
	// room for the text: quoted-printable text is seldom longer than its
	// body (an escape of three bytes is a character of one to three),
	// and text as written converted by a table is counted
	tcap := min(limit, len(body))
	if single, ok := cm.(*charmap.Charmap); ok && !dec {
		tab, n := byteTableOf(single), 0
		for _, c := range body[:min(len(body), cut)] {
			n += int(tab.enc[c].n)
		}
		tcap = min(limit, n)
	} else if cm != nil && !dec {
		tcap = min(limit, len(body)+len(body)/2) // two bytes a character to three
	} else if b64 {
		// three bytes for four characters, converted as above
		n := len(body)/4*3 + 3
		if cm != nil {
			n += n / 2
		}
		tcap = min(limit, n)
	}
	text := w.m.lend(tcap)
	var dbuf, tbuf []byte
	var dsp, tsp []Span
	if dec {
		dbuf, dsp = w.m.lend(min(len(body), 2*size)), w.m.lendSpans(size/32)
	}
	// base64 goes on from chunk to chunk (the characters carried over,
	// the line marks); a chunk that ends with characters carried over
	// joins the next
	bd := b64Decoder{badAt: -1, lastChar: -1}
	_, anyByte := cm.(*charmap.Charmap) // a chunk may end at any byte
	if b64 {
		bd.lm.out = w.m.lendSpans(16)
		dbuf = dbuf[:0]
	}
	if cm != nil {
		tbuf, tsp = w.m.lend(min(len(body), 2*size)), w.m.lendSpans(size/16)
	}
	ident := []Span{{Exact: true}}
	var lastD, lastT Span // the last runs of the maps so far
	var eD, eT runEnds
	have := false
	open := false     // the last mark has no text yet
	markData := false // the last mark has a chunk with data
	dataAt, textAt := 0, 0
	// with a stage: its input pending (a piece that ended open, or not
	// yet run) and its map, its output and map, the last span of its map
	// so far, its input so far (up to the limit) and its output
	var sin, sout []byte
	var ssp, sosp []Span
	var lastS Span
	var eS runEnds
	srcAt, stageAt := 0, 0
	// while a piece ends open, it takes a line more, then two, four...
	// (lines end open in a pattern that chunks of one size may keep
	// meeting: a flowed line then a short fixed one)
	ext, grow := size, 1
	if st != nil {
		sin, sout = w.m.lend(2*chunkSize), w.m.lend(2*chunkSize)
		ssp, sosp = w.m.lendSpans(chunkSize/16), w.m.lendSpans(chunkSize/16)
	}
	// runStage runs the stage on the piece pending, and if it does not
	// end open (or final), adds its output to the text.
	runStage := func(final bool) bool {
		k := len(r.marks) - 1
		var seed *Span
		if k > 0 {
			s := lastS
			s.Text -= stageAt
			seed = &s
		}
		nl, base := len(p.AttrLinks), p.Base
		out, os, isOpen := st(sout, sosp, p, sin, ssp, seed)
		sout, sosp = out, os
		if !final && (isOpen || len(out) == 0) || len(os) == 0 {
			p.AttrLinks, p.Base = p.AttrLinks[:nl], base
			return false
		}
		for i := nl; i < len(p.AttrLinks); i++ {
			p.AttrLinks[i].Text += stageAt
		}
		if k > 0 {
			r.carryStage[k] = lastS
		}
		eS.chunk(r.endStage, k, os, stageAt, k > 0)
		lastS = os[len(os)-1]
		lastS.Text += stageAt
		text = append(text, out...)
		stageAt += len(out)
		sin, ssp = sin[:0], ssp[:0]
		return true
	}
	for pos := 0; pos < len(body); {
		if dec && dataAt > limit || !dec && dataAt >= cut {
			break // decoded as far as leaf would
		}
		end := chunkEnd(body, pos, pos+ext, qp, jis)
		raw := body[pos:end]
		at := off + int64(pos)
		if !open {
			m := chunkMark{raw: pos, data: dataAt, text: textAt, src: textAt}
			if st != nil {
				m.text, m.src = stageAt, srcAt
			}
			r.marks = append(r.marks, m)
			if !fast {
				r.carryData, r.carryText = append(r.carryData, Span{}), append(r.carryText, Span{})
				r.endData, r.endText = append(r.endData, -1), append(r.endText, -1)
				r.carryStage, r.endStage = append(r.carryStage, Span{}), append(r.endStage, -1)
			}
			open, markData = true, false
		}
		pos = end
		var data []byte
		var ds []Span
		if qp && fast {
			var badAt int64
			data, badAt = decodeQP(dbuf, raw, at, limit-dataAt)
			dbuf = data
			if badAt >= 0 && r.badAt < 0 {
				r.badAt = badAt
			}
		} else if qp {
			var bad error
			data, ds, _, bad, _ = decodeBody(dbuf, dsp, nil, "quoted-printable", raw, at, limit-dataAt)
			dbuf, dsp = data, ds
			if de, ok := bad.(*decodeError); ok && r.badAt < 0 {
				r.badAt = de.at
			}
		} else if b64 {
			// the decoded bytes go on to the charset where no base64
			// character is carried over and a character ends: anywhere
			// in a single-byte charset, after an ASCII byte in UTF-8 and
			// the multibyte charsets decoded in chunks (where no byte
			// below 0x80 is the first or a middle byte of a character),
			// or at the limit or the end
			dbuf = bd.decode(dbuf, raw, at, dataAt+len(dbuf), limit-dataAt-len(dbuf))
			if pos < len(body) && dataAt+len(dbuf) <= limit && (bd.nq > 0 || !anyByte && len(dbuf) > 0 && dbuf[len(dbuf)-1] >= 0x80) {
				continue // the next chunk joins this one
			}
			data, dbuf = dbuf, dbuf[:0]
			dsp = append(dsp[:0], Span{Raw: int64(dataAt), Exact: true})
			ds = dsp
		} else {
			ident[0].Raw = at
			data, ds = raw, ident
		}
		if len(data) == 0 {
			continue // the next chunk joins this one
		}
		dc := data[:min(len(data), cut-dataAt)] // what the charset is given
		if checkUTF8 {
			if i := invalidAt(dc); i >= 0 {
				if ds == nil {
					// the map of the chunk, for the file offset
					_, ds, _, _, _ = decodeBody(nil, dsp, nil, "quoted-printable", raw, at, limit-dataAt)
				}
				j := spanAt(ds, i)
				r.invalidAt, _ = ds[j].at(i)
				w.m.giveBack(text)
				text = nil
				break
			}
		}
		r.ascii = r.ascii && isASCII(dc)
		t, ts := dc, ds
		if cm != nil && fast {
			t = convertTable(tbuf, tab, dc)
			tbuf = t
		} else if cm != nil {
			t, ts = convert(tbuf, tsp, cm, dc, ds)
			tbuf, tsp = t, ts
		}

		if fast {
			markData = true // no carries nor run ends (see lazyMin)
		} else {
			// the marks' carries: the run that holds the mark's start, set by
			// its first chunk with data (a base64 chunk may join the next)
			k := len(r.marks) - 1
			fd, ft := ds[0], ts[0]
			fd.Text += dataAt
			ft.Text += textAt
			contD, contT := have && spansContinue(&lastD, &fd), have && spansContinue(&lastT, &ft)
			if !markData {
				r.carryData[k], r.carryText[k] = fd, ft
				if contD {
					r.carryData[k] = lastD
				}
				if contT {
					r.carryText[k] = lastT
				}
				markData = true
			}
			eD.chunk(r.endData, k, ds, dataAt, contD)
			eT.chunk(r.endText, k, ts, textAt, contT)
			if len(ds) > 1 || !contD {
				lastD = ds[len(ds)-1]
				lastD.Text += dataAt
			}
			if len(ts) > 1 || !contT {
				lastT = ts[len(ts)-1]
				lastT.Text += textAt
			}
			have = true
		}
		dataAt += len(data)
		textAt += len(t)
		if st == nil {
			open = b64 && bd.nq > 0
			if room := limit - len(text); room > 0 {
				text = append(text, t[:min(room, len(t))]...)
			}
			continue
		}
		// the stage's input: the text up to the limit
		if n := min(len(t), limit-srcAt); n > 0 {
			b := len(sin)
			for _, s := range ts {
				s.Text += b
				ssp = append(ssp, s)
			}
			sin = append(sin, t[:n]...)
			srcAt += n
		}
		if len(sin) == 0 || pos >= len(body) || srcAt >= limit || b64 && bd.nq > 0 {
			continue // the last piece is run below, or the chunk joins the next
		}
		if runStage(false) {
			open = false
			ext, grow = chunkSize, 1
		} else if len(sin) > stageMax {
			r.abort = true
			break
		} else {
			ext, grow = min(grow, chunkSize), min(2*grow, chunkSize)
		}
	}
	if b64 {
		// a quantum cut off at the end decodes to more bytes there, and
		// is damage: the part is decoded whole
		r.abort = r.abort || bd.nq > 0 && r.invalidAt < 0
		_, r.lines, r.bad, _ = bd.finish(nil, off)
	}
	if st != nil && !r.abort && len(sin) > 0 && runStage(true) {
		open = false
	}
	if st != nil && open && len(r.marks) == 1 {
		r.abort = true // no text at all: decoded whole
	}
	if open && len(r.marks) > 1 {
		// chunks at the end that decode to nothing join the one before
		r.marks = r.marks[:len(r.marks)-1]
	}
	w.m.giveBack(dbuf)
	w.m.giveBack(tbuf)
	w.m.giveBackSpans(dsp)
	w.m.giveBackSpans(tsp)
	if st != nil {
		w.m.giveBack(sin)
		w.m.giveBack(sout)
		w.m.giveBackSpans(ssp)
		w.m.giveBackSpans(sosp)
	}
	r.text, r.textLen, r.dataLen = text, textAt, dataAt
	return r
}

// chunked decodes a part in chunks (see above) when chunkable allows,
// as the rest of leaf would decode it whole, and reports whether it did.
// cs is the part's charset label, st its stage or nil.
func (w *walker) chunked(p *Part, cs string, body []byte, off int64, limit int, st stage) bool {
	enc, known := lookupCharset(cs)
	qp, b64, cm, ok := chunkable(p.Encoding, enc, body, limit, st != nil)
	if !ok {
		return false
	}
	l := &lazyMap{qp: qp, b64: b64, off: off, limit: limit, stage: st}
	cut := limit + 16
	var r chunkPass
	// a pass given up gives back its text, and the links and base its
	// stage found
	nl, base := len(p.AttrLinks), p.Base
	undo := func() {
		w.m.giveBack(r.text)
		p.AttrLinks, p.Base = p.AttrLinks[:nl], base
	}
	decodeProblem := func() {
		if r.badAt >= 0 {
			p.problemErr(ErrDecode, r.badAt, "%s", qpBad)
		}
		if de, ok := r.bad.(*decodeError); ok {
			p.problemErr(ErrDecode, de.at, "%v", de)
		}
	}
	charsetProblem := func() {}
	if cm == nil {
		// UTF-8 (or US-ASCII, or a charset not known): the text is the
		// decoded bytes if they are valid UTF-8, else decoded as
		// windows-1252 (decodeCharset)
		invalid := int64(-1)
		if qp || b64 {
			r = w.decodeChunks(p, body, off, qp, b64, nil, st, limit, true)
			invalid = r.invalidAt
			if invalid >= 0 {
				p.AttrLinks, p.Base = p.AttrLinks[:nl], base // its text is given back
			}
			if invalid >= 0 && b64 {
				// the line of the decoded byte (Part.dataOffset)
				at, ok := lineStart(r.lines, int(invalid))
				invalid = p.RawStart
				if ok {
					invalid = at
				}
			}
		} else {
			if i := invalidAt(body[:min(len(body), cut)]); i >= 0 {
				invalid = off + int64(i)
			} else {
				r = w.decodeChunks(p, body, off, false, false, nil, st, limit, false) // as written, for the stage
			}
		}
		if r.abort {
			undo()
			return false
		}
		if invalid < 0 {
			decodeProblem()
			if !known {
				p.problemErr(ErrCharset, p.RawStart, "unknown charset %q; the text is valid UTF-8 and read as such", cs)
			}
			if r.dataLen > limit {
				p.problemErr(ErrTooLong, off, "decoded text longer than %d bytes; the rest is not scanned", limit)
			}
			if st != nil {
				w.finishChunked(p, l, r, r.carryStage, r.endStage)
			} else {
				w.finishChunked(p, l, r, r.carryData, r.endData)
			}
			return true
		}
		charsetProblem = func() {
			if known {
				p.problemErr(ErrCharset, invalid, "text is not valid %s; decoded as windows-1252", orDefault(cs, "US-ASCII"))
			} else {
				p.problemErr(ErrCharset, p.RawStart, "unknown charset %q; decoded as windows-1252", cs)
			}
		}
		cm = fallbackCharset
	}
	r = w.decodeChunks(p, body, off, qp, b64, cm, st, limit, false)
	if r.abort || r.textLen == 0 && !(r.ascii && keepsASCII(cm)) {
		// decoded whole, the part has no map at all (convert of nothing)
		undo()
		return false
	}
	decodeProblem()
	charsetProblem()
	dataCut := r.dataLen > cut
	if !qp && !b64 {
		dataCut = len(body) > cut
	}
	if r.textLen > limit || dataCut {
		p.problemErr(ErrTooLong, off, "decoded text longer than %d bytes; the rest is not scanned", limit)
	}
	p.decoder = cm
	carry, ends := r.carryText, r.endText
	if st != nil {
		carry, ends = r.carryStage, r.endStage
		if !(r.ascii && keepsASCII(cm)) {
			l.cm = cm
		}
	} else if r.ascii && keepsASCII(cm) {
		// nothing converted: the map is the transfer decoding's
		carry, ends = r.carryData, r.endData
	} else {
		l.cm = cm
	}
	w.finishChunked(p, l, r, carry, ends)
	return true
}

// isIdent reports whether a map is one exact run of 1:1 units from the
// start of the text, as that of text that is the bytes it maps.
func isIdent(spans []Span) bool {
	if len(spans) != 1 {
		return false
	}
	s := &spans[0]
	return s.Text == 0 && s.Exact && !s.Cut && s.TextUnit <= 1 && s.RawUnit <= 1 && s.Lead == 0 && !s.Shifted
}

// stagedText runs a part's stage in pieces over its text, decoded whole
// by the steps before (a base64 body's, whose map is isIdent from off),
// when the pieces can be found, and reports whether it did: the text is
// kept whole for the maps asked later, but not the stage's map, which is
// most of the cost of a long HTML part (four spans, 128 bytes, a line).
func (w *walker) stagedText(p *Part, text []byte, off int64, st stage) bool {
	nl, base := len(p.AttrLinks), p.Base
	r := w.decodeChunks(p, text, off, false, false, nil, st, len(text), false)
	if r.abort {
		w.m.giveBack(r.text)
		p.AttrLinks, p.Base = p.AttrLinks[:nl], base
		return false
	}
	if p.lines != nil {
		// an attribute's place in decoded bytes: the line it came from
		for i := nl; i < len(p.AttrLinks); i++ {
			if r, ok := lineStart(p.lines, int(p.AttrLinks[i].Raw)); ok {
				p.AttrLinks[i].Raw = r
			}
		}
	}
	l := &lazyMap{off: off, limit: len(text), stage: st, src: text}
	w.finishChunked(p, l, r, r.carryStage, r.endStage)
	return true
}

// keepsASCII tells the charsets whose ASCII text decodeCharset leaves as
// it is, without converting it: the single-byte ones that keep ASCII.
func keepsASCII(enc encoding.Encoding) bool {
	cm, ok := enc.(*charmap.Charmap)
	return ok && asciiSuperset(cm)
}

// qpBad is the message of bad quoted-printable data (decodeBody).
const qpBad = "bad quoted-printable data; decoded what could be, kept the rest as written"

// finishChunked gives the part its text, its marks with their carries,
// and a span per chunk.
func (w *walker) finishChunked(p *Part, l *lazyMap, r chunkPass, carry []Span, ends []int) {
	l.marks = r.marks
	l.lazyRuns = l.stage == nil && lazyCharset(l.cm) && lazyCharset(p.decoder)
	spans := w.m.lendSpans(len(r.marks))
	for i := range l.marks {
		m := &l.marks[i]
		if l.cm == nil && l.stage == nil {
			m.text = m.data
		}
		if l.lazyRuns {
			m.runEnd = runUnknown
		} else {
			m.carry, m.runEnd = carry[i], ends[i]
		}
		raw := l.off + int64(m.raw)
		if l.b64 {
			raw = int64(m.data) // base64: decoded bytes
		}
		spans = append(spans, Span{Text: m.text, Raw: raw})
	}
	if l.b64 {
		w.m.spans.keep(r.lines)
		p.lines = r.lines
		if l.stage != nil {
			// an attribute's place in decoded bytes: the line it came from
			for i := range p.AttrLinks {
				if r, ok := lineStart(p.lines, int(p.AttrLinks[i].Raw)); ok {
					p.AttrLinks[i].Raw = r
				}
			}
		}
	}
	w.m.bytes.keep(r.text)
	w.m.spans.keep(spans)
	p.Text, p.Spans, p.lazy = r.text, spans, l
}
