//go:build !unix

package output

import (
	"errors"
	"io/fs"
	"os"
)

// dupFD: no descriptors to share here.
func dupFD(n int, name string) (*os.File, error) {
	return nil, &os.PathError{Op: "dup", Path: name, Err: errors.ErrUnsupported}
}

// KeepOwner does nothing where files have no Unix owner and group.
func KeepOwner(f *os.File, fi fs.FileInfo) {}

// noReader: no FIFOs to wait for here.
func noReader(err error) bool { return false }

// nonBlock: open(2) does not wait here.
const nonBlock = 0

// links: unknown here (0), so that every file is compared.
func links(fi fs.FileInfo) uint64 { return 0 }

// canLock: no flock here, so no temporary file is taken for a dead run's.
const canLock = false

// lockTemp: no flock here.
func lockTemp(f *os.File) bool { return false }
