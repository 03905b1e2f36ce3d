package main

import (
	"bytes"
	"database/sql"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkscan/linkscan/internal/corpus"
)

// runIn runs the command line args in a child process (the test binary
// as linkscan) in dir and returns its exit status and both outputs.
func runIn(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	cmd := startIn(t, dir, args...)
	cmd.Wait()
	return cmd.ProcessState.ExitCode(), cmd.Stdout.(*bytes.Buffer).String(), cmd.Stderr.(*bytes.Buffer).String()
}

// startIn starts the command line args in a child process in dir, its
// outputs kept in buffers.
func startIn(t *testing.T, dir string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LINKSCAN_TEST_MAIN="+strings.Join(args, "\x1f"))
	cmd.Stdout, cmd.Stderr = &bytes.Buffer{}, &bytes.Buffer{}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// killWhenBegun kills (SIGKILL) the index run cmd as soon as the index
// file db shows a file or directory it began and has not ended, and
// reports whether it did so before the run ended by itself.
func killWhenBegun(t *testing.T, cmd *exec.Cmd, db string) bool {
	t.Helper()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	deadline := time.Now().Add(2 * time.Minute) // a guard against a hang, not a measurement
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return false
		default:
		}
		if incompleteRows(db) > 0 {
			cmd.Process.Kill()
			<-done
			return true
		}
		time.Sleep(2 * time.Millisecond)
	}
	cmd.Process.Kill()
	<-done
	t.Fatal("the index run never began a file")
	return false
}

// incompleteRows returns the number of files (and directories) the index
// file db holds as begun and not ended; 0 when it cannot be read yet.
func incompleteRows(db string) int {
	if _, err := os.Stat(db); err != nil {
		return 0
	}
	d, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		return 0
	}
	defer d.Close()
	var n int
	if d.QueryRow(`SELECT count(*) FROM files WHERE done = 0`).Scan(&n) != nil {
		return 0
	}
	return n
}

