// Package output writes a command's output file so that no data is lost:
// a file named with -o is never truncated before the command has
// finished, never left cut by a failure or a kill, and never one of the
// command's own inputs.
//
// Create makes a temporary file in the directory of the target; the
// command writes to it, then calls Commit, which flushes it to disk
// (fsync), closes it and renames it over the target, so that the target
// holds either its old content or the whole new one. The new file keeps
// the permissions of the one it replaces, and its owner and group where
// the process may (KeepOwner). Abort removes the temporary file and
// leaves the target as it was. KeepNew puts the finished output under
// another name (the command uses NAME.partial when some input could not
// be read), again leaving the target as it was, and never replaces an
// existing file there: it takes NAME.partial-1, -2, ... instead and says
// which.
//
// A process killed while writing leaves its temporary file behind under
// the name .NAME.tmp-RANDOM in the target's directory (a kill cannot be
// caught); the target itself is untouched. The next Create in that
// directory removes it (removeStale): a temporary file is held locked
// (flock) by its run, so one that no process holds and that is older than
// StaleAge is a dead run's.
//
// Targets that are not regular files (/dev/null, a FIFO, a terminal)
// cannot be replaced by a rename and are written in place. A FIFO is
// opened without waiting for ever for its reader: one that no process
// opens for reading within FIFOWait is an error (ErrNoReader). So is a name
// that leads to an open descriptor rather than a file's name
// (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N, /proc/PID/fd/N):
// even when it reaches a regular file (a shell's "> log" or ">> log"),
// that file is the shell's and is written through the descriptor, never
// replaced. A target that is a symbolic link to a file's name is
// followed: the file it points to is replaced and the link stays.
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
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
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
	existed     bool      // the target existed when Create began
	done        bool      // committed, kept or aborted
	w           io.Writer // f, or a failing writer in tests
	err         error     // the first write error
}

// Create starts writing the output file name. The target is not touched
// until Commit.
//
// A name that leads, through symbolic links, to an open descriptor (a
// /proc/PID/fd/N or /dev/fd/N entry: /dev/stdout, /dev/stderr, a shell's
// process substitution) names no file to replace: what the descriptor
// reaches (a file a shell redirected to, with >> or >) is written in
// place, never renamed over. One of this process's own descriptors is
// written through that very descriptor (a new one sharing its offset),
// exactly as without -o; another process's is opened for appending.
func Create(name string) (*File, error) {
	if fd, ok := procFD(name); ok {
		return createFD(name, fd)
	}
	target := name
	fi, err := os.Stat(name)
	switch {
	case err == nil && !fi.Mode().IsRegular():
		if fi.IsDir() {
			return nil, fmt.Errorf("output: %s is a directory", name)
		}
		f, err := OpenNoWait(name, os.O_WRONLY, 0, time.Now().Add(FIFOWait))
		if err != nil {
			return nil, err
		}
		return &File{target: name, f: f, w: f, direct: true, existed: true}, nil
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
		// the new file takes the mode of the one it replaces, and its
		// owner and group where the process may
		if err := f.Chmod(fi.Mode().Perm()); err != nil {
			f.Close()
			os.Remove(f.Name())
			return nil, err
		}
		KeepOwner(f, fi)
	}
	return &File{target: target, f: f, w: f, existed: fi != nil}, nil
}

// createFD starts writing in place the descriptor name leads to: fd, one
// of this process's, or (fd -1) another process's.
func createFD(name string, fd int) (*File, error) {
	var f *os.File
	var err error
	if fd >= 0 {
		f, err = dupFD(fd, name)
	} else {
		// appending: what the file holds is never written over
		f, err = os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	}
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		f.Close()
		return nil, fmt.Errorf("output: %s is a directory", name)
	}
	return &File{target: name, f: f, w: f, direct: true, existed: true}, nil
}

