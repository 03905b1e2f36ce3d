package rewrite

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// randChange makes a change of random content: URLs alike and not,
// empty and long strings, nil and empty slices, negative numbers.
func randChange(rnd *rand.Rand, i int) LinkChange {
	pick := func(ss ...string) string { return ss[rnd.IntN(len(ss))] }
	long := strings.Repeat("x", 60+rnd.IntN(100))
	old := pick("http://old.example.org/"+fmt.Sprint(i), "http://old.example.org/"+fmt.Sprint(i+1), "",
		"mailto:a@example.org", "http://"+long+"/", "ftp://ftp.example.org/pub/é")
	nu := pick(old, strings.Replace(old, "old", "new", 1), "https://archive.example.org/"+old, "", "http://a")
	c := LinkChange{
		Part: pick("", "1", "1.2"), Where: pick("body", "html:href", "header:List-Post"), ContentType: pick("", "text/plain"),
		Start: int64(rnd.IntN(1 << 20)), Line: rnd.IntN(1000) - 1, Column: rnd.IntN(80), RawOffset: int64(rnd.IntN(1<<30)) - 1,
		Old: old, New: nu, OldForm: pick("bare", "url-wrapper", ""), NewForm: pick("bare", "angle"),
		Skipped: pick("", "", "a reason", "reason "+long), Annotated: rnd.IntN(3) == 0,
		written: pick("", nu, "<"+nu+">", old),
	}
	c.End = c.Start + int64(rnd.IntN(200))
	switch rnd.IntN(4) {
	case 0:
	case 1:
		c.Rules = []Change{}
	default:
		for k := range rnd.IntN(3) + 1 {
			ch := Change{Rule: pick("rule at line 3", "moved", ""), Line: rnd.IntN(100), Action: pick("map", "unwrap", "archive"),
				Old: pick(old, nu, "x"), New: pick(nu, old, "y"+fmt.Sprint(k)), Form: pick("", "url-wrapper"),
				Removed: rnd.IntN(3), Note: pick("", "status dead, captured 2001-02-03", long), Skipped: pick("", "not dead", long)}
			switch rnd.IntN(3) {
			case 1:
				ch.Layers = []Wrapper{}
			case 2:
				ch.Layers = []Wrapper{SafeLinks, Google}
			}
			c.Rules = append(c.Rules, ch)
		}
	}
	return c
}

// TestChangesRoundTrip: every change added comes back as it was, in
// order, with the marks (skipFrom, annotateAll, setHead) set where they
// were asked for and nowhere else.
func TestChangesRoundTrip(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for round := range 50 {
		var want []LinkChange
		c := &Changes{}
		n := rnd.IntN(3000)
		if round%10 == 0 {
			n = 0
		}
		var mark pos
		markAt := rnd.IntN(n + 1)
		for i := range n {
			if i == markAt {
				mark = c.end()
			}
			lc := randChange(rnd, i)
			want = append(want, lc)
			c.add(&lc)
		}
		if markAt == n {
			mark = c.end()
		}
		if c.Len() != n {
			t.Fatalf("Len %d, want %d", c.Len(), n)
		}
		got := c.List()
		if n == 0 && got != nil {
			t.Fatalf("empty: List %v", got)
		}
		for i := range want {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Fatalf("round %d change %d:\ngot  %+v\nwant %+v", round, i, got[i], want[i])
			}
		}
		switch round % 3 {
		case 0:
			c.skipFrom(mark, "skipped from here", round%2 == 0)
			for i := markAt; i < n; i++ {
				if want[i].Skipped == "" && (round%2 == 0 || !want[i].Annotated) {
					want[i].Skipped = "skipped from here"
				}
			}
		case 1:
			c.annotateAll()
			for i := range want {
				if want[i].Skipped == "" {
					want[i].Annotated = true
				}
			}
		case 2:
			i := 0
			c.each(func(h []byte, lc *LinkChange) {
				if i%7 == 0 {
					c.setHead(h, "set", i%2 == 0)
					want[i].Skipped, want[i].Annotated = "set", i%2 == 0
				}
				i++
			})
		}
		got = c.List()
		for i := range want {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Fatalf("round %d, after marks, change %d:\ngot  %+v\nwant %+v", round, i, got[i], want[i])
			}
		}
		if l, ok := c.last(); ok != (n > 0) || n > 0 && !reflect.DeepEqual(l, want[n-1]) {
			t.Fatalf("last: %+v %v", l, ok)
		}
	}
	var nilChanges *Changes
	if nilChanges.Len() != 0 || nilChanges.List() != nil {
		t.Fatal("nil Changes not empty")
	}
}

// denseChange is the change of the i-th link of a link-dense message:
// a host map rule on one of a list of similar URLs.
func denseChange(i int) LinkChange {
	old := fmt.Sprintf("http://old.example.org/%d", i)
	nu := fmt.Sprintf("http://new.example.org/%d", i)
	return LinkChange{Part: "1", Where: "body", ContentType: "text/plain", Start: int64(30 * i), End: int64(30*i + len(old)),
		Line: i + 1, Column: 1, RawOffset: int64(200 + 30*i), Old: old, New: nu, OldForm: "bare", NewForm: "bare",
		Rules: []Change{{Rule: "rule at line 2", Line: 2, Action: "map", Old: old, New: nu}}, written: nu}
}

