package mailbox

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

// replayInput is an mbox whose first message's Content-Length (clLen)
// does not land on a separator: it covers the messages after it, which
// a stream must read before it can tell, and then read again. With
// landing set the field is right (the body holds From lines that must
// not split it).
func replayInput(clLen int, landing bool) string {
	var rest strings.Builder
	for i := 0; rest.Len() < clLen+(256<<10); i++ {
		rest.WriteString(clMsg(fmt.Sprint(i), "", longBody(16<<10, "\n", i%3 == 0), "\n") + "\n")
	}
	if landing {
		body := rest.String()[:clLen]
		body = body[:strings.LastIndexByte(body, '\n')+1]
		return clMsg("one", fmt.Sprint(len(body)), body, "\n") + "\n" + rest.String()
	}
	return clMsg("one", fmt.Sprint(clLen), "body http://example.org/one\n", "\n") + "\n" + rest.String()
}

// describeAll reads r as an mbox and describes every message (place,
// subject, a checksum of Raw, problems) and the error that ends it.
func describeAll(t *testing.T, r io.Reader, dir string) string {
	t.Helper()
	rd, err := NewReader(r, "in", &Options{Format: FormatMbox, TempDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var b strings.Builder
	for {
		m, err := rd.Next()
		if m != nil {
			fmt.Fprintf(&b, "%d+%d %s %08x %v\n", m.Offset, m.Length, m.Subject, crc32.ChecksumIEEE(m.Raw), m.Problems)
			m.Release()
		}
		if err != nil {
			fmt.Fprintf(&b, "end: %v\n", err)
			return b.String()
		}
	}
}

// TestContentLengthReplay: from a stream, a Content-Length body that
// outgrows spoolAfter stays in the spool's temporary file until the
// bytes where the field says the message ends have come; when they are
// no separator, the split at "From " lines reads those bytes again from
// the file (replay) instead of holding them in memory twice. Every
// message comes out as read from a file or with the holding aside off
// (noSpool), whole, a byte, half a read at a time and with the data's
// last read carrying io.EOF; a right field over spoolAfter is read as
// one message; a stream that fails inside the body gives the messages
// before the failure and then the error, as without the spool; no
// temporary file is left.
func TestContentLengthReplay(t *testing.T) {
	defer func(n int) { spoolAfter = n }(spoolAfter)
	spoolAfter = 64 << 10
	for _, landing := range []bool{false, true} {
		in := replayInput(1<<20, landing)
		noSpool = true
		want := describeAll(t, struct{ io.Reader }{strings.NewReader(in)}, t.TempDir())
		noSpool = false
		if first := want[:strings.IndexByte(want, '\n')]; landing == strings.Contains(first, "Content-Length") {
			t.Fatalf("landing %v: first message %s", landing, first)
		}
		for name, wrap := range map[string]func(io.Reader) io.Reader{
			"file":    func(r io.Reader) io.Reader { return r },
			"stream":  func(r io.Reader) io.Reader { return struct{ io.Reader }{r} },
			"byte":    iotest.OneByteReader,
			"half":    iotest.HalfReader,
			"dataerr": iotest.DataErrReader,
		} {
			dir := t.TempDir()
			if got := describeAll(t, wrap(strings.NewReader(in)), dir); got != want {
				t.Errorf("landing %v, %s: differs from noSpool:\n%.600s\nwant\n%.600s", landing, name, got, want)
			}
			if ents, _ := os.ReadDir(dir); len(ents) > 0 {
				t.Errorf("landing %v, %s: temporary files left: %v", landing, name, ents)
			}
		}
	}
	// a stream that fails inside the field's body (past spoolAfter)
	in := replayInput(1<<20, false)
	boom := errors.New("boom")
	for _, cut := range []int{200 << 10, 700 << 10} {
		failing := func() io.Reader {
			return io.MultiReader(strings.NewReader(in[:cut]), iotest.ErrReader(boom))
		}
		noSpool = true
		want := describeAll(t, failing(), t.TempDir())
		noSpool = false
		got := describeAll(t, failing(), t.TempDir())
		if got != want || !strings.Contains(got, "boom") || strings.Count(got, "\n") < 3 {
			t.Errorf("cut at %d:\n%.800s\nwant\n%.800s", cut, got, want)
		}
	}
}

// TestContentLengthReplayMemory: the wrong field of 8 MiB from a stream
// costs what spoolAfter bounds, not its size twice: the first message
// and the rest of the stream are read with less than 2 MiB allocated,
// where reading the body into memory and pushing it back took over
// 16 MiB.
func TestContentLengthReplayMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 8 MiB")
	}
	defer func(n int) { spoolAfter = n }(spoolAfter)
	spoolAfter = 64 << 10
	in := []byte(replayInput(8<<20, false))
	r, err := NewReader(struct{ io.Reader }{bytes.NewReader(in)}, "in", &Options{Format: FormatMbox, TempDir: t.TempDir(), DeferParse: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	m, err := r.Next()
	runtime.ReadMemStats(&after)
	if err != nil || len(m.Problems) != 1 || !errors.Is(m.Problems[0], ErrContentLength) {
		t.Fatalf("%v %v", err, m.Problems)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2<<20 {
		t.Errorf("%d bytes allocated to find that the field does not land", alloc)
	}
	m.Release()
	n := 0
	for {
		m, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		m.Release()
	}
	if want := strings.Count(string(in), "\nSubject: ") - 1; n != want {
		t.Errorf("%d messages after the first, want %d", n, want)
	}
}
