package writeback

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/linkscan/linkscan/internal/output"
	"github.com/linkscan/linkscan/internal/testutil"
	"github.com/linkscan/linkscan/mailbox"
)

// readMessages reads the messages of the file name as the command does
// (format as detected, or forced; headers parsed).
func readMessages(t testing.TB, name string, format mailbox.Format) []*mailbox.Message {
	t.Helper()
	rd, err := mailbox.Open(name, &mailbox.Options{Format: format, MaxMessageSize: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var ms []*mailbox.Message
	for {
		m, err := rd.Next()
		if m != nil {
			ms = append(ms, m)
		}
		if err == io.EOF {
			return ms
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// change is the rewrite of the tests: every "http://old.example/"
// becomes "https://new.example.org/", and every "<from>" "From" (a
// line that an mbox reader would take for a message's start, unless
// quoted).
func change(raw []byte) []byte {
	raw = bytes.ReplaceAll(raw, []byte("http://old.example/"), []byte("https://new.example.org/"))
	return bytes.ReplaceAll(raw, []byte("<from>"), []byte("From"))
}

// expected is the file b with each message m of ms changed (change)
// where it holds a link to change: b's bytes elsewhere, and From quoting
// for an mbox message without Content-Length.
func expected(b []byte, ms []*mailbox.Message) []byte {
	var out []byte
	pos := int64(0)
	for _, m := range ms {
		n := change(m.Raw)
		if bytes.Equal(n, m.Raw) {
			continue
		}
		if m.Format == mailbox.FormatMbox && m.Header.Get("Content-Length") == "" {
			n = QuoteNewFromLines(m.Raw, n)
		}
		out = append(out, b[pos:m.RawOffset]...)
		out = append(out, n...)
		pos = m.RawOffset + int64(len(m.Raw))
	}
	return append(out, b[pos:]...)
}

// writeBack writes file name to target with the messages ms changed,
// and returns the first error (the File aborted then).
func writeBack(name, target string, ms []*mailbox.Message, o *Options) (Result, error) {
	src, err := os.Open(name)
	if err != nil {
		return Result{}, err
	}
	f, err := Create(name, src, target, o)
	if err != nil {
		return Result{}, err
	}
	for _, m := range ms {
		out := change(m.Raw)
		if bytes.Equal(out, m.Raw) {
			continue
		}
		if differs, err := f.Replace(m, out); differs || err != nil {
			f.Abort()
			return Result{}, fmt.Errorf("differs %v, %w", differs, err)
		}
	}
	if err := f.Flush(); err != nil {
		f.Abort()
		return Result{}, err
	}
	return f.Commit()
}

const testMbox = "From a@b Mon Jan  1 00:00:00 2001\nFrom: a@b\nMessage-ID: <1@x>\n\nSee http://old.example/one.\n\n" +
	"junk between\n\n" +
	"From a@b Mon Jan  1 00:00:00 2001\nFrom: a@b\nMessage-ID: <2@x>\n\nNothing to change.\n\n" +
	"From a@b Mon Jan  1 00:00:00 2001\nFrom: a@b\nMessage-ID: <3@x>\n\n>From the list: http://old.example/three\n<from> the splicer\n"

// tempFiles lists the temporary files of internal/output in dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	l, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*"))
	return l
}

// TestWriteTarget: -o's case: the target gets the file with the changed
// messages replaced, every other byte copied; the input is untouched.
func TestWriteTarget(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "in.mbox")
	os.WriteFile(name, []byte(testMbox), 0o644)
	ms := readMessages(t, name, mailbox.FormatAuto)
	if len(ms) != 3 {
		t.Fatalf("%d messages", len(ms))
	}
	target := filepath.Join(dir, "out.mbox")
	os.WriteFile(target, []byte("old\n"), 0o600)
	res, err := writeBack(name, target, ms, nil)
	if err != nil || res != (Result{Name: target}) {
		t.Fatalf("%+v, %v", res, err)
	}
	want := expected([]byte(testMbox), ms)
	if got, _ := os.ReadFile(target); !bytes.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if !bytes.Contains(want, []byte("https://new.example.org/three")) || bytes.Contains(want, []byte("http://old.example/")) ||
		!bytes.Contains(want, []byte("\n>From the splicer\n")) {
		t.Fatalf("the test's change did not happen: %s", want)
	}
	if got, _ := os.ReadFile(name); string(got) != testMbox {
		t.Fatal("the input changed")
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o600 {
		t.Errorf("the target's mode is %v, not the old file's", fi.Mode())
	}
	if l := tempFiles(t, dir); len(l) > 0 {
		t.Fatalf("temporary files left: %v", l)
	}
}

// TestInPlace: in place, a file with a change is replaced (a backup
// kept on request, a hard link to the old file); a file without one is
// not touched, not even its time, and no file is left beside it.
func TestInPlace(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "in.mbox")
	os.WriteFile(name, []byte(testMbox), 0o644)
	ms := readMessages(t, name, mailbox.FormatAuto)
	res, err := writeBack(name, name, ms, &Options{InPlace: true, Backup: ".bak"})
	if err != nil || res.Name != name || res.Untouched {
		t.Fatalf("%+v, %v", res, err)
	}
	if got, _ := os.ReadFile(name); !bytes.Equal(got, expected([]byte(testMbox), ms)) {
		t.Fatalf("in place:\n%s", got)
	}
	if got, _ := os.ReadFile(name + ".bak"); string(got) != testMbox {
		t.Fatalf("backup:\n%s", got)
	}

	plain := filepath.Join(dir, "plain.mbox")
	body := strings.NewReplacer("http://old.example/", "http://other.example/", "<from>", "from").Replace(testMbox)
	os.WriteFile(plain, []byte(body), 0o644)
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	os.Chtimes(plain, old, old)
	res, err = writeBack(plain, plain, readMessages(t, plain, mailbox.FormatAuto), &Options{InPlace: true, Backup: ".bak"})
	if err != nil || res != (Result{Untouched: true}) {
		t.Fatalf("unchanged: %+v, %v", res, err)
	}
	if fi, _ := os.Stat(plain); !fi.ModTime().Equal(old) {
		t.Fatalf("an unchanged file was touched: %v", fi.ModTime())
	}
	if _, err := os.Stat(plain + ".bak"); err == nil {
		t.Fatal("a backup of an unchanged file")
	}
	if l := tempFiles(t, dir); len(l) > 0 {
		t.Fatalf("temporary files left: %v", l)
	}
}

// TestWriteFailures: a write of the output that fails after any number
// of bytes leaves the target as it was and no temporary file, in place
// or not; the error comes out of Replace, Flush or Commit.
func TestWriteFailures(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "in.mbox")
	var big strings.Builder
	for i := range 300 { // past the 64 KiB buffer
		fmt.Fprintf(&big, "From a@b Mon Jan  1 00:00:00 2001\nMessage-ID: <%d@x>\n\nSee http://old.example/%d and some more text to fill the line.\n%s\n", i, i, strings.Repeat("filler line\n", 20))
	}
	os.WriteFile(name, []byte(big.String()), 0o644)
	ms := readMessages(t, name, mailbox.FormatAuto)
	want := expected([]byte(big.String()), ms)
	sum := sha256.Sum256([]byte(big.String()))
	target := filepath.Join(dir, "out.mbox")
	for _, inPlace := range []bool{false, true} {
		for _, n := range []int{0, 1, 100, 4096, 65535, 65536, 65537, 100000, len(want) - 1, len(want)} {
			os.WriteFile(target, []byte("old\n"), 0o644)
			dst, old := target, []byte("old\n")
			if inPlace {
				dst, old = name, []byte(big.String())
			}
			wrap := func(w io.Writer) io.Writer { return &failWriter{w: w, n: n} }
			_, err := writeBack(name, dst, ms, &Options{InPlace: inPlace, Wrap: wrap})
			got, _ := os.ReadFile(dst)
			switch {
			case n >= len(want):
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("in place %v, no failure: %v", inPlace, err)
				}
				os.WriteFile(name, []byte(big.String()), 0o644) // again, for the next
			case !errors.Is(err, errInjected):
				t.Fatalf("in place %v, fail after %d: error %v", inPlace, n, err)
			case !bytes.Equal(got, old):
				t.Fatalf("in place %v, fail after %d: the target changed", inPlace, n)
			}
			if l := tempFiles(t, dir); len(l) > 0 {
				t.Fatalf("in place %v, fail after %d: temporary files left: %v", inPlace, n, l)
			}
		}
	}
	if got, _ := os.ReadFile(name); sha256.Sum256(got) != sum {
		t.Fatal("the input is not as it was")
	}
}

// TestBackupFails: a backup that cannot be made is a *BackupError, and
// the file stays as it was.
func TestBackupFails(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "in.mbox")
	os.WriteFile(name, []byte(testMbox), 0o644)
	os.Mkdir(name+".bak", 0o755) // in the way: neither link nor copy
	os.WriteFile(filepath.Join(name+".bak", "x"), nil, 0o644)
	_, err := writeBack(name, name, readMessages(t, name, mailbox.FormatAuto), &Options{InPlace: true, Backup: ".bak"})
	var be *BackupError
	if !errors.As(err, &be) || !strings.HasPrefix(err.Error(), "backup: ") {
		t.Fatalf("error %v", err)
	}
	if got, _ := os.ReadFile(name); string(got) != testMbox {
		t.Fatal("the file changed")
	}
	if l := tempFiles(t, dir); len(l) > 0 {
		t.Fatalf("temporary files left: %v", l)
	}
}

