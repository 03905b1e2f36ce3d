package pubinbox_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkscan/linkscan/internal/testutil"
	"github.com/linkscan/linkscan/mailbox"
	_ "github.com/linkscan/linkscan/mailbox/pubinbox"
)

// msg is a small message with Message-ID <id@x> and a link.
func msg(id string, headers ...string) string {
	h := strings.Join(headers, "\n")
	if h != "" {
		h += "\n"
	}
	return fmt.Sprintf("From: a@example.org\nMessage-ID: <%s@x>\n%sSubject: %s\n\nsee https://example.org/%s\n", id, h, id, id)
}

// v2 makes a v2 inbox under dir: epoch 0 with a side branch merged,
// epoch 1 with a deletion of a message of epoch 0, epoch 2 empty.
func v2(t *testing.T, dir string) {
	t.Helper()
	testutil.GitRepo(t, filepath.Join(dir, "git", "0.git"), []testutil.GitCommit{
		{Set: map[string]string{"m": msg("a")}},
		{Branch: "side", Set: map[string]string{"m": msg("b")}},
		{Set: map[string]string{"m": msg("c")}},
		{Merge: "side"},
		{Set: map[string]string{"m": msg("gone")}},
	})
	testutil.GitRepo(t, filepath.Join(dir, "git", "1.git"), []testutil.GitCommit{
		{Set: map[string]string{"m": msg("e", "In-Reply-To: <a@x>")}},
		{Delete: []string{"m"}, Set: map[string]string{"d": msg("gone")}},
		{Delete: []string{"d"}, Set: map[string]string{"m": msg("f", "References: <c@x>")}},
	})
	testutil.Git(t, "", "init", "-q", "--bare", filepath.Join(dir, "git", "2.git"))
	// what public-inbox keeps beside the epochs, not read
	os.MkdirAll(filepath.Join(dir, "all.git", "objects"), 0o755)
	os.WriteFile(filepath.Join(dir, "inbox.lock"), nil, 0o644)
}

// read returns "path#blob id" of each message, and the problems.
func read(t *testing.T, dir string, o *mailbox.Options) (ids []string, msgs []*mailbox.Message, r *mailbox.Reader) {
	t.Helper()
	r, err := mailbox.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		m, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
		ids = append(ids, m.MessageID)
	}
	return ids, msgs, r
}

func TestV2Inbox(t *testing.T) {
	testutil.NeedGit(t)
	dir := t.TempDir()
	v2(t, dir)
	var files []string
	ids, msgs, r := read(t, dir, &mailbox.Options{OnFile: func(f mailbox.FileRead) {
		files = append(files, filepath.Base(f.Path)+" "+strings.SplitAfter(f.Reason, ",")[0])
	}})
	if r.Format() != mailbox.FormatPublicInbox || !strings.Contains(r.FormatReason(), "v2 inbox: 3 epoch") {
		t.Errorf("format %s: %s", r.Format(), r.FormatReason())
	}
	// the merge adds nothing (its m is b's), "gone" is deleted in epoch 1
	if got := strings.Join(ids, " "); got != "a@x b@x c@x e@x f@x" {
		t.Errorf("messages %q", got)
	}
	if got := strings.Join(files, "|"); got != "0.git public-inbox v2 epoch,|1.git public-inbox v2 epoch,|2.git public-inbox epoch without commits" {
		t.Errorf("OnFile %q", got)
	}
	for _, m := range msgs {
		want := filepath.Join(dir, "git", "0.git")
		if m.MessageID >= "e" {
			want = filepath.Join(dir, "git", "1.git")
		}
		if m.Path != want || m.Offset != 0 || m.RawOffset != 0 || len(m.Problems) != 0 {
			t.Errorf("%s: path %s offset %d/%d problems %v", m.MessageID, m.Path, m.Offset, m.RawOffset, m.Problems)
		}
		if got := testutil.Git(t, m.Path, "cat-file", "blob", m.Blob); got+"\n" != string(m.Raw) {
			t.Errorf("%s: blob %s holds %q, message %q", m.MessageID, m.Blob, got, m.Raw)
		}
		if m.Format != mailbox.FormatPublicInbox || m.Length != int64(len(m.Raw)) {
			t.Errorf("%s: format %s length %d", m.MessageID, m.Format, m.Length)
		}
	}
}

// TestOneEpoch: an epoch given alone is read alone; its own deletions
// hold, not those of other epochs.
func TestOneEpoch(t *testing.T) {
	testutil.NeedGit(t)
	dir := t.TempDir()
	v2(t, dir)
	ids, _, r := read(t, filepath.Join(dir, "git", "0.git"), nil)
	if got := strings.Join(ids, " "); got != "a@x b@x c@x gone@x" {
		t.Errorf("epoch 0: %q", got)
	}
	if !strings.Contains(r.FormatReason(), "v2 epoch repository") {
		t.Errorf("reason %q", r.FormatReason())
	}
	ids, _, _ = read(t, filepath.Join(dir, "git", "1.git"), nil)
	if got := strings.Join(ids, " "); got != "e@x f@x" {
		t.Errorf("epoch 1: %q", got)
	}
	ids, _, r = read(t, filepath.Join(dir, "git", "2.git"), nil)
	if len(ids) != 0 || r.Format() != mailbox.FormatPublicInbox {
		t.Errorf("empty epoch: %q, %s", ids, r.Format())
	}
}

