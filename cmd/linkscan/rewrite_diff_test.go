package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkscan/linkscan/internal/linediff"
	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/record"
	"github.com/linkscan/linkscan/record/recordtest"
	"github.com/linkscan/linkscan/rewrite"
)

var fixDocs = flag.Bool("fixdocs", false, "rewrite the table of --report fields in docs/rewrite.md")

// TestReportFields: changeLine's JSON tags and a --report line name the
// fields of changeFields, in its order; the fields a line shares with
// scan's records are record.Shared's (status alone means something else),
// and each holds what its name says.
func TestReportFields(t *testing.T) {
	recordtest.Struct(t, changeFields, changeLine{})
	recordtest.Shared(t, changeFields, "status")
	m := &mailbox.Message{Path: "a.mbox", Offset: 12, MessageID: "m@x"}
	ch := rewrite.LinkChange{Part: "1.2", Where: "body", ContentType: "text/plain", Line: 3, Column: 7, RawOffset: 345,
		Old: "http://a.example/x?utm_source=y", New: "http://a.example/x", OldForm: "angle", NewForm: "bare",
		Rules:   []rewrite.Change{{Rule: "strip", Old: "http://a.example/x?utm_source=y", New: "http://a.example/x", Note: "a note"}},
		Skipped: "signed"}
	b, err := messageReport(m, []rewrite.LinkChange{ch})
	if err != nil {
		t.Fatal(err)
	}
	recordtest.JSONKeys(t, changeFields, b)
	_, vals := recordtest.Keys(t, b)
	want := map[string]string{"path": `"a.mbox"`, "offset": "12", "message_id": `"m@x"`, "part": `"1.2"`, "content_type": `"text/plain"`,
		"where": `"body"`, "line": "3", "column": "7", "raw_offset": "345", "old_url": `"http://a.example/x?utm_source=y"`,
		"new_url": `"http://a.example/x"`, "old_form": `"angle"`, "new_form": `"bare"`, "rule": `"strip"`, "status": `"skipped"`,
		"reason": `"signed"`, "note": `"a note"`}
	for _, f := range changeFields {
		if got := string(vals[f.Name]); got != want[f.Name] {
			t.Errorf("%s = %s, want %s", f.Name, got, want[f.Name])
		}
	}
}

// TestReportPlaceIsScans: for every link of the golden cases of
// testdata/rewrite that --report lists, but those of HTML attributes (the
// Notes of changeFields say how they differ), the place fields shared with
// scan's records hold what scan's record of the same link holds.
func TestReportPlaceIsScans(t *testing.T) {
	ins, _ := filepath.Glob(td + "rewrite/*.input")
	shared := record.Shared.All()
	compared := 0
	for _, in := range ins {
		rep := filepath.Join(t.TempDir(), "report")
		args := rewriteCase(in)
		code, _, errs := runCmd("", append(args, "--dry-run", "--report", rep, in)...)
		if code != exitOK && code != exitDamage {
			t.Fatalf("%s: rewrite exit %d: %s", in, code, errs)
		}
		scanArgs := []string{"scan", "--format", "jsonl", "--progress", "never"}
		if strings.Contains(in, "headers") {
			scanArgs = append(scanArgs, "--headers")
		}
		code, out, errs := runCmd("", append(scanArgs, in)...)
		if code != exitOK && code != exitDamage {
			t.Fatalf("%s: scan exit %d: %s", in, code, errs)
		}
		// scan's records by place and URL
		recs := map[string]map[string]json.RawMessage{}
		key := func(v map[string]json.RawMessage, url string) string {
			return string(v["offset"]) + " " + string(v["part"]) + " " + string(v["where"]) + " " + string(v["line"]) + " " + string(v["column"]) + " " + url
		}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if l == "" {
				continue
			}
			_, v := recordtest.Keys(t, []byte(l))
			recs[key(v, string(v["url"]))] = v
		}
		sc := bufio.NewScanner(bytes.NewReader(readFile(t, rep)))
		for sc.Scan() {
			_, v := recordtest.Keys(t, sc.Bytes())
			if strings.HasPrefix(string(v["where"]), `"html:`) || string(v["status"]) == `"file-not-written"` {
				continue
			}
			r, ok := recs[key(v, string(v["old_url"]))]
			if !ok {
				t.Errorf("%s: no scan record for the --report line %s", in, sc.Bytes())
				continue
			}
			for _, f := range shared {
				if a, b := v[f.Name], r[f.Name]; a != nil && string(a) != string(b) {
					t.Errorf("%s: %s: --report %s, scan %s (%s)", in, f.Name, a, b, sc.Bytes())
				}
			}
			compared++
		}
	}
	t.Logf("%d --report lines compared", compared)
	if compared < 20 {
		t.Errorf("only %d --report lines compared with scan's records", compared)
	}
}

// TestReportDocsTable: the table of --report fields in docs/rewrite.md is
// the one made from changeFields; go test ./cmd/linkscan -run
// TestReportDocsTable -fixdocs rewrites it.
func TestReportDocsTable(t *testing.T) {
	recordtest.DocTable(t, changeFields, "../../docs/rewrite.md", *fixDocs)
}

// TestReportHelp: the help of rewrite lists changeFields.
func TestReportHelp(t *testing.T) {
	recordtest.Help(t, changeFields, helpText(t, "rewrite"), reportFieldsLead)
}

// diffOp and lineDiff let TestLineDiff and FuzzLineDiff of
// rewrite_test.go run on linediff.Ops, until they go (package linediff's
// tests hold the same and more).
type diffOp struct {
	kind byte
	line []byte
}

func lineDiff(a, b []byte) []diffOp {
	var ops []diffOp
	for _, op := range linediff.Ops(a, b) {
		ops = append(ops, diffOp{op.Kind, op.Line})
	}
	return ops
}
