package references

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// Memory is a Store in memory, for one-shot runs. It is safe for
// concurrent use.
//
// It is compact: identifiers, names and paths are kept once each in an
// arena of large byte blocks, and messages, parts and articles are
// fixed-size records in chunked arrays, found through open-addressing
// hash tables of record numbers. A message of an mbox costs about 24
// bytes of record, its Message-ID's bytes, and a few bytes of table
// (docs/references.md gives the measured figure). Size reports what it
// holds, so that a caller can move to an SQLite index past a budget
// (Spill).
//
// It forgets as an SQLite index does: a file begun again (BeginFile) and
// the files Prune gives up lose their messages, parts, articles, groups
// and hosts. The records stay in their arrays, marked as of a forgotten
// file, and the hash tables are built again without them: a pass over
// the whole index, which the Indexer needs only for a file that is read
// twice in one run or a file gone from its directory.
//
// Limits: 4 GiB of identifier and name bytes and 2^32-1 messages, parts
// and articles; past them Add returns ErrMemoryFull.
type Memory struct {
	mu    sync.RWMutex
	seed  maphash.Seed
	strs  arena
	files chunked[fileRec]
	msgs  chunked[msgRec]
	parts chunked[partRec]
	arts  chunked[artRec]

	fileTab, msgTab, partTab, artTab table

	// the groups and hosts each file's messages name, a pair each, so
	// that a file forgotten takes its own with it
	groupPairs, hostPairs chunked[pairRec]
	groupTab, hostTab     table
	groups, hosts         map[string]named

	heads map[string]string // Heads

	mapBytes   int64 // keys of groups and hosts
	begun      int   // files given to BeginFile (and not forgotten)
	dirs       int   // of which directories (DirSize)
	incomplete int   // of which not ended
	dead       int   // messages of forgotten files
}

// ErrMemoryFull is returned by Memory.Add past its limits.
var ErrMemoryFull = errors.New("references: in-memory index full (4 GiB of identifiers or 2^32 entries); use an index file")

type fileRec struct {
	path        uint32 // arena reference
	done        bool   // EndFile was called
	begun       bool   // BeginFile was called (not only a message's file)
	used        bool   // a message was added to it
	forgotten   bool   // what was indexed from it is forgotten; a new record stands for the path
	size, mtime int64
}

// msgRec is one message. id is syntheticID for a message without a
// Message-ID (kept for Spill's copy, never found by Messages).
type msgRec struct {
	id, file, name uint32
	next           uint32 // the earlier message with the same id, +1; 0 none
	offset         int64
}

// syntheticID is never an arena reference: a string needs two bytes at
// least, and none starts at the last byte of a block.
const syntheticID = ^uint32(0)

// nameSuffix marks msgRec.name as the last (name &^ nameSuffix) bytes of
// the file's path, as Maildir and MH names are, rather than an arena
// reference.
const nameSuffix = 1 << 31

type partRec struct {
	msg, cid, path uint32
	next           uint32
}

type artRec struct {
	msg, key uint32
	next     uint32
}

// pairRec is a group or host named by the messages of a file; name is
// the arena reference of named.ref.
type pairRec struct {
	file, name uint32
}

// named is a group or host: its name in the arena, and the number of
// files whose messages name it (0: it is gone from the map).
type named struct {
	ref, files uint32
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	m := &Memory{seed: maphash.MakeSeed(), groups: map[string]named{}, hosts: map[string]named{}}
	m.strs.init()
	m.fileTab.key = func(r uint32) ([]byte, []byte) { return m.strs.get(m.files.at(r).path), nil }
	m.msgTab.key = func(r uint32) ([]byte, []byte) { return m.strs.get(m.msgs.at(r).id), nil }
	m.partTab.key = func(r uint32) ([]byte, []byte) {
		p := m.parts.at(r)
		return m.strs.get(m.msgs.at(p.msg).id), m.strs.get(p.cid)
	}
	m.artTab.key = func(r uint32) ([]byte, []byte) { return m.strs.get(m.arts.at(r).key), nil }
	pairKey := func(c *chunked[pairRec]) func(uint32) ([]byte, []byte) {
		return func(r uint32) ([]byte, []byte) {
			p := c.at(r)
			return m.strs.get(m.files.at(p.file).path), m.strs.get(p.name)
		}
	}
	m.groupTab.key, m.hostTab.key = pairKey(&m.groupPairs), pairKey(&m.hostPairs)
	for _, t := range []*table{&m.fileTab, &m.msgTab, &m.partTab, &m.artTab, &m.groupTab, &m.hostTab} {
		t.seed = m.seed
	}
	return m
}

