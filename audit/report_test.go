package audit

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkscan/linkscan/record"
	"github.com/linkscan/linkscan/record/recordtest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/audit")
var screenshot = flag.String("audit.screenshot", "", "keep the screenshot TestHTMLInChromium takes of the sample HTML report in this PNG file")

// sampleResults are hand-made results covering every status, credentials,
// markup and separators in the text, and an archived copy.
func sampleResults() []Result {
	t0 := time.Date(2026, 1, 10, 8, 0, 0, 0, time.UTC)
	d := func(y int) time.Time { return time.Date(y, 6, 1, 12, 0, 0, 0, time.UTC) }
	mk := func(u string, st Status, y int, c Check) Result {
		l := linkFor(u)
		l.Path, l.Offset, l.MessageID, l.Part, l.Line, l.Column, l.Date, l.Count = "list.mbox", 1234, "id@example.org", "1", 3, 7, d(y), 2
		c.Time = t0
		r := Result{Link: l, Check: c, Status: st, FirstSeen: t0.Add(-10 * 24 * time.Hour)}
		if st.Works() {
			r.LastOK = t0
		}
		return r
	}
	rs := []Result{
		mk("http://info.cern.ch/hypertext/WWW/TheProject.html", OK, 1993, Check{Status: OK, HTTPStatus: 200, Attempts: 1}),
		mk("http://www.example.com/old", Redirected, 1996, Check{Status: Redirected, Permanent: true, HTTPStatus: 200, Attempts: 2,
			Chain: []Hop{{"http://www.example.com/old", 301}}, FinalURL: "https://www.example.com/new"}),
		mk("http://u:s3cret@gone.example.net/a|b", Dead, 1996, Check{Status: Failing, HTTPStatus: 404, Class: ClassHTTP, Error: "HTTP 404", Attempts: 1}),
		mk("http://gone.example.net/<script>alert(1)</script>", Failing, 1998, Check{Status: Failing, Class: ClassDNS, Error: "lookup gone.example.net: no such host"}),
		mk("http://bots.example.org/", Blocked, 2004, Check{Status: Blocked, HTTPStatus: 403, Class: ClassHTTP, Error: "HTTP 403", Attempts: 2}),
		mk("telnet://bbs.example.org/", Unchecked, 1994, Check{Status: Unchecked, Class: ClassScheme, Error: "no checker for telnet: links"}),
		mk("mid:1994Jan1.123@example.org", OfflineOK, 1994, Check{Status: OfflineOK}),
	}
	rs[2].Failures, rs[2].FailingSince = 4, t0.Add(-9*24*time.Hour)
	rs[2].Archive = &Capture{Source: "wayback", URL: "https://web.archive.org/web/19961001000000/http://gone.example.net/a|b",
		Time: time.Date(1996, 10, 1, 0, 0, 0, 0, time.UTC)}
	rs[3].Failures, rs[3].FailingSince = 1, t0
	return rs
}

