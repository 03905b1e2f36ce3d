package rewrite

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestGolden runs testdata/rewrite/links.txt through the example rules
// and compares the results, as JSON lines, with links.golden. It also
// checks that the rules are stable on their own output.
func TestGolden(t *testing.T) {
	rs := loadExample(t)
	in, err := os.ReadFile("../testdata/rewrite/links.txt")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	sc := bufio.NewScanner(bytes.NewReader(in))
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			t.Fatalf("bad line %q", line)
		}
		for i := range f {
			if f[i] == "-" {
				f[i] = ""
			}
		}
		l := Link{Form: f[0], Where: f[1], ContentType: f[2], URL: f[3]}
		if l.Form == "abbrev" {
			l.Canonical = canon("http://" + l.URL)
		}
		res, err := rs.Rewrite(l)
		if err != nil {
			t.Fatalf("Rewrite(%q): %v", l.URL, err)
		}
		if err := enc.Encode(struct {
			In  Link
			Out Result
		}{l, res}); err != nil {
			t.Fatal(err)
		}
		again, _ := rs.Rewrite(Link{URL: res.URL, Form: res.Form, Where: l.Where, ContentType: l.ContentType})
		if again.URL != res.URL || again.Form != res.Form {
			t.Errorf("Rewrite(%q) not stable: %q %q, then %q %q", l.URL, res.URL, res.Form, again.URL, again.Form)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no links read")
	}
	const golden = "../testdata/rewrite/links.golden"
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		gl, wl := strings.Split(out.String(), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < max(len(gl), len(wl)); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("links.golden line %d differs (run with -update if the change is meant)\ngot  %s\nwant %s", i+1, g, w)
			}
		}
	}
}
