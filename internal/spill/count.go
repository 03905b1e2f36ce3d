package spill

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math/bits"
	"os"
	"slices"
)

// A Counter sums counts of keys (byte strings, such as host names) in
// bounded memory: see the package documentation. It is not safe for
// concurrent use.
type Counter struct {
	budget   int64
	dir      string
	seed     maphash.Seed
	slots    []cslot
	mapped   bool
	used     int
	chunk    int     // size of an arena chunk
	chunks   []chunk // the keys, each a uvarint length and its bytes
	fill     int     // bytes used in the last chunk
	arena    int64   // bytes of all chunks
	runs     []*countRun
	spills   int
	err      error // sticky: every later call returns it
	done     bool  // Each was called
	maxSlots int   // for tests: the table grows no further (0: no limit)
}

// cslot is one entry of a Counter's table: the high 32 bits of the key's
// hash with its length in the low 32 bits, where the key is in the arena
// (chunk<<32 | offset of its uvarint length) and its count. n == 0 marks
// an empty slot. A table sorted for a run has the first eight bytes of
// the key in hl instead (see sorted).
type cslot struct{ hl, ref, n uint64 }

const lenMask = 1<<32 - 1

const cslotSize = 24

type chunk struct {
	b      []byte
	mapped bool
}

// countRun is a temporary file of (key, count) entries sorted by key,
// each key once: a uvarint length, the key, a uvarint count (at least 1).
type countRun struct {
	f    *os.File
	n    int64 // entries
	size int64 // bytes
}

func (r *countRun) close() error {
	if r.f == nil {
		return nil
	}
	err := closeTemp(r.f)
	r.f = nil
	return err
}

// tempWriter is what runs of a Counter are written through (a variable
// for fault injection).
var tempWriter = func(f *os.File) io.Writer { return f }

// NewCounter returns an empty Counter that keeps its table and keys
// within about budget bytes and writes its temporary files in dir
// (os.TempDir() when dir is ""). Very small budgets are raised to a table
// of 16 slots and one arena chunk of 4 KiB (or one key).
func NewCounter(budget int64, dir string) *Counter {
	chunk := min(max(budget/16, 4<<10), 1<<20)
	budget = max(budget, minSlots*cslotSize+chunk)
	return &Counter{budget: budget, dir: dir, seed: maphash.MakeSeed(), chunk: int(chunk)}
}

// Spills returns how many times the table was written out to a run.
func (c *Counter) Spills() int { return c.spills }

// Memory returns the bytes the counter holds in memory: its table and
// the keys in it.
func (c *Counter) Memory() int64 { return int64(len(c.slots))*cslotSize + c.arena }

func (c *Counter) fail(err error) error {
	c.err = err
	return err
}

// Add adds n to the count of key. Past the budget the table and its keys
// are written to a temporary file, sorted by key, and the counter starts
// empty. After an error (a temporary file that cannot be made or
// written) the counter is unusable and every call returns that error.
func (c *Counter) Add(key string, n uint64) error {
	if c.err != nil {
		return c.err
	}
	if c.done {
		return c.fail(errors.New("spill: Add after Each"))
	}
	if n == 0 {
		return nil
	}
	if len(key) > MaxRecord {
		return fmt.Errorf("spill: a key of %d bytes is longer than %d", len(key), MaxRecord)
	}
	if c.slots == nil {
		size := minSlots
		for size < 1024 && int64(2*size)*cslotSize <= c.budget/4 {
			size *= 2
		}
		c.slots, c.mapped = allocArray[cslot](size)
	}
	hl := maphash.String(c.seed, key)&^lenMask | uint64(len(key))
	i, found := c.find(hl, key)
	if found {
		sl := &c.slots[i]
		if sl.n += n; sl.n < n {
			sl.n = 1<<64 - 1 // saturates, never wraps to 0 (an empty slot)
		}
		return nil
	}
	if err := c.reserve(uvarintLen(uint64(len(key))) + len(key)); err != nil {
		return c.fail(err)
	}
	i, _ = c.find(hl, key)
	c.slots[i] = cslot{hl: hl, ref: c.store(key), n: n}
	c.used++
	return nil
}

func uvarintLen(x uint64) int { return (bits.Len64(x|1) + 6) / 7 }

