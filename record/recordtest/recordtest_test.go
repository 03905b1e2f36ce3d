package recordtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkscan/linkscan/record"
)

// fakeT records what a check reports; Fatalf ends the check as
// testing.T's does (by a panic the helper run recovers).
type fakeT struct {
	testing.TB
	errs []string
}

type fatal struct{}

func (f *fakeT) Helper() {}
func (f *fakeT) Errorf(format string, args ...any) {
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.Errorf(format, args...)
	panic(fatal{})
}
func (f *fakeT) Fatal(args ...any) { f.Fatalf("%s", fmt.Sprint(args...)) }

// run returns what check reported.
func run(check func(t testing.TB)) (errs []string) {
	f := &fakeT{}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(fatal); !ok {
				panic(r)
			}
		}
		errs = f.errs
	}()
	check(f)
	return f.errs
}

var table = record.Table{
	{Name: "url", Doc: "own"},
	record.Shared.Path,
	{Name: "n", Doc: "a number"},
	{Name: "opt", Omitted: true, Doc: "optional"},
}

type good struct {
	URL  string `json:"url"`
	Path string `json:"path"`
	N    int    `json:"n"`
	Opt  string `json:"opt,omitempty"`
	memo int    // not exported: no field of the table
}

type renamed struct {
	URL  string `json:"url"`
	Path string `json:"file"`
	N    int    `json:"n"`
	Opt  string `json:"opt,omitempty"`
}

type notOmitted struct {
	URL  string `json:"url"`
	Path string `json:"path"`
	N    int    `json:"n"`
	Opt  string `json:"opt"`
}

// TestChecksFail: each check passes on what agrees with the table and
// fails on each kind of disagreement.
func TestChecksFail(t *testing.T) {
	doc := filepath.Join(t.TempDir(), "doc.md")
	os.WriteFile(doc, []byte("# x\n\n"+table.MarkdownTable()+"\ntext\n"), 0o644)
	stale := filepath.Join(t.TempDir(), "stale.md")
	os.WriteFile(stale, []byte("# x\n\n"+strings.Replace(table.MarkdownTable(), "a number", "a count", 1)+"\ntext\n"), 0o644)
	missing := filepath.Join(t.TempDir(), "none.md")
	two := filepath.Join(t.TempDir(), "two.md")
	os.WriteFile(two, []byte("# x\n\n"+record.Table{{Name: "x", Doc: "y"}}.MarkdownTable()+"\n## Second\n\n"+table.MarkdownTable()), 0o644)
	line := []byte(`{"url":"u","path":"p","n":3,"opt":"o"}`)
	tests := []struct {
		name  string
		check func(t testing.TB)
		fails bool
	}{
		{"struct", func(t testing.TB) { Struct(t, table, good{}) }, false},
		{"struct pointer", func(t testing.TB) { Struct(t, table, &good{}) }, false},
		{"struct renamed", func(t testing.TB) { Struct(t, table, renamed{}) }, true},
		{"struct omitempty", func(t testing.TB) { Struct(t, table, notOmitted{}) }, true},
		{"keys", func(t testing.TB) { JSONKeys(t, table, line) }, false},
		{"keys order", func(t testing.TB) { JSONKeys(t, table, []byte(`{"path":"p","url":"u","n":3,"opt":"o"}`)) }, true},
		{"keys missing", func(t testing.TB) { JSONKeys(t, table, []byte(`{"url":"u","path":"p","n":3}`)) }, true},
		{"keys not JSON", func(t testing.TB) { JSONKeys(t, table, []byte(`[1]`)) }, true},
		{"csv", func(t testing.TB) { CSV(t, table, table.CSVColumns(), []string{"u", "p", "3", "o"}, line) }, false},
		{"csv swapped", func(t testing.TB) { CSV(t, table, table.CSVColumns(), []string{"p", "u", "3", "o"}, line) }, true},
		{"csv header", func(t testing.TB) {
			CSV(t, table, []string{"url", "file", "n", "opt"}, []string{"u", "p", "3", "o"}, line)
		}, true},
		{"csv short", func(t testing.TB) { CSV(t, table, table.CSVColumns(), []string{"u", "p", "3"}, line) }, true},
		{"shared", func(t testing.TB) { Shared(t, table, "url") }, false},
		{"shared url not own", func(t testing.TB) { Shared(t, table) }, true},
		{"shared own not scan's", func(t testing.TB) { Shared(t, table, "url", "n") }, true},
		{"shared own with scan's doc", func(t testing.TB) {
			Shared(t, record.Table{{Name: "path", Doc: record.Shared.Path.Doc}}, "path")
		}, true},
		{"shared doc changed", func(t testing.TB) { Shared(t, record.Table{{Name: "path", Doc: "the file"}}) }, true},
		{"shared name not shared", func(t testing.TB) { Shared(t, record.Table{{Name: "raw_end", Doc: "x"}}) }, true},
		{"shared note on own field", func(t testing.TB) { Shared(t, record.Table{{Name: "n", Doc: "x", Note: "y"}}) }, true},
		{"shared no doc", func(t testing.TB) { Shared(t, record.Table{{Name: "n"}}) }, true},
		{"doc", func(t testing.TB) { DocTable(t, table, doc, false) }, false},
		{"doc stale", func(t testing.TB) { DocTable(t, table, stale, false) }, true},
		{"doc missing", func(t testing.TB) { DocTable(t, table, missing, false) }, true},
		{"doc after", func(t testing.TB) { DocTableAfter(t, table, two, "## Second", false) }, false},
		{"doc after, first", func(t testing.TB) { DocTableAfter(t, record.Table{{Name: "x", Doc: "y"}}, two, "## Second", false) }, true},
		{"doc after, no such text", func(t testing.TB) { DocTableAfter(t, table, two, "## Third", false) }, true},
		{"help", func(t testing.TB) {
			Help(t, table, "Intro.\n\nRecords carry: url, path,\nn, opt.\n", "Records carry: ")
		}, false},
		{"help stale", func(t testing.TB) { Help(t, table, "Records carry: url, path, n.\n", "Records carry: ") }, true},
	}
	for _, tt := range tests {
		errs := run(tt.check)
		if (len(errs) > 0) != tt.fails {
			t.Errorf("%s: reported %q, want failure %v", tt.name, errs, tt.fails)
		}
	}
	// -fixdocs writes the table in place of the stale one, leaving the rest
	if errs := run(func(t testing.TB) { DocTable(t, table, stale, true) }); len(errs) > 0 {
		t.Fatal(errs)
	}
	if a, b := readAll(t, stale), readAll(t, doc); a != b {
		t.Errorf("fixed:\n%s\nwant:\n%s", a, b)
	}
}

func readAll(t *testing.T, name string) string {
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
