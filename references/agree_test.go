package references

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkscan/linkscan/internal/testutil"
)

// storeOp is one call on a Store: BeginFile, Add, EndFile, Prune or
// Commit; "spill" moves a Spill store to its SQLite file now (other
// stores ignore it).
type storeOp struct {
	do    string
	file  string
	keep  []string // Prune: the files kept
	entry *Entry   // Add
	size  int64    // BeginFile
}

func begin(f string, size int64) storeOp { return storeOp{do: "begin", file: f, size: size} }
func end(f string) storeOp               { return storeOp{do: "end", file: f} }
func prune(dir string, keep ...string) storeOp {
	return storeOp{do: "prune", file: dir, keep: keep}
}
func add(file, id string, groups []string, host string, articles ...string) storeOp {
	e := &Entry{ID: id, Loc: Location{File: file, Offset: int64(len(id))}, Groups: groups, Host: host, Articles: articles,
		Parts: []PartEntry{{ContentID: "c@" + id, Path: "2"}}}
	if strings.HasPrefix(id, "synthetic:") {
		e.Synthetic = true
	}
	return storeOp{do: "add", entry: e}
}

var stamp = time.Unix(1_000_000, 0)

// apply runs ops on s and returns what Prune returned, in order.
func apply(t *testing.T, s Store, ops []storeOp) []int {
	t.Helper()
	var pruned []int
	for _, o := range ops {
		var err error
		switch o.do {
		case "begin":
			err = s.BeginFile(o.file, o.size, stamp)
		case "end":
			err = s.EndFile(o.file)
		case "add":
			err = s.Add(o.entry)
		case "commit":
			err = s.Commit()
		case "prune":
			var n int
			n, err = s.Prune(o.file, func(f string) bool { return slices.Contains(o.keep, f) })
			pruned = append(pruned, n)
		case "spill":
			if sp, ok := s.(*Spill); ok {
				sp.budget = 1
				err = sp.check()
			}
		}
		if err != nil {
			t.Fatalf("%T: %s %s: %v", s, o.do, o.file, err)
		}
	}
	return pruned
}

// observe asks s everything the operations could have told it and
// writes the answers down, one a line.
func observe(t *testing.T, s Store, ops []storeOp) string {
	t.Helper()
	var b strings.Builder
	ids, groups, hosts, arts, files := map[string]bool{"absent@x": true}, map[string]bool{"absent": true}, map[string]bool{"absent.example": true}, map[string]bool{"absent:1": true}, map[string]bool{"absent": true}
	for _, o := range ops {
		files[o.file] = true
		if e := o.entry; e != nil {
			ids[e.ID] = true
			files[e.Loc.File] = true
			for _, g := range e.Groups {
				groups[g] = true
			}
			for _, a := range e.Articles {
				arts[a] = true
			}
			hosts[e.Host] = true
		}
	}
	// say writes down one answer
	say := func(question string, answer any, err error) {
		if err != nil {
			t.Fatalf("%T: %s: %v", s, question, err)
		}
		fmt.Fprintf(&b, "%s %v\n", question, answer)
	}
	for _, id := range sorted(ids) {
		l, err := s.Messages(id)
		say("Messages("+id+")", l, err)
		l, err = s.Parts(id, "c@"+id)
		say("Parts("+id+")", l, err)
	}
	for _, a := range sorted(arts) {
		l, err := s.Article(a)
		say("Article("+a+")", l, err)
	}
	for _, g := range sorted(groups) {
		ok, err := s.HasGroup(g)
		say("HasGroup("+g+")", ok, err)
	}
	for _, h := range sorted(hosts) {
		ok, err := s.HasHost(h)
		say("HasHost("+h+")", ok, err)
	}
	for _, f := range sorted(files) {
		for _, size := range []int64{1, 2} {
			ok, err := s.Unchanged(f, size, stamp)
			say(fmt.Sprintf("Unchanged(%s, %d)", f, size), ok, err)
		}
		fs, ok, err := s.File(f)
		say("File("+f+")", fmt.Sprintf("%d %d %v %v", fs.Size, fs.ModTime.UnixNano(), fs.Done, ok), err)
	}
	n, err := s.Incomplete()
	say("Incomplete", n, err)
	st, err := s.Stats()
	say("Stats", fmt.Sprintf("%+v", st), err)
	return b.String()
}

