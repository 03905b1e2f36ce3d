package spill

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"slices"
	"sort"
)

// slot is one entry of the table: a key's hash, its ordinal and how many
// times it was added since the table was last written out. n == 0 marks
// an empty slot.
type slot struct {
	hi, lo uint64
	ord    uint32
	n      uint32
}

// entry is a key in a run, as 32 bytes on disk (hash, ordinal, count).
type entry struct {
	h   Hash
	ord uint64
	n   uint64
}

const (
	slotSize     = 24  // bytes of a slot
	entrySize    = 32  // bytes of an entry in a run
	blockEntries = 128 // entries per block of a run: one 4 KiB read per lookup
	maxRuns      = 8   // more runs are merged into one
	minSlots     = 16
	maxBuckets   = 64 // temporary files of (ordinal, count) pairs in Each
	bloomBits    = 10 // per key, for a false positive rate of about 1 %
)

// MaxDistinct is the number of distinct keys a Set holds at most.
const MaxDistinct = math.MaxUint32 + 1

// ErrTooMany is returned by Add for a key past MaxDistinct.
var ErrTooMany = errors.New("spill: more than 4294967296 distinct keys")

// maxCount is the largest count a slot holds; past it the table is written
// out (a variable so that tests can lower it).
var maxCount uint32 = math.MaxUint32

// createTemp makes temporary files (a variable for fault injection).
var createTemp = os.CreateTemp

// A Set is a set of keys, given by their hashes, with the ordinal of each
// key's first Add and the number of its Adds, kept within a memory budget
// and spilled to temporary files past it. See the package documentation.
// A Set is not safe for concurrent use.
type Set struct {
	budget   int64
	dir      string
	slots    []slot
	mapped   bool
	used     int
	maxSlots int
	next     uint64 // ordinal of the next new key: the number of distinct keys
	runs     []*run
	blk      []byte // one block, for lookups
	bloomCap int64
	bloomMem int64
	spills   int
	err      error // sticky: every later call returns it
	done     bool  // Each was called
}

// NewSet returns an empty Set that keeps its table within about budget
// bytes and writes its temporary files in dir (os.TempDir() when dir is
// ""). Very small budgets are raised to a table of 16 slots.
func NewSet(budget int64, dir string) *Set {
	budget = max(budget, 0)
	table := budget - budget/8 // the rest is for the runs' Bloom filters
	// Growing the table holds the old and the new one: 1.5 times the final
	// size.
	n := int(min(table*2/3/slotSize, math.MaxInt32, math.MaxInt/slotSize/2)) // sizes fit an int on 32-bit systems too
	return &Set{budget: budget, dir: dir, maxSlots: max(n, minSlots), bloomCap: budget / 8}
}

// Len returns the number of distinct keys added.
func (s *Set) Len() uint64 { return s.next }

// Spills returns how many times the table was written out to a run.
func (s *Set) Spills() int { return s.spills }

// Memory returns the bytes the set holds in memory: table, Bloom filters,
// block indexes and buffers.
func (s *Set) Memory() int64 {
	m := int64(len(s.slots))*slotSize + s.bloomMem + int64(cap(s.blk))
	for _, r := range s.runs {
		m += int64(cap(r.fences)) * 16
	}
	return m
}

func (s *Set) fail(err error) (uint64, bool, error) {
	s.err = err
	return 0, false, err
}

// Add adds the key of hash h. It returns the key's ordinal (the number of
// distinct keys added before its first Add) and whether this is its first
// Add. After an error (a temporary file that cannot be made, written or
// read, or ErrTooMany) the set is unusable and every call returns that
// error.
func (s *Set) Add(h Hash) (ord uint64, isNew bool, err error) {
	if s.err != nil {
		return 0, false, s.err
	}
	if s.done {
		return s.fail(errors.New("spill: Add after Each"))
	}
	if s.slots == nil {
		s.slots, s.mapped = allocArray[slot](min(1024, s.maxSlots))
	}
	i, found := s.find(h)
	if found {
		sl := &s.slots[i]
		if sl.n < maxCount {
			sl.n++
			return uint64(sl.ord), false, nil
		}
		// The count is full: write the table out and count on afresh.
		ord = uint64(sl.ord)
		if err := s.flush(); err != nil {
			return s.fail(err)
		}
		i, _ = s.find(h)
		s.slots[i] = slot{hi: h.Hi, lo: h.Lo, ord: uint32(ord), n: 1}
		s.used++
		return ord, false, nil
	}
	ord, old, err := s.lookup(h)
	if err != nil {
		return s.fail(err)
	}
	if !old {
		if s.next >= MaxDistinct {
			return s.fail(ErrTooMany)
		}
		ord = s.next
		s.next++
	}
	if s.used+1 > len(s.slots)*3/4 {
		if err := s.makeRoom(); err != nil {
			return s.fail(err)
		}
		i, _ = s.find(h)
	}
	s.slots[i] = slot{hi: h.Hi, lo: h.Lo, ord: uint32(ord), n: 1}
	s.used++
	return ord, !old, nil
}

