//go:build !linux

package spill

import "unsafe"

// mapAlloc is not available here: the arrays come from the Go heap.
func mapAlloc(int) unsafe.Pointer { return nil }

func mapFree(unsafe.Pointer, int) {}
