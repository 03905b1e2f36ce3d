package scan

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/linkscan/linkscan/internal/corpus"
	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/record"
	"github.com/linkscan/linkscan/report"
)

// roundTrip puts recs through a store (with base as the message's fields)
// and returns what Each gives back.
func roundTrip(t testing.TB, base *record.Record, recs []record.Record) []record.Record {
	t.Helper()
	s := new(recordStore)
	s.reset(base)
	for i := range recs {
		s.add(&recs[i])
	}
	if s.n != len(recs) {
		t.Fatalf("store holds %d records, want %d", s.n, len(recs))
	}
	var got []record.Record
	err := s.each(func(r *record.Record) error {
		c := *r
		got = append(got, c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func compareRecords(t testing.TB, got, want []record.Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("record %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

func TestCompactRoundTrip(t *testing.T) {
	base := record.Record{Path: "a.mbox", Offset: 1 << 40, MessageID: "m@example.org", Date: "2026-11-22T20:00:00Z",
		From: "A <a@example.org>", Subject: "dense", Newsgroups: "comp.mail"}
	full := base
	full.URL, full.Canonical, full.Form = "HTTP://Example.ORG/a b", "http://example.org/a%20b", "bare"
	full.Joined, full.Heuristic, full.Valid = true, true, true
	full.Problems = []string{"space in URL", "upper-case scheme"}
	full.Scheme, full.Host = "http", "example.org"
	full.Part, full.ContentType, full.Where = "1.2", "text/html", "html:href"
	full.Line, full.Column, full.Start, full.End = 12, 7, 300, 322
	full.RawOffset, full.RawStart, full.RawEnd = 1<<40+900, 1<<40+900, 1<<40+930
	full.Count, full.Status = 3, "found"
	full.Targets = []record.Target{{File: "b.mbox", Offset: math.MaxInt64, MessageID: "x@y", Part: "2", Group: "g", Name: "n"}, {}}
	full.Target = &record.Target{File: "b.mbox", Offset: math.MaxInt64, MessageID: "x@y", Part: "2", Group: "g", Name: "n"}

	other := full // message fields not the base's, an empty problem list
	other.Path, other.Offset, other.MessageID, other.Date, other.From, other.Subject, other.Newsgroups =
		"other", -1, "", "", "", "", ""
	other.Problems, other.Target, other.Targets = []string{}, nil, []record.Target{}

	recs := []record.Record{
		{}, // every field empty, the message's fields too
		base,
		full,
		other,
		{URL: "http://example.org/", Canonical: "http://example.org/", Host: "example.org", Path: base.Path, Offset: base.Offset,
			MessageID: base.MessageID, Date: base.Date, From: base.From, Subject: base.Subject, Newsgroups: base.Newsgroups,
			Line: 1, Start: math.MaxInt64, End: math.MaxInt64, RawOffset: math.MinInt64, RawStart: math.MaxInt64, RawEnd: math.MinInt64},
		// the host not in the canonical form; an empty URL with a canonical one
		{URL: "", Canonical: "mid:x", Host: "elsewhere.example", Line: -5, Column: math.MaxInt32},
		// the URL sharing all, part or none of the one before
		{URL: "", Canonical: ""},
		{URL: "http://example.org/abc", Canonical: "http://example.org/abc", Host: "example.org"},
		{URL: "http://example.org/ab", Canonical: "http://example.org/abd", Host: "org"},
		{URL: "http://example.org/abcdef", Canonical: "x", Host: "x"},
		{URL: "zz", Canonical: "zz" + strings.Repeat("y", compactChunk)}, // larger than a chunk
		{URL: strings.Repeat("é", 40000), Canonical: strings.Repeat("é", 40000), Where: "header:List-Post"},
	}
	compareRecords(t, roundTrip(t, &base, recs), recs)
	compareRecords(t, roundTrip(t, nil, recs), recs) // nothing shared

	// many records: several chunks, every one the same after
	var many []record.Record
	for i := range 20000 {
		r := full
		r.URL = fmt.Sprintf("http://example.org/%d", i)
		r.Canonical, r.Start, r.End, r.Line = r.URL, int64(i*50), int64(i*50+len(r.URL)), i+1
		r.Problems, r.Target, r.Targets = nil, nil, nil
		many = append(many, r)
	}
	compareRecords(t, roundTrip(t, &full, many), many)
}

// TestCompactEachError: Each stops at fn's error and returns it.
func TestCompactEachError(t *testing.T) {
	s := new(recordStore)
	s.reset(nil)
	for i := range 10 {
		s.add(&record.Record{URL: fmt.Sprint(i)})
	}
	stop := errors.New("stop")
	n := 0
	res := Result{store: s, Records: []record.Record{{URL: "tail"}}}
	if err := res.Each(func(*record.Record) error { n++; return map[bool]error{true: stop}[n == 4] }); err != stop || n != 4 {
		t.Fatalf("Each: %v after %d records, want stop after 4", err, n)
	}
	if res.Len() != 11 {
		t.Fatalf("Len %d, want 11", res.Len())
	}
	// a damaged store is an error, never a read out of bounds
	for _, c := range s.chunks {
		*c = (*c)[:len(*c)-1]
	}
	if err := s.each(func(*record.Record) error { return nil }); !errors.Is(err, errCorrupt) {
		t.Fatalf("damaged store: %v, want errCorrupt", err)
	}
}

func FuzzCompact(f *testing.F) {
	f.Add("http://example.org/", "http://example.org/", "example.org", "body", "1", int64(0), int64(10), int64(1<<40), 3, uint8(7), "p")
	f.Add("", "", "", "", "", int64(-1), int64(math.MaxInt64), int64(math.MinInt64), -1, uint8(0xff), "")
	f.Fuzz(func(t *testing.T, url, canon, host, where, part string, start, end, raw int64, line int, flags uint8, prob string) {
		base := record.Record{Path: "p", Offset: raw, MessageID: where}
		r := base
		r.URL, r.Canonical, r.Host, r.Where, r.Part = url, canon, host, where, part
		r.Start, r.End, r.RawOffset, r.RawStart, r.RawEnd = start, end, raw, end, start
		r.Line, r.Column, r.Count = line, -line, line
		r.Joined, r.Heuristic, r.Valid = flags&1 != 0, flags&2 != 0, flags&4 != 0
		if flags&8 != 0 {
			r.Problems = []string{prob, url}
		}
		if flags&16 != 0 {
			r.Target = &record.Target{File: prob, Offset: raw}
		}
		if flags&32 != 0 {
			r.Targets = []record.Target{{Name: host, Offset: start}}
		}
		if flags&64 != 0 {
			r.Path = url // not the message's
		}
		second := r
		second.URL, second.Canonical = canon, url
		second.Start, second.RawOffset = end, start
		recs := []record.Record{r, second, {}, r}
		compareRecords(t, roundTrip(t, &base, recs), recs)
	})
}

// denseMessage is a message of n lines, each with a link of its own.
func denseMessage(n int) []byte {
	var b bytes.Buffer
	b.WriteString("From: a@example.org\nSubject: dense\nMessage-ID: <dense@example.org>\nDate: Sun, 22 Nov 2026 20:00:00 +0000\n" +
		"List-Post: <mailto:list@example.org>\nContent-Type: text/plain; charset=us-ascii\n\n")
	for i := range n {
		fmt.Fprintf(&b, "Cafe au lait http://example.org/caf%%C3%%A9/%d and more words to fill the line\n", i)
	}
	return b.Bytes()
}

// denseHTML is a multipart message: a text part and an HTML part of n
// links each, the HTML ones in attributes.
func denseHTML(n int) []byte {
	var b bytes.Buffer
	b.WriteString("From: a@example.org\nSubject: html\nMessage-ID: <html@example.org>\nMIME-Version: 1.0\n" +
		"Content-Type: multipart/alternative; boundary=b\n\n--b\nContent-Type: text/plain\n\n")
	for i := range n {
		fmt.Fprintf(&b, "see <http://text.example/%d> or ftp://ftp.example/%d\n", i, i)
	}
	b.WriteString("--b\nContent-Type: text/html\nContent-Base: http://base.example/dir/\n\n<p>")
	for i := range n {
		fmt.Fprintf(&b, "<a href=\"page%d.html\">x</a> <img src=\"http://img.example/%d.png\"> http://inline.example/%d<br>\n", i, i, i)
	}
	b.WriteString("</p>\n--b--\n")
	return b.Bytes()
}

func readOne(t testing.TB, raw []byte) *mailbox.Message {
	t.Helper()
	r, err := mailbox.NewReader(bytes.NewReader(raw), "dense.eml", &mailbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Next()
	if m == nil {
		t.Fatal(err)
	}
	return m
}

// all gives the records of a result through Each, copied.
func all(t testing.TB, res *Result) []record.Record {
	var out []record.Record
	if err := res.Each(func(r *record.Record) error { out = append(out, *r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(out) != res.Len() {
		t.Fatalf("Each gave %d records, Len says %d", len(out), res.Len())
	}
	return out
}

// TestCompactMessage: a message's records are the same compact or not,
// at any threshold, text, header and HTML attribute links alike.
func TestCompactMessage(t *testing.T) {
	for _, raw := range [][]byte{denseMessage(3000), denseHTML(700)} {
		plain := &Config{Headers: true}
		want := Message(readOne(t, raw), plain)
		if len(want.Records) < 2000 {
			t.Fatalf("only %d records", len(want.Records))
		}
		for _, after := range []int{1, 7, 1000, DefaultCompactAfter, 100000} {
			cfg := &Config{Headers: true, CompactAfter: after}
			res := Message(readOne(t, raw), cfg)
			if after <= len(want.Records) && (res.store == nil || res.store.n == 0) {
				t.Fatalf("CompactAfter %d: nothing kept compact", after)
			}
			compareRecords(t, all(t, &res), want.Records)
		}
		// with a stage the records stay whole: the stage sees them all
		var seen int
		cfg := &Config{Headers: true, CompactAfter: 7, Stages: []Stage{stageFunc(func(recs []record.Record) []record.Record {
			seen = len(recs)
			return recs
		})}}
		res := Message(readOne(t, raw), cfg)
		if seen != len(want.Records) || len(res.Records) != len(want.Records) {
			t.Fatalf("with a stage: the stage saw %d records, Records %d, want %d", seen, len(res.Records), len(want.Records))
		}
	}
}

type stageFunc func([]record.Record) []record.Record

func (f stageFunc) Records(_ *mailbox.Message, _ []*mailbox.Part, recs []record.Record) []record.Record {
	return f(recs)
}

// TestCompactRun: through the pipeline (recycled results and stores), a
// run with compact records writes the same bytes as one without, on dense
// messages and on the generated corpus.
func TestCompactRun(t *testing.T) {
	var in bytes.Buffer
	for i := range 6 {
		in.WriteString("From a@example.org Sun Nov 22 20:00:00 2026\n")
		switch i % 3 {
		case 0:
			in.Write(denseMessage(1500 + i))
		case 1:
			in.Write(denseHTML(300))
		default:
			in.WriteString("Subject: small\n\nhttp://small.example/\n")
		}
		in.WriteString("\n")
	}
	sameOutput(t, in.Bytes(), 5000, 1, 100, DefaultCompactAfter)
	// the generated corpus, every record through the encoding
	var c bytes.Buffer
	corpus.Write(&c, 2<<20, 1)
	sameOutput(t, c.Bytes(), 900, 1, 3)
}

// sameOutput checks that in scans to the same JSON lines (at least min of
// them) with each CompactAfter as with none.
func sameOutput(t *testing.T, in []byte, min int, afters ...int) {
	t.Helper()
	out := func(after int) string {
		var b bytes.Buffer
		w, _ := report.NewWriter(&b, report.JSONL)
		cfg := &Config{Headers: true, Jobs: 2, CompactAfter: after}
		open := func(string) (*mailbox.Reader, error) {
			return mailbox.NewReader(bytes.NewReader(in), "in", &mailbox.Options{DeferParse: true})
		}
		if err := Run([]string{"in"}, open, cfg, nil, func(r *Result) error { return r.Each(w.Write) }); err != nil {
			t.Fatal(err)
		}
		w.Close()
		return b.String()
	}
	want := out(0)
	if strings.Count(want, "\n") < min {
		t.Fatalf("only %d records", strings.Count(want, "\n"))
	}
	for _, after := range afters {
		if got := out(after); got != want {
			t.Fatalf("CompactAfter %d: output differs (%d bytes, want %d)", after, len(got), len(want))
		}
	}
}

// heldPerRecord is the live heap that a message's Result holds, per
// record, once the message is scanned and released: the heap with the
// Result, less the heap once it is dropped.
func heldPerRecord(t testing.TB, raw []byte, cfg *Config) float64 {
	var held, dropped runtime.MemStats
	res := Message(readOne(t, raw), cfg)
	n := res.Len()
	// the message is released (its buffers are the pools', for the next
	// one); what is measured is what its records cost
	res.Message = nil
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&held)
	runtime.KeepAlive(&res)
	res = Result{}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&dropped)
	return (float64(held.HeapAlloc) - float64(dropped.HeapAlloc)) / float64(n)
}

// TestCompactMemory bounds the bytes that a link-dense message's records
// hold from the worker to the writer: some 500 bytes a record held whole
// (the old way, CompactAfter 0), under 64 compact.
func TestCompactMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 4 MB message")
	}
	raw := denseMessage(50000)
	whole := heldPerRecord(t, raw, &Config{})
	compact := heldPerRecord(t, raw, &Config{CompactAfter: DefaultCompactAfter})
	t.Logf("bytes held a record: %.0f whole, %.0f compact", whole, compact)
	if compact > 64 {
		t.Errorf("compact records hold %.0f bytes each, want <= 64", compact)
	}
	if whole < 4*compact {
		t.Errorf("whole records hold %.0f bytes each, compact %.0f: the measure is off", whole, compact)
	}
}

// BenchmarkDenseMessage scans a message of 50,000 links to JSON lines,
// its records held whole or compact; bytes are the message's.
func BenchmarkDenseMessage(b *testing.B) {
	raw := denseMessage(50000)
	for _, after := range []int{0, DefaultCompactAfter} {
		b.Run(fmt.Sprintf("CompactAfter=%d", after), func(b *testing.B) {
			cfg := &Config{CompactAfter: after}
			w, _ := report.NewWriter(io.Discard, report.JSONL)
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				res := Message(readOne(b, raw), cfg)
				if err := res.Each(w.Write); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// slicer is a SlicedStage: it drops the records of even lines, marks the
// others, and adds one record after all of the message's others.
type slicer struct {
	calls, maxSlice *int
}

func (s slicer) Records(m *mailbox.Message, parts []*mailbox.Part, recs []record.Record) []record.Record {
	return s.RecordsSlice(m, parts, recs, true)
}

func (s slicer) RecordsSlice(m *mailbox.Message, _ []*mailbox.Part, recs []record.Record, last bool) []record.Record {
	*s.calls++
	*s.maxSlice = max(*s.maxSlice, len(recs))
	kept := recs[:0]
	for _, r := range recs {
		if r.Line%2 == 1 {
			r.Status = fmt.Sprintf("odd %d", r.Line)
			kept = append(kept, r)
		}
	}
	if last {
		kept = append(kept, record.Record{URL: "mid:" + m.MessageID, Canonical: "mid:" + m.MessageID, Scheme: "mid", Form: "implicit", Path: m.Path})
	}
	return kept
}

// TestCompactSlicedStages: sliced stages give the same records in slices
// as on the whole message, and see no slice much larger than CompactAfter;
// one stage that is not sliced keeps the message whole.
func TestCompactSlicedStages(t *testing.T) {
	raw := denseHTML(700)
	var calls, maxSlice int
	st := slicer{&calls, &maxSlice}
	want := Message(readOne(t, raw), &Config{Headers: true, Stages: []Stage{st, st}})
	if calls != 2 || len(want.Records) < 500 {
		t.Fatalf("whole: %d calls, %d records", calls, len(want.Records))
	}
	for _, after := range []int{1, 50, 1000} {
		calls, maxSlice = 0, 0
		res := Message(readOne(t, raw), &Config{Headers: true, CompactAfter: after, Stages: []Stage{st, st}})
		compareRecords(t, all(t, &res), want.Records)
		if calls < 4 || maxSlice > after+1 {
			t.Errorf("CompactAfter %d: %d calls, largest slice %d", after, calls, maxSlice)
		}
	}
	calls, maxSlice = 0, 0
	whole := stageFunc(func(recs []record.Record) []record.Record { return recs })
	res := Message(readOne(t, raw), &Config{Headers: true, CompactAfter: 50, Stages: []Stage{st, whole, st}})
	compareRecords(t, all(t, &res), want.Records)
	if calls != 2 || res.store != nil && res.store.n > 0 {
		t.Errorf("with a stage not sliced: %d calls, %d records compact", calls, res.Len()-len(res.Records))
	}
}

// FuzzCompactDecode: a damaged store gives errCorrupt or records, never a
// panic or a read out of bounds.
func FuzzCompactDecode(f *testing.F) {
	s := new(recordStore)
	s.reset(&record.Record{Path: "p"})
	s.add(&record.Record{URL: "http://example.org/a", Canonical: "http://example.org/a", Host: "example.org", Problems: []string{"x"},
		Target: &record.Target{File: "f"}, Targets: []record.Target{{}}, Path: "other"})
	s.add(&record.Record{URL: "http://example.org/b", Canonical: "HTTP://x", Host: "y"})
	f.Add(*s.chunks[0])
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		d := new(recordStore)
		d.reset(nil)
		d.strs = []string{"", "a", "http"}
		c := append([]byte(nil), b...)
		d.chunks = []*[]byte{&c}
		n := 0
		err := d.each(func(*record.Record) error { n++; return nil })
		if err != nil && !errors.Is(err, errCorrupt) {
			t.Fatalf("error %v", err)
		}
	})
}
