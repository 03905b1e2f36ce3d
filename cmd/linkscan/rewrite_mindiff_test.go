package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDryRunDiffMinimal: when the rewrite changes the number of lines
// (a long bare link wrapped in <URL:...> over two lines, near the top and
// near the end of a long message), --dry-run shows two small hunks, no
// larger than diff -U2 of the real result by half, not one hunk of the
// whole text between.
func TestDryRunDiffMinimal(t *testing.T) {
	diffProg := needProgram(t, "diff")
	bin := linkscanBin(t)
	dir := t.TempDir()
	long := "http://www.example.com/" + strings.Repeat("a-long-path/", 8)
	var b strings.Builder
	b.WriteString("From: a@b\nMessage-ID: <m@x>\nSubject: s\n\n")
	for i := range 300 {
		switch i {
		case 5, 290:
			fmt.Fprintf(&b, "%s\n", long+fmt.Sprint(i))
		default:
			fmt.Fprintf(&b, "line %d of the text\n", i)
		}
	}
	in := filepath.Join(dir, "m.eml")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	res := runBin(t, bin, nil, "rewrite", "--rules", rewriteRules, in)
	if res.code != exitOK || strings.Count(res.stdout, "\n") <= strings.Count(b.String(), "\n") {
		t.Fatalf("rewrite: exit %d, %d lines (want more than the input's): %s", res.code, strings.Count(res.stdout, "\n"), res.stderr)
	}
	out := filepath.Join(dir, "m.out")
	if err := os.WriteFile(out, []byte(res.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	ref, _ := exec.Command(diffProg, "-U2", in, out).Output()
	dry := runBin(t, bin, nil, "rewrite", "--rules", rewriteRules, "--dry-run", in)
	body := func(d string) (hunks, lines int) {
		for _, l := range strings.Split(d, "\n") {
			switch {
			case strings.HasPrefix(l, "@@"):
				hunks++
			case strings.HasPrefix(l, "---"), strings.HasPrefix(l, "+++"), l == "":
			default:
				lines++
			}
		}
		return
	}
	rh, rl := body(string(ref))
	dh, dl := body(dry.stdout)
	if dry.code != exitOK || dh != rh || float64(dl) > 1.5*float64(rl) {
		t.Errorf("--dry-run: exit %d, %d hunks of %d lines; diff -U2: %d hunks of %d lines\n%s", dry.code, dh, dl, rh, rl, dry.stdout)
	}
}
