package references

import (
	"strings"
	"sync"
	"time"
)

// Memory is a Store in memory, for one-shot runs. It is safe for
// concurrent use.
type Memory struct {
	mu       sync.RWMutex
	files    map[string]fileStamp
	messages map[string][]Location
	parts    map[[2]string][]Location
	articles map[string][]Location
	groups   map[string]bool
	hosts    map[string]bool
	count    int
	synth    int
}

type fileStamp struct {
	size  int64
	mtime int64
	done  bool
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{
		files:    map[string]fileStamp{},
		messages: map[string][]Location{},
		parts:    map[[2]string][]Location{},
		articles: map[string][]Location{},
		groups:   map[string]bool{},
		hosts:    map[string]bool{},
	}
}

func (m *Memory) Unchanged(file string, size int64, mtime time.Time) (bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	st, ok := m.files[file]
	return ok && st == fileStamp{size, mtime.UnixNano(), true}, nil
}

// BeginFile records the file. An in-memory index is built once per run,
// so a file seen again (the same path twice on the command line) is
// simply added again; its messages are then duplicates, as copies are.
func (m *Memory) BeginFile(file string, size int64, mtime time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files[file] = fileStamp{size, mtime.UnixNano(), false}
	return nil
}

// EndFile records the file as completely indexed.
func (m *Memory) EndFile(file string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if st, ok := m.files[file]; ok {
		st.done = true
		m.files[file] = st
	}
	return nil
}

func (m *Memory) Add(e *Entry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.count++
	if e.Host != "" {
		m.hosts[strings.ToLower(e.Host)] = true
	}
	if e.Synthetic {
		m.synth++
		return nil // links never resolve to a made-up id
	}
	loc := e.Loc
	loc.MessageID = e.ID
	m.messages[e.ID] = append(m.messages[e.ID], loc)
	for _, p := range e.Parts {
		pl := loc
		pl.Part = p.Path
		k := [2]string{e.ID, p.ContentID}
		m.parts[k] = append(m.parts[k], pl)
	}
	for _, g := range e.Groups {
		m.groups[g] = true
	}
	for _, a := range e.Articles {
		al := loc
		al.Group = a
		m.articles[a] = append(m.articles[a], al)
	}
	return nil
}

func (m *Memory) Commit() error { return nil }

func (m *Memory) Messages(id string) ([]Location, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.messages[id], nil
}

func (m *Memory) Parts(id, cid string) ([]Location, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.parts[[2]string{id, cid}], nil
}

func (m *Memory) Article(groupNumber string) ([]Location, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.articles[groupNumber], nil
}

func (m *Memory) HasGroup(group string) (bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.groups[group], nil
}

func (m *Memory) HasHost(host string) (bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.hosts[strings.ToLower(host)], nil
}

func (m *Memory) Stats() (Stats, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	inc := 0
	for _, f := range m.files {
		if !f.done {
			inc++
		}
	}
	return Stats{Files: len(m.files), Incomplete: inc, Messages: m.count, MessageIDs: len(m.messages), Synthetic: m.synth,
		ContentIDs: len(m.parts), Groups: len(m.groups), Articles: len(m.articles)}, nil
}

func (m *Memory) Close() error { return nil }
