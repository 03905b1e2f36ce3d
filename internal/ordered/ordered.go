// Package ordered runs work on a stream of items in parallel and hands
// the results on in the order the items came: the sequencer of cmd/gofmt,
// a batch at a time. scan uses it to scan messages; a command that writes
// messages back (rewrite) uses it to write them in order.
//
// One goroutine (read) puts items into batches; Jobs workers call work on
// every item of a batch; the caller's goroutine calls emit on every item,
// in the order read put them, and then reset, before the batch's memory
// is used again. Batching makes the cost of queueing and waking
// goroutines one per batch instead of one per item.
//
// Memory is bounded twice: in batches (2×Jobs waiting for a worker,
// 4×Jobs waiting for emit) and in the sizes of the items in flight
// (Options.InFlightBytes): read waits while they would exceed it, but one
// item larger than the bound still goes. A batch of half the bound or more
// goes alone: read waits until it is done with before it goes on, so that
// the memory of a run with large items is about that of the largest one.
package ordered

import (
	"runtime"
	"sync"
)

// Options are the sizes of a run; zero values mean the defaults.
type Options struct {
	// Jobs is the number of workers (default: the number of CPUs).
	Jobs int
	// InFlightBytes bounds the sizes of the items put but not yet worked
	// on, or with HoldUntilEmitted not yet emitted (default 64 MiB).
	InFlightBytes int64
	// BatchItems and BatchBytes close a batch (defaults 16 and 128 KiB).
	BatchItems int
	BatchBytes int64
	// HoldUntilEmitted counts an item against InFlightBytes until emit
	// is done with it rather than until work is: for items whose memory
	// lives on after work (messages kept for the writer).
	HoldUntilEmitted bool
}

// Default sizes.
const (
	DefaultInFlightBytes = 64 << 20
	DefaultBatchItems    = 16
	DefaultBatchBytes    = 128 << 10
)

type batch[T any] struct {
	items []T
	size  int64
	done  chan struct{} // a worker finished the batch
}

// Feed is what read puts items into.
type Feed[T any] struct {
	o        Options
	cur      *batch[T]
	newBatch func() *batch[T]
	order    chan *batch[T]
	work     chan *batch[T]
	quit     chan struct{}
	budget   *budget
	batchMax int
}

// Put adds an item of the given size (its bytes, for the in-flight bound)
// to the current batch, and queues the batch when it is full. It reports
// false when the run is stopping (emit failed): read must then return.
// The item is copied; put values, not pointers to reused memory.
func (f *Feed[T]) Put(item T, size int64) bool {
	if f.stopped() {
		return false
	}
	b := f.cur
	b.items = append(b.items, item)
	b.size += size
	if len(b.items) >= f.batchMax || b.size >= f.o.BatchBytes {
		return f.Flush()
	}
	return true
}

// Slot returns a pointer to the next item of the current batch, to be
// filled in place (its memory may hold what reset left of an earlier
// item: slices to reuse); Commit then adds it. Slot and Commit let large
// items be built without copying.
func (f *Feed[T]) Slot() *T {
	b := f.cur
	n := len(b.items)
	if n == cap(b.items) {
		var zero T
		b.items = append(b.items, zero)[:n]
	}
	return &b.items[:n+1][n]
}

// Commit adds the item that Slot returned, of the given size; it reports
// false as Put does.
func (f *Feed[T]) Commit(size int64) bool {
	if f.stopped() {
		return false
	}
	b := f.cur
	b.items = b.items[:len(b.items)+1]
	b.size += size
	if len(b.items) >= f.batchMax || b.size >= f.o.BatchBytes {
		return f.Flush()
	}
	return true
}

// stopped reports whether emit failed: read should stop at once.
func (f *Feed[T]) stopped() bool {
	select {
	case <-f.quit:
		return true
	default:
		return false
	}
}

