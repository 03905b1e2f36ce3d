package mailbox

import (
	"math/bits"
	"sync"
	"unsafe"
	"weak"
)

// The decoded text of a message's parts, and the spans that map it back
// to the file, live in buffers lent for the time of the message: the walk
// takes them from size-classed pools and Message.Release gives them back.
// A scan of many messages thus decodes into the same memory again and
// again instead of allocating new buffers for every part and every step
// (transfer decoding, charset, format=flowed, HTML), which was most of
// the bytes a scan allocated.
//
// The pools hold *[]T, so that putting a buffer back does not allocate:
// the boxes of the buffers a message takes are kept with it to box the
// buffers it gives back.

const maxClass = 22 // buffers above 4 Mi elements are left to the collector

// pools are sync.Pools by size class: class c holds slices whose
// capacity is at least 1<<c; min is the smallest class handed out.
type pools[T any] struct {
	p   [maxClass + 1]sync.Pool
	min int
}

var (
	bytePools = pools[byte]{min: 10} // 1 KiB
	spanPools = pools[Span]{min: 5}  // 32 spans
)

// noPools makes lend allocate and giveBack drop: tests compare with it.
var noPools bool

// lender is what one message has borrowed.
type lender[T any] struct {
	lent    [][]T  // kept until Release
	boxes   []*[]T // spare boxes
	lentArr [4][]T
	boxArr  [4]*[]T
}

// lend returns an empty slice with room for at least n elements. It is
// the caller's until it passes it to keep or giveBack; one it drops is
// simply collected.
func (l *lender[T]) lend(ps *pools[T], n int) []T {
	c := max(bits.Len(uint(max(n, 1)-1)), ps.min)
	if c > maxClass || noPools {
		return make([]T, 0, max(n, 1<<ps.min))
	}
	if p, _ := ps.p[c].Get().(*[]T); p != nil {
		b := (*p)[:0]
		*p = nil
		l.addBox(p)
		return b
	}
	return make([]T, 0, 1<<c)
}

func (l *lender[T]) addBox(p *[]T) {
	if l.boxes == nil {
		l.boxes = l.boxArr[:0]
	}
	l.boxes = append(l.boxes, p)
}

// keep records b as holding what must live until release.
func (l *lender[T]) keep(b []T) {
	if cap(b) > 0 {
		if l.lent == nil {
			l.lent = l.lentArr[:0]
		}
		l.lent = append(l.lent, b[:0])
	}
}

// giveBack returns a slice that is no longer used to its pool at once.
func (l *lender[T]) giveBack(ps *pools[T], b []T) {
	c := bits.Len(uint(cap(b))) - 1 // cap(b) >= 1<<c
	if c < ps.min || c > maxClass || noPools {
		return
	}
	ps.p[c].Put(l.box(b[:0]))
}

// box puts b in a spare box, or a new one.
func (l *lender[T]) box(b []T) *[]T {
	var p *[]T
	if n := len(l.boxes); n > 0 {
		p, l.boxes = l.boxes[n-1], l.boxes[:n-1]
	} else {
		p = new([]T)
	}
	*p = b
	return p
}

// release gives back everything kept.
func (l *lender[T]) release(ps *pools[T]) {
	for i, b := range l.lent {
		l.giveBack(ps, b)
		l.lent[i] = nil
	}
	l.lent = l.lent[:0]
	clear(l.boxes)
	l.boxes = l.boxes[:0]
}

// rawPool recycles message buffers, which grow to the size of the
// messages they held.
var rawPool = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// rawBuf returns an empty buffer for the message's bytes.
func (m *Message) rawBuf() []byte {
	p := rawPool.Get().(*[]byte)
	b := (*p)[:0]
	*p = nil
	m.bytes.addBox(p)
	return b
}

// Release gives the message's bytes and the buffers of its parts' text
// back for reuse. After it, Raw is nil and the message's parts must not be
// used. Calling it is optional: it saves allocation when messages are
// scanned one after another.
func (m *Message) Release() {
	if m.Raw != nil && cap(m.Raw) <= 4<<20 {
		rawPool.Put(m.bytes.box(m.Raw[:0]))
	} else if m.Raw != nil {
		putLong(m.Raw)
	}
	m.Raw = nil
	m.bytes.release(&bytePools)
	m.spans.release(&spanPools)
}

func (m *Message) lend(n int) []byte      { return m.bytes.lend(&bytePools, n) }
func (m *Message) lendSpans(n int) []Span { return m.spans.lend(&spanPools, n) }
func (m *Message) giveBack(b []byte)      { m.bytes.giveBack(&bytePools, b) }
func (m *Message) giveBackSpans(s []Span) { m.spans.giveBack(&spanPools, s) }

// The buffer of the last long message released (past the pools' 4 MiB)
// is kept for the next long message, weakly: until the collector takes
// it. Without it, a long message's buffer was often made while the one
// before it was garbage not yet collected, and a run of 60 MB messages
// took twice the memory of one at times.
var long struct {
	mu  sync.Mutex
	p   weak.Pointer[byte]
	cap int
}

// putLong keeps b for takeLong, unless a larger buffer is kept.
func putLong(b []byte) {
	if cap(b) == 0 {
		return
	}
	long.mu.Lock()
	defer long.mu.Unlock()
	if long.p.Value() != nil && long.cap >= cap(b) {
		return
	}
	long.p, long.cap = weak.Make(unsafe.SliceData(b[:1])), cap(b)
}

// takeLong returns an empty buffer with room for n bytes: the kept one if
// it is still there and large enough but not more than twice that, else
// a new one.
func takeLong(n int64) []byte {
	long.mu.Lock()
	p, c := long.p.Value(), int64(long.cap)
	fits := p != nil && c >= n && c <= 2*n
	if fits {
		long.p, long.cap = weak.Pointer[byte]{}, 0
	}
	long.mu.Unlock()
	if fits {
		return unsafe.Slice(p, c)[:0]
	}
	return make([]byte, 0, n)
}
