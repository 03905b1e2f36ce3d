package rewrite

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestExplain: the rules that matched a link, applied or not, in order.
func TestExplain(t *testing.T) {
	rs, err := Parse(strings.NewReader(`version = 1
[[rule]]
name = "moved"
action = "map"
from-host = "*.old.example"
to-host = "*.new.example"

[[rule]]
name = "strip"
action = "strip-params"
`), "r.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		url, want string
		matched   []string
	}{
		{"http://old.example/x", "http://new.example/x", []string{"moved", "strip"}},
		{"http://a.b.old.example/x", "http://a.b.new.example/x", []string{"moved", "strip"}},
		{"http://xold.example/x", "http://xold.example/x", []string{"strip"}},
	} {
		ex, err := rs.Explain(Link{URL: tt.url})
		if err != nil || ex.URL != tt.want || !slices.Equal(ex.Matched, tt.matched) {
			t.Errorf("Explain(%q) = %q %q, %v; want %q %q", tt.url, ex.URL, ex.Matched, err, tt.want, tt.matched)
		}
		res, _ := rs.Rewrite(Link{URL: tt.url})
		if res.URL != ex.URL || len(res.Changes) != len(ex.Changes) {
			t.Errorf("Explain(%q) and Rewrite differ: %+v, %+v", tt.url, ex.Result, res)
		}
	}
}

// TestErrors: the *Error values of Parse, one or joined; none for an
// error that is not the file's.
func TestErrors(t *testing.T) {
	_, err := Parse(strings.NewReader("version = 1\n[[rule]]\naction = \"x\"\n[[rule]]\naction = \"y\"\n"), "r.toml")
	errs := Errors(err)
	if len(errs) != 2 || errs[0].Position() != `r.toml:3:10: unknown action "x" (map, replace, unwrap, strip-params, canonicalize, wrap, mid-to-web, drop-wrapper, keep, archive)` {
		t.Errorf("Errors = %v", errs)
	}
	_, err = Parse(strings.NewReader("version = "), "r.toml")
	if errs := Errors(err); len(errs) != 1 || !strings.HasPrefix(errs[0].Position(), "r.toml:1:") {
		t.Errorf("syntax error: %v", errs)
	}
	if errs := Errors(errors.New("rewrite: open x: no such file")); errs != nil {
		t.Errorf("other error: %v", errs)
	}
}