// Unchanged implements Store.
func (m *Memory) Unchanged(file string, size int64, mtime time.Time) (bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	r := m.fileTab.lookup(file, "")
	if r == 0 {
		return false, nil
	}
	f := m.files.at(r - 1)
	return f.done && f.size == size && f.mtime == mtime.UnixNano(), nil
}

// File implements Store.
func (m *Memory) File(file string) (FileState, bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	r := m.fileTab.lookup(file, "")
	if r == 0 || !m.files.at(r-1).begun {
		return FileState{}, false, nil
	}
	f := m.files.at(r - 1)
	return FileState{Size: f.size, ModTime: time.Unix(0, f.mtime), Done: f.done}, true, nil
}

// Incomplete implements Store.
func (m *Memory) Incomplete() (int, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.incomplete, nil
}

// BeginFile implements Store: it forgets what was indexed from file (a
// file read again, as standard input given twice) and records the file.
func (m *Memory) BeginFile(file string, size int64, mtime time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := m.fileTab.lookup(file, ""); r != 0 && m.files.at(r-1).used {
		m.forget([]uint32{r - 1})
	}
	i, err := m.fileOf(file)
	if err != nil {
		return err
	}
	f := m.files.at(i)
	if !f.begun {
		m.begun++
		if size == DirSize {
			m.dirs++
		}
	}
	if f.done || !f.begun {
		m.incomplete++
	}
	f.size, f.mtime, f.done, f.begun = size, mtime.UnixNano(), false, true
	return nil
}

// EndFile records the file as completely indexed.
func (m *Memory) EndFile(file string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := m.fileTab.lookup(file, ""); r != 0 {
		if f := m.files.at(r - 1); f.begun && !f.done {
			f.done = true
			m.incomplete--
		}
	}
	return nil
}

// Prune implements Store: the files begun under dir that keep does not
// keep are forgotten, with their messages, parts, articles, groups and
// hosts.
func (m *Memory) Prune(dir string, keep func(string) bool) (int, error) {
	prefix := dirPrefix(dir)
	m.mu.Lock()
	defer m.mu.Unlock()
	var gone []uint32
	for i := uint32(0); i < m.files.n; i++ {
		f := m.files.at(i)
		if !f.begun || f.forgotten {
			continue
		}
		if p := m.strs.get(f.path); len(p) > len(prefix) && string(p[:len(prefix)]) == prefix && !keep(string(p)) {
			gone = append(gone, i)
		}
	}
	if len(gone) > 0 {
		m.forget(gone)
	}
	return len(gone), nil
}

// dirPrefix is the prefix of the paths of the files under dir.
func dirPrefix(dir string) string {
	return strings.TrimSuffix(filepath.Clean(dir), string(filepath.Separator)) + string(filepath.Separator)
}

