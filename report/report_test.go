package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/linkscan/linkscan/record"
	"github.com/linkscan/linkscan/record/recordtest"
)

var fixDocs = flag.Bool("fixdocs", false, "rewrite the table of summary-json fields in docs/scan.md")

var sample = Record{
	URL: "http://a.org/x?q=\"1\"&b=<2>", Canonical: "http://a.org/x?q=%221%22&b=%3C2%3E", Form: "bare", Valid: true,
	Problems: []string{"tab\there", "ctl\x01\x1f", "bad utf8 \xff", "line\u2028sep"}, Scheme: "http", Host: "a.org",
	Path: "dir/a.mbox", Offset: 1234, MessageID: "id@x", Date: "1994-03-23T18:58:05+01:00", From: "Zoë <z@x>",
	Subject: "Re: \\back\\slash", Newsgroups: "comp.a,comp.b", Part: "1.2", ContentType: "text/plain", Where: "body",
	Line: 3, Column: 14, Start: 40, End: 60, RawOffset: 1300,
}

// TestJSONMatchesEncodingJSON holds the hand-written encoder to
// encoding/json's output.
func TestJSONMatchesEncodingJSON(t *testing.T) {
	resolved := sample
	resolved.Status = "resolved"
	resolved.Target = &Target{File: "f", Offset: 9, MessageID: "m@x", Part: "1.2"}
	resolved.Targets = []Target{*resolved.Target, {Group: "comp.lang.go"}}
	for _, r := range []Record{sample, {}, {URL: "\x00\u00e9\U0001F600", Count: 3, Problems: []string{}}, resolved} {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		rr := r
		if rr.Problems == nil {
			rr.Problems = []string{}
		}
		enc.Encode(&rr)
		got := appendRecord(nil, &r)
		if string(got) != want.String() {
			t.Errorf("record %+v\ngot  %s\nwant %s", r, got, want.String())
		}
	}
}

func FuzzJSONString(f *testing.F) {
	f.Add("plain")
	f.Add("\"\\\x00\xff\u2028")
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		want = bytes.ReplaceAll(want, []byte(`\u003c`), []byte("<"))
		want = bytes.ReplaceAll(want, []byte(`\u003e`), []byte(">"))
		want = bytes.ReplaceAll(want, []byte(`\u0026`), []byte("&"))
		if got := appendString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("appendString(%q) = %s, want %s", s, got, want)
		}
	})
}

func TestCSV(t *testing.T) {
	var b bytes.Buffer
	w, _ := NewWriter(&b, CSV)
	w.Write(&sample)
	w.Close()
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(rows) != 2 || len(rows[0]) != len(Fields) || len(rows[1]) != len(Fields) {
		t.Fatalf("csv: %v %q", err, rows)
	}
	if rows[1][0] != sample.URL || rows[1][11] != "1234" || rows[0][11] != "offset" {
		t.Errorf("csv row %q", rows[1])
	}
}

func TestUniqueAndSummary(t *testing.T) {
	var b bytes.Buffer
	s, _ := NewWriter(&b, SummaryJSON)
	u := Unique(s)
	u.Message(2, false)
	u.Message(1, true)
	for _, r := range []Record{sample, sample, {URL: "news:x", Canonical: "news:x", Scheme: "news", Date: "2001-01-01T00:00:00Z", Valid: true, Status: "dangling"}} {
		u.Write(&r)
	}
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	var st Stats
	if err := json.Unmarshal(b.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	if st.Messages != 2 || st.Damaged != 1 || st.Parts != 3 || st.Links != 3 || st.Distinct != 2 ||
		st.Schemes["http"] != 2 || st.Years["1994"] != 2 || st.TopHosts[0].Host != "a.org" || st.Statuses["dangling"] != 1 {
		t.Errorf("summary %+v", st)
	}
	b.Reset()
	s, _ = NewWriter(&b, Summary)
	s.Write(&sample)
	s.Close()
	if !strings.Contains(b.String(), "links             1") || !strings.Contains(b.String(), "a.org") {
		t.Errorf("text summary:\n%s", b.String())
	}
}

// TestJSONWriterCaches writes records whose message and part fields
// change in every combination through the writer, which keeps those
// fields encoded from one record to the next, and compares each line with
// encoding/json.
func TestJSONWriterCaches(t *testing.T) {
	var recs []Record
	for _, msg := range []string{"a@x", "a@x", "b@x"} {
		for _, part := range []struct{ p, ct, w string }{{"1", "text/plain", "body"}, {"1", "text/plain", "body"}, {"2", "text/html", "html:href"}, {"2", "text/plain", "html:href"}, {"1", "text/plain", "body"}} {
			r := sample
			r.MessageID, r.Part, r.ContentType, r.Where = msg, part.p, part.ct, part.w
			recs = append(recs, r)
		}
	}
	var got bytes.Buffer
	w, err := NewWriter(&got, JSONL)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
		rr := recs[i]
		if rr.Problems == nil {
			rr.Problems = []string{}
		}
		enc.Encode(&rr)
	}
	w.Close()
	if got.String() != want.String() {
		t.Errorf("writer output differs from encoding/json:\ngot  %s\nwant %s", got.String(), want.String())
	}
}

