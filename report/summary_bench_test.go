package report

import (
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkSummaryHosts writes records of distinct hosts (each link on a
// host of its own, each host twice) through the summary writer, Close
// included. Bytes are those of the records' URLs; "heap-B/host" is the
// growth of the Go heap per distinct host at its largest, before Close;
// "hosts-B/host" the most the counts of hosts held in memory (off the
// heap on Linux: spill.Counter.Memory, every 1024 records) per distinct
// host.
func BenchmarkSummaryHosts(b *testing.B) {
	for _, c := range []struct {
		name   string
		hosts  int
		budget int64
	}{{"1M", 1000000, 0}, {"1M-spill-16MiB", 1000000, 16 << 20}} {
		b.Run(c.name, func(b *testing.B) {
			hosts := make([]string, c.hosts)
			urls := make([]string, c.hosts)
			var size int64
			for i := range hosts {
				hosts[i] = fmt.Sprintf("h%d.d%d.example.org", i, i%97)
				urls[i] = "http://" + hosts[i] + "/x"
				size += 2 * int64(len(urls[i]))
			}
			b.SetBytes(size)
			b.ReportAllocs()
			budget := c.budget
			if budget == 0 {
				budget = DefaultMemory
			}
			var heap, mem float64
			for b.Loop() {
				var ms0, ms1 runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&ms0)
				w := NewSummary(nopIO{}, true, budget, b.TempDir())
				r := sample
				most := int64(0)
				for i := range 2 * c.hosts {
					if i%1024 == 0 && i > 0 {
						most = max(most, w.(*summaryWriter).hosts.Memory())
					}
					j := i % c.hosts
					r.URL, r.Canonical, r.Host = urls[j], urls[j], hosts[j]
					if err := w.Write(&r); err != nil {
						b.Fatal(err)
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&ms1)
				heap = (float64(ms1.HeapAlloc) - float64(ms0.HeapAlloc)) / float64(c.hosts)
				mem = float64(most) / float64(c.hosts)
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(heap, "heap-B/host")
			b.ReportMetric(mem, "hosts-B/host")
		})
	}
}

type nopIO struct{}

func (nopIO) Write(p []byte) (int, error) { return len(p), nil }