func sorted(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// agreeing returns the stores that must agree: memory, an SQLite file,
// and a Spill store that has moved to its file.
func agreeing(t *testing.T) map[string]Store {
	db, err := OpenSQLite(filepath.Join(t.TempDir(), "i.db"))
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]Store{"memory": NewMemory(), "sqlite": db, "spill": NewSpill(1<<30, t.TempDir(), nil),
		"spilled": NewSpill(1, t.TempDir(), nil)}
	t.Cleanup(func() {
		for _, s := range all {
			s.Close()
		}
	})
	return all
}

// agree runs ops on every store and fails where one answers otherwise
// than SQLite, the index kept between runs.
func agree(t *testing.T, ops []storeOp) {
	t.Helper()
	all := agreeing(t)
	want := apply(t, all["sqlite"], ops)
	wantSeen := observe(t, all["sqlite"], ops)
	for _, name := range []string{"memory", "spill", "spilled"} {
		got := apply(t, all[name], ops)
		if !slices.Equal(got, want) {
			t.Errorf("%s: Prune returned %v, SQLite %v", name, got, want)
		}
		if seen := observe(t, all[name], ops); seen != wantSeen {
			t.Errorf("%s answers otherwise than SQLite (-SQLite +%[1]s):\n%s", name, testutil.LineDiff(wantSeen, seen))
		}
	}
}

// TestStoresAgree runs the same calls against the memory store, an
// SQLite file and a Spill store (before and after its move) and asks
// them the same questions: a pruned file takes its messages, parts,
// articles, groups and hosts with it; a file begun again forgets what
// was indexed from it; a message without a Message-ID still posts to
// its groups.
func TestStoresAgree(t *testing.T) {
	const (
		a, b, c = "dir/a", "dir/b", "other/c"
		sib     = "dir-x/d" // its path shares the string prefix "dir"
	)
	for _, tt := range []struct {
		name string
		ops  []storeOp
	}{
		{"prune", []storeOp{
			begin(a, 1), add(a, "a1@x", []string{"g1", "g2"}, "H1.example", "g1:1"), end(a),
			begin(b, 1), add(b, "b1@x", []string{"g2", "g3"}, "h2.example", "g3:7"), add(b, "b2@x", []string{"g3"}, "h3.example"), end(b),
			begin(c, 1), add(c, "c1@x", []string{"g1"}, "h1.example"), end(c),
			begin(sib, 1), add(sib, "d1@x", []string{"g4"}, "h4.example"), end(sib),
			prune("dir", a),
		}},
		{"prune spelled with a slash, nothing gone", []storeOp{
			begin(a, 1), add(a, "a1@x", []string{"g1"}, ""), end(a),
			prune("dir/", a), prune("dir", a, b),
		}},
		{"prune all, an incomplete file among them", []storeOp{
			begin(a, 1), add(a, "a1@x", []string{"g1"}, "h1.example"), end(a),
			begin(b, 1), add(b, "b1@x", []string{"g2"}, "h2.example"),
			prune("dir"),
		}},
		{"prune, then the file again", []storeOp{
			begin(a, 1), add(a, "a1@x", []string{"g1"}, "h1.example"), end(a),
			begin(b, 1), add(b, "b1@x", []string{"g2"}, "h2.example"), end(b),
			prune("dir", a),
			begin(b, 2), add(b, "b2@x", []string{"g5"}, ""), end(b),
		}},
		{"begun again", []storeOp{
			begin(a, 1), add(a, "a1@x", []string{"g1"}, "h1.example", "g1:1"), add(a, "copy@x", nil, ""), end(a),
			begin(c, 1), add(c, "copy@x", []string{"g2"}, ""), end(c),
			begin(a, 2), add(a, "a2@x", []string{"g2"}, "h2.example"),
		}},
		{"begun again with nothing added", []storeOp{
			begin(a, 1), begin(a, 2), end(a), begin(a, 2), end(a),
		}},
		{"without a Message-ID", []storeOp{
			begin(c, 1), add(c, "synthetic:other/c:0", []string{"g6"}, "h6.example", "g6:1"), end(c),
		}},
		{"messages of a file never begun", []storeOp{
			add(a, "a1@x", []string{"g1"}, "h1.example"),
			begin(b, 1), add(b, "b1@x", []string{"g2"}, ""), end(b),
			prune("dir"),
			begin(a, 1), add(a, "a2@x", nil, ""), end(a),
		}},
		{"moved after a prune and a new beginning", []storeOp{
			begin(a, 1), add(a, "a1@x", []string{"g1"}, "h1.example"), end(a),
			begin(b, 1), add(b, "b1@x", []string{"g2"}, "h2.example"), end(b),
			begin(c, 1), add(c, "c1@x", []string{"g3"}, "h3.example"), end(c),
			prune("dir", a), begin(c, 2), add(c, "c2@x", []string{"g4"}, ""),
			{do: "spill"},
			end(c), prune("other"),
			begin(b, 1), add(b, "b3@x", []string{"g2"}, "h2.example"), end(b),
		}},
	} {
		t.Run(tt.name, func(t *testing.T) { agree(t, tt.ops) })
	}
}

