package mailbox

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// testMbox makes an mbox of n messages with a link each.
func testMbox(n int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "From a@b Thu Mar 24 02:31:%02d 1994\nFrom: a@b\nSubject: message %d\nMessage-ID: <%d@example.org>\n\nSee http://example.org/%d for the %x.\n\n", i%60, i, i, i, i*7919)
	}
	return b.Bytes()
}

func compressWith(t testing.TB, what string, data []byte) []byte {
	var b bytes.Buffer
	var w io.WriteCloser
	var err error
	switch what {
	case "gz":
		w = gzip.NewWriter(&b)
	case "xz":
		w, err = xz.NewWriter(&b)
	case "zst":
		w, err = zstd.NewWriter(&b)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// readFile opens path and reads every message; it returns the messages
// and the error that ended the reading (nil at the end of the input).
func readPath(t *testing.T, path string) ([]*Message, error) {
	t.Helper()
	r, err := Open(path, nil)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var ms []*Message
	for n := 0; n < 100000; n++ {
		m, err := r.Next()
		if m != nil {
			ms = append(ms, m)
		}
		if err == io.EOF {
			return ms, nil
		}
		if err != nil {
			return ms, err
		}
	}
	t.Fatal("reader does not end")
	return nil, nil
}

// TestDamagedCompressed cuts and corrupts compressed mboxes at many
// places, inside the first read that detects the format and after it:
// every one must end in an *InputError naming the file and an offset in
// the decompressed data, never in a clean end.
func TestDamagedCompressed(t *testing.T) {
	dir := t.TempDir()
	small, large := testMbox(8), testMbox(2000) // inside the first read; well past it
	type input struct {
		name  string
		plain []byte
		data  []byte
	}
	var inputs []input
	for _, ext := range []string{"gz", "xz", "zst"} {
		inputs = append(inputs, input{"small.mbox." + ext, small, compressWith(t, ext, small)},
			input{"large.mbox." + ext, large, compressWith(t, ext, large)})
	}
	bz, err := os.ReadFile("../testdata/mail/mboxrd.mbox.bz2")
	if err != nil {
		t.Fatal(err)
	}
	plainBz, err := os.ReadFile("../testdata/mail/mboxrd.mbox")
	if err != nil {
		t.Fatal(err)
	}
	inputs = append(inputs, input{"mboxrd.mbox.bz2", plainBz, bz})
	for _, in := range inputs {
		// the whole file reads cleanly, with every message
		p := filepath.Join(dir, in.name)
		if err := os.WriteFile(p, in.data, 0o644); err != nil {
			t.Fatal(err)
		}
		ms, err := readPath(t, p)
		want := len(readAllOpts(t, string(in.plain), Options{}))
		if err != nil || len(ms) != want {
			t.Fatalf("%s whole: %d messages (want %d), %v", in.name, len(ms), want, err)
		}
		var cuts []int
		for i := 0; i < 12 && i < len(in.data); i++ {
			cuts = append(cuts, i, len(in.data)-1-i)
		}
		for i := 1; i < 40; i++ {
			cuts = append(cuts, len(in.data)*i/40)
		}
		check := func(what string, data []byte, maxOff int64) {
			p := filepath.Join(dir, "cut-"+in.name)
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			ms, err := readPath(t, p)
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Errorf("%s %s: %d messages, error %v; want an *InputError", in.name, what, len(ms), err)
				return
			}
			if ie.Path != p || ie.Offset < 0 || ie.Offset > maxOff || !errors.Is(err, ErrUnreadable) {
				t.Errorf("%s %s: %#v", in.name, what, ie)
			}
			if !strings.Contains(err.Error(), p) {
				t.Errorf("%s %s: %q does not name the file", in.name, what, err)
			}
		}
		for _, c := range cuts {
			if c >= len(in.data) {
				continue
			}
			check(fmt.Sprintf("cut at %d of %d", c, len(in.data)), in.data[:c], int64(len(in.plain)))
		}
		// a flipped byte in the compressed data (past the headers)
		for _, at := range []int{len(in.data) / 3, len(in.data) / 2, len(in.data) * 3 / 4} {
			d := bytes.Clone(in.data)
			d[at] ^= 0x55
			check(fmt.Sprintf("byte %d flipped", at), d, 1<<40) // corrupt data may decompress to more
		}
	}
}

// TestCompressedOffset: the offset of a truncation is where the
// decompressed data broke off, also when the stream is read a byte at a
// time.
func TestCompressedOffset(t *testing.T) {
	plain := testMbox(500)
	data := compressWith(t, "gz", plain)
	cut := data[:len(data)/2]
	for _, r := range []io.Reader{bytes.NewReader(cut), iotest.OneByteReader(bytes.NewReader(cut)), iotest.HalfReader(bytes.NewReader(cut))} {
		rd, err := NewReader(r, "x.gz", nil)
		if err != nil {
			t.Fatal(err)
		}
		var last *Message
		for {
			m, err := rd.Next()
			if m != nil {
				last = m
			}
			if err == io.EOF {
				t.Fatal("clean end of a truncated file")
			}
			if err != nil {
				var ie *InputError
				if !errors.As(err, &ie) {
					t.Fatalf("error %v is not an *InputError", err)
				}
				if last == nil || ie.Offset < last.Offset || ie.Offset > int64(len(plain)) {
					t.Errorf("offset %d, last message at %v", ie.Offset, last)
				}
				// every byte before the offset was decompressed and is
				// the same as the original's
				if end := last.RawOffset + int64(len(last.Raw)); end > ie.Offset || !bytes.Equal(plain[last.RawOffset:end], last.Raw) {
					t.Errorf("last message [%d,%d) vs offset %d", last.RawOffset, end, ie.Offset)
				}
				break
			}
		}
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.gz")
	os.WriteFile(empty, nil, 0o644)
	magic := filepath.Join(dir, "magic.xz")
	os.WriteFile(magic, []byte{0xfd, '7'}, 0o644)
	for _, c := range []struct {
		path string
		want string
	}{
		{filepath.Join(dir, "missing.mbox"), "no such file"},
		{empty, "gzip data truncated"},
		{magic, "xz data truncated"},
	} {
		_, err := Open(c.path, nil)
		var ie *InputError
		if !errors.As(err, &ie) || ie.Path != c.path || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%s) = %v, want an *InputError with %q", c.path, err, c.want)
		}
	}
	// a name that says gzip over plain text is read as what it is
	misnamed := filepath.Join(dir, "plain.gz")
	os.WriteFile(misnamed, []byte("see http://example.org/\n"), 0o644)
	if ms, err := readPath(t, misnamed); err != nil || len(ms) != 1 || ms[0].Format != FormatText {
		t.Errorf("misnamed: %v %v", ms, err)
	}
}