// forget marks the file records as forgotten and builds the tables again
// without them and what was indexed from them: their messages, and the
// parts and articles of those, and the groups and hosts no other file
// names. m.mu is held.
func (m *Memory) forget(files []uint32) {
	for _, r := range files {
		f := m.files.at(r)
		if f.begun {
			m.begun--
			if f.size == DirSize {
				m.dirs--
			}
			if !f.done {
				m.incomplete--
			}
		}
		f.forgotten = true
	}
	m.fileTab.reset()
	for i := uint32(0); i < m.files.n; i++ {
		if !m.files.at(i).forgotten {
			m.fileTab.set(i)
		}
	}
	m.msgTab.reset()
	m.dead = 0
	for i := uint32(0); i < m.msgs.n; i++ {
		r := m.msgs.at(i)
		switch {
		case m.files.at(r.file).forgotten:
			m.dead++
		case r.id != syntheticID:
			r.next = m.msgTab.set(i)
		}
	}
	m.partTab.reset()
	for i := uint32(0); i < m.parts.n; i++ {
		if p := m.parts.at(i); !m.gone(p.msg) {
			p.next = m.partTab.set(i)
		}
	}
	m.artTab.reset()
	for i := uint32(0); i < m.arts.n; i++ {
		if a := m.arts.at(i); !m.gone(a.msg) {
			a.next = m.artTab.set(i)
		}
	}
	m.recount(&m.groupPairs, &m.groupTab, m.groups)
	m.recount(&m.hostPairs, &m.hostTab, m.hosts)
}

// gone reports whether message record i is of a forgotten file.
func (m *Memory) gone(i uint32) bool { return m.files.at(m.msgs.at(i).file).forgotten }

// recount builds the table of pairs again from those of files not
// forgotten, counts the files naming each name, and removes the names
// no file names any more.
func (m *Memory) recount(pairs *chunked[pairRec], tab *table, names map[string]named) {
	tab.reset()
	for k, n := range names {
		n.files = 0
		names[k] = n
	}
	for i := uint32(0); i < pairs.n; i++ {
		p := pairs.at(i)
		if m.files.at(p.file).forgotten {
			continue
		}
		tab.set(i)
		k := m.strs.get(p.name)
		n := names[string(k)]
		n.files++
		names[string(k)] = n
	}
	for k, n := range names {
		if n.files == 0 {
			delete(names, k)
			m.mapBytes -= int64(len(k)) + mapEntryBytes
		}
	}
}

// name records that the messages of file (record f) name a group or a
// host, once per file.
func (m *Memory) name(pairs *chunked[pairRec], tab *table, names map[string]named, f uint32, file, name string) error {
	if tab.lookup(file, name) != 0 {
		return nil
	}
	n, ok := names[name]
	if !ok {
		ref, err := m.strs.add(name)
		if err != nil {
			return err
		}
		n.ref = ref
	}
	i, err := pairs.add(pairRec{file: f, name: n.ref})
	if err != nil {
		return err
	}
	tab.set(i)
	if !ok {
		m.mapBytes += int64(len(name)) + mapEntryBytes
	}
	n.files++
	names[name] = n
	return nil
}

// fileOf returns the record number of file, adding it if needed.
func (m *Memory) fileOf(file string) (uint32, error) {
	if r := m.fileTab.lookup(file, ""); r != 0 {
		return r - 1, nil
	}
	ref, err := m.strs.add(file)
	if err != nil {
		return 0, err
	}
	i, err := m.files.add(fileRec{path: ref})
	if err != nil {
		return 0, err
	}
	m.fileTab.set(i)
	return i, nil
}

