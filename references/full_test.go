package references

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSQLiteFull: an index whose writes fail for want of room (a full
// disk; here SQLite's max_page_count) gives that error, not the "cannot
// commit - no transaction is active" of a COMMIT after SQLite rolled the
// transaction back itself; Close says nothing more misleading; and the
// messages Add counts are those the index holds (it counted those of
// the batch rolled back too).
func TestSQLiteFull(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <m%d.%s@example.org>\n\nhttp://e.example/%d\n\n", i, strings.Repeat("x", 40), i)
	}
	in := filepath.Join(dir, "a.mbox")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := OpenSQLiteOptions(filepath.Join(dir, "refs.db"), &SQLiteOptions{BatchSize: 500})
	if err != nil {
		t.Fatal(err)
	}
	var pages int
	if err := s.db.QueryRow(`PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(fmt.Sprintf(`PRAGMA max_page_count = %d`, pages+40)); err != nil {
		t.Fatal(err)
	}
	st, err := (&Indexer{Store: s}).Add(in)
	if err == nil || !strings.Contains(err.Error(), "full") {
		t.Fatalf("Add: %v, want the disk full", err)
	}
	var held int
	if err := s.db.QueryRow(`SELECT count(*) FROM messages`).Scan(&held); err != nil {
		t.Fatal(err)
	}
	if st.Messages != held || held == 0 || held == 3000 {
		t.Errorf("Add counted %d messages, the index holds %d (of 3000)", st.Messages, held)
	}
	if err := s.Close(); err != nil && strings.Contains(err.Error(), "no transaction") {
		t.Errorf("Close: %v", err)
	}
}
