package mailbox

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkscan/linkscan/internal/testutil"
)

// tree writes files under root: name -> content. A name ending in "/" is
// a directory.
func tree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, name)
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func eml(id string) string {
	return "From: a@example.org\nSubject: " + id + "\nMessage-ID: <" + id + ">\n\nhttp://example.org/" + id + "\n"
}

func mboxOf(ids ...string) string {
	var b strings.Builder
	for _, id := range ids {
		b.WriteString("From a@example.org Thu Mar 24 02:31:00 1994\n" + eml(id) + "\n")
	}
	return b.String()
}

func gz(s string) string {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.String()
}

// readDirAll reads a directory and returns the Message-IDs (or, for a
// message without one, "text:"+name or "problem:"+path) and the skips.
func readDirAll(t *testing.T, root string, o *Options) (*Reader, []string, []*Message, error) {
	t.Helper()
	r, err := Open(root, o)
	if err != nil {
		return nil, nil, nil, err
	}
	defer r.Close()
	var ids []string
	var ms []*Message
	for n := 0; n < 100000; n++ {
		m, err := r.Next()
		if m != nil {
			ms = append(ms, m)
			switch {
			case m.MessageID != "":
				ids = append(ids, m.MessageID)
			case m.Length == 0 && len(m.Problems) > 0:
				rel, _ := filepath.Rel(root, m.Path)
				ids = append(ids, "problem:"+rel)
			default:
				rel, _ := filepath.Rel(root, m.Path)
				ids = append(ids, string(m.Format)+":"+rel)
			}
		}
		if err == io.EOF {
			return r, ids, ms, nil
		}
		if err != nil {
			return r, ids, ms, err
		}
	}
	t.Fatal("reader does not end")
	return nil, nil, nil, nil
}

func skipNames(t *testing.T, root string, r *Reader) []string {
	var s []string
	for _, k := range r.Skipped() {
		rel, _ := filepath.Rel(root, k.Path)
		s = append(s, rel)
	}
	return s
}

// TestFolderOfFiles: a folder of loose messages, mbox files (mutt's
// ~/Mail), compressed mboxes and other files, nested.
func TestFolderOfFiles(t *testing.T) {
	root := t.TempDir()
	tree(t, root, map[string]string{
		"a.eml":               eml("a"),
		"b.msg":               eml("b"),
		"inbox":               mboxOf("i1", "i2"),
		"lists/go-nuts":       mboxOf("g1"),
		"lists/old.mbox.gz":   gz(mboxOf("z1", "z2")),
		"lists/deep/x.eml":    eml("x"),
		"notes.txt":           "Homepage: http://example.org/notes\nDocs: http://example.org/docs\n",
		"photo.png":           "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
		"song.mp3":            "ID3\x03\x00\x00\x00",
		"junk.bin":            "abc\x00def",
		".hidden.eml":         eml("hidden"),
		".git/config":         "[core]\n",
		"outlook.msg":         "\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1\x00\x00",
		"dovecot.index.log":   "x",
		"empty-folder/":       "",
		"lists/.mh_sequences": "unseen: 1\n",
	})
	var onSkip []string
	r, ids, ms, err := readDirAll(t, root, &Options{OnSkip: func(s Skip) { onSkip = append(onSkip, s.Path) }})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a", "b", "i1", "i2", "text:notes.txt", "problem:outlook.msg", "g1", "z1", "z2", "x"}
	if !slices.Equal(ids, want) {
		t.Errorf("read %q\nwant %q", ids, want)
	}
	if r.Format() != FormatFolder || r.FormatReason() == "" {
		t.Errorf("format %s (%s)", r.Format(), r.FormatReason())
	}
	wantSkips := []string{".hidden.eml", "dovecot.index.log", "junk.bin", "outlook.msg", "photo.png", "song.mp3", ".git", "lists/.mh_sequences"}
	if got := skipNames(t, root, r); !slices.Equal(got, wantSkips) || r.SkipCount() != len(wantSkips) || len(onSkip) != len(wantSkips) {
		t.Errorf("skipped %q (count %d, OnSkip %d)\nwant %q", got, r.SkipCount(), len(onSkip), wantSkips)
	}
	for _, s := range r.Skipped() {
		switch filepath.Base(s.Path) {
		case "outlook.msg":
			if !errors.Is(s.Err, ErrUnsupported) || !strings.Contains(s.Reason, ".eml") {
				t.Errorf("outlook: %+v", s)
			}
		case "photo.png":
			if s.Err != nil || !strings.Contains(s.Reason, "PNG") {
				t.Errorf("png: %+v", s)
			}
		}
	}
	// the message of an unsupported file says so too
	found := false
	for _, m := range ms {
		if filepath.Base(m.Path) == "outlook.msg" {
			found = len(m.Problems) == 1 && errors.Is(m.Problems[0], ErrUnreadable) && errors.Is(m.Problems[0], ErrUnsupported)
		}
	}
	if !found {
		t.Error("outlook.msg not returned as a message with its problem")
	}
	// loose files carry their name; mbox messages their offsets
	for _, m := range ms {
		if filepath.Base(m.Path) == "inbox" && m.MessageID == "i2" && m.Offset == 0 {
			t.Errorf("second message of an mbox in a folder at offset 0")
		}
		if filepath.Base(m.Path) == "a.eml" && (m.Name != "a.eml" || m.Format != FormatMessage) {
			t.Errorf("a.eml: name %q format %s", m.Name, m.Format)
		}
	}
}

