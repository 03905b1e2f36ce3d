package rewrite

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// benchLinks: one link in three hits a rule of mapRules (one of each
// kind), the others miss on hosts that share its domain.
func benchLinks() []Link {
	return []Link{
		{URL: "http://h300.old.example/list/1994/msg00012.html", Form: "bare", Where: "body"},
		{URL: "http://h301.old.example/pub/x", Form: "bare", Where: "body"},
		{URL: "ftp://ftp.d302.old.example/pub/rfc/rfc1738.txt", Form: "url-wrapper", Where: "body"},
		{URL: "http://www.example.org/index.html", Form: "bare", Where: "body"},
		{URL: "https://h99999999.old.example/list/", Form: "angle", Where: "body"},
		{URL: "mid:1994Jun1.123@cs.example.edu", Form: "angle", Where: "body"},
	}
}

// BenchmarkApplyMap: the cost of a link against 1,000 and 100,000 map
// rules; it should not grow with the number of rules.
func BenchmarkApplyMap(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		rs, err := Parse(strings.NewReader(mapRules(n)), "bench.toml")
		if err != nil {
			b.Fatal(err)
		}
		links := benchLinks()
		for i := range links {
			links[i].Canonical = canon(links[i].URL)
		}
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := rs.Rewrite(links[i%len(links)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkParseMap: reading a file of 100,000 map rules (the start-up
// cost of a command given a moved-domain list).
func BenchmarkParseMap(b *testing.B) {
	src := mapRules(100000)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	var rs *Rules
	for b.Loop() {
		var err error
		if rs, err = Parse(strings.NewReader(src), "bench.toml"); err != nil {
			b.Fatal(err)
		}
	}
	// the heap the rules keep once read
	var before, after runtime.MemStats
	rs = nil
	runtime.GC()
	runtime.ReadMemStats(&before)
	rs, _ = Parse(strings.NewReader(src), "bench.toml")
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MB-live")
	runtime.KeepAlive(rs)
}
