package references

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/linkscan/linkscan/uri"
)

// A Resolver answers from files as they are. Before a location is
// given, its file is looked at once: a file gone since it was indexed
// gives no location, and neither does one whose size or modification
// time changed, unless Resolver.Refresh indexes it again first. A
// lookup whose every location was left out so has status Error, as has
// one that finds nothing in an index holding files not completely
// indexed: what the index does not hold may be in the archive.

// freshness is what a Resolver found of its target files.
type freshness struct {
	lookups sync.RWMutex // lookups hold it shared, a refresh alone
	mu      sync.Mutex   // guards files
	files   map[string]verdict

	incOnce sync.Once
	inc     bool // the store holds files not completely indexed

	uncertain atomic.Int64 // references given status Error without a failed lookup
}

// verdict is what was found of a target file.
type verdict uint8

const (
	fileOK      verdict = iota + 1 // as the index recorded it
	fileGone                       // no longer there
	fileStale                      // changed, not yet indexed again
	fileChanged                    // changed, and not indexed again
)

// maxVerdicts bounds the verdicts kept: past it they are looked for
// again.
const maxVerdicts = 1 << 16

// errLost says that every location a lookup found was left out.
var errLost = errors.New("references: every location is in a file gone or changed")

// staleError asks for file to be indexed again before the lookup is
// made again.
type staleError struct{ file string }

func (e *staleError) Error() string { return "references: " + e.file + " changed since it was indexed" }

// Uncertain returns the number of references given status Error though
// no lookup failed: found nothing in an incomplete index, or only
// locations in files gone or changed. A command counts them as input
// it could not read.
func (r *Resolver) Uncertain() int64 { return r.fresh.uncertain.Load() }

// resolveFresh is resolve on files as they are: a stale target file is
// indexed again (Refresh) and the lookup made again.
func (r *Resolver) resolveFresh(u *uri.URL, ctx *Context) (Resolution, error) {
	for range 8 {
		r.fresh.lookups.RLock()
		res, err := r.resolve(u, ctx)
		r.fresh.lookups.RUnlock()
		var stale *staleError
		switch {
		case errors.As(err, &stale):
			r.refresh(stale.file)
			continue
		case errors.Is(err, errLost):
			r.fresh.uncertain.Add(1)
			return Resolution{Status: Error}, nil
		}
		return res, err
	}
	r.fresh.uncertain.Add(1)
	return Resolution{Status: Error}, nil
}

// located leaves out of locs the locations in files gone or changed
// since they were indexed. It returns errLost when it left out all, and
// a *staleError for a changed file that Refresh may index again.
func (r *Resolver) located(locs []Location, err error) ([]Location, error) {
	if err != nil || len(locs) == 0 {
		return locs, err
	}
	var kept []Location
	for i, l := range locs {
		switch r.verdict(l.File) {
		case fileOK:
			if kept != nil {
				kept = append(kept, l)
			}
			continue
		case fileStale:
			return nil, &staleError{l.File}
		}
		if kept == nil {
			kept = append(make([]Location, 0, len(locs)), locs[:i]...)
		}
	}
	switch {
	case kept == nil:
		return locs, nil
	case len(kept) == 0:
		return nil, errLost
	}
	return kept, nil
}

// verdict returns what is known of the target file, looking at it the
// first time.
func (r *Resolver) verdict(file string) verdict {
	if !filepath.IsAbs(file) {
		return fileOK // standard input ("-"): nothing to look at
	}
	f := &r.fresh
	f.mu.Lock()
	v, ok := f.files[file]
	f.mu.Unlock()
	if ok {
		return v
	}
	v = r.look(file)
	if v == fileStale && r.Refresh == nil {
		v = fileChanged
	}
	f.mu.Lock()
	if old, ok := f.files[file]; ok {
		f.mu.Unlock()
		return old
	}
	r.setVerdict(file, v)
	f.mu.Unlock()
	switch v {
	case fileGone:
		r.notice("%s: indexed, and gone since: references into it get status error; index its archive again", r.show(file))
	case fileChanged:
		r.notice("%s: changed since it was indexed: references into it get status error; index it again", r.show(file))
	}
	return v
}

// setVerdict records v for file; f.mu is held.
func (r *Resolver) setVerdict(file string, v verdict) {
	f := &r.fresh
	if f.files == nil || len(f.files) >= maxVerdicts {
		f.files = map[string]verdict{}
	}
	f.files[file] = v
}

// look compares the file with what the index recorded of it. A file
// the index does not know, or that cannot be looked at for another
// reason than being gone, or that is no regular file (a FIFO indexed
// as it came), is taken as it is.
func (r *Resolver) look(file string) verdict {
	st, ok, err := r.Store.File(file)
	if err != nil || !ok {
		return fileOK
	}
	fi, err := os.Stat(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fileGone
	case err != nil || !fi.Mode().IsRegular():
		return fileOK
	case fi.Size() != st.Size || !fi.ModTime().Equal(st.ModTime):
		return fileStale
	}
	return fileOK
}

// refresh indexes the stale file again, alone: lookups wait for it.
func (r *Resolver) refresh(file string) {
	f := &r.fresh
	f.lookups.Lock()
	defer f.lookups.Unlock()
	f.mu.Lock()
	v := f.files[file]
	f.mu.Unlock()
	if v != fileStale {
		return // done meanwhile
	}
	err := r.Refresh(file)
	if err == nil {
		v = r.look(file)
	}
	switch {
	case err != nil:
		v = fileChanged
		r.notice("%s: changed since it was indexed, and cannot be indexed again (%v): references into it get status error", r.show(file), err)
	case v == fileOK:
		r.notice("%s: changed since it was indexed: indexed again", r.show(file))
	case v == fileGone:
		r.notice("%s: indexed, and gone since: references into it get status error; index its archive again", r.show(file))
	default:
		v = fileChanged
		r.notice("%s: changed while it was indexed again: references into it get status error; index it again", r.show(file))
	}
	f.mu.Lock()
	r.setVerdict(file, v)
	f.mu.Unlock()
}

// incomplete reports whether what the index does not hold may be in the
// archive: building it failed in this run (Incomplete), or it holds
// files or directory walks not completely indexed (a run killed).
func (r *Resolver) incomplete() bool {
	if r.Incomplete {
		return true
	}
	f := &r.fresh
	f.incOnce.Do(func() {
		n, err := r.Store.Incomplete()
		f.inc = err == nil && n > 0
		if f.inc {
			r.notice("the index holds %s not completely indexed (a run killed, failed or under way): references it does not hold get status error, not dangling", count(n, "file or directory", "files or directories"))
		}
	})
	return f.inc
}

func (r *Resolver) notice(format string, a ...any) {
	if r.Notice != nil {
		r.Notice(fmt.Sprintf(format, a...))
	}
}
