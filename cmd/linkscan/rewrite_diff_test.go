package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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

// refHunks is the diff as it was made before opWalk (every line and op
// held in slices): the reference writeHunks is held to.
func refHunks(a, b []byte) string {
	var la, lb [][]byte
	forEachLine(a, func(l []byte) { la = append(la, l) })
	forEachLine(b, func(l []byte) { lb = append(lb, l) })
	p := 0
	for p < len(la) && p < len(lb) && bytes.Equal(la[p], lb[p]) {
		p++
	}
	s := 0
	for s < len(la)-p && s < len(lb)-p && bytes.Equal(la[len(la)-1-s], lb[len(lb)-1-s]) {
		s++
	}
	var ops []diffOp
	for _, l := range la[:p] {
		ops = append(ops, diffOp{' ', l})
	}
	ma, mb := la[p:len(la)-s], lb[p:len(lb)-s]
	if len(ma) == len(mb) {
		for i := 0; i < len(ma); {
			if bytes.Equal(ma[i], mb[i]) {
				ops = append(ops, diffOp{' ', ma[i]})
				i++
				continue
			}
			j := i
			for j < len(ma) && !bytes.Equal(ma[j], mb[j]) {
				j++
			}
			for _, l := range ma[i:j] {
				ops = append(ops, diffOp{'-', l})
			}
			for _, l := range mb[i:j] {
				ops = append(ops, diffOp{'+', l})
			}
			i = j
		}
	} else {
		for _, l := range ma {
			ops = append(ops, diffOp{'-', l})
		}
		for _, l := range mb {
			ops = append(ops, diffOp{'+', l})
		}
	}
	for _, l := range la[len(la)-s:] {
		ops = append(ops, diffOp{' ', l})
	}
	var w strings.Builder
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-diffContext, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			k := end
			for k < len(ops) && ops[k].kind == ' ' {
				k++
			}
			if k == len(ops) || k-end > 2*diffContext {
				end = min(end+diffContext, len(ops))
				break
			}
			end = k
		}
		oldLine, newLine := 1, 1
		for _, op := range ops[:start] {
			if op.kind != '+' {
				oldLine++
			}
			if op.kind != '-' {
				newLine++
			}
		}
		oldN, newN := 0, 0
		for _, op := range ops[start:end] {
			if op.kind != '+' {
				oldN++
			}
			if op.kind != '-' {
				newN++
			}
		}
		fmt.Fprintf(&w, "@@ -%d,%d +%d,%d @@\n", oldLine, oldN, newLine, newN)
		for _, op := range ops[start:end] {
			l := bytes.TrimSuffix(bytes.TrimSuffix(op.line, []byte{'\n'}), []byte{'\r'})
			w.WriteByte(op.kind)
			w.WriteString(escape(string(l)))
			w.WriteByte('\n')
		}
		i = end
	}
	return w.String()
}

func hunks(a, b []byte) string {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	writeHunks(w, a, b)
	w.Flush()
	return buf.String()
}

// linesOf makes a text of lines from a few letters each: "a\nb\n...", a
// line per byte of spec (its value modulo 4 picks one of four lines, so
// that equal lines recur), with or without the last line break.
func linesOf(spec []byte, lastBreak bool) []byte {
	var b []byte
	for _, c := range spec {
		b = append(b, "abcd"[c%4], '\n')
	}
	if !lastBreak && len(b) > 0 {
		b = b[:len(b)-1]
	}
	return b
}

// TestHunksAsBefore: the streaming diff writes what the diff made from
// slices of every line and op wrote, on cases of each shape (prefix,
// suffix, paired runs, unequal middles, nearby and distant changes, no
// final line break, empty texts) and on 20,000 random pairs.
func TestHunksAsBefore(t *testing.T) {
	cases := [][2]string{
		{"", ""}, {"", "x\n"}, {"x\n", ""}, {"a\nb\nc\nd\n", "a\nB\nc\nD\n"}, {"a\nb", "a\nb\nc\nd"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "1\nX\n3\n4\n5\n6\n7\n8\n9\n10\nY\n12\n"},
		{"1\n2\n3\n4\n5\n6\n7\n", "1\nX\n3\n4\n5\n6\nY\n"}, {"a\r\nb\r\n", "a\r\nc\r\n"}, {"a\nb\nc\n", "a\nc\n"},
		{"x\ny\nz\n", "x\ny\nz\n"}, {"a\nb\n", "a\nb"}, {"\x1b[2J\n", "\x1b[0m\n"},
	}
	for _, c := range cases {
		if got, want := hunks([]byte(c[0]), []byte(c[1])), refHunks([]byte(c[0]), []byte(c[1])); got != want {
			t.Errorf("%q -> %q:\n%s\nwant:\n%s", c[0], c[1], got, want)
		}
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		n := rnd.IntN(30)
		sa := make([]byte, n)
		for j := range sa {
			sa[j] = byte(rnd.IntN(4))
		}
		sb := slices.Clone(sa)
		for range rnd.IntN(6) { // change, drop or add lines
			switch j := rnd.IntN(len(sb) + 1); rnd.IntN(3) {
			case 0:
				if j < len(sb) {
					sb[j] = byte(rnd.IntN(4))
				}
			case 1:
				if j < len(sb) {
					sb = slices.Delete(sb, j, j+1)
				}
			default:
				sb = slices.Insert(sb, j, byte(rnd.IntN(4)))
			}
		}
		a, b := linesOf(sa, i%3 != 0), linesOf(sb, i%5 != 0)
		if got, want := hunks(a, b), refHunks(a, b); got != want {
			t.Fatalf("%q -> %q:\n%s\nwant:\n%s", a, b, got, want)
		}
	}
}

// FuzzHunks: the streaming diff writes what the reference writes.
func FuzzHunks(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte("a\nB\nc\n"))
	f.Add([]byte("a\nb"), []byte("a\nb\nc\nd"))
	f.Add([]byte(""), []byte("x\r\n"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		if got, want := hunks(a, b), refHunks(a, b); got != want {
			t.Fatalf("%q -> %q:\n%s\nwant:\n%s", a, b, got, want)
		}
	})
}
