package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExitStatusBinary: through the program, damage read past is success
// (0) for every command that reads mail, counted on standard error;
// --damage-exit 4 keeps 4 for those who want it; an input that cannot be
// read is 1 and a usage error 2.
func TestExitStatusBinary(t *testing.T) {
	bin := linkscanBin(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.eml")
	msg := "Message-ID: <b@x>\nContent-Type: multipart/mixed; boundary=b1\n\n--b1\n\nhttp://www.example.com/x\n"
	if err := os.WriteFile(bad, []byte(msg), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "audit.db")
	rules := []string{"--rules", rewriteRules}
	for _, args := range [][]string{
		{"scan"},
		{"index"},
		{"resolve"},
		append([]string{"rewrite"}, rules...),
		{"audit", "--offline", "--db", db},
	} {
		r := runBin(t, bin, nil, append(args, bad)...)
		if r.code != exitOK || !strings.Contains(r.stderr, "1 message damaged (1 problem)") {
			t.Errorf("%v: exit %d, stderr %q; want 0 and the count", args, r.code, r.stderr)
		}
		r = runBin(t, bin, nil, append(args, "--damage-exit", "4", bad)...)
		if r.code != exitDamage {
			t.Errorf("%v --damage-exit 4: exit %d, stderr %q", args, r.code, r.stderr)
		}
		r = runBin(t, bin, nil, append(args, bad, filepath.Join(dir, "missing"))...)
		if r.code != exitFail {
			t.Errorf("%v with a missing input: exit %d, stderr %q", args, r.code, r.stderr)
		}
		r = runBin(t, bin, nil, append(args, "--no-such-flag", bad)...)
		if r.code != exitUsage {
			t.Errorf("%v --no-such-flag: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	r := runBin(t, bin, strings.NewReader(msg), append([]string{"filter"}, rules...)...)
	if r.code != exitOK || !strings.Contains(r.stdout, "http://example.com/x") {
		t.Errorf("filter: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}