// find returns the slot of key (hl: its hash and length, as in a slot),
// or the empty slot where it belongs.
func (c *Counter) find(hl uint64, key string) (int, bool) {
	n := uint64(len(c.slots))
	i, _ := bits.Mul64(hl&^lenMask, n)
	for {
		sl := &c.slots[i]
		if sl.n == 0 {
			return int(i), false
		}
		if sl.hl == hl && string(c.key(sl)) == key {
			return int(i), true
		}
		if i++; i == n {
			i = 0
		}
	}
}

// key returns the key of a slot of the hash table, whose length is in hl.
func (c *Counter) key(sl *cslot) []byte {
	n := uint32(sl.hl)
	off := uint32(sl.ref) + uint32(uvarintLen(uint64(n)))
	return c.chunks[sl.ref>>32].b[off : off+n]
}

// keyAt returns the key at ref, by the length stored before it.
func (c *Counter) keyAt(ref uint64) []byte {
	b := c.chunks[ref>>32].b[uint32(ref):]
	n, w := binary.Uvarint(b)
	return b[w : w+int(n)]
}

// reserve makes room for one more key of need bytes in the arena: it
// grows the table or the arena within the budget, and writes the table
// out when they may grow no more.
func (c *Counter) reserve(need int) error {
	if c.used+1 > len(c.slots)*3/4 && !c.grow() {
		if err := c.flush(); err != nil {
			return err
		}
	}
	if len(c.chunks) == 0 || c.fill+need > len(c.chunks[len(c.chunks)-1].b) {
		size := max(c.chunk, need)
		if c.used > 0 && c.Memory()+int64(size) > c.budget {
			if err := c.flush(); err != nil {
				return err
			}
		}
		b, mapped := allocArray[byte](size)
		c.chunks = append(c.chunks, chunk{b, mapped})
		c.arena += int64(size)
		c.fill = 0
	}
	return nil
}

// grow doubles the table if the old and the new one fit the budget with
// the arena, and the new one with the keys it would hold at their mean
// length so far (the table does not take the arena's room).
func (c *Counter) grow() bool {
	n := 2 * len(c.slots)
	mean := int64(c.chunk) // bytes a key, before any key is stored
	if c.used > 0 {
		mean = (c.arena - int64(len(c.chunks[len(c.chunks)-1].b)-c.fill)) / int64(c.used)
	}
	if int64(len(c.slots)+n)*cslotSize+c.arena > c.budget || int64(n)*cslotSize+int64(n*3/4)*mean > c.budget ||
		c.maxSlots > 0 && n > c.maxSlots {
		return false
	}
	old, mapped := c.slots, c.mapped
	c.slots, c.mapped = allocArray[cslot](n)
	for _, sl := range old {
		if sl.n != 0 { // keys are distinct: the first empty slot is its
			i, _ := bits.Mul64(sl.hl&^lenMask, uint64(n))
			for c.slots[i].n != 0 {
				if i++; i == uint64(n) {
					i = 0
				}
			}
			c.slots[i] = sl
		}
	}
	freeArray(old, mapped)
	return true
}

// store copies key into the arena, where reserve made room for it.
func (c *Counter) store(key string) uint64 {
	k := len(c.chunks) - 1
	b := c.chunks[k].b
	off := c.fill
	w := binary.PutUvarint(b[off:], uint64(len(key)))
	c.fill += w + copy(b[off+w:], key)
	return uint64(k)<<32 | uint64(off)
}

func (c *Counter) freeArena() {
	for _, ch := range c.chunks {
		freeArray(ch.b, ch.mapped)
	}
	c.chunks, c.arena, c.fill = nil, 0, 0
}

// sorted moves the table's entries to its front, sorts them by key and
// returns them; the table is no hash table after it. Each entry's hl
// becomes the first eight bytes of its key, big-endian (zeros past its
// end), which order keys as their bytes do but where those eight bytes
// are the same: most comparisons then read no key.
func (c *Counter) sorted() []cslot {
	j := 0
	for i := range c.slots {
		if c.slots[i].n != 0 {
			c.slots[j] = c.slots[i]
			c.slots[j].hl = prefix8(c.key(&c.slots[i]))
			j++
		}
	}
	es := c.slots[:j]
	slices.SortFunc(es, func(a, b cslot) int {
		if a.hl != b.hl {
			if a.hl < b.hl {
				return -1
			}
			return 1
		}
		return bytes.Compare(c.keyAt(a.ref), c.keyAt(b.ref))
	})
	return es
}

