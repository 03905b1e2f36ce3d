package report

import (
	"encoding/binary"
	"errors"
)

// The binary form of a Record, for the records --unique keeps on disk:
// a byte of flags, then the strings (a uvarint length and the bytes), the
// numbers (varints), the problems and the targets, in the order of
// appendRecordBinary. The fields of the message (path, offset,
// Message-ID, date, from, subject, newsgroups) and of the part (part,
// content type, where) are left out when they equal the previous
// record's, flagged, since a message's links come one after another; the
// canonical form is a single zero byte when it equals the URL. It is
// private to one process and has no version.

const (
	flagJoined = 1 << iota
	flagHeuristic
	flagValid
	flagProblems // Problems is not nil
	flagTarget   // Target is not nil
	flagTargets  // Targets is not nil
	flagSameMessage
	flagSamePart
)

func sameMessage(a, b *Record) bool {
	return a.Path == b.Path && a.Blob == b.Blob && a.Offset == b.Offset && a.MessageID == b.MessageID && a.Date == b.Date &&
		a.From == b.From && a.Subject == b.Subject && a.Newsgroups == b.Newsgroups
}

func samePart(a, b *Record) bool {
	return a.Part == b.Part && a.ContentType == b.ContentType && a.Where == b.Where
}

// appendRecordBinary appends the binary form of r to b, leaving out the
// fields it shares with prev (the record encoded before it, or nil).
func appendRecordBinary(b []byte, r, prev *Record) []byte {
	sameM := prev != nil && sameMessage(r, prev)
	sameP := prev != nil && samePart(r, prev)
	var f byte
	for i, set := range []bool{r.Joined, r.Heuristic, r.Valid, r.Problems != nil, r.Target != nil, r.Targets != nil, sameM, sameP} {
		if set {
			f |= 1 << i
		}
	}
	b = append(b, f)
	b = appendBinString(b, r.URL)
	// The canonical form is most often the URL itself: 0 says so, n+1 is
	// the length of another.
	if r.Canonical == r.URL {
		b = append(b, 0)
	} else {
		b = binary.AppendUvarint(b, uint64(len(r.Canonical))+1)
		b = append(b, r.Canonical...)
	}
	for _, s := range [...]string{r.Form, r.Scheme, r.Host, r.Status} {
		b = appendBinString(b, s)
	}
	if !sameM {
		for _, s := range [...]string{r.Path, r.Blob, r.MessageID, r.Date, r.From, r.Subject, r.Newsgroups} {
			b = appendBinString(b, s)
		}
		b = binary.AppendVarint(b, r.Offset)
	}
	if !sameP {
		for _, s := range [...]string{r.Part, r.ContentType, r.Where} {
			b = appendBinString(b, s)
		}
	}
	for _, n := range [...]int64{int64(r.Line), int64(r.Column), r.Start, r.End, r.RawOffset, r.RawStart, r.RawEnd, int64(r.Count)} {
		b = binary.AppendVarint(b, n)
	}
	b = binary.AppendUvarint(b, uint64(len(r.Problems)))
	for _, p := range r.Problems {
		b = appendBinString(b, p)
	}
	if r.Target != nil {
		b = appendTargetBinary(b, r.Target)
	}
	b = binary.AppendUvarint(b, uint64(len(r.Targets)))
	for i := range r.Targets {
		b = appendTargetBinary(b, &r.Targets[i])
	}
	return b
}

func appendTargetBinary(b []byte, t *Target) []byte {
	for _, s := range [...]string{t.File, t.MessageID, t.Part, t.Group, t.Blob, t.Name} {
		b = appendBinString(b, s)
	}
	return binary.AppendVarint(b, t.Offset)
}

func appendBinString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

var errBadRecord = errors.New("report: a record kept on disk for --unique is damaged")

type binDecoder struct {
	b   []byte
	err error
}

func (d *binDecoder) uvarint() uint64 {
	n, k := binary.Uvarint(d.b)
	if k <= 0 {
		d.err, d.b = errBadRecord, nil
		return 0
	}
	d.b = d.b[k:]
	return n
}

func (d *binDecoder) varint() int64 {
	n, k := binary.Varint(d.b)
	if k <= 0 {
		d.err, d.b = errBadRecord, nil
		return 0
	}
	d.b = d.b[k:]
	return n
}

func (d *binDecoder) string() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.err, d.b = errBadRecord, nil
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// stringOr reads a string written as a length plus one, or 0 for same.
func (d *binDecoder) stringOr(same string) string {
	n := d.uvarint()
	if n == 0 {
		return same
	}
	if n-1 > uint64(len(d.b)) {
		d.err, d.b = errBadRecord, nil
		return ""
	}
	s := string(d.b[:n-1])
	d.b = d.b[n-1:]
	return s
}

// count reads a length of a list of items of at least one byte each.
func (d *binDecoder) count() int {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.err, d.b = errBadRecord, nil
		return 0
	}
	return int(n)
}

func (d *binDecoder) target(t *Target) {
	for _, s := range [...]*string{&t.File, &t.MessageID, &t.Part, &t.Group, &t.Blob, &t.Name} {
		*s = d.string()
	}
	t.Offset = d.varint()
}

// decodeRecordBinary sets r from the output of appendRecordBinary, with
// the same prev (the record decoded before it, or nil).
func decodeRecordBinary(b []byte, r, prev *Record) error {
	if len(b) == 0 {
		return errBadRecord
	}
	f := b[0]
	if prev == nil && f&(flagSameMessage|flagSamePart) != 0 {
		return errBadRecord
	}
	d := &binDecoder{b: b[1:]}
	*r = Record{Joined: f&flagJoined != 0, Heuristic: f&flagHeuristic != 0, Valid: f&flagValid != 0}
	r.URL = d.string()
	r.Canonical = d.stringOr(r.URL)
	for _, s := range [...]*string{&r.Form, &r.Scheme, &r.Host, &r.Status} {
		*s = d.string()
	}
	if f&flagSameMessage != 0 {
		r.Path, r.Blob, r.Offset, r.MessageID, r.Date = prev.Path, prev.Blob, prev.Offset, prev.MessageID, prev.Date
		r.From, r.Subject, r.Newsgroups = prev.From, prev.Subject, prev.Newsgroups
	} else {
		for _, s := range [...]*string{&r.Path, &r.Blob, &r.MessageID, &r.Date, &r.From, &r.Subject, &r.Newsgroups} {
			*s = d.string()
		}
		r.Offset = d.varint()
	}
	if f&flagSamePart != 0 {
		r.Part, r.ContentType, r.Where = prev.Part, prev.ContentType, prev.Where
	} else {
		for _, s := range [...]*string{&r.Part, &r.ContentType, &r.Where} {
			*s = d.string()
		}
	}
	r.Line = int(d.varint())
	r.Column = int(d.varint())
	r.Start = d.varint()
	r.End = d.varint()
	r.RawOffset = d.varint()
	r.RawStart = d.varint()
	r.RawEnd = d.varint()
	r.Count = int(d.varint())
	if n := d.count(); n > 0 || f&flagProblems != 0 {
		r.Problems = make([]string, n)
		for i := range r.Problems {
			r.Problems[i] = d.string()
		}
	}
	if f&flagTarget != 0 {
		r.Target = new(Target)
		d.target(r.Target)
	}
	if n := d.count(); n > 0 || f&flagTargets != 0 {
		r.Targets = make([]Target, n)
		for i := range r.Targets {
			d.target(&r.Targets[i])
		}
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = errBadRecord
	}
	return d.err
}
