package references

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// model is the plain map-based index the compact Memory store must agree
// with.
type model struct {
	messages map[string][]Location
	parts    map[[2]string][]Location
	articles map[string][]Location
	groups   map[string]bool
	hosts    map[string]bool
	count    int
}

func newModel() *model {
	return &model{messages: map[string][]Location{}, parts: map[[2]string][]Location{}, articles: map[string][]Location{},
		groups: map[string]bool{}, hosts: map[string]bool{}}
}

func (m *model) add(e *Entry) {
	m.count++
	if e.Host != "" {
		m.hosts[strings.ToLower(e.Host)] = true
	}
	for _, g := range e.Groups { // a message without a Message-ID is an article of its groups too
		m.groups[g] = true
	}
	if e.Synthetic {
		return
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
	for _, a := range e.Articles {
		al := loc
		al.Group = a
		m.articles[a] = append(m.articles[a], al)
	}
}

// randomEntries makes n entries from r: ids drawn from a small set (so
// that copies chain), Maildir-like names (a suffix of the path) and
// others, parts, articles, groups, hosts, some identifiers long enough
// to need their own arena block.
func randomEntries(r *rand.Rand, n int) []*Entry {
	var out []*Entry
	files := []string{"a.mbox", "dir/cur/1.host:2,S", "spool/comp/lang/go/7", ""}
	for i := range n {
		e := &Entry{ID: fmt.Sprintf("id%d@x", r.IntN(n/2+1)), Loc: Location{File: files[r.IntN(len(files))], Offset: r.Int64N(1 << 40)}}
		switch r.IntN(10) {
		case 0:
			e.Synthetic = true
			e.ID = fmt.Sprintf("synthetic:%s:%d", e.Loc.File, e.Loc.Offset)
		case 1:
			e.ID = strings.Repeat("long", 1+r.IntN(500)) + "@x" // up to 2 KB
			if r.IntN(100) == 0 {
				e.ID = strings.Repeat("huge", 300_000) // 1.2 MB: a block of its own
			}
		case 2:
			e.ID = "" // an empty id is a key like any other
		}
		switch r.IntN(3) {
		case 0:
			if f := e.Loc.File; f != "" {
				e.Loc.Name = f[r.IntN(len(f)):]
			}
		case 1:
			e.Loc.Name = fmt.Sprintf("comp.lang.go:%d", i)
		}
		for j := range r.IntN(3) {
			e.Parts = append(e.Parts, PartEntry{ContentID: fmt.Sprintf("c%d@x", r.IntN(4)), Path: fmt.Sprint(j + 1)})
		}
		for range r.IntN(3) {
			e.Articles = append(e.Articles, fmt.Sprintf("g%d:%d", r.IntN(3), r.IntN(n)))
		}
		for range r.IntN(2) {
			e.Groups = append(e.Groups, fmt.Sprintf("g%d", r.IntN(5)))
		}
		if r.IntN(4) == 0 {
			e.Host = fmt.Sprintf("News%d.Example", r.IntN(3))
		}
		out = append(out, e)
	}
	return out
}

// diff describes how two location lists differ, briefly.
func diff(got, want []Location) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("%d locations, want %d; [%d] is %+v, want %+v", len(got), len(want), i, got[i], want[i])
		}
	}
	return fmt.Sprintf("%d locations, want %d", len(got), len(want))
}

