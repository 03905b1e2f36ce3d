package references

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/linkscan/linkscan/internal/testutil"
	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/uri"
)

const refs = "../testdata/refs/"

// stores runs a test against both stores.
func stores(t *testing.T, fn func(t *testing.T, s Store)) {
	t.Run("memory", func(t *testing.T) { fn(t, NewMemory()) })
	t.Run("spill", func(t *testing.T) {
		// a budget of one byte: the index moves at once
		s := NewSpill(1, t.TempDir(), nil)
		defer s.Close()
		fn(t, s)
	})
	t.Run("sqlite", func(t *testing.T) {
		s, err := OpenSQLite(filepath.Join(t.TempDir(), "index.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		fn(t, s)
	})
}

func index(t *testing.T, s Store, inputs ...string) {
	t.Helper()
	ix := &Indexer{Store: s}
	for _, in := range inputs {
		if _, err := ix.Add(in); err != nil {
			t.Fatalf("index %s: %v", in, err)
		}
	}
}

func TestResolve(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		index(t, s, refs+"list.mbox", refs+"maildir")
		// the targets in the inputs are shown as the inputs were named
		r := &Resolver{Store: s, LocalHosts: []string{"NEWS.test.invalid"}, Inputs: []string{refs + "list.mbox", refs + "maildir"}}
		tests := []struct {
			link    string
			status  Status
			targets int
			first   string // file of the first target, or part path, or group
		}{
			{"mid:minutes@example.org", Resolved, 1, refs + "maildir/cur/1000.1.host:2,S"},
			{"mid:copy@example.org", Resolved, 2, refs + "list.mbox"},
			{"mid:pruned@example.org", Dangling, 0, ""},
			{"mid:related@example.org/diagram@example.org", Resolved, 1, "2"},
			{"mid:related@example.org/twice@example.org", Ambiguous, 2, "3"},
			{"mid:related@example.org/nothing@example.org", Dangling, 0, ""},
			{"news:1991Jun21.055051.28165@milton.u.washington.edu", Resolved, 1, refs + "maildir/new/1002.1.host"},
			{"news:comp.infosystems.www", Resolved, 1, "comp.infosystems.www"},
			{"news:alt.nowhere", Dangling, 0, ""},
			{"news:*", NotATarget, 0, ""},
			{"news:comp.*", NotATarget, 0, ""},
			{"nntp://news.test.invalid/comp.infosystems.www/1", Resolved, 1, refs + "maildir/new/1002.1.host"},
			{"nntp://news.test.invalid/comp.infosystems.www/2", Dangling, 0, ""},
			{"nntp://news.other.example/comp.infosystems.www/1", ExternalServer, 0, ""},
			{"mid:synthetic:list.mbox:0", Dangling, 0, ""},
			// percent-decoding before lookup; brackets written into the URL
			{"mid:minutes%40example.org", Resolved, 1, refs + "maildir/cur/1000.1.host:2,S"},
			{"mid:%3Cminutes@example.org%3E", Resolved, 1, refs + "maildir/cur/1000.1.host:2,S"},
			{"http://example.org/", "", 0, ""},
		}
		for _, tt := range tests {
			res, err := r.Resolve(tt.link, nil)
			if err != nil {
				t.Fatal(err)
			}
			first := ""
			if len(res.Targets) > 0 {
				l := res.Targets[0]
				first = l.File
				if l.Part != "" {
					first = l.Part
				} else if l.File == "" {
					first = l.Group
				}
			}
			if res.Status != tt.status || len(res.Targets) != tt.targets || first != tt.first {
				t.Errorf("%s: %s %d targets (first %q), want %s %d (%q)", tt.link, res.Status, len(res.Targets), first, tt.status, tt.targets, tt.first)
			}
		}
		st, _ := s.Stats()
		if st.Messages != 8 || st.Synthetic != 1 || st.MessageIDs != 6 || st.ContentIDs != 2 {
			t.Errorf("stats %+v", st)
		}
	})
}

// TestCID resolves cid: links inside their message: the enclosing
// multipart/related first.
func TestCID(t *testing.T) {
	r, _ := mailbox.Open(refs+"list.mbox", nil)
	var m *mailbox.Message
	for i := 0; i < 3; i++ {
		m, _ = r.Next()
	}
	parts := m.Parts()
	ctx := &Context{Loc: Location{File: m.Path, Offset: m.Offset, MessageID: m.MessageID}, Parts: parts, Part: "1"}
	res := (&Resolver{Store: NewMemory()})
	for cid, want := range map[string]Status{"diagram@example.org": Resolved, "twice@example.org": Ambiguous, "missing@example.org": Dangling} {
		got, _ := res.Resolve("cid:"+cid, ctx)
		if got.Status != want {
			t.Errorf("cid:%s: %s, want %s", cid, got.Status, want)
		}
		if want == Resolved && (got.Targets[0].Part != "2" || got.Targets[0].MessageID != "related@example.org") {
			t.Errorf("cid:%s: target %+v", cid, got.Targets[0])
		}
	}
	if got, _ := res.Resolve("cid:diagram@example.org", nil); got.Status != Dangling {
		t.Errorf("cid: without a message: %s", got.Status)
	}
}

