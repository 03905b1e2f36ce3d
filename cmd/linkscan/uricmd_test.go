package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/linkscan/linkscan/record/recordtest"
)

// TestParseFields: parseLine's and jsonProblem's JSON tags are the names
// of parseFields and problemFields, in order; a line of uri parse --json
// for a URL that sets the fields JSON may leave out (user, password) has
// parseFields' keys, its problems problemFields', and the problems field's
// Doc names each of problemFields.
func TestParseFields(t *testing.T) {
	recordtest.Struct(t, parseFields, parseLine{})
	recordtest.Struct(t, problemFields, jsonProblem{})
	code, out, errs := runCmd("", "uri", "parse", "--json", "http://u:p@a b:80/x?q#f")
	if code != exitFail || errs != "" {
		t.Fatalf("exit %d (want %d, an invalid URL), stderr %q", code, exitFail, errs)
	}
	recordtest.JSONKeys(t, parseFields, []byte(out))
	_, vals := recordtest.Keys(t, []byte(out))
	var ps []json.RawMessage
	if err := json.Unmarshal(vals["problems"], &ps); err != nil || len(ps) == 0 {
		t.Fatalf("problems %s: %v", vals["problems"], err)
	}
	for _, p := range ps {
		recordtest.JSONKeys(t, problemFields, p)
	}
	for _, f := range parseFields {
		if f.Doc == "" {
			t.Errorf("field %s has no Doc", f.Name)
		}
	}
	doc, _ := parseFields.Lookup("problems")
	for _, f := range problemFields {
		if !strings.Contains(doc.Doc, "`"+f.Name+"`") {
			t.Errorf("the Doc of problems does not name its field %s: %s", f.Name, doc.Doc)
		}
	}
}

// TestParseHelp: the help of uri lists parseFields.
func TestParseHelp(t *testing.T) {
	recordtest.Help(t, parseFields, helpText(t, "uri"), parseFieldsLead)
}

// TestParseDocsTable: the table of uri parse --json fields in docs/uri.md
// is the one made from parseFields; go test ./cmd/linkscan -run
// TestParseDocsTable -fixdocs rewrites it.
func TestParseDocsTable(t *testing.T) {
	recordtest.DocTable(t, parseFields, "../../docs/uri.md", *fixDocs)
}
