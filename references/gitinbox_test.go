package references

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/linkscan/linkscan/internal/testutil"
	_ "github.com/linkscan/linkscan/mailbox/pubinbox"
)

func gitMsg(id, more string) string {
	return fmt.Sprintf("Message-ID: <%s@x>\n%s\nbody of %s\n", id, more, id)
}

func epochCommits(ids ...string) []testutil.GitCommit {
	var cs []testutil.GitCommit
	for _, id := range ids {
		cs = append(cs, testutil.GitCommit{Set: map[string]string{"m": gitMsg(id, "")}})
	}
	return cs
}

// TestIndexEpochs: the messages of a public-inbox archive are indexed
// with their epoch and blob; a second run passes over the epochs whose
// head did not move and adds only the new commits of one that did; an
// epoch whose history was rewritten is read again whole.
func TestIndexEpochs(t *testing.T) {
	testutil.NeedGit(t)
	for _, name := range []string{"memory", "sqlite"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			var store Store = NewMemory()
			if name == "sqlite" {
				db, err := OpenSQLite(filepath.Join(dir, "i.db"))
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				store = db
			}
			inbox := filepath.Join(dir, "inbox")
			e0, e1 := filepath.Join(inbox, "git", "0.git"), filepath.Join(inbox, "git", "1.git")
			testutil.GitRepo(t, e0, epochCommits("a", "b"))
			testutil.GitRepo(t, e1, epochCommits("c"))
			ix := &Indexer{Store: store}
			add := func(want IndexStats) {
				t.Helper()
				st, err := ix.Add(inbox)
				if err != nil {
					t.Fatal(err)
				}
				if st.Messages != want.Messages || st.Skipped != want.Skipped || st.Pruned != want.Pruned || len(st.Unreadable) != 0 {
					t.Errorf("added %d, skipped %d, pruned %d, unreadable %q; want %d, %d, %d", st.Messages, st.Skipped, st.Pruned, st.Unreadable, want.Messages, want.Skipped, want.Pruned)
				}
			}
			where := func(id string) []Location {
				t.Helper()
				l, err := store.Messages(id + "@x")
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			add(IndexStats{Messages: 3})
			l := where("a")
			if len(l) != 1 || l[0].File != FileKey(e0) || l[0].Blob != testutil.Git(t, e0, "rev-parse", "HEAD~1:m") || l[0].Offset != 0 || l[0].Name != "" {
				t.Errorf("a@x: %+v", l)
			}
			add(IndexStats{Skipped: 2})

			testutil.GitRepo(t, e1, epochCommits("d", "e"))
			add(IndexStats{Messages: 2, Skipped: 1})
			// as after a run killed once it added d and e but before it
			// recorded the new head: read again, nothing added twice
			if err := store.(Heads).SetHead(FileKey(e1), testutil.Git(t, e1, "rev-parse", "HEAD~2")); err != nil {
				t.Fatal(err)
			}
			add(IndexStats{Skipped: 1})
			for _, id := range []string{"a", "b", "c", "d", "e"} {
				if l := where(id); len(l) != 1 {
					t.Errorf("%s@x: %d locations: %+v", id, len(l), l)
				}
			}
			if l := where("e"); len(l) != 1 || l[0].File != FileKey(e1) || l[0].Blob != testutil.Git(t, e1, "rev-parse", "HEAD:m") {
				t.Errorf("e@x: %+v", l)
			}

			// epoch 1 made again with other commits: read whole, its
			// old messages forgotten
			testutil.Git(t, e1, "update-ref", "-d", "refs/heads/master")
			testutil.GitRepo(t, e1, epochCommits("f"))
			add(IndexStats{Messages: 1, Skipped: 1})
			for id, n := range map[string]int{"c": 0, "d": 0, "f": 1, "a": 1} {
				if l := where(id); len(l) != n {
					t.Errorf("after the rewrite, %s@x: %d locations, want %d", id, len(l), n)
				}
			}
		})
	}
}
