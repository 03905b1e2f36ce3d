//go:build unix

package mailbox

import (
	"io/fs"
	"os"
	"syscall"
)

// fileID returns the device and inode of fi: two names of one file (a
// news spool's crosspost is a hard link) have the same.
func fileID(fi fs.FileInfo) ([2]uint64, bool) {
	s, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return [2]uint64{}, false
	}
	return [2]uint64{uint64(s.Dev), uint64(s.Ino)}, true
}

// openNoBlock opens p for reading without waiting: a FIFO put in the
// place of a file opens at once instead of waiting for a writer.
func openNoBlock(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// setBlocking puts f, a regular file opened by openNoBlock, back to
// blocking reads: a regular file never blocks, but the runtime's poller
// must not be asked to wait for it.
func setBlocking(f *os.File) {
	syscall.SetNonblock(int(f.Fd()), false)
}