func prefix8(b []byte) uint64 {
	if len(b) >= 8 {
		return binary.BigEndian.Uint64(b)
	}
	var p uint64
	for i, c := range b {
		p |= uint64(c) << (56 - 8*i)
	}
	return p
}

// flush writes the table out as a run, sorted by key, and empties it
// and the arena.
func (c *Counter) flush() error {
	es := c.sorted()
	w, err := c.newRun()
	if err != nil {
		return err
	}
	for i := range es {
		if err := w.add(c.keyAt(es[i].ref), es[i].n); err != nil {
			w.r.close()
			return err
		}
	}
	if err := w.finish(); err != nil {
		w.r.close()
		return err
	}
	clear(c.slots)
	c.used = 0
	c.freeArena()
	c.spills++
	c.runs = append(c.runs, w.r)
	// As Set.flush: the newest runs merged like the digits of a binary
	// counter, all of them past maxRuns.
	for len(c.runs) >= 2 && c.runs[len(c.runs)-2].n <= c.runs[len(c.runs)-1].n {
		if err := c.compact(len(c.runs) - 2); err != nil {
			return err
		}
	}
	if len(c.runs) > maxRuns {
		return c.compact(0)
	}
	return nil
}

// compact merges the runs from the k-th on into one, summing the counts
// of a key.
func (c *Counter) compact(k int) error {
	w, err := c.newRun()
	if err != nil {
		return err
	}
	if err := mergeCounts(runIters(c.runs[k:]), w.add); err != nil {
		w.r.close()
		return err
	}
	if err := w.finish(); err != nil {
		w.r.close()
		return err
	}
	for _, r := range c.runs[k:] {
		r.close()
	}
	c.runs = append(c.runs[:k], w.r)
	return nil
}

// Each calls fn with every key and its summed count, then releases the
// table; Add may not be called after it. Keys come in increasing order
// of their bytes when the counter spilled (Spills() > 0), in no order
// otherwise. key is valid only during the call. Each stops at the first
// error of fn and returns it.
func (c *Counter) Each(fn func(key []byte, n uint64) error) error {
	if c.err != nil {
		return c.err
	}
	if c.done {
		return errors.New("spill: Each called twice")
	}
	c.done = true
	defer c.freeTable()
	its := runIters(c.runs)
	switch {
	case c.slots != nil && len(its) > 0:
		its = append(its, &countIter{c: c, tab: c.sorted()})
	case c.slots != nil:
		its = append(its, &countIter{c: c, tab: c.slots}) // alone: no need to sort
	}
	return mergeCounts(its, fn)
}

func (c *Counter) freeTable() {
	freeArray(c.slots, c.mapped)
	c.slots, c.mapped, c.used = nil, false, 0
	c.freeArena()
}

// Close releases the counter's memory and removes its temporary files.
func (c *Counter) Close() error {
	c.freeTable()
	var err error
	for _, r := range c.runs {
		if e := r.close(); err == nil {
			err = e
		}
	}
	c.runs = nil
	if c.err == nil {
		c.err = errors.New("spill: counter closed")
	}
	return err
}

// countWriter writes a run.
type countWriter struct {
	r    *countRun
	w    *bufio.Writer
	last []byte
	buf  [2 * binary.MaxVarintLen64]byte
}

func (c *Counter) newRun() (*countWriter, error) {
	f, err := createIn(c.dir, "linkscan-counts-*", c.budget)
	if err != nil {
		return nil, err
	}
	return &countWriter{r: &countRun{f: f}, w: bufio.NewWriterSize(tempWriter(f), 64<<10)}, nil
}

// add writes an entry; keys must come in increasing order.
func (w *countWriter) add(key []byte, n uint64) error {
	if w.r.n > 0 && bytes.Compare(w.last, key) >= 0 || n == 0 {
		return errDamaged // never from the counter's own entries
	}
	w.last = append(w.last[:0], key...)
	k := binary.PutUvarint(w.buf[:], uint64(len(key)))
	if _, err := w.w.Write(w.buf[:k]); err != nil {
		return writeErr(err)
	}
	if _, err := w.w.Write(key); err != nil {
		return writeErr(err)
	}
	k = binary.PutUvarint(w.buf[:], n)
	if _, err := w.w.Write(w.buf[:k]); err != nil {
		return writeErr(err)
	}
	w.r.n++
	w.r.size += int64(uvarintLen(uint64(len(key))) + len(key) + k)
	return nil
}

