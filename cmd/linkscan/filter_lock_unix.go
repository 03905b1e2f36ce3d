//go:build unix

package main

import (
	"os"
	"syscall"
)

// lockNB takes an exclusive flock(2) on f without waiting: busy when
// another holds it.
func lockNB(f *os.File) (busy bool, err error) {
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			break
		}
	}
	if err == syscall.EWOULDBLOCK {
		return true, nil
	}
	return false, err
}

// unlock gives up lockNB's lock.
func unlock(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
