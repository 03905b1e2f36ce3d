package writeback

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"
)

// ErrChanged is the error (wrapped) of a Commit that found the input
// file changed since it was copied in a way that cannot be taken over
// (shorter, or bytes already copied rewritten): the file is left as it
// was.
var ErrChanged = errors.New("the file changed while it was rewritten")

// ErrLocked is the error (wrapped) of a Commit that could not have the
// locks of the file within Options.LockWait: the file is left as it was.
var ErrLocked = errors.New("the file is locked by another program")

// DefaultLockWait is how long Commit waits for the locks of a file
// rewritten in place when Options.LockWait is 0.
const DefaultLockWait = 30 * time.Second

// DotlockStale is the age past which a FILE.lock is taken for one left
// by a program that died, and removed. One of ours whose process is gone
// (same host) is removed at once (staleDotlock).
const DotlockStale = 5 * time.Minute

// lock takes, for an in-place rewrite, the locks mail programs use on
// the file: a dotlock FILE.lock (for an mbox only: in a Maildir or MH
// folder it would be one more file among the messages) and flock and
// fcntl locks on the file itself (where the system has them). It returns
// the function releasing them.
func (f *File) lock() (unlock func(), err error) {
	wait := f.opts.LockWait
	if wait == 0 {
		wait = DefaultLockWait
	}
	deadline := time.Now().Add(wait)
	var undo []func()
	unlock = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	if f.mbox {
		u, err := dotlock(f.of.Name()+".lock", deadline)
		if err != nil {
			return nil, err
		}
		undo = append(undo, u)
	}
	u, err := fileLock(f.src, f.of.Name(), deadline)
	if err != nil {
		unlock()
		return nil, err
	}
	undo = append(undo, u)
	return unlock, nil
}

// dotlock makes the file name (FILE.lock) exclusively, as procmail and
// mutt do, retrying until deadline; one older than DotlockStale is
// removed. Where the directory does not let us make it (no write
// permission, a read-only file system), no dotlock is taken.
func dotlock(name string, deadline time.Time) (func(), error) {
	for {
		l, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			fmt.Fprintf(l, "%d\n%s\n", os.Getpid(), hostname())
			fi, _ := l.Stat()
			l.Close()
			return func() {
				// only our own lock file is removed
				if now, err := os.Lstat(name); err == nil && fi != nil && os.SameFile(now, fi) {
					os.Remove(name)
				}
			}, nil
		}
		if errors.Is(err, fs.ErrPermission) || isReadOnly(err) {
			return func() {}, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%w: %s: %v", ErrLocked, name, err)
		}
		if staleDotlock(name) {
			os.Remove(name)
			continue
		}
		if !time.Now().Before(deadline) {
			return nil, fmt.Errorf("%w: %s exists", ErrLocked, name)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// staleDotlock reports whether the dotlock name was left by a program
// that died: it is older than DotlockStale, or it is one of ours (our
// "PID\nHOST\n") made on this host by a process that is gone. Another
// program's lock, or one of another host's (a shared file system), is
// waited for. The file is looked at again after it is read, so that a
// lock made anew meanwhile under that name is not the one judged.
func staleDotlock(name string) bool {
	fi, err := os.Lstat(name)
	if err != nil {
		return false
	}
	if time.Since(fi.ModTime()) > DotlockStale {
		return true
	}
	b := make([]byte, 300)
	l, err := os.Open(name)
	if err != nil {
		return false
	}
	n, _ := io.ReadFull(l, b)
	l.Close()
	pid, host, ok := parseDotlock(b[:n])
	if !ok || host != hostname() || processAlive(pid) {
		return false
	}
	now, err := os.Lstat(name)
	return err == nil && os.SameFile(fi, now) && now.ModTime().Equal(fi.ModTime())
}

// parseDotlock reads a dotlock's "PID\nHOST\n", as dotlock writes it.
func parseDotlock(b []byte) (pid int, host string, ok bool) {
	p, rest, ok := strings.Cut(string(b), "\n")
	h, end, ok2 := strings.Cut(rest, "\n")
	if !ok || !ok2 || end != "" || h == "" {
		return 0, "", false
	}
	pid, err := strconv.Atoi(p)
	if err != nil || pid <= 0 {
		return 0, "", false
	}
	return pid, h, true
}

// hostname is this host's name for dotlocks, or "" when it has none.
func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return ""
	}
	return h
}

// catchUp makes the output take in what was appended to the input file
// since it was copied (an MDA delivering to an mbox appends whole
// messages), until the file stops growing, with the output synced so
// that the rename can follow at once. A file shorter than copied, or
// rewritten with its size unchanged, is ErrChanged.
func (f *File) catchUp() error {
	if err := f.w.Flush(); err != nil {
		return err
	}
	for i := 0; ; i++ {
		if err := f.of.File().Sync(); err != nil {
			return err
		}
		fi, err := f.src.Stat()
		if err != nil {
			return err
		}
		switch {
		case fi.Size() < f.pos:
			return fmt.Errorf("%w: %s is now shorter than copied (%d bytes, %d copied)", ErrChanged, f.path, fi.Size(), f.pos)
		case fi.Size() == f.pos:
			if f.pos == f.size0 && !fi.ModTime().Equal(f.mtime0) {
				return fmt.Errorf("%w: %s was modified after it was copied", ErrChanged, f.path)
			}
			return nil
		case i == 100:
			return fmt.Errorf("%w: %s did not stop growing", ErrChanged, f.path)
		}
		if _, err := f.src.Seek(f.pos, io.SeekStart); err != nil {
			return err
		}
		n, err := io.CopyN(f.w, f.src, fi.Size()-f.pos)
		f.pos += n
		if err != nil && err != io.EOF {
			return err
		}
		if err := f.w.Flush(); err != nil {
			return err
		}
	}
}

// stillThere checks that the file replaced is still the file read: a
// Maildir message renamed (its flags changed) or removed (expunged) by
// an IMAP server or mail reader meanwhile, or an mbox replaced by
// another program's rename, would otherwise come back under its old
// name beside its new one. Such a file is ErrChanged: our copy is
// dropped.
func (f *File) stillThere() error {
	now, err := os.Stat(f.of.Name())
	if err != nil {
		return fmt.Errorf("%w: %s was renamed or removed meanwhile: %v", ErrChanged, f.path, err)
	}
	read, err := f.src.Stat()
	if err != nil {
		return err
	}
	if !os.SameFile(now, read) {
		return fmt.Errorf("%w: %s was replaced by another file meanwhile", ErrChanged, f.path)
	}
	return nil
}
