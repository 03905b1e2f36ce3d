package audit

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkAudit checks 10,000 distinct URLs on 50 loopback hosts (50
// servers on distinct ports) with 4 requests at most per host. Each server
// counts the requests it has in flight; the benchmark fails if any saw
// more than 4. Each request takes the server a millisecond, so that
// requests to a host overlap. scripts/audit-bench.sh runs it.
func BenchmarkAudit(b *testing.B) {
	const hosts, perHost, urls = 50, 4, 10000
	gauges := make([]gauge, hosts)
	var bases []string
	for i := range gauges {
		g := &gauges[i]
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			g.enter()
			defer g.leave()
			// a millisecond of "work", so that requests to one host
			// overlap and the limit is put to the test
			time.Sleep(time.Millisecond)
			w.Header().Set("Content-Type", "text/html")
		}))
		defer s.Close()
		bases = append(bases, s.URL)
	}
	links := make([]Link, urls)
	for i := range links {
		links[i] = linkFor(fmt.Sprintf("%s/doc/%d.html", bases[i%hosts], i))
	}
	cfg := Config{
		AllowPrivate: true, Concurrency: hosts * perHost, PerHost: perHost,
		Timeout: 30 * time.Second, LinkTimeout: time.Minute, CDX: "-",
	}
	b.ResetTimer()
	start := time.Now()
	for n := 0; n < b.N; n++ {
		a := New(cfg, nil)
		in := make(chan Link, 1024)
		go func() {
			for _, l := range links {
				in <- l
			}
			close(in)
		}()
		bad := 0
		if err := a.Run(context.Background(), in, func(r Result) {
			if r.Status != OK {
				bad++
			}
		}); err != nil {
			b.Fatal(err)
		}
		if bad > 0 {
			b.Fatalf("%d of %d links not OK", bad, urls)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	var max, total int64
	for i := range gauges {
		if m := gauges[i].max.Load(); m > max {
			max = m
		}
		total += gauges[i].total.Load()
	}
	if max > perHost {
		b.Fatalf("a server saw %d requests at once; the limit is %d", max, perHost)
	}
	if total != int64(urls*b.N) {
		b.Fatalf("%d requests for %d checks", total, urls*b.N)
	}
	b.ReportMetric(float64(urls*b.N)/elapsed.Seconds(), "checks/s")
	b.ReportMetric(float64(max), "max-in-flight/host")
}
