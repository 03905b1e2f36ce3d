package spill

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"
)

// keepNames makes temporary files keep their names until closeTemp, as
// on systems that cannot remove an open file's name, so that a test sees
// every file a Counter leaves behind.
func keepNames(t *testing.T) {
	old := unlinkAtOnce
	t.Cleanup(func() { unlinkAtOnce = old })
	unlinkAtOnce = false
}

func noFilesLeft(t *testing.T, dir string) {
	t.Helper()
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Errorf("temporary files left in %s: %v %v", dir, ents, err)
	}
}

type keyCount struct {
	key string
	n   uint64
}

// countKeys draws adds of keys from a skewed distribution over about
// distinct keys: host-like names, the empty key, binary bytes, and some
// keys longer than an arena chunk.
func countKeys(adds, distinct int, seed uint64) []keyCount {
	r := rand.New(rand.NewPCG(seed, 5))
	out := make([]keyCount, adds)
	for i := range out {
		k := r.IntN(r.IntN(distinct) + 1)
		key := fmt.Sprintf("h%d.d%d.example.org", k, k%13)
		switch k % 101 {
		case 0:
			key = ""
		case 1:
			key = fmt.Sprintf("\x00\xff%d\x80", k)
		case 2:
			key = strings.Repeat(fmt.Sprint(k), 3000) // past a 4 KiB chunk
		}
		out[i] = keyCount{key, uint64(1 + r.IntN(1000))}
	}
	return out
}

// countModel is what Each must give for adds: every key once, in
// increasing order, with its sum.
func countModel(adds []keyCount) []keyCount {
	m := map[string]uint64{}
	for _, a := range adds {
		m[a.key] += a.n
	}
	var want []keyCount
	for k, n := range m {
		want = append(want, keyCount{k, n})
	}
	slices.SortFunc(want, cmpKey)
	return want
}

func cmpKey(a, b keyCount) int { return strings.Compare(a.key, b.key) }

func each(c *Counter) ([]keyCount, error) {
	var got []keyCount
	err := c.Each(func(key []byte, n uint64) error {
		got = append(got, keyCount{string(key), n})
		return nil
	})
	return got, err
}

// TestCounter compares a Counter with a map for budgets from none (a
// spill every few keys, more runs than maxRuns) to one that holds every
// key, and checks that it stays within its budget and removes its files.
func TestCounter(t *testing.T) {
	keepNames(t)
	adds := countKeys(30000, 5000, 1)
	want := countModel(adds)
	for _, c := range []struct {
		budget   int64
		maxSlots int
		spills   bool
	}{
		{0, 0, true}, {1 << 10, 0, true}, {16 << 10, 0, true}, {256 << 10, 0, true},
		{64 << 20, 32, true}, // the table, not the arena, is full
		{64 << 20, 0, false},
	} {
		t.Run(fmt.Sprintf("%d-%d", c.budget, c.maxSlots), func(t *testing.T) {
			dir := t.TempDir()
			ct := NewCounter(c.budget, dir)
			ct.maxSlots = c.maxSlots
			most := int64(0)
			for i, a := range adds {
				if err := ct.Add(a.key, a.n); err != nil {
					t.Fatalf("add %d: %v", i, err)
				}
				most = max(most, ct.Memory())
			}
			// The budget, or the least a counter holds: 16 slots and one
			// chunk, or a chunk for the longest key (12 KiB).
			if limit := max(c.budget, minSlots*cslotSize+4<<10) + 13<<10; most > limit {
				t.Errorf("memory reached %d bytes, budget %d", most, c.budget)
			}
			if (ct.Spills() > 0) != c.spills {
				t.Errorf("%d spills", ct.Spills())
			}
			if c.spills && c.budget < 64<<20 && len(ct.runs) > maxRuns {
				t.Errorf("%d runs after %d spills, want at most %d", len(ct.runs), ct.Spills(), maxRuns)
			}
			spilled := ct.Spills() > 0
			got, err := each(ct)
			if err != nil {
				t.Fatal(err)
			}
			// In key order after a spill, in any order without.
			if sorted := slices.IsSortedFunc(got, cmpKey); spilled && !sorted {
				t.Error("spilled, and Each gave keys out of order")
			} else if !sorted {
				slices.SortFunc(got, cmpKey)
			}
			if !slices.Equal(got, want) {
				t.Errorf("Each gave %d keys, want %d", len(got), len(want))
				for i := range min(len(got), len(want)) {
					if got[i] != want[i] {
						t.Fatalf("first difference at %d: %q %d, want %q %d", i, got[i].key, got[i].n, want[i].key, want[i].n)
					}
				}
			}
			if ct.Memory() != 0 {
				t.Errorf("Each left %d bytes in memory", ct.Memory())
			}
			if err := ct.Close(); err != nil {
				t.Fatal(err)
			}
			noFilesLeft(t, dir)
		})
	}
}

