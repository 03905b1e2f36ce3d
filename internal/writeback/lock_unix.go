//go:build unix

package writeback

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// fileLock takes an exclusive flock lock on src and an fcntl write lock
// on the file name (opened for writing for it; skipped when it cannot
// be), retrying until deadline.
func fileLock(src *os.File, name string, deadline time.Time) (func(), error) {
	fd := int(src.Fd())
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			break // no flock here (some network file systems): go on without
		}
		if !time.Now().Before(deadline) {
			return nil, fmt.Errorf("%w: %s (flock)", ErrLocked, name)
		}
		time.Sleep(100 * time.Millisecond)
	}
	unflock := func() { syscall.Flock(fd, syscall.LOCK_UN) }
	w, err := os.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		return unflock, nil // read-only for us: no fcntl lock
	}
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0}
	for {
		err := syscall.FcntlFlock(w.Fd(), syscall.F_SETLK, &lk)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EAGAIN) && !errors.Is(err, syscall.EACCES) && !errors.Is(err, syscall.EINTR) {
			break
		}
		if !time.Now().Before(deadline) {
			w.Close()
			unflock()
			return nil, fmt.Errorf("%w: %s (fcntl)", ErrLocked, name)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return func() {
		w.Close() // releases the fcntl lock
		unflock()
	}, nil
}

func isReadOnly(err error) bool { return errors.Is(err, syscall.EROFS) }

// processAlive reports whether the process pid exists (signal 0; one of
// another user's, EPERM, exists too).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