func TestV1(t *testing.T) {
	testutil.NeedGit(t)
	dir := filepath.Join(t.TempDir(), "list.git")
	const p1, p2, p3 = "0a/0000000000000000000000000000000000000a", "0b/00000000000000000000000000000000000000", "ff/ffffffffffffffffffffffffffffffffffffff"
	testutil.GitRepo(t, dir, []testutil.GitCommit{
		{Set: map[string]string{p1: msg("one")}},
		{Set: map[string]string{p2: msg("two"), p3: msg("three")}},
		{Delete: []string{p3}},
		{Set: map[string]string{p1: msg("one-edited")}}, // replaced: the old one is gone
	})
	ids, _, r := read(t, dir, nil)
	if got := strings.Join(ids, " "); got != "two@x one-edited@x" {
		t.Errorf("v1: %q", got)
	}
	if !strings.Contains(r.FormatReason(), "v1 repository") {
		t.Errorf("reason %q", r.FormatReason())
	}
}

// TestNotInbox: a git repository of other files, and a folder, are not
// public-inbox archives.
func TestNotInbox(t *testing.T) {
	testutil.NeedGit(t)
	dir := filepath.Join(t.TempDir(), "code.git")
	testutil.GitRepo(t, dir, []testutil.GitCommit{{Set: map[string]string{"README": "hello\n", "m": "x"}}})
	r, err := mailbox.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if r.Format() == mailbox.FormatPublicInbox {
		t.Errorf("a repository of code read as %s", r.Format())
	}
	if _, err := mailbox.Open(dir, &mailbox.Options{Format: mailbox.FormatPublicInbox}); err == nil || !strings.Contains(err.Error(), "not a public-inbox archive") {
		t.Errorf("forced: %v", err)
	}
}