// Add implements Store.
func (m *Memory) Add(e *Entry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	file, err := m.fileOf(e.Loc.File)
	if err != nil {
		return err
	}
	m.files.at(file).used = true
	if e.Host != "" {
		if err := m.name(&m.hostPairs, &m.hostTab, m.hosts, file, e.Loc.File, strings.ToLower(e.Host)); err != nil {
			return err
		}
	}
	// a message without a Message-ID is an article of its groups too
	for _, g := range e.Groups {
		if err := m.name(&m.groupPairs, &m.groupTab, m.groups, file, e.Loc.File, g); err != nil {
			return err
		}
	}
	rec := msgRec{file: file, offset: e.Loc.Offset}
	if n := storedName(e.Loc); n != "" {
		if strings.HasSuffix(e.Loc.File, n) && len(n) < nameSuffix {
			rec.name = nameSuffix | uint32(len(n))
		} else if rec.name, err = m.strs.add(n); err != nil {
			return err
		}
	}
	rec.id = syntheticID
	if !e.Synthetic {
		if rec.id, err = m.strs.add(e.ID); err != nil {
			return err
		}
	}
	mi, err := m.msgs.add(rec)
	if err != nil {
		return err
	}
	if e.Synthetic {
		return nil // links never resolve to a made-up id
	}
	m.msgs.at(mi).next = m.msgTab.set(mi)
	for _, p := range e.Parts {
		pr := partRec{msg: mi}
		if pr.cid, err = m.strs.add(p.ContentID); err != nil {
			return err
		}
		if pr.path, err = m.strs.add(p.Path); err != nil {
			return err
		}
		pi, err := m.parts.add(pr)
		if err != nil {
			return err
		}
		m.parts.at(pi).next = m.partTab.set(pi)
	}
	for _, a := range e.Articles {
		ar := artRec{msg: mi}
		if ar.key, err = m.strs.add(a); err != nil {
			return err
		}
		ai, err := m.arts.add(ar)
		if err != nil {
			return err
		}
		m.arts.at(ai).next = m.artTab.set(ai)
	}
	return nil
}

// Commit implements Store.
func (m *Memory) Commit() error { return nil }

// Head implements Heads.
func (m *Memory) Head(repo string) (string, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.heads[repo], nil
}

// SetHead implements Heads.
func (m *Memory) SetHead(repo, head string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.heads == nil {
		m.heads = map[string]string{}
	}
	m.heads[repo] = head
	return nil
}

// loc makes the Location of message record i.
func (m *Memory) loc(i uint32, id string) Location {
	r := m.msgs.at(i)
	file := m.strs.get(m.files.at(r.file).path)
	l := Location{File: string(file), Offset: r.offset, MessageID: id}
	switch {
	case r.name&nameSuffix != 0:
		l.Name = l.File[len(l.File)-int(r.name&^nameSuffix):]
	case r.name != 0:
		l.Name, l.Blob = loadName(string(m.strs.get(r.name)))
	}
	return l
}

// reverse puts locations collected newest first in the order they were
// added.
func reverse(l []Location) []Location {
	for i, j := 0, len(l)-1; i < j; i, j = i+1, j-1 {
		l[i], l[j] = l[j], l[i]
	}
	return l
}

// Messages implements Store.
func (m *Memory) Messages(id string) ([]Location, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []Location
	for r := m.msgTab.lookup(id, ""); r != 0; r = m.msgs.at(r - 1).next {
		out = append(out, m.loc(r-1, id))
	}
	return reverse(out), nil
}

// Parts implements Store.
func (m *Memory) Parts(id, cid string) ([]Location, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []Location
	for r := m.partTab.lookup(id, cid); r != 0; r = m.parts.at(r - 1).next {
		p := m.parts.at(r - 1)
		l := m.loc(p.msg, id)
		l.Part = string(m.strs.get(p.path))
		out = append(out, l)
	}
	return reverse(out), nil
}

// Article implements Store.
func (m *Memory) Article(groupNumber string) ([]Location, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []Location
	for r := m.artTab.lookup(groupNumber, ""); r != 0; r = m.arts.at(r - 1).next {
		a := m.arts.at(r - 1)
		l := m.loc(a.msg, string(m.strs.get(m.msgs.at(a.msg).id)))
		l.Group = groupNumber
		out = append(out, l)
	}
	return reverse(out), nil
}

// HasGroup implements Store.
func (m *Memory) HasGroup(group string) (bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	_, ok := m.groups[group]
	return ok, nil
}

// HasHost implements Store.
func (m *Memory) HasHost(host string) (bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	_, ok := m.hosts[strings.ToLower(host)]
	return ok, nil
}

