//go:build !linux

package spill

// allocSlots returns n zeroed slots from the Go heap.
func allocSlots(n int) (s []slot, mapped bool) { return make([]slot, n), false }

func freeSlots([]slot, bool) {}