// TestMissingAndDamaged: a blob that is missing and one that is damaged
// come as messages with one problem naming them; the others are read.
func TestMissingAndDamaged(t *testing.T) {
	testutil.NeedGit(t)
	dir := filepath.Join(t.TempDir(), "0.git")
	var cs []testutil.GitCommit
	for i := range 6 {
		cs = append(cs, testutil.GitCommit{Set: map[string]string{"m": msg(fmt.Sprint("m", i))}})
	}
	testutil.GitRepo(t, dir, cs)
	testutil.GitLoose(t, dir)
	blob := func(i int) string { return testutil.Git(t, dir, "rev-parse", fmt.Sprintf("HEAD~%d:m", 5-i)) }
	missing, damaged := blob(1), blob(3)
	if err := os.Remove(testutil.GitObjectPath(dir, missing)); err != nil {
		t.Fatal(err)
	}
	p := testutil.GitObjectPath(dir, damaged)
	os.Chmod(p, 0o644)
	if err := os.WriteFile(p, []byte("x\x9c not zlib at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	// cut short: cat-file gives its header, then dies; a new one is
	// started for the blobs after it
	cut := blob(4)
	p = testutil.GitObjectPath(dir, cut)
	z, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, 0o644)
	if err := os.WriteFile(p, z[:len(z)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	ids, msgs, _ := read(t, dir, nil)
	if got := strings.Join(ids, " "); got != "m0@x  m2@x   m5@x" {
		t.Errorf("messages %q", got)
	}
	for i, want := range map[int]string{1: missing + " is missing", 3: damaged + " is damaged", 4: cut + " is damaged"} {
		m := msgs[i]
		if m.Blob != want[:len(missing)] || len(m.Problems) != 1 || !errors.Is(m.Problems[0], mailbox.ErrUnreadable) || !strings.Contains(m.Problems[0].Msg, want) {
			t.Errorf("message %d: blob %s problems %v", i, m.Blob, m.Problems)
		}
	}
}

// TestEpochSince: with Options.EpochSince only the commits after the
// commit it gives are read; the head itself passes the epoch over.
func TestEpochSince(t *testing.T) {
	testutil.NeedGit(t)
	dir := t.TempDir()
	v2(t, dir)
	e0, e1 := filepath.Join(dir, "git", "0.git"), filepath.Join(dir, "git", "1.git")
	first := testutil.Git(t, e1, "rev-parse", "HEAD~2")
	var reads []string
	o := &mailbox.Options{
		EpochSince: func(repo, head string) string {
			if repo == e0 {
				return head
			}
			return first
		},
		OnFile: func(f mailbox.FileRead) {
			reads = append(reads, filepath.Base(f.Path)+" since "+f.Since[:min(7, len(f.Since))])
		},
	}
	ids, _, _ := read(t, dir, o)
	if got := strings.Join(ids, " "); got != "f@x" {
		t.Errorf("messages after %s: %q", first, got)
	}
	if got := strings.Join(reads, "|"); got != "1.git since "+first[:7]+"|2.git since " {
		t.Errorf("OnFile %q", got)
	}
	// a commit that is not in the epoch: all of it
	o.EpochSince = func(repo, head string) string { return strings.Repeat("1", 40) }
	ids, _, _ = read(t, e1, o)
	if got := strings.Join(ids, " "); got != "e@x f@x" {
		t.Errorf("unknown commit: %q", got)
	}
}

// TestBrokenHistory: an epoch whose history git cannot walk (a commit
// missing) comes as a message with the problem; the next epoch is read.
func TestBrokenHistory(t *testing.T) {
	testutil.NeedGit(t)
	dir := t.TempDir()
	e0, e1 := filepath.Join(dir, "git", "0.git"), filepath.Join(dir, "git", "1.git")
	ids := testutil.GitRepo(t, e0, []testutil.GitCommit{{Set: map[string]string{"m": msg("a")}}, {Set: map[string]string{"m": msg("b")}}})
	testutil.GitRepo(t, e1, []testutil.GitCommit{{Set: map[string]string{"m": msg("c")}}})
	testutil.GitLoose(t, e0)
	if err := os.Remove(testutil.GitObjectPath(e0, ids[0])); err != nil {
		t.Fatal(err)
	}
	got, msgs, _ := read(t, dir, nil)
	if len(msgs) == 0 || msgs[len(msgs)-1].MessageID != "c@x" {
		for _, m := range msgs {
			t.Logf("%s %s %v", m.Path, m.Blob, m.Problems)
		}
		t.Fatalf("messages %q", got)
	}
	broken := 0
	for _, m := range msgs[:len(msgs)-1] {
		if m.Blob == "" && len(m.Problems) == 1 && errors.Is(m.Problems[0], mailbox.ErrUnreadable) && strings.Contains(m.Problems[0].Msg, "git ") {
			broken++
		}
	}
	if broken != 1 {
		t.Errorf("epoch 0: %d messages with git's failure: %q %v", broken, got, msgs[0].Problems)
	}
}

// TestFolderOfInboxes: a folder holding archives and other files reads
// each archive as one (its git files are not messages) and each file.
func TestFolderOfInboxes(t *testing.T) {
	testutil.NeedGit(t)
	dir := t.TempDir()
	v2(t, filepath.Join(dir, "list-a"))
	testutil.GitRepo(t, filepath.Join(dir, "list-b.git"), []testutil.GitCommit{{Set: map[string]string{"ab/01234567890123456789012345678901234567": msg("v1")}}})
	os.WriteFile(filepath.Join(dir, "note.eml"), []byte(msg("file")), 0o644)
	ids, msgs, r := read(t, dir, nil)
	if got := strings.Join(ids, " "); got != "file@x a@x b@x c@x e@x f@x v1@x" {
		t.Errorf("messages %q", got)
	}
	for _, m := range msgs {
		if len(m.Problems) > 0 {
			t.Errorf("%s: %v", m.Path, m.Problems)
		}
	}
	if r.Format() != mailbox.FormatFolder {
		t.Errorf("format %s", r.Format())
	}
}

// TestLongBlob: a blob over Options.MaxMessageSize is read as a long
// message file is (its problem said), and the blobs after it are read
// whole.
func TestLongBlob(t *testing.T) {
	testutil.NeedGit(t)
	dir := filepath.Join(t.TempDir(), "0.git")
	long := msg("long") + strings.Repeat("filler line of the long message\n", 200)
	testutil.GitRepo(t, dir, []testutil.GitCommit{
		{Set: map[string]string{"m": long}},
		{Set: map[string]string{"m": msg("after")}},
	})
	ids, msgs, _ := read(t, dir, &mailbox.Options{MaxMessageSize: 1024})
	if got := strings.Join(ids, " "); got != "long@x after@x" {
		t.Fatalf("messages %q", got)
	}
	if m := msgs[0]; m.Length != int64(len(long)) || len(m.Problems) == 0 || !errors.Is(m.Problems[0], mailbox.ErrTooLong) || m.Blob == "" {
		t.Errorf("long: length %d of %d, blob %q, problems %v", m.Length, len(long), m.Blob, m.Problems)
	}
	if m := msgs[1]; string(m.Raw) != msg("after") || len(m.Problems) != 0 {
		t.Errorf("after: %q %v", m.Raw, m.Problems)
	}
}

// TestSHA256: a repository of SHA-256 object ids is read the same.
func TestSHA256(t *testing.T) {
	testutil.NeedGit(t)
	dir := filepath.Join(t.TempDir(), "0.git")
	testutil.Git(t, "", "init", "-q", "--bare", "--object-format=sha256", "-b", "master", dir)
	testutil.GitRepo(t, dir, []testutil.GitCommit{{Set: map[string]string{"m": msg("a")}}, {Set: map[string]string{"m": msg("b")}}})
	ids, msgs, _ := read(t, dir, nil)
	if got := strings.Join(ids, " "); got != "a@x b@x" || len(msgs[1].Blob) != 64 || msgs[1].Blob != testutil.Git(t, dir, "rev-parse", "HEAD:m") {
		t.Errorf("messages %q, blob %q", got, msgs[len(msgs)-1].Blob)
	}
}
