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
// lines indented as code), as a user of the clone would, but the test
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
	env := append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+tmp, "GOBIN="+filepath.Join(tmp, "gobin"), "MANPAGER=cat", "PAGER=cat", "MANWIDTH=80")
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
