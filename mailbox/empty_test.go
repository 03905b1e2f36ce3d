package mailbox

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

func zst(t *testing.T, s string) string {
	var b bytes.Buffer
	w, err := zstd.NewWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(s))
	w.Close()
	return b.String()
}

func xzOf(t *testing.T, s string) string {
	var b bytes.Buffer
	w, err := xz.NewWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(s))
	w.Close()
	return b.String()
}

// TestEmptyInput: an input with nothing in it (no bytes, a byte-order
// mark alone, a compressed stream of nothing) holds no message: Next
// gives io.EOF at once, Empty says so, and FormatReason says why; it is
// not a message (or text) of 0 bytes. Whole, a byte and half a read at a
// time, detected or forced.
func TestEmptyInput(t *testing.T) {
	readers := map[string]func(io.Reader) io.Reader{
		"whole": func(r io.Reader) io.Reader { return r },
		"byte":  iotest.OneByteReader,
		"half":  iotest.HalfReader,
	}
	for _, c := range []struct{ name, in, why string }{
		{"nothing", "", "empty (0 bytes): no messages"},
		{"bom", "\xef\xbb\xbf", "empty but for a UTF-8 byte-order mark: no messages"},
		{"gzip", gz(""), "empty once decompressed (gzip): no messages"},
		{"zstd", zst(t, ""), "empty once decompressed (zstd): no messages"},
		{"xz", xzOf(t, ""), "empty once decompressed (xz): no messages"},
	} {
		for rn, wrap := range readers {
			for _, f := range []Format{FormatAuto, FormatMbox, FormatMMDF, FormatMessage, FormatText} {
				r, err := NewReader(wrap(strings.NewReader(c.in)), "in", &Options{Format: f})
				if err != nil {
					t.Fatalf("%s/%s/%s: %v", c.name, rn, f, err)
				}
				m, err := r.Next()
				want := f
				if f == FormatAuto {
					want = FormatText
				}
				if m != nil || err != io.EOF || !r.Empty() || r.FormatReason() != c.why || r.Format() != want {
					t.Errorf("%s/%s/%s: %v, %v; Empty %v, %s %q", c.name, rn, f, m, err, r.Empty(), r.Format(), r.FormatReason())
				}
				r.Close()
			}
		}
	}
	// not empty: a line ending alone is text; an input that fails at
	// once is an error, not nothing
	for _, in := range []string{"\n", "\xef\xbb\xbf\n", "x"} {
		r, err := NewReader(iotest.OneByteReader(strings.NewReader(in)), "in", nil)
		if err != nil {
			t.Fatal(err)
		}
		if m, err := r.Next(); r.Empty() || m == nil || err != nil {
			t.Errorf("%q: Empty %v, %v, %v", in, r.Empty(), m, err)
		}
	}
	boom := errors.New("boom")
	r, err := NewReader(iotest.ErrReader(boom), "in", nil)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := r.Next(); r.Empty() || m != nil || !errors.Is(err, boom) {
		t.Errorf("failing input: Empty %v, %v, %v", r.Empty(), m, err)
	}
	// a truncated .gz stays an error (the file is cut, not empty)
	if _, err := NewReader(strings.NewReader(gz("")[:5]), "in.gz", nil); err == nil {
		t.Error("a gzip header cut short is no error")
	}
	// files given to Open
	dir := t.TempDir()
	for name, content := range map[string]string{"empty.eml": "", "bom.txt": "\xef\xbb\xbf", "empty.mbox.gz": gz("")} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		r, err := Open(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if m, err := r.Next(); m != nil || err != io.EOF || !r.Empty() {
			t.Errorf("Open(%s): %v, %v, Empty %v", name, m, err, r.Empty())
		}
		r.Close()
	}
}

