package spill

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/linkscan/linkscan/internal/testutil"
)

// model is what a Set must answer, kept in a map.
type model struct {
	ord   map[Hash]uint64
	count []uint64
}

func (m *model) add(h Hash) (uint64, bool) {
	if o, ok := m.ord[h]; ok {
		m.count[o]++
		return o, false
	}
	o := uint64(len(m.count))
	m.ord[h] = o
	m.count = append(m.count, 1)
	return o, true
}

// checkSet adds keys drawn from a skewed distribution over distinct keys
// and compares every answer of the Set and its final counts with a map.
func checkSet(t *testing.T, s *Set, adds, distinct int, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	hs := NewHasher()
	m := &model{ord: map[Hash]uint64{}}
	for i := range adds {
		// Half new-ish keys, half repeats of a small hot set.
		k := r.IntN(distinct)
		if i%2 == 0 {
			k = r.IntN(max(distinct/50, 1))
		}
		h := hs.String(fmt.Sprintf("http://example.org/%d", k))
		ord, isNew, err := s.Add(h)
		if err != nil {
			t.Fatalf("add %d: %v", i, err)
		}
		wo, wn := m.add(h)
		if ord != wo || isNew != wn {
			t.Fatalf("add %d (key %d): got ord %d new %v, want ord %d new %v", i, k, ord, isNew, wo, wn)
		}
	}
	if s.Len() != uint64(len(m.count)) {
		t.Fatalf("Len %d, want %d", s.Len(), len(m.count))
	}
	next := uint64(0)
	err := s.Each(func(ord, n uint64) error {
		if ord != next {
			return fmt.Errorf("ordinal %d, want %d", ord, next)
		}
		if n != m.count[ord] {
			return fmt.Errorf("ordinal %d: count %d, want %d", ord, n, m.count[ord])
		}
		next++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if next != uint64(len(m.count)) {
		t.Fatalf("Each gave %d ordinals, want %d", next, len(m.count))
	}
}

func TestSetInMemory(t *testing.T) {
	s := NewSet(64<<20, t.TempDir())
	defer s.Close()
	checkSet(t, s, 50000, 20000, 1)
	if s.Spills() != 0 {
		t.Errorf("%d spills within a 64 MiB budget", s.Spills())
	}
}

// TestSetSpill uses budgets small enough that the table is written out
// many times, the runs merged and the counts handed on through bucket
// files.
func TestSetSpill(t *testing.T) {
	for _, budget := range []int64{0, 4 << 10, 64 << 10, 256 << 10} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			dir := t.TempDir()
			s := NewSet(budget, dir)
			checkSet(t, s, 60000, 25000, uint64(budget))
			if s.Spills() == 0 {
				t.Errorf("no spill with a budget of %d bytes", budget)
			}
			if s.Memory() > max(budget, 16*slotSize)+blockEntries*entrySize+64<<10 {
				t.Errorf("memory %d past the budget %d", s.Memory(), budget)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("temporary files left: %v", ents)
			}
		})
	}
}

// TestSetSpillSameAnswers checks that a spilling set and an in-memory one
// give the same ordinals and counts for the same keys.
func TestSetSpillSameAnswers(t *testing.T) {
	hs := NewHasher()
	a, b := NewSet(1<<30, ""), NewSet(2<<10, t.TempDir())
	defer a.Close()
	defer b.Close()
	r := rand.New(rand.NewPCG(3, 3))
	for i := range 30000 {
		h := hs.String(fmt.Sprint(r.IntN(8000)))
		o1, n1, e1 := a.Add(h)
		o2, n2, e2 := b.Add(h)
		if o1 != o2 || n1 != n2 || e1 != nil || e2 != nil {
			t.Fatalf("add %d: (%d %v %v) and (%d %v %v)", i, o1, n1, e1, o2, n2, e2)
		}
	}
	var ca, cb []uint64
	a.Each(func(_, n uint64) error { ca = append(ca, n); return nil })
	b.Each(func(_, n uint64) error { cb = append(cb, n); return nil })
	if fmt.Sprint(ca) != fmt.Sprint(cb) || b.Spills() == 0 {
		t.Errorf("counts differ (spills %d)", b.Spills())
	}
}

func TestSetCountOverflow(t *testing.T) {
	defer func(m uint32) { maxCount = m }(maxCount)
	maxCount = 3
	s := NewSet(1<<20, t.TempDir())
	defer s.Close()
	hs := NewHasher()
	for i := range 10 {
		ord, isNew, err := s.Add(hs.String("x"))
		if err != nil || ord != 0 || isNew != (i == 0) {
			t.Fatalf("add %d: %d %v %v", i, ord, isNew, err)
		}
	}
	s.Add(hs.String("y"))
	var got []uint64
	if err := s.Each(func(_, n uint64) error { got = append(got, n); return nil }); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[10 1]" || s.Spills() == 0 {
		t.Errorf("counts %v, spills %d; want [10 1] and a spill", got, s.Spills())
	}
}

// TestSetCollision documents what happens when two keys share a hash:
// the second is taken for the first.
func TestSetCollision(t *testing.T) {
	s := NewSet(1<<20, "")
	defer s.Close()
	h := Hash{1, 2}
	s.Add(h)
	if ord, isNew, _ := s.Add(h); ord != 0 || isNew {
		t.Errorf("a second key with the same hash: ord %d new %v", ord, isNew)
	}
}

