package mailbox

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// longBody returns about n bytes of text lines (ending in eol), with a
// link every 50 lines and, when tricky, lines that start like a
// separator but are none: an escaped ">From " and a "From " that follows
// no blank line.
func longBody(n int, eol string, tricky bool) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		switch {
		case tricky && i%5000 == 17:
			b.WriteString(">From the desk of a long message" + eol)
		case tricky && i%5000 == 18:
			b.WriteString("From the same desk, a line that follows no blank line" + eol)
		case i%50 == 0:
			fmt.Fprintf(&b, "line %d, see http://www.example.org/big/%d.html%s", i, i, eol)
		default:
			fmt.Fprintf(&b, "line %d of a long message with nothing but words in it%s", i, eol)
		}
	}
	return b.String()
}

// spoolMbox is an mbox of small and long messages (past spoolAfter): plain
// text, a Content-Length body with "From " lines in it, a multipart with
// a base64 attachment; eol is "\n" or "\r\n".
func spoolMbox(eol string) []byte {
	var b bytes.Buffer
	msg := func(id, header, body string) {
		fmt.Fprintf(&b, "From a@example.org Mon Mar  7 10:00:00 1994%sMessage-ID: <%s@x>%sFrom: a@example.org%s%s%s%s%s",
			eol, id, eol, eol, header, eol, body, eol)
	}
	msg("small1", "Subject: small"+eol, "see http://example.org/small1"+eol)
	msg("long1", "Subject: long"+eol, longBody(spoolAfter*3, eol, true))
	clBody := longBody(spoolAfter*2, eol, false) + "From this line on, a body line that a Content-Length keeps" + eol + longBody(4000, eol, false)
	msg("cl", fmt.Sprintf("Content-Length: %d%s", len(clBody), eol), clBody)
	att := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("attachment bytes "), spoolAfter/8))
	var wrapped strings.Builder
	for len(att) > 76 {
		wrapped.WriteString(att[:76] + eol)
		att = att[76:]
	}
	wrapped.WriteString(att + eol)
	mp := "--b" + eol + "Content-Type: text/plain" + eol + eol + longBody(spoolAfter/2, eol, false) +
		"--b" + eol + "Content-Type: application/octet-stream" + eol + "Content-Transfer-Encoding: base64" + eol + eol + wrapped.String() +
		"--b" + eol + "Content-Type: text/plain" + eol + eol + "after the attachment: http://example.org/after" + eol + "--b--" + eol
	msg("multi", "MIME-Version: 1.0"+eol+"Content-Type: multipart/mixed; boundary=b"+eol, mp)
	// a Content-Length that does not land on a separator: read again
	// line by line
	bad := longBody(spoolAfter*2, eol, true)
	msg("badcl", fmt.Sprintf("Content-Length: %d%s", len(bad)-7, eol), bad)
	msg("small2", "Subject: small"+eol, "http://example.org/small2"+eol)
	return b.Bytes()
}

// describe reads every message of r and describes each: where it is,
// its bytes (a digest), holes, problems and parts.
func describe(t *testing.T, r *Reader) []string {
	t.Helper()
	var out []string
	for {
		m, err := r.Next()
		if m != nil {
			var parts []string
			for _, p := range m.Parts() {
				parts = append(parts, fmt.Sprintf("%s %s %x", p.Path, p.ContentType, sha256.Sum256(p.Text)))
			}
			out = append(out, fmt.Sprintf("%s off %d len %d raw %d+%d %x holes %v problems %q parts %v",
				m.MessageID, m.Offset, m.Length, m.RawOffset, len(m.Raw), sha256.Sum256(m.Raw), m.Holes, m.Problems, parts))
			m.Release()
		}
		if err == io.EOF {
			return out
		}
		if err != nil {
			return append(out, "error: "+err.Error())
		}
	}
}

func gzipped(b []byte) []byte {
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write(b)
	w.Close()
	return z.Bytes()
}

