package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type resolved struct {
	URL    string `json:"url"`
	Where  string `json:"where"`
	Form   string `json:"form"`
	Status string `json:"status"`
	Target *struct {
		File   string `json:"file"`
		Offset int64  `json:"offset"`
		Part   string `json:"part"`
		Group  string `json:"group"`
	} `json:"target"`
	Targets []json.RawMessage `json:"targets"`
}

func decodeLines(t *testing.T, out string) []resolved {
	var rs []resolved
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var r resolved
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%v in %s", err, sc.Text())
		}
		rs = append(rs, r)
	}
	return rs
}

func TestResolveCommand(t *testing.T) {
	code, out, errs := runCmd("", "resolve", "--format", "jsonl", "--nntp-host", "news.test.invalid", td+"refs/list.mbox", td+"refs/maildir")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rs := decodeLines(t, out)
	byURL := map[string]resolved{}
	for _, r := range rs {
		if !strings.HasPrefix(r.URL, "mid:") && !strings.HasPrefix(r.URL, "cid:") && !strings.HasPrefix(r.URL, "news:") && !strings.HasPrefix(r.URL, "nntp:") {
			t.Errorf("resolve reported a non-reference %q", r.URL)
		}
		if _, ok := byURL[r.URL+r.Where]; !ok {
			byURL[r.URL+r.Where] = r
		}
	}
	for key, want := range map[string]string{
		"mid:minutes@example.org" + "body":                               "resolved",
		"mid:pruned@example.org" + "body":                                "dangling",
		"mid:copy@example.org" + "body":                                  "resolved",
		"cid:twice@example.org" + "html:src":                             "ambiguous",
		"cid:diagram@example.org" + "html:src":                           "resolved",
		"news:*" + "body":                                                "not-a-target",
		"nntp://news.other.example/comp.infosystems.www/1body":           "external-server",
		"nntp://news.test.invalid/comp.infosystems.www/1body":            "resolved",
		"mid:root@example.org" + "header:In-Reply-To":                    "resolved",
		"news:1991Jun21.055051.28165@milton.u.washington.eduattribution": "resolved",
	} {
		r, ok := byURL[key]
		if !ok || r.Status != want {
			t.Errorf("%s: status %q, want %q", key, r.Status, want)
		}
	}
	if r := byURL["mid:copy@example.orgbody"]; len(r.Targets) != 2 || r.Target == nil || r.Target.File != td+"refs/list.mbox" {
		t.Errorf("copies: %+v", r)
	}
	if r := byURL["cid:diagram@example.orghtml:src"]; r.Target == nil || r.Target.Part != "2" {
		t.Errorf("cid target: %+v", r.Target)
	}
	if r := byURL["mid:root@example.orgheader:In-Reply-To"]; r.Form != "implicit" {
		t.Errorf("implicit form %q", r.Form)
	}

	_, out, _ = runCmd("", "resolve", "--format", "jsonl", "--status", "dangling", "--no-implicit", td+"refs/list.mbox", td+"refs/maildir")
	for _, r := range decodeLines(t, out) {
		if r.Status != "dangling" || r.Form == "implicit" {
			t.Errorf("--status dangling --no-implicit kept %+v", r)
		}
	}
	if code, _, errs := runCmd("", "resolve", "--status", "lost", "x"); code != 2 || !strings.Contains(errs, "lost") {
		t.Errorf("bad --status: %d %q", code, errs)
	}
}

func TestResolveStdinAndScan(t *testing.T) {
	data, _ := os.ReadFile(td + "refs/list.mbox")
	code, out, errs := runCmd(string(data), "resolve", "--format", "jsonl", "-")
	if code != 0 || !strings.Contains(out, `"status":"resolved","target":{"file":"-"`) {
		t.Errorf("stdin: exit %d %s\n%s", code, errs, out)
	}
	_, out, _ = runCmd("", "scan", "--resolve", "--format", "jsonl", td+"refs/list.mbox")
	if !strings.Contains(out, `"url":"mid:pruned@example.org"`) || !strings.Contains(out, `"status":"dangling"`) {
		t.Errorf("scan --resolve:\n%s", out)
	}
	if code, _, _ := runCmd("", "scan", "--index", "x.db", td+"refs/list.mbox"); code != 2 {
		t.Errorf("--index without --resolve: exit %d", code)
	}
}

func TestIndexCommand(t *testing.T) {
	db := filepath.Join(t.TempDir(), "refs.db")
	code, out, errs := runCmd("", "index", "--index", db, "--format", "json", td+"refs/list.mbox", td+"refs/maildir")
	var st map[string]int
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil {
		t.Fatalf("exit %d %v %s", code, err, errs)
	}
	if st["messages"] != 8 || st["added"] != 8 || st["without_message_id"] != 1 || st["content_ids"] != 2 || st["files"] != 4 {
		t.Errorf("first run: %v", st)
	}
	_, out, _ = runCmd("", "index", "--index", db, "--format", "json", td+"refs/list.mbox", td+"refs/maildir")
	json.Unmarshal([]byte(out), &st)
	if st["added"] != 0 || st["skipped_unchanged"] != 4 || st["messages"] != 8 {
		t.Errorf("second run: %v", st)
	}
	// resolve against the stored index from another run: the Maildir alone
	_, out, _ = runCmd("", "resolve", "--index", db, "--format", "jsonl", td+"refs/maildir")
	if !strings.Contains(out, `"url":"mid:root@example.org","canonical":"mid:root@example.org"`) || !strings.Contains(out, `"status":"resolved"`) {
		t.Errorf("resolve against a stored index:\n%s", out)
	}
	_, out, _ = runCmd("", "index", td+"refs/list.mbox")
	if !strings.Contains(out, "memory (this run only)") || !strings.Contains(out, "messages           5") {
		t.Errorf("text output:\n%s", out)
	}
	notDB := filepath.Join(t.TempDir(), "not-a-database")
	os.WriteFile(notDB, []byte("From a@b Sat Jan  1 00:00:00 2000\n\nthis is mail, not SQLite\n"), 0o644)
	if code, _, _ := runCmd("", "index", "--index", notDB, td+"refs/list.mbox"); code != 1 {
		t.Errorf("a non-database index file: exit %d", code)
	}
}
