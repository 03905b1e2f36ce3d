package output

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// StaleAge is how long a temporary file of Create's (.NAME.tmp-RANDOM)
// must be untouched, and held locked by no process, to be taken for one a
// killed run left behind. A run holds its own temporary file locked
// (flock) from just after it is made until it is renamed or removed; the
// age covers that first instant and the last, between its close and its
// rename.
const StaleAge = time.Minute

// cleaned holds the directories whose stale temporary files this process
// has removed already: each is listed once, however many files are
// written in it (a Maildir's cur/ rewritten in place).
var cleaned sync.Map

// removeStale removes, once per directory and process, the temporary
// files that killed runs left in dir (a kill cannot be caught, so the run
// itself could not): names .NAME.tmp- and 12 hex digits, regular files,
// untouched for StaleAge and locked by no process. It returns the names
// removed. Where the system has no flock, nothing is removed.
func removeStale(dir string) []string {
	if _, done := cleaned.LoadOrStore(dir, true); done || !canLock {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer d.Close()
	var removed []string
	for {
		ents, err := d.ReadDir(1024)
		for _, e := range ents {
			if !isTempName(e.Name()) || !e.Type().IsRegular() {
				continue
			}
			p := filepath.Join(dir, e.Name())
			if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > StaleAge && removeUnlocked(p) {
				removed = append(removed, p)
			}
		}
		if err != nil {
			return removed
		}
	}
}

// isTempName reports whether name is one createTemp makes.
func isTempName(name string) bool {
	i := strings.LastIndex(name, ".tmp-")
	if !strings.HasPrefix(name, ".") || i < 1 || len(name)-i != len(".tmp-")+12 {
		return false
	}
	for _, c := range name[i+len(".tmp-"):] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// removeUnlocked removes the file p if no process holds it locked: its
// writer is gone.
func removeUnlocked(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	if !lockTemp(f) {
		return false
	}
	held, err := f.Stat()
	if err != nil {
		return false
	}
	if now, err := os.Lstat(p); err != nil || !os.SameFile(held, now) {
		return false // renamed into place, or replaced, meanwhile
	}
	return os.Remove(p) == nil
}
