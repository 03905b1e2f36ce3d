//go:build !unix

package writeback

import (
	"os"
	"time"
)

// fileLock takes no lock where the system has no flock and fcntl.
func fileLock(src *os.File, name string, deadline time.Time) (func(), error) {
	return func() {}, nil
}

func isReadOnly(err error) bool { return false }

// processAlive: no way to look here, so a dotlock is taken as held.
func processAlive(pid int) bool { return true }