// TestSpoolSameMessages: long messages held aside (read again from the
// file, or from a temporary file for a stream) come out byte for byte as
// when they are grown in memory, through every way of reading, and
// over the message size limit too.
func TestSpoolSameMessages(t *testing.T) {
	defer func(n int) { spoolAfter = n }(spoolAfter)
	spoolAfter = 64 << 10
	for _, eol := range []string{"\n", "\r\n"} {
		in := spoolMbox(eol)
		for _, limit := range []int64{0, int64(spoolAfter) * 5 / 2} {
			opts := &Options{MaxMessageSize: limit, TempDir: t.TempDir()}
			noSpool = true
			r, err := NewReader(bytes.NewReader(in), "in", opts)
			if err != nil {
				t.Fatal(err)
			}
			want := describe(t, r)
			noSpool = false
			if len(want) != 6 {
				t.Fatalf("%d messages: %q", len(want), want)
			}
			ways := []struct {
				name   string
				rd     func() io.Reader
				stream bool // read back from the temporary file
			}{
				{"file", func() io.Reader { return bytes.NewReader(in) }, false},
				{"stream", func() io.Reader { return struct{ io.Reader }{bytes.NewReader(in)} }, true},
				{"half", func() io.Reader { return iotest.HalfReader(bytes.NewReader(in)) }, true},
				{"gzip", func() io.Reader { return bytes.NewReader(gzipped(in)) }, true},
			}
			if eol == "\n" && limit == 0 {
				ways = append(ways, struct {
					name   string
					rd     func() io.Reader
					stream bool
				}{"onebyte", func() io.Reader { return iotest.OneByteReader(bytes.NewReader(in)) }, true})
			}
			for _, slow := range []bool{false, true} {
				for _, w := range ways {
					lineByLine = slow
					r, err := NewReader(w.rd(), "in", opts)
					if err != nil {
						t.Fatal(err)
					}
					got := describe(t, r)
					lineByLine = false
					if (r.sp.tmp != nil) != w.stream || (r.sp.ra != nil) == w.stream || r.sp.fills < 4 {
						t.Errorf("%q limit %d %s: temporary file %v, read again from the file %v, %d messages held aside", eol, limit, w.name, r.sp.tmp != nil, r.sp.ra != nil, r.sp.fills)
					}
					r.Close()
					if strings.Join(got, "\n") != strings.Join(want, "\n") {
						t.Errorf("%q limit %d %s (line by line %v):\n got %q\nwant %q", eol, limit, w.name, slow, got, want)
					}
				}
			}
			if entries, _ := os.ReadDir(opts.TempDir); len(entries) > 0 {
				t.Errorf("temporary files left: %v", entries)
			}
		}
	}
}

// TestSpoolSingle: a long single message and long plain text read from a
// stream come out as when read from a file.
func TestSpoolSingle(t *testing.T) {
	defer func(n int) { spoolAfter = n }(spoolAfter)
	spoolAfter = 64 << 10
	msg := []byte("From: a@example.org\nSubject: long\n\n" + longBody(spoolAfter*3, "\n", true))
	for _, f := range []Format{FormatMessage, FormatText} {
		for _, limit := range []int64{0, int64(spoolAfter) * 2} {
			opts := &Options{Format: f, MaxMessageSize: limit, TempDir: t.TempDir()}
			noSpool = true
			r, _ := NewReader(bytes.NewReader(msg), "in", opts)
			want := describe(t, r)
			noSpool = false
			for _, rd := range []io.Reader{struct{ io.Reader }{bytes.NewReader(msg)}, iotest.HalfReader(bytes.NewReader(msg)), iotest.OneByteReader(bytes.NewReader(msg))} {
				r, _ := NewReader(rd, "in", opts)
				got := describe(t, r)
				if r.sp.tmp == nil && limit == 0 {
					t.Errorf("%s: no temporary file", f)
				}
				r.Close()
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("%s limit %d:\n got %q\nwant %q", f, limit, got, want)
				}
			}
		}
	}
}

// rereader is a file whose bytes read again at an offset are not what
// they were: changed, or an error.
type rereader struct {
	*bytes.Reader
	readAt func(p []byte, off int64) (int, error)
}

func (r *rereader) ReadAt(p []byte, off int64) (int, error) { return r.readAt(p, off) }

