package rewrite

import (
	"encoding/binary"
	"iter"
)

// Changes holds the LinkChanges of one message compactly, in the order
// Message gives them: a link-dense message has hundreds of thousands of
// changes, and a []LinkChange costs some 450 bytes of heap for each
// (the struct, its Rules, the strings of its URLs), well over the
// message's own size. Here each change is a record of varints in chunks
// of bytes: the strings that repeat (parts, places, content types,
// forms, rule names, actions, reasons) are kept once; a URL is written
// as its difference from the one before it (the old URL from the
// previous change's, the new one from the old one, each rule's URLs from
// the link's), so that a change of a host in a URL of a list of similar
// URLs costs a few bytes, and rules written as the previous change's
// were cost one. A map rule's change of one link of such a list takes
// about 23 bytes (TestChangesMemory). All and List give the
// LinkChanges back, each as it was added.
//
// A Changes is not safe for use by several goroutines at once.
type Changes struct {
	chunks [][]byte // the records; a record never crosses chunks
	n      int
	strs   []string // interned strings; strs[0] is ""
	ids    map[string]uint32
	// the previous record's values, which the next is written against
	prev    prevRec
	scratch []byte // a record's body while it is written
	// the previous change's rules as written (rules), and a buffer for
	// the next's
	prevRules, rscratch []byte
}

// prevRec is what a record is delta-coded against: the record before it.
type prevRec struct {
	old                string
	start, line, rawAt int64
}

// chunkSize is the size of a chunk of records: a record larger than it
// gets a chunk of its own. A record's place in its chunk does not change
// when the chunk grows.
const chunkSize = 64 << 10

// maxInterned bounds the strings kept once that do not have to be
// (URL differences, notes): past it they are written in their record.
const maxInterned = 4096

// Record layout: the mutable head (skip: 4 bytes, little-endian, the
// interned index of Skipped; flags: 1 byte), the body's length
// (uvarint), the body.
const headLen = 5

const (
	flagAnnotated    = 1 << iota
	flagWrittenEmpty // written is ""
	flagWrittenNew   // written is New
)

// Len returns the number of changes.
func (c *Changes) Len() int {
	if c == nil {
		return 0
	}
	return c.n
}

// All yields the changes in order. Each LinkChange is made anew (its
// strings and Rules are its own).
func (c *Changes) All() iter.Seq[LinkChange] {
	return func(yield func(LinkChange) bool) {
		if c == nil {
			return
		}
		var d decoder
		d.c = c
		for _, ch := range c.chunks {
			for at := 0; at < len(ch); {
				var lc LinkChange
				at = d.record(ch, at, &lc)
				if !yield(lc) {
					return
				}
			}
		}
	}
}

// List returns the changes as a slice.
func (c *Changes) List() []LinkChange {
	if c.Len() == 0 {
		return nil
	}
	out := make([]LinkChange, 0, c.n)
	for lc := range c.All() {
		out = append(out, lc)
	}
	return out
}

// smallStrs is the number of interned strings looked up in the slice,
// before a map is made: a message with a few changes interns a few.
const smallStrs = 16

// lookup returns the index of s among the interned strings.
func (c *Changes) lookup(s string) (uint32, bool) {
	if s == "" {
		return 0, true
	}
	if c.ids != nil {
		i, ok := c.ids[s]
		return i, ok
	}
	for i, t := range c.strs {
		if t == s {
			return uint32(i), true
		}
	}
	return 0, false
}

// intern returns the index of s among the interned strings, adding it
// (strings are not written to, so s itself is kept).
func (c *Changes) intern(s string) uint32 {
	if i, ok := c.lookup(s); ok {
		return i
	}
	if c.strs == nil {
		c.strs = append(make([]string, 0, 8), "")
	}
	i := uint32(len(c.strs))
	c.strs = append(c.strs, s)
	switch {
	case c.ids != nil:
		c.ids[s] = i
	case len(c.strs) > smallStrs:
		c.ids = make(map[string]uint32, 2*len(c.strs))
		for k, t := range c.strs {
			c.ids[t] = uint32(k)
		}
	}
	return i
}

// encoder appends one record's body.
type encoder struct {
	c *Changes
	b []byte
}

func (e *encoder) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) int(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) id(s string)   { e.uint(uint64(e.c.intern(s))) }

// slice writes the length of a slice: 0 for nil, else the length plus
// one.
func (e *encoder) slice(isNil bool, n int) {
	if isNil {
		e.uint(0)
		return
	}
	e.uint(uint64(n) + 1)
}

// str writes s interned when it is (or may be) kept once, else in the
// record: an even tag is an interned index times two, an odd one a
// length times two plus one, the bytes following.
func (e *encoder) str(s string) {
	if i, ok := e.c.lookup(s); ok {
		e.uint(uint64(i) * 2)
		return
	}
	if len(s) <= 64 && len(e.c.strs) < maxInterned {
		e.uint(uint64(e.c.intern(s)) * 2)
		return
	}
	e.uint(uint64(len(s))*2 + 1)
	e.b = append(e.b, s...)
}