// idMbox writes dir/name: a message <first@x>, about size bytes of
// generated mail, and a message <last@x>.
func idMbox(t *testing.T, dir, name string, size int64) string {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("From a@x Mon Jan  1 00:00:00 2024\nMessage-ID: <first@x>\n\nthe first\n\n")
	if err := corpus.Write(&b, size, 7); err != nil {
		t.Fatal(err)
	}
	b.WriteString("\nFrom a@x Mon Jan  1 00:00:00 2024\nMessage-ID: <last@x>\n\nthe last\n")
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// refsMbox writes dir/b.mbox, a message whose body links to each of ids
// (mid:ID).
func refsMbox(t *testing.T, dir string, ids ...string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("From b@x Mon Jan  1 00:00:00 2024\nMessage-ID: <refs@x>\n\n")
	for _, id := range ids {
		b.WriteString("see mid:" + id + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "b.mbox"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// resolveB runs resolve --index i.db b.mbox in dir and returns its exit
// status, standard error and each reference's status and target as
// "STATUS FILE OFFSET", by URL.
func resolveB(t *testing.T, dir string) (int, string, map[string]string) {
	t.Helper()
	code, out, errs := runIn(t, dir, "resolve", "--index", "i.db", "--no-implicit", "--format", "csv", "b.mbox")
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("resolve: %v; output %q, stderr %q", err, out, errs)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	got := map[string]string{}
	for _, r := range rows[1:] {
		got[r[col["url"]]] = strings.TrimSpace(r[col["status"]] + " " + r[col["target_file"]] + " " + r[col["target_offset"]])
	}
	return code, errs, got
}

// offsetOf returns the offset of the "From " line of the message with
// Message-ID <id> in the mbox file.
func offsetOf(t *testing.T, file, id string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte("Message-ID: <"+id+">"))
	j := bytes.LastIndex(b[:max(i, 0)], []byte("From "))
	if i < 0 || j < 0 {
		t.Fatalf("no message <%s> in %s", id, file)
	}
	return j
}

// TestIndexGoneFile: a file indexed into an index file and deleted since
// is never a target: its references are status error, said on standard
// error, exit 1 (they were "resolved" to the deleted file, exit 0).
func TestIndexGoneFile(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.mbox")
	os.WriteFile(a, []byte("From a@x Mon Jan  1 00:00:00 2024\nMessage-ID: <m1@x>\n\none\n"), 0o644)
	refsMbox(t, dir, "m1@x")
	if code, _, errs := runIn(t, dir, "index", "--index", "i.db", "a.mbox"); code != 0 {
		t.Fatalf("index: exit %d, %s", code, errs)
	}
	if code, errs, got := resolveB(t, dir); code != 0 || got["mid:m1@x"] != "resolved a.mbox 0" {
		t.Fatalf("before: exit %d, %v, stderr %q", code, got, errs)
	}
	os.Remove(a)
	code, errs, got := resolveB(t, dir)
	if code != exitFail || got["mid:m1@x"] != "error" || !strings.Contains(errs, "a.mbox: indexed, and gone since") {
		t.Errorf("after a.mbox was deleted: exit %d, %v, stderr %q", code, got, errs)
	}
}

// TestIndexRewrittenFile: a file replaced by its rewritten version (new
// offsets) since it was indexed is indexed again before it is answered
// from, said once: every target has the new offsets (they had the old
// ones). So too when a run that indexed the new version was killed
// before it finished.
func TestIndexRewrittenFile(t *testing.T) {
	rules, err := filepath.Abs(filterRules)
	if err != nil {
		t.Fatal(err)
	}
	for _, killed := range []bool{false, true} {
		t.Run(fmt.Sprintf("killed=%v", killed), func(t *testing.T) {
			dir := t.TempDir()
			a := filepath.Join(dir, "a.mbox")
			var b strings.Builder
			var ids []string
			for i := range 40 {
				id := fmt.Sprintf("m%d@x", i)
				ids = append(ids, id)
				fmt.Fprintf(&b, "From a@x Mon Jan  1 00:00:00 2024\nMessage-ID: <%s>\n\nsee https://nam02.safelinks.protection.outlook.com/?url=http%%3A%%2F%%2Fexample.org%%2F%d&data=x&reserved=0\n\n", id, i)
			}
			os.WriteFile(a, []byte(b.String()), 0o644)
			refsMbox(t, dir, ids...)
			if code, _, errs := runIn(t, dir, "index", "--index", "i.db", "a.mbox"); code != 0 {
				t.Fatalf("index: exit %d, %s", code, errs)
			}
			if code, _, errs := runIn(t, dir, "rewrite", "--rules", rules, "--in-place", "a.mbox"); code != 0 {
				t.Fatalf("rewrite: exit %d, %s", code, errs)
			}
			if now, _ := os.ReadFile(a); len(now) >= b.Len() {
				t.Fatalf("the rewrite made a.mbox no shorter: %d bytes, was %d", len(now), b.Len())
			}
			if killed {
				// a big file after the rewritten one, in the same run:
				// killed once it is begun, the rewritten file ended
				idMbox(t, dir, "big.mbox", 24<<20)
				if !killWhenBegun(t, startIn(t, dir, "index", "--index", "i.db", "big.mbox"), filepath.Join(dir, "i.db")) {
					t.Fatal("the index run ended before it was killed")
				}
			}
			code, errs, got := resolveB(t, dir)
			wrong := 0
			for _, id := range ids {
				if want := "resolved a.mbox " + strconv.Itoa(offsetOf(t, a, id)); got["mid:"+id] != want {
					wrong++
					if wrong < 3 {
						t.Errorf("mid:%s: %q, want %q", id, got["mid:"+id], want)
					}
				}
			}
			if wrong > 0 || code != 0 || strings.Count(errs, "a.mbox: changed since it was indexed: indexed again") != 1 {
				t.Errorf("%d of %d targets wrong; exit %d, stderr %q", wrong, len(ids), code, errs)
			}
		})
	}
}

// TestIndexKilled: references that an index file does not hold, when a
// run that built it was killed in the middle of a file or of a Maildir
// or MH walk, are status error, not dangling, said on standard error, exit 1;
// what it holds resolves. (A killed Maildir walk left no trace at all,
// and a killed file gave dangling, exit 0.)
func TestIndexKilled(t *testing.T) {
	for _, kind := range []string{"mbox", "maildir", "mh"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			input := "big.mbox"
			switch kind {
			case "mbox":
				idMbox(t, dir, input, 24<<20)
			case "maildir":
				input = "Maildir"
				for _, s := range []string{"cur", "new", "tmp"} {
					os.MkdirAll(filepath.Join(dir, input, s), 0o755)
				}
				for i := range 4000 {
					os.WriteFile(filepath.Join(dir, input, "cur", fmt.Sprintf("%05d:2,S", i)),
						fmt.Appendf(nil, "From: a@x\nMessage-ID: <w%d@x>\n\nbody %d\n", i, i), 0o644)
				}
			case "mh":
				input = "inbox"
				os.MkdirAll(filepath.Join(dir, input), 0o755)
				os.WriteFile(filepath.Join(dir, input, ".mh_sequences"), []byte("unseen: 1-4000\n"), 0o644)
				for i := range 4000 {
					os.WriteFile(filepath.Join(dir, input, strconv.Itoa(i+1)),
						fmt.Appendf(nil, "From: a@x\nMessage-ID: <w%d@x>\n\nbody %d\n", i, i), 0o644)
				}
			}
			os.WriteFile(filepath.Join(dir, "c.mbox"), []byte("From a@x Mon Jan  1 00:00:00 2024\nMessage-ID: <kept@x>\n\nkept\n"), 0o644)
			if code, _, errs := runIn(t, dir, "index", "--index", "i.db", "c.mbox"); code != 0 {
				t.Fatalf("index: exit %d, %s", code, errs)
			}
			refsMbox(t, dir, "kept@x", "last@x", "w3999@x")
			if !killWhenBegun(t, startIn(t, dir, "index", "--index", "i.db", input), filepath.Join(dir, "i.db")) {
				t.Fatal("the index run ended before it was killed")
			}
			code, errs, got := resolveB(t, dir)
			if got["mid:kept@x"] != "resolved c.mbox 0" || got["mid:last@x"] != "error" || got["mid:w3999@x"] != "error" {
				t.Errorf("statuses %v", got)
			}
			if code != exitFail || !strings.Contains(errs, "not completely indexed") || !strings.Contains(errs, "references it does not hold get status error") {
				t.Errorf("exit %d, stderr %q", code, errs)
			}
		})
	}
}

// TestIndexConcurrent: two index runs on one index file and one archive
// at once: the later waits for the earlier, saying so, and passes over
// the file it indexed; both exit 0 and every message is there once (the
// later one failed, "another run began indexing this file since"). Both
// are held back until both wait for the index, by a write transaction of
// the test's own: either may go first.
func TestIndexConcurrent(t *testing.T) {
	for _, size := range []int64{8 << 20, 80 << 20} { // one transaction, and several
		if size > 8<<20 && testing.Short() {
			continue
		}
		t.Run(strconv.FormatInt(size>>20, 10)+"MiB", func(t *testing.T) {
			dir := t.TempDir()
			idMbox(t, dir, "big.mbox", size)
			os.WriteFile(filepath.Join(dir, "c.mbox"), []byte("From a@x Mon Jan  1 00:00:00 2024\nMessage-ID: <c@x>\n\nc\n"), 0o644)
			if code, _, errs := runIn(t, dir, "index", "--index", "i.db", "c.mbox"); code != 0 {
				t.Fatalf("index: exit %d, %s", code, errs)
			}
			hold, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "i.db")+"?_txlock=immediate")
			if err != nil {
				t.Fatal(err)
			}
			defer hold.Close()
			tx, err := hold.Begin()
			if err != nil {
				t.Fatal(err)
			}
			var runs [2]*exec.Cmd
			var errb [2]*lockedBuffer
			for i := range runs {
				errb[i] = &lockedBuffer{}
				runs[i] = exec.Command(os.Args[0], "-test.run=^$")
				runs[i].Dir = dir
				runs[i].Env = append(os.Environ(), "LINKSCAN_TEST_MAIN="+strings.Join([]string{"index", "--index", "i.db", "--format", "json", "big.mbox"}, "\x1f"))
				runs[i].Stdout, runs[i].Stderr = &bytes.Buffer{}, errb[i]
				if err := runs[i].Start(); err != nil {
					t.Fatal(err)
				}
			}
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
				if strings.Contains(errb[0].String(), "waiting for its turn") && strings.Contains(errb[1].String(), "waiting for its turn") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the runs do not wait for the index: %q, %q", errb[0], errb[1])
				}
			}
			tx.Rollback()
			var added [2]string
			for i, c := range runs {
				c.Wait()
				out := c.Stdout.(*bytes.Buffer).String()
				if c.ProcessState.ExitCode() != 0 {
					t.Fatalf("run %d: exit %d, stderr %q", i, c.ProcessState.ExitCode(), errb[i])
				}
				added[i] = out[strings.Index(out, `"added"`):]
				added[i] = added[i][:strings.Index(added[i], ",")]
			}
			later := 1
			if added[0] == `"added": 0` {
				later = 0
			}
			if added[later] != `"added": 0` || !strings.Contains(errb[later].String(), "big.mbox: indexed by another run meanwhile: passed over") {
				t.Errorf("the later run: stderr %q, %s; the other %s", errb[later], added[later], added[1-later])
			}
			_, st, _ := runIn(t, dir, "index", "--index", "i.db", "--format", "json", "big.mbox", "c.mbox")
			n, _ := strconv.Atoi(strings.TrimPrefix(added[1-later], `"added": `))
			if !strings.Contains(st, `"messages": `+strconv.Itoa(n+1)+",") || !strings.Contains(st, `"incomplete_files": 0,`) {
				t.Errorf("the index after both: %s; the earlier run %s", st, added[1-later])
			}
		})
	}
}

// lockedBuffer is a bytes.Buffer that a test may read while a child
// process writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