func (w *countWriter) finish() error {
	if err := w.w.Flush(); err != nil {
		return writeErr(err)
	}
	return nil
}

func writeErr(err error) error { return fmt.Errorf("spill: writing a temporary file: %w", err) }

// countIter reads the entries of a run, or of a sorted table, in order.
type countIter struct {
	r    *bufio.Reader
	left int64
	c    *Counter
	tab  []cslot
	key  []byte
	prev []byte
	n    uint64
	read bool // an entry was read: the next must follow it
}

func runIters(runs []*countRun) []*countIter {
	its := make([]*countIter, 0, len(runs)+1)
	for _, r := range runs {
		its = append(its, newCountIter(io.NewSectionReader(r.f, 0, r.size), r.n))
	}
	return its
}

func newCountIter(r io.Reader, n int64) *countIter {
	return &countIter{r: bufio.NewReaderSize(r, 32<<10), left: n}
}

// next moves to the next entry; it returns false after the last. An
// entry out of order, a count of zero or a file that ends early is
// damage.
func (it *countIter) next() (bool, error) {
	if it.r == nil {
		if len(it.tab) == 0 {
			return false, nil
		}
		for it.tab[0].n == 0 { // an empty slot of an unsorted table
			if it.tab = it.tab[1:]; len(it.tab) == 0 {
				return false, nil
			}
		}
		it.key, it.n = it.c.keyAt(it.tab[0].ref), it.tab[0].n
		it.tab = it.tab[1:]
		return true, nil
	}
	if it.left == 0 {
		return false, nil
	}
	it.prev, it.key = it.key, it.prev
	k, err := binary.ReadUvarint(it.r)
	if err != nil || k > MaxRecord {
		return false, readErr(err)
	}
	if it.key, err = readKey(it.r, it.key[:0], int(k)); err != nil {
		return false, readErr(err)
	}
	if it.n, err = binary.ReadUvarint(it.r); err != nil || it.n == 0 {
		return false, readErr(err)
	}
	if it.read && bytes.Compare(it.prev, it.key) >= 0 {
		return false, readErr(nil)
	}
	it.read = true
	it.left--
	return true, nil
}

// readKey appends k bytes of r to b, growing b as they come rather than
// by k at once (a damaged length must not allocate a gigabyte).
func readKey(r io.Reader, b []byte, k int) ([]byte, error) {
	for len(b) < k {
		n := min(k-len(b), 1<<20)
		b = slices.Grow(b, n)
		if _, err := io.ReadFull(r, b[len(b):len(b)+n]); err != nil {
			return b, err
		}
		b = b[:len(b)+n]
	}
	return b, nil
}

// readErr says that a run could not be read: the error of the file, or
// damage (an early end, an entry out of order, a number that overflows).
func readErr(err error) error {
	var pe *os.PathError
	switch {
	case err == nil || err == io.EOF || err == io.ErrUnexpectedEOF:
		err = errDamaged
	case !errors.As(err, &pe):
		err = fmt.Errorf("%w (%v)", errDamaged, err)
	}
	return fmt.Errorf("spill: reading a temporary file: %w", err)
}

// mergeCounts calls fn with the entries of its in key order, one entry
// per key with the counts of all summed.
func mergeCounts(its []*countIter, fn func(key []byte, n uint64) error) error {
	live := its[:0]
	for _, it := range its {
		ok, err := it.next()
		if err != nil {
			return err
		}
		if ok {
			live = append(live, it)
		}
	}
	var key []byte
	for len(live) > 0 {
		m := 0
		for i := 1; i < len(live); i++ {
			if bytes.Compare(live[i].key, live[m].key) < 0 {
				m = i
			}
		}
		key = append(key[:0], live[m].key...)
		var n uint64
		for i := 0; i < len(live); {
			it := live[i]
			if !bytes.Equal(it.key, key) {
				i++
				continue
			}
			if n += it.n; n < it.n {
				n = 1<<64 - 1 // saturates; no real count comes near
			}
			ok, err := it.next()
			if err != nil {
				return err
			}
			if ok {
				i++
			} else {
				live[i] = live[len(live)-1]
				live = live[:len(live)-1]
			}
		}
		if err := fn(key, n); err != nil {
			return err
		}
	}
	return nil
}
