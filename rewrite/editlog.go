package rewrite

import (
	"cmp"
	"encoding/binary"
	"slices"
	"sort"
)

// editLog is the list of the source edits planned in one part, in the
// order planned, kept compactly: a link-dense part has one or more
// edits per link (docs/rewrite.md, "Memory"), and a []sedit took 48
// bytes and a []byte of its own for each, and grew by copying. Here the
// edits are varint-coded, each after the one before it in its chunk,
// with their texts (a start as its distance from the end of the edit
// before, the length of the range, the change number as a difference,
// the text's length and the text: some 4 bytes besides the text), in
// chunks of logChunk bytes that are filled and never grown. One chunk
// at a time is held decoded (the last one while edits are added), for
// at.
type editLog struct {
	chunks    [][]byte
	firsts    []int // the index of the first edit of each chunk
	n         int
	unsorted  bool // an edit starts before the one added before it
	lastStart int

	// the chunk held decoded: chunk ck, edits firsts[ck]... (their
	// texts are the chunk's bytes)
	ck    int
	cache []sedit
}

// logChunk is the size of a chunk; an edit larger than it has a chunk
// of its own.
const logChunk = 8 << 10

func (l *editLog) len() int {
	if l == nil {
		return 0
	}
	return l.n
}

// add appends e, its text copied.
func (l *editLog) add(e sedit) {
	var hdr [4 * binary.MaxVarintLen64]byte
	prev := sedit{}
	k := len(l.chunks) - 1
	if k >= 0 && l.n > l.firsts[k] {
		prev = l.at(l.n - 1)
	}
	h := binary.AppendVarint(hdr[:0], int64(e.start-prev.end))
	h = binary.AppendUvarint(h, uint64(e.end-e.start))
	h = binary.AppendVarint(h, int64(e.ch-prev.ch))
	h = binary.AppendUvarint(h, uint64(len(e.text)))
	need := len(h) + len(e.text)
	if k < 0 || len(l.chunks[k])+need > cap(l.chunks[k]) {
		// a new chunk: the first edit of a chunk is written against
		// zero
		h = binary.AppendVarint(hdr[:0], int64(e.start))
		h = binary.AppendUvarint(h, uint64(e.end-e.start))
		h = binary.AppendVarint(h, int64(e.ch))
		h = binary.AppendUvarint(h, uint64(len(e.text)))
		need = len(h) + len(e.text)
		size := logChunk
		if k < 0 {
			size = 256 // a part with a few edits
		}
		l.chunks = append(l.chunks, make([]byte, 0, max(size, need)))
		l.firsts = append(l.firsts, l.n)
		k++
		l.ck, l.cache = k, l.cache[:0]
	}
	c := append(append(l.chunks[k], h...), e.text...)
	l.chunks[k] = c
	if l.ck == k {
		t := c[len(c)-len(e.text) : len(c) : len(c)]
		if len(e.text) == 0 {
			t = nil
		}
		l.cache = append(l.cache, sedit{start: e.start, end: e.end, text: t, ch: e.ch})
	}
	if l.n > 0 && e.start < l.lastStart {
		l.unsorted = true
	}
	l.lastStart = e.start
	l.n++
}

// at returns edit i; its text is the log's, not to be written to.
func (l *editLog) at(i int) sedit {
	if l.ck < len(l.firsts) {
		if j := i - l.firsts[l.ck]; j >= 0 && j < len(l.cache) {
			return l.cache[j]
		}
	}
	k := sort.Search(len(l.firsts), func(k int) bool { return l.firsts[k] > i }) - 1
	l.decode(k)
	return l.cache[i-l.firsts[k]]
}

// decode holds chunk k decoded.
func (l *editLog) decode(k int) {
	c := l.chunks[k]
	l.ck, l.cache = k, l.cache[:0]
	prev := sedit{}
	for at := 0; at < len(c); {
		prev, at = decodeEdit(c, at, prev)
		l.cache = append(l.cache, prev)
	}
}

// decodeEdit reads the edit at c[at:], written against prev, and returns
// it and the offset of the next.
func decodeEdit(c []byte, at int, prev sedit) (sedit, int) {
	d, n := binary.Varint(c[at:])
	at += n
	dl, n := binary.Uvarint(c[at:])
	at += n
	dch, n := binary.Varint(c[at:])
	at += n
	tl, n := binary.Uvarint(c[at:])
	at += n
	e := sedit{start: prev.end + int(d), ch: prev.ch + int(dch)}
	e.end = e.start + int(dl)
	if tl > 0 {
		e.text = c[at : at+int(tl) : at+int(tl)]
	}
	return e, at + int(tl)
}

// sorted returns the log with its edits sorted by start, stably (the
// log itself when they are). A log of two sorted runs (an HTML part's
// text links, then its attributes) is merged without being decoded
// whole; others are sorted in a slice.
func (l *editLog) sorted() *editLog {
	if !l.unsorted {
		return l
	}
	out := &editLog{}
	split, runs := 0, 1
	var it logIter
	it.l = l
	prev := 0
	for i := 0; it.next(); i++ {
		if i > 0 && it.e.start < prev {
			runs++
			split = i
		}
		prev = it.e.start
	}
	if runs == 2 {
		var a, b logIter
		a.l, b.l = l, l
		a.next()
		b.skip(split)
		okB := b.next()
		for i := 0; i < split || okB; {
			if i < split && (!okB || a.e.start <= b.e.start) {
				out.add(a.e)
				i++
				a.next()
				continue
			}
			out.add(b.e)
			okB = b.next()
		}
		return out
	}
	ed := make([]sedit, l.n)
	for i := range ed {
		ed[i] = l.at(i)
	}
	slices.SortStableFunc(ed, func(a, b sedit) int { return cmp.Compare(a.start, b.start) })
	for _, e := range ed {
		out.add(e)
	}
	return out
}

// logIter reads a log's edits in order, apart from its cache.
type logIter struct {
	l      *editLog
	k, at  int // the chunk and the offset in it of the next edit
	e      sedit
	prevIn bool // e is in chunk k (the next is written against it)
}

// next reads the next edit into it.e; false at the end.
func (it *logIter) next() bool {
	for it.k < len(it.l.chunks) && it.at >= len(it.l.chunks[it.k]) {
		it.k, it.at, it.prevIn = it.k+1, 0, false
	}
	if it.k >= len(it.l.chunks) {
		return false
	}
	prev := sedit{}
	if it.prevIn {
		prev = it.e
	}
	it.e, it.at = decodeEdit(it.l.chunks[it.k], it.at, prev)
	it.prevIn = true
	return true
}

// skip passes over n edits.
func (it *logIter) skip(n int) {
	for range n {
		it.next()
	}
}

// apply returns src[from:to] with the edits of the sorted log inside it
// made (applySource).
func (l *editLog) apply(src []byte, from, to int) []byte {
	return l.applyRange(src, 0, l.n, from, to)
}

// applyRange returns src[from:to] with the edits k..j-1 of the sorted
// log inside it made.
func (l *editLog) applyRange(src []byte, k, j, from, to int) []byte {
	n := to - from
	for i := k; i < j; i++ {
		if e := l.at(i); e.start >= from && e.end <= to {
			n += len(e.text) - (e.end - e.start)
		}
	}
	out := make([]byte, 0, n)
	at := from
	for i := k; i < j; i++ {
		e := l.at(i)
		if e.start < from || e.end > to {
			continue
		}
		out = append(out, src[at:e.start]...)
		out = append(out, e.text...)
		at = e.end
	}
	return append(out, src[at:to]...)
}
