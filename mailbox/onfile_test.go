package mailbox

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestOnFile: Options.OnFile names every file of a directory that is
// read, with the format it is read as and why, before its messages come
// from Next; files passed over (binary, hidden, empty) are not named
// there. Folders of loose files, a Maildir (a message compressed), an MH
// folder (a compressed message, an mbox among the numbered files), a
// tradspool and a timehash tree.
func TestOnFile(t *testing.T) {
	root := t.TempDir()
	art := func(id string) string {
		return "Path: local!not-for-mail\nFrom: a@example.org\nNewsgroups: alt.test\nSubject: " + id +
			"\nMessage-ID: <" + id + ">\nXref: local alt.test:1\n\nhttp://example.org/" + id + "\n"
	}
	tree(t, root, map[string]string{
		"folder/a.eml":       eml("a"),
		"folder/b.mbox":      mboxOf("b1", "b2"),
		"folder/c.mbox.gz":   gz(mboxOf("c1")),
		"folder/d.txt":       "notes\nhttp://example.org/d\n",
		"folder/e.png":       "\x89PNG\r\n\x1a\n\x00\x00",
		"folder/f.eml":       "",
		"folder/.hidden":     eml("h"),
		"md/cur/1:2,S":       eml("m1"),
		"md/new/2":           gz(eml("m2")),
		"md/tmp/":            "",
		"mh/1":               eml("h1"),
		"mh/2":               gz(eml("h2")),
		"mh/3":               mboxOf("h3"),
		"spool/alt/test/1":   art("s1"),
		"th/time-3f/12/ab/1": art("t1"),
	})
	// a symbolic link to a file outside: Info is the target's
	tree(t, root, map[string]string{"outside.mbox": mboxOf("o1")})
	if err := os.Symlink(filepath.Join(root, "outside.mbox"), filepath.Join(root, "folder", "z-link.mbox")); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"folder": {
			"a.eml message a header block with mail or news fields (From, Subject, Message-ID)",
			"b.mbox mbox " + `the first line is an mbox "From " line (a sender and a date)`,
			"c.mbox.gz mbox " + `the first line is an mbox "From " line (a sender and a date)`,
			"d.txt text no mbox separator, header field or A-news article at the start",
			"z-link.mbox mbox " + `the first line is an mbox "From " line (a sender and a date)`,
		},
		"md": {
			"cur/1:2,S maildir a file in a Maildir's cur/ or new/: one message",
			"new/2 maildir a file in a Maildir's cur/ or new/: one message, gzip-compressed",
		},
		"mh": {
			"1 mh a numbered file of an MH folder: one message",
			"2 mh a numbered file of an MH folder: one message, gzip-compressed",
			"3 mbox " + `the first line is an mbox "From " line (a sender and a date)`,
		},
		"spool": {"alt/test/1 spool a numbered file of a news spool: one article"},
		"th":    {"time-3f/12/ab/1 spool a file of an INN timehash tree: one article"},
	}
	for dir, w := range want {
		base := filepath.Join(root, dir)
		var files, events []string
		r, err := Open(base, &Options{OnFile: func(fr FileRead) {
			rel, _ := filepath.Rel(base, fr.Path)
			files = append(files, rel+" "+string(fr.Format)+" "+fr.Reason)
			events = append(events, "file "+rel)
			if fi, err := os.Stat(fr.Path); err != nil || !os.SameFile(fi, fr.Info) {
				t.Errorf("%s: Info is not the file's: %v", rel, err)
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		for {
			m, err := r.Next()
			if m != nil {
				rel, _ := filepath.Rel(base, m.Path)
				events = append(events, "message "+rel)
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", dir, err)
			}
		}
		r.Close()
		if !slices.Equal(files, w) {
			t.Errorf("%s: OnFile saw\n%s\nwant\n%s", dir, strings.Join(files, "\n"), strings.Join(w, "\n"))
		}
		// each file named before its first message
		named := map[string]bool{}
		for _, e := range events {
			if p, ok := strings.CutPrefix(e, "file "); ok {
				named[p] = true
			} else if p := strings.TrimPrefix(e, "message "); !named[p] {
				t.Errorf("%s: a message of %s before OnFile named it: %q", dir, p, events)
				break
			}
		}
	}
}
