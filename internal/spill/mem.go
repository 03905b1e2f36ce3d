package spill

import "unsafe"

// allocArray returns n zeroed elements outside the Go heap where the
// system allows (see mapAlloc), so that the collector's heap target does
// not grow with them, or from the heap; mapped says which, for
// freeArray. T must hold no pointers.
func allocArray[T any](n int) (a []T, mapped bool) {
	if n == 0 {
		return nil, false
	}
	var zero T
	if p := mapAlloc(n * int(unsafe.Sizeof(zero))); p != nil {
		return unsafe.Slice((*T)(p), n), true
	}
	return make([]T, n), false
}

func freeArray[T any](a []T, mapped bool) {
	if mapped && len(a) > 0 {
		var zero T
		mapFree(unsafe.Pointer(&a[0]), len(a)*int(unsafe.Sizeof(zero)))
	}
}
