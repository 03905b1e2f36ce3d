package rewrite

import (
	"math"
	"sort"
)

// editLog is the list of the source edits planned in one part, in the
// order planned, kept in chunks: an edit is 24 bytes and its text is in
// its chunk's buffer, where a []sedit took 48 bytes and a []byte of its
// own per edit, and grew by copying. A link-dense part has one or more
// edits per link (docs/rewrite.md, "Memory").
type editLog struct {
	chunks    []*editChunk
	n         int
	unsorted  bool // an edit starts before the one added before it
	lastStart int
}

// editChunkLen is the number of edits in a chunk.
const editChunkLen = 1024

type editChunk struct {
	ed   []cedit
	text []byte
}

// cedit is a sedit in a chunk: its text is text[toff:toff+tlen] of the
// chunk.
type cedit struct {
	start      int
	dlen       uint32 // end - start
	toff, tlen uint32
	ch         int32
}

// maxEditLen bounds the length of an edit's range and of its text (the
// fields of cedit); plan refuses a link past it.
const maxEditLen = math.MaxUint32 / 2

func (l *editLog) len() int { return l.n }

// add appends e, its text copied.
func (l *editLog) add(e sedit) {
	k := l.n / editChunkLen
	if k == len(l.chunks) {
		// the first chunk starts small (a part with a few edits) and
		// grows by append; the others are made whole
		size := editChunkLen
		if k == 0 {
			size = 4
		}
		l.chunks = append(l.chunks, &editChunk{ed: make([]cedit, 0, size)})
	}
	c := l.chunks[k]
	c.ed = append(c.ed, cedit{start: e.start, dlen: uint32(e.end - e.start), toff: uint32(len(c.text)), tlen: uint32(len(e.text)), ch: int32(e.ch)})
	c.text = append(c.text, e.text...)
	if l.n > 0 && e.start < l.lastStart {
		l.unsorted = true
	}
	l.lastStart = e.start
	l.n++
}

// at returns edit i; its text is the log's, not to be written to.
func (l *editLog) at(i int) sedit {
	c := l.chunks[i/editChunkLen]
	e := &c.ed[i%editChunkLen]
	t := c.text[e.toff : e.toff+e.tlen : e.toff+e.tlen]
	if e.tlen == 0 {
		t = nil
	}
	return sedit{start: e.start, end: e.start + int(e.dlen), text: t, ch: int(e.ch)}
}

// sorted returns the log with its edits sorted by start, stably (the
// log itself when they are).
func (l *editLog) sorted() *editLog {
	if !l.unsorted {
		return l
	}
	ed := make([]sedit, l.n)
	for i := range ed {
		ed[i] = l.at(i)
	}
	sort.SliceStable(ed, func(i, j int) bool { return ed[i].start < ed[j].start })
	out := &editLog{}
	for _, e := range ed {
		out.add(e)
	}
	return out
}

// apply returns src[from:to] with the edits of the sorted log inside it
// made (applySource).
func (l *editLog) apply(src []byte, from, to int) []byte {
	return l.applyRange(src, 0, l.n, from, to)
}

// applyRange returns src[from:to] with the edits k..j-1 of the sorted
// log inside it made.
func (l *editLog) applyRange(src []byte, k, j, from, to int) []byte {
	out := make([]byte, 0, to-from)
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