func render(t *testing.T, format string, rs []Result) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := NewWriter(&b, format, ReportOptions{Now: time.Date(2026, 1, 10, 9, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("..", "testdata", "audit", name)
	if *update {
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test ./audit -run TestReports -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./audit -run TestReports -update rewrites it):\n%s", name, got)
	}
}

func TestReports(t *testing.T) {
	rs := sampleResults()
	ext := map[string]string{"jsonl": "jsonl", "csv": "csv", "markdown": "md", "summary": "txt", "html": "html"}
	for _, f := range Formats {
		out := render(t, f, rs)
		if bytes.Contains(out, []byte("s3cret")) {
			t.Errorf("%s: credentials in the report", f)
		}
		golden(t, "report."+ext[f], out)
	}
	// jsonl: one record per result, scan's location names
	lines := bytes.Split(bytes.TrimSpace(render(t, "jsonl", rs)), []byte("\n"))
	if len(lines) != len(rs) {
		t.Fatalf("%d jsonl lines", len(lines))
	}
	var m map[string]any
	if err := json.Unmarshal(lines[2], &m); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"status": "dead", "path": "list.mbox", "message_id": "id@example.org", "line": 3.0,
		"count": 2.0, "failures": 4.0, "archive_source": "wayback", "url": "http://REDACTED@gone.example.net/a|b"} {
		if m[k] != want {
			t.Errorf("jsonl %s = %v, want %v", k, m[k], want)
		}
	}
	recs, err := csv.NewReader(bytes.NewReader(render(t, "csv", rs))).ReadAll()
	if err != nil || len(recs) != len(rs)+1 || len(recs[0]) != len(csvColumns) {
		t.Fatalf("csv: %d rows, %v", len(recs), err)
	}
	if rec := MakeRecord(rs[0]); len(rec.columns()) != len(csvColumns) {
		t.Errorf("csv columns out of step")
	}
	md := string(render(t, "markdown", rs))
	// every "<" escaped: "\<script>" is text, not a tag
	if strings.Count(md, "<") != strings.Count(md, `\<`) || !strings.Contains(md, `a\|b`) || strings.Count(md, "\n") != len(rs)+2 {
		t.Errorf("markdown escaping:\n%s", md)
	}
	page := string(render(t, "html", rs))
	if strings.Contains(page, "<script>") {
		t.Errorf("html: markup of a URL not escaped")
	}
	// self-contained: nothing is loaded at view time
	for _, re := range []string{`(?i)\ssrc=`, `(?i)<link`, `(?i)url\(`, `(?i)@import`, `(?i)<script`, `(?i)<iframe`, `(?i)<img`} {
		if regexp.MustCompile(re).MatchString(page) {
			t.Errorf("html report matches %s: it would load something", re)
		}
	}
	if _, err := NewWriter(&bytes.Buffer{}, "xml", ReportOptions{}); err == nil {
		t.Errorf("unknown format accepted")
	}
}

// TestReportsControlCharacters: text from an archive with control
// characters (an OSC title sequence in a Message-ID, a CSI, a line break
// in an error, bytes that are not UTF-8, a bidirectional override) reaches
// no terminal through the markdown and summary reports: they are written
// as report.Escape writes them (\x1b...), and so does the HTML page (a
// terminal shows it when it is printed). jsonl and csv are data for
// programs, kept as they are (JSON escapes C0 itself), as scan's are.
func TestReportsControlCharacters(t *testing.T) {
	r := sampleResults()[2]
	r.Link.MessageID = "\x1b]0;pwn\x07@x"
	r.Link.Path = "a\x1b[31mred.mbox"
	r.Check.Error = "line one\nline two \u009b2J \u202eevil \xff"
	r.Link.Host = "host\x1b[2J.example"
	for _, f := range []string{"markdown", "summary", "html"} {
		out := string(render(t, f, []Result{r}))
		for _, c := range []string{"\x1b", "\x07", "\u009b", "\u202e", "\xff"} {
			if strings.Contains(out, c) {
				t.Errorf("%s: %q passed through:\n%q", f, c, out)
			}
		}
		if f == "markdown" {
			for _, want := range []string{`a\x1b\[31mred.mbox \<\x1b\]0;pwn\x07@x>`, `line one\nline two \u009b2J \u202eevil \xff`} {
				if !strings.Contains(out, want) {
					t.Errorf("markdown: no %q in\n%s", want, out)
				}
			}
			if strings.Count(out, "\n") != 3 {
				t.Errorf("markdown: a line break in a cell:\n%s", out)
			}
		}
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.n -= len(p); f.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

// A write error anywhere is returned, by Write or by Close.
func TestReportWriteErrors(t *testing.T) {
	rs := sampleResults()
	for _, f := range Formats {
		for _, limit := range []int{0, 10, 100, 1000} {
			w, _ := NewWriter(&failWriter{n: limit}, f, ReportOptions{})
			var err error
			for _, r := range rs {
				if err = w.Write(r); err != nil {
					break
				}
			}
			if err == nil {
				err = w.Close()
			}
			if err == nil && len(render(t, f, rs)) > limit {
				t.Errorf("%s, %d bytes allowed: no error", f, limit)
			}
		}
	}
}

// manyResults is a deterministic larger sample for the charts: links from
// 1993 to 2025, more of the older ones dead, on 30 hosts.
func manyResults() []Result {
	var rs []Result
	seed := uint32(1)
	rnd := func() uint32 { seed = seed*1664525 + 1013904223; return seed >> 8 }
	t0 := time.Date(2026, 1, 10, 8, 0, 0, 0, time.UTC)
	for i := 0; i < 1200; i++ {
		y := 1993 + int(rnd()%33)
		host := fmt.Sprintf("host%02d.example.org", rnd()%30)
		l := linkFor(fmt.Sprintf("http://%s/doc/%d.html", host, i))
		l.Date, l.Path, l.MessageID, l.Count = time.Date(y, time.Month(1+rnd()%12), 1, 0, 0, 0, 0, time.UTC), "archive.mbox", fmt.Sprintf("%d@example.org", i), 1
		age := 2026 - y
		st := OK
		switch v := int(rnd() % 100); {
		case v < age*2:
			st = Dead
		case v < age*2+8:
			st = Failing
		case v < age*2+12:
			st = Redirected
		case v < age*2+14:
			st = Blocked
		}
		c := Check{Time: t0, Status: st, Attempts: 1}
		r := Result{Link: l, Status: st, Check: c}
		if st == Dead || st == Failing {
			r.Check.Status, r.Check.Class, r.Check.HTTPStatus, r.Check.Error = Failing, ClassHTTP, 404, "HTTP 404"
			r.Failures = 3
			if i%3 == 0 {
				r.Archive = &Capture{Source: "wayback", URL: "https://web.archive.org/web/" + l.Date.Format(cdxTime) + "/" + l.URL, Time: l.Date}
			}
		}
		rs = append(rs, r)
	}
	return rs
}

// chromium returns the browser's path; it skips the test when there is
// none, except in CI, where .ci/run installs it.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed, and CI=true (.ci/run installs it)")
	}
	t.Skip("chromium is not installed")
	return ""
}

