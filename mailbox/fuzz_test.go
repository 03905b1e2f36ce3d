package mailbox

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

// FuzzReader feeds arbitrary bytes to the splitter and the MIME walk: no
// input may crash or hang them, and every offset must lie in the input.
func FuzzReader(f *testing.F) {
	files, _ := filepath.Glob("../testdata/mail/*")
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil && len(b) < 4096 {
			f.Add(b)
		}
	}
	f.Add([]byte("From a\n\nFrom b\nContent-Type: multipart/mixed; boundary=x\n\n--x\n--x--\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzRead(t, data, &Options{MaxDepth: 8, MaxParts: 50})
		// a small message limit: messages with holes (overflow)
		fuzzRead(t, data, &Options{MaxDepth: 8, MaxParts: 50, MaxMessageSize: 100, MaxPartSize: 60})
	})
}

func fuzzRead(t *testing.T, data []byte, o *Options) {
	{
		r, err := NewReader(bytes.NewReader(data), "fuzz", o)
		if err != nil {
			return // a compressed stream with a broken header
		}
		size := int64(len(data))
		if _, _, what, _ := decompress(bytes.NewReader(data), "fuzz"); what != "" {
			size = 1 << 62 // offsets are in the decompressed stream
		}
		for n := 0; n < 10000; n++ {
			m, err := r.Next()
			if err == io.EOF || m == nil {
				return
			}
			if m.Offset < 0 || m.Offset > size || m.Offset+m.Length > size {
				t.Fatalf("message [%d,+%d) outside %d bytes", m.Offset, m.Length, size)
			}
			for _, p := range m.Parts() {
				if p.RawStart < 0 || p.RawEnd > size || p.RawStart > p.RawEnd {
					t.Fatalf("part %s [%d,%d) outside %d bytes", p.Path, p.RawStart, p.RawEnd, size)
				}
				for i := 0; i < len(p.Text); i += 97 {
					if off := p.RawOffset(i); off < 0 || off > size {
						t.Fatalf("RawOffset(%d) = %d outside %d bytes", i, off, size)
					}
				}
			}
			if err != nil {
				return
			}
		}
		t.Fatal("more than 10000 messages from a small input")
	}
}

// FuzzSplitReaders: an mbox split with the fast paths that work in the
// read buffer gives the messages the line-by-line reading they stand in
// for gives, also when read one byte at a time.
func FuzzSplitReaders(f *testing.F) {
	for _, name := range []string{"mboxrd.mbox", "crlf.mbox", "mboxcl2.mbox", "truncated.mbox", "archive.mmdf", "bom.mbox"} {
		if b, err := os.ReadFile("../testdata/mail/" + name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("From a@b Sat Jan  3 01:05:34 1996\nContent-Length: 5\nX: y\r\n\r\nabcd\n\nFrom a@b Sat Jan  3 01:05:34 1996\nFrom x\n\n"))
	// Content-Length fields that disagree with the messages' ends: into
	// the next "From " line, counted with CRLF in an LF file, not a number
	f.Add([]byte("From a@b Sat Jan  3 01:05:34 1996\nContent-Length: 12\n\nbody\n\nFrom c@d Sat Jan  3 01:05:34 1996\nX: y\n\nb\n"))
	f.Add([]byte("From a@b Sat Jan  3 01:05:34 1996\nContent-Length: 9\n\na\nb\n\nFrom c@d Sat Jan  3 01:05:34 1996\nContent-Length: x\n\nb\n"))
	// a separator inside a header ends the message there
	f.Add([]byte("From a@b Sat Jan  3 01:05:34 1996\nX: y\nFrom c@d Sun Jan  4 01:05:34 1996\nY: z\n\nbody\n"))
	f.Add([]byte("\x01\x01\x01\x01\nX: y\n\x01\x01\x01\x01\nY: z\n\nbody\n\x01\x01\x01\x01\n"))
	// a message of bare CR lines in an LF file; Netscape's "From - "
	f.Add([]byte("From a@b Sat Jan  3 01:05:34 1996\nX: y\n\nb\n\nFrom c@d Sat Jan  3 01:05:34 1996\rX: y\r\rb\r\rFrom e@f Sat Jan  3 01:05:34 1996\nX: y\n\nb\n"))
	f.Add([]byte("From - \nSubject: a\n\nb\nFrom - \nSubject: c\n\nd\nFrom the desk\nprose\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !bytes.HasPrefix(data, []byte("From ")) && !bytes.HasPrefix(data, []byte("\x01\x01\x01\x01")) {
			return // the formats with a splitter
		}
		describe := func(r io.Reader, o *Options) string {
			rd, err := NewReader(r, "fuzz", o)
			if err != nil {
				return err.Error()
			}
			var b strings.Builder
			for n := 0; n < 10000; n++ {
				m, err := rd.Next()
				if m != nil {
					fmt.Fprintf(&b, "%d+%d %q %v %v|", m.Offset, m.Length, m.Raw, m.Problems, m.Holes)
				}
				if err != nil {
					fmt.Fprintf(&b, "%v", err)
					break
				}
			}
			return b.String()
		}
		// also with a small message limit, past which only structure and
		// text are kept (overflow)
		for _, o := range []*Options{nil, {MaxMessageSize: 64, MaxPartSize: 40}} {
			fast, oneByte := describe(bytes.NewReader(data), o), describe(iotest.OneByteReader(bytes.NewReader(data)), o)
			lineByLine = true
			slow := describe(bytes.NewReader(data), o)
			lineByLine = false
			if fast != slow || oneByte != slow {
				t.Errorf("splits differ (%+v):\nfast      %.500s\none byte  %.500s\nline by line %.500s", o, fast, oneByte, slow)
			}
		}
		// the format forced as detected, read a byte at a time: the same
		// (with --as only the first line is read before the first message).
		// Detected as the reader detects it, from its first headSize
		// bytes, not from all of data: a first line of 4 KiB hides the
		// header block after it from the reader, which then reads text
		f := FormatAuto
		if rd, err := NewReader(bytes.NewReader(data), "fuzz", nil); err == nil {
			f = rd.Format()
			rd.Close()
		}
		if f == FormatMbox || f == FormatMMDF {
			auto := describe(bytes.NewReader(data), nil)
			if forced := describe(iotest.OneByteReader(bytes.NewReader(data)), &Options{Format: f}); forced != auto {
				t.Errorf("forced %s differs:\nforced %.500s\nauto   %.500s", f, forced, auto)
			}
		}
	})
}