// full is a record with every field set, for the tests of the field
// table.
func full() Record {
	r := sample
	r.Count, r.Status, r.RawStart, r.RawEnd, r.Blob = 2, "resolved", 1305, 1320, "0123abcd"
	r.Joined, r.Heuristic = true, true
	r.Target = &Target{File: "f", Offset: 9, MessageID: "m@x", Part: "1.2", Group: "g", Blob: "b"}
	r.Targets = []Target{*r.Target, {Group: "comp.lang.go"}}
	return r
}

// TestJSONFieldOrder: JSON lines, as the jsonl writer writes them, name
// the fields of record.Fields, in their order.
func TestJSONFieldOrder(t *testing.T) {
	recordtest.JSONKeys(t, record.Fields, fullJSON(t))
}

// fullJSON is full() as the jsonl writer writes it.
func fullJSON(t *testing.T) []byte {
	r := full()
	var b bytes.Buffer
	w, err := NewWriter(&b, JSONL)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&r); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return b.Bytes()
}

// TestCSVFieldOrder: the CSV header is record.Fields' columns and each
// column holds the field of its name (the value JSON gives it); the
// columns that are no JSON value of their own are checked here.
func TestCSVFieldOrder(t *testing.T) {
	r := full()
	var b bytes.Buffer
	w, err := NewWriter(&b, CSV)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&r); err != nil {
		t.Fatal(err)
	}
	w.Close()
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	if strings.Join(Fields, ",") != strings.Join(rows[0], ",") {
		t.Errorf("report.Fields %v, header %v", Fields, rows[0])
	}
	unchecked := recordtest.CSV(t, record.Fields, rows[0], rows[1], fullJSON(t))
	want := map[string]string{"problems": strings.Join(r.Problems, "; "), "target_file": "f", "target_offset": "9",
		"target_message_id": "m@x", "target_part": "1.2", "target_group": "g", "target_blob": "b", "targets": "2"}
	if len(unchecked) != len(want) {
		t.Errorf("columns not compared with JSON: %v, want those of %v", unchecked, want)
	}
	for _, name := range unchecked {
		i := slices.Index(rows[0], name)
		if w, ok := want[name]; !ok || rows[1][i] != w {
			t.Errorf("column %s holds %q, want %q", name, rows[1][i], w)
		}
	}
}

// TestSummarySpills: the distinct count of a summary is the same when
// its set of hashes spills to disk, and leaves no file behind.
func TestSummarySpills(t *testing.T) {
	var recs []Record
	for i := range 5000 {
		r := sample
		r.Canonical = fmt.Sprintf("http://example.org/%d", i%3700)
		recs = append(recs, r)
	}
	var outs []string
	for _, memory := range []int64{1 << 10, DefaultMemory} {
		dir := t.TempDir()
		var b bytes.Buffer
		w := NewSummary(&b, true, memory, dir)
		for i := range recs {
			if err := w.Write(&recs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Errorf("memory %d: %d files left", memory, len(left))
		}
		outs = append(outs, b.String())
	}
	if outs[0] != outs[1] || !strings.Contains(outs[0], `"distinct_canonical": 3700`) {
		t.Errorf("spilled:\n%s\nin memory:\n%s", outs[0], outs[1])
	}
	// A spill of the distinct links that fails: an error naming the
	// directory, from Write and again from Close, which writes nothing
	// (fails if it prints the counts of what was read until then).
	var b bytes.Buffer
	w := NewSummary(&b, false, 1<<10, filepath.Join(t.TempDir(), "missing"))
	var err error
	for i := range recs {
		recs[i].Host = "" // the links spill, not the hosts
		if err = w.Write(&recs[i]); err != nil {
			break
		}
	}
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("summary spilling into a missing directory: %v", err)
	}
	if cerr := w.Close(); cerr != err || b.Len() != 0 {
		t.Errorf("Close after the failure: %v, %d bytes written:\n%s", cerr, b.Len(), b.String())
	}
}

// TestSummaryFields: Stats' JSON tags and summary-json's keys are
// SummaryFields', in order; a top host is what its Doc shows; the table
// in docs/scan.md is made from it (-fixdocs rewrites it).
func TestSummaryFields(t *testing.T) {
	recordtest.Struct(t, SummaryFields, Stats{})
	var b bytes.Buffer
	w := NewSummary(&b, true, DefaultMemory, t.TempDir())
	r := full()
	if err := w.Write(&r); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recordtest.JSONKeys(t, SummaryFields, b.Bytes())
	host, _ := json.Marshal(HostCount{"h", 2})
	if f, _ := SummaryFields.Lookup("top_hosts"); string(host) != `{"host":"h","links":2}` || !strings.Contains(f.Doc, `{"host": ..., "links": N}`) {
		t.Errorf("a top host is %s; top_hosts: %s", host, f.Doc)
	}
	recordtest.DocTableAfter(t, SummaryFields, "../docs/scan.md", "`summary-json` the same as one JSON object", *fixDocs)
}