// TestReplaceDiffers: a file changed between its reading and its
// writing: the message whose bytes differ is copied as the file has it
// (differs), the others are replaced.
func TestReplaceDiffers(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "in.mbox")
	os.WriteFile(name, []byte(testMbox), 0o644)
	ms := readMessages(t, name, mailbox.FormatAuto)
	now := strings.Replace(testMbox, "<1@x>", "<1@y>", 1) // same length
	os.WriteFile(name, []byte(now), 0o644)
	src, _ := os.Open(name)
	var buf bytes.Buffer
	bw := bufio.NewWriter(&buf)
	f := NewStream(name, src, bw)
	if differs, err := f.Replace(ms[0], change(ms[0].Raw)); !differs || err != nil {
		t.Fatalf("first message: differs %v, %v", differs, err)
	}
	if differs, err := f.Replace(ms[2], change(ms[2].Raw)); differs || err != nil {
		t.Fatalf("third message: differs %v, %v", differs, err)
	}
	if err := f.Flush(); err != nil {
		t.Fatal(err)
	}
	if res, err := f.Commit(); res != (Result{}) || err != nil {
		t.Fatalf("stream Commit: %+v, %v", res, err)
	}
	want := expected([]byte(now), ms[2:])
	if buf.String() != string(want) {
		t.Fatalf("got\n%s\nwant\n%s", buf.String(), want)
	}

	// shorter than read: an error, nothing more written
	src, _ = os.Open(name)
	os.Truncate(name, ms[2].RawOffset+5)
	f = NewStream(name, src, bufio.NewWriter(io.Discard))
	if _, err := f.Replace(ms[2], change(ms[2].Raw)); err == nil || !strings.Contains(err.Error(), "shorter than read") {
		t.Fatalf("truncated file: %v", err)
	}
	f.Abort()
	// out of order
	src, _ = os.Open(name)
	f = NewStream(name, src, bufio.NewWriter(io.Discard))
	f.Replace(ms[1], ms[1].Raw)
	if _, err := f.Replace(ms[0], ms[0].Raw); err == nil || !strings.Contains(err.Error(), "out of order") {
		t.Fatalf("out of order: %v", err)
	}
	f.Abort()
}

