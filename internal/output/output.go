// Package output writes a command's output file so that no data is lost:
// a file named with -o is never truncated before the command has
// finished, never left cut by a failure or a kill, and never one of the
// command's own inputs.
//
// Create makes a temporary file in the directory of the target; the
// command writes to it, then calls Commit, which flushes it to disk
// (fsync), closes it and renames it over the target, so that the target
// holds either its old content or the whole new one. Abort removes the
// temporary file and leaves the target as it was. Keep renames the
// finished output to another name (the command uses NAME.partial when
// some input could not be read), again leaving the target as it was.
//
// A process killed while writing leaves its temporary file behind under
// the name .NAME.tmp-RANDOM in the target's directory (a kill cannot be
// caught); the target itself is untouched.
//
// Targets that are not regular files (/dev/null, /dev/stdout, a FIFO, a
// terminal) cannot be replaced by a rename and are written in place.
// A target that is a symbolic link is followed: the file it points to is
// replaced and the link stays.
package output

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// ErrInterrupted is what Commit and Keep return after Interrupt: the
// temporary file is gone and the target was left as it was.
var ErrInterrupted = errors.New("output: interrupted; the file is left as it was")

// File is an output file being written. Its methods are not safe for
// concurrent use, but for Interrupt, which a signal handler may call while
// another goroutine writes, commits or keeps the file.
type File struct {
	mu          sync.Mutex // held by finish, Abort and Interrupt
	interrupted bool
	target      string    // the file to replace, symbolic links resolved
	f           *os.File  // the temporary file, or the target when direct
	direct      bool      // the target is not a regular file: written in place
	done        bool      // committed, kept or aborted
	w           io.Writer // f, or a failing writer in tests
	err         error     // the first write error
}

// Create starts writing the output file name. The target is not touched
// until Commit.
func Create(name string) (*File, error) {
	target := name
	fi, err := os.Stat(name)
	switch {
	case err == nil && !fi.Mode().IsRegular():
		if fi.IsDir() {
			return nil, fmt.Errorf("output: %s is a directory", name)
		}
		f, err := os.OpenFile(name, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		return &File{target: name, f: f, w: f, direct: true}, nil
	case err == nil:
		// an existing file, perhaps through symbolic links: the rename
		// replaces the file, not the link
		if t, err := filepath.EvalSymlinks(name); err == nil {
			target = t
		}
	case errors.Is(err, fs.ErrNotExist):
		// a dangling symbolic link is written through, as os.Create does
		if t, err := resolveDangling(name); err == nil {
			target = t
		}
	default:
		return nil, err
	}
	f, err := createTemp(target)
	if err != nil {
		return nil, err
	}
	if fi != nil {
		// the new file takes the mode of the one it replaces
		if err := f.Chmod(fi.Mode().Perm()); err != nil {
			f.Close()
			os.Remove(f.Name())
			return nil, err
		}
	}
	return &File{target: target, f: f, w: f}, nil
}

// resolveDangling follows the symbolic links of name whose last target
// does not exist yet.
func resolveDangling(name string) (string, error) {
	for range 40 {
		l, err := os.Readlink(name)
		if err != nil {
			return name, nil // not a link (any more): name is the file
		}
		if !filepath.IsAbs(l) {
			l = filepath.Join(filepath.Dir(name), l)
		}
		name = l
	}
	return "", errors.New("output: too many symbolic links")
}

// createTemp creates a new file next to target, with the permissions a
// new file gets (0666 less the umask), as os.Create would give target.
func createTemp(target string) (*os.File, error) {
	dir, base := filepath.Split(target)
	for range 100 {
		var r [6]byte
		rand.Read(r[:])
		name := filepath.Join(dir, "."+base+".tmp-"+hex.EncodeToString(r[:]))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, fmt.Errorf("output: cannot create a temporary file next to %s", target)
}

// Write writes to the output. After a failed write, Commit and Keep fail
// too.
func (o *File) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(p)
	if err != nil {
		o.err = err
	}
	return n, err
}

// Name is the file that Commit replaces (symbolic links resolved).
func (o *File) Name() string { return o.target }

// TempName is the file written until Commit; the target itself when it
// is not a regular file.
func (o *File) TempName() string { return o.f.Name() }

// File is the open file written to, to tell whether it is a terminal.
func (o *File) File() *os.File { return o.f }

// Commit makes the output the content of the target: the temporary file
// is synced to disk, closed and renamed over the target. On an error the
// temporary file is removed and the target left as it was.
func (o *File) Commit() error { return o.finish(o.target) }

// Keep renames the finished output to name instead of the target (which
// stays as it was), with the same care as Commit. For a target that is
// not a regular file it is Commit: what was written is written.
func (o *File) Keep(name string) error {
	if o.direct {
		return o.finish(o.target)
	}
	return o.finish(name)
}

func (o *File) finish(name string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.interrupted {
		return ErrInterrupted
	}
	if o.done {
		return errors.New("output: already finished")
	}
	o.done = true
	if o.direct {
		err := o.f.Close()
		if o.err != nil {
			err = o.err
		}
		return err
	}
	err := o.err
	if err == nil {
		err = o.f.Sync()
	}
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(o.f.Name(), name)
	}
	if err != nil {
		os.Remove(o.f.Name())
		return err
	}
	// make the rename itself durable; a directory that cannot be synced
	// (some file systems refuse) does not undo it
	if d, err := os.Open(filepath.Dir(name)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Abort removes the temporary file; the target stays as it was. Abort
// after Commit or Keep does nothing, so it can be deferred.
func (o *File) Abort() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done {
		return nil
	}
	o.done = true
	err := o.f.Close()
	if !o.direct {
		if rerr := os.Remove(o.f.Name()); err == nil {
			err = rerr
		}
	}
	return err
}

// Interrupt removes the temporary file for a process about to end on a
// signal, and makes a Commit or Keep that has not begun return
// ErrInterrupted, so that the target stays as it was and no rename of a
// removed file is attempted; one under way finishes first, and the output
// is then complete. It reports whether the target was left as it was. It
// may be called while another goroutine uses the file; writes still under
// way go to the removed file and are lost, as they should be. A target
// written in place (not a regular file) keeps what was written.
func (o *File) Interrupt() (untouched bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done {
		return false
	}
	o.interrupted, o.done = true, true
	if o.direct {
		return false // written in place: what was written is there
	}
	os.Remove(o.f.Name())
	return true
}

// CheckInputs returns an error if the output file out is one of inputs
// (the same file, also through symbolic or hard links) or lies inside an
// input that is a directory, where the reader would take it for a
// message. Inputs that do not exist are not compared; "-" (standard input)
// is skipped.
func CheckInputs(out string, inputs []string) error {
	ofi, err := os.Stat(out)
	if err == nil && !ofi.Mode().IsRegular() {
		return nil // /dev/null and the like are written in place, never read
	}
	odir, derr := filepath.EvalSymlinks(filepath.Dir(out))
	for _, in := range inputs {
		if in == "-" {
			continue
		}
		ifi, err := os.Stat(in)
		if err != nil {
			continue
		}
		if ofi != nil && os.SameFile(ofi, ifi) {
			return fmt.Errorf("output: %s is the input %s", out, in)
		}
		if ifi.IsDir() && derr == nil {
			if d, err := filepath.EvalSymlinks(in); err == nil && within(odir, d) {
				return fmt.Errorf("output: %s is inside the input directory %s", out, in)
			}
		}
	}
	return nil
}

// within reports whether path is dir or below it (both cleaned,
// without symbolic links).
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
