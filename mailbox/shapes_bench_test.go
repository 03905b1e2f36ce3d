package mailbox

import (
	"bytes"
	"io"
	"testing"

	"github.com/linkscan/linkscan/internal/shapes"
)

// BenchmarkWalkShapes measures the MIME walk (decoding, charsets,
// format=flowed, HTML and their maps) on each shape of mail of the shape
// benchmark (internal/shapes, built-in texts), 4 MiB of it split and
// parsed beforehand; scripts/shapes.sh measures the whole program.
func BenchmarkWalkShapes(b *testing.B) {
	for _, s := range shapes.All {
		if s.Needs != "" || s.Name == "maildir" {
			continue
		}
		b.Run(s.Name, func(b *testing.B) {
			var buf bytes.Buffer
			if err := shapes.Write(&buf, s.Name, 4<<20, shapes.Docs{}); err != nil {
				b.Fatal(err)
			}
			r, err := NewReader(bytes.NewReader(buf.Bytes()), "bench", nil)
			if err != nil {
				b.Fatal(err)
			}
			var msgs []*Message
			for {
				m, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
				msgs = append(msgs, m)
			}
			b.SetBytes(int64(buf.Len()))
			b.ReportAllocs()
			for b.Loop() {
				for _, m := range msgs {
					m.Parts()
					m.bytes.release(&bytePools)
					m.spans.release(&spanPools)
					m.partUsed = false
				}
			}
		})
	}
}
