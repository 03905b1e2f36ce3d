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

func FuzzRewrite(f *testing.F) {
	rs := loadExample(f)
	in, err := os.ReadFile("../testdata/rewrite/links.txt")
	if err != nil {
		f.Fatal(err)
	}
	for _, line := range strings.Split(string(in), "\n") {
		if fs := strings.Split(line, "\t"); len(fs) == 4 {
			f.Add(fs[3], fs[0], fs[1], fs[2])
		}
	}
	f.Fuzz(func(t *testing.T, u, form, where, ctype string) {
		l := Link{URL: u, Form: form, Where: where, ContentType: ctype}
		res, err := rs.Rewrite(l)
		if u == "" {
			if err == nil {
				t.Fatal("no error for an empty URL")
			}
			return
		}
		if err != nil {
			t.Fatalf("Rewrite(%q): %v", u, err)
		}
		prev := u
		if !hasScheme(u) {
			prev = canon(u)
		}
		changed := false
		for _, c := range res.Changes {
			if c.Old != prev {
				t.Fatalf("Rewrite(%q): change %+v does not start from %q", u, c, prev)
			}
			prev = c.New
			changed = changed || c.New != c.Old || c.Form != ""
		}
		if !changed && (res.URL != u || res.Form != form) {
			t.Fatalf("Rewrite(%q) with no change gave %q %q", u, res.URL, res.Form)
		}
		if changed && res.URL != prev {
			t.Fatalf("Rewrite(%q) = %q, but the last change gave %q", u, res.URL, prev)
		}
		if clean(u) == u && !strings.ContainsAny(u, " ") && strings.ContainsFunc(res.URL, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			t.Fatalf("Rewrite(%q) = %q brought in white space or controls", u, res.URL)
		}
	})
}