// TestSpoolReadAgain: a long message whose bytes read again from the file
// differ (the file was written to meanwhile) or cannot be read again is
// reported, not silently wrong: a problem, and for bytes that cannot be
// read a hole and the reader's error.
func TestSpoolReadAgain(t *testing.T) {
	defer func(n int) { spoolAfter = n }(spoolAfter)
	spoolAfter = 64 << 10
	in := spoolMbox("\n")
	changed := &rereader{Reader: bytes.NewReader(in)}
	changed.readAt = func(p []byte, off int64) (int, error) {
		n, err := bytes.NewReader(in).ReadAt(p, off)
		p[n/2] ^= 1
		return n, err
	}
	r, _ := NewReader(changed, "in", nil)
	r.Next()
	m, err := r.Next()
	if err != nil || m.MessageID != "long1@x" {
		t.Fatalf("%v %v", m, err)
	}
	var ie *InputError
	if len(m.Problems) != 1 || !errors.As(m.Problems[0].Err, &ie) || !errors.Is(m.Problems[0], ErrUnreadable) || !strings.Contains(m.Problems[0].Msg, "changed") {
		t.Errorf("problems %q", m.Problems)
	}
	if rest := describe(t, r); len(rest) != 4 {
		t.Errorf("%d messages after it, want 4: %q", len(rest), rest)
	}

	failing := &rereader{Reader: bytes.NewReader(in)}
	failing.readAt = func(p []byte, off int64) (int, error) { return 0, errors.New("disk on fire") }
	r, _ = NewReader(failing, "in", nil)
	r.Next()
	m, err = r.Next()
	if m == nil || m.MessageID != "long1@x" {
		t.Fatalf("%v %v", m, err)
	}
	if len(m.Holes) != 1 || len(m.Problems) != 1 || !errors.As(m.Problems[0].Err, &ie) || !strings.Contains(m.Problems[0].Msg, "disk on fire") {
		t.Errorf("holes %v problems %q", m.Holes, m.Problems)
	}
	if got := len(m.Raw) + int(m.Holes[0].Len); int64(got) != m.Length-int64(len(m.FromLine))-1 {
		t.Errorf("raw %d + hole %d, message %d", len(m.Raw), m.Holes[0].Len, m.Length)
	}
	for err == nil {
		_, err = r.Next()
	}
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("reader error %v", err)
	}
}

// TestLongMessageMemory: reading a long message allocates about its size
// once, not the copies of a buffer grown by append (about five times its
// size with peaks of three, before), whether it is read again from the
// file or from a temporary file, and with a Content-Length.
func TestLongMessageMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads messages of 24 MiB")
	}
	const size = 24 << 20
	body := longBody(size, "\n", false)
	in := []byte("From a@example.org Mon Mar  7 10:00:00 1994\nMessage-ID: <s@x>\n\nsmall\n\n" +
		"From a@example.org Mon Mar  7 10:00:00 1994\nMessage-ID: <l@x>\n\n" + body + "\n" +
		fmt.Sprintf("From a@example.org Mon Mar  7 10:00:00 1994\nMessage-ID: <c@x>\nContent-Length: %d\n\n", len(body)) + body + "\n")
	for _, way := range []string{"file", "stream"} {
		var rd io.Reader = bytes.NewReader(in)
		if way == "stream" {
			rd = struct{ io.Reader }{rd}
		}
		r, err := NewReader(rd, "in", &Options{TempDir: t.TempDir(), DeferParse: true})
		if err != nil {
			t.Fatal(err)
		}
		m, _ := r.Next()
		m.Release()
		for _, id := range []string{"l@x", "c@x"} {
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			m, err := r.Next()
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			if m.Parse(); m.MessageID != id || len(m.Raw) < size {
				t.Fatalf("%s: %v %s %d bytes", way, err, m.MessageID, len(m.Raw))
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%s %s: %.1f MiB allocated for %.1f MiB", way, id, float64(alloc)/(1<<20), float64(len(m.Raw))/(1<<20))
			// the message once, and the buffer that grew to spoolAfter
			// before it was known to be long
			if limit := uint64(len(m.Raw) + 3*spoolAfter); alloc > limit {
				t.Errorf("%s %s: %d bytes allocated to read %d (at most %d)", way, id, alloc, len(m.Raw), limit)
			}
			m.Release()
		}
		r.Close()
	}
}

// TestLongSingleMemory: a long single message read from a stream (whose
// size is not known) allocates about its size once.
func TestLongSingleMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a message of 24 MiB")
	}
	msg := []byte("From: a@example.org\nSubject: long\n\n" + longBody(24<<20, "\n", false))
	for _, f := range []Format{FormatMessage, FormatText} {
		r, err := NewReader(struct{ io.Reader }{bytes.NewReader(msg)}, "-", &Options{Format: f, TempDir: t.TempDir(), DeferParse: true})
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		m, err := r.Next()
		runtime.ReadMemStats(&after)
		r.Close()
		if err != nil || len(m.Raw) != len(msg) {
			t.Fatalf("%s: %v, %d bytes of %d", f, err, len(m.Raw), len(msg))
		}
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: %.1f MiB allocated for %.1f MiB", f, float64(alloc)/(1<<20), float64(len(m.Raw))/(1<<20))
		if limit := uint64(len(m.Raw) + 3*spoolAfter); alloc > limit {
			t.Errorf("%s: %d bytes allocated to read %d (at most %d)", f, alloc, len(m.Raw), limit)
		}
	}
}

