//go:build unix

package references

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// A run that writes an index holds a shared lock (flock) on a file next
// to it, PATH-writers, from its first write until it closes the index.
// A run that opens the index without a clean-close mark tries for an
// exclusive lock on that file: when it cannot have one, another run is
// writing now, which explains the missing mark (no check, no notice);
// when it can, the last writer ended without closing (killed, crashed).
// The system drops the lock of a process that ends, however it ends.
// The lock file is a separate file, not the index: SQLite's own locks on
// the index are left alone.

// holdWriting takes the shared lock of a run that writes; nil when no
// lock file can be made there (a missing mark is then checked, as
// before).
func holdWriting(path string) *os.File {
	f, err := os.OpenFile(path+"-writers", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		f.Close()
		return nil
	}
	// and the byte at this process's id, locked for writing (fcntl):
	// the mark of a live writer, which goes with the process (runAlive)
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Start: int64(os.Getpid()), Len: 1}
	syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk)
	return f
}

// runAlive reports whether process pid of this host is a run writing
// the index at path: it holds the byte at its id in PATH-writers
// (holdWriting), which no process that took that id after a killed run
// does. f is this run's own lock file, if it has one: closing another
// descriptor of that file would drop this process's marks. Where the
// mark cannot be looked at, whether the process exists is the answer.
func runAlive(f *os.File, path string, pid int) bool {
	if f == nil {
		g, err := os.Open(path + "-writers")
		if err != nil {
			return processAlive(pid)
		}
		defer g.Close()
		f = g
	}
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Start: int64(pid), Len: 1}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &lk); err != nil {
		return processAlive(pid)
	}
	return lk.Type != syscall.F_UNLCK && int(lk.Pid) == pid
}

// othersWriting reports whether another run holds the lock of a run
// that writes the index at path.
func othersWriting(path string) bool {
	f, err := os.Open(path + "-writers")
	if err != nil {
		return false
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return false
	}
	return errors.Is(err, syscall.EWOULDBLOCK)
}

// fileStamp is what the index file at path is, beyond its modification
// time: its status-change time (which utimes, touch -r, cp -p and
// rsync -a cannot set back), size, device and inode, as text; "" when
// it cannot be read. Close records it beside the index (PATH-writers),
// and an index whose stamp differs is checked when opened, so that a
// damaged copy given the clean file's time is not trusted.
func fileStamp(path string) string {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return ""
	}
	sec, nsec := statCtime(&st)
	return fmt.Sprintf("linkscan-index-stamp %d.%09d %d %d %d\n", sec, nsec, st.Size, st.Dev, st.Ino)
}

// processAlive reports whether process pid of this host exists (one
// that another user runs too).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