// browse loads a file in headless Chromium and returns the DOM after load
// and what it logged.
func browse(t *testing.T, bin, file string, extra ...string) (dom, log string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-extensions",
		"--disable-background-networking", "--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}, extra...)
	args = append(args, "file://"+file)
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, errb.String())
	}
	return out.String(), errb.String()
}

var consoleLine = regexp.MustCompile(`(?m)^.*CONSOLE.*$`)

func TestHTMLInChromium(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	// the check must be able to fail: a page with a console error is caught
	bad := filepath.Join(dir, "bad.html")
	os.WriteFile(bad, []byte(`<!DOCTYPE html><title>x</title><script>console.error("broken page"); undefinedCall();</script>`), 0o644)
	if _, log := browse(t, bin, bad, "--dump-dom"); !consoleLine.MatchString(log) {
		t.Fatalf("a console error went unseen; log:\n%s", log)
	}
	page := filepath.Join(dir, "report.html")
	if err := os.WriteFile(page, render(t, "html", manyResults()), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, log := browse(t, bin, page, "--dump-dom")
	if m := consoleLine.FindAllString(log, -1); len(m) > 0 {
		t.Errorf("console messages: %q", m)
	}
	for _, id := range []string{"survival-chart", "hosts-chart"} {
		i := strings.Index(dom, `<svg id="`+id+`"`)
		if i < 0 {
			t.Fatalf("%s not in the DOM", id)
		}
		svg := dom[i:]
		svg = svg[:strings.Index(svg, "</svg>")]
		bars := regexp.MustCompile(`<rect class="(bar|dead|failing)" x="[0-9.]+" y="[0-9.]+" width="([0-9.]+)" height="([0-9.]+)"`).FindAllStringSubmatch(svg, -1)
		nonEmpty := 0
		for _, b := range bars {
			if b[2] != "0" && b[3] != "0" {
				nonEmpty++
			}
		}
		want := map[string]int{"survival-chart": 33, "hosts-chart": 20}[id]
		if nonEmpty < want {
			t.Errorf("%s: %d non-empty bars, want at least %d", id, nonEmpty, want)
		}
	}
	if !strings.Contains(dom, `<table id="dead-links">`) {
		t.Errorf("no table of dead links")
	}
	// a report of nothing loads as well, and says so
	empty := filepath.Join(dir, "empty.html")
	if err := os.WriteFile(empty, render(t, "html", nil), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, log = browse(t, bin, empty, "--dump-dom")
	if m := consoleLine.FindAllString(log, -1); len(m) > 0 {
		t.Errorf("empty report: console messages: %q", m)
	}
	for _, want := range []string{`<svg id="survival-chart"`, `No link with a message date was checked.`, `<svg id="hosts-chart"`,
		`No failing or dead links.`, `id="dead-none"`, `id="failing-none"`, `id="redirected-none"`, `id="blocked-none"`} {
		if !strings.Contains(dom, want) {
			t.Errorf("empty report: no %s", want)
		}
	}
	// a screenshot, always (into the test's directory, or -audit.screenshot
	// FILE to keep it): a PNG of the window's size, not of one colour, with
	// the charts' green survival bars and red dead bars drawn
	shot := filepath.Join(dir, "report.png")
	if *screenshot != "" {
		shot, _ = filepath.Abs(*screenshot)
	}
	browse(t, bin, page, "--screenshot="+shot, "--window-size=1100,1500", "--hide-scrollbars")
	checkScreenshot(t, shot, 1100, 1500, map[string]color.RGBA{
		"survival bar": {0x2e, 0x7d, 0x32, 0xff}, "dead bar": {0xc6, 0x28, 0x28, 0xff}, "failing bar": {0xf0, 0xa0, 0x50, 0xff}})
}

// checkScreenshot fails unless file is a PNG of w×h pixels, of more than
// one colour, with a pixel near each of the colours wanted.
func checkScreenshot(t *testing.T, file string, w, h int, want map[string]color.RGBA) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s: not a PNG: %v", file, err)
	}
	b := img.Bounds()
	if b.Dx() != w || b.Dy() != h {
		t.Errorf("screenshot: %dx%d, want %dx%d", b.Dx(), b.Dy(), w, h)
	}
	colours := map[color.RGBA]bool{}
	found := map[string]bool{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			if len(colours) < 1000 {
				colours[c] = true
			}
			for name, wc := range want {
				if near(c, wc) {
					found[name] = true
				}
			}
		}
	}
	if len(colours) < 2 {
		t.Errorf("screenshot: one colour")
	}
	for name := range want {
		if !found[name] {
			t.Errorf("screenshot: no %s (colour %v)", name, want[name])
		}
	}
}