// TestFolderLongMessages: an mbox file and a long single message in a
// folder are read again from the file once they are known not to be
// small messages (not from the bytes read so far, held meanwhile), and
// their long messages allocate about their size once; past the message
// size limit, the message read so far grows as it did (overflow.go).
func TestFolderLongMessages(t *testing.T) {
	if testing.Short() {
		t.Skip("writes messages of 24 MiB")
	}
	dir := t.TempDir()
	body := longBody(24<<20, "\n", false)
	mbox := "From a@example.org Mon Mar  7 10:00:00 1994\nMessage-ID: <m1@x>\n\nsmall\n\n" +
		"From a@example.org Mon Mar  7 10:00:00 1994\nMessage-ID: <m2@x>\n\n" + body
	os.WriteFile(dir+"/a.mbox", []byte(mbox), 0o644)
	single := "Message-ID: <s@x>\nFrom: a@example.org\n\n" + body
	os.WriteFile(dir+"/b.eml", []byte(single), 0o644)
	for _, max := range []int64{0, 20 << 20} {
		r, err := Open(dir, &Options{MaxMessageSize: max, DeferParse: true})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for {
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			m, err := r.Next()
			runtime.ReadMemStats(&after)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			m.Parse()
			alloc := after.TotalAlloc - before.TotalAlloc
			got = append(got, fmt.Sprintf("%s %d %d %v", m.MessageID, m.RawOffset, len(m.Raw), m.Holes))
			t.Logf("limit %d %s: %.1f MiB allocated for %.1f MiB", max, m.MessageID, float64(alloc)/(1<<20), float64(len(m.Raw))/(1<<20))
			limit := uint64(len(m.Raw) + 3*spoolAfter)
			if max > 0 {
				limit = uint64(len(m.Raw))*5/2 + 1<<20 // the growth past the limit
			}
			if alloc > limit {
				t.Errorf("limit %d %s: %d bytes allocated for %d (at most %d)", max, m.MessageID, alloc, len(m.Raw), limit)
			}
			m.Release()
		}
		r.Close()
		want := []string{"m1@x 44 27 []", fmt.Sprintf("m2@x %d %d []", 44+27+44, 20+len(body)), fmt.Sprintf("s@x 0 %d []", len(single))}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("limit %d: got\n%s\nwant\n%s", max, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// FuzzSpool: with every message long (spoolAfter lowered to a few
// bytes), messages held aside and read again, from the file or from a
// temporary file, come out as when they grow in memory: same bytes,
// offsets, holes and problems, for every format with a stream reader.
func FuzzSpool(f *testing.F) {
	for _, name := range []string{"mboxrd.mbox", "crlf.mbox", "mboxcl2.mbox", "truncated.mbox", "archive.mmdf", "bom.mbox"} {
		if b, err := os.ReadFile("../testdata/mail/" + name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("From a@b Sat Jan  3 01:05:34 1996\nContent-Length: 25\nX: y\r\n\r\nabcd\nFrom the desk\nabcd\n\nFrom a@b Sat Jan  3 01:05:34 1996\nFrom x\n\n"))
	f.Add([]byte("From a@b Sat Jan  3 01:05:34 1996\nContent-Length: 99\n\nshort\n\nFrom a@b Sat Jan  3 01:05:34 1996\nX: y\n\nb\n"))
	f.Add([]byte("From a@b Sat Jan  3 01:05:34 1996\nX: y\n\nb\n\nFrom c@d Sat Jan  3 01:05:34 1996\rX: y\r\rb\r\rFrom e@f Sat Jan  3 01:05:34 1996\nX: y\n\nb\n"))
	f.Add([]byte("Subject: a single message\nContent-Type: multipart/mixed; boundary=x\n\n--x\n\nsome text in a part\n--x\nContent-Type: image/png\n\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n--x\n\nafter\n--x--\n"))
	f.Add([]byte("just some text, long enough to be held aside http://example.org/\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		defer func(n int) { spoolAfter = n }(spoolAfter)
		spoolAfter = 16
		describe := func(r io.Reader, o *Options) string {
			rd, err := NewReader(r, "fuzz", o)
			if err != nil {
				return err.Error()
			}
			defer rd.Close()
			var b strings.Builder
			for n := 0; n < 10000; n++ {
				m, err := rd.Next()
				if m != nil {
					fmt.Fprintf(&b, "%d+%d %d %q %v %v|", m.Offset, m.Length, m.RawOffset, m.Raw, m.Problems, m.Holes)
				}
				if err != nil {
					fmt.Fprintf(&b, "%v", err)
					break
				}
			}
			return b.String()
		}
		for _, o := range []*Options{nil, {MaxMessageSize: 64, MaxPartSize: 40}, {Format: FormatMessage, MaxMessageSize: 64, MaxPartSize: 40}} {
			noSpool = true
			want := describe(bytes.NewReader(data), o)
			noSpool = false
			file, stream := describe(bytes.NewReader(data), o), describe(iotest.OneByteReader(bytes.NewReader(data)), o)
			if file != want || stream != want {
				t.Errorf("%+v:\nfile   %.500s\nstream %.500s\nwant   %.500s", o, file, stream, want)
			}
		}
	})
}

// raceEnabled is set in race_test.go.
var raceEnabled bool

// TestDoubled: a buffer grown by doubled from the pool's smallest reaches
// spoolAfter exactly (not past it, where the pool would not take it back),
// for about spoolAfter in all.
func TestDoubled(t *testing.T) {
	for _, start := range []int{4096, 65399, 3 << 20} {
		for _, step := range []int{1, 100, 64 << 10, 1 << 20} {
			c, sum := start, 0
			for c < spoolAfter {
				c = doubled(c, min(c+step, spoolAfter))
				sum += c
			}
			if c != spoolAfter || sum > 2*spoolAfter {
				t.Errorf("from %d by %d: grew to %d, %d bytes in all", start, step, c, sum)
			}
		}
	}
}

// TestLongBufferReused: the buffer of a long message released is the
// next long message's, while the collector has not taken it (here a
// reference kept stands for "not yet collected"), so that two long
// messages are not held at once; a buffer much larger than needed is
// not taken.
func TestLongBufferReused(t *testing.T) {
	body := longBody(spoolAfter*3, "\n", false)
	in := []byte("From a@example.org Mon Mar  7 10:00:00 1994\nMessage-ID: <1@x>\n\n" + body + "\n" +
		"From a@example.org Mon Mar  7 10:00:00 1994\nMessage-ID: <2@x>\n\n" + body[:len(body)-100] + "\n" +
		"From a@example.org Mon Mar  7 10:00:00 1994\nMessage-ID: <3@x>\n\n" + body[:len(body)/3] + "\n")
	for _, mk := range []func() io.Reader{
		func() io.Reader { return bytes.NewReader(in) },
		func() io.Reader { return struct{ io.Reader }{bytes.NewReader(in)} },
	} {
		// The first spoolAfter bytes' buffer comes back through a
		// sync.Pool, which a collection at the wrong moment empties (and
		// whose slots are per P): under load one run in some tens then
		// makes a new one. A regression (append's growth, 10 MiB per long
		// message) fails every attempt; the pool's chance, not three.
		var alloc uint64
		for attempt := 0; attempt < 3; attempt++ {
			if alloc = longBufferRun(t, mk(), in); alloc <= 2<<20 || raceEnabled {
				break
			}
		}
		if alloc > 2<<20 && !raceEnabled {
			t.Errorf("%T: %d bytes allocated for the second long message, in each of three runs", mk(), alloc)
		}
	}
}

// longBufferRun reads the three messages of TestLongBufferReused from rd
// and returns the bytes allocated while the second one was read.
func longBufferRun(t *testing.T, rd io.Reader, in []byte) uint64 {
	r, _ := NewReader(rd, "in", &Options{TempDir: t.TempDir()})
	defer r.Close()
	m1, _ := r.Next()
	kept := m1.Raw
	procs := runtime.GOMAXPROCS(1)
	gc := debug.SetGCPercent(-1)
	m1.Release()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	m2, _ := r.Next()
	runtime.ReadMemStats(&after)
	debug.SetGCPercent(gc)
	runtime.GOMAXPROCS(procs)
	if !sameStart(m2.Raw, kept) || m2.MessageID != "2@x" || !bytes.Equal(m2.Raw, in[m2.RawOffset:m2.RawOffset+int64(len(m2.Raw))]) {
		t.Errorf("%T: the second long message is not in the first one's buffer, or differs from the file", rd)
	}
	kept = m2.Raw
	m2.Release()
	m3, _ := r.Next()
	if sameStart(m3.Raw, kept) || m3.MessageID != "3@x" {
		t.Errorf("%T: a buffer three times the size needed was taken", rd)
	}
	runtime.KeepAlive(kept)
	// the buffer that took the message's first spoolAfter bytes is the
	// pool's again, not grown anew
	return after.TotalAlloc - before.TotalAlloc
}

// TestOverLimitMemory: past the message size limit, what a message keeps
// (its text parts: overflow.go) is held aside too and read into one
// buffer at the end, not grown in copies, and the bytes up to the limit
// are not made into a buffer of their own first (overflowHeld): a 120 MB
// message of three text parts took 331 MB RSS (limit 64 MiB), 146 MB
// now; the bytes, holes and problems are those of growing in memory.
func TestOverLimitMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a message of 36 MiB")
	}
	const limit = 16 << 20
	text := longBody(12<<20, "\n", false)
	msg := "From a@example.org Mon Mar  7 10:00:00 1994\nMessage-ID: <o@x>\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=b\n\n"
	for range 3 {
		msg += "--b\nContent-Type: text/plain\n\n" + text + "--b\nContent-Type: image/png\n\n" + strings.Repeat("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk\n", 2000)
	}
	msg += "--b--\n"
	in := []byte(msg)
	noSpool = true
	r, _ := NewReader(bytes.NewReader(in), "in", &Options{MaxMessageSize: limit})
	want := describe(t, r)
	noSpool = false
	for _, way := range []string{"file", "stream"} {
		mk := func() io.Reader {
			if way == "stream" {
				return struct{ io.Reader }{bytes.NewReader(in)}
			}
			return bytes.NewReader(in)
		}
		r, _ := NewReader(mk(), "in", &Options{MaxMessageSize: limit, TempDir: t.TempDir(), DeferParse: true})
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		m, err := r.Next()
		runtime.ReadMemStats(&after)
		if err != nil || len(m.Holes) == 0 {
			t.Fatalf("%s: %v, holes %v", way, err, m.Holes)
		}
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: %.1f MiB allocated for %.1f MiB kept of %.1f MiB", way, float64(alloc)/(1<<20), float64(len(m.Raw))/(1<<20), float64(len(in))/(1<<20))
		// all kept once (not first the limit's bytes, then all again),
		// with the pool's 4 MiB and overflowHeld's look back
		if bound := uint64(len(m.Raw) + 3*spoolAfter + 2<<20); alloc > bound {
			t.Errorf("%s: %d bytes allocated to keep %d (at most %d)", way, alloc, len(m.Raw), bound)
		}
		m.Release()
		r.Close()
		r, _ = NewReader(mk(), "in", &Options{MaxMessageSize: limit, TempDir: t.TempDir()})
		if got := describe(t, r); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", way, got, want)
		}
	}
}

// TestSpoolReadAgainOverLimit: when what a message kept past its limit
// cannot be read again, Raw ends where it could, and its holes still
// account for every byte of the message in the file.
func TestSpoolReadAgainOverLimit(t *testing.T) {
	defer func(n int) { spoolAfter = n }(spoolAfter)
	spoolAfter = 64 << 10
	in := spoolMbox("\n")
	// the multipart message, whose attachment crosses the limit and is
	// left out, its text after it kept: what is kept past the limit
	// cannot be read again
	multi := int64(bytes.Index(in, []byte("<multi@x>")))
	limit := int64(spoolAfter) * 3
	failed := false
	failing := &rereader{Reader: bytes.NewReader(in)}
	failing.readAt = func(p []byte, off int64) (int, error) {
		if off > multi+limit {
			failed = true
			return 0, errors.New("disk on fire")
		}
		return bytes.NewReader(in).ReadAt(p, off)
	}
	r, _ := NewReader(failing, "in", &Options{MaxMessageSize: limit})
	var m *Message
	var err error
	for err == nil && !failed {
		m, err = r.Next()
	}
	if m == nil || m.MessageID != "multi@x" || len(m.Holes) != 1 || !strings.Contains(fmt.Sprint(m.Problems), "disk on fire") {
		t.Fatalf("%v: %s holes %v problems %q", err, m.MessageID, m.Holes, m.Problems)
	}
	held := int64(len(m.Raw))
	for _, h := range m.Holes {
		held += h.Len
	}
	if extent := m.Offset + m.Length - m.RawOffset; held != extent {
		t.Errorf("raw %d and holes %v make %d bytes, the message has %d", len(m.Raw), m.Holes, held, extent)
	}
	for err == nil {
		_, err = r.Next()
	}
	if !strings.Contains(fmt.Sprint(err), "disk on fire") {
		t.Errorf("reader error %v", err)
	}
}

// TestFolderLongBufferReused: in a folder, a long message file is read
// into the buffer of the long message released before it (while the
// collector has not taken it: a reference kept stands for that).
func TestFolderLongBufferReused(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(dir+"/cur", 0o755)
	os.MkdirAll(dir+"/new", 0o755)
	body := longBody(spoolAfter*2, "\n", false)
	os.WriteFile(dir+"/cur/1.x:2,S", []byte("Message-ID: <1@x>\n\n"+body), 0o644)
	os.WriteFile(dir+"/cur/2.x:2,S", []byte("Message-ID: <2@x>\n\n"+body[:len(body)-50]), 0o644)
	r, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	m1, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	kept := m1.Raw
	m1.Release()
	m2, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if !sameStart(m2.Raw, kept) || m1.MessageID == m2.MessageID || len(m2.Raw) != len(body)-50+19 {
		t.Errorf("the second long file is not in the first one's buffer (%s, %d bytes)", m2.MessageID, len(m2.Raw))
	}
	runtime.KeepAlive(kept)
}

// TestOverflowHeldFallback: past the limit, when the header of the part
// being read runs past what overflowHeld looks at (1 MiB), or the part
// has no header end, the message is filled and overflow starts from it
// as before: the same bytes, holes and problems as growing in memory.
func TestOverflowHeldFallback(t *testing.T) {
	defer func(n int) { spoolAfter = n }(spoolAfter)
	spoolAfter = 64 << 10
	long := strings.Repeat("X-Long: "+strings.Repeat("x", 70)+"\n", (1<<20)/79+100) // past 1 MiB
	for name, part := range map[string]string{
		"long part header":       "--b\nContent-Type: text/plain\n" + long + "\n" + longBody(1<<20, "\n", false),
		"part header never ends": "--b\nContent-Type: text/plain\n" + long + long,
		"no boundary":            longBody(3<<20, "\n", false),
		"a line past the limit":  "--b\nContent-Type: text/plain\n\n" + strings.Repeat("y", 2<<20) + "\n",
		"header starts with --":  "",
	} {
		head := "Message-ID: <f@x>\n"
		if part == "" {
			head, part = "--not a field\nMessage-ID: <f@x>\n", longBody(3<<20, "\n", false)
		}
		in := []byte("From a@example.org Mon Mar  7 10:00:00 1994\n" + head + "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=b\n\n" +
			"--b\nContent-Type: text/plain\n\n" + longBody(200<<10, "\n", false) + part + "--b\nContent-Type: text/plain\n\nafter http://example.org/after\n--b--\n\n" +
			"From a@example.org Mon Mar  7 10:00:00 1994\nMessage-ID: <g@x>\n\nnext\n")
		opts := &Options{MaxMessageSize: 1<<20 + 300<<10, TempDir: t.TempDir()}
		noSpool = true
		r, _ := NewReader(bytes.NewReader(in), "in", opts)
		want := describe(t, r)
		noSpool = false
		for _, rd := range []io.Reader{bytes.NewReader(in), struct{ io.Reader }{bytes.NewReader(in)}} {
			r, _ := NewReader(rd, "in", opts)
			got := describe(t, r)
			r.Close()
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s, %T:\n got %q\nwant %q", name, rd, got, want)
			}
		}
	}
}

