package mailbox

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
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
		r, err := NewReader(bytes.NewReader(data), "fuzz", &Options{MaxDepth: 8, MaxParts: 50})
		if err != nil {
			return // a compressed stream with a broken header
		}
		size := int64(len(data))
		if _, c, _ := decompress(bytes.NewReader(data)); c != nil || bytes.HasPrefix(data, []byte("BZh")) {
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
	})
}
