package mailbox

import (
	"encoding/base64"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestSpoolWriteFails: when the temporary file of a stream's long
// message cannot be written (a full --tmpdir), the bytes not written and
// all after them are held in memory instead: every message comes out as
// with the holding aside off, no byte left out, no error and no problem
// (fails if the input is counted twice as not read, or damage is
// invented: a missing final boundary, an empty message). Writes fail at
// once, after part of a buffer, and after 200 KiB; a long message, a
// Content-Length that does not land (replayed from the file and memory)
// and one that does.
func TestSpoolWriteFails(t *testing.T) {
	defer func(n int) { spoolAfter = n }(spoolAfter)
	spoolAfter = 64 << 10
	defer func(f func(*os.File, []byte, int64) (int, error)) { tmpWriteAt = f }(tmpWriteAt)
	att := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("binary attachment bytes ", 40000)))
	var b strings.Builder
	for i := 0; i < len(att); i += 76 {
		b.WriteString(att[i:min(i+76, len(att))] + "\n")
	}
	big := "From a@b Thu Mar 24 02:31:00 1994\nFrom: a@b\nMessage-ID: <big@x>\nContent-Type: multipart/mixed; boundary=BB\n\n" +
		"--BB\nContent-Type: text/plain\n\nsee http://big.example/\n--BB\nContent-Type: application/octet-stream\nContent-Transfer-Encoding: base64\n\n" +
		b.String() + "--BB--\n\n"
	small := func(id string) string {
		return "From a@b Thu Mar 24 02:31:00 1994\nFrom: a@b\nMessage-ID: <" + id + ">\n\nhttp://" + id + ".example/\n\n"
	}
	inputs := map[string]string{
		"long":    big + small("s1") + small("s2") + big + small("s3"),
		"replay":  replayInput(1<<20, false),
		"landing": replayInput(1<<20, true),
	}
	for name, in := range inputs {
		noSpool = true
		want := describeAll(t, struct{ io.Reader }{strings.NewReader(in)}, t.TempDir())
		noSpool = false
		if strings.Contains(want, "end: <nil>") || !strings.HasSuffix(want, "end: EOF\n") {
			t.Fatalf("%s: %s", name, want)
		}
		for _, after := range []int64{0, 1000, 200 << 10} {
			written := int64(0)
			tmpWriteAt = func(f *os.File, p []byte, off int64) (int, error) {
				k := int(max(0, min(int64(len(p)), after-written)))
				n, err := f.WriteAt(p[:k], off)
				written += int64(n)
				if err == nil && k < len(p) {
					err = fmt.Errorf("write %s: %w", f.Name(), syscall.ENOSPC)
				}
				return n, err
			}
			dir := t.TempDir()
			got := describeAll(t, struct{ io.Reader }{strings.NewReader(in)}, dir)
			if got != want {
				t.Errorf("%s, writes failing after %d bytes:\n%.700s\nwant\n%.700s", name, after, got, want)
			}
			if ents, _ := os.ReadDir(dir); len(ents) > 0 {
				t.Errorf("%s: temporary files left: %v", name, ents)
			}
		}
	}
}

// TestTempFileErrorSaid: Options.OnTempFileError is told, once per
// Reader, when the temporary file of a stream's long messages cannot be
// made (a TempDir that does not exist) or written; the messages are the
// same (fails if nothing is said).
func TestTempFileErrorSaid(t *testing.T) {
	defer func(n int) { spoolAfter = n }(spoolAfter)
	spoolAfter = 64 << 10
	defer func(f func(*os.File, []byte, int64) (int, error)) { tmpWriteAt = f }(tmpWriteAt)
	in := replayInput(1<<20, true) + replayInput(1<<20, false)
	noSpool = true
	want := describeAll(t, struct{ io.Reader }{strings.NewReader(in)}, t.TempDir())
	noSpool = false
	for _, c := range []struct {
		name, dir string
		fail      bool
	}{
		{"no such directory", filepath.Join(t.TempDir(), "no", "such"), false},
		{"write fails", t.TempDir(), true},
		{"fine", t.TempDir(), false},
	} {
		tmpWriteAt = func(f *os.File, p []byte, off int64) (int, error) {
			if c.fail {
				return 0, fmt.Errorf("write %s: %w", f.Name(), syscall.ENOSPC)
			}
			return f.WriteAt(p, off)
		}
		var errs []error
		r, err := NewReader(struct{ io.Reader }{strings.NewReader(in)}, "in", &Options{Format: FormatMbox, TempDir: c.dir, OnTempFileError: func(err error) { errs = append(errs, err) }})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for {
			m, err := r.Next()
			if m != nil {
				fmt.Fprintf(&b, "%d+%d %s %08x %v\n", m.Offset, m.Length, m.Subject, crc32.ChecksumIEEE(m.Raw), m.Problems)
			}
			if err != nil {
				fmt.Fprintf(&b, "end: %v\n", err)
				break
			}
		}
		r.Close()
		if got := b.String(); got != want {
			t.Errorf("%s: messages differ", c.name)
		}
		if wantN := map[bool]int{true: 1, false: 0}[c.name != "fine"]; len(errs) != wantN {
			t.Errorf("%s: told %d times: %v", c.name, len(errs), errs)
		}
	}
}