// near reports whether two colours differ by at most 8 in each channel.
func near(a, b color.RGBA) bool {
	d := func(x, y uint8) bool { return int(x)-int(y) <= 8 && int(y)-int(x) <= 8 }
	return d(a.R, b.R) && d(a.G, b.G) && d(a.B, b.B)
}

var fixDocs = flag.Bool("fixdocs", false, "rewrite the table of fields in docs/audit.md")

// fullResult is a result with every field of its Record set.
func fullResult() Result {
	r := sampleResults()[2]
	r.Check.Permanent, r.Cached, r.Check.FinalURL = true, true, "https://gone.example.net/b"
	r.Check.Chain = []Hop{{"http://gone.example.net/a|b", 301}, {"https://gone.example.net/c", 302}} // redacted by the checker
	return r
}

// TestFieldsTable: Record's JSON tags, the jsonl keys and the csv header
// are those of Fields, in its order, and each csv column holds the value
// jsonl gives the field of its name; a field that has the name of one of
// scan's records is record.Shared's, but for the four that say they mean
// something else. Each check fails when a field is added, renamed or
// moved in one place only.
func TestFieldsTable(t *testing.T) {
	recordtest.Struct(t, Fields, Record{})
	recordtest.Shared(t, Fields, "url", "status", "date", "count")
	// a redirect's hop, as the Doc of redirects shows it
	hop, _ := json.Marshal(Hop{URL: "u", Status: 301})
	if f, _ := Fields.Lookup("redirects"); string(hop) != `{"url":"u","status":301}` || !strings.Contains(f.Doc, `{"url": ..., "status": N}`) {
		t.Errorf("a hop is %s; redirects: %s", hop, f.Doc)
	}
	r := fullResult()
	line := render(t, "jsonl", []Result{r})
	recordtest.JSONKeys(t, Fields, line)
	rows, err := csv.NewReader(bytes.NewReader(render(t, "csv", []Result{r}))).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("csv: %d rows, %v", len(rows), err)
	}
	unchecked := recordtest.CSV(t, Fields, rows[0], rows[1], line)
	if len(unchecked) != 1 || unchecked[0] != "redirects" {
		t.Errorf("csv columns not compared with jsonl: %v, want [redirects]", unchecked)
	} else if got, want := rows[1][slices.Index(rows[0], "redirects")], "301 http://gone.example.net/a|b | 302 https://gone.example.net/c"; got != want {
		t.Errorf("csv redirects %q, want %q", got, want)
	}
}

