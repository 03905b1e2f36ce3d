package rewrite

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/linkscan/linkscan/internal/corpus"
	"github.com/linkscan/linkscan/mailbox"
)

// benchMbox is a generated realistic mbox (internal/corpus) of 4 MiB.
func benchMbox(b *testing.B) []byte {
	var buf bytes.Buffer
	if err := corpus.Write(&buf, 4<<20, 1); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkMessage: the whole rewrite of an mbox (split, MIME walk,
// extraction, rules, splicing, the bytes between messages copied),
// written to io.Discard. changes=1in10 maps one host of the nine the
// generator uses (about one link in ten); changes=none has no rules (the
// copy path: nothing is encoded again, out is m.Raw); walk-only is the
// split and MIME walk alone, for scale.
func BenchmarkMessage(b *testing.B) {
	data := benchMbox(b)
	oneIn10, err := Parse(strings.NewReader("[[rule]]\naction = \"map\"\nfrom-host = \"ftp.uu.net\"\nto-host = \"ftp.example.org\"\n"), "bench.toml")
	if err != nil {
		b.Fatal(err)
	}
	none, err := Parse(strings.NewReader(""), "none.toml")
	if err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, rs *Rules) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		var links, written, msgs int
		for b.Loop() {
			rd, err := mailbox.NewReader(bytes.NewReader(data), "bench.mbox", nil)
			if err != nil {
				b.Fatal(err)
			}
			at := int64(0)
			links, written, msgs = 0, 0, 0
			for {
				m, err := rd.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
				msgs++
				io.Discard.Write(data[at:m.RawOffset])
				if rs == nil {
					m.Parts()
					io.Discard.Write(m.Raw)
				} else {
					out, chs, _ := rs.Message(m, nil)
					io.Discard.Write(out)
					for _, c := range chs {
						links++
						if c.Skipped == "" {
							written++
						}
					}
				}
				at = m.RawOffset + int64(len(m.Raw))
				m.Release()
			}
		}
		b.ReportMetric(float64(written), "links-written")
		b.ReportMetric(float64(msgs), "messages")
	}
	b.Run("changes=1in10", func(b *testing.B) { run(b, oneIn10) })
	b.Run("changes=none", func(b *testing.B) { run(b, none) })
	b.Run("walk-only", func(b *testing.B) { run(b, nil) })
}