// find returns the slot of h, or the empty slot where it belongs.
func (s *Set) find(h Hash) (int, bool) {
	n := uint64(len(s.slots))
	i, _ := bits.Mul64(h.Lo, n)
	for {
		sl := &s.slots[i]
		if sl.n == 0 {
			return int(i), false
		}
		if sl.lo == h.Lo && sl.hi == h.Hi {
			return int(i), true
		}
		if i++; i == n {
			i = 0
		}
	}
}

// makeRoom grows the table, or writes it out when it may grow no more.
func (s *Set) makeRoom() error {
	if n := min(2*len(s.slots), s.maxSlots); n > len(s.slots) {
		old, mapped := s.slots, s.mapped
		s.slots, s.mapped = allocArray[slot](n)
		for _, sl := range old {
			if sl.n != 0 {
				i, _ := s.find(Hash{sl.hi, sl.lo})
				s.slots[i] = sl
			}
		}
		freeArray(old, mapped)
		return nil
	}
	return s.flush()
}

func (s *Set) freeTable() {
	freeArray(s.slots, s.mapped)
	s.slots, s.mapped, s.used = nil, false, 0
}

// flush writes the table out as a run, sorted by hash, and empties it.
func (s *Set) flush() error {
	j := 0
	for i := range s.slots {
		if s.slots[i].n != 0 {
			s.slots[j] = s.slots[i]
			j++
		}
	}
	es := s.slots[:j]
	slices.SortFunc(es, func(a, b slot) int { return Hash{a.hi, a.lo}.cmp(Hash{b.hi, b.lo}) })
	w, err := s.newRunWriter(int64(j), s.bloomCap-s.bloomMem)
	if err != nil {
		return err
	}
	for _, sl := range es {
		if err := w.add(entry{Hash{sl.hi, sl.lo}, uint64(sl.ord), uint64(sl.n)}); err != nil {
			w.r.close()
			return err
		}
	}
	if err := w.finish(); err != nil {
		w.r.close()
		return err
	}
	clear(s.slots)
	s.used = 0
	s.spills++
	s.runs = append(s.runs, w.r)
	s.bloomMem += int64(len(w.r.bloom)) * 8
	// Merge the newest runs like the digits of a binary counter, so that
	// there are about log2(keys/table) runs and each entry is rewritten
	// as often; past maxRuns, merge them all.
	for len(s.runs) >= 2 && s.runs[len(s.runs)-2].n <= s.runs[len(s.runs)-1].n {
		if err := s.compact(len(s.runs) - 2); err != nil {
			return err
		}
	}
	if len(s.runs) > maxRuns {
		return s.compact(0)
	}
	return nil
}

// compact merges the runs from the k-th on into one.
func (s *Set) compact(k int) error {
	var n int64
	for _, r := range s.runs[k:] {
		n += r.n
	}
	var keep int64
	for _, r := range s.runs[:k] {
		keep += int64(len(r.bloom)) * 8
	}
	w, err := s.newRunWriter(n, s.bloomCap-keep)
	if err != nil {
		return err
	}
	if err := merge(s.runs[k:], w.add); err != nil {
		w.r.close()
		return err
	}
	if err := w.finish(); err != nil {
		w.r.close()
		return err
	}
	for _, r := range s.runs[k:] {
		r.close()
	}
	s.runs = append(s.runs[:k], w.r)
	s.bloomMem = keep + int64(len(w.r.bloom))*8
	return nil
}

// lookup looks h up in the runs.
func (s *Set) lookup(h Hash) (ord uint64, ok bool, err error) {
	for _, r := range s.runs {
		if r.bloom != nil && !r.mayHave(h) {
			continue
		}
		b := sort.Search(len(r.fences), func(i int) bool { return r.fences[i].cmp(h) > 0 }) - 1
		if b < 0 {
			continue
		}
		start := int64(b) * blockEntries
		cnt := int(min(blockEntries, r.n-start))
		if s.blk == nil {
			s.blk = make([]byte, blockEntries*entrySize)
		}
		buf := s.blk[:cnt*entrySize]
		if _, err := r.f.ReadAt(buf, start*entrySize); err != nil {
			return 0, false, fmt.Errorf("spill: reading a temporary file: %w", err)
		}
		i := sort.Search(cnt, func(i int) bool { return decodeHash(buf[i*entrySize:]).cmp(h) >= 0 })
		if i < cnt && decodeHash(buf[i*entrySize:]) == h {
			return binary.LittleEndian.Uint64(buf[i*entrySize+16:]), true, nil
		}
	}
	return 0, false, nil
}

