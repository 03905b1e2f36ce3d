package record_test

import (
	"flag"
	"reflect"
	"strings"
	"testing"

	"github.com/linkscan/linkscan/record"
	"github.com/linkscan/linkscan/record/recordtest"
)

var fixDocs = flag.Bool("fixdocs", false, "rewrite the table of fields in docs/scan.md")

// TestFieldsMatchStruct: the table lists the JSON names of Record's
// fields, in the struct's order, omitempty on the Omitted ones.
func TestFieldsMatchStruct(t *testing.T) {
	recordtest.Struct(t, record.Fields, record.Record{})
	for _, f := range record.Fields {
		if f.Doc == "" || f.Omitted != (f.With != "") {
			t.Errorf("field %s: Doc %q, Omitted %v, With %q", f.Name, f.Doc, f.Omitted, f.With)
		}
	}
}

// TestShared: every shared field is one of scan's records, as Shared
// defines it, and has a Doc; scan's table holds no Notes.
func TestShared(t *testing.T) {
	if n := reflect.TypeOf(record.Shared).NumField(); n != len(record.Shared.All()) {
		t.Errorf("SharedFields has %d fields, All returns %d", n, len(record.Shared.All()))
	}
	for _, f := range record.Shared.All() {
		got, ok := record.Fields.Lookup(f.Name)
		if !ok || got.Doc != f.Doc || f.Doc == "" || f.Note != "" || f.Omitted {
			t.Errorf("shared field %s: in Fields %v as %+v", f.Name, ok, got)
		}
	}
	for _, f := range record.Fields {
		if f.Note != "" {
			t.Errorf("field %s: a Note in scan's own table", f.Name)
		}
	}
}

func TestSummary(t *testing.T) {
	s := record.Summary()
	if !strings.HasPrefix(s, "url, canonical, form,") || !strings.HasSuffix(s, "raw_offset, raw_start, raw_end (and count with --unique; status, target and targets with --resolve)") {
		t.Errorf("Summary() = %q", s)
	}
}

// TestMarkdownTable: fields next to one another with the same meaning
// share a row; a Note is part of the meaning.
func TestMarkdownTable(t *testing.T) {
	tab := record.Table{
		{Name: "a", Doc: "x"}, {Name: "b", Doc: "x"}, {Name: "c", Doc: "x", Note: "n"}, {Name: "d", Doc: "y"}, {Name: "e", Doc: "x"},
	}
	want := "| field | meaning |\n|---|---|\n| `a`, `b` | x |\n| `c` | x; n |\n| `d` | y |\n| `e` | x |\n"
	if got := tab.MarkdownTable(); got != want {
		t.Errorf("MarkdownTable:\n%s\nwant:\n%s", got, want)
	}
	if got := (record.Table{{Name: "a", Doc: "x"}, {Name: "b", With: "--f", Doc: "y"}, {Name: "c", With: "--f", Doc: "y"}}).Summary(); got != "a (and b and c with --f)" {
		t.Errorf("Summary: %q", got)
	}
}

// TestDocsTable: the table of fields in docs/scan.md is the one made from
// Fields; go test ./record -fixdocs rewrites it.
func TestDocsTable(t *testing.T) {
	recordtest.DocTable(t, record.Fields, "../docs/scan.md", *fixDocs)
}

// TestTargetFields: TargetFields names Target's JSON fields, and scan's
// CSV target columns are theirs but name's.
func TestTargetFields(t *testing.T) {
	recordtest.Struct(t, record.TargetFields, record.Target{})
	f, _ := record.Fields.Lookup("target")
	want := "target_file target_offset target_message_id target_part target_group target_blob"
	if got := strings.Join(f.Columns, " "); got != want {
		t.Errorf("target's CSV columns %s, want %s", got, want)
	}
}