// TestDocsTable: the table of fields in docs/audit.md is the one made
// from Fields; go test ./audit -run TestDocsTable -fixdocs rewrites it.
func TestDocsTable(t *testing.T) {
	recordtest.DocTable(t, Fields, "../docs/audit.md", *fixDocs)
}

// TestScanRecordNames: the fields ReadJSONL reads (--from-jsonl) are
// named as scan's records name them.
func TestScanRecordNames(t *testing.T) {
	rt := reflect.TypeOf(scanRecord{})
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		if _, ok := record.Fields.Lookup(name); !ok {
			t.Errorf("scanRecord.%s reads %q, which scan's records do not have", rt.Field(i).Name, name)
		}
	}
}

// TestMarkdownCell: Markdown's own characters are escaped with
// backslashes, never as HTML entities, and text that reads as an entity
// keeps its "&" literal.
func TestMarkdownCell(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"<a@x>", `\<a@x>`},
		{"http://a/?x=1&y=2", "http://a/?x=1&y=2"},
		{"http://a/?q=&lt;&#60;&amp", `http://a/?q=\&lt;\&#60;&amp`},
		{"a|b`c[d]", "a\\|b\\`c\\[d\\]"},
	} {
		if got := mdCell(tt.in); got != tt.want {
			t.Errorf("mdCell(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if strings.Contains(mdCell(tt.in), "&lt;") && !strings.Contains(tt.in, "&lt;") {
			t.Errorf("mdCell(%q) made an entity", tt.in)
		}
	}
}

// TestHTMLSections: the page lists the dead, failing, redirected and
// blocked links, each in its section under its count, each link a link
// (javascript: refused by html/template), and the hosts heading counts
// the hosts shown.
func TestHTMLSections(t *testing.T) {
	rs := sampleResults()
	page := string(render(t, "html", rs))
	for _, want := range []string{
		`<h2 id="dead">dead (1)</h2>`, `<h2 id="failing">failing (1)</h2>`,
		`<h2 id="redirected">redirected (1)</h2>`, `<h2 id="blocked">blocked (1)</h2>`,
		`<a href="http://REDACTED@gone.example.net/a%7cb" rel="noreferrer nofollow">http://REDACTED@gone.example.net/a|b</a>`,
		`<a href="http://gone.example.net/%3cscript%3ealert%281%29%3c/script%3e" rel="noreferrer nofollow">`,
		`<a href="http://www.example.com/old" rel="noreferrer nofollow">`,
		`<a class="url" href="https://www.example.com/new" rel="noreferrer nofollow">https://www.example.com/new</a>`,
		`<a href="http://bots.example.org/" rel="noreferrer nofollow">`,
		`Hosts with the most dead and failing links (1)</h2>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("no %s in the page", want)
		}
	}
	for _, notListed := range []string{"info.cern.ch", "telnet://bbs", "mid:1994"} {
		if strings.Count(page, notListed) != 0 {
			t.Errorf("%s listed", notListed)
		}
	}
	js := sampleResults()[4]
	js.Link.URL = "javascript:alert(1)"
	if page := string(render(t, "html", []Result{js})); strings.Contains(page, `href="javascript:`) {
		t.Error("a javascript: link is clickable")
	}
}