// TestMaildirRename: a Maildir message whose name has ,S= and ,W= is
// put in place under a name with the new sizes, and the old name goes
// after the new one is there (BetweenNames sees both).
func TestMaildirRename(t *testing.T) {
	md := t.TempDir()
	for _, sub := range []string{"cur", "new", "tmp"} {
		os.Mkdir(filepath.Join(md, sub), 0o755)
	}
	msg := "From: a@b\nMessage-ID: <m@x>\n\nSee http://old.example/m.\n"
	want := string(change([]byte(msg)))
	oldName := filepath.Join(md, "cur", fmt.Sprintf("1.2.h,S=%d,W=%d:2,S", len(msg), virtualSize([]byte(msg))))
	newName := filepath.Join(md, "cur", fmt.Sprintf("1.2.h,S=%d,W=%d:2,S", len(want), virtualSize([]byte(want))))
	os.WriteFile(oldName, []byte(msg), 0o644)
	between := 0
	o := &Options{InPlace: true, BetweenNames: func() {
		between++
		if a, b := readOr(oldName), readOr(newName); a != msg || b != want {
			t.Errorf("between the names: old %q, new %q", a, b)
		}
	}}
	in := func(name string) []*mailbox.Message {
		var ms []*mailbox.Message
		for _, m := range readMessages(t, md, mailbox.FormatAuto) {
			if m.Path == name && m.Format == mailbox.FormatMaildir {
				ms = append(ms, m)
			}
		}
		if len(ms) != 1 {
			t.Fatalf("%s: %d messages", name, len(ms))
		}
		return ms
	}
	res, err := writeBack(oldName, oldName, in(oldName), o)
	if err != nil || res != (Result{Name: newName}) || between != 1 {
		t.Fatalf("%+v, %v, between %d", res, err, between)
	}
	ents, _ := os.ReadDir(filepath.Join(md, "cur"))
	if len(ents) != 1 || readOr(newName) != want {
		t.Fatalf("after: %v", ents)
	}
	// sizes that cannot be trusted: the name stays
	bad := filepath.Join(md, "cur", "2.2.h,S=12x:2,S")
	os.WriteFile(bad, []byte(msg), 0o644)
	res, err = writeBack(bad, bad, in(bad), &Options{InPlace: true})
	if err != nil || res != (Result{Name: bad, SizesKept: true}) || readOr(bad) != want {
		t.Fatalf("bad sizes: %+v, %v", res, err)
	}
}

