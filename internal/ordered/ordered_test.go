package ordered

import (
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

type item struct {
	n    int
	size int64
	out  int
	buf  []int // reused through Slot
}

// TestOrder: emit sees every item once, in the order put, whatever the
// workers' pace, for every batch shape.
func TestOrder(t *testing.T) {
	for _, o := range []Options{{Jobs: 1}, {Jobs: 4}, {Jobs: 3, BatchItems: 1}, {Jobs: 8, BatchItems: 5, BatchBytes: 64}, {Jobs: 2, HoldUntilEmitted: true}} {
		const n = 2000
		var resets atomic.Int64
		var got []int
		err := Run(o, func(f *Feed[item]) {
			for i := range n {
				if i%97 == 0 && !f.Flush() { // an input ends
					return
				}
				if !f.Put(item{n: i, size: int64(i % 50)}, int64(i%50)) {
					return
				}
			}
		}, func(it *item) {
			for range rand.IntN(50) {
				runtime.Gosched()
			}
			it.out = it.n * 2
		}, func(it *item) error {
			if it.out != it.n*2 {
				t.Errorf("item %d not worked on", it.n)
			}
			got = append(got, it.n)
			return nil
		}, func(it *item) { resets.Add(1); *it = item{} })
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n || resets.Load() != n {
			t.Fatalf("%+v: %d emitted, %d reset, want %d", o, len(got), resets.Load(), n)
		}
		for i, v := range got {
			if v != i {
				t.Fatalf("%+v: item %d emitted at place %d", o, v, i)
			}
		}
	}
}

// TestStop: an error from emit stops the run: read sees Put fail, emit is
// not called again, Run returns the error.
func TestStop(t *testing.T) {
	stop := errors.New("stop")
	emitted, put := 0, 0
	err := Run(Options{Jobs: 2, BatchItems: 4}, func(f *Feed[item]) {
		for i := range 1_000_000 {
			if !f.Put(item{n: i}, 1) {
				return
			}
			put++
		}
	}, func(*item) {}, func(it *item) error {
		emitted++
		if it.n == 10 {
			return stop
		}
		return nil
	}, func(*item) {})
	// read stops at its first Put after the error: what it put past item
	// 10 is what the queues held (4×Jobs batches of 4 waiting for emit),
	// the batch being queued and the one being filled
	if err != stop || emitted != 11 || put > 11+(4*2+2)*4 {
		t.Errorf("err %v, %d emitted, %d put", err, emitted, put)
	}
}

// TestBudget: the sizes in flight never exceed the bound but by one
// batch, counted until work or, with HoldUntilEmitted, until emit.
func TestBudget(t *testing.T) {
	for _, hold := range []bool{false, true} {
		const limit, size = 1000, 100
		var mu sync.Mutex
		inFlight, peak := int64(0), int64(0)
		add := func(n int64) {
			mu.Lock()
			inFlight += n
			peak = max(peak, inFlight)
			mu.Unlock()
		}
		o := Options{Jobs: 4, InFlightBytes: limit, BatchItems: 2, HoldUntilEmitted: hold}
		err := Run(o, func(f *Feed[item]) {
			for i := range 500 {
				// counted before Put: Put may wait for room
				if !f.Put(item{n: i, size: size}, size) {
					return
				}
			}
		}, func(it *item) {
			add(it.size)
			if !hold {
				add(-it.size)
			}
		}, func(it *item) error {
			if hold {
				add(-it.size)
			}
			return nil
		}, func(*item) {})
		if err != nil {
			t.Fatal(err)
		}
		if peak > limit+2*size {
			t.Errorf("hold %v: %d bytes in flight, bound %d", hold, peak, limit)
		}
	}
}

// TestSlotReuse: items filled through Slot keep the memory reset left
// them, batch after batch.
func TestSlotReuse(t *testing.T) {
	allocs := 0
	err := Run(Options{Jobs: 1, BatchItems: 4}, func(f *Feed[item]) {
		for i := range 400 {
			it := f.Slot()
			if it.buf == nil {
				allocs++
				it.buf = make([]int, 0, 8)
			}
			it.n = i
			if !f.Commit(1) {
				return
			}
		}
	}, func(it *item) { it.buf = append(it.buf, it.n) }, func(it *item) error {
		if len(it.buf) != 1 || it.buf[0] != it.n {
			t.Errorf("item %d: buf %v", it.n, it.buf)
		}
		return nil
	}, func(it *item) { it.buf = it.buf[:0] })
	if err != nil {
		t.Fatal(err)
	}
	if allocs > 100 {
		t.Errorf("%d buffers made for 400 items in batches of 4: memory not reused", allocs)
	}
}

// TestLargeAlone: an item of half the bound or more goes through alone:
// read puts nothing more until it has been worked on (or, with
// HoldUntilEmitted, emitted), so two large items are never held at once.
func TestLargeAlone(t *testing.T) {
	for _, hold := range []bool{false, true} {
		const limit = 1000
		var done atomic.Int64 // large items finished (worked or emitted)
		var bad atomic.Int64
		o := Options{Jobs: 4, InFlightBytes: limit, BatchItems: 1, HoldUntilEmitted: hold}
		err := Run(o, func(f *Feed[item]) {
			large := int64(0)
			for i := range 200 {
				size := int64(10)
				if i%5 == 0 {
					size = limit / 2
				}
				// every large item put before this one is done with
				if got := done.Load(); got != large {
					bad.Add(1)
				}
				if !f.Put(item{n: i, size: size}, size) {
					return
				}
				if size == limit/2 {
					large++
				}
			}
		}, func(it *item) {
			if !hold && it.size == limit/2 {
				done.Add(1)
			}
		}, func(it *item) error {
			if hold && it.size == limit/2 {
				done.Add(1)
			}
			return nil
		}, func(*item) {})
		if err != nil {
			t.Fatal(err)
		}
		if n := bad.Load(); n > 0 {
			t.Errorf("hold %v: %d items put while a large one was still in flight", hold, n)
		}
	}
}
