package rewrite

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// filterBenchRules is the rules file of scripts/filter-bench.sh: unwrap,
// strip-params and n-2 map rules by host.
func filterBenchRules(n int) string {
	var b strings.Builder
	b.WriteString("version = 1\n\n[[rule]]\nname = \"unwrap\"\naction = \"unwrap\"\n\n[[rule]]\nname = \"strip tracking\"\naction = \"strip-params\"\n\n")
	for i := range n - 2 {
		fmt.Fprintf(&b, "[[rule]]\naction = \"map\"\nfrom-host = \"host%d.example\"\nto-host = \"www%d.example.net\"\n\n", i, i)
	}
	return b.String()
}

// BenchmarkLoadRules: parsing the rules file of scripts/filter-bench.sh
// (1,000 and 100,000 rules), the start-up cost of each filter process.
func BenchmarkLoadRules(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		src := filterBenchRules(n)
		b.Run(fmt.Sprintf("parse/rules=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(strings.NewReader(src), "bench.toml"); err != nil {
					b.Fatal(err)
				}
			}
		})
		rs, err := Parse(strings.NewReader(src), "bench.toml")
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("index/rules=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var x index
				x.build(rs.rules)
			}
		})
	}
}

// BenchmarkLoadCached: LoadCached when its cache file is there (a hit:
// the rules file read and hashed, the cache file read, checked and
// decoded, the index built), beside BenchmarkLoadRules' parse.
func BenchmarkLoadCached(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		d := b.TempDir()
		path := filepath.Join(d, "rules.toml")
		if err := os.WriteFile(path, []byte(filterBenchRules(n)), 0o644); err != nil {
			b.Fatal(err)
		}
		if _, info, err := LoadCached(path, d); err != nil || info.WriteErr != nil {
			b.Fatal(err, info.WriteErr)
		}
		b.Run(fmt.Sprintf("hit/rules=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, info, err := LoadCached(path, d); err != nil || !info.Hit {
					b.Fatal(err, info)
				}
			}
		})
	}
}