// TestEmptyFilesInDirectories: an empty file inside a folder, a
// Maildir (also a compressed message of nothing, as Dovecot could write
// it) or an MH folder is no message: a Skip of kind SkipEmpty (seen by
// OnSkip) with why, and the other messages are read.
func TestEmptyFilesInDirectories(t *testing.T) {
	root := t.TempDir()
	tree(t, root, map[string]string{
		"folder/a.eml":     eml("a"),
		"folder/b.eml":     "",
		"folder/c.mbox.gz": gz(""),
		"folder/d.txt":     "\xef\xbb\xbf",
		"folder/e.mbox":    mboxOf("e1", "e2"),
		"md/cur/1:2,S":     eml("m1"),
		"md/new/2":         "",
		"md/cur/3:2,SZ":    gz(""),
		"md/tmp/":          "",
		"mh/1":             eml("h1"),
		"mh/2":             "",
	})
	want := map[string]struct {
		ids   []string
		empty []string
	}{
		"folder": {[]string{"a", "e1", "e2"}, []string{"b.eml", "c.mbox.gz", "d.txt"}},
		"md":     {[]string{"m1"}, []string{"cur/3:2,SZ", "new/2"}},
		"mh":     {[]string{"h1"}, []string{"2"}},
	}
	reasons := map[string]string{
		"b.eml": "empty (0 bytes): no messages", "c.mbox.gz": "empty once decompressed (gzip): no messages",
		"d.txt": "empty but for a UTF-8 byte-order mark: no messages", "cur/3:2,SZ": "empty once decompressed (gzip): no messages",
		"new/2": "empty (0 bytes): no messages", "2": "empty (0 bytes): no messages",
	}
	for dir, w := range want {
		var seen []string
		r, ids, _, err := readDirAll(t, filepath.Join(root, dir), &Options{OnSkip: func(sk Skip) { seen = append(seen, filepath.Base(sk.Path)) }})
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if !slices.Equal(ids, w.ids) {
			t.Errorf("%s: read %q, want %q", dir, ids, w.ids)
		}
		var empty []string
		for _, sk := range r.Skipped() {
			rel, _ := filepath.Rel(filepath.Join(root, dir), sk.Path)
			if sk.Kind != SkipEmpty || sk.Err != nil || sk.Reason != reasons[rel] {
				t.Errorf("%s: skip %s: kind %v, err %v, %q", dir, rel, sk.Kind, sk.Err, sk.Reason)
			}
			empty = append(empty, rel)
		}
		if !slices.Equal(empty, w.empty) || len(seen) != len(w.empty) {
			t.Errorf("%s: empty files %q (OnSkip saw %q), want %q", dir, empty, seen, w.empty)
		}
	}
	// a folder of empty files alone has no messages: an error, as any
	// directory in which nothing was read
	only := t.TempDir()
	tree(t, only, map[string]string{"a.mbox": "", "b.mbox": ""})
	_, ids, _, err := readDirAll(t, only, nil)
	var ie *InputError
	if len(ids) != 0 || !errors.As(err, &ie) || !errors.Is(err, errNoMessages) {
		t.Errorf("folder of empty files: %q, %v", ids, err)
	}
}

// TestEmptyMessageInMemory: ReadMessage of no bytes (a message handed
// over whole, as a delivery filter gets it) is still one empty message,
// with the problem that says so.
func TestEmptyMessageInMemory(t *testing.T) {
	m := ReadMessage(nil, "mem", nil)
	if len(m.Problems) != 1 || !errors.Is(m.Problems[0], ErrEmpty) {
		t.Errorf("problems %v", m.Problems)
	}
}

// TestCompressedNothingDecompressed: a compressed file cut before its
// first decompressed byte (a gzip header alone, the first bytes of a
// bzip2, xz or zstd stream) gives its *InputError at offset 0 and no
// message (fails if a message of 0 bytes is counted with it).
func TestCompressedNothingDecompressed(t *testing.T) {
	text := strings.Repeat("From a@b Thu Mar 24 02:31:00 1994\nFrom: a@b\n\nhttp://example.org/\n\n", 200)
	for name, in := range map[string]string{
		"gzip header": gz(text)[:12],
		"xz start":    xzOf(t, text)[:40],
		"zstd start":  zst(t, text)[:20],
		"bzip2 start": "BZh91AY&SY",
	} {
		for rn, wrap := range map[string]func(io.Reader) io.Reader{"whole": func(r io.Reader) io.Reader { return r }, "byte": iotest.OneByteReader} {
			r, err := NewReader(wrap(strings.NewReader(in)), "in", nil)
			if err != nil {
				var ie *InputError
				if !errors.As(err, &ie) {
					t.Errorf("%s/%s: %v", name, rn, err)
				}
				continue // (damage in the header: from NewReader itself)
			}
			m, err := r.Next()
			var ie *InputError
			if m != nil || !errors.As(err, &ie) || ie.Offset != 0 || r.Empty() {
				t.Errorf("%s/%s: message %v, error %v, Empty %v", name, rn, m, err, r.Empty())
			}
		}
	}
}
