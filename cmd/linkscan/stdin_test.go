package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// stdinMail is two messages whose links repeat, in an order no sort
// gives.
const stdinMail = `From a@b Sat Jan  1 00:00:00 2000
Message-ID: <1@x>

See http://zz.example/b and http://aa.example/a
then http://zz.example/b again.

From a@b Sat Jan  1 00:00:00 2000
Message-ID: <2@x>

http://mm.example/c and http://aa.example/a
`

// TestStdinWithoutPath: with no PATH, standard input is read when it is
// not a terminal (cat msg | linkscan scan), by every command that reads
// archives; on a terminal nothing is read and the usage error says how
// to name an input.
func TestStdinWithoutPath(t *testing.T) {
	bin := linkscanBin(t)
	db := filepath.Join(t.TempDir(), "audit.db")
	for _, tt := range []struct {
		args []string
		want string // on standard output
	}{
		{[]string{"scan", "--format", "urls"}, "http://zz.example/b\n"},
		{[]string{"resolve", "--format", "jsonl"}, ""},
		{[]string{"index", "--format", "json"}, `"messages": 2`},
		{[]string{"rewrite", "--rules", rewriteRules}, "Message-ID: <2@x>"},
		{[]string{"audit", "--offline", "--db", db, "--format", "jsonl"}, "http://mm.example/c"},
	} {
		r := runBin(t, bin, strings.NewReader(stdinMail), tt.args...)
		if r.code != exitOK || !strings.Contains(r.stdout, tt.want) {
			t.Errorf("%v from a pipe: exit %d, stdout %q, stderr %q", tt.args, r.code, r.stdout, r.stderr)
		}
		code, screen, res := runOnTTY(t, bin, ttyRun{stdin: true}, tt.args...)
		if code != exitUsage || !strings.Contains(res.stderr, "no PATH") && !strings.Contains(res.stderr, "usage:") || screen != "" {
			t.Errorf("%v on a terminal: exit %d, stderr %q, terminal %q; want 2 and a usage error", tt.args, code, res.stderr, screen)
		}
	}
}

// TestFormatURLs: --format urls prints each link as written, one a line,
// in input order; --unique (and --unique=first) each canonical link
// once, at its first place.
func TestFormatURLs(t *testing.T) {
	bin := linkscanBin(t)
	all := "http://zz.example/b\nhttp://aa.example/a\nhttp://zz.example/b\nhttp://mm.example/c\nhttp://aa.example/a\n"
	once := "http://zz.example/b\nhttp://aa.example/a\nhttp://mm.example/c\n"
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"scan", "--format", "urls"}, all},
		{[]string{"scan", "--format", "urls", "--jobs", "3", "-"}, all},
		{[]string{"scan", "--format", "urls", "--unique"}, once},
		{[]string{"scan", "--format", "urls", "--unique=first"}, once},
		{[]string{"scan", "--as", "text", "--format", "urls"}, all},
	} {
		r := runBin(t, bin, strings.NewReader(stdinMail), tt.args...)
		if r.code != exitOK || r.stdout != tt.want {
			t.Errorf("%v: exit %d, stderr %q\ngot  %q\nwant %q", tt.args, r.code, r.stderr, r.stdout, tt.want)
		}
	}
	if !strings.Contains(helpText(t, "scan"), "urls is one link a line") {
		t.Error("help scan does not describe --format urls")
	}
}