// procFD reports whether name leads, through symbolic links, to an entry
// of a process's descriptor directory (/proc/PID/fd, /proc/PID/task/TID/fd,
// /dev/fd where it is one), or anywhere else on a proc file system, rather
// than to a file's name; fd is the descriptor when it is one of this
// process's, else -1.
func procFD(name string) (fd int, ok bool) {
	p, err := filepath.Abs(name)
	if err != nil {
		return -1, false
	}
	for range 40 {
		dir, base := filepath.Split(p)
		if base == "" {
			return -1, false // "dir/": a directory, refused later
		}
		if dir == "" {
			dir = "."
		}
		rdir, err := filepath.EvalSymlinks(dir)
		if err != nil {
			return -1, false
		}
		if rdir == "/dev/fd" || onProc(rdir) {
			if n, err := strconv.Atoi(base); err == nil && n >= 0 && ownFDDir(rdir) {
				return n, true
			}
			return -1, true
		}
		l, err := os.Readlink(filepath.Join(rdir, base))
		if err != nil {
			return -1, false // not a symbolic link: a file's name
		}
		if !filepath.IsAbs(l) {
			l = filepath.Join(rdir, l)
		}
		p = l
	}
	return -1, false // a loop: os.Stat says so later
}

// ownFDDir reports whether dir (symbolic links resolved) is this
// process's descriptor directory: /dev/fd (not a link to /proc), or
// /proc/PID/fd or /proc/PID/task/TID/fd (the threads of a process share
// its descriptors).
func ownFDDir(dir string) bool {
	if dir == "/dev/fd" {
		return true
	}
	if filepath.Base(dir) != "fd" {
		return false
	}
	d := filepath.Dir(dir)
	if filepath.Base(filepath.Dir(d)) == "task" {
		d = filepath.Dir(filepath.Dir(d))
	}
	return filepath.Base(d) == strconv.Itoa(os.Getpid())
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
		if err == nil {
			lockTemp(f) // held until closed: the run is alive (removeStale)
			removeStale(filepath.Clean(dir))
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

// Name is the file that Commit replaces (symbolic links resolved); for
// a target written in place, the name given to Create.
func (o *File) Name() string { return o.target }

// TempName is the file written until Commit; the target itself (Name)
// when it is written in place: not a regular file, or a descriptor.
func (o *File) TempName() string { return o.f.Name() }

// File is the open file written to, to tell whether it is a terminal.
func (o *File) File() *os.File { return o.f }

// Commit makes the output the content of the target: the temporary file
// is synced to disk, closed and renamed over the target. On an error the
// temporary file is removed and the target left as it was.
func (o *File) Commit() error { return o.finish(o.target) }

// Keep renames the finished output to name instead of the target (which
// stays as it was), with the same care as Commit: a file name is
// replaced, as the target is by Commit (writeback puts a Maildir message
// under its new name so). For a target that is not a regular file it is
// Commit: what was written is written. A command keeping its output
// aside under a name that is not its own (NAME.partial) uses KeepNew.
func (o *File) Keep(name string) error {
	return o.finish(name)
}

// KeepNew is Keep, but it never replaces an existing file (any file,
// a symbolic link too): when name exists, the output is kept under the
// first of name-1, name-2, ... that does not. It returns the name the
// output is kept under (the target, for a target written in place). The
// command keeps the output of a run that could not read all its input
// this way, in NAME.partial: an older NAME.partial may be another run's
// output, a file of the user's, or an input.
func (o *File) KeepNew(name string) (string, error) {
	if o.direct {
		return o.target, o.finish(o.target)
	}
	return o.keepNew(name)
}

// Existed reports whether the target existed when Create began: when
// it did not, a target "left as it was" was never made.
func (o *File) Existed() bool { return o.existed }

func (o *File) finish(name string) error {
	if o.direct {
		name = o.target
	}
	_, err := o.commit(func(tmp string) (string, error) { return name, os.Rename(tmp, name) })
	return err
}

// keepNew finishes the output under name, or when name is taken under
// the first free one of name-1, name-2, ...; never replacing a file.
func (o *File) keepNew(name string) (string, error) {
	return o.commit(func(tmp string) (string, error) {
		for i := 0; i < 10000; i++ {
			n := name
			if i > 0 {
				n = name + "-" + strconv.Itoa(i)
			}
			if err := renameNew(tmp, n); !errors.Is(err, fs.ErrExist) {
				return n, err
			}
		}
		return name, existsError(name)
	})
}

// linkFile is os.Link, replaced in tests by one that fails.
var linkFile = os.Link

// existsError says that KeepNew found its name and 9999 more taken.
type existsError string

func (e existsError) Error() string {
	return "output: " + string(e) + " and " + string(e) + "-1 to -9999 exist already: none is replaced, and the output is not kept"
}

func (e existsError) Unwrap() error { return fs.ErrExist }

// renameNew renames tmp to name unless name exists (then an error
// wrapping fs.ErrExist): a hard link made then tmp removed, which fails
// on an existing name at once; where the file system has no hard links,
// a rename after a look for name (which a file made in between would
// lose to).
func renameNew(tmp, name string) error {
	err := linkFile(tmp, name)
	if err == nil {
		return os.Remove(tmp)
	}
	if errors.Is(err, fs.ErrExist) {
		return err
	}
	if _, lerr := os.Lstat(name); lerr == nil {
		return &os.LinkError{Op: "rename", Old: tmp, New: name, Err: fs.ErrExist}
	} else if !errors.Is(lerr, fs.ErrNotExist) {
		return lerr
	}
	return os.Rename(tmp, name)
}

// commit flushes and closes the output; for a temporary file, put
// calls it into place and returns the name it now has. On an error the
// temporary file is removed.
func (o *File) commit(put func(tmp string) (string, error)) (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.interrupted {
		return "", ErrInterrupted
	}
	if o.done {
		return "", errors.New("output: already finished")
	}
	o.done = true
	if o.direct {
		err := o.f.Close()
		if o.err != nil {
			err = o.err
		}
		return o.target, err
	}
	err := o.err
	if err == nil {
		err = o.f.Sync()
	}
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	name := ""
	if err == nil {
		name, err = put(o.f.Name())
	}
	if err != nil {
		os.Remove(o.f.Name())
		return name, err
	}
	// make the rename itself durable; a directory that cannot be synced
	// (some file systems refuse) does not undo it
	if d, err := os.Open(filepath.Dir(name)); err == nil {
		d.Sync()
		d.Close()
	}
	return name, nil
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
	odir := absResolved(filepath.Dir(out))
	in, inside := findInput(ofi, odir, inputs)
	switch {
	case in == "":
		return nil
	case inside:
		return fmt.Errorf("output: %s is inside the input directory %s", out, in)
	}
	return fmt.Errorf("output: %s is the input %s", out, in)
}

// findInput returns the first of inputs that is the file ofi (nil: none
// yet), or the directory that holds the file's directory odir ("":
// unknown), and whether it holds it. Inputs that do not exist and "-"
// are passed over.
func findInput(ofi fs.FileInfo, odir string, inputs []string) (in string, inside bool) {
	for _, in := range inputs {
		if in == "-" {
			continue
		}
		ifi, err := os.Stat(in)
		if err != nil {
			continue
		}
		if ofi != nil && os.SameFile(ofi, ifi) {
			return in, false
		}
		if ifi.IsDir() && odir != "" {
			if d := absResolved(in); d != "" && within(odir, d) {
				return in, true
			}
		}
	}
	return "", false
}

// absResolved returns the absolute path of the existing file name with
// its symbolic links resolved, or "" when it cannot be found.
func absResolved(name string) string {
	p, err := filepath.EvalSymlinks(name)
	if err == nil {
		p, err = filepath.Abs(p)
	}
	if err != nil {
		return ""
	}
	return p
}

// InputIsOutput returns the input that the open file out is, or "" when
// there is none: out is standard output, which a shell opened on a file
// (> FILE, >> FILE), and a command reading that file would read what it
// writes, growing it without end. An input is out when it is the same
// file (also through symbolic or hard links, or as "-", standard input
// open on it), or when out is a file inside an input directory: under
// it, or a hard or symbolic link to it there. An out that is not a
// regular file (a terminal, a pipe, /dev/null) is never an input.
//
// Nothing is read: a directory input is walked for names only, and only
// its symbolic links are followed. Its regular files are compared one by
// one only when the file out has other names (hard links) or where its
// own name cannot be known (systems without /proc).
func InputIsOutput(out, stdin *os.File, inputs []string) string {
	ofi, err := out.Stat()
	if err != nil || !ofi.Mode().IsRegular() {
		return ""
	}
	if stdin != nil && slices.Contains(inputs, "-") {
		if ifi, err := stdin.Stat(); err == nil && os.SameFile(ofi, ifi) {
			return "-"
		}
	}
	odir := ""
	if p := fdPath(out, ofi); p != "" {
		odir = filepath.Dir(p)
	}
	if in, _ := findInput(ofi, odir, inputs); in != "" {
		return in
	}
	everyFile := odir == "" || links(ofi) != 1
	for _, in := range inputs {
		if fi, err := os.Stat(in); in != "-" && err == nil && fi.IsDir() && walkFinds(in, ofi, everyFile) {
			return in
		}
	}
	return ""
}

// walkFinds reports whether the file ofi is found under the directory
// dir through a symbolic link, or (everyFile) as one of its files. The
// entries are taken as the system lists them, unsorted, and only
// symbolic links are looked at one by one (and, everyFile, the files).
// What cannot be read is passed over: the reader reports it.
func walkFinds(dir string, ofi fs.FileInfo, everyFile bool) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	for {
		ents, err := f.ReadDir(1024)
		for _, d := range ents {
			var fi fs.FileInfo
			var ferr error
			switch t := d.Type(); {
			case t.IsDir():
				if walkFinds(filepath.Join(dir, d.Name()), ofi, everyFile) {
					return true
				}
				continue
			case t&fs.ModeSymlink != 0:
				fi, ferr = os.Stat(filepath.Join(dir, d.Name()))
			case t.IsRegular() && everyFile:
				fi, ferr = d.Info()
			default:
				continue
			}
			if ferr == nil && os.SameFile(fi, ofi) {
				return true
			}
		}
		if err != nil {
			return false
		}
	}
}

// fdPath returns the name of the open file f (fi) where the system
// tells it (/proc/self/fd/N), or "" when it does not, or when that name
// is no longer the file's.
func fdPath(f *os.File, fi fs.FileInfo) string {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil || !filepath.IsAbs(p) {
		return ""
	}
	if now, err := os.Stat(p); err != nil || !os.SameFile(now, fi) {
		return ""
	}
	if d := absResolved(filepath.Dir(p)); d != "" {
		return filepath.Join(d, filepath.Base(p))
	}
	return ""
}

// CheckPartial returns an error if partial, where a command keeps its
// output when some input could not be read (NAME.partial for -o NAME),
// is one of inputs (the same file, also through symbolic or hard
// links), as CheckInputs does for the output itself. (KeepNew would not
// replace it; the check refuses the run before anything is read rather
// than keep the output under another name.)
func CheckPartial(partial string, inputs []string) error {
	pfi, err := os.Stat(partial)
	if err != nil || !pfi.Mode().IsRegular() {
		return nil
	}
	for _, in := range inputs {
		if in == "-" {
			continue
		}
		if ifi, err := os.Stat(in); err == nil && os.SameFile(pfi, ifi) {
			return fmt.Errorf("output: %s, where the output is kept when some input cannot be read, is the input %s", partial, in)
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
