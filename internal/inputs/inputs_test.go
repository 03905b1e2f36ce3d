package inputs

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"

	"github.com/linkscan/linkscan/mailbox"
)

const mbox = "From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <one@x>\n\nhttp://example.org/one\n\n" +
	"From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <two@x>\n\nhttp://example.org/two\n"

// ids reads the Message-IDs of an input.
func ids(t *testing.T, o *Opener, name string) string {
	t.Helper()
	r, err := o.Open(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got []string
	for {
		m, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, m.MessageID)
	}
	return strings.Join(got, " ")
}

func TestStdinOnce(t *testing.T) {
	o := &Opener{Stdin: iotest.OneByteReader(strings.NewReader(mbox))}
	if got := ids(t, o, "-"); got != "one@x two@x" {
		t.Errorf("standard input: %q", got)
	}
	if _, err := o.Open("-", nil); !errors.Is(err, ErrStdinUsed) || !errors.Is(err, mailbox.ErrUnreadable) {
		t.Errorf("second Open of standard input without Spool: %v", err)
	}
}

// TestSpool: with Spool, standard input is read twice, the same; Close
// removes the spool.
func TestSpool(t *testing.T) {
	dir := t.TempDir()
	o := &Opener{Stdin: iotest.HalfReader(strings.NewReader(mbox)), Spool: true, TempDir: dir}
	for range 2 {
		if got := ids(t, o, "-"); got != "one@x two@x" {
			t.Errorf("spooled standard input: %q", got)
		}
	}
	rc, err := o.OpenText("-")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != mbox {
		t.Errorf("OpenText of the spool: %q", b)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 1 {
		t.Errorf("spool files: %q", left)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Errorf("left after Close: %q", left)
	}
}

// TestSpoolErrors: a spool that cannot be written, or standard input that
// fails, is an error naming the spool, and leaves no file.
func TestSpoolErrors(t *testing.T) {
	o := &Opener{Stdin: strings.NewReader(mbox), Spool: true, TempDir: filepath.Join(t.TempDir(), "missing")}
	if _, err := o.Open("-", nil); err == nil || !strings.Contains(err.Error(), "spooling") {
		t.Errorf("spool in a missing directory: %v", err)
	}
	dir := t.TempDir()
	broken := io.MultiReader(strings.NewReader("From a"), iotest.ErrReader(errors.New("disk on fire")))
	o = &Opener{Stdin: broken, Spool: true, TempDir: dir}
	if _, err := o.Open("-", nil); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("failing standard input: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Errorf("spool left after a failure: %q", left)
	}
}

func TestFiles(t *testing.T) {
	f := filepath.Join(t.TempDir(), "a.mbox")
	os.WriteFile(f, []byte(mbox), 0o644)
	o := &Opener{}
	if got := ids(t, o, f); got != "one@x two@x" {
		t.Errorf("file: %q", got)
	}
	rc, err := o.OpenText(f)
	if err != nil {
		t.Fatal(err)
	}
	rc.Close()
	if _, err := o.Open(f+".missing", nil); !errors.Is(err, mailbox.ErrUnreadable) {
		t.Errorf("missing file: %v", err)
	}
}

// TestOpenTextContent: --as text reads compressed inputs decompressed,
// and a truncated one gives an *mailbox.InputError with the name and
// the offset reached, from Read; read through one-byte and half reads.
func TestOpenTextContent(t *testing.T) {
	dir := t.TempDir()
	text := strings.Repeat("see http://example.org/page and more words\n", 2000)
	for _, tc := range []struct {
		ext  string
		data []byte
	}{
		{"", []byte(text)},
		{".gz", gzipped(t, text)},
		{".xz", xzed(t, text)},
		{".zst", zstded(t, text)},
	} {
		name := filepath.Join(dir, "t.txt"+tc.ext)
		if err := os.WriteFile(name, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		o := &Opener{}
		for _, wrap := range []func(io.Reader) io.Reader{func(r io.Reader) io.Reader { return r }, iotest.OneByteReader, iotest.HalfReader} {
			rc, err := o.OpenTextContent(name)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			b, err := io.ReadAll(wrap(rc))
			rc.Close()
			if err != nil || string(b) != text {
				t.Errorf("%s: %d bytes, %v", name, len(b), err)
			}
		}
		if tc.ext == "" {
			continue
		}
		cut := filepath.Join(dir, "cut.txt"+tc.ext)
		os.WriteFile(cut, tc.data[:len(tc.data)*2/3], 0o644)
		rc, err := o.OpenTextContent(cut)
		if err != nil {
			t.Fatalf("%s: %v", cut, err)
		}
		_, err = io.ReadAll(rc)
		rc.Close()
		var ie *mailbox.InputError
		if !errors.As(err, &ie) || ie.Path != cut || ie.Offset < 0 || !errors.Is(err, mailbox.ErrUnreadable) {
			t.Errorf("%s: a truncated input gave %v", cut, err)
		}
	}
	if _, err := (&Opener{}).OpenTextContent(filepath.Join(dir, "missing")); !errors.Is(err, mailbox.ErrUnreadable) || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing file: %v", err)
	}
	// standard input, compressed
	o := &Opener{Stdin: iotest.HalfReader(strings.NewReader(string(gzipped(t, text))))}
	rc, err := o.OpenTextContent(Stdin)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(rc)
	if err != nil || string(b) != text {
		t.Errorf("standard input: %d bytes, %v", len(b), err)
	}
}

func gzipped(t *testing.T, s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

func xzed(t *testing.T, s string) []byte {
	var b bytes.Buffer
	w, err := xz.NewWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

func zstded(t *testing.T, s string) []byte {
	w, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	return w.EncodeAll([]byte(s), nil)
}