// Stats implements Store.
func (m *Memory) Stats() (Stats, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	live := int(m.msgs.n) - m.dead
	return Stats{Files: m.begun - m.dirs, Incomplete: m.incomplete, Messages: live, MessageIDs: m.msgTab.n,
		Synthetic: live - m.msgTab.count, ContentIDs: m.partTab.n, Groups: len(m.groups), Articles: m.artTab.n}, nil
}

// Size is about the bytes the store holds: the arena's blocks, the
// record arrays (those of forgotten files included), the hash tables and
// the group and host sets.
func (m *Memory) Size() int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.size()
}

func (m *Memory) size() int64 {
	return m.strs.bytes + m.files.bytes() + m.msgs.bytes() + m.parts.bytes() + m.arts.bytes() +
		m.groupPairs.bytes() + m.hostPairs.bytes() +
		m.fileTab.bytes() + m.msgTab.bytes() + m.partTab.bytes() + m.artTab.bytes() +
		m.groupTab.bytes() + m.hostTab.bytes() + m.mapBytes
}

// Close implements Store.
func (m *Memory) Close() error { return nil }

// each calls fn for every message not forgotten in the order added, with
// its entry (parts and articles; groups and hosts are not kept per
// message). It stops at the first error.
func (m *Memory) each(fn func(e *Entry) error) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var pi, ai uint32
	for i := uint32(0); i < m.msgs.n; i++ {
		r := m.msgs.at(i)
		e := &Entry{}
		e.Loc = m.loc(i, "")
		if r.id == syntheticID {
			e.Synthetic = true
			e.ID = fmt.Sprintf("synthetic:%s:%d", e.Loc.File, e.Loc.Offset)
		} else {
			e.ID = string(m.strs.get(r.id))
		}
		for ; pi < m.parts.n && m.parts.at(pi).msg == i; pi++ {
			p := m.parts.at(pi)
			e.Parts = append(e.Parts, PartEntry{ContentID: string(m.strs.get(p.cid)), Path: string(m.strs.get(p.path))})
		}
		for ; ai < m.arts.n && m.arts.at(ai).msg == i; ai++ {
			e.Articles = append(e.Articles, string(m.strs.get(m.arts.at(ai).key)))
		}
		if m.files.at(r.file).forgotten {
			continue
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// mapEntryBytes is about what a map[string]bool entry costs besides the
// key's bytes.
const mapEntryBytes = 40

// arena keeps strings as a length (uvarint) and bytes in blocks of
// arenaBlock bytes; a reference is the block number << arenaShift | the
// offset. Reference 0 is the empty string.
type arena struct {
	blocks [][]byte
	bytes  int64
}

const (
	arenaShift = 20
	arenaBlock = 1 << arenaShift
	maxBlocks  = 1 << (32 - arenaShift)
)

func (a *arena) init() {
	a.blocks = [][]byte{make([]byte, 1, 4096)} // reference 0: length 0
	a.bytes = 4096
}

func (a *arena) add(s string) (uint32, error) {
	if s == "" {
		return 0, nil
	}
	need := binary.MaxVarintLen64 + len(s)
	b := &a.blocks[len(a.blocks)-1]
	if len(*b)+need > cap(*b) || len(*b) >= arenaBlock {
		switch {
		case cap(*b) < arenaBlock && len(*b)+need <= arenaBlock && len(a.blocks) == 1:
			// the first block grows up to a full block, so that a small
			// index stays small
			nb := make([]byte, len(*b), min(arenaBlock, max(2*cap(*b), len(*b)+need)))
			copy(nb, *b)
			a.bytes += int64(cap(nb) - cap(*b))
			*b = nb
		default:
			if len(a.blocks) >= maxBlocks {
				return 0, ErrMemoryFull
			}
			a.blocks = append(a.blocks, make([]byte, 0, max(arenaBlock, need)))
			b = &a.blocks[len(a.blocks)-1]
			a.bytes += int64(cap(*b))
		}
	}
	ref := uint32(len(a.blocks)-1)<<arenaShift | uint32(len(*b))
	*b = binary.AppendUvarint(*b, uint64(len(s)))
	*b = append(*b, s...)
	return ref, nil
}

func (a *arena) get(ref uint32) []byte {
	b := a.blocks[ref>>arenaShift][ref&(arenaBlock-1):]
	n, k := binary.Uvarint(b)
	return b[k : k+int(n)]
}

// chunked is an array in chunks of chunkLen records, so that growing it
// never copies it nor leaves half of it unused.
type chunked[T any] struct {
	chunks [][]T
	n      uint32
}

const chunkLen = 1024

func (c *chunked[T]) add(v T) (uint32, error) {
	if c.n == ^uint32(0) {
		return 0, ErrMemoryFull
	}
	if c.n%chunkLen == 0 {
		c.chunks = append(c.chunks, make([]T, 0, chunkLen))
	}
	last := &c.chunks[len(c.chunks)-1]
	*last = append(*last, v)
	c.n++
	return c.n - 1, nil
}

func (c *chunked[T]) at(i uint32) *T { return &c.chunks[i/chunkLen][i%chunkLen] }

func (c *chunked[T]) bytes() int64 {
	var v T
	return int64(len(c.chunks))*chunkLen*int64(unsafe.Sizeof(v)) + int64(cap(c.chunks))*24
}

// table maps keys to record numbers by open addressing with linear
// probing: slots hold a record number + 1, 0 when empty. The key of a
// record (one or two strings) is read from the records themselves.
type table struct {
	seed  maphash.Seed
	slots []uint32
	n     int // keys held
	count int // records set through it (n plus those chained)
	key   func(rec uint32) (a, b []byte)
}

func (t *table) hashString(a, b string) uint64 {
	var h maphash.Hash
	h.SetSeed(t.seed)
	h.WriteString(a)
	h.WriteByte(0)
	h.WriteString(b)
	return h.Sum64()
}

func (t *table) hashBytes(a, b []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(t.seed)
	h.Write(a)
	h.WriteByte(0)
	h.Write(b)
	return h.Sum64()
}

// lookup returns the record + 1 of key (a, b), or 0.
func (t *table) lookup(a, b string) uint32 {
	if len(t.slots) == 0 {
		return 0
	}
	mask := uint64(len(t.slots) - 1)
	for i := t.hashString(a, b) & mask; ; i = (i + 1) & mask {
		r := t.slots[i]
		if r == 0 {
			return 0
		}
		ka, kb := t.key(r - 1)
		if string(ka) == a && string(kb) == b {
			return r
		}
	}
}

// set makes rec the record of its key and returns the record + 1 that
// was there, or 0 for a new key.
func (t *table) set(rec uint32) uint32 {
	if (t.n+1)*4 > len(t.slots)*3 {
		t.grow()
	}
	t.count++
	a, b := t.key(rec)
	mask := uint64(len(t.slots) - 1)
	for i := t.hashBytes(a, b) & mask; ; i = (i + 1) & mask {
		r := t.slots[i]
		if r == 0 {
			t.slots[i] = rec + 1
			t.n++
			return 0
		}
		if ka, kb := t.key(r - 1); string(ka) == string(a) && string(kb) == string(b) {
			t.slots[i] = rec + 1
			return r
		}
	}
}

func (t *table) grow() {
	old := t.slots
	t.slots = make([]uint32, max(64, 2*len(old)))
	mask := uint64(len(t.slots) - 1)
	for _, r := range old {
		if r == 0 {
			continue
		}
		a, b := t.key(r - 1)
		i := t.hashBytes(a, b) & mask
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = r
	}
}

func (t *table) bytes() int64 { return int64(len(t.slots)) * 4 }

// reset empties the table, keeping its slots for the keys set again.
func (t *table) reset() {
	clear(t.slots)
	t.n, t.count = 0, 0
}
