package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRulesCheck: a valid file exits 0 and prints nothing; an invalid
// one exits 2 with each error as FILE:LINE:COL: message, in file order;
// a file that cannot be read exits 1.
func TestRulesCheck(t *testing.T) {
	bin := linkscanBin(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.toml")
	text := "version = 1\n[[rule]]\naction = \"map\"\nfrom = \"http://a/\"\n\n[[rule]]\naction = \"mapp\"\n"
	if err := os.WriteFile(bad, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runBin(t, bin, nil, "rules", "check", rewriteRules)
	if r.code != exitOK || r.stdout != "" || r.stderr != "" {
		t.Errorf("valid: %+v", r)
	}
	r = runBin(t, bin, nil, "rules", "check", bad)
	want := bad + ":2:3: map needs a non-empty from and a to\n" + bad + ":7:10: unknown action \"mapp\""
	if r.code != exitUsage || !strings.HasPrefix(r.stderr, want) || strings.Count(r.stderr, "\n") != 2 {
		t.Errorf("invalid: exit %d, stderr %q; want 2 and %q", r.code, r.stderr, want)
	}
	if r := runBin(t, bin, nil, "rules", "check", filepath.Join(dir, "missing.toml")); r.code != exitFail {
		t.Errorf("missing: %+v", r)
	}
	for _, args := range [][]string{{"rules"}, {"rules", "check"}, {"rules", "test", rewriteRules}, {"rules", "lint", rewriteRules}} {
		if r := runBin(t, bin, nil, args...); r.code != exitUsage || !strings.Contains(r.stderr, "usage:") {
			t.Errorf("%v: %+v", args, r)
		}
	}
}

// testRulesFile is a rules file for TestRulesTest.
const testRulesFile = `version = 1

[[rule]]
name = "our archive"
action = "keep"
match.prefix = "https://archive.example.org/"

[[rule]]
name = "domain moved"
action = "map"
from-host = "*.old.example"
to-host = "*.new.example"

[[rule]]
action = "map"
from-host = "www.example.com"
to-host = "example.com"

[[rule]]
name = "strip tracking"
action = "strip-params"
match.scheme = ["http", "https"]

[[rule]]
name = "wrap bare URLs"
action = "wrap"
match.form = "bare"
`

// TestRulesTest: each URL with its result and the rules that applied, or
// why none did; "*.old.example" takes old.example itself along.
func TestRulesTest(t *testing.T) {
	bin := linkscanBin(t)
	rules := filepath.Join(t.TempDir(), "rules.toml")
	if err := os.WriteFile(rules, []byte(testRulesFile), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runBin(t, bin, nil, "rules", "test", rules,
		"http://www.example.com/x", "https://archive.example.org/a", "ftp://old.example/pub",
		"ftp://ftp.old.example/pub", "http://a.example/?utm_source=x&id=1", "http://b.example/plain",
		"mailto:someone@nowhere.example")
	want := `http://www.example.com/x
  result: http://example.com/x (written url-wrapper)
  applied: rule at line 14 (map): http://www.example.com/x -> http://example.com/x
  applied: "wrap bare URLs" (wrap): written url-wrapper
https://archive.example.org/a
  result: unchanged
  kept by "our archive": the rules after it are not tried
ftp://old.example/pub
  result: ftp://new.example/pub (written url-wrapper)
  applied: "domain moved" (map): ftp://old.example/pub -> ftp://new.example/pub
  applied: "wrap bare URLs" (wrap): written url-wrapper
ftp://ftp.old.example/pub
  result: ftp://ftp.new.example/pub (written url-wrapper)
  applied: "domain moved" (map): ftp://ftp.old.example/pub -> ftp://ftp.new.example/pub
  applied: "wrap bare URLs" (wrap): written url-wrapper
http://a.example/?utm_source=x&id=1
  result: http://a.example/?id=1 (written url-wrapper)
  applied: "strip tracking" (strip-params): http://a.example/?utm_source=x&id=1 -> http://a.example/?id=1
  applied: "wrap bare URLs" (wrap): written url-wrapper
http://b.example/plain
  result: http://b.example/plain (written url-wrapper)
  applied: "wrap bare URLs" (wrap): written url-wrapper
mailto:someone@nowhere.example
  result: mailto:someone@nowhere.example (written url-wrapper)
  applied: "wrap bare URLs" (wrap): written url-wrapper
`
	if r.code != exitOK || r.stdout != want {
		t.Errorf("exit %d, stderr %q\ngot:\n%s\nwant:\n%s", r.code, r.stderr, r.stdout, want)
	}
	// as the rules see a link in angle brackets: no wrap
	r = runBin(t, bin, nil, "rules", "test", "--form", "angle", rules, "http://b.example/plain", "mailto:someone@nowhere.example")
	want = `http://b.example/plain
  result: unchanged
  matched, changed nothing: "strip tracking"
mailto:someone@nowhere.example
  result: unchanged
  no rule matches it
`
	if r.code != exitOK || r.stdout != want {
		t.Errorf("--form angle: exit %d, stderr %q\ngot:\n%s\nwant:\n%s", r.code, r.stderr, r.stdout, want)
	}
	if !strings.Contains(helpText(t, "rules"), "*.example.org\" means example.org and its subdomains") {
		t.Error("help rules does not say what *.example.org means")
	}
}
