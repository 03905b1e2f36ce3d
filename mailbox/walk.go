package mailbox

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/transform"
)

// AttrLink is a URL found in an HTML attribute.
type AttrLink struct {
	URL  string // the attribute value, entities decoded, not resolved
	Tag  string // the element, lower case
	Attr string // href, src, cite, background, action
	Text int    // offset in Part.Text where the element stood
	Raw  int64  // file offset of the element's tag
}

// Part is one MIME part of a message.
type Part struct {
	Path        string            // "1", "1.2", ...; "" for the preamble/epilogue of a top-level multipart
	ContentType string            // media type, lower case
	Params      map[string]string // Content-Type parameters; nil when none; shared between parts, not to be modified
	Encoding    string            // Content-Transfer-Encoding, lower case
	Charset     string            // the charset the text was decoded from
	Header      Header            // the part's own header ("" for a single-part message's body: see Message.Header)
	Where       string            // "body", "preamble" or "epilogue"

	// RawStart and RawEnd locate the part's body in the file.
	RawStart, RawEnd int64

	// Text is the decoded text of a text part, UTF-8; nil for other parts.
	Text []byte
	// Spans map Text to the file (span.go). RawSpan, TextOffset and the
	// other methods read them; a long part decoded in chunks holds only a
	// span per chunk here (not exact, never Cut), and the methods make
	// the exact map of the chunks they need when asked.
	Spans []Span
	// Base is the Content-Base or Content-Location that relative links of
	// an HTML part resolve against, if any.
	Base string
	// AttrLinks are the URLs of HTML attributes (href, src, cite ...).
	AttrLinks []AttrLink

	// ContentID is the part's Content-ID, normalized (no brackets).
	ContentID string
	// InRelated tells that the part lies inside a multipart/related, whose
	// path is Related ("" for the message's top level); cid: links resolve
	// there first (RFC 2387).
	InRelated bool
	Related   string

	Problems []Problem

	// decoder is the charset the text was decoded from, nil for UTF-8.
	decoder encoding.Encoding
	// body is the part's body in the message's bytes, lines the file
	// offsets of a base64 body's lines (Text offsets are decoded-byte
	// offsets there): for RawOffset and Decoded.
	body  []byte
	lines []Span
	// lazy is the map of a long part decoded in chunks (chunk.go), whose
	// Spans are a span per chunk; nil for others.
	lazy *lazyMap
}

// problemErr records a problem of the given kind (ErrDecode, ...).
func (p *Part) problemErr(kind error, off int64, format string, args ...any) {
	p.Problems = append(p.Problems, Problem{Offset: off, Part: p.Path, Msg: sprintf(format, args...), Err: kind})
}

type walker struct {
	m     *Message
	opts  Options
	parts []*Part
	count int
	// related holds the paths of the multipart/related containers around
	// the part being read; noRelated marks a message/rfc822 boundary.
	related []string
}

const noRelated = "\x00"

// newPart returns p in the message's own first Part, or in a new one:
// most messages have one part, which then costs no allocation of its own.
func (w *walker) newPart(p Part) *Part {
	if !w.m.partUsed {
		w.m.partUsed = true
		w.m.part0 = p
		return &w.m.part0
	}
	np := new(Part)
	*np = p
	return np
}

// add records a part with what the walk knows around it.
func (w *walker) add(p *Part) {
	if p.Header != nil {
		p.ContentID = normalizeID(p.Header.Get("Content-ID"))
	}
	if n := len(w.related); n > 0 && w.related[n-1] != noRelated {
		p.InRelated, p.Related = true, w.related[n-1]
	}
	w.parts = append(w.parts, p)
}

// Parts walks the MIME structure of the message and returns its parts in
// order, text parts decoded. Damage is recorded in each part's Problems
// and in the message's. Parts does not keep its result, and its memory is
// the message's: call it once, and use the parts until Release.
func (m *Message) Parts() []*Part {
	m.Parse()
	w := &walker{m: m, opts: m.opts, parts: m.partPtrs[:0]}
	body := m.Raw[m.bodyStart:]
	off := m.RawOffset + int64(m.bodyStart)
	nprob := len(m.Problems)
	if m.Format == FormatText {
		w.leaf(nil, "text/plain", map[string]string{"charset": "utf-8"}, body, off, "1", "body")
	} else {
		w.entity(m.Header, body, off, "", "1", 0, "text/plain")
	}
	if len(m.Holes) > 0 {
		w.fillHoles(nprob)
	}
	return w.parts
}

// Hole is a place where a reader left bytes of the file out of a
// message's Raw: the file goes on Len bytes further than Raw does before
// Raw[At].
type Hole struct {
	At  int
	Len int64
}

// BareCR reports whether the message's lines end in a bare CR in the file:
// then every LF in Raw was a CR there (Raw keeps the bytes' number and
// place), and bytes written back must turn them into CRs again.
func (m *Message) BareCR() bool { return m.crOnly }

// FileOffset maps an index in Raw to its offset in the file.
func (m *Message) FileOffset(i int) int64 {
	off := m.RawOffset + int64(i)
	for _, h := range m.Holes {
		if h.At <= i {
			off += h.Len
		}
	}
	return off
}

