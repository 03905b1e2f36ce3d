package scan

import (
	"encoding/binary"
	"errors"
	"sync"

	"github.com/linkscan/linkscan/record"
)

// The records of a link-dense message are many (a 20 MB message of one
// link a line gives 255,000 of them) and a record.Record is large: some
// 400 bytes of struct plus its own strings. Held whole from the worker to
// the writer they cost ten times the message's size. Past
// Config.CompactAfter records, a message's records are kept in a
// recordStore instead, some tens of bytes each, and decoded one at a time
// for the writer (Result.Each).
//
// The encoding of a record, in the store's chunks (a record never spans
// two chunks), is a uvarint of flags, then:
//   - the URL as the length of the prefix it shares with the URL before it,
//     the length of the rest and the rest;
//   - the canonical form as 0 when it is the URL, else the length of the
//     prefix it shares with the URL plus one, the length of the rest and
//     the rest;
//   - the host as the index of its first byte in the canonical form plus
//     one and its length, or 0 and the host's length and bytes;
//   - Form, Scheme, Part, ContentType, Where, Status as indices into the
//     store's table of strings (a message has few distinct ones);
//   - unless flagSameMessage, Path, Blob, MessageID, Date, From, Subject,
//     Newsgroups (table indices) and Offset: the fields of the message,
//     which records made by scan share, so most records leave them out;
//   - Line, Column, Start, End, RawOffset, RawStart, RawEnd, Count as
//     varints, each the difference from a neighbour (the previous record's
//     line, start and raw offset; start for end; raw offset for raw
//     start; raw start for raw end);
//   - with flagProblems, the number of problems and each (table index);
//     with flagTarget, the target; with flagTargets, their number and
//     each (a target: six table indices and a varint offset).
//
// The store is private to a run: no version, no checks beyond those that
// keep a damaged store from reading out of bounds (a bug, reported by
// Each as errCorrupt).

const (
	cJoined = 1 << iota
	cHeuristic
	cValid
	cProblems // Problems is not nil
	cTarget   // Target is not nil
	cTargets  // Targets is not nil
	cSameMessage
)

// compactChunk is the size of the store's chunks; a larger record gets a
// chunk of its own.
const compactChunk = 64 << 10

// DefaultCompactAfter is the number of records of one message past which
// the command keeps them compact (Config.CompactAfter).
const DefaultCompactAfter = 1024

var errCorrupt = errors.New("scan: compact records damaged (a bug)")

// chunks recycles the store's chunks from message to message.
var chunks = sync.Pool{New: func() any { b := make([]byte, 0, compactChunk); return &b }}

// recordStore holds records in the compact encoding above.
type recordStore struct {
	base   record.Record // the message's fields: Path ... Newsgroups, Offset
	chunks []*[]byte
	n      int // records

	strs  []string
	index map[string]uint32

	// the encoder's memory of the record before
	prevURL                  string
	prevLine                 int
	prevStart, prevRawOffset int64
	scratch                  []byte
}

// reset empties the store for the message whose fields base holds, giving
// its chunks back.
func (s *recordStore) reset(base *record.Record) {
	for _, c := range s.chunks {
		if cap(*c) == compactChunk { // a chunk of one large record is left to the collector
			*c = (*c)[:0]
			chunks.Put(c)
		}
	}
	clear(s.chunks)
	s.chunks = s.chunks[:0]
	s.n = 0
	clear(s.strs)
	s.strs = s.strs[:0]
	clear(s.index)
	s.prevURL, s.prevLine, s.prevStart, s.prevRawOffset = "", 0, 0, 0
	s.base = record.Record{}
	if base != nil {
		s.base = record.Record{Path: base.Path, Blob: base.Blob, Offset: base.Offset, MessageID: base.MessageID, Date: base.Date,
			From: base.From, Subject: base.Subject, Newsgroups: base.Newsgroups}
	}
}

// str returns the table index of v, adding it.
func (s *recordStore) str(v string) uint64 {
	if i, ok := s.index[v]; ok {
		return uint64(i)
	}
	if s.index == nil {
		s.index = map[string]uint32{}
	}
	i := uint32(len(s.strs))
	s.strs = append(s.strs, v)
	s.index[v] = i
	return uint64(i)
}

