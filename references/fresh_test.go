package references

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestResolverFresh: in every store, a target file gone since it was
// indexed gives no target (status error when it held them all, said
// once); one changed is indexed again by Refresh and answered with its
// new offsets, or without Refresh left out as a gone one; a store
// holding a file begun and not ended makes a lookup that finds nothing
// an error. Uncertain counts the errors.
func TestResolverFresh(t *testing.T) { stores(t, testResolverFresh) }

func testResolverFresh(t *testing.T, s Store) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.mbox"), filepath.Join(dir, "b.mbox")
	msg := func(id, body string) string {
		return "From x@y Mon Jan  1 00:00:00 2024\nMessage-ID: <" + id + ">\n\n" + body + "\n\n"
	}
	os.WriteFile(a, []byte(msg("a1@x", "one")+msg("a2@x", "two")), 0o644)
	os.WriteFile(b, []byte(msg("b1@x", "one")+msg("both@x", "b")), 0o644)
	c := filepath.Join(dir, "c.mbox")
	os.WriteFile(c, []byte(msg("both@x", "c")), 0o644)
	index(t, s, a, b, c)
	var notices []string
	r := &Resolver{Store: s, Notice: func(m string) { notices = append(notices, m) }}
	r.Refresh = (&Indexer{Store: s}).Refresh
	look := func(url string) Resolution {
		t.Helper()
		res, err := r.Resolve(url, nil)
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		return res
	}
	// a.mbox rewritten: its second message moves; c.mbox gone
	os.WriteFile(a, []byte(msg("a1@x", "a longer first message")+msg("a2@x", "two")), 0o644)
	os.Chtimes(a, time.Now().Add(time.Hour), time.Now().Add(time.Hour))
	os.Remove(c)
	want := int64(len(msg("a1@x", "a longer first message")))
	if res := look("mid:a2@x"); res.Status != Resolved || len(res.Targets) != 1 || res.Targets[0].Offset != want {
		t.Errorf("a changed file: %+v, want offset %d", res, want)
	}
	if res := look("mid:both@x"); res.Status != Resolved || len(res.Targets) != 1 || res.Targets[0].File != b {
		t.Errorf("a copy in a gone file: %+v, want the one in %s", res, b)
	}
	if res := look("mid:nowhere@x"); res.Status != Dangling {
		t.Errorf("a complete index: %+v, want dangling", res)
	}
	// a file is looked at once per run (Resolver): b.mbox is gone for
	// the next
	os.Remove(b)
	r = &Resolver{Store: s, Notice: r.Notice, Refresh: r.Refresh}
	if res := look("mid:b1@x"); res.Status != Error {
		t.Errorf("a gone file: %+v, want error", res)
	}
	joined := strings.Join(notices, "\n")
	for _, w := range []string{a + ": changed since it was indexed: indexed again", c + ": indexed, and gone since", b + ": indexed, and gone since"} {
		if strings.Count(joined, w) != 1 {
			t.Errorf("notices %q: want one %q", notices, w)
		}
	}
	if n := r.Uncertain(); n != 1 {
		t.Errorf("Uncertain %d, want 1", n)
	}

	// without Refresh, a changed file's targets are left out
	r2 := &Resolver{Store: s}
	os.WriteFile(a, []byte(msg("a1@x", "shorter")+msg("a2@x", "two")), 0o644)
	if res, _ := r2.Resolve("mid:a2@x", nil); res.Status != Error {
		t.Errorf("a changed file, no Refresh: %+v", res)
	}
	// a file begun and not ended: what the index does not hold is an error
	s.BeginFile(filepath.Join(dir, "killed.mbox"), 10, time.Now())
	s.Commit()
	r3 := &Resolver{Store: s}
	if res, _ := r3.Resolve("mid:nowhere@x", nil); res.Status != Error || r3.Uncertain() != 1 {
		t.Errorf("an incomplete index: %+v, Uncertain %d", res, r3.Uncertain())
	}
}

// TestBeginFileOwnerGone: a file begun by a run whose process id now
// belongs to a process that does not write the index (an id taken
// again after a kill) is taken over at once, not waited for.
func TestBeginFileOwnerGone(t *testing.T) {
	db := filepath.Join(t.TempDir(), "i.db")
	s, err := OpenSQLite(db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	stamp := time.Now()
	if err := s.BeginFile("/x/a.mbox", 10, stamp); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	owner := "0123456789abcdef " + strconv.Itoa(os.Getppid()) + " " + host // alive, no writer
	if err := s.exec(`UPDATE files SET owner = ? WHERE path = ?`, owner, "/x/a.mbox"); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := s.BeginFile("/x/a.mbox", 10, stamp); err != nil {
		t.Errorf("a file of a gone run: %v, want it taken over", err)
	}
}