func TestCounterMisuse(t *testing.T) {
	keepNames(t)
	dir := t.TempDir()
	c := NewCounter(1<<10, dir)
	for i := range 500 {
		c.Add(fmt.Sprint(i), 1)
	}
	stop := errors.New("stop")
	if err := c.Each(func([]byte, uint64) error { return stop }); err != stop {
		t.Errorf("Each returned %v, want fn's error", err)
	}
	if err := c.Each(func([]byte, uint64) error { return nil }); err == nil {
		t.Error("Each twice: no error")
	}
	if err := c.Add("x", 1); err == nil {
		t.Error("Add after Each: no error")
	}
	c.Close()
	noFilesLeft(t, dir)
	c = NewCounter(1<<10, dir)
	for i := range 500 {
		c.Add(fmt.Sprint(i), 1)
	}
	if c.Spills() == 0 {
		t.Fatal("no spill")
	}
	c.Close() // without Each
	noFilesLeft(t, dir)
	if err := c.Add("x", 1); err == nil {
		t.Error("Add after Close: no error")
	}
	c = NewCounter(1<<10, dir)
	c.Add("big", 1<<63)
	c.Add("big", 1<<63) // saturates: a count of 0 would empty the slot
	c.Add("big", 1)
	if got, err := each(c); err != nil || len(got) != 1 || got[0].n != 1<<64-1 {
		t.Errorf("counts past 2⁶⁴: %v %v", got, err)
	}
	c = NewCounter(1<<10, dir)
	c.Add("zero", 0)
	if got, err := each(c); err != nil || len(got) != 0 {
		t.Errorf("a count of 0 added: %v %v", got, err)
	}
}

// TestCounterNoTempDir: a directory that cannot hold files (a regular
// file in its place) is named in the error, which sticks.
func TestCounterNoTempDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(dir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c := NewCounter(1<<10, dir)
	defer c.Close()
	var err error
	for i := 0; i < 1000 && err == nil; i++ {
		err = c.Add(fmt.Sprint(i), 1)
	}
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "no temporary file can be made") {
		t.Fatalf("error %v; want one naming %s", err, dir)
	}
	if c.Add("more", 1) == nil {
		t.Error("no error after a failed spill")
	}
	if _, err := each(c); err == nil {
		t.Error("Each after a failed spill: no error")
	}
}

// failingWriter fails every write past the first limit bytes, as a full
// disk does, naming the file.
type failingWriter struct {
	f     *os.File
	limit *int
}

func (w failingWriter) Write(p []byte) (int, error) {
	if len(p) > *w.limit {
		n, _ := w.f.Write(p[:*w.limit])
		*w.limit = 0
		return n, &os.PathError{Op: "write", Path: w.f.Name(), Err: syscall.ENOSPC}
	}
	*w.limit -= len(p)
	return w.f.Write(p)
}

