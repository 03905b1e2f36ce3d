package mailbox

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMagicCutInFolder: a file of a folder named as compressed (.gz,
// .bz2, .xz, .zst) that is empty or ends inside its magic number is a
// truncated file, as when it is given alone: an entry that could not be
// read (a Skip with the *InputError, and a message of one problem), not
// a text of garbage or an empty file. The good message
// beside them is read; a .gz of nothing is an empty file.
func TestMagicCutInFolder(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"t0.mbox.gz":  "",
		"t1.mbox.gz":  "\x1f",
		"t2.mbox.bz2": "BZ",
		"t2.mbox.xz":  "\xfd7",
		"t3.mbox.zst": "\x28\xb5\x2f",
		"z.eml":       eml("good"),
		"zz.mbox.gz":  gz(""),
	}
	tree(t, root, files)
	r, ids, ms, err := readDirAll(t, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"problem:t0.mbox.gz", "problem:t1.mbox.gz", "problem:t2.mbox.bz2", "problem:t2.mbox.xz", "problem:t3.mbox.zst", "good"}
	if !slices.Equal(ids, want) {
		t.Errorf("read %q, want %q", ids, want)
	}
	for _, m := range ms[:len(ms)-1] {
		var ie *InputError
		if len(m.Problems) != 1 || !errors.As(m.Problems[0], &ie) || !strings.Contains(ie.Err.Error(), "data truncated: the file ends inside the") {
			t.Errorf("%s: %v", m.Path, m.Problems)
		}
	}
	for _, sk := range r.Skipped() {
		name := filepath.Base(sk.Path)
		if name == "zz.mbox.gz" {
			if sk.Kind != SkipEmpty {
				t.Errorf("%s: %+v", name, sk)
			}
			continue
		}
		if sk.Err == nil || !errors.Is(sk.Err, ErrUnreadable) {
			t.Errorf("%s: %+v", name, sk)
		}
	}
	if len(r.Skipped()) != 6 {
		t.Errorf("skips: %v", r.Skipped())
	}
	// the same files given alone say the same
	for name := range files {
		if !strings.HasPrefix(name, "t") {
			continue
		}
		_, err := Open(filepath.Join(root, name), nil)
		var ie *InputError
		if !errors.As(err, &ie) || !strings.Contains(ie.Err.Error(), "data truncated: the file ends inside the") {
			t.Errorf("Open(%s): %v", name, err)
		}
	}
}