// fillHoles moves the offsets of the walk, which took Raw for the file,
// past the holes in Raw, and tells the parts that lost bytes to a hole.
// Problems from before the walk (nprob of them) were the reader's, with
// true offsets already.
func (w *walker) fillHoles(nprob int) {
	m := w.m
	fix := func(v int64) int64 {
		if i := v - m.RawOffset; i >= 0 && i <= int64(len(m.Raw)) {
			return m.FileOffset(int(i))
		}
		return v
	}
	for i := nprob; i < len(m.Problems); i++ {
		m.Problems[i].Offset = fix(m.Problems[i].Offset)
	}
	seen := map[*Field]bool{}
	for _, p := range w.parts {
		// a header two parts share is moved once
		header := len(p.Header) > 0 && !seen[&p.Header[0]]
		if header {
			seen[&p.Header[0]] = true
		}
		start, end := p.RawStart-m.RawOffset, p.RawEnd-m.RawOffset
		holed := false
		for _, h := range m.Holes {
			holed = holed || int64(h.At) > start && int64(h.At) < end
		}
		if holed {
			// what is left of the part maps to the file only near
			for i := range p.Spans {
				p.Spans[i].Exact = false
			}
			if p.lazy != nil {
				p.lazy.holed()
			}
			// a run of base64 lines across a hole is cut there, so that
			// each line moves as it would alone
			for _, h := range m.Holes {
				if int64(h.At) > start && int64(h.At) < end {
					p.lines = splitLines(p.lines, m.RawOffset+int64(h.At))
				}
			}
		}
		p.shift(fix, header)
		for _, h := range m.Holes {
			if int64(h.At) > start && int64(h.At) < end {
				p.problemErr(ErrTooLong, m.FileOffset(h.At)-h.Len, "message longer than %d bytes: %d bytes of this part are not kept", w.opts.MaxMessageSize, h.Len)
			}
		}
	}
}

// shift applies f to every file offset the part holds: RawStart and
// RawEnd, the Raw of its spans (but in a base64 part, where they are
// offsets in the decoded bytes), of its base64 lines and of its attribute
// links, the Offset of its problems, and, when header is true, the Offset
// and End of its header's fields (a header that two parts share is to be
// shifted once). A part decoded in chunks keeps f too, for the spans it
// makes when asked (lazyMap.shift; TestChunkedSameAsWhole with holes).
// TestShiftCoversOffsets holds it to every int64 that a Part holds, found
// by reflection, so that a new one is not forgotten.
func (p *Part) shift(f func(int64) int64, header bool) {
	p.RawStart, p.RawEnd = f(p.RawStart), f(p.RawEnd)
	if !p.Reencode() {
		for i := range p.Spans {
			p.Spans[i].Raw = f(p.Spans[i].Raw)
		}
	}
	if p.lazy != nil {
		if !p.Reencode() {
			p.lazy.shift(f) // the Raw of the spans it makes
		}
	}
	for i := range p.lines {
		p.lines[i].Raw = f(p.lines[i].Raw)
	}
	for i := range p.AttrLinks {
		p.AttrLinks[i].Raw = f(p.AttrLinks[i].Raw)
	}
	for i := range p.Problems {
		p.Problems[i].Offset = f(p.Problems[i].Offset)
	}
	if header {
		for i := range p.Header {
			p.Header[i].Offset, p.Header[i].End = f(p.Header[i].Offset), f(p.Header[i].End)
		}
	}
}

