package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCompletionBash: the bash script, sourced by bash, completes
// commands, flags, the words of flags that take a few, and verbs.
func TestCompletionBash(t *testing.T) {
	bash := needProgram(t, "bash")
	bin := linkscanBin(t)
	r := runBin(t, bin, nil, "completion", "bash")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	script := filepath.Join(t.TempDir(), "linkscan.bash")
	if err := os.WriteFile(script, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		words []string
		want  string
	}{
		{[]string{"linkscan", "sc"}, "scan"},
		{[]string{"linkscan", "r"}, "resolve rewrite rules"},
		{[]string{"linkscan", "scan", "--for"}, "--format"},
		{[]string{"linkscan", "scan", "--format", ""}, "text jsonl csv urls summary summary-json"},
		{[]string{"linkscan", "audit", "--fail-on", ""}, "failing dead"},
		{[]string{"linkscan", "audit", "--format", "m"}, "markdown"},
		{[]string{"linkscan", "rewrite", "--dry"}, "--dry-run"},
		{[]string{"linkscan", "rules", ""}, "check test"},
		{[]string{"linkscan", "completion", ""}, "bash zsh fish"},
		{[]string{"linkscan", "filter", "--max-l"}, "--max-links"},
	} {
		var q []string
		for _, w := range tt.words {
			q = append(q, "'"+w+"'")
		}
		code := "source " + script + "; COMP_WORDS=(" + strings.Join(q, " ") + "); COMP_CWORD=" +
			strconv.Itoa(len(tt.words)-1) + `; _linkscan; echo "${COMPREPLY[*]}"`
		out, err := exec.Command(bash, "--norc", "--noprofile", "-c", code).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != tt.want {
			t.Errorf("%q: %q, %v; want %q", tt.words, out, err, tt.want)
		}
	}
}

// TestCompletionZshFish: the zsh and fish scripts parse in their shells
// (zsh -n, fish -n) and name every command.
func TestCompletionZshFish(t *testing.T) {
	bin := linkscanBin(t)
	for _, sh := range []string{"zsh", "fish"} {
		r := runBin(t, bin, nil, "completion", sh)
		if r.code != exitOK {
			t.Fatalf("%s: exit %d: %s", sh, r.code, r.stderr)
		}
		for _, c := range commands {
			if !strings.Contains(r.stdout, c.Name) {
				t.Errorf("%s: no %s", sh, c.Name)
			}
		}
		if !strings.Contains(r.stdout, "--fail-on") && !strings.Contains(r.stdout, "-l fail-on") {
			t.Errorf("%s: no --fail-on", sh)
		}
	}
	for _, sh := range []string{"zsh", "fish"} {
		path := needProgram(t, sh)
		r := runBin(t, bin, nil, "completion", sh)
		script := filepath.Join(t.TempDir(), "linkscan."+sh)
		if err := os.WriteFile(script, []byte(r.stdout), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(path, "-n", script).CombinedOutput(); err != nil {
			t.Errorf("%s -n: %v\n%s", sh, err, out)
		}
	}
	if r := runBin(t, bin, nil, "completion", "tcsh"); r.code != exitUsage {
		t.Errorf("tcsh: exit %d", r.code)
	}
}

// TestManPage: the page renders without a warning (groff -ww) and holds
// every command with its help and flags; man -l reads it.
func TestManPage(t *testing.T) {
	groff := needProgram(t, "groff")
	bin := linkscanBin(t)
	r := runBin(t, bin, nil, "man")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	page := filepath.Join(t.TempDir(), "linkscan.1")
	if err := os.WriteFile(page, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(groff, "-man", "-Tutf8", "-ww", page)
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil || errb.Len() > 0 {
		t.Fatalf("groff: %v\n%s", err, errb.String())
	}
	text := stripOverstrike(string(out))
	for _, c := range commands {
		if !strings.Contains(text, "linkscan "+c.Name) {
			t.Errorf("the page lacks linkscan %s", c.Name)
		}
	}
	for _, want := range []string{"--damage-exit", "--fail-on", "--format", "EXIT STATUS"} {
		if !strings.Contains(text, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// every flag of every command's flag set is on the page
	for _, sp := range commandSpecs() {
		for _, f := range sp.flags {
			if !strings.Contains(text, dash(f.name)) {
				t.Errorf("%s: the page lacks %s", sp.c.Name, dash(f.name))
			}
		}
	}
	man := needProgram(t, "man")
	mcmd := exec.Command(man, "-l", page)
	mcmd.Env = append(os.Environ(), "MANPAGER=cat", "PAGER=cat", "MANWIDTH=80")
	if out, err := mcmd.Output(); err != nil || !strings.Contains(stripOverstrike(string(out)), "linkscan audit") {
		t.Errorf("man -l: %v\n%.300s", err, out)
	}
}

// stripOverstrike takes the bold and underline of grotty's output off
// (c\bc, _\bc) and its SGR sequences.
func stripOverstrike(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		if i+2 < len(rs) && rs[i+1] == '\b' {
			continue
		}
		if rs[i] == '\b' {
			continue
		}
		if rs[i] == 0x1b {
			for i < len(rs) && rs[i] != 'm' {
				i++
			}
			continue
		}
		b.WriteRune(rs[i])
	}
	return b.String()
}
