package spill

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"os"
)

// A run is a temporary file of entries sorted by hash, each hash once,
// with the first hash of every block of blockEntries entries and a Bloom
// filter in memory.
type run struct {
	f      *os.File
	n      int64
	fences []Hash
	bloom  []uint64 // nil: no filter
	k      int      // hash functions of the filter
}

func (r *run) close() error {
	if r.f == nil {
		return nil
	}
	err := closeTemp(r.f)
	r.f, r.fences, r.bloom = nil, nil, nil
	return err
}

// bloomBit returns the bit of hash function i for h (double hashing).
func (r *run) bloomBit(h Hash, i int) uint64 {
	b, _ := bits.Mul64(h.Hi+uint64(i)*(h.Lo|1), uint64(len(r.bloom))*64)
	return b
}

func (r *run) mayHave(h Hash) bool {
	for i := range r.k {
		b := r.bloomBit(h, i)
		if r.bloom[b/64]&(1<<(b%64)) == 0 {
			return false
		}
	}
	return true
}

type runWriter struct {
	r   *run
	w   *bufio.Writer
	buf [entrySize]byte
}

// newRunWriter starts a run of n entries whose Bloom filter may take up
// to bloomBytes.
func (s *Set) newRunWriter(n, bloomBytes int64) (*runWriter, error) {
	f, err := s.create("linkscan-run-*")
	if err != nil {
		return nil, err
	}
	r := &run{f: f, fences: make([]Hash, 0, (n+blockEntries-1)/blockEntries)}
	words := min((n*bloomBits+63)/64, max(bloomBytes, 0)/8)
	if perKey := words * 64 / max(n, 1); perKey >= 4 {
		r.bloom = make([]uint64, words)
		r.k = int(max(1, perKey*69/100)) // ln 2 bits per key
	}
	return &runWriter{r: r, w: bufio.NewWriterSize(f, 64<<10)}, nil
}

func (w *runWriter) add(e entry) error {
	r := w.r
	if r.n%blockEntries == 0 {
		r.fences = append(r.fences, e.h)
	}
	if r.bloom != nil {
		for i := range r.k {
			b := r.bloomBit(e.h, i)
			r.bloom[b/64] |= 1 << (b % 64)
		}
	}
	binary.LittleEndian.PutUint64(w.buf[0:], e.h.Hi)
	binary.LittleEndian.PutUint64(w.buf[8:], e.h.Lo)
	binary.LittleEndian.PutUint64(w.buf[16:], e.ord)
	binary.LittleEndian.PutUint64(w.buf[24:], e.n)
	if _, err := w.w.Write(w.buf[:]); err != nil {
		return fmt.Errorf("spill: writing a temporary file: %w", err)
	}
	r.n++
	return nil
}

func (w *runWriter) finish() error {
	if err := w.w.Flush(); err != nil {
		return fmt.Errorf("spill: writing a temporary file: %w", err)
	}
	return nil
}

// runIter reads a run's entries in order.
type runIter struct {
	r    *bufio.Reader
	left int64
	e    entry
	buf  [entrySize]byte
}

func (it *runIter) next() (bool, error) {
	if it.left == 0 {
		return false, nil
	}
	if _, err := io.ReadFull(it.r, it.buf[:]); err != nil {
		return false, fmt.Errorf("spill: reading a temporary file: %w", err)
	}
	it.left--
	it.e = entry{decodeHash(it.buf[:]), binary.LittleEndian.Uint64(it.buf[16:]), binary.LittleEndian.Uint64(it.buf[24:])}
	return true, nil
}

// merge calls fn with the entries of all runs in hash order, one entry
// per hash with the counts of all runs summed.
func merge(runs []*run, fn func(entry) error) error {
	var live []*runIter
	for _, r := range runs {
		it := &runIter{r: bufio.NewReaderSize(io.NewSectionReader(r.f, 0, r.n*entrySize), 32<<10), left: r.n}
		ok, err := it.next()
		if err != nil {
			return err
		}
		if ok {
			live = append(live, it)
		}
	}
	for len(live) > 0 {
		m := 0
		for i := 1; i < len(live); i++ {
			if live[i].e.h.cmp(live[m].e.h) < 0 {
				m = i
			}
		}
		e := entry{h: live[m].e.h, ord: live[m].e.ord}
		for i := 0; i < len(live); {
			it := live[i]
			if it.e.h != e.h {
				i++
				continue
			}
			if it.e.ord != e.ord {
				return errDamaged
			}
			e.n += it.e.n
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
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}
