package scan

import (
	"bytes"
	"io"
	"testing"

	"github.com/linkscan/linkscan/internal/shapes"
	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/report"
)

// BenchmarkScanShapes is the scan to JSON lines of 8 MiB of each shape of
// mail of the shape benchmark (internal/shapes, built-in texts), one job:
// splitting, the walk, link finding, spans and records.
// scripts/shapes.sh measures the whole program.
func BenchmarkScanShapes(b *testing.B) {
	for _, s := range shapes.All {
		if s.Needs != "" || s.Name == "maildir" {
			continue
		}
		b.Run(s.Name, func(b *testing.B) {
			var buf bytes.Buffer
			if err := shapes.Write(&buf, s.Name, 8<<20, shapes.Docs{}); err != nil {
				b.Fatal(err)
			}
			in := buf.Bytes()
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				w, _ := report.NewWriter(io.Discard, report.JSONL)
				open := func(string) (*mailbox.Reader, error) {
					return mailbox.NewReader(bytes.NewReader(in), "bench", &mailbox.Options{DeferParse: true})
				}
				err := Run([]string{"bench"}, open, &Config{Jobs: 1}, nil, func(r *Result) error {
					for i := range r.Records {
						w.Write(&r.Records[i])
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				w.Close()
			}
		})
	}
}
