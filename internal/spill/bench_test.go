package spill

import (
	"fmt"
	"strconv"
	"testing"
)

// BenchmarkSetAdd adds keys of n distinct links, each twice (the second
// round in the same order), and reports the time per Add, the set's
// memory per distinct key ("B/key") and the spills. One op is all the
// adds of a set.
func BenchmarkSetAdd(b *testing.B) {
	for _, c := range []struct {
		name   string
		n      int
		budget int64
	}{
		{"1M-in-memory", 1 << 20, 256 << 20},
		{"1M-budget-8MiB", 1 << 20, 8 << 20},
	} {
		b.Run(c.name, func(b *testing.B) {
			hs := NewHasher()
			keys := make([]Hash, c.n)
			for i := range keys {
				keys[i] = hs.String("http://www.example.org/archive/" + strconv.Itoa(i) + ".html")
			}
			b.ReportAllocs()
			var perKey, spills float64
			for b.Loop() {
				s := NewSet(c.budget, b.TempDir())
				for range 2 {
					for _, h := range keys {
						if _, _, err := s.Add(h); err != nil {
							b.Fatal(err)
						}
					}
				}
				perKey = float64(s.Memory()) / float64(s.Len())
				spills = float64(s.Spills())
				if err := s.Each(func(_, n uint64) error { return nil }); err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(2*c.n), "ns/add")
			b.ReportMetric(perKey, "B/key")
			b.ReportMetric(spills, "spills")
		})
	}
}

// BenchmarkHasher measures the 128-bit hash of a typical link.
func BenchmarkHasher(b *testing.B) {
	hs := NewHasher()
	s := "http://www.example.org/archive/1994/03/msg00042.html"
	b.SetBytes(int64(len(s)))
	var h Hash
	for b.Loop() {
		h = hs.String(s)
	}
	_ = h
}

// BenchmarkSet10M is the large case at the Set level: ten million
// distinct keys at the budget --unique gives the set by default (256 MiB
// less 4 MiB), each key added once and then once more in another order.
// It reports the most memory the set held ("max-B/key", per distinct key)
// and the spills. Run it alone: go test -run XXX -bench Set10M
// -benchtime 1x ./internal/spill (about a minute on two cores).
func BenchmarkSet10M(b *testing.B) {
	const n = 10_000_000
	hs := NewHasher()
	var buf []byte
	key := func(i int) Hash {
		buf = strconv.AppendInt(append(buf[:0], "http://host.example.org/archive/"...), int64(i), 10)
		return hs.Bytes(buf)
	}
	var maxMem int64
	var spills int
	for b.Loop() {
		s := NewSet(252<<20, b.TempDir())
		for round := range 2 {
			for i := range n {
				k := i
				if round == 1 {
					k = int(uint64(i) * 7919 % n) // 7919 is prime to n: every key once
				}
				if _, _, err := s.Add(key(k)); err != nil {
					b.Fatal(err)
				}
				if i%65536 == 0 {
					maxMem = max(maxMem, s.Memory())
				}
			}
		}
		if s.Len() != n {
			b.Fatalf("%d distinct keys, want %d", s.Len(), n)
		}
		if err := s.Each(func(_, c uint64) error {
			if c != 2 {
				return fmt.Errorf("count %d, want 2", c)
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		spills = s.Spills()
		s.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(2*n), "ns/add")
	b.ReportMetric(float64(maxMem)/n, "max-B/key")
	b.ReportMetric(float64(spills), "spills")
}