// TestSingleOverLimitMemory: a single message past the size limit, from
// a file (its size known) and from a stream, is read as the mbox
// splitter reads one (TestOverLimitMemory): its bytes up to the limit
// held aside, not read into a buffer of the limit's size first, and
// what it keeps read into one buffer at the end. The single-message
// reader made the limit's buffer, then the buffer of what was kept: a
// 120 MB message of three 40 MB text parts peaked at 187 MB, as an mbox
// at 146-149 MB.
func TestSingleOverLimitMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a message of 36 MiB")
	}
	const limit = 20 << 20 // (16 MiB would leave the old way 2 MiB over the bound)
	text := longBody(12<<20, "\n", false)
	msg := "Message-ID: <o@x>\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=b\n\n"
	for range 3 {
		msg += "--b\nContent-Type: text/plain\n\n" + text + "--b\nContent-Type: image/png\n\n" + strings.Repeat("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk\n", 2000)
	}
	msg += "--b--\n"
	in := []byte(msg)
	path := filepath.Join(t.TempDir(), "big.eml")
	if err := os.WriteFile(path, in, 0o644); err != nil {
		t.Fatal(err)
	}
	// what the mbox reader keeps of the same message
	from := "From a@example.org Mon Mar  7 10:00:00 1994\n"
	r, _ := NewReader(strings.NewReader(from+msg), "in", &Options{MaxMessageSize: limit, TempDir: t.TempDir()})
	mb, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	wantRaw, wantHoles := bytes.Clone(mb.Raw), slices.Clone(mb.Holes)
	r.Close()
	for _, way := range []string{"file", "stream"} {
		open := func(o *Options) *Reader {
			o.MaxMessageSize, o.TempDir, o.Format = limit, t.TempDir(), FormatMessage
			if way == "file" {
				r, err := Open(path, o)
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			r, _ := NewReader(struct{ io.Reader }{bytes.NewReader(in)}, "in", o)
			return r
		}
		r := open(&Options{DeferParse: true})
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		m, err := r.Next()
		runtime.ReadMemStats(&after)
		if err != nil || len(m.Holes) == 0 {
			t.Fatalf("%s: %v, holes %v", way, err, m.Holes)
		}
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: %.1f MiB allocated for %.1f MiB kept of %.1f MiB", way, float64(alloc)/(1<<20), float64(len(m.Raw))/(1<<20), float64(len(in))/(1<<20))
		if bound := uint64(len(m.Raw) + 3*spoolAfter + 2<<20); alloc > bound {
			t.Errorf("%s: %d bytes allocated to keep %d (at most %d)", way, alloc, len(m.Raw), bound)
		}
		// kept as the mbox reader keeps it
		if !bytes.Equal(m.Raw, wantRaw) || fmt.Sprint(m.Holes) != fmt.Sprint(wantHoles) {
			t.Errorf("%s: %d bytes kept, holes %v; as an mbox %d, %v", way, len(m.Raw), m.Holes, len(wantRaw), wantHoles)
		}
		m.Release()
		r.Close()
	}
}