func TestSetMisuse(t *testing.T) {
	s := NewSet(1<<20, "")
	s.Add(Hash{1, 1})
	if err := s.Each(func(uint64, uint64) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.Each(func(uint64, uint64) error { return nil }); err == nil {
		t.Error("Each twice: no error")
	}
	if _, _, err := s.Add(Hash{2, 2}); err == nil {
		t.Error("Add after Each: no error")
	}
	stop := errors.New("stop")
	s = NewSet(1<<20, "")
	s.Add(Hash{1, 1})
	s.Add(Hash{2, 1})
	if err := s.Each(func(uint64, uint64) error { return stop }); err != stop {
		t.Errorf("Each returned %v, want fn's error", err)
	}
	s.Close()
	if _, _, err := s.Add(Hash{3, 3}); err == nil {
		t.Error("Add after Close: no error")
	}
}

// TestSetNoTempDir spills into a directory that cannot hold files (a
// regular file in its place): Add must fail with an error that names it,
// and keep failing.
func TestSetNoTempDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(dir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s := NewSet(1<<10, dir)
	defer s.Close()
	hs := NewHasher()
	var err error
	for i := 0; i < 1000 && err == nil; i++ {
		_, _, err = s.Add(hs.String(fmt.Sprint(i)))
	}
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "no temporary file can be made") {
		t.Fatalf("error %v; want one naming %s and the budget", err, dir)
	}
	if _, _, err2 := s.Add(hs.String("more")); err2 == nil {
		t.Error("no error after a failed spill")
	}
	if err := s.Each(func(uint64, uint64) error { return nil }); err == nil {
		t.Error("Each after a failed spill: no error")
	}
}

// devFull makes every temporary file /dev/full, where writes fail with
// ENOSPC.
func devFull(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /dev/full")
	}
	full := testutil.FullDevice(t)
	old := createTemp
	t.Cleanup(func() { createTemp = old })
	createTemp = func(string, string) (*os.File, error) { return os.OpenFile(full, os.O_RDWR, 0) }
}

func TestSetDiskFull(t *testing.T) {
	devFull(t)
	s := NewSet(1<<10, "")
	defer s.Close()
	hs := NewHasher()
	var err error
	for i := 0; i < 100000 && err == nil; i++ {
		_, _, err = s.Add(hs.String(fmt.Sprint(i)))
	}
	if err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("error %v; want no space left on device", err)
	}
}

func TestBloomNoFalseNegatives(t *testing.T) {
	r := &run{bloom: make([]uint64, 100), k: 5}
	w := &runWriter{r: r}
	hs := NewHasher()
	for i := range 500 {
		h := hs.String(fmt.Sprint(i))
		for j := range r.k {
			b := r.bloomBit(h, j)
			r.bloom[b/64] |= 1 << (b % 64)
		}
	}
	_ = w
	fp := 0
	for i := range 500 {
		if !r.mayHave(hs.String(fmt.Sprint(i))) {
			t.Fatalf("key %d added but not found", i)
		}
		if r.mayHave(hs.String(fmt.Sprint("other", i))) {
			fp++
		}
	}
	if fp > 100 {
		t.Errorf("%d false positives of 500 at 12.8 bits a key", fp)
	}
}

func TestLog(t *testing.T) {
	for _, limit := range []int{0, 100, 1 << 20} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			dir := t.TempDir()
			l := NewLog(limit, dir)
			defer l.Close()
			var want [][]byte
			for i := range 3000 {
				p := []byte(strings.Repeat(fmt.Sprint(i%10), i%300))
				if i == 1500 {
					p = make([]byte, 200<<10) // past the reader's buffer
					p[7] = 7
				}
				want = append(want, p)
				if err := l.Append(p); err != nil {
					t.Fatal(err)
				}
			}
			if l.OnDisk() != (limit < 1<<20) {
				t.Errorf("OnDisk %v with a limit of %d", l.OnDisk(), limit)
			}
			if ents, _ := os.ReadDir(dir); runtime.GOOS == "linux" && len(ents) != 0 {
				t.Errorf("temporary file not removed at once: %v", ents)
			}
			r, err := l.Reader()
			if err != nil {
				t.Fatal(err)
			}
			if l.Append(nil) == nil {
				t.Error("Append after Reader: no error")
			}
			for i, w := range want {
				p, err := r.Next()
				if err != nil || string(p) != string(w) {
					t.Fatalf("record %d: %d bytes, %v; want %d bytes", i, len(p), err, len(w))
				}
			}
			if _, err := r.Next(); err != io.EOF {
				t.Errorf("after the last record: %v", err)
			}
		})
	}
}

func TestLogFaults(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "file")
	os.WriteFile(dir, nil, 0o644)
	l := NewLog(10, dir)
	if err := l.Append(make([]byte, 20)); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("Append into %s: %v", dir, err)
	}
	if _, err := l.Reader(); err == nil {
		t.Error("Reader after a failed Append: no error")
	}
	t.Run("full", func(t *testing.T) {
		devFull(t)
		l := NewLog(10, "")
		defer l.Close()
		var err error
		for i := 0; i < 10000 && err == nil; i++ {
			err = l.Append(make([]byte, 100))
		}
		if err == nil {
			_, err = l.Reader()
		}
		if err == nil || !strings.Contains(err.Error(), "no space left") {
			t.Errorf("error %v; want no space left on device", err)
		}
	})
}