func sameMessageFields(r, base *record.Record) bool {
	return r.Path == base.Path && r.Blob == base.Blob && r.Offset == base.Offset && r.MessageID == base.MessageID && r.Date == base.Date &&
		r.From == base.From && r.Subject == base.Subject && r.Newsgroups == base.Newsgroups
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// add appends r to the store.
func (s *recordStore) add(r *record.Record) {
	b := s.scratch[:0]
	var f uint64
	if r.Joined {
		f |= cJoined
	}
	if r.Heuristic {
		f |= cHeuristic
	}
	if r.Valid {
		f |= cValid
	}
	if r.Problems != nil {
		f |= cProblems
	}
	if r.Target != nil {
		f |= cTarget
	}
	if r.Targets != nil {
		f |= cTargets
	}
	same := sameMessageFields(r, &s.base)
	if same {
		f |= cSameMessage
	}
	b = binary.AppendUvarint(b, f)

	p := commonPrefix(s.prevURL, r.URL)
	b = binary.AppendUvarint(b, uint64(p))
	b = binary.AppendUvarint(b, uint64(len(r.URL)-p))
	b = append(b, r.URL[p:]...)
	s.prevURL = r.URL

	if r.Canonical == r.URL {
		b = append(b, 0)
	} else {
		p := commonPrefix(r.URL, r.Canonical)
		b = binary.AppendUvarint(b, uint64(p)+1)
		b = binary.AppendUvarint(b, uint64(len(r.Canonical)-p))
		b = append(b, r.Canonical[p:]...)
	}

	if i := indexString(r.Canonical, r.Host); r.Host != "" && i >= 0 {
		b = binary.AppendUvarint(b, uint64(i)+1)
		b = binary.AppendUvarint(b, uint64(len(r.Host)))
	} else {
		b = append(b, 0)
		b = binary.AppendUvarint(b, uint64(len(r.Host)))
		b = append(b, r.Host...)
	}

	for _, v := range [...]string{r.Form, r.Scheme, r.Part, r.ContentType, r.Where, r.Status} {
		b = binary.AppendUvarint(b, s.str(v))
	}
	if !same {
		for _, v := range [...]string{r.Path, r.Blob, r.MessageID, r.Date, r.From, r.Subject, r.Newsgroups} {
			b = binary.AppendUvarint(b, s.str(v))
		}
		b = binary.AppendVarint(b, r.Offset)
	}

	b = binary.AppendVarint(b, int64(r.Line-s.prevLine))
	b = binary.AppendVarint(b, int64(r.Column))
	b = binary.AppendVarint(b, r.Start-s.prevStart)
	b = binary.AppendVarint(b, r.End-r.Start)
	b = binary.AppendVarint(b, r.RawOffset-s.prevRawOffset)
	b = binary.AppendVarint(b, r.RawStart-r.RawOffset)
	b = binary.AppendVarint(b, r.RawEnd-r.RawStart)
	b = binary.AppendVarint(b, int64(r.Count))
	s.prevLine, s.prevStart, s.prevRawOffset = r.Line, r.Start, r.RawOffset

	if r.Problems != nil {
		b = binary.AppendUvarint(b, uint64(len(r.Problems)))
		for _, v := range r.Problems {
			b = binary.AppendUvarint(b, s.str(v))
		}
	}
	if r.Target != nil {
		b = s.appendTarget(b, r.Target)
	}
	if r.Targets != nil {
		b = binary.AppendUvarint(b, uint64(len(r.Targets)))
		for i := range r.Targets {
			b = s.appendTarget(b, &r.Targets[i])
		}
	}
	s.scratch = b

	var c *[]byte
	if k := len(s.chunks); k > 0 && cap(*s.chunks[k-1])-len(*s.chunks[k-1]) >= len(b) {
		c = s.chunks[k-1]
	} else if len(b) <= compactChunk {
		c = chunks.Get().(*[]byte)
		s.chunks = append(s.chunks, c)
	} else {
		big := make([]byte, 0, len(b)) // not pooled (reset)
		c = &big
		s.chunks = append(s.chunks, c)
	}
	*c = append(*c, b...)
	s.n++
}

func (s *recordStore) appendTarget(b []byte, t *record.Target) []byte {
	for _, v := range [...]string{t.File, t.MessageID, t.Part, t.Group, t.Blob, t.Name} {
		b = binary.AppendUvarint(b, s.str(v))
	}
	return binary.AppendVarint(b, t.Offset)
}

// indexString is strings.Index, without the import's fast paths that the
// short hosts do not need.
func indexString(s, sub string) int {
	if sub == "" {
		return -1
	}
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i] == sub[0] && s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// each decodes the records in order into one Record and calls fn with it;
// fn must not keep the Record (its slices and strings it may keep).
func (s *recordStore) each(fn func(*record.Record) error) error {
	d := decoder{s: s}
	var r record.Record
	for _, c := range s.chunks {
		d.b = *c
		for len(d.b) > 0 {
			d.record(&r)
			if d.err != nil {
				return d.err
			}
			if err := fn(&r); err != nil {
				return err
			}
		}
	}
	return nil
}

type decoder struct {
	s                *recordStore
	b                []byte
	err              error
	url              []byte // the URL before, for its shared prefix
	line             int
	start, rawOffset int64
}

func (d *decoder) fail() {
	d.err, d.b = errCorrupt, nil
}

func (d *decoder) uvarint() uint64 {
	n, k := binary.Uvarint(d.b)
	if k <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[k:]
	return n
}

func (d *decoder) varint() int64 {
	n, k := binary.Varint(d.b)
	if k <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[k:]
	return n
}

func (d *decoder) bytes(n uint64) []byte {
	if n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string {
	i := d.uvarint()
	if i >= uint64(len(d.s.strs)) {
		d.fail()
		return ""
	}
	return d.s.strs[i]
}

func (d *decoder) target(t *record.Target) {
	t.File, t.MessageID, t.Part, t.Group, t.Blob, t.Name = d.str(), d.str(), d.str(), d.str(), d.str(), d.str()
	t.Offset = d.varint()
}

// record decodes the next record into r, every field of it.
func (d *decoder) record(r *record.Record) {
	f := d.uvarint()
	p := d.uvarint()
	rest := d.bytes(d.uvarint())
	if p > uint64(len(d.url)) {
		d.fail()
		return
	}
	d.url = append(d.url[:p], rest...)
	// one string for the URL and, when it differs, the canonical form
	r.URL = string(d.url)
	r.Canonical = r.URL
	if c := d.uvarint(); c > 0 {
		rest := d.bytes(d.uvarint())
		if c-1 > uint64(len(r.URL)) {
			d.fail()
			return
		}
		r.Canonical = r.URL[:c-1] + string(rest)
	}
	if i := d.uvarint(); i > 0 {
		n := d.uvarint()
		if i-1 > uint64(len(r.Canonical)) || n > uint64(len(r.Canonical))-(i-1) {
			d.fail()
			return
		}
		r.Host = r.Canonical[i-1 : i-1+n]
	} else {
		r.Host = string(d.bytes(d.uvarint()))
	}
	r.Form, r.Scheme, r.Part, r.ContentType, r.Where, r.Status = d.str(), d.str(), d.str(), d.str(), d.str(), d.str()
	base := &d.s.base
	if f&cSameMessage != 0 {
		r.Path, r.Blob, r.MessageID, r.Date, r.From, r.Subject, r.Newsgroups = base.Path, base.Blob, base.MessageID, base.Date, base.From, base.Subject, base.Newsgroups
		r.Offset = base.Offset
	} else {
		r.Path, r.Blob, r.MessageID, r.Date, r.From, r.Subject, r.Newsgroups = d.str(), d.str(), d.str(), d.str(), d.str(), d.str(), d.str()
		r.Offset = d.varint()
	}
	r.Joined, r.Heuristic, r.Valid = f&cJoined != 0, f&cHeuristic != 0, f&cValid != 0

	d.line += int(d.varint())
	r.Line = d.line
	r.Column = int(d.varint())
	d.start += d.varint()
	r.Start = d.start
	r.End = r.Start + d.varint()
	d.rawOffset += d.varint()
	r.RawOffset = d.rawOffset
	r.RawStart = r.RawOffset + d.varint()
	r.RawEnd = r.RawStart + d.varint()
	r.Count = int(d.varint())

	r.Problems = nil
	if f&cProblems != 0 {
		n := d.uvarint()
		if n > uint64(len(d.b)) {
			d.fail()
			return
		}
		r.Problems = make([]string, n) // fresh: the writer may keep it
		for i := range r.Problems {
			r.Problems[i] = d.str()
		}
	}
	r.Target = nil
	if f&cTarget != 0 {
		r.Target = new(record.Target)
		d.target(r.Target)
	}
	r.Targets = nil
	if f&cTargets != 0 {
		n := d.uvarint()
		if n > uint64(len(d.b)) {
			d.fail()
			return
		}
		r.Targets = make([]record.Target, n)
		for i := range r.Targets {
			d.target(&r.Targets[i])
		}
	}
}
