//go:build linux

package spill

import (
	"syscall"
	"unsafe"
)

// mapAlloc returns size zeroed bytes in an anonymous mapping, outside the
// Go heap, or nil when mapping fails.
func mapAlloc(size int) unsafe.Pointer {
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

func mapFree(p unsafe.Pointer, size int) {
	syscall.Munmap(unsafe.Slice((*byte)(p), size))
}
