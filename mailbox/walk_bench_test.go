package mailbox

import (
	"bytes"
	"io"
	"testing"

	"github.com/linkscan/linkscan/internal/corpus"
)

// BenchmarkWalk measures the MIME walk alone (decoding, charsets,
// format=flowed, HTML and their spans) over the messages of a generated
// 4 MiB mbox, split and parsed beforehand.
func BenchmarkWalk(b *testing.B) {
	var buf bytes.Buffer
	corpus.Write(&buf, 4<<20, 1)
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
			// give the text back, keep the message
			m.bytes.release(&bytePools)
			m.spans.release(&spanPools)
			m.partUsed = false
		}
	}
}
