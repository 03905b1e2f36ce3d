package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestAuditHTMLInChromium: the HTML report the command writes, with a
// dead link (after a history), loads in headless Chromium without a
// console message, with both charts drawn (non-empty bars) and the dead
// link in its table. The writer itself is tested in package audit; this
// is the end-to-end check. Skipped without Chromium (failed when CI=true).
func TestAuditHTMLInChromium(t *testing.T) {
	var bin string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed, and CI=true (.ci/run installs it)")
		}
		t.Skip("chromium is not installed")
	}
	dir := t.TempDir()
	srv := newAuditServer(t)
	clock := useClock(t, t0)
	mbox := auditArchive(t, dir, srv.URL)
	db := filepath.Join(dir, "h.db")
	for _, days := range []int{0, 4, 8} {
		clock.set(t0.Add(time.Duration(days) * 24 * time.Hour))
		runCmd("", auditArgs(db, srv.URL, "--format", "summary", mbox)...)
	}
	page := filepath.Join(dir, "report.html")
	code, _, errs := runCmd("", auditArgs(db, srv.URL, "--format", "html", "--offline", "-o", page, mbox)...)
	if code != exitDead {
		t.Fatalf("exit %d, stderr %q; want 3 (a dead link)", code, errs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
		"--disable-extensions", "--disable-background-networking", "--user-data-dir="+t.TempDir(), "--enable-logging=stderr", "--v=0",
		"--dump-dom", "file://"+page)
	var out, log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &log
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, log.String())
	}
	dom := out.String()
	if m := regexp.MustCompile(`(?m)^.*CONSOLE.*$`).FindAllString(log.String(), -1); len(m) > 0 {
		t.Errorf("console messages: %q", m)
	}
	bar := regexp.MustCompile(`<rect class="(bar|dead|failing)" x="[0-9.]+" y="[0-9.]+" width="([0-9.]+)" height="([0-9.]+)"`)
	for _, id := range []string{"survival-chart", "hosts-chart"} {
		i := strings.Index(dom, `<svg id="`+id+`"`)
		if i < 0 {
			t.Errorf("%s not in the DOM", id)
			continue
		}
		svg := dom[i:]
		svg = svg[:strings.Index(svg, "</svg>")]
		drawn := 0
		for _, b := range bar.FindAllStringSubmatch(svg, -1) {
			if b[2] != "0" && b[3] != "0" {
				drawn++
			}
		}
		if drawn == 0 {
			t.Errorf("%s: no bar drawn", id)
		}
	}
	i := strings.Index(dom, `<table id="dead-links">`)
	if i < 0 || !strings.Contains(dom[i:], "/gone") {
		t.Errorf("no table of dead links with /gone")
	}
}