// compare checks every lookup of st against the model.
func compare(t *testing.T, st Store, m *model, entries []*Entry) {
	t.Helper()
	keys := map[string]bool{"absent@x": true}
	for _, e := range entries {
		keys[e.ID] = true
	}
	for id := range keys {
		got, _ := st.Messages(id)
		if want := m.messages[id]; !slices.Equal(got, want) {
			t.Fatalf("Messages(%.40q): %s", id, diff(got, want))
		}
		for c := range 5 {
			cid := fmt.Sprintf("c%d@x", c)
			got, _ := st.Parts(id, cid)
			if want := m.parts[[2]string{id, cid}]; !slices.Equal(got, want) {
				t.Fatalf("Parts(%.40q, %s): %s", id, cid, diff(got, want))
			}
		}
	}
	for _, e := range entries {
		for _, a := range append(e.Articles, "g9:0") {
			got, _ := st.Article(a)
			if want := m.articles[a]; !slices.Equal(got, want) {
				t.Fatalf("Article(%s): %s", a, diff(got, want))
			}
		}
	}
	for g := range 6 {
		got, _ := st.HasGroup(fmt.Sprintf("g%d", g))
		if want := m.groups[fmt.Sprintf("g%d", g)]; got != want {
			t.Fatalf("HasGroup(g%d): %v", g, got)
		}
		got, _ = st.HasHost(fmt.Sprintf("NEWS%d.example", g))
		if want := m.hosts[fmt.Sprintf("news%d.example", g)]; got != want {
			t.Fatalf("HasHost(news%d): %v", g, got)
		}
	}
	s, _ := st.Stats()
	synth := 0
	for _, e := range entries {
		if e.Synthetic {
			synth++
		}
	}
	if s.Messages != m.count || s.Synthetic != synth || s.MessageIDs != len(m.messages) || s.ContentIDs != len(m.parts) ||
		s.Articles != len(m.articles) || s.Groups != len(m.groups) {
		t.Fatalf("stats %+v; model %d messages, %d synthetic, %d ids, %d cids, %d articles, %d groups",
			s, m.count, synth, len(m.messages), len(m.parts), len(m.articles), len(m.groups))
	}
}

// TestMemoryModel adds random entries to the compact store, and to a
// spilling one, and compares every lookup with the plain model, before
// and after the tables grow.
func TestMemoryModel(t *testing.T) {
	for _, n := range []int{1, 10, 100, 3000} {
		r := rand.New(rand.NewPCG(uint64(n), 1))
		entries := randomEntries(r, n)
		m := newModel()
		mem := NewMemory()
		sp := NewSpill(int64(n)*100, t.TempDir(), nil)
		for _, e := range entries {
			m.add(e)
			if err := mem.Add(e); err != nil {
				t.Fatal(err)
			}
			if err := sp.Add(e); err != nil {
				t.Fatal(err)
			}
		}
		compare(t, mem, m, entries)
		compare(t, sp, m, entries)
		sp.Close()
	}
}

// FuzzMemoryStore drives the compact store from fuzzed seeds and sizes.
func FuzzMemoryStore(f *testing.F) {
	f.Add(uint64(1), uint16(50))
	f.Add(uint64(7), uint16(700))
	f.Fuzz(func(t *testing.T, seed uint64, n uint16) {
		r := rand.New(rand.NewPCG(seed, 2))
		entries := randomEntries(r, int(n%1500)+1)
		m := newModel()
		mem := NewMemory()
		for _, e := range entries {
			m.add(e)
			if err := mem.Add(e); err != nil {
				t.Fatal(err)
			}
		}
		compare(t, mem, m, entries)
	})
}

// TestMemoryFiles: file stamps, completion and re-beginning.
func TestMemoryFiles(t *testing.T) {
	m := NewMemory()
	at := time.Unix(1000, 5)
	m.Add(&Entry{ID: "x@y", Loc: Location{File: "no-begin.mbox"}}) // a file no BeginFile named: not counted
	m.BeginFile("a", 10, at)
	if same, _ := m.Unchanged("a", 10, at); same {
		t.Error("a begun file is unchanged")
	}
	m.EndFile("a")
	if same, _ := m.Unchanged("a", 10, at); !same {
		t.Error("an ended file is not unchanged")
	}
	if same, _ := m.Unchanged("a", 11, at); same {
		t.Error("a file of another size is unchanged")
	}
	m.BeginFile("a", 11, at)
	st, _ := m.Stats()
	if st.Files != 1 || st.Incomplete != 1 {
		t.Errorf("stats %+v", st)
	}
	m.EndFile("a")
	m.EndFile("a")
	m.EndFile("never")
	if st, _ := m.Stats(); st.Files != 1 || st.Incomplete != 0 {
		t.Errorf("stats %+v", st)
	}
}