// TestCounterWriteFaults fails the writes of the temporary files after
// every number of bytes from the first spill's through the merges of
// runs: each failure is an error naming the file, that sticks, and no
// file is left behind. It also runs on /dev/full.
func TestCounterWriteFaults(t *testing.T) {
	keepNames(t)
	adds := countKeys(6000, 6000, 2)
	// How many bytes the runs take in all, without faults.
	total := 0
	old := tempWriter
	t.Cleanup(func() { tempWriter = old })
	tempWriter = func(f *os.File) io.Writer { return writeCounter{f, &total} }
	c := NewCounter(16<<10, t.TempDir())
	for _, a := range adds {
		if err := c.Add(a.key, a.n); err != nil {
			t.Fatal(err)
		}
	}
	spills := c.Spills()
	c.Close()
	if spills < 20 || total == 0 {
		t.Fatalf("%d spills, %d bytes: too few to test", spills, total)
	}
	for limit := 0; limit < total; limit += total/23 + 1 {
		dir := t.TempDir()
		left := limit
		tempWriter = func(f *os.File) io.Writer { return failingWriter{f, &left} }
		c := NewCounter(16<<10, dir)
		var err error
		for i := 0; i < len(adds) && err == nil; i++ {
			err = c.Add(adds[i].key, adds[i].n)
		}
		if err == nil {
			_, err = each(c)
		}
		var pe *os.PathError
		if err == nil || !errors.As(err, &pe) || !strings.HasPrefix(pe.Path, dir) || !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("writes failing after %d bytes: %v", limit, err)
		}
		if c.Add("x", 1) == nil {
			t.Fatalf("writes failing after %d bytes: no error after the failure", limit)
		}
		c.Close()
		noFilesLeft(t, dir)
	}
	tempWriter = old
	t.Run("full", func(t *testing.T) {
		devFull(t)
		c := NewCounter(1<<10, "")
		defer c.Close()
		var err error
		for i := 0; i < 100000 && err == nil; i++ {
			err = c.Add(fmt.Sprint(i), 1)
		}
		if err == nil || !strings.Contains(err.Error(), "no space left") || !strings.Contains(err.Error(), "write /") {
			t.Fatalf("error %v; want no space left on device, naming the file", err)
		}
	})
}

type writeCounter struct {
	f *os.File
	n *int
}

func (w writeCounter) Write(p []byte) (int, error) { *w.n += len(p); return w.f.Write(p) }

