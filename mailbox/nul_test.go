package mailbox

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestNULInMailFiles: a file of a directory that starts as mail (an
// mbox, a message, MMDF, a BOM and a header), in a folder, a Maildir or
// an MH folder, is read whatever NUL bytes are in its first 4 KiB: all of
// its messages (fails if an mbox with one NUL is skipped whole as a
// binary file). Binary files are still skipped: NULs without a mail
// start, a PNG.
func TestNULInMailFiles(t *testing.T) {
	root := t.TempDir()
	mbox := "From a@b Thu Mar 24 02:31:00 1994\nFrom: a@b\nMessage-ID: <n1>\n\nhttp://nul1.example/ \x00\x00 bin\n\n" +
		"From a@b Thu Mar 24 02:31:00 1994\nFrom: a@b\nMessage-ID: <n2>\n\nhttp://nul2.example/\n"
	tree(t, root, map[string]string{
		"folder/inbox":    mbox,
		"folder/bom.eml":  "\xef\xbb\xbfFrom: a@b\nMessage-ID: <n3>\n\nhttp://nul3.example/ \x00\n",
		"folder/mmdf":     "\x01\x01\x01\x01\nFrom: a@b\nMessage-ID: <n4>\n\nhttp://nul4.example/ \x00\n\x01\x01\x01\x01\n",
		"folder/blob.dat": "\x00\x01\x02junk\x00",
		"folder/img.png":  "\x89PNG\r\n\x1a\nFrom: a@b\n",
		"md/cur/1:2,S":    mbox,
		"md/cur/2:2,S":    "From: a@b\nMessage-ID: <m2>\n\nx\x00y\n",
		"md/cur/3:2,S":    "\x00\x00\x00\x00binary",
		"md/new/":         "",
		"mh/1":            mbox,
		"mh/2":            "\x89PNG\r\n\x1a\n\x00",
		"mh/3":            "Subject: s\nMessage-ID: <h3>\n\n\x00\n",
	})
	for dir, want := range map[string]struct{ ids, skipped []string }{
		"folder": {[]string{"n3", "n1", "n2", "n4"}, []string{"blob.dat", "img.png"}},
		"md":     {[]string{"n1", "m2"}, []string{"cur/3:2,S"}},
		"mh":     {[]string{"n1", "n2", "h3"}, []string{"2"}},
	} {
		base := filepath.Join(root, dir)
		r, ids, _, err := readDirAll(t, base, nil)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if !slices.Equal(ids, want.ids) {
			t.Errorf("%s: read %q, want %q", dir, ids, want.ids)
		}
		if got := skipNames(t, base, r); !slices.Equal(got, want.skipped) {
			t.Errorf("%s: skipped %q, want %q", dir, got, want.skipped)
		}
	}
}
