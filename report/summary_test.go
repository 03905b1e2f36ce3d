package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden summaries in testdata/")

// hostRecords returns n records whose hosts are drawn from about hosts
// names, most of them rare and a few frequent (so that counts tie at the
// edge of the top 20), some with a count (as Unique hands on), some
// without a host, some with bytes that the text summary escapes.
func hostRecords(n, hosts int, seed uint64) []Record {
	r := rand.New(rand.NewPCG(seed, 3))
	recs := make([]Record, n)
	for i := range recs {
		rec := sample
		k := r.IntN(r.IntN(hosts) + 1) // skewed to small k
		switch {
		case k%17 == 0:
			rec.Host = "" // mailto:, news:
		case k%29 == 1:
			rec.Host = fmt.Sprintf("esc\x1b[31m%d.example", k)
		default:
			rec.Host = fmt.Sprintf("h%d.d%d.example.org", k, k%7)
		}
		rec.URL = fmt.Sprintf("http://%s/%d", rec.Host, r.IntN(50))
		rec.Canonical = rec.URL
		if i%5 == 0 {
			rec.Count = 1 + r.IntN(4)
		}
		rec.Scheme = []string{"http", "https", "ftp", ""}[k%4]
		rec.Date = fmt.Sprintf("%d-01-02T00:00:00Z", 1990+k%9)
		rec.Valid = i%7 != 0
		rec.Heuristic = i%11 == 0
		recs[i] = rec
	}
	return recs
}

// summarize writes recs through a summary of the given budget, spilling
// into dir, and returns its output.
func summarize(t *testing.T, recs []Record, asJSON bool, memory int64, dir string) string {
	t.Helper()
	var b bytes.Buffer
	w := NewSummary(&b, asJSON, memory, dir)
	w.Message(3, false)
	w.Message(2, true)
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestSummaryGolden: the summaries of 20,000 records on about 3,000
// hosts, text and JSON, are those of testdata/summary-hosts.* (written by
// the summary that kept every host in a map, before its counts could
// spill; -update writes them again).
func TestSummaryGolden(t *testing.T) {
	recs := hostRecords(20000, 3000, 1)
	for _, asJSON := range []bool{false, true} {
		name := filepath.Join("testdata", "summary-hosts.txt")
		if asJSON {
			name = filepath.Join("testdata", "summary-hosts.json")
		}
		got := summarize(t, recs, asJSON, DefaultMemory, t.TempDir())
		if *update {
			if err := os.WriteFile(name, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("%s differs:\n%s", name, got)
		}
	}
}

// topModel is the top 20 hosts of recs, by a map and a sort.
func topModel(recs []Record) []HostCount {
	m := map[string]int{}
	for _, r := range recs {
		if r.Host != "" {
			m[r.Host] += max(r.Count, 1)
		}
	}
	var top []HostCount
	for h, n := range m {
		top = append(top, HostCount{h, n})
	}
	sort.Slice(top, func(i, j int) bool {
		return top[i].Links > top[j].Links || top[i].Links == top[j].Links && top[i].Host < top[j].Host
	})
	return top[:min(len(top), 20)]
}

var _ = strings.Contains
var _ = json.Unmarshal