// TestReadErrorOffset: a read error of the underlying stream (a disk
// error) comes from Next as an *InputError at the offset reached, for an
// mbox, a single message and text, whole or a byte at a time.
func TestReadErrorOffset(t *testing.T) {
	errDisk := errors.New("input/output error")
	for _, in := range []string{string(testMbox(3)), "From: a@b\nSubject: x\n\nbody http://example.org/\n", "plain text http://example.org/\n"} {
		for _, oneByte := range []bool{false, true} {
			var r io.Reader = io.MultiReader(strings.NewReader(in), iotest.ErrReader(errDisk))
			if oneByte {
				r = iotest.OneByteReader(r)
			}
			rd, err := NewReader(r, "disk.mbox", nil)
			if err != nil {
				t.Fatal(err)
			}
			var got error
			for got == nil {
				_, got = rd.Next()
			}
			var ie *InputError
			if !errors.As(got, &ie) || !errors.Is(got, errDisk) || ie.Path != "disk.mbox" || ie.Offset != int64(len(in)) {
				t.Errorf("%.20q one byte %v: %v (%#v)", in, oneByte, got, ie)
			}
		}
	}
}

// TestDamagedInFolder: a truncated compressed mbox inside a folder gives
// its messages, then a message with the problem and a skip with the
// error, and the folder's other files are still read.
func TestDamagedInFolder(t *testing.T) {
	root := t.TempDir()
	data := compressWith(t, "gz", testMbox(50))
	tree(t, root, map[string]string{"a.mbox.gz": string(data[:len(data)*2/3]), "b.eml": eml("b")})
	r, ids, ms, err := readDirAll(t, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) < 3 || ids[len(ids)-1] != "b" || ids[len(ids)-2] != "problem:a.mbox.gz" {
		t.Fatalf("read %q", ids)
	}
	last := ms[len(ms)-2]
	var ie *InputError
	if !errors.As(last.Problems[0], &ie) || ie.Offset <= 0 || len(r.Skipped()) != 1 || r.Skipped()[0].Err == nil {
		t.Errorf("problem %v, skips %+v", last.Problems, r.Skipped())
	}
}