// readOr is the content of file name, or "" when it cannot be read.
func readOr(name string) string {
	b, _ := os.ReadFile(name)
	return string(b)
}

// TestSameInFile: the old bytes are compared through any buffer and any
// reader, a bare-CR file's CR read as the LF a reader gave, and all of
// them read even when they differ early.
func TestSameInFile(t *testing.T) {
	tests := []struct {
		file, raw  string
		bareCR     bool
		same       bool
		err        bool
		readsAfter string // what the reader holds after
	}{
		{"abc\ndef\nrest", "abc\ndef\n", false, true, false, "rest"},
		{"abX\ndef\nrest", "abc\ndef\n", false, false, false, "rest"},
		{"abc\rdef\rrest", "abc\ndef\n", true, true, false, "rest"},
		{"abc\rdef\rrest", "abc\ndef\n", false, false, false, "rest"},
		{"abc\ndef\nrest", "abc\ndef\n", true, true, false, "rest"}, // an LF is an LF
		{"abc\n", "abc\ndef\n", false, false, true, ""},
		{"", "", false, true, false, ""},
	}
	for _, tc := range tests {
		for _, size := range []int{1, 2, 3, 64} {
			for name, wrap := range map[string]func(io.Reader) io.Reader{"plain": func(r io.Reader) io.Reader { return r }, "one byte": iotest.OneByteReader, "half": iotest.HalfReader} {
				r := strings.NewReader(tc.file)
				same, err := sameInFile(wrap(r), []byte(tc.raw), tc.bareCR, make([]byte, size))
				if same != tc.same || (err != nil) != tc.err {
					t.Errorf("%q against %q (bare CR %v), buffer %d, %s: %v, %v", tc.file, tc.raw, tc.bareCR, size, name, same, err)
				}
				if rest, _ := io.ReadAll(r); !tc.err && string(rest) != tc.readsAfter {
					t.Errorf("%q against %q, buffer %d, %s: left %q", tc.file, tc.raw, size, name, rest)
				}
			}
		}
	}
}

