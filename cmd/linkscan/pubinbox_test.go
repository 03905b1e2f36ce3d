package main

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkscan/linkscan/internal/testutil"
	"github.com/linkscan/linkscan/mailbox"
)

// inboxMessages returns the messages of the project's fixtures, each
// as its bytes (without an mbox "From " line), in order.
func inboxMessages(t *testing.T) [][]byte {
	t.Helper()
	var out [][]byte
	for _, in := range []string{td + "refs/list.mbox", td + "refs/maildir", td + "mail/mboxrd.mbox", td + "mail/crlf.mbox", td + "mail/mime.eml"} {
		r, err := mailbox.Open(in, nil)
		if err != nil {
			t.Fatal(err)
		}
		for {
			m, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, append([]byte(nil), m.Raw...))
		}
		r.Close()
	}
	return out
}

// writeFiles writes msgs as the files of a folder, named in their order.
func writeFiles(t *testing.T, dir string, msgs [][]byte) {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	for i, m := range msgs {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%04d.eml", i)), m, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// v2Epoch makes a v2 epoch repository of msgs, one commit each.
func v2Epoch(t *testing.T, dir string, msgs [][]byte) {
	var cs []testutil.GitCommit
	for _, m := range msgs {
		cs = append(cs, testutil.GitCommit{Set: map[string]string{"m": string(m)}})
	}
	testutil.GitRepo(t, dir, cs)
}

// v1Repo makes a v1 inbox of msgs: each at the hash path of its index.
func v1Repo(t *testing.T, dir string, msgs [][]byte) {
	var cs []testutil.GitCommit
	for i, m := range msgs {
		h := sha1.Sum(fmt.Appendf(nil, "<%d@x>", i))
		p := hex.EncodeToString(h[:1]) + "/" + hex.EncodeToString(h[1:])
		cs = append(cs, testutil.GitCommit{Set: map[string]string{p: string(m)}})
	}
	testutil.GitRepo(t, dir, cs)
}

// linksOf runs scan --format jsonl and returns each record without the
// fields that say where its message is (path, blob, offset), and the
// set of blobs seen.
func linksOf(t *testing.T, args ...string) (recs []string, blobs map[string]bool) {
	t.Helper()
	code, out, errs := runCmd("", append([]string{"scan", "--headers", "--format", "jsonl"}, args...)...)
	if code != 0 && code != 1 {
		t.Fatalf("scan %q: exit %d: %s", args, code, errs)
	}
	blobs = map[string]bool{}
	for line := range strings.Lines(out) {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if b, _ := r["blob"].(string); b != "" {
			blobs[b] = true
		}
		delete(r, "path")
		delete(r, "blob")
		delete(r, "offset")
		b, _ := json.Marshal(r)
		recs = append(recs, string(b))
	}
	return recs, blobs
}

// TestScanInboxSameAsFiles: scanning a public-inbox archive (v2 with two
// epochs and an empty one, one epoch alone, v1) gives the records of
// its messages scanned as files, but for where they are.
func TestScanInboxSameAsFiles(t *testing.T) {
	if d := os.Getenv("KEEP_INBOX"); d != "" {
		defer os.CopyFS(d, os.DirFS(t.TempDir()))
	}
	testutil.NeedGit(t)
	msgs := inboxMessages(t)
	if len(msgs) < 15 {
		t.Fatalf("%d messages", len(msgs))
	}
	dir := t.TempDir()
	half := len(msgs) / 2
	inbox := filepath.Join(dir, "inbox")
	v2Epoch(t, filepath.Join(inbox, "git", "0.git"), msgs[:half])
	v2Epoch(t, filepath.Join(inbox, "git", "1.git"), msgs[half:])
	testutil.Git(t, "", "init", "-q", "--bare", filepath.Join(inbox, "git", "2.git"))
	v1 := filepath.Join(dir, "v1.git")
	v1Repo(t, v1, msgs)
	writeFiles(t, filepath.Join(dir, "all"), msgs)
	writeFiles(t, filepath.Join(dir, "first"), msgs[:half])

	all, _ := linksOf(t, filepath.Join(dir, "all"))
	first, _ := linksOf(t, filepath.Join(dir, "first"))
	if len(all) < 20 || len(first) == 0 || len(first) == len(all) {
		t.Fatalf("%d records of the files, %d of the first half", len(all), len(first))
	}
	for _, c := range []struct {
		name, in string
		want     []string
		blobs    int
	}{
		{"v2", inbox, all, len(msgs)},
		{"epoch", filepath.Join(inbox, "git", "0.git"), first, half},
		{"v1", v1, all, len(msgs)},
	} {
		got, blobs := linksOf(t, c.in)
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s: records differ from the files':\n%s", c.name, testutil.LineDiff(strings.Join(c.want, "\n"), strings.Join(got, "\n")))
		}
		// every message with a link has its blob
		if len(blobs) == 0 || len(blobs) > c.blobs {
			t.Errorf("%s: %d blobs", c.name, len(blobs))
		}
	}

	// text output: PATH#BLOB; --verbose says why the format
	code, out, errs := runCmd("", "scan", "--verbose", "--format", "text", inbox)
	e0 := filepath.Join(inbox, "git", "0.git")
	b0 := testutil.Git(t, e0, "rev-parse", "HEAD~"+fmt.Sprint(half-1)+":m")
	if code > 1 || !strings.Contains(out, e0+"#"+b0+" ") {
		t.Errorf("text output (exit %d) has no %s#%s:\n%s", code, e0, b0, out)
	}
	if !strings.Contains(errs, "read as public-inbox: a public-inbox v2 inbox: 3 epoch repositories") {
		t.Errorf("--verbose:\n%s", errs)
	}
}

// TestRewriteRefusesInbox: rewrite refuses a public-inbox archive (with
// --dry-run too) and says how to export it; filter, which takes no
// path, says what it is and passes the message on.
func TestRewriteRefusesInbox(t *testing.T) {
	testutil.NeedGit(t)
	dir := t.TempDir()
	inbox := filepath.Join(dir, "inbox")
	v2Epoch(t, filepath.Join(inbox, "git", "0.git"), inboxMessages(t)[:3])
	rules := filepath.Join(dir, "rules.toml")
	os.WriteFile(rules, []byte("version = 1\n[[rule]]\naction = \"map\"\nfrom = \"http://www.example.com/\"\nto = \"http://example.com/\"\n"), 0o644)
	for _, in := range []string{inbox, filepath.Join(inbox, "git", "0.git")} {
		for _, flag := range []string{"--dry-run", "--in-place"} {
			code, out, errs := runCmd("", "rewrite", "--rules", rules, flag, in)
			if code != exitUsage || out != "" || !strings.Contains(errs, "git history cannot be changed in place") || !strings.Contains(errs, "cat-file blob") {
				t.Errorf("rewrite %s %s: exit %d, %q, %s", flag, in, code, out, errs)
			}
		}
	}
	const msg = "Subject: x\n\nhttp://www.example.com/a\n"
	code, out, errs := runCmd(msg, "filter", "--rules", rules, "--rules-cache", "off", inbox)
	if code != 0 || out != msg || !strings.Contains(errs, "a public-inbox v2 inbox") {
		t.Errorf("filter with an inbox: exit %d, %q, %s", code, out, errs)
	}
}

// TestResolveAcrossEpochs: references between messages of different
// epochs resolve, to their epoch and blob, as they do between files;
// index adds only new commits on a second run.
func TestResolveAcrossEpochs(t *testing.T) {
	testutil.NeedGit(t)
	msgs := inboxMessages(t)
	dir := t.TempDir()
	inbox := filepath.Join(dir, "inbox")
	e0, e1 := filepath.Join(inbox, "git", "0.git"), filepath.Join(inbox, "git", "1.git")
	v2Epoch(t, e0, msgs[:1]) // the thread's root alone
	v2Epoch(t, e1, msgs[1:])
	writeFiles(t, filepath.Join(dir, "files"), msgs)
	statuses := func(in string) (map[string]string, []map[string]any) {
		code, out, errs := runCmd("", "resolve", "--format", "jsonl", in)
		if code > 1 {
			t.Fatalf("resolve %s: exit %d: %s", in, code, errs)
		}
		got := map[string]string{}
		var recs []map[string]any
		for line := range strings.Lines(out) {
			var r map[string]any
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatal(err)
			}
			got[fmt.Sprint(r["message_id"], " ", r["where"], " ", r["url"])] = r["status"].(string)
			recs = append(recs, r)
		}
		return got, recs
	}
	want, _ := statuses(filepath.Join(dir, "files"))
	got, recs := statuses(inbox)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("statuses differ:\ninbox %v\nfiles %v", got, want)
	}
	root := testutil.Git(t, e0, "rev-parse", "HEAD:m")
	n := 0
	for _, r := range recs {
		if tg, ok := r["target"].(map[string]any); ok && r["path"] == e1 && tg["file"] == e0 {
			n++
			if tg["blob"] != root {
				t.Errorf("target in epoch 0 without its blob: %v", tg)
			}
		}
	}
	if n == 0 {
		t.Errorf("no reference from epoch 1 resolved to epoch 0")
	}

	// across inboxes: a reply kept in another inbox
	other := filepath.Join(dir, "other")
	v2Epoch(t, filepath.Join(other, "git", "0.git"), [][]byte{[]byte("Message-ID: <elsewhere@x>\nIn-Reply-To: <root@example.org>\n\nsee mid:root@example.org\n")})
	code, out, errs := runCmd("", "resolve", "--format", "jsonl", inbox, other)
	found := 0
	for line := range strings.Lines(out) {
		var r struct {
			MessageID string `json:"message_id"`
			Status    string
			Target    struct{ File, Blob string }
		}
		json.Unmarshal([]byte(line), &r)
		if r.MessageID == "elsewhere@x" && r.Status == "resolved" && r.Target.File == e0 && r.Target.Blob == root {
			found++
		}
	}
	if code > 1 || found != 2 {
		t.Errorf("resolve across inboxes: exit %d, %d references to the root resolved\n%s", code, found, errs)
	}

	db := filepath.Join(dir, "index.db")
	index := func(want int) {
		t.Helper()
		code, out, errs := runCmd("", "index", "--index", db, "--format", "json", inbox)
		var st struct {
			Added int `json:"added"`
		}
		if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil || st.Added != want {
			t.Errorf("index: exit %d, %v, added %d, want %d: %s%s", code, err, st.Added, want, out, errs)
		}
	}
	index(len(msgs))
	index(0)
	testutil.GitRepo(t, e1, []testutil.GitCommit{{Set: map[string]string{"m": "Message-ID: <new@x>\nIn-Reply-To: <root@example.org>\n\nmid:root@example.org\n"}}})
	index(1)
	code, out, _ = runCmd("", "resolve", "--index", db, "--format", "jsonl", inbox)
	if code > 1 || !strings.Contains(out, `"message_id":"new@x"`) || !strings.Contains(out, `"status":"resolved","target":{"file":"`+e0) {
		t.Errorf("resolve with the index: exit %d\n%s", code, out)
	}
}

// TestAuditInbox: audit reads a public-inbox archive, its records
// locating each link by epoch and blob.
func TestAuditInbox(t *testing.T) {
	testutil.NeedGit(t)
	dir := t.TempDir()
	inbox := filepath.Join(dir, "inbox")
	v2Epoch(t, filepath.Join(inbox, "git", "0.git"), inboxMessages(t)[:4])
	code, out, errs := runCmd("", "audit", "--offline", "--db", filepath.Join(dir, "h.db"), "--format", "jsonl", inbox)
	if code > 1 || out == "" {
		t.Fatalf("audit: exit %d: %s", code, errs)
	}
	for line := range strings.Lines(out) {
		var r struct{ Path, Blob string }
		if err := json.Unmarshal([]byte(line), &r); err != nil || r.Path != filepath.Join(inbox, "git", "0.git") || len(r.Blob) != 40 {
			t.Errorf("%v: %s", err, line)
		}
	}
}
