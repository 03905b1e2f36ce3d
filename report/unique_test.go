package report

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// referenceUnique is the Unique of before the spill to disk (a map of
// keys and a slice of records): the semantics the new one must keep.
type referenceUnique struct {
	w     Writer
	index map[string]int
	recs  []Record
}

func (u *referenceUnique) Message(parts int, damaged bool) { u.w.Message(parts, damaged) }

func (u *referenceUnique) Write(r *Record) error {
	key := r.Canonical
	if key == "" {
		key = "\x00" + r.URL
	}
	if i, ok := u.index[key]; ok {
		u.recs[i].Count++
		return nil
	}
	u.index[key] = len(u.recs)
	rec := *r
	rec.Count = 1
	u.recs = append(u.recs, rec)
	return nil
}

func (u *referenceUnique) Close() error {
	for i := range u.recs {
		if err := u.w.Write(&u.recs[i]); err != nil {
			return err
		}
	}
	return u.w.Close()
}

// genRecords returns n records of about distinct distinct links, with
// every kind of field set now and then, links without a canonical form,
// and a link whose URL equals another's canonical form.
func genRecords(n, distinct int, seed uint64) []Record {
	r := rand.New(rand.NewPCG(seed, 11))
	recs := make([]Record, n)
	for i := range recs {
		k := r.IntN(distinct)
		rec := sample
		rec.URL = fmt.Sprintf("HTTP://Host%d.example/%d", k%7, k)
		rec.Canonical = fmt.Sprintf("http://host%d.example/%d", k%7, k)
		switch k % 13 {
		case 0:
			rec.Canonical = "" // no canonical form: told apart as written
		case 1:
			rec.URL, rec.Canonical = "http://host1.example/1", ""
		}
		// Four links a message, in parts 1 and 2.
		rec.Offset, rec.Line, rec.Column, rec.RawOffset = int64(i/4)*100, i%50, i%80, int64(i)*100+7
		rec.MessageID = fmt.Sprintf("%d@x", i/4)
		rec.Part = fmt.Sprint(1 + i%4/2)
		rec.Valid = i%5 != 0
		rec.Joined = i%3 == 0
		if i%4 == 0 {
			rec.Problems = nil
		}
		if i%9 == 0 {
			rec.Status = "resolved"
			rec.Target = &Target{File: "f", Offset: int64(i), MessageID: "t@x"}
			rec.Targets = []Target{*rec.Target, {Group: "comp.x", Name: "n"}}
		}
		recs[i] = rec
	}
	return recs
}