// Each calls fn with every ordinal, from 0 to Len()-1, and the number of
// Adds of its key, then releases the table; Add may not be called after
// it. It stops at the first error of fn and returns it.
func (s *Set) Each(fn func(ord, count uint64) error) error {
	if s.err != nil {
		return s.err
	}
	if s.done {
		return errors.New("spill: Each called twice")
	}
	s.done = true
	total := s.next
	if len(s.runs) == 0 {
		// No count past a slot's uint32 without a run: four bytes a key,
		// outside the heap like the table.
		counts, mapped := allocArray[uint32](int(total))
		defer freeArray(counts, mapped)
		for _, sl := range s.slots {
			if sl.n != 0 {
				counts[sl.ord] = sl.n
			}
		}
		s.freeTable()
		return emit(counts, 0, fn)
	}
	if s.used > 0 {
		if err := s.flush(); err != nil {
			s.err = err
			return err
		}
	}
	s.freeTable()
	span := max(4096, uint64(s.budget/2/8))
	if total <= span {
		counts, mapped := allocArray[uint64](int(total))
		defer freeArray(counts, mapped)
		err := merge(s.runs, func(e entry) error {
			if e.ord >= total {
				return errDamaged
			}
			counts[e.ord] += e.n
			return nil
		})
		if err != nil {
			return err
		}
		return emit(counts, 0, fn)
	}
	if nb := (total + span - 1) / span; nb > maxBuckets {
		span = (total + maxBuckets - 1) / maxBuckets
	}
	return s.eachBucketed(total, span, fn)
}

var errDamaged = errors.New("spill: a temporary file was damaged")

// eachBucketed distributes the (ordinal, count) pairs of the runs into
// files of span ordinals each, then reads them back one at a time.
func (s *Set) eachBucketed(total, span uint64, fn func(ord, count uint64) error) error {
	nb := int((total + span - 1) / span)
	files := make([]*os.File, nb)
	ws := make([]*bufio.Writer, nb)
	defer func() {
		for _, f := range files {
			if f != nil {
				closeTemp(f)
			}
		}
	}()
	for i := range files {
		f, err := s.create("linkscan-counts-*")
		if err != nil {
			return err
		}
		files[i], ws[i] = f, bufio.NewWriterSize(f, 16<<10)
	}
	var buf [16]byte
	err := merge(s.runs, func(e entry) error {
		if e.ord >= total {
			return errDamaged
		}
		binary.LittleEndian.PutUint64(buf[:], e.ord)
		binary.LittleEndian.PutUint64(buf[8:], e.n)
		_, err := ws[e.ord/span].Write(buf[:])
		return err
	})
	for _, w := range ws {
		if err == nil {
			err = w.Flush()
		}
	}
	if err != nil {
		return wrapIO(err)
	}
	for _, r := range s.runs {
		r.close()
	}
	s.runs = nil
	counts, mapped := allocArray[uint64](int(span))
	defer freeArray(counts, mapped)
	for b, f := range files {
		base := uint64(b) * span
		c := counts[:min(span, total-base)]
		clear(c)
		size, err := f.Seek(0, io.SeekCurrent)
		if err != nil {
			return wrapIO(err)
		}
		br := bufio.NewReaderSize(io.NewSectionReader(f, 0, size), 32<<10)
		for {
			if _, err := io.ReadFull(br, buf[:]); err == io.EOF {
				break
			} else if err != nil {
				return wrapIO(err)
			}
			ord := binary.LittleEndian.Uint64(buf[:])
			if ord < base || ord-base >= uint64(len(c)) {
				return errDamaged
			}
			c[ord-base] += binary.LittleEndian.Uint64(buf[8:])
		}
		closeTemp(f)
		files[b] = nil
		if err := emit(c, base, fn); err != nil {
			return err
		}
	}
	return nil
}

func emit[T uint32 | uint64](counts []T, base uint64, fn func(ord, count uint64) error) error {
	for i, n := range counts {
		if n == 0 {
			return fmt.Errorf("spill: no count for key %d: %w", base+uint64(i), errDamaged)
		}
		if err := fn(base+uint64(i), uint64(n)); err != nil {
			return err
		}
	}
	return nil
}

// Close releases the set's memory and removes its temporary files.
func (s *Set) Close() error {
	s.freeTable()
	var err error
	for _, r := range s.runs {
		if e := r.close(); err == nil {
			err = e
		}
	}
	s.runs = nil
	s.bloomMem = 0
	if s.err == nil {
		s.err = errors.New("spill: set closed")
	}
	return err
}

func wrapIO(err error) error {
	if errors.Is(err, errDamaged) {
		return err
	}
	return fmt.Errorf("spill: temporary file: %w", err)
}

// create makes a temporary file and removes its name at once where the
// system allows, so that nothing is left behind if the process dies.
func (s *Set) create(pattern string) (*os.File, error) {
	return createIn(s.dir, pattern, s.budget)
}

func createIn(dir, pattern string, budget int64) (*os.File, error) {
	f, err := createTemp(dir, pattern)
	if err != nil {
		if dir == "" {
			dir = os.TempDir()
		}
		return nil, fmt.Errorf("spill: past %d bytes in memory, no temporary file can be made in %s: %w", budget, dir, err)
	}
	if unlinkAtOnce {
		os.Remove(f.Name()) // fails on systems that keep open files' names; closeTemp removes it then
	}
	return f, nil
}

// unlinkAtOnce says whether createIn removes a file's name at once (false
// in tests, so that they see what closeTemp leaves behind, as on systems
// where an open file's name cannot be removed).
var unlinkAtOnce = true

func closeTemp(f *os.File) error {
	err := f.Close()
	os.Remove(f.Name())
	return err
}

func decodeHash(b []byte) Hash {
	return Hash{binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])}
}
