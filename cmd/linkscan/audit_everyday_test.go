package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// everydayServer answers /ok 200, /missing 404, /removed 410 and /slow
// after 2 s.
func everydayServer(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(404) })
	mux.HandleFunc("/removed", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(410) })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// auditStatuses reads audit's jsonl: status and error by URL.
func auditStatuses(t *testing.T, out string) map[string][2]string {
	t.Helper()
	m := map[string][2]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var r struct{ URL, Status, Error string }
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%v: %q", err, l)
		}
		m[r.URL] = [2]string{r.Status, r.Error}
	}
	return m
}

// TestAuditEveryday: 410 is dead at once; a timeout says how long it
// waited; an archive service that cannot be reached is said once and not
// asked again; --fail-on failing makes a first 404 exit 3; a private
// address refused names --allow-private once; durations take days.
func TestAuditEveryday(t *testing.T) {
	bin := linkscanBin(t)
	srv := everydayServer(t)
	dir := t.TempDir()
	mbox := func(name string, paths ...string) string {
		var b strings.Builder
		for i, p := range paths {
			fmt.Fprintf(&b, "From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <%d@x>\nDate: Sat, 1 Jan 2000 00:00:00 +0000\n\n%s%s\n\n", i, srv.URL, p)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	common := func(db string, more ...string) []string {
		return append([]string{"audit", "--db", filepath.Join(dir, db), "--retries", "0", "--format", "jsonl",
			"--progress", "never", "--archive-interval", "0", "--cdx", "http://127.0.0.1:1/cdx"}, more...)
	}

	all := mbox("all.mbox", "/ok", "/missing", "/removed", "/slow")
	r := runBin(t, bin, nil, append(common("a.db", "--allow-private", "--attempt-timeout", "300ms", "--max-age", "7d"), all)...)
	st := auditStatuses(t, r.stdout)
	if got := st[srv.URL+"/removed"]; got != [2]string{"dead", "HTTP 410 (Gone)"} {
		t.Errorf("410: %q, want dead at once", got)
	}
	if got := st[srv.URL+"/slow"]; got != [2]string{"failing", "timed out after 300ms"} {
		t.Errorf("slow: %q", got)
	}
	if got := st[srv.URL+"/missing"]; got[0] != "failing" {
		t.Errorf("404: %q", got)
	}
	if r.code != exitDead || strings.Count(r.stderr, "archive service cannot be reached") != 1 {
		t.Errorf("exit %d, stderr %q; want 3 and the archive service said once", r.code, r.stderr)
	}

	// a first 404: failing, exit 0 by default, 3 with --fail-on failing
	one := mbox("one.mbox", "/ok", "/missing")
	if r := runBin(t, bin, nil, append(common("b.db", "--allow-private"), one)...); r.code != exitOK {
		t.Errorf("404, --fail-on dead: exit %d, stderr %q", r.code, r.stderr)
	}
	r = runBin(t, bin, nil, append(common("c.db", "--allow-private", "--fail-on", "failing"), one)...)
	if r.code != exitDead || !strings.Contains(r.stderr, "1 failing link (--fail-on failing)") {
		t.Errorf("404, --fail-on failing: exit %d, stderr %q", r.code, r.stderr)
	}
	// the HTML report: the failing link clickable in its section
	r = runBin(t, bin, nil, append(common("e.db", "--allow-private", "--format", "html"), one)...)
	for _, want := range []string{`<h2 id="failing">failing (1)</h2>`, `<a href="` + srv.URL + `/missing" rel="noreferrer nofollow">`,
		`Hosts with the most dead and failing links (1)</h2>`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("html: no %s", want)
		}
	}
	if r := runBin(t, bin, nil, append(common("c.db", "--fail-on", "never"), one)...); r.code != exitUsage {
		t.Errorf("--fail-on never: exit %d", r.code)
	}

	// without --allow-private: the loopback server is refused, said once
	r = runBin(t, bin, nil, append(common("d.db"), one)...)
	if r.code != exitOK || strings.Count(r.stderr, "--allow-private") != 1 {
		t.Errorf("private: exit %d, stderr %q; want --allow-private named once", r.code, r.stderr)
	}
	if r := runBin(t, bin, nil, append(common("d.db", "--max-age", "7x"), one)...); r.code != exitUsage {
		t.Errorf("--max-age 7x: exit %d", r.code)
	}
}