// The expressions that salvage a bad Content-Type, compiled when first
// needed rather than at every start of the program.
var (
	boundaryRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)boundary\s*=\s*"?([^";]+)"?`) })
	charsetRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)charset\s*=\s*"?([^";\s]+)`) })
)

// entity handles a header and its body. path is the entity's own part
// path ("" for the message), leafPath what it is called if it is a leaf.
func (w *walker) entity(h Header, body []byte, off int64, path, leafPath string, depth int, defType string) {
	ct := h.Get("Content-Type")
	mt, params := defType, map[string]string(nil)
	if ct != "" {
		var err error
		mt, params, err = parseMediaType(ct)
		if err != nil {
			// salvage what can be read: "text/plain; charset=..." with junk
			mt = strings.ToLower(strings.TrimSpace(strings.SplitN(ct, ";", 2)[0]))
			params = map[string]string{}
			if m := boundaryRe().FindStringSubmatch(ct); m != nil {
				params["boundary"] = m[1]
			}
			if m := charsetRe().FindStringSubmatch(ct); m != nil {
				params["charset"] = m[1]
			}
			if !strings.Contains(mt, "/") {
				mt = defType
			}
			if !validMediaType(mt) {
				mt = "text/plain"
			}
			w.m.problemErr(ErrStructure, h.fieldOffset("Content-Type"), leafPath, "bad Content-Type %q: %v; read as %s", ct, err, mt)
		} else if !validMediaType(mt) {
			// RFC 2045 §5.2: a Content-Type that is not type/subtype ("text"
			// alone) is taken as text/plain
			w.m.problemErr(ErrStructure, h.fieldOffset("Content-Type"), leafPath, "bad Content-Type %q: no type/subtype; read as text/plain", ct)
			mt = "text/plain"
		}
	}
	if depth > w.opts.MaxDepth {
		w.m.problemErr(ErrTooDeep, off, leafPath, "MIME nesting deeper than %d; not read", w.opts.MaxDepth)
		return
	}
	switch {
	case strings.HasPrefix(mt, "multipart/"):
		if b := params["boundary"]; b != "" {
			w.multipart(mt, b, body, off, path, depth)
			return
		}
		w.m.problemErr(ErrStructure, off, leafPath, "multipart without a boundary; body read as text")
		w.leaf(h, "text/plain", params, body, off, leafPath, "body")
	case mt == "message/rfc822" || mt == "message/news" || mt == "message/global":
		enc := lowerASCII(strings.TrimSpace(h.Get("Content-Transfer-Encoding")))
		if enc == "base64" || enc == "quoted-printable" {
			// rare: an encoded message; decode and read it without offsets
			p := w.newPart(Part{Path: leafPath, ContentType: mt, Header: h, RawStart: off, RawEnd: off + int64(len(body)), Where: "body"})
			w.add(p)
			inner, _, _ := transferDecode(nil, nil, enc, body, off)
			ih, ib, probs := parseHeader(inner, off, w.opts.MaxHeaderBytes, leafPath)
			w.m.Problems = append(w.m.Problems, probs...)
			w.related = append(w.related, noRelated)
			n := len(w.parts)
			w.entity(ih, inner[ib:], off, leafPath, leafPath+".1", depth+1, "text/plain")
			w.related = w.related[:len(w.related)-1]
			// the parts inside have no place in the file of their own: they
			// all come from the encoded body, and map to its start, not
			// exactly (their offsets were offsets in the decoded bytes); each
			// has the body as its own
			for _, q := range w.parts[n:] {
				q.lines, q.lazy = nil, nil
				if len(q.Spans) > 0 {
					q.Spans = append(q.Spans[:0], Span{Raw: off})
				}
				q.shift(func(int64) int64 { return off }, true)
				q.RawStart, q.RawEnd = p.RawStart, p.RawEnd
			}
			return
		}
		p := w.newPart(Part{Path: leafPath, ContentType: mt, Params: params, Header: h, RawStart: off, RawEnd: off + int64(len(body)), Where: "body"})
		w.add(p)
		ih, ib, probs := parseHeader(body, off, w.opts.MaxHeaderBytes, leafPath)
		w.m.Problems = append(w.m.Problems, probs...)
		p.Header = ih // the encapsulated message's header: its links belong to this part
		w.related = append(w.related, noRelated)
		w.entity(ih, body[ib:], off+int64(ib), leafPath, leafPath+".1", depth+1, "text/plain")
		w.related = w.related[:len(w.related)-1]
	default:
		w.leaf(h, mt, params, body, off, leafPath, "body")
	}
}

// validMediaType tells whether mt is a type and a subtype, both tokens,
// joined by "/".
func validMediaType(mt string) bool {
	switch mt {
	case "text/plain", "text/html", "multipart/alternative", "multipart/mixed", "multipart/related",
		"message/rfc822", "application/octet-stream", "image/png", "image/jpeg", "image/gif", "application/pdf":
		return true // the common ones, told by a switch (FuzzValidMediaType)
	}
	return isTypeSubtype(mt)
}

// isTypeSubtype is validMediaType without its shortcut.
func isTypeSubtype(mt string) bool {
	i := strings.IndexByte(mt, '/')
	return i > 0 && i < len(mt)-1 && skipToken(mt, 0) == i && skipToken(mt, i+1) == len(mt)
}

func (h Header) fieldOffset(name string) int64 {
	for _, f := range h {
		if fieldIs(f.Name, name) {
			return f.Offset
		}
	}
	return 0
}

func joinPath(p string, i int) string {
	if p == "" {
		return strconv.Itoa(i)
	}
	return p + "." + strconv.Itoa(i)
}

// multipart splits a multipart body on its boundary (RFC 2046 §5.1.1).
func (w *walker) multipart(mt, boundary string, body []byte, off int64, path string, depth int) {
	delim := []byte("--" + boundary)
	type seg struct{ start, end int } // a part: from after its delimiter line to before the next
	var segs []seg
	preEnd, epiStart := -1, -1
	closed := false
	partStart := -1
	for from := 0; from < len(body); {
		// find the next delimiter at the start of a line
		k := bytes.Index(body[from:], delim)
		if k < 0 {
			break
		}
		i := from + k
		from = i + len(delim)
		if i > 0 && body[i-1] != '\n' {
			continue
		}
		next := len(body)
		if j := bytes.IndexByte(body[i:], '\n'); j >= 0 {
			next = i + j + 1
		}
		line := trimEOL(body[i:next])
		rest := trimBlanks(line[len(delim):])
		isClose := bytes.Equal(rest, []byte("--"))
		if len(rest) != 0 && !isClose {
			continue
		}
		// the line ending before a delimiter belongs to it
		end := i
		if end > 0 && body[end-1] == '\n' {
			end--
			if end > 0 && body[end-1] == '\r' {
				end--
			}
		}
		if partStart < 0 {
			preEnd = end
		} else {
			segs = append(segs, seg{partStart, max(end, partStart)})
		}
		partStart = next
		from = next
		if isClose {
			closed = true
			epiStart = next
			break
		}
	}
	if partStart < 0 {
		w.m.problemErr(ErrStructure, off, joinPath(path, 1), "multipart boundary %q never found; body read as text", boundary)
		w.leaf(nil, "text/plain", nil, body, off, joinPath(path, 1), "body")
		return
	}
	if !closed {
		w.m.problemErr(ErrTruncated, off+int64(len(body)), path, "missing final boundary %q; the last part runs to the end", boundary)
		segs = append(segs, seg{partStart, len(body)})
	}
	if preEnd > 0 && len(bytes.TrimSpace(body[:preEnd])) > 0 {
		w.leaf(nil, "text/plain", nil, body[:preEnd], off, path, "preamble")
	}
	defType := "text/plain"
	if mt == "multipart/digest" {
		defType = "message/rfc822"
	}
	if mt == "multipart/related" {
		w.related = append(w.related, path)
		defer func() { w.related = w.related[:len(w.related)-1] }()
	}
	for i, s := range segs {
		w.count++
		if w.count > w.opts.MaxParts {
			w.m.problemErr(ErrTooManyParts, off+int64(s.start), path, "more than %d parts; the rest is not read", w.opts.MaxParts)
			return
		}
		raw := body[s.start:s.end]
		p := joinPath(path, i+1)
		h, bi, probs := parseHeader(raw, off+int64(s.start), w.opts.MaxHeaderBytes, p)
		w.m.Problems = append(w.m.Problems, probs...)
		w.entity(h, raw[bi:], off+int64(s.start+bi), p, p, depth+1, defType)
	}
	if closed && epiStart < len(body) && len(bytes.TrimSpace(body[epiStart:])) > 0 {
		w.leaf(nil, "text/plain", nil, body[epiStart:], off+int64(epiStart), path, "epilogue")
	}
}

// leaf decodes a non-multipart part.
func (w *walker) leaf(h Header, mt string, params map[string]string, body []byte, off int64, path, where string) {
	p := w.newPart(Part{Path: path, ContentType: mt, Params: params, Header: h, Where: where, RawStart: off, RawEnd: off + int64(len(body)), body: body})
	w.add(p)
	if !isTextType(mt) || (mt == "text/html" && w.opts.NoHTML) || w.opts.SkipText {
		return
	}
	p.Encoding = lowerASCII(strings.TrimSpace(h.Get("Content-Transfer-Encoding")))
	// Each step decodes into a buffer lent by the message (scratch.go);
	// owned is the one the text is in, nil while it is still in Raw.
	var owned []byte
	var ownedSpans []Span
	step := func(text []byte, spans []Span) {
		if owned != nil && !sameStart(text, owned) {
			w.m.giveBack(owned)
		}
		if !sameStart(text, body) {
			owned = text
		}
		if ownedSpans != nil && !sameStart(spans, ownedSpans) {
			w.m.giveBackSpans(ownedSpans)
		}
		ownedSpans = spans
	}
	limit := w.opts.MaxPartSize
	cs := params["charset"]
	if where != "body" && cs == "" {
		cs = "us-ascii"
	}
	p.Charset = cs
	flowed := mt == "text/plain" && strings.EqualFold(params["format"], "flowed")
	delsp := strings.EqualFold(params["delsp"], "yes")
	var st stage
	switch {
	case mt == "text/html":
		p.Base = h.Get("Content-Base")
		if p.Base == "" {
			p.Base = h.Get("Content-Location")
		}
		if p.Base == "" {
			p.Base = w.m.Header.Get("Content-Base")
		}
		st = htmlStage
	case flowed:
		st = flowedStage(delsp)
	}
	if w.chunked(p, cs, body, off, limit, st) {
		return // decoded in chunks (chunk.go)
	}
	var dst []byte
	var sdst, ldst []Span
	switch p.Encoding {
	case "quoted-printable":
		// decoded text is no longer than the body, nor (much) than the
		// limit; a soft line break costs a span, an escape one or two
		n := min(len(body), limit+4<<10)
		dst, sdst = w.m.lend(n), w.m.lendSpans(qpSpans(body[:max(n, 0)]))
	case "base64":
		// the lines' offsets: a span for each run of lines of the same
		// length (lineMarks), a few for most bodies
		dst, sdst, ldst = w.m.lend(min(len(body), limit+4<<10)), w.m.lendSpans(1), w.m.lendSpans(8)
	default:
		sdst = w.m.lendSpans(1)
	}
	data, spans, lines, bad, trunc := decodeBody(dst, sdst, ldst, p.Encoding, body, off, limit)
	if bad != nil {
		at := off
		var de *decodeError
		if errors.As(bad, &de) {
			at = de.at
		}
		p.problemErr(ErrDecode, at, "%v", bad)
	}
	if trunc >= 0 {
		p.problemErr(ErrTruncated, trunc, "base64 data cut off inside a group of four characters; the last bytes decoded as far as they go")
	}
	step(data, spans)
	if lines != nil {
		w.m.spans.keep(lines)
		p.lines = lines
	}
	// no more than the limit is decoded further (a little more, so that a
	// charset's last character is whole)
	cut := len(data) > limit+16
	if cut {
		data = data[:limit+16]
	}
	text, spans := w.decodeCharset(p, cs, data, spans)
	step(text, spans)
	if len(text) > limit || cut {
		p.problemErr(ErrTooLong, off, "decoded text longer than %d bytes; the rest is not scanned", limit)
		text = text[:min(len(text), limit)]
	}
	if st != nil && len(text) > chunkMin && isIdent(spans) && w.stagedText(p, text, spans[0].Raw, st) {
		// the stage run in pieces over the text decoded whole (base64)
		if owned != nil {
			w.m.bytes.keep(owned)
		}
		w.m.spans.keep(ownedSpans)
		return
	}
	if flowed {
		// a span per line: about one per 40 bytes to begin with
		text, spans = unflow(w.m.lend(len(text)+len(text)/8), w.m.lendSpans(len(text)/40+1), text, spans, delsp)
		step(text, spans)
	}
	if mt == "text/html" {
		text, spans = htmlText(w.m.lend(len(text)/2), w.m.lendSpans(len(text)/32+16), p, text, spans)
		step(text, spans)
		if p.lines != nil {
			// an attribute's place in decoded bytes: the line it came from
			for i := range p.AttrLinks {
				if r, ok := lineStart(p.lines, int(p.AttrLinks[i].Raw)); ok {
					p.AttrLinks[i].Raw = r
				}
			}
		}
	}
	if owned != nil {
		w.m.bytes.keep(owned)
	}
	w.m.spans.keep(ownedSpans)
	p.Text, p.Spans = text, spans
}

// isTextType tells the media types whose parts are read as text: text/*
// and the machine-readable reports that carry links in text fields
// (RFC 3464 delivery status, RFC 5965 feedback reports, RFC 8098
// disposition notifications, and their RFC 6533 UTF-8 forms, with
// message/global-headers, the UTF-8 form of text/rfc822-headers).
func isTextType(mt string) bool {
	if strings.HasPrefix(mt, "text/") {
		return true
	}
	switch mt {
	case "message/delivery-status", "message/feedback-report", "message/disposition-notification",
		"message/global-delivery-status", "message/global-disposition-notification", "message/global-headers":
		return true
	}
	return false
}

// sameStart reports whether a and b start at the same place in memory.
func sameStart[T any](a, b []T) bool {
	return cap(a) > 0 && cap(b) > 0 && &a[:1][0] == &b[:1][0]
}

// transferDecode undoes a Content-Transfer-Encoding, keeping the file
// offset of each line: it is decodeBody with the line offsets of a base64
// body as its spans.
func transferDecode(dst []byte, sdst []Span, enc string, body []byte, off int64) ([]byte, []Span, error) {
	if enc == "base64" {
		data, _, lines, err, _ := decodeBody(dst, nil, sdst, enc, body, off, -1)
		return data, lines, err
	}
	data, spans, _, err, _ := decodeBody(dst, sdst, nil, enc, body, off, -1)
	return data, spans, err
}

// decodeBody undoes a Content-Transfer-Encoding line by line. The decoded
// bytes go to dst[:0] (unencoded bodies stay where they are), their map
// to the file to sdst[:0]: exact through quoted-printable escapes and
// soft line breaks. A base64 body maps to offsets in its decoded bytes,
// one to one, and ldst[:0] gets the file offset of each encoded line;
// trunc is the file offset where base64 data ends inside a group of four
// characters, -1 if it does not. Decoding stops once more than limit
// bytes are out (limit < 0: no limit).
func decodeBody(dst []byte, sdst, ldst []Span, enc string, body []byte, off int64, limit int) (data []byte, spans, marks []Span, bad error, trunc int64) {
	trunc = -1
	identity := append(sdst[:0], Span{Text: 0, Raw: off, Exact: true})
	switch enc {
	case "", "7bit", "8bit", "binary", "7-bit", "8-bit", "none":
		return body, identity, nil, nil, -1
	case "quoted-printable", "base64":
	default:
		return body, identity, nil, errors.New("unknown Content-Transfer-Encoding " + strconv.Quote(enc) + "; scanned as written"), -1
	}
	out := dst[:0]
	if enc == "quoted-printable" {
		b := spanBuilder{out: sdst[:0]}
		badAt := int64(-1) // the first line with bad data
		for i, line := range lines(body) {
			if limit >= 0 && len(out) > limit {
				break
			}
			if full := trimEOL(line); bytes.IndexByte(line, '=') < 0 && (len(full) == 0 || full[len(full)-1] != ' ' && full[len(full)-1] != '\t') {
				// a line without escapes, soft break or white space to drop
				// (most): it stands for itself, and appendQPSpans would map
				// it so
				if r := off + int64(i); !b.continues(len(out), r) {
					b.pushIdent(len(out), r, false)
				}
				out = append(out, line...)
				continue
			}
			var lok bool
			out, lok = appendQPSpans(out, &b, line, off+int64(i))
			if !lok && badAt < 0 {
				badAt = off + int64(i)
			}
		}
		if len(b.out) == 0 {
			b.out = append(b.out, Span{Text: 0, Raw: off, Exact: true})
		}
		if badAt >= 0 {
			bad = &decodeError{badAt, qpBad}
		}
		return out, b.out, nil, bad, -1
	}
	d := b64Decoder{lm: lineMarks{out: ldst[:0]}, badAt: -1, lastChar: -1}
	out = d.decode(out, body, off, 0, limit)
	out, marks, bad, trunc = d.finish(out, off)
	return out, append(sdst[:0], Span{Text: 0, Raw: 0, Exact: true}), marks, bad, trunc
}

// b64Decoder decodes a base64 body line by line, in one call or in
// several over consecutive pieces of it (chunk.go), to the same bytes,
// line marks and problems.
type b64Decoder struct {
	lm       lineMarks
	quad     [4]byte // base64 characters carried from line to line
	nq       int
	badAt    int64 // the first line with bad data, or -1
	lastChar int64 // the file offset after the last base64 character, or -1
	noLines  bool  // the line marks are not wanted
}

// decode appends to out the bytes decoded from the lines of body (at
// file offset off), the decoded offset of out[0] in the whole part being
// t0, up to the line after which out holds more than limit bytes (limit
// < 0: all).
func (d *b64Decoder) decode(out, body []byte, off int64, t0, limit int) []byte {
	base := len(out)
	for i, line := range lines(body) {
		if limit >= 0 && len(out)-base > limit {
			break
		}
		if !d.noLines {
			d.lm.add(t0+len(out)-base, off+int64(i), len(line))
		}
		// the common line: whole quanta of valid characters, decoded as
		// they stand
		if tl := trimEOL(line); d.nq == 0 && len(tl)%4 == 0 {
			start := len(out)
			out = append(out, make([]byte, len(tl)/4*3)...)
			if k, err := base64.StdEncoding.Decode(out[start:], tl); err == nil {
				out = out[:start+k]
				if len(tl) > 0 {
					d.lastChar = off + int64(i+len(tl))
				}
				continue
			}
			out = out[:start]
		}
		// otherwise gather the base64 characters of the line after those
		// carried over, and decode every whole quantum at once
		start := len(out)
		chars := make([]byte, 0, len(line)+4)
		chars = append(chars, d.quad[:d.nq]...)
		for k, c := range line {
			if b64val[c] != 0xff {
				chars = append(chars, c)
				d.lastChar = off + int64(i+k+1)
			}
		}
		n := len(chars) / 4 * 4
		out = append(out, make([]byte, n/4*3)...)
		k, err := base64.StdEncoding.Decode(out[start:], chars[:n])
		if err != nil && d.badAt < 0 {
			d.badAt = off + int64(i)
		}
		out = out[:start+k]
		d.nq = copy(d.quad[:], chars[n:])
	}
	return out
}

// finish decodes what is left of a last quantum cut off, and returns the
// bytes, the line marks, bad data and where a cut quantum ends (or -1);
// off is the body's file offset.
func (d *b64Decoder) finish(out []byte, off int64) ([]byte, []Span, error, int64) {
	trunc := int64(-1)
	if d.nq > 0 {
		trunc = max(d.lastChar, off)
	}
	if d.nq > 1 {
		b, _ := base64.RawStdEncoding.DecodeString(strings.TrimRight(string(d.quad[:d.nq]), "="))
		out = append(out, b...)
	}
	var bad error
	if d.badAt >= 0 {
		bad = &decodeError{d.badAt, "bad base64 data; decoded what could be, kept the rest as written"}
	}
	return out, d.lm.finish(), bad, trunc
}

// lineMarks gathers the file offsets of a base64 body's lines, as the
// map from decoded offsets to the start of the line each came from, in
// few spans: consecutive lines of the same encoded and decoded length
// (most of a body) are one exact span whose units are those lengths, so
// that Span.at gives the start of the line that holds an offset; another
// line is a span of its own, not exact (at gives its Raw). The last line
// is always a span of its own, so that the offsets past it map to it. A
// line that decodes to nothing, but the last, has no span: the line after
// it starts at the same decoded offset and is the one found there.
type lineMarks struct {
	out []Span
	// the last line added, whose decoded length is not known yet
	pend  bool
	pt    int
	praw  int64
	prlen int
	// the run being gathered: n lines of d decoded and r encoded bytes,
	// the first at decoded offset t and file offset raw
	n, d, r, t int
	raw        int64
}

// add records a line of rlen bytes at file offset raw, whose decoded
// bytes start at t.
func (m *lineMarks) add(t int, raw int64, rlen int) {
	if m.pend {
		m.line(m.pt, m.praw, t-m.pt, m.prlen)
	}
	m.pend, m.pt, m.praw, m.prlen = true, t, raw, rlen
}

// line adds a line that is not the last, of d decoded bytes.
func (m *lineMarks) line(t int, raw int64, d, r int) {
	if d == 0 {
		return
	}
	if m.n > 0 && d == m.d && r == m.r && t == m.t+m.n*d && raw == m.raw+int64(m.n*r) {
		m.n++
		return
	}
	m.flush()
	m.n, m.d, m.r, m.t, m.raw = 1, d, r, t, raw
}

// flush writes the run gathered.
func (m *lineMarks) flush() {
	tu, tok := unitSize(m.d)
	ru, rok := unitSize(m.r)
	switch {
	case m.n == 0:
	case m.n > 1 && tok && rok:
		m.out = append(m.out, Span{Text: m.t, Raw: m.raw, Exact: true, TextUnit: tu, RawUnit: ru})
	default:
		for k := range m.n {
			m.out = append(m.out, Span{Text: m.t + k*m.d, Raw: m.raw + int64(k*m.r)})
		}
	}
	m.n = 0
}

// finish returns the map.
func (m *lineMarks) finish() []Span {
	if m.pend {
		m.flush()
		m.out = append(m.out, Span{Text: m.pt, Raw: m.praw})
		m.pend = false
	}
	return m.out
}

// lineStart maps an offset in a base64 part's decoded bytes to the file
// offset of the line it came from, and tells whether there is one.
func lineStart(lines []Span, x int) (int64, bool) {
	j := spanAt(lines, x)
	if j < 0 {
		return 0, false
	}
	r, _ := lines[j].at(x)
	return r, true
}

// splitLines returns lines with a span that holds lines on either side
// of file offset at split there, so that a shift that moves the offsets
// from at on (a hole) moves each line's offset as it would move it alone.
func splitLines(lines []Span, at int64) []Span {
	for i := range lines {
		s := lines[i]
		if !s.Exact || s.Raw >= at {
			continue
		}
		tu, ru := s.units()
		end := int64(-1) // the file offset after the span's last line
		if i+1 < len(lines) {
			end = s.Raw + int64((lines[i+1].Text-s.Text)/tu*ru)
		}
		if end >= 0 && at >= end {
			continue
		}
		k := (at - s.Raw + int64(ru) - 1) / int64(ru) // the first line at or after at
		if end >= 0 && s.Raw+k*int64(ru) >= end {
			continue
		}
		second := Span{Text: s.Text + int(k)*tu, Raw: s.Raw + k*int64(ru), Exact: true, TextUnit: s.TextUnit, RawUnit: s.RawUnit}
		return slices.Insert(slices.Clone(lines), i+1, second)
	}
	return lines
}

// decodeError is bad transfer-encoded data, at the file offset of the
// first line that holds some.
type decodeError struct {
	at  int64
	msg string
}

func (e *decodeError) Error() string { return e.msg }

// b64val marks the bytes of the base64 alphabet (and "="); 0xff is
// anything else.
var b64val = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=" {
		t[c] = byte(i)
	}
	return t
}()

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
func appendQPSpans(out []byte, b *spanBuilder, line []byte, at int64) ([]byte, bool) {
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
			if r := at + int64(i); !b.continues(len(out), r) {
				b.pushIdent(len(out), r, false)
			}
			out = append(out, body[i:i+j]...)
			i += j - 1
			lit = true
			continue
		}
		if i+2 < len(body) && isHex(body[i+1]) && isHex(body[i+2]) {
			b.push(len(out), at+int64(i), true, false, 0, 3, 0, false)
			out = append(out, unhex(body[i+1])<<4|unhex(body[i+2]))
			i += 2
			lit = false
			continue
		}
		ok = false
		b.pushIdent(len(out), at+int64(i), false)
		out = append(out, c)
		lit = true
	}
	if !soft && len(eol) > 0 {
		if !(lit && len(body) == len(full)) {
			// (after literal bytes that end the line the span goes on)
			var u uint16
			if len(body) < len(full) && len(eol) == 2 {
				// white space dropped before a CRLF: the CRLF is one unit,
				// since the bytes up to its CR alone would keep the space
				u = 2
			}
			b.push(len(out), at+int64(len(full)), true, false, u, u, 0, false)
		}
		out = append(out, eol...)
	}
	return out, ok
}

// trimBlanks drops the spaces and tabs at the end of b (bytes.TrimRight
// builds its set on every call).
func trimBlanks(b []byte) []byte {
	n := len(b)
	for n > 0 && (b[n-1] == ' ' || b[n-1] == '\t') {
		n--
	}
	return b[:n]
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'f' }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

// decodeCharset converts decoded bytes to UTF-8, keeping the spans.
func (w *walker) decodeCharset(p *Part, label string, data []byte, spans []Span) ([]byte, []Span) {
	enc, known := lookupCharset(label)
	if enc == nil {
		valid := utf8.Valid(data)
		switch {
		case valid && !known:
			p.problemErr(ErrCharset, p.RawStart, "unknown charset %q; the text is valid UTF-8 and read as such", label)
		case !valid && !known:
			p.problemErr(ErrCharset, p.RawStart, "unknown charset %q; decoded as windows-1252", label)
			enc = fallbackCharset
		case !valid:
			at := p.dataOffset(spans, invalidAt(data))
			p.problemErr(ErrCharset, at, "text is not valid %s; decoded as windows-1252", orDefault(label, "US-ASCII"))
			enc = fallbackCharset
		}
		if enc == nil {
			return data, spans
		}
	}
	p.decoder = enc
	if cm, ok := enc.(*charmap.Charmap); ok && isASCII(data) && asciiSuperset(cm) {
		return data, spans // nothing to convert
	}
	return convert(w.m.lend(len(data)+len(data)/2+16), w.m.lendSpans(convertSpans(enc, data, spans)), enc, data, spans)
}

// longPart is the size from which the walk counts how many spans a step
// will write before it lends the buffer for them, instead of guessing
// from the size: the map of a long part grown by append is copied again
// and again (a 45 MiB ISO-8859-1 part with an "é" a line allocated 150 MB
// of spans that way), while a short one is not worth the extra pass.
const longPart = 1 << 20

// qpSpans tells how many spans to lend the quoted-printable decoding of
// body: one per 64 bytes, or, for a long body, two for each "=" (an
// escape and the literal bytes after it, or a soft line break and the
// next line).
func qpSpans(body []byte) int {
	if len(body) < longPart {
		return len(body)/64 + 1
	}
	return 2*bytes.Count(body, []byte("=")) + 16
}

// convertSpans tells how many spans to lend convert: as many as the input
// has and a few more, or, for a long input in a single-byte charset, two
// for each run of bytes that do not decode to themselves (the run's units
// and the copy after them) if that is more. (Where the input has a span
// for each such byte already, a quoted-printable escape, the two counts
// are about the same and the output about as long.)
func convertSpans(enc encoding.Encoding, data []byte, spans []Span) int {
	n := len(spans)
	cm, ok := enc.(*charmap.Charmap)
	if !ok || len(data) < longPart {
		return n + 8
	}
	same := &byteTableOf(cm).same
	runs := 0
	in := false
	for _, c := range data {
		if !same[c] {
			if !in {
				runs++
			}
			in = true
		} else {
			in = false
		}
	}
	return max(n, 2*runs) + 8
}

// invalidAt returns the index of the first byte of b that is not part of
// valid UTF-8, or -1. ASCII goes eight bytes at a time and a character
// of two bytes (Latin letters, NBSP: most of what is not ASCII in mail)
// is checked here; longer ones are decoded.
func invalidAt(b []byte) int {
	for i := 0; i < len(b); {
		if i+8 <= len(b) && binary.LittleEndian.Uint64(b[i:])&0x8080808080808080 == 0 {
			i += 8
			continue
		}
		c := b[i]
		if c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= 0xc2 && c <= 0xdf && i+1 < len(b) && b[i+1]&0xc0 == 0x80 {
			i += 2
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// asciiSuperset reports whether a single-byte charset maps every ASCII
// byte to itself (ISO 8859, Windows and KOI8 do; EBCDIC code pages do not).
func asciiSuperset(cm *charmap.Charmap) bool { return byteTableOf(cm).ascii }

// isASCII reports whether b has no byte of 0x80 or above, eight bytes at a
// time.
func isASCII(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b)&0x8080808080808080 != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// convert runs a charset decoder over data into one buffer, dst[:0], and
// the map of the text it writes into sdst[:0], a unit per character:
// bytes that decode to themselves are copied in runs, a single-byte
// charset's other bytes are read from a table, and any other decoder is
// given one character at a time (the shortest input it takes), so that
// what each character came from is known, stateful charsets included.
// An undecodable byte becomes U+FFFD, as a unit of its own.
func convert(dst []byte, sdst []Span, enc encoding.Encoding, data []byte, spans []Span) ([]byte, []Span) {
	b := newSpanBuilder(spans, sdst, false)
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

// byteTable is a single-byte charset's decoding, for convert.
type byteTable struct {
	same [256]bool // the byte decodes to itself
	enc  [256]struct {
		b [4]byte
		n uint8
	}
	ascii bool // every ASCII byte decodes to itself
}

var byteTables sync.Map // *charmap.Charmap -> *byteTable

func byteTableOf(cm *charmap.Charmap) *byteTable {
	if t, ok := byteTables.Load(cm); ok {
		return t.(*byteTable)
	}
	t := &byteTable{ascii: true}
	for c := range 256 {
		r := cm.DecodeByte(byte(c))
		e := &t.enc[c]
		e.n = uint8(utf8.EncodeRune(e.b[:], r))
		t.same[c] = e.n == 1 && e.b[0] == byte(c)
		if c < utf8.RuneSelf && !t.same[c] {
			t.ascii = false
		}
	}
	byteTables.Store(cm, t)
	return t
}

// asciiTransparent tells the multi-byte charsets in which a byte below
// 0x80 that starts a character is that ASCII character, and that keep no
// state from character to character: there convert copies ASCII runs
// without the decoder. (Not so in ISO-2022 charsets, which switch state
// with escape sequences, nor in UTF-16.)
func asciiTransparent(enc encoding.Encoding) bool {
	name, err := htmlindex.Name(enc)
	if err != nil {
		return false
	}
	switch name {
	case "shift_jis", "euc-jp", "euc-kr", "gbk", "gb18030", "big5":
		return true
	}
	return false
}

// unflow undoes format=flowed (RFC 3676 §4): a line ending in a space is
// joined with the next line of the same quote depth; space-stuffing is
// removed; with DelSp=yes the space before the soft break goes too. The
// text is written to dst[:0], its spans to sdst[:0]: each line's content
// maps to where it stands, a joined line break cuts the map, and a quote
// prefix written back differently from the line's own has no source.
func unflow(dst []byte, sdst []Span, text []byte, spans []Span, delsp bool) ([]byte, []Span) {
	out, sp, _ := unflowState(dst, sdst, text, spans, delsp, nil)
	return out, sp
}

// unflowState is unflow on a piece of a part's text (chunk.go), going on
// from the output before it when seed, the last span of that output's
// map, is given (spanBuilder.seed), that also
// reports whether the piece ends open: in a flowed line, which joins the
// next, or in a line without its line break.
func unflowState(dst []byte, sdst []Span, text []byte, spans []Span, delsp bool, seed *Span) ([]byte, []Span, bool) {
	out := dst[:0]
	b := newSpanBuilder(spans, sdst, true)
	if seed != nil {
		b.seed(*seed)
	}
	open := true // the last line is flowed or has no line break
	// Lines copied as they stand one after the other (most lines that
	// are not flowed) are one copy when the input is one exact run of 1:1
	// units (b.ident): there copyRun of the whole maps them as copyRun of
	// each would, at a call instead of one per line. (Not elsewhere: a
	// line can end inside a unit of a charset's decoder, whose rest is
	// then not exact.)
	var runO, runX, runN int
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
				b.copyRun(runO, runX, runN)
				runN = 0
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
		if k := len(out) - n; b.ident && runN > 0 && n == runO+runN && from == runX+runN {
			runN += k
		} else {
			b.copyRun(runO, runX, runN)
			runO, runX, runN = n, from, k
		}
		prevFlowed, prevDepth = flowed, depth
		open = flowed || len(eol) == 0
	}
	b.copyRun(runO, runX, runN)
	return out, b.finish(), open
}
