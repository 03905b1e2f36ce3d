package record

import (
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"
)

var fixDocs = flag.Bool("fixdocs", false, "rewrite the table of fields in docs/scan.md")

// TestFieldsMatchStruct: the table lists the JSON names of Record's
// fields, in the struct's order.
func TestFieldsMatchStruct(t *testing.T) {
	var tags []string
	rt := reflect.TypeOf(Record{})
	for i := range rt.NumField() {
		tag := rt.Field(i).Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		tags = append(tags, name)
		f := Fields[min(i, len(Fields)-1)]
		if omit := opts == "omitempty"; i < len(Fields) && omit != f.Omitted {
			t.Errorf("field %s: omitempty %v, table says Omitted %v", name, omit, f.Omitted)
		}
	}
	if got, want := strings.Join(Names(), " "), strings.Join(tags, " "); got != want {
		t.Errorf("record.Fields and Record disagree:\ntable  %s\nstruct %s", got, want)
	}
	for _, f := range Fields {
		if f.Doc == "" || f.Omitted != (f.With != "") {
			t.Errorf("field %s: Doc %q, Omitted %v, With %q", f.Name, f.Doc, f.Omitted, f.With)
		}
	}
}

func TestSummary(t *testing.T) {
	s := Summary()
	if !strings.HasPrefix(s, "url, canonical, form,") || !strings.HasSuffix(s, "raw_offset, raw_end (and count with --unique; status, target and targets with --resolve)") {
		t.Errorf("Summary() = %q", s)
	}
}

// TestDocsTable: the table of fields in docs/scan.md is the one made from
// Fields; go test ./record -fixdocs rewrites it.
func TestDocsTable(t *testing.T) {
	const doc = "../docs/scan.md"
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	start := strings.Index(s, "| field | meaning |\n")
	if start < 0 {
		t.Fatalf("%s has no table of fields", doc)
	}
	end := start + strings.Index(s[start:], "\n\n") + 1
	want := MarkdownTable()
	if s[start:end] == want {
		return
	}
	if *fixDocs {
		if err := os.WriteFile(doc, []byte(s[:start]+want+s[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the table of fields in %s is out of date: run go test ./record -fixdocs\nhave:\n%s\nwant:\n%s", doc, s[start:end], want)
}