// TestThunderbird: a Thunderbird profile's Local Folders: mbox files
// without a name ending, their .msf summaries and .sbd sub-folders.
func TestThunderbird(t *testing.T) {
	root := t.TempDir()
	tree(t, root, map[string]string{
		"Inbox":                 mboxOf("tb1", "tb2"),
		"Inbox.msf":             "// <!-- <mdb:mork:z v=\"1.4\"/> -->\n< <(a=c)> // (f=iso-8859-1)\n(B8=mailbox://nobody@Local%20Folders/Inbox)>\n",
		"Trash":                 "",
		"msgFilterRules.dat":    "version=\"9\"\nlogging=\"no\"\n",
		"Archives.sbd/2001":     mboxOf("tb2001"),
		"Archives.sbd/2001.msf": "// <!-- <mdb:mork:z v=\"1.4\"/> -->\n",
	})
	r, ids, _, err := readDirAll(t, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	// an empty folder (Trash) holds no message: said as a Skip of its
	// own kind, not read as a text of 0 bytes
	if !slices.Equal(ids, []string{"tb1", "tb2", "tb2001"}) {
		t.Errorf("read %q", ids)
	}
	if got := skipNames(t, root, r); !slices.Equal(got, []string{"Inbox.msf", "Trash", "msgFilterRules.dat", "Archives.sbd/2001.msf"}) {
		t.Errorf("skipped %q", got)
	}
	for _, sk := range r.Skipped() {
		if want := filepath.Base(sk.Path) == "Trash"; (sk.Kind == SkipEmpty) != want || want && sk.Reason != "empty (0 bytes): no messages" {
			t.Errorf("%s: kind %v, %q", sk.Path, sk.Kind, sk.Reason)
		}
	}
}

// TestMaildirOutside: a Maildir with messages outside cur/ and new/, its
// metadata, a Maildir++ folder, and a folder of mbox files beside.
func TestMaildirOutside(t *testing.T) {
	root := t.TempDir()
	tree(t, root, map[string]string{
		"cur/1.host:2,S":        eml("c1"),
		"new/2.host":            eml("n1"),
		"tmp/3.host":            eml("tmp"),
		"dovecot-uidlist":       "3 V1 N2\n1 :1.host\n",
		"maildirfolder":         "",
		"saved.eml":             eml("saved"),
		".Sent/cur/4.host:2,S":  eml("sent"),
		".Sent/maildirfolder":   "",
		"archive/2001":          mboxOf("m2001"),
		"archive/cur-notes.txt": "see http://example.org/n\n",
	})
	r, ids, _, err := readDirAll(t, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"saved", "sent", "m2001", "text:archive/cur-notes.txt", "c1", "n1"}
	if !slices.Equal(ids, want) {
		t.Errorf("read %q\nwant %q", ids, want)
	}
	if r.Format() != FormatMaildir {
		t.Errorf("format %s", r.Format())
	}
	if got := skipNames(t, root, r); !slices.Equal(got, []string{"dovecot-uidlist", "maildirfolder", ".Sent/maildirfolder", "tmp/3.host"}) {
		t.Errorf("skipped %q", got)
	}
	for _, s := range r.Skipped() {
		if want := map[bool]SkipKind{true: SkipDelivering}[strings.HasPrefix(s.Path, filepath.Join(root, "tmp"))]; s.Kind != want {
			t.Errorf("%s: kind %v, want %v", s.Path, s.Kind, want)
		}
	}
}

// TestMaildirSkipKinds: a healthy Maildir (an empty tmp/) has nothing
// passed over (fails if its tmp/ is counted as a file that is not a
// message); the files of a tmp/ are SkipDelivering, a link to a
// directory and a hidden folder SkipDirectory, metadata SkipNotMessage.
func TestMaildirSkipKinds(t *testing.T) {
	root := t.TempDir()
	tree(t, root, map[string]string{
		"cur/1.host:2,S": eml("c1"),
		"new/":           "",
		"tmp/":           "",
	})
	r, ids, _, err := readDirAll(t, root, nil)
	if err != nil || !slices.Equal(ids, []string{"c1"}) {
		t.Fatalf("read %q, %v", ids, err)
	}
	if r.SkipCount() != 0 {
		t.Errorf("a healthy Maildir: skipped %+v", r.Skipped())
	}
	other := t.TempDir()
	tree(t, other, map[string]string{"x.eml": eml("x")})
	tree(t, root, map[string]string{
		"tmp/9.host":      eml("t"),
		"tmp/10.host":     eml("t2"),
		"dovecot-uidlist": "3 V1 N2\n",
	})
	os.Symlink(other, filepath.Join(root, "cur", "dirlink"))
	folder := t.TempDir()
	tree(t, folder, map[string]string{"a.eml": eml("a"), ".cache/x": "x"})
	kinds := map[string]SkipKind{}
	for _, dir := range []string{root, folder} {
		r, _, _, err := readDirAll(t, dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range r.Skipped() {
			rel, _ := filepath.Rel(dir, s.Path)
			kinds[rel] = s.Kind
		}
	}
	want := map[string]SkipKind{
		"tmp/9.host": SkipDelivering, "tmp/10.host": SkipDelivering, "cur/dirlink": SkipDirectory,
		"dovecot-uidlist": SkipNotMessage, ".cache": SkipDirectory,
	}
	if !maps.Equal(kinds, want) {
		t.Errorf("kinds %v\nwant  %v", kinds, want)
	}
	if SkipDelivering.String() == SkipNotMessage.String() || SkipDirectory.String() == SkipNotMessage.String() {
		t.Error("kinds worded alike")
	}
}

// TestDirSpecialFiles: FIFOs (also named first in an MH folder, and
// behind a symbolic link), a symbolic link to a directory, a dangling
// link and an unreadable sub-folder are reported and passed over; the
// rest is read.
func TestDirSpecialFiles(t *testing.T) {
	for _, layout := range []string{"maildir", "mh", "folder"} {
		t.Run(layout, func(t *testing.T) {
			root := t.TempDir()
			var msgDir string
			var names [3]string
			switch layout {
			case "maildir":
				msgDir = filepath.Join(root, "cur")
				names = [3]string{"1.a:2,S", "2.fifo", "3.b:2,S"}
			case "mh":
				msgDir = root
				names = [3]string{"2", "1", "3"} // the FIFO is named first
			case "folder":
				msgDir = root
				names = [3]string{"a.eml", "b.fifo", "c.eml"}
			}
			tree(t, msgDir, map[string]string{names[0]: eml("first"), names[2]: eml("last")})
			if layout == "maildir" {
				tree(t, root, map[string]string{"new/": ""})
			}
			if err := mkfifo(filepath.Join(msgDir, names[1]), 0o644); err != nil {
				t.Skip("no FIFOs here:", err)
			}
			os.Symlink(filepath.Join(msgDir, names[1]), filepath.Join(msgDir, "0link-to-fifo"))
			other := t.TempDir()
			tree(t, other, map[string]string{"x.eml": eml("elsewhere")})
			os.Symlink(other, filepath.Join(msgDir, "0link-to-dir"))
			os.Symlink(filepath.Join(root, "nowhere"), filepath.Join(msgDir, "0dangling"))
			r, ids, _, err := readDirAll(t, root, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids, []string{"first", "last"}) && !slices.Equal(ids, []string{"last", "first"}) {
				t.Errorf("read %q", ids)
			}
			reasons := map[string]string{}
			for _, s := range r.Skipped() {
				reasons[filepath.Base(s.Path)] = s.Reason
			}
			for name, want := range map[string]string{
				names[1]: "FIFO", "0link-to-fifo": "FIFO", "0link-to-dir": "directory, not followed", "0dangling": "cannot be followed",
			} {
				if !strings.Contains(reasons[name], want) {
					t.Errorf("%s: skip reason %q, want %q", name, reasons[name], want)
				}
			}
		})
	}
}

func TestUnreadableSubfolder(t *testing.T) {
	if testutil.AsNobody(t) { // root reads any folder: chmod 000 would check nothing
		return
	}
	root := t.TempDir()
	tree(t, root, map[string]string{"cur/1.a": eml("before"), ".Locked/cur/2.b": eml("locked"), ".Later/cur/3.c": eml("after"), "new/": ""})
	locked := filepath.Join(root, ".Locked")
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(locked, 0o755)
	r, ids, _, err := readDirAll(t, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []string{"after", "before"}) {
		t.Errorf("read %q", ids)
	}
	if got := skipNames(t, root, r); !slices.Equal(got, []string{".Locked"}) || r.Skipped()[0].Err == nil {
		t.Errorf("skipped %q %+v", got, r.Skipped())
	}
	// an unreadable file: a message with the problem, and a skip
	tree(t, root, map[string]string{"cur/0.z": eml("z")})
	os.Chmod(filepath.Join(root, "cur/0.z"), 0)
	_, ids, _, _ = readDirAll(t, root, nil)
	if !slices.Contains(ids, "problem:cur/0.z") {
		t.Errorf("unreadable file: %q", ids)
	}
	// named alone: the file and the folder are *InputErrors from Open
	for _, p := range []string{filepath.Join(root, "cur/0.z"), locked} {
		_, err := Open(p, nil)
		var ie *InputError
		if !errors.As(err, &ie) || ie.Path != p || !errors.Is(err, os.ErrPermission) {
			t.Errorf("Open(%s): %v", p, err)
		}
	}
}

// TestUnreadableMaildirTmp: a Maildir's tmp/ that cannot be listed is
// an entry that could not be read, as any folder (Skip.Err set, so that
// the commands count it as input not read), not a file being delivered;
// the messages in cur/ and new/ are read.
func TestUnreadableMaildirTmp(t *testing.T) {
	if testutil.AsNobody(t) { // root lists any folder: chmod 000 would check nothing
		return
	}
	root := t.TempDir()
	tree(t, root, map[string]string{"cur/1.a:2,S": eml("cur"), "new/2.b": eml("new"), "tmp/3.c": eml("delivering")})
	tmp := filepath.Join(root, "tmp")
	if err := os.Chmod(tmp, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(tmp, 0o755)
	var seen []Skip
	r, ids, _, err := readDirAll(t, root, &Options{OnSkip: func(s Skip) { seen = append(seen, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []string{"cur", "new"}) && !slices.Equal(ids, []string{"new", "cur"}) {
		t.Errorf("read %q", ids)
	}
	sk := r.Skipped()
	if len(sk) != 1 || sk[0].Path != tmp || !errors.Is(sk[0].Err, os.ErrPermission) || sk[0].Kind != SkipNotMessage ||
		!strings.Contains(sk[0].Reason, "tmp/") || len(seen) != 1 || seen[0].Err == nil {
		t.Errorf("skipped %+v (OnSkip saw %+v); want tmp/ with its error", sk, seen)
	}
}

// TestDirWithoutMessages: an empty directory, or one of skipped files
// only, is an error, not a silent nothing.
func TestDirWithoutMessages(t *testing.T) {
	empty := t.TempDir()
	binary := t.TempDir()
	tree(t, binary, map[string]string{"a.png": "\x89PNG\r\n\x1a\n", "sub/b.jpg": "\xff\xd8\xff\xe0"})
	for _, root := range []string{empty, binary} {
		_, ids, _, err := readDirAll(t, root, nil)
		var ie *InputError
		if !errors.As(err, &ie) || ie.Path != root || !errors.Is(err, errNoMessages) {
			t.Errorf("%s: %q, %v", root, ids, err)
		}
	}
	// everything passed over by SkipFile (an index that has it all) is
	// not an error
	full := t.TempDir()
	tree(t, full, map[string]string{"cur/1.a": eml("a")})
	_, ids, _, err := readDirAll(t, full, &Options{SkipFile: func(string, int64, time.Time) bool { return true }})
	if err != nil || len(ids) != 0 {
		t.Errorf("all skipped by SkipFile: %q %v", ids, err)
	}
}

// TestINNStorage: a timehash tree is read (the groups from Xref:);
// timecaf and CNFS files are reported with how to read them.
func TestINNStorage(t *testing.T) {
	root := t.TempDir()
	art := func(id, xref string) string {
		return "Path: local!not-for-mail\r\nFrom: a@example.org\r\nNewsgroups: alt.test\r\nSubject: " + id +
			"\r\nMessage-ID: <" + id + ">\r\nXref: local " + xref + "\r\n\r\nhttp://example.org/" + id + "\r\n.\r\n"
	}
	tree(t, root, map[string]string{
		"time-3f/12/ab/1234-5678": art("th1", "alt.test:1 comp.lang.go:4"),
		"time-3f/12/ac/1235-5678": art("th2", "alt.test:2"),
		"timecaf-00/01/0100.CF":   "CRMT\x00\x00\x00\x01binary caf",
		"cycbuffs/one":            "CBuf4\x00\x00\x00",
		"alt/test/1":              art("trad", "alt.test:1"),
	})
	r, ids, ms, err := readDirAll(t, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []string{"trad", "problem:cycbuffs/one", "th1", "th2", "problem:timecaf-00/01/0100.CF"}) {
		t.Errorf("read %q", ids)
	}
	for _, m := range ms {
		if m.MessageID == "th1" && (m.Format != FormatSpool || m.Name != "alt.test:1" || !slices.Equal(m.Groups, []string{"alt.test:1", "comp.lang.go:4"}) || bytes.HasSuffix(m.Raw, []byte(".\r\n"))) {
			t.Errorf("timehash article: %s %q %q", m.Format, m.Name, m.Groups)
		}
	}
	n := 0
	for _, s := range r.Skipped() {
		if errors.Is(s.Err, ErrUnsupported) && strings.Contains(s.Reason, "sm(1)") {
			n++
		}
	}
	if n != 2 {
		t.Errorf("skips %+v", r.Skipped())
	}
	// the same files named alone
	for _, p := range []string{"timecaf-00/01/0100.CF", "cycbuffs/one"} {
		_, err := Open(filepath.Join(root, p), nil)
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(fmt.Sprint(err), "sm(1)") {
			t.Errorf("Open(%s): %v", p, err)
		}
	}
}

func TestUnreadFormat(t *testing.T) {
	for _, c := range []struct {
		head, want string
		err        error
	}{
		{"\x89PNG\r\n\x1a\n", "PNG", nil},
		{"GIF89a..", "GIF", nil},
		{"P4\n16 16\n\xfb\x7f", "PBM", nil},
		{"P6 640 480 255\n", "PPM", nil},
		{"%PDF-1.4\n", "PDF", nil},
		{"RIFF\x24\x00\x00\x00WAVE", "RIFF", nil},
		{"\x00\x00\x00\x18ftypmp42", "MP4", nil},
		{".snd\x00\x00\x00\x22", "NUL", nil},
		{"CRMT\x00\x00", "timecaf", ErrUnsupported},
		{"CBuf3\x00", "CNFS", ErrUnsupported},
		{"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "Outlook", ErrUnsupported},
		// read
		{"From: a@b\nSubject: P4\n\n", "", nil},
		{"P4 is a plan\n", "", nil},
		{"MZ is a prefix of text\n", "", nil},
		{"\x1f\x8b\x08\x00", "", nil}, // gzip: read
		{"caf\xe9 Latin-1 text http://example.org/\n", "", nil},
	} {
		why, err := unreadFormat([]byte(c.head), "x")
		if !strings.Contains(why, c.want) || (c.want == "") != (why == "") || !errors.Is(err, c.err) || (err == nil) != (c.err == nil) {
			t.Errorf("unreadFormat(%q) = %q, %v; want %q, %v", c.head, why, err, c.want, c.err)
		}
	}
}

// TestCompressedMessagesInFolders: Dovecot's Maildir compression writes
// messages gzip-, bzip2-, xz- or zstd-compressed in cur/ ("Z" in the
// flags); an MH message may be gzip'd too. They are decompressed (fails
// if they are read as junk text, their links lost); one cut short is
// read as far as it goes and reported with its name and the offset
// reached in the decompressed data.
func TestCompressedMessagesInFolders(t *testing.T) {
	root := t.TempDir()
	cut := compressWith(t, "gz", []byte(eml("cut")+strings.Repeat("more text http://example.org/more\n", 2000)))
	bz2, err := os.ReadFile("../testdata/mail/mboxrd.mbox.bz2") // (an mbox: read here as one message)
	if err != nil {
		t.Fatal(err)
	}
	tree(t, root, map[string]string{
		"md/cur/1700000006.M1P2.host,S=99:2,SZ": string(bz2),
		"md/cur/1700000000.M1P2.host,S=99:2,SZ": string(compressWith(t, "gz", []byte(eml("gz")))),
		"md/cur/1700000001.M1P2.host,S=99:2,SZ": string(compressWith(t, "zst", []byte(eml("zst")))),
		"md/new/1700000002.M1P2.host,S=99:2,Z":  string(compressWith(t, "xz", []byte(eml("xz")))),
		"md/cur/1700000003.M1P2.host:2,S":       eml("plain"),
		"md/cur/1700000004.M1P2.host,S=99:2,SZ": string(cut[:len(cut)/2]),
		"md/cur/1700000005.M1P2.host,S=99:2,SZ": "\xef\xbb\xbf" + eml("bom"), // (not compressed)
		"mh/1":                                  gz(eml("mh1")),
		"mh/2":                                  eml("mh2"),
	})
	r, ids, ms, err := readDirAll(t, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*Message{}
	for i, m := range ms {
		got[ids[i]] = m
	}
	for _, id := range []string{"gz", "zst", "xz", "plain", "bom", "mh1", "mh2", "cut"} {
		m := got[id]
		if m == nil {
			t.Errorf("message %s not read: %q", id, ids)
			continue
		}
		text := ""
		for _, p := range m.Parts() {
			text += string(p.Text)
		}
		if !strings.Contains(text, "http://example.org/"+id) {
			t.Errorf("%s: link lost, text %q", id, text)
		}
		if id != "cut" && len(m.Problems) > 0 {
			t.Errorf("%s: problems %v", id, m.Problems)
		}
		if m.Name == "" || m.Format != FormatMaildir && m.Format != FormatMH {
			t.Errorf("%s: name %q format %s", id, m.Name, m.Format)
		}
	}
	if m := got["9403231758.AA14263@ptpc00.cern.ch"]; m == nil || m.FromLine == "" || !strings.Contains(string(m.Parts()[0].Text), "http://info.cern.ch/hypertext/WWW/Addressing/URL/Overview.html") {
		t.Errorf("bzip2 message not read: %q", ids)
	}
	bad := got["problem:md/cur/1700000004.M1P2.host,S=99:2,SZ"]
	var ie *InputError
	if bad == nil || !errors.As(bad.Problems[0], &ie) || ie.Offset <= 0 || !strings.HasSuffix(ie.Path, "1700000004.M1P2.host,S=99:2,SZ") ||
		!strings.Contains(ie.Err.Error(), "gzip data truncated") {
		t.Fatalf("truncated message not reported: %q %v", ids, bad)
	}
	if len(r.Skipped()) != 1 || r.Skipped()[0].Err == nil {
		t.Errorf("skips %+v", r.Skipped())
	}
	if ie.Offset > int64(len(eml("cut"))+2000*34) || ie.Offset < int64(len(eml("cut"))) {
		t.Errorf("offset %d not in the decompressed data", ie.Offset)
	}
}

// TestBinaryInMaildirAndMH: images and other binary files in a Maildir's
// cur/ and new/ and numbered in an MH folder are skipped and counted as
// in any other folder (fails if they are read as junk messages);
// a message with a NUL byte near its start is still read.
func TestBinaryInMaildirAndMH(t *testing.T) {
	root := t.TempDir()
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + strings.Repeat("\x00\x01", 50)
	tree(t, root, map[string]string{
		"md/cur/1.png": png,
		"md/cur/2:2,S": eml("two"),
		"md/cur/3.bin": "junk\x00\x01\x02 random bytes\x00",
		"md/new/4.png": png,
		"md/new/5":     "From: a@example.org\nMessage-ID: <nul>\n\nhttp://example.org/nul \x00 x\n",
		"mh/1":         eml("mh1"),
		"mh/5":         png,
	})
	r, ids, _, err := readDirAll(t, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []string{"two", "nul", "mh1"}) {
		t.Errorf("read %q", ids)
	}
	skips := skipNames(t, root, r)
	slices.Sort(skips)
	if !slices.Equal(skips, []string{"md/cur/1.png", "md/cur/3.bin", "md/new/4.png", "mh/5"}) {
		t.Errorf("skipped %q", skips)
	}
	for _, s := range r.Skipped() {
		if !strings.HasPrefix(s.Reason, "binary file") || s.Err != nil {
			t.Errorf("skip %+v", s)
		}
	}
}

// TestMHOnlyNumbered: in an MH folder and a news spool only numeric files
// are messages: a rewrite's backup (1.orig), an editor's 1~ and any other
// file are skipped and said so, never read as a second copy of the
// message; a folder with as many other files as numeric ones (mboxes, one
// named by its year) is a folder, each file read.
func TestMHOnlyNumbered(t *testing.T) {
	root := t.TempDir()
	art := "Newsgroups: a.b\nPath: x!not-for-mail\nMessage-ID: <s1>\n\nhttp://example.org/s\n"
	tree(t, root, map[string]string{
		"mh/1":          eml("mh1"),
		"mh/2":          eml("mh2"),
		"mh/1.orig":     eml("mh1"),
		"mh/2~":         eml("mh2"),
		"mh/notes":      eml("notes"),
		"spool/1":       art,
		"spool/1.orig":  art,
		"mail/2019":     mboxOf("y2019"),
		"mail/inbox":    mboxOf("inbox"),
		"mail/sent.eml": eml("sent"),
	})
	for _, c := range []struct {
		dir, format string
		ids, skips  []string
	}{
		{"mh", "mh", []string{"mh1", "mh2"}, []string{"mh/1.orig", "mh/2~", "mh/notes"}},
		{"spool", "spool", []string{"s1"}, []string{"spool/1.orig"}},
		{"mail", "folder", []string{"y2019", "inbox", "sent"}, nil},
	} {
		r, ids, _, err := readDirAll(t, filepath.Join(root, c.dir), nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(r.Format()) != c.format || !slices.Equal(ids, c.ids) {
			t.Errorf("%s: format %s, read %q; want %s, %q", c.dir, r.Format(), ids, c.format, c.ids)
		}
		var skips []string
		for _, s := range r.Skipped() {
			rel, _ := filepath.Rel(root, s.Path)
			skips = append(skips, rel)
			if s.Reason != notNumbered || s.Err != nil {
				t.Errorf("%s: %+v", rel, s)
			}
		}
		slices.Sort(skips)
		if !slices.Equal(skips, c.skips) {
			t.Errorf("%s: skipped %q, want %q", c.dir, skips, c.skips)
		}
	}
}
