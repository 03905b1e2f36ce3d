//go:build unix

package output

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// dupFD returns a new descriptor of this process's open descriptor n,
// sharing its file offset and flags (as a shell's redirection is shared),
// named name.
func dupFD(n int, name string) (*os.File, error) {
	syscall.ForkLock.RLock()
	d, err := syscall.Dup(n)
	if err == nil {
		syscall.CloseOnExec(d)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, &os.PathError{Op: "dup", Path: name, Err: err}
	}
	return os.NewFile(uintptr(d), name), nil
}

// KeepOwner gives f the owner and group that fi (the file f replaces)
// has, where the process may: root may give any, an owner may give a
// group it is in; where the owner cannot be given the group still is. A
// file rewritten by root then stays its user's. Errors are not reported:
// the file then keeps the process's owner and group, as a new file does.
func KeepOwner(f *os.File, fi fs.FileInfo) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	if now, err := f.Stat(); err == nil {
		if s, ok := now.Sys().(*syscall.Stat_t); ok && s.Uid == st.Uid && s.Gid == st.Gid {
			return // already theirs
		}
	}
	if f.Chown(int(st.Uid), int(st.Gid)) != nil {
		f.Chown(-1, int(st.Gid))
	}
}

// noReader reports whether err is the ENXIO of a non-blocking open of a
// FIFO for writing that no process has open for reading.
func noReader(err error) bool { return errors.Is(err, syscall.ENXIO) }

// nonBlock is the open flag that keeps open(2) from waiting.
const nonBlock = syscall.O_NONBLOCK

// links returns the number of names (hard links) of the file fi, 0
// when unknown.
func links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 0
}

// canLock: flock(2) is there to tell a live run's temporary file.
const canLock = true

// lockTemp takes an exclusive flock on f without waiting; false when
// another process holds one.
func lockTemp(f *os.File) bool {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			return err == nil
		}
	}
}