// TestSingleOverLimitAsMbox: a single message past the size limit keeps
// what the same message keeps in an mbox (its bytes, holes and
// problems, at offsets moved by the "From " line), read from a file or a
// stream, whole or a byte at a time: generated multiparts with text,
// attachments, long lines and lines cut at the limit.
func TestSingleOverLimitAsMbox(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	pieces := []string{"--b\n", "--b--\n", "Content-Type: text/plain\n", "Content-Type: image/png\n", "\n", "text line http://example.org/\n",
		"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n", "a very long line " + strings.Repeat("x", 300) + "\n", "no line ending", "\r\n", "\r"}
	const from = "From a@example.org Mon Mar  7 10:00:00 1994\n"
	dir := t.TempDir()
	for i := range 500 {
		var b strings.Builder
		b.WriteString("Subject: x\nContent-Type: multipart/mixed; boundary=b\n\n")
		for n := rng.Intn(40); n > 0; n-- {
			b.WriteString(pieces[rng.Intn(len(pieces))])
		}
		msg := b.String()
		for _, o := range []Options{{MaxMessageSize: 64, MaxPartSize: 40}, {MaxMessageSize: 200, MaxPartSize: 100}} {
			say := func(m *Message, shift int64) string {
				var ps []string
				for _, p := range m.Problems {
					ps = append(ps, fmt.Sprintf("%d %s", p.Offset-shift, p.Msg))
				}
				return fmt.Sprintf("%q %v %q", m.Raw, m.Holes, ps)
			}
			mo := o
			r, _ := NewReader(strings.NewReader(from+msg), "in", &mo)
			mb, _ := r.Next()
			want := say(mb, int64(len(from)))
			path := filepath.Join(dir, fmt.Sprintf("%d.eml", i))
			os.WriteFile(path, []byte(msg), 0o644)
			for _, way := range []string{"file", "stream", "one byte"} {
				so := o
				so.Format = FormatMessage
				var r *Reader
				switch way {
				case "file":
					r, _ = Open(path, &so)
				case "stream":
					r, _ = NewReader(struct{ io.Reader }{strings.NewReader(msg)}, "in", &so)
				default:
					r, _ = NewReader(iotest.OneByteReader(strings.NewReader(msg)), "in", &so)
				}
				m, err := r.Next()
				r.Close()
				if err != nil {
					t.Fatalf("%d %s: %v", i, way, err)
				}
				if got := say(m, 0); got != want {
					t.Fatalf("%d, limit %d, %s:\n got %s\nwant %s\nmessage %q", i, o.MaxMessageSize, way, got, want, msg)
				}
			}
		}
	}
}
