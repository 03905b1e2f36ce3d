package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRewriteMHBackups: rewrite --in-place --backup .orig on an MH folder
// leaves 1.orig beside 1; the next scan reads 1 alone (not the backup's
// links and Message-ID a second time), and the next rewrite rewrites 1
// alone: the backup is never rewritten, no 1.orig.orig is made.
func TestRewriteMHBackups(t *testing.T) {
	dir := t.TempDir()
	mh := filepath.Join(dir, "inbox")
	os.Mkdir(mh, 0o755)
	writeTestFile(t, filepath.Join(mh, "1"), "Message-ID: <a@x>\nSubject: a\n\nsee http://old.example/a\n")
	writeTestFile(t, filepath.Join(mh, "2"), "Message-ID: <b@x>\nSubject: b\n\nsee http://old.example/b\n")
	rules := writeTestFile(t, filepath.Join(dir, "rules.toml"), "version = 1\n\n[[rule]]\naction = \"map\"\nfrom = \"http://old.example/\"\nto = \"https://new.example/\"\n")
	code, _, errs := runCmd("", "rewrite", "--rules", rules, "--in-place", "--backup", ".orig", mh)
	if code != 0 {
		t.Fatalf("rewrite: exit %d: %s", code, errs)
	}
	code, out, errs := runCmd("", "scan", "--format", "jsonl", mh)
	if code != 0 || strings.Count(out, "\n") != 2 || strings.Contains(out, "old.example") {
		t.Errorf("scan after the rewrite: exit %d, stderr %q, records:\n%s", code, errs, out)
	}
	code, out, errs = runCmd("", "index", "--index", filepath.Join(dir, "refs.db"), "--format", "json", mh)
	if code != 0 || !strings.Contains(out, `"messages": 2,`) {
		t.Errorf("index after the rewrite: exit %d, stderr %q, %s", code, errs, out)
	}
	rules2 := writeTestFile(t, filepath.Join(dir, "rules2.toml"), "version = 1\n\n[[rule]]\naction = \"map\"\nfrom = \"https://new.example/\"\nto = \"https://newer.example/\"\n")
	code, _, errs = runCmd("", "rewrite", "--rules", rules2, "--in-place", "--backup", ".bak", mh)
	if code != 0 {
		t.Fatalf("second rewrite: exit %d: %s", code, errs)
	}
	ents, _ := os.ReadDir(mh)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "1 1.bak 1.orig 2 2.bak 2.orig" {
		t.Errorf("files after two rewrites: %q", names)
	}
	if b, _ := os.ReadFile(filepath.Join(mh, "1.orig")); !strings.Contains(string(b), "http://old.example/a") {
		t.Errorf("the backup was rewritten:\n%s", b)
	}
}

// TestRewriteAsNotEmlx: a file whose first line is digits is an Apple
// Mail .emlx to detection, which rewrite refuses to write; given --as
// mbox or --as message it is what --as says, as scan reads it, and is
// rewritten (the fuzzer found --as mbox refused with exit 2).
func TestRewriteAsNotEmlx(t *testing.T) {
	dir := t.TempDir()
	rules := writeTestFile(t, filepath.Join(dir, "rules.toml"), "version = 1\n\n[[rule]]\naction = \"map\"\nfrom = \"http://old.example/\"\nto = \"https://new.example/\"\n")
	in := writeTestFile(t, filepath.Join(dir, "in"), "40\nFrom: a@example.org\n\nhttp://old.example/a\n")
	if code, _, errs := runCmd("", "rewrite", "--rules", rules, "-o", filepath.Join(dir, "out"), in); code != exitUsage || !strings.Contains(errs, ".emlx") {
		t.Errorf("auto: exit %d, %q; want 2 (an .emlx is not rewritten)", code, errs)
	}
	for _, as := range []string{"mbox", "message"} {
		out := filepath.Join(dir, "out-"+as)
		code, _, errs := runCmd("", "rewrite", "--rules", rules, "--as", as, "-o", out, in)
		b, _ := os.ReadFile(out)
		if code != exitOK || string(b) != "40\nFrom: a@example.org\n\nhttps://new.example/a\n" {
			t.Errorf("--as %s: exit %d, %q, output %q", as, code, errs, b)
		}
		_, scanned, _ := runCmd("", "scan", "--as", as, "--format", "jsonl", in)
		if !strings.Contains(scanned, "http://old.example/a") {
			t.Errorf("scan --as %s does not read the link: %q", as, scanned)
		}
	}
}
