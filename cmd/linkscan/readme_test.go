package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeComment is a comment after a command in README.md.
var readmeComment = regexp.MustCompile(`\s{2,}# .*$`)

// TestReadmeExamples runs every command of README.md's examples (the
// lines indented as code; configuration for other programs, such as the
// muttrc line, stands in fenced blocks), as a user of the clone would, but the test
// suite itself (go test ./...). go run ./cmd/linkscan is the program
// under test; a command that writes a file in the current directory
// runs in a temporary one, go build -o writes there too, and go install
// puts the binary in a temporary GOBIN. The scripts run only without
// -short: they generate and scan mboxes.
func TestReadmeExamples(t *testing.T) {
	bin := linkscanBin(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	for sc := bufio.NewScanner(f); sc.Scan(); {
		if l, ok := strings.CutPrefix(sc.Text(), "    "); ok && strings.TrimSpace(l) != "" {
			lines = append(lines, readmeComment.ReplaceAllString(l, ""))
		}
	}
	if len(lines) < 10 {
		t.Fatalf("only %d example lines in README.md", len(lines))
	}
	tmp := t.TempDir()
	// HOME is a new directory, so the Go caches are named as they are:
	// go build and go install then reuse the build and module caches of
	// this run rather than download and build everything again.
	env := append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+tmp, "GOBIN="+filepath.Join(tmp, "gobin"), "MANPAGER=cat", "PAGER=cat", "MANWIDTH=80",
		"GOCACHE="+goEnv(t, "GOCACHE"), "GOMODCACHE="+goEnv(t, "GOMODCACHE"), "GOPATH="+goEnv(t, "GOPATH"))
	ran := 0
	for _, l := range lines {
		cmdline := strings.ReplaceAll(l, "go run ./cmd/linkscan", "linkscan")
		dir := root
		switch {
		case strings.HasPrefix(l, "go test"):
			continue // the suite this test is part of
		case strings.HasPrefix(l, "scripts/") && testing.Short():
			t.Logf("not run with -short: %s", l)
			continue
		case strings.HasPrefix(l, "scripts/compare.sh") && !hasRevision(root, "HEAD~3"):
			t.Logf("not run in a clone without HEAD~3 (shallow): %s", l)
			continue
		case strings.Contains(l, "go build -o linkscan"):
			cmdline = strings.Replace(cmdline, "-o linkscan", "-o "+filepath.Join(tmp, "linkscan"), 1)
		case !strings.Contains(l, "testdata/") && !strings.Contains(l, "./cmd/") && !strings.HasPrefix(l, "scripts/"):
			dir = tmp // it writes in the current directory
		}
		cmd := exec.Command("bash", "-c", "set -o pipefail; "+cmdline)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s: %v\n%s", l, err, out)
			continue
		}
		ran++
		switch {
		case strings.Contains(l, "go install"):
			if _, err := os.Stat(filepath.Join(tmp, "gobin", "linkscan")); err != nil {
				t.Errorf("%s: %v", l, err)
			}
		case strings.Contains(l, "go build"):
			if _, err := os.Stat(filepath.Join(tmp, "linkscan")); err != nil {
				t.Errorf("%s: %v", l, err)
			}
		case strings.HasPrefix(l, "source "):
			// defines the completion function, prints nothing
		case len(out) == 0:
			t.Errorf("%s: no output", l)
		}
	}
	t.Logf("%d README commands run", ran)
}

// goEnv is the value of the go command's variable name.
func goEnv(t *testing.T, name string) string {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

// hasRevision reports whether the repository at root holds rev.
func hasRevision(root, rev string) bool {
	cmd := exec.Command("git", "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	cmd.Dir = root
	return cmd.Run() == nil
}