// TestCounterDamagedRun reads runs with damage in them: an error, never
// an answer.
func TestCounterDamagedRun(t *testing.T) {
	good := appendEntry(appendEntry(nil, "a", 1), "b", 2)
	for _, c := range []struct {
		name string
		data []byte
		n    int64
	}{
		{"short", good[:len(good)-1], 2},
		{"fewer entries", good, 3},
		{"order", appendEntry(appendEntry(nil, "b", 1), "a", 2), 2},
		{"twice", appendEntry(appendEntry(nil, "a", 1), "a", 2), 2},
		{"zero count", appendEntry(nil, "a", 0), 1},
		{"long key", []byte{0xff, 0xff, 0xff, 0xff, 0x7f}, 1},
	} {
		err := mergeCounts([]*countIter{newCountIter(bytes.NewReader(c.data), c.n)}, func([]byte, uint64) error { return nil })
		if !errors.Is(err, errDamaged) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestCountRunShortReads reads runs (a long key among short ones)
// through readers that return less than asked.
func TestCountRunShortReads(t *testing.T) {
	var data []byte
	var want []keyCount
	for i := range 300 {
		k := fmt.Sprintf("h%03d.example", i)
		if i == 150 {
			k += strings.Repeat("x", 100<<10) // past the reader's buffer
		}
		data = appendEntry(data, k, uint64(i+1))
		want = append(want, keyCount{k, uint64(i + 1)})
	}
	for name, r := range map[string]func(io.Reader) io.Reader{"one byte": iotest.OneByteReader, "half": iotest.HalfReader, "data err": iotest.DataErrReader} {
		var got []keyCount
		err := mergeCounts([]*countIter{newCountIter(r(bytes.NewReader(data)), int64(len(want)))}, func(k []byte, n uint64) error {
			got = append(got, keyCount{string(k), n})
			return nil
		})
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %d entries, %v; want %d", name, len(got), err, len(want))
		}
	}
}

func appendEntry(b []byte, key string, n uint64) []byte {
	b = appendUvarint(b, uint64(len(key)))
	return appendUvarint(append(b, key...), n)
}

func appendUvarint(b []byte, x uint64) []byte {
	for x >= 0x80 {
		b = append(b, byte(x)|0x80)
		x >>= 7
	}
	return append(b, byte(x))
}

// FuzzCounter adds the lines of the input, each counted by its length
// plus one, to a Counter of a tiny budget and compares Each with a map.
func FuzzCounter(f *testing.F) {
	f.Add([]byte("a\nb\na\n\nccc\nb\n"), uint16(0))
	f.Add(bytes.Repeat([]byte("host.example\nother.example\nx\n"), 50), uint16(300))
	f.Fuzz(func(t *testing.T, data []byte, budget uint16) {
		var adds []keyCount
		for line := range bytes.SplitSeq(data, []byte("\n")) {
			adds = append(adds, keyCount{string(line), uint64(len(line)) + 1})
		}
		c := NewCounter(int64(budget), t.TempDir())
		defer c.Close()
		for _, a := range adds {
			if err := c.Add(a.key, a.n); err != nil {
				t.Fatal(err)
			}
		}
		spilled := c.Spills() > 0
		got, err := each(c)
		if err != nil {
			t.Fatal(err)
		}
		if spilled && !slices.IsSortedFunc(got, cmpKey) {
			t.Fatalf("spilled, and Each gave keys out of order: %v", got)
		}
		slices.SortFunc(got, cmpKey)
		if want := countModel(adds); !slices.Equal(got, want) {
			t.Fatalf("got %v\nwant %v", got, want)
		}
	})
}

// FuzzCountRun reads any bytes as a run: damage is an error, and what is
// read is in order, each key once with a count, and reads back the same
// once written again.
func FuzzCountRun(f *testing.F) {
	f.Add(appendEntry(appendEntry(nil, "a", 1), "b", 300), uint8(2))
	f.Add(appendEntry(nil, "", 5), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, n uint8) {
		var got []keyCount
		err := mergeCounts([]*countIter{newCountIter(bytes.NewReader(data), int64(n))}, func(k []byte, c uint64) error {
			got = append(got, keyCount{string(k), c})
			return nil
		})
		if err != nil {
			if !errors.Is(err, errDamaged) {
				t.Fatalf("error %v, want damage", err)
			}
			return
		}
		if len(got) != int(n) {
			t.Fatalf("%d entries read, want %d", len(got), n)
		}
		var again bytes.Buffer
		w := &countWriter{r: &countRun{}, w: bufio.NewWriter(&again)}
		for i, e := range got {
			if e.n == 0 || i > 0 && got[i-1].key >= e.key {
				t.Fatalf("entry %d: %q %d after %q", i, e.key, e.n, got[i-1].key)
			}
			if err := w.add([]byte(e.key), e.n); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.finish(); err != nil || w.r.size != int64(again.Len()) || w.r.n != int64(n) {
			t.Fatalf("written again: %v, %d entries in %d bytes, counted %d in %d", err, n, again.Len(), w.r.n, w.r.size)
		}
		var back []keyCount
		err = mergeCounts([]*countIter{newCountIter(&again, int64(n))}, func(k []byte, c uint64) error {
			back = append(back, keyCount{string(k), c})
			return nil
		})
		if err != nil || !slices.Equal(back, got) {
			t.Fatalf("written again and read: %v %v, want %v", back, err, got)
		}
	})
}
