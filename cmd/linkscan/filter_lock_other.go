//go:build !unix

package main

import "os"

// lockNB takes no lock where the system has no flock: an append is one
// write.
func lockNB(*os.File) (busy bool, err error) { return false, nil }

// unlock gives up lockNB's lock.
func unlock(*os.File) {}