// FuzzSameInFile: sameInFile agrees with a comparison of the whole
// bytes, CR taken as LF in a bare-CR file, whatever the buffer.
func FuzzSameInFile(f *testing.F) {
	f.Add([]byte("a\rb\r"), []byte("a\nb\n"), true, 1)
	f.Add([]byte("a\nb"), []byte("a\nb"), false, 2)
	f.Fuzz(func(t *testing.T, file, raw []byte, bareCR bool, size int) {
		if size <= 0 || size > 1<<16 {
			size = 1
		}
		want := len(file) >= len(raw)
		if want {
			b := bytes.Clone(file[:len(raw)])
			if bareCR {
				b = bytes.ReplaceAll(b, []byte("\r"), []byte("\n"))
			}
			want = bytes.Equal(b, raw)
		}
		same, err := sameInFile(bytes.NewReader(file), raw, bareCR, make([]byte, size))
		if (err != nil) != (len(file) < len(raw)) || same != want {
			t.Fatalf("%q against %q (bare CR %v): %v, %v", file, raw, bareCR, same, err)
		}
	})
}

// FuzzWriteBack reads any bytes as an mbox and writes them back: with
// every message given its own bytes, the file comes back byte for byte;
// with the test's change, each changed message's bytes are replaced and
// every other byte is the file's.
func FuzzWriteBack(f *testing.F) {
	f.Add([]byte(testMbox))
	f.Add([]byte("From a\nX: y\n\nhttp://old.example/\nFrom b\n\nhttp://old.example/ http://old.example/\n"))
	f.Add([]byte("From a\rX: y\r\rhttp://old.example/\r")) // bare CR
	f.Add([]byte("From a\nContent-Length: 30\n\nFrom http://old.example/x\n\nFrom b\n\nx\n"))
	f.Add([]byte("From a\nContent-Length: 12\n\n<from> x\nFrom b\n\n<from> y\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		name := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(name, b, 0o644); err != nil {
			t.Fatal(err)
		}
		ms := readMessages(t, name, mailbox.FormatMbox)
		for _, m := range ms {
			if len(m.Holes) > 0 {
				t.Skip("a message with holes")
			}
		}
		// no change: the file itself
		src, _ := os.Open(name)
		var buf bytes.Buffer
		w := NewStream(name, src, bufio.NewWriter(&buf))
		for _, m := range ms {
			if m.BareCR() {
				continue // Raw holds LF where the file has CR
			}
			if differs, err := w.Replace(m, m.Raw); differs || err != nil {
				t.Fatalf("message at %d: differs %v, %v", m.RawOffset, differs, err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		w.Commit()
		if !bytes.Equal(buf.Bytes(), b) {
			t.Fatalf("no change: got %q, want %q", buf.Bytes(), b)
		}
		// changed (to a stream: a target's fsync makes a fuzz run crawl)
		src, _ = os.Open(name)
		buf.Reset()
		w = NewStream(name, src, bufio.NewWriter(&buf))
		for _, m := range ms {
			if out := change(m.Raw); !bytes.Equal(out, m.Raw) {
				if differs, err := w.Replace(m, out); differs || err != nil {
					t.Fatalf("message at %d: differs %v, %v", m.RawOffset, differs, err)
				}
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		w.Commit()
		if want := expected(b, ms); !bytes.Equal(buf.Bytes(), want) {
			t.Fatalf("changed: got %q, want %q", buf.Bytes(), want)
		}
	})
}

// TestMaildirIn: the cur/ or new/ of a Maildir that a path is, holds
// or lies in; nothing for an MH folder or a plain file.
func TestMaildirIn(t *testing.T) {
	root := t.TempDir()
	md := filepath.Join(root, "mail", "Box")
	for _, sub := range []string{"cur", "new", "tmp"} {
		os.MkdirAll(filepath.Join(md, sub), 0o755)
	}
	msg := filepath.Join(md, "cur", "1.2.h:2,S")
	os.WriteFile(msg, nil, 0o644)
	mh := filepath.Join(root, "mh")
	os.MkdirAll(filepath.Join(mh, "cur"), 0o755) // a cur/ alone is no Maildir
	os.WriteFile(filepath.Join(mh, "1"), nil, 0o644)
	tests := []struct{ path, want string }{
		{msg, filepath.Join(md, "cur")},
		{filepath.Join(md, "cur"), filepath.Join(md, "cur")},
		{md, filepath.Join(md, "cur")},
		{root, filepath.Join(md, "cur")},
		{filepath.Join(md, "tmp"), ""},
		{mh, ""},
		{filepath.Join(mh, "1"), ""},
		{filepath.Join(root, "missing"), ""},
	}
	for _, tc := range tests {
		if got := MaildirIn(tc.path); got != tc.want {
			t.Errorf("MaildirIn(%s) = %q, want %q", tc.path, got, tc.want)
		}
	}
}

// TestMirror: -o DIR's layout, the directory made.
func TestMirror(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ root, path, want string }{
		{"/a/b/in.mbox", "/a/b/in.mbox", "in.mbox"},
		{"/a/Mail/", "/a/Mail/cur/1:2,S", "Mail/cur/1:2,S"},
		{"Mail", "Mail/x/y", "Mail/x/y"},
	}
	for _, tc := range tests {
		got, err := Mirror(dir, tc.root, tc.path)
		if err != nil || got != filepath.Join(dir, tc.want) {
			t.Errorf("Mirror(%q, %q) = %q, %v, want %q", tc.root, tc.path, got, err, tc.want)
		}
		if fi, err := os.Stat(filepath.Dir(got)); err != nil || !fi.IsDir() {
			t.Errorf("Mirror(%q, %q): no directory for it", tc.root, tc.path)
		}
	}
}

// TestCheckMirror: a mirror directory that is an input, lies in one or
// holds one is refused; one beside them (a name sharing a prefix too)
// is not.
func TestCheckMirror(t *testing.T) {
	tests := []struct {
		dir   string
		paths []string
		bad   bool
	}{
		{"/a/out", []string{"/a/in", "/a/in.mbox"}, false},
		{"/a/in2", []string{"/a/in"}, false}, // a prefix of the name, not of the path
		{"/a/in", []string{"/b/x", "/a/in"}, true},
		{"/a/in/out", []string{"/a/in"}, true},
		{"/a", []string{"/a/in"}, true},
		{"/a/in/../out", []string{"/a/out/x"}, true}, // cleaned
		{"rel/out", []string{"rel"}, true},           // relative to the same directory
		{"rel/out", []string{"other"}, false},
	}
	for _, tc := range tests {
		err := CheckMirror(tc.dir, tc.paths)
		if (err != nil) != tc.bad || err != nil && !errors.Is(err, ErrMirrorOverlap) {
			t.Errorf("CheckMirror(%q, %q) = %v, want refused %v", tc.dir, tc.paths, err, tc.bad)
		}
	}
}

// TestMirrorMaildir: the mirror of a Maildir gets the directories it
// has, empty ones too, and nothing else.
func TestMirrorMaildir(t *testing.T) {
	root := filepath.Join(t.TempDir(), "Box")
	for _, sub := range []string{"cur", "new", "tmp", "other"} {
		os.MkdirAll(filepath.Join(root, sub), 0o755)
	}
	os.Remove(filepath.Join(root, "new"))
	dir := t.TempDir()
	MirrorMaildir(dir, root+"/")
	var got []string
	ents, _ := os.ReadDir(filepath.Join(dir, "Box"))
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, " ") != "cur tmp" {
		t.Fatalf("mirror holds %v", got)
	}
}

// TestGuard: the guard is given the output file and stopped once the
// File is done with, committed or aborted.
func TestGuard(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "in.mbox")
	os.WriteFile(name, []byte(testMbox), 0o644)
	for _, commit := range []bool{true, false} {
		var got *output.File
		stopped := 0
		o := &Options{Guard: func(f *output.File) func() { got = f; return func() { stopped++ } }}
		src, _ := os.Open(name)
		f, err := Create(name, src, filepath.Join(dir, "out"), o)
		if err != nil {
			t.Fatal(err)
		}
		if got == nil || got.Name() != f.Name() {
			t.Fatalf("guard given %v", got)
		}
		if commit {
			f.Flush()
			f.Commit()
		} else {
			f.Abort()
		}
		f.Abort()
		if stopped != 1 {
			t.Fatalf("commit %v: guard stopped %d times", commit, stopped)
		}
	}
}

// TestKillHelper is the process TestKill kills.
func TestKillHelper(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv("WRITEBACK_KILL_AFTER"))
	if err != nil {
		t.Skip("run by TestKill")
	}
	name := os.Getenv("WRITEBACK_KILL_FILE")
	wrap := func(w io.Writer) io.Writer {
		return &testutil.StallWriter{W: w, N: n, Mark: os.Getenv("WRITEBACK_KILL_MARK")}
	}
	if _, err := writeBack(name, name, readMessages(t, name, mailbox.FormatAuto), &Options{InPlace: true, Wrap: wrap}); err != nil {
		t.Fatal(err)
	}
}

