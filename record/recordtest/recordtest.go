// Package recordtest holds the checks that tie a report's writers, help
// text and docs to its table of fields (record.Table): each fails the
// test when the two disagree, so a field is named in one place only.
// Used by the tests of record, report, audit and cmd/linkscan.
package recordtest

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/linkscan/linkscan/record"
)

// Struct checks that the JSON names of the fields of struct v (a value
// or a pointer) are the table's names, in order, and that omitempty (or
// omitzero) marks exactly the table's Omitted fields.
func Struct(t testing.TB, table record.Table, v any) {
	t.Helper()
	rt := reflect.TypeOf(v)
	if rt.Kind() == reflect.Pointer {
		rt = rt.Elem()
	}
	var names []string
	for i := range rt.NumField() {
		f := rt.Field(i)
		tag, ok := f.Tag.Lookup("json")
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if !ok || name == "" {
			name = f.Name
		}
		names = append(names, name)
		omit := slices.Contains(strings.Split(opts, ","), "omitempty") || slices.Contains(strings.Split(opts, ","), "omitzero")
		if tf, ok := table.Lookup(name); ok && tf.Omitted != omit {
			t.Errorf("%s.%s: omitempty %v, the table says Omitted %v", rt.Name(), f.Name, omit, tf.Omitted)
		}
	}
	if got, want := strings.Join(names, " "), strings.Join(table.Names(), " "); got != want {
		t.Errorf("the JSON tags of %s and its table of fields disagree:\nstruct %s\ntable  %s", rt.Name(), got, want)
	}
}

// Keys returns the keys of the JSON object line, in order, and its
// values by key.
func Keys(t testing.TB, line []byte) ([]string, map[string]json.RawMessage) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object (%v): %s", err, line)
	}
	var keys []string
	vals := map[string]json.RawMessage{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		keys = append(keys, k.(string))
		vals[k.(string)] = v
	}
	return keys, vals
}

// JSONKeys checks that the keys of the JSON object line (a record with
// every field set, so that none is omitted) are the table's names, in
// order.
func JSONKeys(t testing.TB, table record.Table, line []byte) {
	t.Helper()
	keys, _ := Keys(t, line)
	if got, want := strings.Join(keys, " "), strings.Join(table.Names(), " "); got != want {
		t.Errorf("the JSON keys and the table of fields disagree:\njson  %s\ntable %s", got, want)
	}
}

// CSV checks that header is the table's CSV header and that each cell of
// row holds the value of the field its column names, taken from
// jsonLine, the same record in JSON: a string as it is, a number or a
// boolean as JSON writes it. It returns the columns it could not compare
// (not a key of jsonLine, or not a scalar there), for the caller to check
// or to name.
func CSV(t testing.TB, table record.Table, header, row []string, jsonLine []byte) (unchecked []string) {
	t.Helper()
	if got, want := strings.Join(header, ","), strings.Join(table.CSVColumns(), ","); got != want {
		t.Errorf("the CSV header and the table of fields disagree:\ncsv   %s\ntable %s", got, want)
	}
	if len(row) != len(header) {
		t.Fatalf("%d cells for %d columns", len(row), len(header))
	}
	_, vals := Keys(t, jsonLine)
	for i, col := range header {
		raw, ok := vals[col]
		if !ok || len(raw) == 0 || raw[0] == '[' || raw[0] == '{' || string(raw) == "null" {
			unchecked = append(unchecked, col)
			continue
		}
		want := string(raw)
		if raw[0] == '"' {
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
		}
		if row[i] != want {
			t.Errorf("CSV column %s holds %q, JSON field %s %q", col, row[i], col, want)
		}
	}
	return unchecked
}

// Shared checks that the fields table shares a name with scan's records
// (record.Fields) are record.Shared's, with its Doc: one name, one
// meaning. The names in own are the exceptions, fields that mean
// something else in table (each must have a Doc of its own). A Note is
// allowed on shared fields only.
func Shared(t testing.TB, table record.Table, own ...string) {
	t.Helper()
	shared := record.Shared.All()
	for _, f := range table {
		if f.Doc == "" {
			t.Errorf("field %s has no Doc", f.Name)
		}
		sf, isShared := shared.Lookup(f.Name)
		scan, inScan := record.Fields.Lookup(f.Name)
		switch {
		case slices.Contains(own, f.Name):
			if !inScan {
				t.Errorf("field %s is listed as meaning something else than in scan's records, which have none", f.Name)
			} else if f.Doc == scan.Doc {
				t.Errorf("field %s is listed as meaning something else than in scan's records, but has their Doc", f.Name)
			}
		case inScan && !isShared:
			t.Errorf("field %s has the name of a field of scan's records that is not in record.Shared: add it there, or name it otherwise", f.Name)
		case isShared && f.Doc != sf.Doc:
			t.Errorf("field %s: Doc %q, record.Shared's %q: take the field from record.Shared", f.Name, f.Doc, sf.Doc)
		case !isShared && f.Note != "":
			t.Errorf("field %s has a Note but is not a shared field: write it in its Doc", f.Name)
		}
	}
}

// DocTable checks that the first table of fields ("| field | meaning |")
// in the Markdown file doc is table.MarkdownTable(); with fix, it writes
// that table there instead.
func DocTable(t testing.TB, table record.Table, doc string, fix bool) {
	t.Helper()
	DocTableAfter(t, table, doc, "", fix)
}

// DocTableAfter is DocTable for the first table of fields after the
// text after, for a file with more than one.
func DocTableAfter(t testing.TB, table record.Table, doc, after string, fix bool) {
	t.Helper()
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	from := strings.Index(s, after)
	if from < 0 {
		t.Fatalf("%s does not have %q", doc, after)
	}
	start := strings.Index(s[from:], "| field | meaning |\n")
	if start < 0 {
		t.Fatalf("%s has no table of fields (| field | meaning |) after %q", doc, after)
	}
	start += from
	n := strings.Index(s[start:], "\n\n")
	if n < 0 {
		n = len(s) - start - 1
	}
	end := start + n + 1
	want := table.MarkdownTable()
	if s[start:end] == want {
		return
	}
	if fix {
		if err := os.WriteFile(doc, []byte(s[:start]+want+s[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the table of fields in %s is out of date: run the test with -fixdocs\nhave:\n%s\nwant:\n%s", doc, s[start:end], want)
}

// Help checks that the help text holds lead followed by the table's
// Summary and a full stop, white space (line breaks of the wrapping)
// taken as one space.
func Help(t testing.TB, table record.Table, help, lead string) {
	t.Helper()
	want := strings.Join(strings.Fields(lead+table.Summary()+"."), " ")
	if !strings.Contains(strings.Join(strings.Fields(help), " "), want) {
		t.Errorf("the help text does not list the fields as the table does; want %q in:\n%s", want, help)
	}
}