// url writes x as its difference from ref: 0 when they are the same,
// else the length of their common prefix plus one, the length of their
// common suffix (not overlapping it) and the middle of x (str).
func (e *encoder) url(x, ref string) {
	if x == ref {
		e.uint(0)
		return
	}
	p := 0
	for p < len(x) && p < len(ref) && x[p] == ref[p] {
		p++
	}
	s := 0
	for s < len(x)-p && s < len(ref)-p && x[len(x)-1-s] == ref[len(ref)-1-s] {
		s++
	}
	e.uint(uint64(p) + 1)
	e.uint(uint64(s))
	e.str(x[p : len(x)-s])
}

// rules writes the rules of lc: a tag (1 for nil, else their number
// plus two; 0 is "as the previous change's"), then each rule, its URLs
// written against the link's.
func (e *encoder) rules(lc *LinkChange) {
	if lc.Rules == nil {
		e.uint(1)
		return
	}
	e.uint(uint64(len(lc.Rules)) + 2)
	ref := lc.Old
	for i := range lc.Rules {
		r := &lc.Rules[i]
		e.id(r.Rule)
		e.int(int64(r.Line))
		e.id(r.Action)
		e.url(r.Old, ref)
		// the last rule's New is most often the link's: a flag
		if r.New == lc.New {
			e.uint(0)
		} else {
			e.uint(1)
			e.url(r.New, r.Old)
		}
		ref = r.New
		e.id(r.Form)
		e.slice(r.Layers == nil, len(r.Layers))
		for _, w := range r.Layers {
			e.id(string(w))
		}
		e.int(int64(r.Removed))
		e.str(r.Note)
		e.str(r.Skipped)
	}
}

// add appends a change.
func (c *Changes) add(lc *LinkChange) {
	e := encoder{c: c, b: c.scratch[:0]}
	e.id(lc.Part)
	e.id(lc.Where)
	e.id(lc.ContentType)
	e.int(lc.Start - c.prev.start)
	e.int(lc.End - lc.Start)
	e.int(int64(lc.Line) - c.prev.line)
	e.int(int64(lc.Column))
	e.int(lc.RawOffset - c.prev.rawAt)
	e.url(lc.Old, c.prev.old)
	e.url(lc.New, lc.Old)
	e.id(lc.OldForm)
	e.id(lc.NewForm)
	var flags byte
	switch lc.written {
	case "":
		flags |= flagWrittenEmpty
	case lc.New:
		flags |= flagWrittenNew
	default:
		e.url(lc.written, lc.New)
	}
	if lc.Annotated {
		flags |= flagAnnotated
	}
	// the rules, written against the link's URLs: the same bytes as the
	// previous change's (the same rules did the same to a like link, as
	// in a link-dense message) are written as one byte
	rb := encoder{c: c, b: c.rscratch[:0]}
	rb.rules(lc)
	if c.n > 0 && string(rb.b) == string(c.prevRules) {
		e.uint(0)
	} else {
		e.b = append(e.b, rb.b...)
	}
	c.rscratch, c.prevRules = c.prevRules[:0], rb.b
	c.prev = prevRec{old: lc.Old, start: lc.Start, line: int64(lc.Line), rawAt: lc.RawOffset}

	var lb [binary.MaxVarintLen64]byte
	n := headLen + binary.PutUvarint(lb[:], uint64(len(e.b))) + len(e.b)
	// a chunk grows (by append) up to chunkSize; the first starts small,
	// for the message with a few changes
	k := len(c.chunks) - 1
	if k < 0 || len(c.chunks[k]) > 0 && len(c.chunks[k])+n > chunkSize {
		size := chunkSize
		if k < 0 {
			size = 512
		}
		c.chunks = append(c.chunks, make([]byte, 0, max(size, n)))
		k++
	}
	ch := c.chunks[k]
	ch = binary.LittleEndian.AppendUint32(ch, c.intern(lc.Skipped))
	ch = append(ch, flags)
	ch = binary.AppendUvarint(ch, uint64(len(e.b)))
	c.chunks[k] = append(ch, e.b...)
	c.scratch = e.b
	c.n++
}

// pos is the place of a record: a chunk and an offset in it.
type pos struct{ chunk, at int }

// end returns the place the next record will be added at (or after, in
// a new chunk).
func (c *Changes) end() pos {
	if c == nil || len(c.chunks) == 0 {
		return pos{}
	}
	return pos{len(c.chunks) - 1, len(c.chunks[len(c.chunks)-1])}
}

// heads calls f with the mutable head of every record from p on.
func (c *Changes) heads(p pos, f func(h []byte)) {
	if c == nil {
		return
	}
	for k := p.chunk; k < len(c.chunks); k++ {
		ch := c.chunks[k]
		at := 0
		if k == p.chunk {
			at = p.at
		}
		for at < len(ch) {
			h := ch[at : at+headLen]
			l, n := binary.Uvarint(ch[at+headLen:])
			f(h)
			at += headLen + n + int(l)
		}
	}
}

