//go:build linux

package spill

import (
	"syscall"
	"unsafe"
)

// allocSlots returns n zeroed slots in an anonymous mapping, outside the
// Go heap (the slots hold no pointers), or from the heap when mapping
// fails. mapped says which, for freeSlots.
func allocSlots(n int) (s []slot, mapped bool) {
	size := n * int(unsafe.Sizeof(slot{}))
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]slot, n), false
	}
	return unsafe.Slice((*slot)(unsafe.Pointer(&b[0])), n), true
}

func freeSlots(s []slot, mapped bool) {
	if !mapped || len(s) == 0 {
		return
	}
	syscall.Munmap(unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(slot{}))))
}
