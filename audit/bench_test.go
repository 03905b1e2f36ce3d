package audit

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkAudit checks 10,000 distinct URLs on 50 loopback hosts (50
// servers on distinct ports) with 4 requests at most per host. Each server
// counts the requests it has in flight; the benchmark fails if any saw
// more than 4. Each request takes the server a millisecond, so that
// requests to a host overlap. Each host's robots.txt is fetched, once, as
// by default. scripts/audit-bench.sh runs it.
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
		NetworkPolicy: NetworkPolicy{AllowPrivate: true},
		RequestLimits: RequestLimits{Concurrency: hosts * perHost, PerHost: perHost, Timeout: 30 * time.Second, LinkTimeout: time.Minute},
		ArchivePolicy: ArchivePolicy{CDX: "-"},
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
	// and one robots.txt per host and run (robots.txt is honoured, as by
	// default; each server answers it with an empty page: no rules)
	if total != int64((urls+hosts)*b.N) {
		b.Fatalf("%d requests for %d checks and %d robots.txt", total, urls*b.N, hosts*b.N)
	}
	b.ReportMetric(float64(urls*b.N)/elapsed.Seconds(), "checks/s")
	b.ReportMetric(float64(max), "max-in-flight/host")
}

// TestServeBench serves the benchmark's 50 hosts for another checker
// (scripts/audit-bench.sh runs LinkChecker on them). It runs only when
// AUDIT_BENCH_SERVE names a directory: it writes there urls.txt and
// links.html (the 10,000 URLs), then ready, serves until a file named stop
// appears (at most 15 minutes), and writes result.txt with the requests
// served and the most in flight at one host.
func TestServeBench(t *testing.T) {
	dir := os.Getenv("AUDIT_BENCH_SERVE")
	if dir == "" {
		t.Skip("AUDIT_BENCH_SERVE not set (scripts/audit-bench.sh sets it)")
	}
	const hosts, urls = 50, 10000
	gauges := make([]gauge, hosts)
	var bases []string
	for i := range gauges {
		g := &gauges[i]
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				return
			}
			g.enter()
			defer g.leave()
			time.Sleep(time.Millisecond)
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("LinkChecker", "allow") // lets LinkChecker go above 10 requests/s per host
		}))
		defer s.Close()
		bases = append(bases, s.URL)
	}
	var list, page strings.Builder
	page.WriteString("<!DOCTYPE html><title>bench</title>\n")
	for i := 0; i < urls; i++ {
		u := fmt.Sprintf("%s/doc/%d.html", bases[i%hosts], i)
		list.WriteString(u + "\n")
		fmt.Fprintf(&page, "<a href=\"%s\">%d</a>\n", u, i)
	}
	for name, body := range map[string]string{"urls.txt": list.String(), "links.html": page.String(), "ready": ""} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(15 * time.Minute)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(filepath.Join(dir, "stop")); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	var max, total int64
	for i := range gauges {
		if m := gauges[i].max.Load(); m > max {
			max = m
		}
		total += gauges[i].total.Load()
	}
	res := fmt.Sprintf("requests %d\nmax-in-flight/host %d\n", total, max)
	if err := os.WriteFile(filepath.Join(dir, "result.txt"), []byte(res), 0o644); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkHistory records checks of distinct URLs in the history, as an
// audit with a database does for each link; b.N checks.
func BenchmarkHistory(b *testing.B) {
	db, err := OpenDB(filepath.Join(b.TempDir(), "h.db"), 0)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	cfg := Config{}.Defaults()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l := linkFor(fmt.Sprintf("http://host%d.example.org/doc/%d.html", i%500, i))
		st := OK
		if i%10 == 0 {
			st = Failing
		}
		r := Result{Link: l, Check: Check{Time: t0, Status: st, HTTPStatus: 200, Attempts: 1}, Status: st}
		if _, err := db.record(r, true, &cfg); err != nil {
			b.Fatal(err)
		}
	}
}

// TestMemoryManyLinks records AUDIT_MEM_LINKS distinct URLs in a history,
// then audits them all offline (answers from the history) into the
// summary and HTML reports, so that scripts/audit-bench.sh can measure the
// peak RSS of a run over that many links (MEM=N). With AUDIT_MEM_DISK set,
// the links are first made distinct by a DiskCollector (each added
// twice). Skipped without AUDIT_MEM_LINKS.
func TestMemoryManyLinks(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("AUDIT_MEM_LINKS"))
	if n <= 0 {
		t.Skip("AUDIT_MEM_LINKS not set (scripts/audit-bench.sh sets it)")
	}
	db, err := OpenDB(filepath.Join(t.TempDir(), "mem.db"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cfg := Config{HistoryPolicy: HistoryPolicy{Offline: true}, ArchivePolicy: ArchivePolicy{CDX: "-"}}.Defaults()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	link := func(i int) Link {
		l := linkFor(fmt.Sprintf("http://host%d.example.org/doc/%d.html", i%5000, i))
		l.Date = time.Date(1993+i%33, 1, 1, 0, 0, 0, 0, time.UTC)
		return l
	}
	for i := 0; i < n; i++ {
		st := OK
		if i%5 == 0 {
			st = Failing
		}
		if _, err := db.record(Result{Link: link(i), Check: Check{Time: t0, Status: st, Class: ClassHTTP}}, true, &cfg); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	in := make(chan Link, 1024)
	if os.Getenv("AUDIT_MEM_DISK") != "" {
		// the links made distinct on disk first, each seen twice
		dc, err := NewDiskCollector(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		defer dc.Close()
		for rep := 0; rep < 2; rep++ {
			for i := 0; i < n; i++ {
				if err := dc.Add(link(i)); err != nil {
					t.Fatal(err)
				}
			}
		}
		go func() {
			dc.Each(func(l Link) error {
				if l.Count != 2 {
					t.Errorf("count %d", l.Count)
				}
				in <- l
				return nil
			})
			close(in)
		}()
	} else {
		go func() {
			for i := 0; i < n; i++ {
				in <- link(i)
			}
			close(in)
		}()
	}
	sum, _ := NewWriter(io.Discard, "summary", ReportOptions{})
	page, _ := NewWriter(io.Discard, "html", ReportOptions{})
	got := 0
	err = New(cfg, db).Run(context.Background(), in, func(r Result) {
		got++
		if !r.Cached {
			t.Errorf("not from the history: %+v", r)
		}
		sum.Write(r)
		page.Write(r)
	})
	if err != nil || got != n {
		t.Fatalf("%d results of %d, %v", got, n, err)
	}
	sum.Close()
	page.Close()
}

// BenchmarkCollector reports the heap a Collector holds per distinct link
// (URLs of about 45 bytes, with a path and a Message-ID of the first
// place), b.N links.
func BenchmarkCollector(b *testing.B) {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	c := NewCollector(0)
	for i := 0; i < b.N; i++ {
		l := Link{URL: fmt.Sprintf("http://host%d.example.org/doc/%d.html", i%5000, i), Scheme: "http",
			Host: fmt.Sprintf("host%d.example.org", i%5000), Path: "archive.mbox", MessageID: fmt.Sprintf("%d@example.org", i), Count: 1}
		if err := c.Add(l); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(b.N), "heap-bytes/link")
	runtime.KeepAlive(c)
}
