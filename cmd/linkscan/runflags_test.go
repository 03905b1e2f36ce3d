package main

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"
)

// TestRunFlags: the flags that scan and rewrite share are checked alike,
// with exit 2 and a message naming the flag.
func TestRunFlags(t *testing.T) {
	rules := writeTestFile(t, t.TempDir()+"/r.toml", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"scan", "--jobs", "-1", "x.mbox"}, "--jobs and --warn-limit must not be negative"},
		{[]string{"scan", "--warn-limit", "-2", "x.mbox"}, "--jobs and --warn-limit must not be negative"},
		{[]string{"scan", "--damage-exit", "126", "x.mbox"}, "--damage-exit must be between 0 and 125"},
		{[]string{"scan", "--progress", "sometimes", "x.mbox"}, "--progress must be auto, always or never"},
		{[]string{"rewrite", "--rules", rules, "--jobs", "-1", "--dry-run", "x.mbox"}, "--jobs and --warn-limit must not be negative"},
		{[]string{"rewrite", "--rules", rules, "--damage-exit", "-1", "--dry-run", "x.mbox"}, "--damage-exit must be between 0 and 125"},
		{[]string{"rewrite", "--rules", rules, "--progress", "often", "--dry-run", "x.mbox"}, "--progress must be auto, always or never"},
	} {
		code, _, errs := runCmd("", tc.args...)
		if code != exitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errs, exitUsage, tc.want)
		}
	}
}

// TestSizeSuffixes: every suffix of parseSize's table is read in upper,
// lower and mixed case, with a whole number and a fraction, and the
// error of a bad size and the help's paragraph (sizeHelp) name each of
// them, as docs/scan.md and docs/filter.md do; the longest suffix wins (KB is not K and
// B). Shown to fail with "TiB" left out of the help's text.
func TestSizeSuffixes(t *testing.T) {
	_, bad := parseSize("12q")
	for _, sf := range sizeSuffixes {
		for _, suf := range []string{sf.suffix, strings.ToLower(sf.suffix), strings.ToUpper(sf.suffix), mixedCase(sf.suffix)} {
			if n, err := parseSize("3" + suf); err != nil || n != 3*sf.mult {
				t.Errorf("parseSize(%q) = %d, %v; want %d", "3"+suf, n, err, 3*sf.mult)
			}
			if n, err := parseSize("1.5 " + suf); err != nil || n != sf.mult*3/2 {
				t.Errorf("parseSize(%q) = %d, %v; want %d", "1.5 "+suf, n, err, sf.mult*3/2)
			}
		}
		if !namesFlag(sizeHelp, sf.suffix) {
			t.Errorf("sizeHelp does not name %s:\n%s", sf.suffix, sizeHelp)
		}
		if bad == nil || !namesFlag(bad.Error(), sf.suffix) {
			t.Errorf("the error of a bad size does not name %s: %v", sf.suffix, bad)
		}
	}
	doc, err := os.ReadFile("../../docs/scan.md")
	if err != nil {
		t.Fatal(err)
	}
	_, para, _ := strings.Cut(string(doc), "\nSIZE is a number of bytes")
	para, _, _ = strings.Cut(para, "\n\n")
	for _, sf := range sizeSuffixes {
		if !strings.Contains(para, "`"+sf.suffix+"`") {
			t.Errorf("docs/scan.md's paragraph on SIZE does not name `%s`:\n%s", sf.suffix, para)
		}
	}
	doc, err = os.ReadFile("../../docs/filter.md")
	if err != nil {
		t.Fatal(err)
	}
	_, row, _ := strings.Cut(string(doc), "| `--max-size SIZE` |")
	row, _, _ = strings.Cut(row, "\n")
	for _, sf := range sizeSuffixes {
		if !strings.Contains(row, "`"+sf.suffix+"`") {
			t.Errorf("docs/filter.md's --max-size row does not name `%s`:\n%s", sf.suffix, row)
		}
	}
	for _, w := range []struct {
		in   string
		want int64
	}{{"2kb", 2000}, {"2k", 2048}, {"2kib", 2048}, {"7b", 7}, {"7", 7}, {"1tb", 1e12}, {"1.5G", 3 << 29}} {
		if n, err := parseSize(w.in); err != nil || n != w.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", w.in, n, err, w.want)
		}
	}
}

// mixedCase returns s with the case of every other letter changed.
func mixedCase(s string) string {
	b := []byte(s)
	for i := 0; i < len(b); i += 2 {
		if c := b[i]; 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		} else if 'A' <= c && c <= 'Z' {
			b[i] = c - 'A' + 'a'
		}
	}
	return string(b)
}

// TestSizeHelp: the help of each command with a SIZE flag (a sizeFlag
// in its flag set) holds the paragraph made from parseSize's table, and
// no help holds another sentence on SIZE. Shown to fail with {{sizes}}
// dropped from filter's help.
func TestSizeHelp(t *testing.T) {
	want := strings.Join(strings.Fields(sizeHelp), " ")
	for _, c := range commands {
		if c == cmdHelp || c == cmdURI {
			continue
		}
		var sized []string
		var out, errb bytes.Buffer
		cw := &checkedWriter{w: &out}
		e := &env{stdin: strings.NewReader(""), stdout: cw, stderr: &errb, out: cw}
		e.onFlags = func(fs *flag.FlagSet) {
			fs.VisitAll(func(f *flag.Flag) {
				if _, ok := f.Value.(*sizeFlag); ok {
					sized = append(sized, f.Name)
				}
			})
		}
		if code := dispatch(e, []string{c.Name, "--help"}); code != exitOK {
			t.Fatalf("%s --help: exit %d", c.Name, code)
		}
		help := strings.Join(strings.Fields(out.String()), " ")
		if strings.Contains(help, "{{sizes}}") {
			t.Errorf("%s: {{sizes}} not expanded", c.Name)
		}
		has := strings.Contains(help, want)
		if len(sized) > 0 && !has {
			t.Errorf("%s has SIZE flags %v, and its help lacks:\n%s", c.Name, sized, sizeHelp)
		}
		if strings.Count(help, "SIZE is") != strings.Count(help, "SIZE is a number of bytes with an optional suffix: "+sizeSuffixText) {
			t.Errorf("%s: its help says what SIZE is other than as sizeHelp does", c.Name)
		}
	}
}
