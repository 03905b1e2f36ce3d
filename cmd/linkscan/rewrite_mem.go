package main

import (
	"runtime/metrics"
	"time"
)

// followHeap keeps the soft memory limit over the live heap while
// messages are rewritten: every tick (10 ms) it sets the limit to one
// and a half times the heap live after the last collection, never below
// floor. A fixed limit below the live heap of one large, link-dense
// message (the changes and records of 330,000 links: some 300 MB
// before rewrite.Changes, some 40 MB since) made
// the collector run again and again, so that the time grew faster than
// the message (82,000 links 2.5 s, 330,000 links 29 s); with
// the limit following the heap each collection lets the heap grow by
// half before the next, so collections cost a fixed share of the work
// (330,000 links: 8.8 s at a peak 7 % higher), and a run of ordinary
// messages still stays under floor. It returns the function that stops
// it.
func followHeap(set func(int64), floor int64) (stop func()) {
	if set == nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		cur := floor
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() != metrics.KindUint64 {
				return
			}
			live := int64(sample[0].Value.Uint64())
			want := max(floor, live+live/2)
			// a change of less than an eighth is not worth a call
			if d := want - cur; d > cur/8 || -d > cur/8 {
				set(want)
				cur = want
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
