package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
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

// TestSummaryHostsBounded: the summary's counts of hosts spill past its
// budget and give the same bytes as in memory (the golden files), text
// and JSON, for budgets from 1 KiB (a run every few hosts, runs merged)
// to the default (no spill), and the top hosts are those of a map for
// other record sets, with and without ties, with fewer than 20 hosts and
// with none.
func TestSummaryHostsBounded(t *testing.T) {
	recs := hostRecords(20000, 3000, 1)
	for _, c := range []struct {
		memory int64
		spills bool
	}{{1 << 10, true}, {64 << 10, true}, {256 << 10, true}, {DefaultMemory, false}} {
		for _, asJSON := range []bool{false, true} {
			name := filepath.Join("testdata", "summary-hosts.txt")
			if asJSON {
				name = filepath.Join("testdata", "summary-hosts.json")
			}
			want, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			var b bytes.Buffer
			w := NewSummary(&b, asJSON, c.memory, dir)
			w.Message(3, false)
			w.Message(2, true)
			for i := range recs {
				if err := w.Write(&recs[i]); err != nil {
					t.Fatal(err)
				}
			}
			if spills := w.(*summaryWriter).hosts.Spills(); (spills > 0) != c.spills {
				t.Errorf("memory %d: the hosts spilled %d times", c.memory, spills)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if b.String() != string(want) {
				t.Errorf("memory %d: not %s:\n%s", c.memory, name, b.String())
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Errorf("memory %d: files left: %v", c.memory, left)
			}
		}
	}
	for _, c := range []struct {
		name         string
		n, hosts     int
		seed         uint64
		wantTopHosts int
	}{
		{"many", 30000, 20000, 2, 20},
		{"ties", 5000, 40, 3, 20},
		{"few", 300, 10, 4, -1},
		{"none", 0, 1, 5, 0},
	} {
		recs := hostRecords(c.n, c.hosts, c.seed)
		want := topModel(recs)
		if c.wantTopHosts >= 0 && len(want) != c.wantTopHosts || c.wantTopHosts < 0 && (len(want) == 0 || len(want) >= 20) {
			t.Fatalf("%s: the model has %d top hosts", c.name, len(want))
		}
		var outs []string
		for _, memory := range []int64{1 << 10, DefaultMemory} {
			out := summarize(t, recs, true, memory, t.TempDir())
			var st Stats
			if err := json.Unmarshal([]byte(out), &st); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(st.TopHosts, want) {
				t.Errorf("%s, memory %d: top hosts %v, want %v", c.name, memory, st.TopHosts, want)
			}
			outs = append(outs, out)
		}
		if outs[0] != outs[1] {
			t.Errorf("%s: spilled and in memory differ:\n%s\n%s", c.name, outs[0], outs[1])
		}
		if c.n == 0 && !strings.Contains(outs[0], `"top_hosts": []`) {
			t.Errorf("no hosts:\n%s", outs[0])
		}
	}
}

// TestSummaryHostsFaults: a spill of the hosts into a directory that
// cannot hold files is an error of Write naming it, and of every later
// Write and Close, which writes nothing.
func TestSummaryHostsFaults(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "notadir")
	if err := os.WriteFile(dir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w := NewSummary(&b, false, 1<<10, dir)
	recs := hostRecords(5000, 5000, 6)
	var err error
	for i := 0; i < len(recs) && err == nil; i++ {
		recs[i].Canonical = "http://same.example/" // the hosts spill, not the distinct links
		err = w.Write(&recs[i])
	}
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "summary") {
		t.Fatalf("Write spilling into %s: %v", dir, err)
	}
	if w.(*summaryWriter).hosts.Spills() != 0 {
		t.Fatal("the hosts spilled into a file")
	}
	if err2 := w.Write(&recs[0]); err2 != err {
		t.Errorf("Write after the failure: %v", err2)
	}
	if cerr := w.Close(); cerr != err || b.Len() != 0 {
		t.Errorf("Close after the failure: %v, %d bytes written", cerr, b.Len())
	}
}

// TestSummaryUnderUniqueFaults: a summary under Unique that fails to
// spill while Unique hands it the records at Close is released (its
// temporary files removed, its memory freed) though never closed, and
// writes nothing.
func TestSummaryUnderUniqueFaults(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "notadir")
	if err := os.WriteFile(dir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	s := NewSummary(&b, true, 1<<10, dir)
	u := UniqueWithBudget(s, DefaultMemory, t.TempDir())
	recs := hostRecords(5000, 5000, 7)
	for i := range recs {
		if err := u.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	err := u.Close()
	if err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("Close: %v; want the summary's spill error naming %s", err, dir)
	}
	if sw := s.(*summaryWriter); sw.hosts != nil || sw.distinct != nil || b.Len() != 0 {
		t.Errorf("summary not released (hosts %v, distinct %v) or written (%d bytes)", sw.hosts != nil, sw.distinct != nil, b.Len())
	}
}

// FuzzSummaryHosts writes a record per line of the input, the line as
// its host (counted 1 to 3 times), through summaries of 1 KiB (hosts
// spilled every few records) and of the default budget: the same bytes,
// and the top hosts of a map.
func FuzzSummaryHosts(f *testing.F) {
	f.Add([]byte("a.example\nb.example\na.example\n\nc\x1b.example\nb.example\n"))
	f.Add(bytes.Repeat([]byte("x.example\ny.example\nz\n"), 40))
	f.Fuzz(func(t *testing.T, data []byte) {
		var recs []Record
		for i, line := range bytes.Split(data, []byte("\n")) {
			r := sample
			r.Host, r.Count = string(line), i%3+1
			recs = append(recs, r)
		}
		var outs []string
		for _, memory := range []int64{1 << 10, DefaultMemory} {
			outs = append(outs, summarize(t, recs, true, memory, t.TempDir()))
		}
		if outs[0] != outs[1] {
			t.Fatalf("spilled:\n%s\nin memory:\n%s", outs[0], outs[1])
		}
		var st Stats
		if err := json.Unmarshal([]byte(outs[0]), &st); err != nil {
			t.Fatal(err)
		}
		// The model's hosts through JSON too (bytes not UTF-8 become U+FFFD).
		var want []HostCount
		if b, err := json.Marshal(topModel(recs)); err != nil || json.Unmarshal(b, &want) != nil {
			t.Fatal(err)
		}
		if !slices.Equal(st.TopHosts, want) && !(len(want) == 0 && len(st.TopHosts) == 0) {
			t.Fatalf("top hosts %v, want %v", st.TopHosts, want)
		}
	})
}
