package references

import (
	"bytes"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/linkscan/linkscan/internal/corpus"
	"github.com/linkscan/linkscan/mailbox"
)

var (
	benchOnce sync.Once
	benchMbox []byte
)

func benchInput() []byte {
	benchOnce.Do(func() {
		var b bytes.Buffer
		corpus.Write(&b, 8<<20, 3)
		benchMbox = b.Bytes()
	})
	return benchMbox
}

func benchIndex(b *testing.B, newStore func(b *testing.B) Store) {
	in := benchInput()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		s := newStore(b)
		ix := &Indexer{Store: s, Open: func(string, *mailbox.Options) (*mailbox.Reader, error) {
			return mailbox.NewReader(bytes.NewReader(in), "bench.mbox", &mailbox.Options{SkipText: true})
		}}
		if _, err := ix.Add("-"); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}

// BenchmarkIndexMemory indexes an 8 MiB generated mbox in memory.
func BenchmarkIndexMemory(b *testing.B) {
	benchIndex(b, func(*testing.B) Store { return NewMemory() })
}

// BenchmarkIndexSQLite indexes the same into a new SQLite file.
func BenchmarkIndexSQLite(b *testing.B) {
	benchIndex(b, func(b *testing.B) Store {
		s, err := OpenSQLite(filepath.Join(b.TempDir(), "bench.db"))
		if err != nil {
			b.Fatal(err)
		}
		return s
	})
}

func benchResolve(b *testing.B, s Store) {
	ix := &Indexer{Store: s, Open: func(string, *mailbox.Options) (*mailbox.Reader, error) {
		return mailbox.NewReader(bytes.NewReader(benchInput()), "bench.mbox", nil)
	}}
	if _, err := ix.Add("-"); err != nil {
		b.Fatal(err)
	}
	st, _ := s.Stats()
	links := make([]string, 0, 1000)
	for i := range 1000 {
		// the generator's ids are <n.random@host>: half of these hit
		links = append(links, fmt.Sprintf("mid:%d.%d@info.cern.ch", i%st.Messages+1, i))
	}
	r := &Resolver{Store: s}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := r.Resolve(links[i%len(links)], nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkResolveMemory(b *testing.B) { benchResolve(b, NewMemory()) }

func BenchmarkResolveSQLite(b *testing.B) {
	s, err := OpenSQLite(filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	benchResolve(b, s)
}

var (
	bigOnce sync.Once
	bigMbox []byte
)

// BenchmarkMemoryBytesPerMessage measures what the in-memory index keeps
// per message: the live heap after indexing a generated mbox of 64 MiB
// (about 20,000 messages), less the live heap before, over the messages
// (the "bytes/msg" metric; "size-bytes/msg" is what Memory.Size
// accounts). The archive's bytes are not counted: they are read from
// memory and not kept.
func BenchmarkMemoryBytesPerMessage(b *testing.B) {
	bigOnce.Do(func() {
		var buf bytes.Buffer
		corpus.Write(&buf, 64<<20, 5)
		bigMbox = buf.Bytes()
	})
	in := bigMbox
	var sizePerMsg float64
	b.ReportAllocs()
	var perMsg float64
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		s := NewMemory()
		ix := &Indexer{Store: s, Open: func(string, *mailbox.Options) (*mailbox.Reader, error) {
			return mailbox.NewReader(bytes.NewReader(in), "bench.mbox", &mailbox.Options{SkipText: true})
		}}
		if _, err := ix.Add("-"); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		st, _ := s.Stats()
		perMsg = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(st.Messages)
		sizePerMsg = float64(s.Size()) / float64(st.Messages)
		runtime.KeepAlive(s)
	}
	b.ReportMetric(perMsg, "bytes/msg")
	b.ReportMetric(sizePerMsg, "size-bytes/msg")
}

// BenchmarkMemoryForget measures what forgetting one file costs the
// in-memory index (Prune, or BeginFile of a file read before): the hash
// tables are built again over the whole index. The index holds 200,000
// messages in 1,000 files, with groups and hosts; each round forgets one
// file and indexes it again.
func BenchmarkMemoryForget(b *testing.B) {
	const files, perFile = 1000, 200
	m := NewMemory()
	at := time.Unix(1, 0)
	fill := func(f int) {
		name := fmt.Sprintf("spool/f%d", f)
		if err := m.BeginFile(name, 1, at); err != nil {
			b.Fatal(err)
		}
		for i := range perFile {
			e := &Entry{ID: fmt.Sprintf("%d.%d@bench.example", f, i), Loc: Location{File: name, Offset: int64(i)},
				Groups: []string{fmt.Sprintf("g%d", f%50)}, Host: "news.example", Articles: []string{fmt.Sprintf("g%d:%d", f%50, i)}}
			if err := m.Add(e); err != nil {
				b.Fatal(err)
			}
		}
		m.EndFile(name)
	}
	for f := range files {
		fill(f)
	}
	b.ReportAllocs()
	f := 0
	for b.Loop() {
		fill(f % files) // begun again: what was indexed from it is forgotten
		f++
	}
	if st, _ := m.Stats(); st.Messages != files*perFile || st.Files != files {
		b.Fatalf("stats %+v", st)
	}
}
