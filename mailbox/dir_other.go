//go:build !unix

package mailbox

import (
	"io/fs"
	"os"
)

// fileID: no device and inode here, so a crosspost (a hard link) of a
// news spool is read under each of its groups.
func fileID(fi fs.FileInfo) ([2]uint64, bool) {
	return [2]uint64{}, false
}

// openNoBlock opens p for reading; there is no non-blocking open here
// (and no FIFO in a directory to wait on).
func openNoBlock(p string) (*os.File, error) {
	return os.Open(p)
}

// setBlocking: nothing to undo here.
func setBlocking(f *os.File) {}