// skipFrom sets Skipped of every change from p on that is neither
// skipped nor annotated to reason.
func (c *Changes) skipFrom(p pos, reason string, annotatedToo bool) {
	if c.Len() == 0 {
		return
	}
	id := c.intern(reason)
	c.heads(p, func(h []byte) {
		if binary.LittleEndian.Uint32(h) == 0 && (annotatedToo || h[4]&flagAnnotated == 0) {
			binary.LittleEndian.PutUint32(h, id)
		}
	})
}

// annotateAll marks every change not skipped as annotated.
func (c *Changes) annotateAll() {
	c.heads(pos{}, func(h []byte) {
		if binary.LittleEndian.Uint32(h) == 0 {
			h[4] |= flagAnnotated
		}
	})
}

// decoder reads records in order, keeping the previous one's values.
type decoder struct {
	c         *Changes
	b         []byte
	prev      prevRec
	prevRules []byte // the previous change's rules as written
}

func (d *decoder) uint() uint64 {
	v, n := binary.Uvarint(d.b)
	d.b = d.b[n:]
	return v
}

func (d *decoder) int() int64 {
	v, n := binary.Varint(d.b)
	d.b = d.b[n:]
	return v
}

func (d *decoder) id() string { return d.c.strs[d.uint()] }

func (d *decoder) str() string {
	t := d.uint()
	if t%2 == 0 {
		return d.c.strs[t/2]
	}
	s := string(d.b[:t/2])
	d.b = d.b[t/2:]
	return s
}

func (d *decoder) url(ref string) string {
	k := d.uint()
	if k == 0 {
		return ref
	}
	p, s := int(k-1), int(d.uint())
	return ref[:p] + d.str() + ref[len(ref)-s:]
}

// record decodes the record at ch[at:] into lc and returns the offset
// of the next.
func (d *decoder) record(ch []byte, at int, lc *LinkChange) int {
	skip := binary.LittleEndian.Uint32(ch[at:])
	flags := ch[at+4]
	l, n := binary.Uvarint(ch[at+headLen:])
	next := at + headLen + n + int(l)
	d.b = ch[at+headLen+n : next]
	lc.Skipped = d.c.strs[skip]
	lc.Annotated = flags&flagAnnotated != 0
	lc.Part = d.id()
	lc.Where = d.id()
	lc.ContentType = d.id()
	lc.Start = d.prev.start + d.int()
	lc.End = lc.Start + d.int()
	lc.Line = int(d.prev.line + d.int())
	lc.Column = int(d.int())
	lc.RawOffset = d.prev.rawAt + d.int()
	lc.Old = d.url(d.prev.old)
	lc.New = d.url(lc.Old)
	lc.OldForm = d.id()
	lc.NewForm = d.id()
	switch {
	case flags&flagWrittenEmpty != 0:
		lc.written = ""
	case flags&flagWrittenNew != 0:
		lc.written = lc.New
	default:
		lc.written = d.url(lc.New)
	}
	if len(d.b) > 0 && d.b[0] == 0 {
		// as the previous change's
		body := d.b[1:]
		d.b = d.prevRules
		d.rules(lc)
		d.b = body
	} else {
		rs := d.b
		d.rules(lc)
		d.prevRules = rs[:len(rs)-len(d.b)]
	}
	d.prev = prevRec{old: lc.Old, start: lc.Start, line: int64(lc.Line), rawAt: lc.RawOffset}
	return next
}

// rules reads the rules of lc (encoder.rules).
func (d *decoder) rules(lc *LinkChange) {
	if nr := int(d.uint()); nr > 1 {
		lc.Rules = make([]Change, nr-2)
		ref := lc.Old
		for i := range lc.Rules {
			r := &lc.Rules[i]
			r.Rule = d.id()
			r.Line = int(d.int())
			r.Action = d.id()
			r.Old = d.url(ref)
			if d.uint() == 0 {
				r.New = lc.New
			} else {
				r.New = d.url(r.Old)
			}
			ref = r.New
			r.Form = d.id()
			if nl := int(d.uint()); nl > 0 {
				r.Layers = make([]Wrapper, nl-1)
				for j := range r.Layers {
					r.Layers[j] = Wrapper(d.id())
				}
			}
			r.Removed = int(d.int())
			r.Note = d.str()
			r.Skipped = d.str()
		}
	}
}

// each calls f with every change and its record's mutable head (see
// setHead).
func (c *Changes) each(f func(h []byte, lc *LinkChange)) {
	if c == nil {
		return
	}
	var d decoder
	d.c = c
	for _, ch := range c.chunks {
		for at := 0; at < len(ch); {
			var lc LinkChange
			next := d.record(ch, at, &lc)
			f(ch[at:at+headLen], &lc)
			at = next
		}
	}
}

// setHead sets the Skipped and Annotated of the record whose head is h.
func (c *Changes) setHead(h []byte, skipped string, annotated bool) {
	binary.LittleEndian.PutUint32(h, c.intern(skipped))
	if annotated {
		h[4] |= flagAnnotated
	} else {
		h[4] &^= flagAnnotated
	}
}

// last returns the last change.
func (c *Changes) last() (LinkChange, bool) {
	var lc LinkChange
	ok := false
	c.each(func(_ []byte, x *LinkChange) { lc, ok = *x, true })
	return lc, ok
}
