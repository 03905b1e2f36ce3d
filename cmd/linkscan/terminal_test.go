package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// damagedLinks writes an mbox of n messages, each with one long link and
// a header line without a colon (a warning each), and returns its path
// and the links in order.
func damagedLinks(t *testing.T, n int) (string, []string) {
	t.Helper()
	var b strings.Builder
	var urls []string
	for i := range n {
		u := fmt.Sprintf("http://example.org/%d/%s", i, strings.Repeat("long-path-", 12))
		urls = append(urls, u)
		fmt.Fprintf(&b, "From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <m%d@x>\nno colon here\n\nSee %s\n\n", i, u)
	}
	p := filepath.Join(t.TempDir(), "damaged.mbox")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p, urls
}

// checkRows checks what a terminal showed: each row's text (what is
// after its last carriage return) that holds a link is the next result
// line, whole; no row shows part of a result drawn over by something
// else. It reports whether a progress bar was drawn.
func checkRows(t *testing.T, name, screen string, urls []string) (bar bool) {
	t.Helper()
	next := 0
	for _, row := range strings.Split(screen, "\r\n") {
		segs := strings.Split(row, "\r")
		for _, s := range segs[:len(segs)-1] {
			if strings.Contains(s, "http") {
				t.Errorf("%s: a result broken on the terminal: row %q", name, row)
			}
			if strings.TrimSpace(s) != "" {
				bar = true
			}
		}
		last := segs[len(segs)-1]
		if !strings.Contains(last, "http") {
			continue
		}
		if next >= len(urls) || last != urls[next] {
			t.Fatalf("%s: row %q, want result %d whole", name, last, next)
		}
		next++
	}
	if next != len(urls) {
		t.Errorf("%s: %d results shown, want %d", name, next, len(urls))
	}
	return bar
}

// TestProgressOnTerminal: the bar is drawn when standard error is a
// terminal that results are not shown on; with results on the same
// terminal there is none (auto), or with --progress always it is taken
// off before each result line; warnings never split a result line.
func TestProgressOnTerminal(t *testing.T) {
	bin := linkscanBin(t)
	// enough messages that the bar, drawn at most every 100 ms, is drawn
	in, urls := damagedLinks(t, 4000)
	args := []string{"scan", "--format", "urls", "--warn-limit", "0", "--jobs", "2", in}

	_, screen, _ := runOnTTY(t, bin, ttyRun{stdout: true, stderr: true}, args...)
	if checkRows(t, "auto, one terminal", screen, urls) {
		t.Error("auto, one terminal: a progress bar was drawn")
	}
	if n := strings.Count(screen, "no colon here") + strings.Count(screen, "without a colon"); n < len(urls) {
		t.Errorf("auto, one terminal: %d warnings shown, want %d", n, len(urls))
	}

	_, screen, _ = runOnTTY(t, bin, ttyRun{stdout: true, stderr: true}, append([]string{"scan", "--progress", "always"}, args[1:]...)...)
	if !checkRows(t, "always, one terminal", screen, urls) {
		t.Log("always, one terminal: the run was too quick for the bar")
	}

	code, screen, res := runOnTTY(t, bin, ttyRun{stderr: true}, args...)
	if code != exitOK || res.stdout != strings.Join(urls, "\n")+"\n" || !strings.Contains(screen, "without a colon") {
		t.Errorf("results to a pipe: exit %d, %d bytes, terminal %.200q", code, len(res.stdout), screen)
	}
	if !strings.Contains(strings.ReplaceAll(screen, "\r\n", ""), "\r") {
		t.Log("results to a pipe: the run was too quick for the bar")
	}

	// the output piped to a file with standard error (2>&1): each line is
	// a result or a warning, whole
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	var both strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		both.WriteString(string(buf[:n]))
		if err != nil {
			break
		}
	}
	r.Close()
	cmd.Wait()
	next := 0
	for _, line := range strings.Split(strings.TrimSuffix(both.String(), "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "http"):
			if next >= len(urls) || line != urls[next] {
				t.Fatalf("2>&1: line %q, want result %d whole", line, next)
			}
			next++
		case strings.HasPrefix(line, in+"#") || strings.HasPrefix(line, "linkscan scan:"):
		default:
			t.Errorf("2>&1: broken line %q", line)
		}
	}
	if next != len(urls) {
		t.Errorf("2>&1: %d results, want %d", next, len(urls))
	}
}
