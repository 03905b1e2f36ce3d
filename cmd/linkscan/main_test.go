package main

import (
	"bytes"
	"strings"
	"testing"
)

// runCmd runs the command line args with stdin and returns the exit code
// and both outputs.
func runCmd(stdin string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestURICommands(t *testing.T) {
	tests := []struct {
		stdin      string
		args       []string
		code       int
		out, inErr string
	}{
		{args: []string{"uri", "canon", "HTTP://Info.CERN.ch:80/a/./b"}, out: "http://info.cern.ch/a/b\n"},
		{stdin: "http://X.org\n\nmailto:A@B.ORG\n", args: []string{"uri", "canon"}, out: "http://x.org/\n\nmailto:A@b.org\n"},
		{args: []string{"uri", "canon", "news:12345667123%asdghfh@info.cern.ch", "http://ok.org/"}, code: 1,
			out: "news:12345667123%25asdghfh@info.cern.ch\nhttp://ok.org/\n", inErr: `:17: "%" not followed`},
		{args: []string{"uri", "canon", "not a url"}, code: 1, inErr: "missing scheme"},
		{args: []string{"uri", "equal", "http://info.cern.ch/albert/bertram/marie-claude", "http://info.cern.ch/albert/bertram/marie%2Dclaude"}},
		{args: []string{"uri", "equal", "http://info.cern.ch/albert/bertram/marie-claude", "http://info.cern.ch/albert/bertram%2Fmarie-claude"}, code: 1},
		{args: []string{"uri", "equal", "fxqn:/us/va/reston/cnri/ietf/24/asdf%*.fred", "http://x/"}, code: 2, inErr: "hexadecimal"},
		{args: []string{"uri", "equal", "a:b"}, code: 2},
		{args: []string{"uri", "resolve", "http://a/b/c/d;p?q", "../g", "//g"}, out: "http://a/b/g\nhttp://g\n"},
		{args: []string{"uri", "resolve", "--rfc1630", "magic://a/b/c//d/e/f", "/g", "//g"}, out: "magic://a/g\nmagic://g\n"},
		{args: []string{"uri", "resolve", "magic://a/b/c//d/e/f", "/g", "--rfc1630"}, out: "magic://a/g\n"},
		{args: []string{"uri", "parse", "--json", "mid:a@b/c@d"},
			out: `{"url":"mid:a@b/c@d","scheme":"mid","host":"","port":"","path":"","query":"","fragment":"","opaque":"a@b/c@d","view":{"message_id":"a@b","content_id":"c@d"},"valid":true,"problems":[],"canonical":"mid:a@b/c@d"}` + "\n"},
		{args: []string{"uri", "parse", "http://a/ b"}, code: 1, out: "problem:   column 10: character not allowed"},
		{args: []string{"uri", "frob"}, code: 2, inErr: "unknown verb"},
		{args: []string{"uri", "resolve", "--nope"}, code: 2},
		{args: []string{"nosuch"}, code: 2, inErr: "unknown command"},
		{args: []string{"help", "uri"}, out: "linkscan uri resolve [--rfc1630] BASE REF..."},
		{args: []string{}, code: 2, inErr: "Usage:"},
	}
	for _, tt := range tests {
		code, out, errs := runCmd(tt.stdin, tt.args...)
		if code != tt.code || !strings.Contains(out, tt.out) || (tt.out == "" && out != "") && tt.code == 0 || !strings.Contains(errs, tt.inErr) {
			t.Errorf("linkscan %q: code %d, stdout %q, stderr %q\nwant code %d, stdout with %q, stderr with %q",
				tt.args, code, out, errs, tt.code, tt.out, tt.inErr)
		}
	}
}