// Flush queues the current batch at once (at the end of an input, or for
// an item that must not wait for others); it reports false as Put does.
func (f *Feed[T]) Flush() bool {
	b := f.cur
	if len(b.items) == 0 {
		return true
	}
	f.cur = f.newBatch()
	if f.stopped() {
		return false
	}
	select {
	case f.order <- b:
	case <-f.quit:
		return false
	}
	size := b.size // b is the workers' and emit's once sent
	f.budget.acquire(size)
	f.work <- b
	if 2*size >= f.o.InFlightBytes {
		// a batch of half the bound or more goes through alone: read
		// waits until it is done with before reading the next item, so
		// that two large items (messages of 60 MB) are never held at once
		f.budget.waitIdle()
	}
	return true
}

// SetBatchItems changes the number of items that close a batch from now
// on (0: Options.BatchItems); 1 sends every item on alone, for input fed
// slowly (a pipe).
func (f *Feed[T]) SetBatchItems(n int) {
	if n <= 0 {
		n = f.o.BatchItems
	}
	f.batchMax = n
}

// Run calls read with a Feed in a goroutine of its own, work on every
// item put (in Jobs workers), and emit on every item in the order put, in
// the caller's goroutine; after emit, reset is called on the item (to
// clear it, keeping memory worth reusing) before its batch is reused. The
// batch still open when read returns is flushed. When emit returns an
// error, Run stops: Put and Flush report false, emit is not called again,
// and Run returns the error once read has returned and the workers are
// done.
func Run[T any](o Options, read func(*Feed[T]), work func(*T), emit func(*T) error, reset func(*T)) error {
	if o.Jobs <= 0 {
		o.Jobs = runtime.NumCPU()
	}
	if o.InFlightBytes <= 0 {
		o.InFlightBytes = DefaultInFlightBytes
	}
	if o.BatchItems <= 0 {
		o.BatchItems = DefaultBatchItems
	}
	if o.BatchBytes <= 0 {
		o.BatchBytes = DefaultBatchBytes
	}
	// batches are recycled through a free list as long as the queues
	// (never through sync.Pool, which may drop them at any collection)
	free := make(chan *batch[T], 6*o.Jobs+2)
	f := &Feed[T]{
		o: o,
		newBatch: func() *batch[T] {
			select {
			case b := <-free:
				return b
			default:
				return &batch[T]{done: make(chan struct{}, 1)}
			}
		},
		// deep queues, so that workers never wait for the reader or the
		// writer
		order:    make(chan *batch[T], 4*o.Jobs),
		work:     make(chan *batch[T], 2*o.Jobs),
		quit:     make(chan struct{}),
		budget:   newBudget(o.InFlightBytes),
		batchMax: o.BatchItems,
	}
	f.cur = f.newBatch()
	var wg sync.WaitGroup
	for range o.Jobs {
		wg.Go(func() {
			for b := range f.work {
				for i := range b.items {
					work(&b.items[i])
				}
				if !o.HoldUntilEmitted {
					f.budget.release(b.size)
				}
				b.done <- struct{}{}
			}
		})
	}
	go func() {
		defer close(f.order)
		defer close(f.work)
		read(f)
		f.Flush()
	}()
	var emitErr error
	for b := range f.order {
		<-b.done
		for i := range b.items {
			if emitErr == nil {
				if emitErr = emit(&b.items[i]); emitErr != nil {
					close(f.quit)
				}
			}
			reset(&b.items[i])
		}
		if o.HoldUntilEmitted {
			f.budget.release(b.size)
		}
		b.items = b.items[:0]
		b.size = 0
		select {
		case free <- b:
		default:
		}
	}
	wg.Wait()
	return emitErr
}

// budget counts the bytes of the items in flight; acquire waits while
// they would exceed the limit, but always lets one batch through.
type budget struct {
	mu          sync.Mutex
	cond        *sync.Cond
	used, limit int64
}

func newBudget(max int64) *budget {
	b := &budget{limit: max}
	b.cond = sync.NewCond(&b.mu)
	return b
}

func (b *budget) acquire(n int64) {
	b.mu.Lock()
	for b.used > 0 && b.used+n > b.limit {
		b.cond.Wait()
	}
	b.used += n
	b.mu.Unlock()
}

// waitIdle waits until nothing is in flight.
func (b *budget) waitIdle() {
	b.mu.Lock()
	for b.used > 0 {
		b.cond.Wait()
	}
	b.mu.Unlock()
}

func (b *budget) release(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
	b.cond.Broadcast()
}