func TestImplicit(t *testing.T) {
	r, _ := mailbox.Open(refs+"list.mbox", nil)
	r.Next()
	m, _ := r.Next()
	got := Implicit(m, m.Parts())
	var urls, wheres []string
	for _, ref := range got {
		urls = append(urls, ref.URL)
		wheres = append(wheres, ref.Where)
	}
	wantURLs := []string{"mid:root@example.org", "mid:root@example.org", "news:1991Jun21.055051.28165@milton.u.washington.edu"}
	wantWheres := []string{"header:In-Reply-To", "header:References", "attribution"}
	if !slices.Equal(urls, wantURLs) || !slices.Equal(wheres, wantWheres) {
		t.Errorf("implicit: %q %q", urls, wheres)
	}
	if a := got[2]; a.Line != 1 || a.Column != 13 || a.Part != "1" {
		t.Errorf("attribution position %+v", a)
	}
	lenient := &mailbox.Message{Header: mailbox.Header{
		{Name: "References", Value: "<good@x> <broken <also-good@y>"},
		{Name: "In-Reply-To", Value: "bare@z (Message of Monday)"},
	}}
	urls = nil
	for _, ref := range Implicit(lenient, nil) {
		urls = append(urls, ref.URL)
	}
	if !slices.Equal(urls, []string{"mid:good@x", "mid:also-good@y", "mid:bare@z"}) {
		t.Errorf("lenient ids: %q", urls)
	}
	if EscapeID("a/b%c d@x") != "a%2Fb%25c%20d@x" {
		t.Errorf("EscapeID: %q", EscapeID("a/b%c d@x"))
	}
}

// TestIncremental: a second run skips unchanged files, and a changed file
// replaces what was indexed from it.
func TestIncremental(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "index.db")
	mbox := filepath.Join(dir, "a.mbox")
	os.WriteFile(mbox, []byte("From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <one@x>\n\nbody\n"), 0o644)
	s, err := OpenSQLite(db)
	if err != nil {
		t.Fatal(err)
	}
	ix := &Indexer{Store: s}
	if st, err := ix.Add(mbox); err != nil || st.Messages != 1 {
		t.Fatalf("first: %+v %v", st, err)
	}
	if st, _ := ix.Add(refs + "maildir"); st.Messages != 3 {
		t.Fatalf("maildir: %+v", st)
	}
	s.Close()

	s, _ = OpenSQLite(db)
	ix = &Indexer{Store: s}
	if st, _ := ix.Add(mbox); st.Messages != 0 || st.Skipped != 1 {
		t.Errorf("unchanged file: %+v", st)
	}
	if st, _ := ix.Add(refs + "maildir"); st.Messages != 0 || st.Skipped != 3 {
		t.Errorf("unchanged maildir: %+v", st)
	}
	os.WriteFile(mbox, []byte("From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <two@x>\n\nchanged body\n"), 0o644)
	if st, _ := ix.Add(mbox); st.Messages != 1 {
		t.Errorf("changed file: %+v", st)
	}
	if l, _ := s.Messages("one@x"); len(l) != 0 {
		t.Errorf("stale entry kept: %+v", l)
	}
	if l, _ := s.Messages("two@x"); len(l) != 1 {
		t.Errorf("new entry missing")
	}
	st, _ := s.Stats()
	if st.Messages != 4 || st.Files != 4 {
		t.Errorf("stats after update: %+v", st)
	}
	s.Close()
	if _, err := OpenSQLite(mbox); err == nil || !strings.Contains(err.Error(), "index") {
		t.Errorf("opening a non-database: %v", err)
	}
}

// TestSpoolCrossposts indexes a tradspool with a crosspost (hard links)
// and resolves nntp: links to the server named in Xref:.
func TestSpoolCrossposts(t *testing.T) {
	root := t.TempDir()
	art := "Path: news.test.invalid!not-for-mail\r\nFrom: a@example.org\r\nNewsgroups: alt.test,comp.lang.go\r\n" +
		"Subject: cross\r\nMessage-ID: <cross@example.org>\r\nXref: news.test.invalid alt.test:1 comp.lang.go:7\r\n\r\nbody\r\n.\r\n"
	os.MkdirAll(filepath.Join(root, "alt/test"), 0o755)
	os.MkdirAll(filepath.Join(root, "comp/lang/go"), 0o755)
	os.WriteFile(filepath.Join(root, "alt/test/1"), []byte(art), 0o644)
	if err := os.Link(filepath.Join(root, "alt/test/1"), filepath.Join(root, "comp/lang/go/7")); err != nil {
		t.Skip(err)
	}
	stores(t, func(t *testing.T, s Store) {
		index(t, s, root)
		r := &Resolver{Store: s}
		for link, want := range map[string]Status{
			"nntp://news.test.invalid/comp.lang.go/7": Resolved, "nntp://news.test.invalid/alt.test/1": Resolved,
			"nntp://news.test.invalid/alt.test/2": Dangling, "news:alt.test": Resolved, "news:cross@example.org": Resolved,
			"nntp://elsewhere.example/alt.test/1": ExternalServer, "news://elsewhere.example/alt.test": ExternalServer,
		} {
			got, _ := r.Resolve(link, nil)
			if got.Status != want {
				t.Errorf("%s: %s, want %s", link, got.Status, want)
			}
		}
		if l, _ := s.Messages("cross@example.org"); len(l) != 1 {
			t.Errorf("crosspost indexed %d times", len(l))
		}
	})
}

