//go:build !unix

package main

import "os"

// watchReader does nothing where poll(2) is not there: a closed pipe is
// then noticed at the next write.
func watchReader(f *os.File, gone func()) (stop func()) { return func() {} }
