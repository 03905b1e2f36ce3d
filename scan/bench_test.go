package scan

import (
	"bytes"
	"io"
	"runtime"
	"sync"
	"testing"

	"github.com/linkscan/linkscan/internal/corpus"
	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/report"
)

var (
	benchOnce   sync.Once
	benchCorpus []byte
)

func benchInput(b *testing.B) []byte {
	benchOnce.Do(func() {
		var buf bytes.Buffer
		corpus.Write(&buf, 16<<20, 1)
		benchCorpus = buf.Bytes()
	})
	return benchCorpus
}

func benchRun(b *testing.B, format report.Format, jobs int) {
	in := benchInput(b)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		w, _ := report.NewWriter(io.Discard, format)
		cfg := &Config{Jobs: jobs}
		open := func(string) (*mailbox.Reader, error) {
			return mailbox.NewReader(bytes.NewReader(in), "bench", &mailbox.Options{DeferParse: true})
		}
		err := Run([]string{"bench"}, open, cfg, nil, func(r *Result) error {
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
}

// BenchmarkScanJSONL is the main job: a generated 16 MiB mbox to JSON lines.
func BenchmarkScanJSONL(b *testing.B) { benchRun(b, report.JSONL, 0) }

// BenchmarkScanOneJob is the same on one worker.
func BenchmarkScanOneJob(b *testing.B) { benchRun(b, report.JSONL, 1) }

// BenchmarkSplitWalk measures mailbox alone: split and MIME walk.
func BenchmarkSplitWalk(b *testing.B) {
	in := benchInput(b)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		r, _ := mailbox.NewReader(bytes.NewReader(in), "bench", nil)
		for {
			m, err := r.Next()
			if err != nil {
				break
			}
			m.Parts()
		}
	}
}

// BenchmarkSplitWalkParallel measures mailbox alone on all cores: one
// goroutine splits, the others parse headers and walk the MIME structure.
func BenchmarkSplitWalkParallel(b *testing.B) {
	in := benchInput(b)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		r, _ := mailbox.NewReader(bytes.NewReader(in), "bench", &mailbox.Options{DeferParse: true})
		ch := make(chan *mailbox.Message, 256)
		var wg sync.WaitGroup
		for range runtime.NumCPU() {
			wg.Go(func() {
				for m := range ch {
					m.Parts()
					m.Release()
				}
			})
		}
		for {
			m, err := r.Next()
			if err != nil {
				break
			}
			ch <- m
		}
		close(ch)
		wg.Wait()
	}
}
