package references

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// DefaultMemoryBudget is the memory a Spill store holds by default
// before it moves to a temporary SQLite file.
const DefaultMemoryBudget = 256 << 20

// Spill is a Store for one-shot runs in bounded memory: it keeps the
// index in a Memory store until that holds more than a budget, then
// copies it into an SQLite database in a temporary directory and goes on
// there; the directory is removed by Close. Lookups give the same
// answers before and after the move.
type Spill struct {
	mu     sync.RWMutex // guards the move; the stores guard themselves
	budget int64
	dir    string
	notice func(string)
	mem    *Memory
	db     *SQLite
	tmp    string
}

// NewSpill returns an empty Spill store. budget is in bytes (0 or less:
// DefaultMemoryBudget); the temporary database goes into a new directory
// under dir ("" for os.TempDir()); notice, if not nil, is told when the
// index moves.
func NewSpill(budget int64, dir string, notice func(string)) *Spill {
	if budget <= 0 {
		budget = DefaultMemoryBudget
	}
	return &Spill{budget: budget, dir: dir, notice: notice, mem: NewMemory()}
}

// store is where the index is now.
func (s *Spill) store() Store {
	s.mu.RLock() // lookups from many goroutines do not wait for each other
	defer s.mu.RUnlock()
	if s.db != nil {
		return s.db
	}
	return s.mem
}

// Spilled reports whether the index has moved to a temporary file.
func (s *Spill) Spilled() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.db != nil
}

// check moves the index when the memory store is over the budget.
func (s *Spill) check() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db != nil || s.mem.Size() <= s.budget {
		return nil
	}
	tmp, err := os.MkdirTemp(s.dir, "linkscan-index-*")
	if err != nil {
		return fmt.Errorf("references: index over the memory budget, and no temporary directory for it: %w", err)
	}
	db, err := OpenSQLite(filepath.Join(tmp, "index.db"))
	if err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if err := s.mem.copyTo(db); err != nil {
		db.Close()
		os.RemoveAll(tmp)
		return fmt.Errorf("references: moving the index to %s: %w", tmp, err)
	}
	if s.notice != nil {
		budget := fmt.Sprintf("%d MiB", s.budget>>20)
		if s.budget < 1<<20 {
			budget = fmt.Sprintf("%d B", s.budget)
		}
		s.notice(fmt.Sprintf("references: the index outgrew its memory budget (%s): moved to a temporary file in %s", budget, tmp))
	}
	s.db, s.tmp, s.mem = db, tmp, nil
	return nil
}

// Unchanged implements Store.
func (s *Spill) Unchanged(file string, size int64, mtime time.Time) (bool, error) {
	return s.store().Unchanged(file, size, mtime)
}

// BeginFile implements Store.
func (s *Spill) BeginFile(file string, size int64, mtime time.Time) error {
	if err := s.store().BeginFile(file, size, mtime); err != nil {
		return err
	}
	return s.check()
}

// File implements Store.
func (s *Spill) File(file string) (FileState, bool, error) { return s.store().File(file) }

// Incomplete implements Store.
func (s *Spill) Incomplete() (int, error) { return s.store().Incomplete() }

// Prune implements Store.
func (s *Spill) Prune(dir string, keep func(string) bool) (int, error) {
	return s.store().Prune(dir, keep)
}

// EndFile implements Store.
func (s *Spill) EndFile(file string) error { return s.store().EndFile(file) }

// Add implements Store.
func (s *Spill) Add(e *Entry) error {
	if err := s.store().Add(e); err != nil {
		return err
	}
	return s.check()
}

// Commit implements Store.
func (s *Spill) Commit() error { return s.store().Commit() }

// Head implements Heads.
func (s *Spill) Head(repo string) (string, error) { return s.store().(Heads).Head(repo) }

// SetHead implements Heads.
func (s *Spill) SetHead(repo, head string) error { return s.store().(Heads).SetHead(repo, head) }

// Messages implements Store.
func (s *Spill) Messages(id string) ([]Location, error) { return s.store().Messages(id) }

// Parts implements Store.
func (s *Spill) Parts(id, cid string) ([]Location, error) {
	return s.store().Parts(id, cid)
}

// Article implements Store.
func (s *Spill) Article(groupNumber string) ([]Location, error) {
	return s.store().Article(groupNumber)
}

// HasGroup implements Store.
func (s *Spill) HasGroup(group string) (bool, error) { return s.store().HasGroup(group) }

// HasHost implements Store.
func (s *Spill) HasHost(host string) (bool, error) { return s.store().HasHost(host) }

// Stats implements Store.
func (s *Spill) Stats() (Stats, error) { return s.store().Stats() }

// Close closes the store and removes the temporary directory, if any.
func (s *Spill) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return nil
	}
	err := s.db.Close()
	if rerr := os.RemoveAll(s.tmp); err == nil {
		err = rerr
	}
	s.db = nil
	return err
}

// copyTo adds everything m holds to the database: files with their
// stamps and state, messages in the order added with their parts and
// articles, groups and hosts with the files that name them (so that the
// database forgets them with the files). Forgotten files are left out.
func (m *Memory) copyTo(db *SQLite) error {
	m.mu.RLock()
	var files []fileRec
	var paths []string
	for i := uint32(0); i < m.files.n; i++ {
		f := *m.files.at(i)
		if f.begun && !f.forgotten {
			files = append(files, f)
			paths = append(paths, string(m.strs.get(f.path)))
		}
	}
	groups, hosts := m.pairs(&m.groupPairs), m.pairs(&m.hostPairs)
	heads := maps.Clone(m.heads)
	m.mu.RUnlock()
	for repo, head := range heads {
		if err := db.SetHead(repo, head); err != nil {
			return err
		}
	}
	for i, f := range files {
		if err := db.BeginFile(paths[i], f.size, time.Unix(0, f.mtime)); err != nil {
			return err
		}
	}
	if err := m.each(db.Add); err != nil {
		return err
	}
	for i, f := range files {
		if f.done {
			if err := db.EndFile(paths[i]); err != nil {
				return err
			}
		}
	}
	// the file being indexed (the last begun and not ended) goes on in
	// the database
	db.cur = ""
	if n := len(files); n > 0 && !files[n-1].done {
		db.cur = paths[n-1]
	}
	for _, g := range groups {
		if err := db.exec(`INSERT INTO groups(name, file) VALUES (?, ?)`, g[1], g[0]); err != nil {
			return err
		}
	}
	for _, h := range hosts {
		if err := db.exec(`INSERT INTO hosts(name, file) VALUES (?, ?)`, h[1], h[0]); err != nil {
			return err
		}
	}
	return db.Commit()
}

// pairs returns the (file, name) pairs of files not forgotten. m.mu is
// held.
func (m *Memory) pairs(c *chunked[pairRec]) [][2]string {
	var out [][2]string
	for i := uint32(0); i < c.n; i++ {
		p := c.at(i)
		if f := m.files.at(p.file); !f.forgotten {
			out = append(out, [2]string{string(m.strs.get(f.path)), string(m.strs.get(p.name))})
		}
	}
	return out
}
