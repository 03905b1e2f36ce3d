//go:build unix

package output

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// TestRemoveStale: the next Create in a directory removes the temporary
// files killed runs left there (older than StaleAge, locked by no
// process), once per directory; a young one, one a live run holds locked,
// and files that only look alike are left.
func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-2 * StaleAge)
	mk := func(name string, age time.Time) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, age, age)
		return p
	}
	mk(".a.mbox.tmp-0123456789ab", old)
	mk(".b.mbox.tmp-ba9876543210", old)
	mk(".a.mbox.tmp-00000000000f", time.Now())  // young
	mk(".a.mbox.tmp-0123456789", old)           // not 12 digits
	mk("a.mbox.tmp-0123456789ab", old)          // not hidden
	mk(".a.mbox.tmp-0123456789aZ", old)         // not hex
	held := mk(".a.mbox.tmp-aaaaaaaaaaaa", old) // a live run's
	h, err := os.Open(held)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := syscall.Flock(int(h.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Skipf("no flock: %v", err)
	}
	cleaned.Delete(dir)
	f, err := Create(filepath.Join(dir, "a.mbox"))
	if err != nil {
		t.Fatal(err)
	}
	// our own temporary file is held locked while it is written
	if o, err := os.Open(f.TempName()); err != nil || lockTemp(o) {
		t.Errorf("the run's own temporary file is not locked (%v)", err)
	} else {
		o.Close()
	}
	f.Write([]byte("new\n"))
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	want := []string{".a.mbox.tmp-00000000000f", ".a.mbox.tmp-0123456789", ".a.mbox.tmp-0123456789aZ", ".a.mbox.tmp-aaaaaaaaaaaa", "a.mbox", "a.mbox.tmp-0123456789ab"}
	if !slices.Equal(names, want) {
		t.Errorf("left %q\nwant %q", names, want)
	}
}
