package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRewriteSkippedLine: the closing line counts the links skipped, by
// reason, with the flag that changes it.
func TestRewriteSkippedLine(t *testing.T) {
	bin := linkscanBin(t)
	in := filepath.Join(t.TempDir(), "dkim.mbox")
	mbox := "From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <1@x>\nDKIM-Signature: v=1; a=rsa-sha256\n\nhttp://www.example.com/a http://www.example.com/b\n\n" +
		"From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <2@x>\nContent-Type: multipart/signed; boundary=s\n\n--s\n\nhttp://www.example.com/c\n--s--\n\n" +
		"From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <3@x>\n\nhttp://www.example.com/d\n"
	if err := os.WriteFile(in, []byte(mbox), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runBin(t, bin, nil, "rewrite", "--rules", rewriteRules, "--dry-run", in)
	want := "linkscan rewrite: would change 1 message (1 link)\nlinkscan rewrite: skipped 3 links: 2 in DKIM-signed messages (--break-dkim), 1 in signed or encrypted messages\n"
	if r.code != exitOK || r.stderr != want {
		t.Errorf("exit %d, stderr:\n%s\nwant:\n%s", r.code, r.stderr, want)
	}
	r = runBin(t, bin, nil, "rewrite", "--rules", rewriteRules, "--dry-run", "--break-dkim", in)
	if r.code != exitOK || strings.Contains(r.stderr, "DKIM") || !strings.Contains(r.stderr, "would change 2 messages (3 links)") {
		t.Errorf("--break-dkim: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

// TestRewriteSkippedProof: links rewrite cannot prove whole are counted
// on the closing line by why: a Safe Link cut before its end marker, a
// link the mailer-wrap rule joined.
func TestRewriteSkippedProof(t *testing.T) {
	bin := linkscanBin(t)
	in := filepath.Join(t.TempDir(), "cut.mbox")
	mbox := "From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <1@x>\n\n> https://nam02.safelinks.protection.outlook.com/?url=https%3A%2F%2Fsashi\nko.\n> dev%2F&data=05&reserved=0\n\n" +
		"From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <2@x>\n\nhttp://www.example.com/docs/some/very/long/path/to/a/document/that/wrapped/\nindex.html?utm_source=x\n"
	if err := os.WriteFile(in, []byte(mbox), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runBin(t, bin, nil, "rewrite", "--rules", rewriteRules, "--dry-run", in)
	want := "skipped 2 links: 1 in gateway links cut before their end marker, 1 joined from several lines, nothing proving their end\n"
	if r.code != exitOK || !strings.HasSuffix(r.stderr, want) {
		t.Errorf("exit %d, stderr:\n%s\nwant it to end:\n%s", r.code, r.stderr, want)
	}
}