// TestINNSpool uses a tradspool written by a real INN 2.7.1 server (see
// testdata/README.md): wire format, and a crosspost filed as a hard link.
func TestINNSpool(t *testing.T) {
	root := testutil.Untar(t, "../testdata/inn-spool.tar")
	stores(t, func(t *testing.T, s Store) {
		index(t, s, root)
		st, _ := s.Stats()
		if st.Messages != 3 || st.Groups != 3 || st.Articles != 4 {
			t.Errorf("stats %+v", st)
		}
		r := &Resolver{Store: s}
		for link, want := range map[string]Status{
			"news:reply-1994@test.invalid":                    Resolved,
			"news:root-1994@test.invalid":                     Resolved,
			"news:test.links":                                 Resolved,
			"nntp://news.test.invalid/test.links/2":           Resolved,
			"nntp://news.test.invalid/comp.infosystems.www/1": Resolved,
			"nntp://news.test.invalid/test.links/3":           Dangling,
			"nntp://news.other.example/alt.test/1":            ExternalServer,
			"news:gone@test.invalid":                          Dangling,
		} {
			got, _ := r.Resolve(link, nil)
			if got.Status != want {
				t.Errorf("%s: %s, want %s", link, got.Status, want)
			}
		}
		if l, _ := s.Messages("root-1994@test.invalid"); len(l) != 1 {
			t.Errorf("the crosspost is indexed %d times, want once", len(l))
		}
	})
}

// TestResolveURLForms: ResolveURL on a URL parsed as written answers as
// Resolve on its canonical form, so a caller that parsed it once need
// not canonicalize and parse again.
func TestResolveURLForms(t *testing.T) {
	s := NewMemory()
	index(t, s, refs+"list.mbox", refs+"maildir")
	r := &Resolver{Store: s, LocalHosts: []string{"news.test.invalid"}}
	resolved := 0
	for _, link := range []string{
		"MID:minutes@example.org", "mid:minutes%40example.org", "mid:%3cminutes@example.org%3e", "Mid:related@example.org/diagram%40example.org",
		"NNTP://NEWS.TEST.INVALID:119/comp.infosystems.www/1", "nntp://news.other.example/comp.infosystems.www/1",
		"NEWS:comp.infosystems.www", "news:1991Jun21.055051.28165%40milton.u.washington.edu", "news://News.Test.Invalid/comp.infosystems.www",
		"news:*", "mid:pruned@example.org", "http://example.org/",
	} {
		canon, err := uri.Canonical(link)
		if err != nil {
			t.Fatalf("%s: %v", link, err)
		}
		want, _ := r.Resolve(canon, nil)
		u, _ := uri.Parse(link)
		got, err := r.ResolveURL(u, nil)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: ResolveURL %+v %v, Resolve(%s) %+v", link, got, err, canon, want)
		}
		if got.Status == Resolved {
			resolved++
		}
	}
	if resolved != 8 {
		t.Errorf("%d links resolved, want 8", resolved)
	}
}

// TestEntryOfLeavesGroups: the Xref articles of a message are added to
// its entry without writing into the spare room of the message's Groups.
func TestEntryOfLeavesGroups(t *testing.T) {
	msg := "Newsgroups: comp.a\nXref: news.example comp.a:7 comp.b:9\nMessage-ID: <x@y>\n\nbody\n"
	r, err := mailbox.NewReader(strings.NewReader(msg), "art", &mailbox.Options{Format: mailbox.FormatMessage})
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	groups := make([]string, 1, 4)
	groups[0] = "comp.a:7"
	spare := groups[:4]
	spare[1], spare[2], spare[3] = "kept1", "kept2", "kept3"
	m.Groups = groups
	e := entryOf(m, FileKey)
	if spare[1] != "kept1" || spare[2] != "kept2" || spare[3] != "kept3" {
		t.Errorf("entryOf wrote into the message's Groups: %q", spare)
	}
	if want := []string{"comp.a:7", "comp.b:9"}; !slices.Equal(e.Articles, want) {
		t.Errorf("articles %q, want %q", e.Articles, want)
	}
}