// uniqueOutput writes recs through the unique writer made by mk over a
// JSON lines writer and returns the output; before, if not nil, is called
// before Close.
func uniqueOutput(t *testing.T, mk func(Writer) Writer, recs []Record, before func()) string {
	t.Helper()
	var b bytes.Buffer
	w, _ := NewWriter(&b, JSONL)
	u := mk(w)
	for i := range recs {
		if err := u.Write(&recs[i]); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	if before != nil {
		before()
	}
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func reference(w Writer) Writer { return &referenceUnique{w: w, index: map[string]int{}} }

// TestUniqueAsBefore compares the output of Unique, with and without
// spilling to disk, with the reference.
func TestUniqueAsBefore(t *testing.T) {
	recs := genRecords(12000, 4000, 1)
	want := uniqueOutput(t, reference, recs, nil)
	if n := strings.Count(want, "\n"); n < 3000 {
		t.Fatalf("only %d distinct links", n)
	}
	for _, budget := range []int64{0, 1 << 10, 32 << 10, 1 << 20} {
		dir := t.TempDir()
		var uw *uniqueWriter
		var spills int
		var onDisk bool
		got := uniqueOutput(t, func(w Writer) Writer {
			uw = UniqueWithBudget(w, budget, dir).(*uniqueWriter)
			return uw
		}, recs, func() { spills, onDisk = uw.set.Spills(), uw.log.OnDisk() })
		if got != want {
			t.Errorf("budget %d: output differs from the reference", budget)
		}
		small := budget > 0 && budget < 1<<20
		if (spills > 0) != small || onDisk != (budget != 0) {
			t.Errorf("budget %d: spills %d, records on disk %v", budget, spills, onDisk)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("budget %d: temporary files left: %v", budget, ents)
		}
	}
	if got := uniqueOutput(t, Unique, recs, nil); got != want {
		t.Error("Unique: output differs from the reference")
	}
}

// TestUniqueKeys checks what tells links apart and which record is kept.
func TestUniqueKeys(t *testing.T) {
	recs := []Record{
		{URL: "HTTP://A/", Canonical: "http://a/", Line: 1},
		{URL: "http://a/", Canonical: "http://a/", Line: 2}, // same canonical form
		{URL: "http://a/", Line: 3},                         // no canonical form: not the one above
		{URL: "http://a/", Line: 4},
		{URL: "x", Canonical: "y", Line: 5},
		{URL: "y", Line: 6}, // URL equal to another's canonical form
	}
	for _, mk := range []func(Writer) Writer{Unique, func(w Writer) Writer { return UniqueWithBudget(w, 1, t.TempDir()) }} {
		var got []Record
		c := &collector{recs: &got}
		u := mk(c)
		for i := range recs {
			u.Write(&recs[i])
		}
		if err := u.Close(); err != nil {
			t.Fatal(err)
		}
		var lines, counts []int
		for _, r := range got {
			lines, counts = append(lines, r.Line), append(counts, r.Count)
		}
		if fmt.Sprint(lines, counts) != "[1 3 5 6] [2 2 1 1]" || !c.closed {
			t.Errorf("lines %v counts %v closed %v; want [1 3 5 6] [2 2 1 1] true", lines, counts, c.closed)
		}
	}
}

// collector keeps the records it is given; it fails from the failAt-th
// on (when failAt > 0).
type collector struct {
	recs   *[]Record
	failAt int
	closed bool
}

var errSink = errors.New("sink failed")

func (c *collector) Message(int, bool) {}
func (c *collector) Write(r *Record) error {
	if c.failAt > 0 && len(*c.recs)+1 >= c.failAt {
		return errSink
	}
	*c.recs = append(*c.recs, *r)
	return nil
}
func (c *collector) Close() error { c.closed = true; return nil }

// TestUniqueFirstStreams checks that UniqueFirst passes each first
// occurrence on at once, in the reference's order, without counts, and
// stops at the first error of the wrapped writer.
func TestUniqueFirstStreams(t *testing.T) {
	recs := genRecords(5000, 1500, 2)
	var ref []Record
	u := reference(&collector{recs: &ref})
	for i := range recs {
		u.Write(&recs[i])
	}
	u.Close()
	for _, budget := range []int64{0, 1 << 10} {
		var got []Record
		f := UniqueFirst(&collector{recs: &got}, budget, t.TempDir())
		seen := 0
		for i := range recs {
			if err := f.Write(&recs[i]); err != nil {
				t.Fatal(err)
			}
			if len(got) > seen && got[seen].RawOffset != recs[i].RawOffset {
				t.Fatalf("record %d passed on as %d", i, got[seen].RawOffset)
			}
			seen = len(got)
		}
		f.Close()
		if len(got) != len(ref) {
			t.Fatalf("budget %d: %d records, want %d", budget, len(got), len(ref))
		}
		for i := range got {
			ref[i].Count = 0
			if !reflect.DeepEqual(got[i], ref[i]) {
				t.Fatalf("budget %d: record %d is\n%+v\nwant\n%+v", budget, i, got[i], ref[i])
			}
		}
	}
	var got []Record
	f := UniqueFirst(&collector{recs: &got, failAt: 3}, 0, "")
	var err error
	n := 0
	for ; err == nil && n < len(recs); n++ {
		err = f.Write(&recs[n])
	}
	if err != errSink || len(got) != 2 {
		t.Errorf("after a failing writer: %v, %d records passed", err, len(got))
	}
}

// TestUniqueFaults: a temporary directory that cannot hold files, and a
// wrapped writer that fails, both reported, temporary files removed.
func TestUniqueFaults(t *testing.T) {
	recs := genRecords(3000, 3000, 3)
	dir := filepath.Join(t.TempDir(), "notadir")
	os.WriteFile(dir, nil, 0o644)
	var got []Record
	u := UniqueWithBudget(&collector{recs: &got}, 1<<10, dir)
	var err error
	for i := 0; i < len(recs) && err == nil; i++ {
		err = u.Write(&recs[i])
	}
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "--unique") {
		t.Fatalf("Write with %s as temporary directory: %v", dir, err)
	}
	if cerr := u.Close(); cerr == nil || len(got) != 0 {
		t.Errorf("Close after the failure: %v, %d records written", cerr, len(got))
	}

	tmp := t.TempDir()
	got = nil
	u = UniqueWithBudget(&collector{recs: &got, failAt: 10}, 1<<10, tmp)
	for i := range recs {
		if err := u.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := u.Close(); err != errSink || len(got) != 9 {
		t.Errorf("Close with a failing writer: %v after %d records; want %v after 9", err, len(got), errSink)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("temporary files left: %v", ents)
	}
}

// fill sets every field of v, recursively, to a value that differs from
// the zero value and from field to field.
func fill(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d\u00e9\x00", *n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(*n) * -1000003)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n)
			}
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		fill(v.Index(0), n)
		fill(v.Index(1), n)
	default:
		panic("fill: a field of kind " + v.Kind().String() + ": teach appendRecordBinary and fill about it")
	}
}