// TestStoresAgreeRandom: random sequences of the calls the Indexer
// makes, over files in two directories, on every store.
func TestStoresAgreeRandom(t *testing.T) {
	files := []string{"d1/a", "d1/b", "d1/sub/c", "d2/a", "d2/b", "d1x/a"}
	dirs := []string{"d1", "d2", "d1/sub", "d1x"}
	for seed := range uint64(12) {
		r := rand.New(rand.NewPCG(seed, 3))
		var ops []storeOp
		for i := range 80 {
			f := files[r.IntN(len(files))]
			switch k := r.IntN(20); {
			case k < 3:
				ops = append(ops, begin(f, 1+r.Int64N(2)))
			case k < 5:
				ops = append(ops, end(f))
			case k < 6:
				var keep []string
				for _, f := range files {
					if r.IntN(2) == 0 {
						keep = append(keep, f)
					}
				}
				ops = append(ops, prune(dirs[r.IntN(len(dirs))], keep...))
			case k < 7:
				ops = append(ops, storeOp{do: "commit"})
			case k < 8 && seed%2 == 1:
				ops = append(ops, storeOp{do: "spill"})
			default:
				id := fmt.Sprintf("m%d@x", r.IntN(20))
				if r.IntN(8) == 0 {
					id = fmt.Sprintf("synthetic:%s:%d", f, i)
				}
				var groups []string
				for range r.IntN(3) {
					groups = append(groups, fmt.Sprintf("g%d", r.IntN(6)))
				}
				host := ""
				if r.IntN(3) == 0 {
					host = fmt.Sprintf("h%d.example", r.IntN(4))
				}
				var arts []string
				if r.IntN(3) == 0 {
					arts = append(arts, fmt.Sprintf("g%d:%d", r.IntN(6), r.IntN(5)))
				}
				ops = append(ops, add(f, id, groups, host, arts...))
			}
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) { agree(t, ops) })
	}
}

// TestEmptyFileMadeMeanwhile: a run that finds the index file empty while
// another run is making the index in it (two index runs started
// together) says nothing of an empty file: the other made the index, and
// it is used as it is. The run that made it says so.
func TestEmptyFileMadeMeanwhile(t *testing.T) {
	db := filepath.Join(t.TempDir(), "new.db")
	os.WriteFile(db, nil, 0o644)
	var first []string
	defer func() { afterStat = nil }()
	afterStat = func(path string) {
		afterStat = nil
		// the other run's turn: it finds the file empty too, and makes
		// the index
		s, err := OpenSQLiteOptions(path, &SQLiteOptions{Notice: func(m string) { first = append(first, m) }})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	n, err := openNotices(db)
	if err != nil || len(n) != 0 {
		t.Errorf("the run that found the index made meanwhile: %v %q", err, n)
	}
	if len(first) != 1 || !strings.Contains(first[0], "empty file (0 bytes)") {
		t.Errorf("the run that made the index: %q", first)
	}
}

// TestWriterAtWork: an index opened while another run is writing it (no
// clean-close mark, but that run's lock held) is neither checked nor
// said to be unclean; once the writer is gone without closing (its lock
// dropped, as the system drops a killed process's), it is both.
func TestWriterAtWork(t *testing.T) {
	db := filepath.Join(t.TempDir(), "i.db")
	w, err := OpenSQLite(db)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, err := range []error{w.BeginFile("a.mbox", 1, stamp), w.Add(&Entry{ID: "a@x", Loc: Location{File: "a.mbox"}}), w.Commit()} {
		if err != nil {
			t.Fatal(err)
		}
	}
	unclean := func(n []string) bool {
		for _, m := range n {
			if strings.Contains(m, "not closed cleanly") {
				return true
			}
		}
		return false
	}
	if n, err := openNotices(db); err != nil || unclean(n) {
		t.Errorf("opened while another run writes: %v %q", err, n)
	}
	if w.live == nil {
		t.Fatal("the writer holds no lock")
	}
	w.live.Close() // as if killed: the lock is gone, the mark still missing
	w.live = nil
	if n, err := openNotices(db); err != nil || !unclean(n) {
		t.Errorf("opened after the writer died: %v %q", err, n)
	}
}