// TestKill writes a file in place in a child process and kills it
// (SIGKILL) while it writes: the file is then the old one, whole; a
// child let finish leaves the new one, whole.
func TestKill(t *testing.T) {
	if testing.Short() {
		t.Skip("re-runs the test binary")
	}
	dir := t.TempDir()
	name := filepath.Join(dir, "big.mbox")
	var big strings.Builder
	for i := range 400 {
		fmt.Fprintf(&big, "From a@b Mon Jan  1 00:00:00 2001\nMessage-ID: <%d@x>\n\nSee http://old.example/%d.\n%s\n", i, i, strings.Repeat("filler line\n", 20))
	}
	oldBytes := []byte(big.String())
	os.WriteFile(name, oldBytes, 0o644)
	newBytes := expected(oldBytes, readMessages(t, name, mailbox.FormatAuto))
	old, neu := sha256.Sum256(oldBytes), sha256.Sum256(newBytes)
	for _, n := range []int{0, 30000, 65536, 90000, 1 << 30} {
		os.WriteFile(name, oldBytes, 0o644)
		mark := filepath.Join(t.TempDir(), "mark")
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillHelper$")
		cmd.Env = append(os.Environ(), "WRITEBACK_KILL_AFTER="+strconv.Itoa(n), "WRITEBACK_KILL_MARK="+mark, "WRITEBACK_KILL_FILE="+name)
		kill := testutil.RunUntilStall(t, cmd, mark, fmt.Sprintf("after %d", n))
		killed := kill != nil
		if killed {
			if l := tempFiles(t, dir); len(l) != 1 {
				t.Errorf("after %d: no temporary file being written: %v", n, l)
			}
			kill()
		}
		got := sha256.Sum256([]byte(readOr(name)))
		switch {
		case killed && got != old:
			t.Errorf("killed after %d bytes: the file is not the old one", n)
		case !killed && got != neu:
			t.Errorf("finished (limit %d): the file is not the new one", n)
		}
		if killed != (n < len(newBytes)) {
			t.Errorf("limit %d: killed %v", n, killed)
		}
		for _, f := range tempFiles(t, dir) {
			os.Remove(f)
		}
	}
}