// TestRecordBinary round-trips records through the binary form, each
// after every other (so that message and part fields are left out where
// they repeat), among them one with every field set (so that a field
// added to Record and not to the codec fails here), and refuses damaged
// input.
func TestRecordBinary(t *testing.T) {
	var full Record
	n := 0
	fill(reflect.ValueOf(&full).Elem(), &n)
	sameMsg := full
	sameMsg.URL, sameMsg.Line, sameMsg.Part = "other", 99, "9.9"
	samePart := full
	samePart.URL, samePart.Offset = "other", 7
	canonical := sample
	canonical.Canonical = canonical.URL
	noCanonical := sample
	noCanonical.Canonical = ""
	recs := []Record{{}, sample, full, sameMsg, samePart, canonical, noCanonical, {Problems: []string{}, Targets: []Target{}}, {Problems: []string{""}, Target: &Target{}}}
	left := 0
	for _, r := range recs {
		for _, prev := range append([]*Record{nil}, func() (ps []*Record) {
			for i := range recs {
				ps = append(ps, &recs[i])
			}
			return
		}()...) {
			b := appendRecordBinary(nil, &r, prev)
			var got Record
			if err := decodeRecordBinary(b, &got, prev); err != nil || !reflect.DeepEqual(got, r) {
				t.Fatalf("round trip of\n%+v\nafter %+v gave\n%+v, %v", r, prev, got, err)
			}
			if b[0]&(flagSameMessage|flagSamePart) != 0 {
				left++
				if decodeRecordBinary(b, &got, nil) == nil {
					t.Error("a record that refers to the previous one decoded without one")
				}
			}
			for i := range b {
				if err := decodeRecordBinary(b[:i], &got, prev); err == nil {
					t.Fatalf("%d of %d bytes decoded without an error", i, len(b))
				}
			}
			if err := decodeRecordBinary(append(b, 0), &got, prev); err == nil {
				t.Error("a trailing byte decoded without an error")
			}
		}
	}
	if left < 10 {
		t.Errorf("fields left out in only %d encodings", left)
	}
	if a, b := appendRecordBinary(nil, &sameMsg, &full), appendRecordBinary(nil, &sameMsg, nil); len(a) >= len(b)-20 {
		t.Errorf("the same message's fields take %d bytes after the record, %d alone", len(a), len(b))
	}
}

func FuzzRecordBinary(f *testing.F) {
	f.Add(appendRecordBinary(nil, &sample, nil), false)
	f.Add(appendRecordBinary(nil, &sample, &sample), true)
	f.Add([]byte{0xff, 0x80}, true)
	f.Fuzz(func(t *testing.T, b []byte, withPrev bool) {
		var prev *Record
		if withPrev {
			prev = &sample
		}
		var r Record
		if decodeRecordBinary(b, &r, prev) != nil {
			return
		}
		again := appendRecordBinary(nil, &r, prev)
		var r2 Record
		if err := decodeRecordBinary(again, &r2, prev); err != nil || !reflect.DeepEqual(r, r2) {
			t.Fatalf("re-encoding %q: %v", b, err)
		}
	})
}

// BenchmarkUnique writes records of distinct links (each twice) through
// Unique and reports the memory it holds per distinct link: the spill
// set's table and the records' buffer ("mem-B/link"), and the growth of
// the Go heap plus the off-heap table ("heap-B/link").
func BenchmarkUnique(b *testing.B) {
	for _, c := range []struct {
		name   string
		links  int
		budget int64
	}{{"200k", 200000, 0}, {"200k-spill-4MiB", 200000, 4 << 20}} {
		b.Run(c.name, func(b *testing.B) {
			recs := genRecords(1000, 1000, 4)
			b.ReportAllocs()
			var mem, heap float64
			for b.Loop() {
				var ms0, ms1 runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&ms0)
				u := UniqueWithBudget(nopWriter{}, c.budget, b.TempDir()).(*uniqueWriter)
				for i := range 2 * c.links {
					r := &recs[i%len(recs)]
					r.Canonical = fmt.Sprintf("http://host.example/%d", i%c.links)
					if err := u.Write(r); err != nil {
						b.Fatal(err)
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&ms1)
				if u.set.Len() != uint64(c.links) {
					b.Fatalf("%d distinct links, want %d", u.set.Len(), c.links)
				}
				mem = float64(u.memory()) / float64(c.links)
				heap = (float64(ms1.HeapAlloc) - float64(ms0.HeapAlloc) + float64(u.set.Memory())) / float64(c.links)
				if err := u.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(mem, "mem-B/link")
			b.ReportMetric(heap, "heap-B/link")
		})
	}
}

type nopWriter struct{}

func (nopWriter) Message(int, bool)   {}
func (nopWriter) Write(*Record) error { return nil }
func (nopWriter) Close() error        { return nil }