// TestChangesMemory bounds the heap a change of a link-dense message
// keeps: 100,000 changes of a host map rule. A []LinkChange kept some
// 450 bytes for each (the struct, its Rules, its URL strings).
func TestChangesMemory(t *testing.T) {
	const n = 100000
	live := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	base := live()
	c := &Changes{}
	for i := range n {
		lc := denseChange(i)
		c.add(&lc)
	}
	per := float64(live()-base) / n
	runtime.KeepAlive(c)
	t.Logf("%.1f bytes per change", per)
	if per > 32 {
		t.Errorf("%.1f bytes of heap per change, want at most 32", per)
	}
	i := 0
	for lc := range c.All() {
		if want := denseChange(i); !reflect.DeepEqual(lc, want) {
			t.Fatalf("change %d: %+v, want %+v", i, lc, want)
		}
		i++
	}
}

// TestURLSet: the set holds what was added, and only that, through its
// growth, over several chunks and with strings longer than a chunk.
func TestURLSet(t *testing.T) {
	var s urlSet
	if s.has("") || s.has("x") {
		t.Fatal("empty set has")
	}
	name := func(i int) string {
		if i%1000 == 7 {
			return fmt.Sprintf("http://example.org/%d/%s", i, strings.Repeat("y", urlChunk+i))
		}
		return fmt.Sprintf("http://example.org/%d", i)
	}
	for i := range 20000 {
		s.add(name(i))
		s.add(name(i / 2))
	}
	s.add("")
	for i := range 20000 {
		if !s.has(name(i)) {
			t.Fatalf("lost %d", i)
		}
		if s.has(name(i) + "/") {
			t.Fatalf("has %d/", i)
		}
	}
	if !s.has("") || s.n != 20001 || len(s.chunks) < 20 {
		t.Fatalf("n %d, %d chunks", s.n, len(s.chunks))
	}
}

// TestEditLog: the edits come back as added, in any order of reading,
// across chunks and with texts longer than a chunk; sorted sorts them
// stably when they were added out of order (two sorted runs, merged, or
// any order).
func TestEditLog(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for round := range 20 {
		var l editLog
		var want []sedit
		n := rnd.IntN(5000)
		at := 0
		for i := range n {
			if round%4 == 2 && i == n/2 {
				at = rnd.IntN(at + 1) // a second sorted run, as an HTML part's attributes after its text
			}
			e := sedit{start: at, end: at + rnd.IntN(40), ch: i / 2}
			if round%4 == 3 && rnd.IntN(10) == 0 {
				e.start, e.end = rnd.IntN(at+1), rnd.IntN(at+1)+5 // out of order
			}
			switch rnd.IntN(20) {
			case 0:
			case 1:
				e.text = []byte(strings.Repeat("t", logChunk+rnd.IntN(100)))
			default:
				e.text = fmt.Appendf(nil, "http://new.example.org/%d", i)
			}
			at = max(at, e.end) + rnd.IntN(30)
			want = append(want, e)
			l.add(e)
			if j := rnd.IntN(len(want)); !reflect.DeepEqual(l.at(j), want[j]) {
				t.Fatalf("round %d: edit %d while adding: %+v, want %+v", round, j, l.at(j), want[j])
			}
		}
		if l.len() != n {
			t.Fatalf("len %d, want %d", l.len(), n)
		}
		for _, i := range rnd.Perm(n) {
			if !reflect.DeepEqual(l.at(i), want[i]) {
				t.Fatalf("round %d: edit %d: %+v, want %+v", round, i, l.at(i), want[i])
			}
		}
		sort.SliceStable(want, func(i, j int) bool { return want[i].start < want[j].start })
		s := l.sorted()
		if s.unsorted {
			t.Fatal("sorted log says unsorted")
		}
		for i := range want {
			if !reflect.DeepEqual(s.at(i), want[i]) {
				t.Fatalf("round %d: sorted edit %d: %+v, want %+v", round, i, s.at(i), want[i])
			}
		}
	}
}

// FuzzChanges: any changes come back from the compact form as they
// were added, with their URLs, rules' URLs, notes and reasons of any
// bytes and lengths (the difference coding of a URL against the one
// before, interned or not).
func FuzzChanges(f *testing.F) {
	f.Add("http://old.example.org/1", "http://new.example.org/1", "http://old.example.org/2", "<x>", "note", "reason", int64(5), 3, uint8(1))
	f.Add("", "", "aXa", "aa", strings.Repeat("n", 70), "", int64(-1), -2, uint8(255))
	f.Fuzz(func(t *testing.T, old, nu, old2, written, note, skipped string, start int64, line int, shape uint8) {
		var want []LinkChange
		c := &Changes{}
		for i, o := range []string{old, old2, old, nu, written} {
			lc := LinkChange{Part: note[:min(len(note), int(shape)%4)], Where: "body", Start: start * int64(i), End: start + int64(i),
				Line: line - i, Column: int(shape), RawOffset: -start, Old: o, New: nu, OldForm: skipped, NewForm: written,
				Skipped: skipped, Annotated: shape&1 != 0, written: written}
			if shape&2 != 0 {
				lc.Rules = []Change{{Rule: note, Line: line, Action: "map", Old: o, New: written, Note: note, Skipped: skipped}}
			}
			if shape&4 != 0 {
				lc.Rules = append(lc.Rules, Change{Old: written, New: nu, Layers: []Wrapper{Wrapper(note)}, Removed: line})
			}
			if shape&8 != 0 {
				lc.written = lc.New
			}
			want = append(want, lc)
			c.add(&lc)
		}
		got := c.List()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got  %+v\nwant %+v", got, want)
		}
	})
}
