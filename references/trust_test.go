package references

import (
	"bufio"
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/linkscan/linkscan/internal/corpus"
	"github.com/linkscan/linkscan/internal/testutil"
	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/uri"
)

// The tests of this file re-execute the test binary as a child that
// indexes an archive (TestMain below): killed in the middle, or two at
// once on one index file.
const (
	childEnv      = "LINKSCAN_REFERENCES_CHILD" // "kill" or "index"
	childDBEnv    = "LINKSCAN_REFERENCES_DB"
	childInEnv    = "LINKSCAN_REFERENCES_INPUT"
	childBatchEnv = "LINKSCAN_REFERENCES_BATCH"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(child(mode))
	}
	os.Exit(m.Run())
}

// child indexes the input into the database. In mode "kill" it prints
// "committed" after its third batch and then waits to be killed; in mode
// "index" it indexes to the end and prints its counts.
func child(mode string) int {
	batch, _ := strconv.Atoi(os.Getenv(childBatchEnv))
	s, err := OpenSQLiteOptions(os.Getenv(childDBEnv), &SQLiteOptions{BatchSize: batch, BusyTimeout: time.Minute})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	batches := 0
	if mode == "kill" {
		s.afterBatch = func() {
			if batches++; batches == 3 {
				fmt.Println("committed")
				// the parent kills us here, in the middle of the file;
				// should it die first, its end of our standard input
				// closes and we go too, rather than wait for ever
				io.Copy(io.Discard, os.Stdin)
				os.Exit(2)
			}
		}
	}
	ix := &Indexer{Store: s}
	st, err := ix.Add(os.Getenv(childInEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		if errors.Is(err, ErrSuperseded) {
			return 3
		}
		return 1
	}
	if err := s.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if mode == "kill" {
		fmt.Fprintln(os.Stderr, "child: reached the end without being killed")
		return 2
	}
	fmt.Printf("added %d\n", st.Messages)
	return 0
}

func childCmd(t *testing.T, mode, db, input string, batch int) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode, childDBEnv+"="+db, childInEnv+"="+input, childBatchEnv+"="+strconv.Itoa(batch))
	return cmd
}

// genMbox writes a generated mbox of about size bytes.
func genMbox(t *testing.T, dir string, size int64, seed uint64) string {
	t.Helper()
	p := filepath.Join(dir, fmt.Sprintf("gen-%d.mbox", seed))
	var b bytes.Buffer
	if err := corpus.Write(&b, size, seed); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// genMaildir writes a Maildir of n messages with distinct ids.
func genMaildir(t *testing.T, dir string, n int) string {
	t.Helper()
	root := filepath.Join(dir, "maildir")
	for _, d := range []string{"cur", "new", "tmp"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		msg := fmt.Sprintf("From: a@example.org\nMessage-ID: <m%d@maildir.example>\nSubject: %d\n\nbody %d\n", i, i, i)
		if err := os.WriteFile(filepath.Join(root, "cur", fmt.Sprintf("%06d.1.host:2,S", i)), []byte(msg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// idCounts reads the input and counts its messages by Message-ID ("" for
// those without one).
func idCounts(t *testing.T, input string) (map[string]int, int) {
	t.Helper()
	r, err := mailbox.Open(input, &mailbox.Options{SkipText: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ids := map[string]int{}
	n := 0
	for {
		m, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if m != nil {
			ids[m.MessageID]++
			n++
		}
	}
	return ids, n
}

// checkExactlyOnce checks that the store holds every message of the
// inputs exactly as often as they contain it, and nothing more.
func checkExactlyOnce(t *testing.T, s Store, inputs ...string) {
	t.Helper()
	want := map[string]int{}
	total := 0
	for _, in := range inputs {
		ids, n := idCounts(t, in)
		for id, c := range ids {
			want[id] += c
		}
		total += n
	}
	st, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Messages != total || st.Incomplete != 0 {
		t.Errorf("index holds %d messages (%d files incomplete), want %d and 0", st.Messages, st.Incomplete, total)
	}
	bad := 0
	for id, c := range want {
		if id == "" {
			continue
		}
		locs, err := s.Messages(id)
		if err != nil {
			t.Fatal(err)
		}
		if len(locs) != c && bad < 5 {
			bad++
			t.Errorf("%s: %d locations, want %d", id, len(locs), c)
		}
	}
}

// TestKilledIndex kills an index run (SIGKILL) after it committed some
// batches of a file: the next run must not take the file for indexed,
// must read it again, and must hold each message exactly once.
func TestKilledIndex(t *testing.T) {
	for _, kind := range []string{"mbox", "maildir"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "index.db")
			var input string
			if kind == "mbox" {
				input = genMbox(t, dir, 1<<20, 7)
			} else {
				input = genMaildir(t, dir, 150)
			}
			cmd := childCmd(t, "kill", db, input, 20)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			in, err := cmd.StdinPipe() // held open until the kill: the child waits on it
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line := make(chan string, 1)
			go func() {
				l, _ := bufio.NewReader(out).ReadString('\n')
				line <- l
			}()
			select {
			case l := <-line:
				if l != "committed\n" {
					cmd.Process.Kill()
					cmd.Wait()
					t.Fatalf("child said %q; stderr: %s", l, stderr.String())
				}
			case <-time.After(5 * time.Minute): // a guard against a hang, not a measurement
				cmd.Process.Kill()
				t.Fatal("the child never committed")
			}
			if err := cmd.Process.Kill(); err != nil { // SIGKILL
				t.Fatal(err)
			}
			cmd.Wait()

			var notices []string
			s, err := OpenSQLiteOptions(db, &SQLiteOptions{Notice: func(m string) { notices = append(notices, m) }})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			joined := strings.Join(notices, "\n")
			if !strings.Contains(joined, "not closed cleanly") || !strings.Contains(joined, "not completely indexed") {
				t.Errorf("notices on opening the index of a killed run: %q", notices)
			}
			st, _ := s.Stats()
			if st.Messages < 60 || st.Incomplete == 0 {
				t.Errorf("after the kill: %+v, want at least 3 batches of 20 committed and a file incomplete", st)
			}
			if kind == "mbox" {
				fi, _ := os.Stat(input)
				if same, err := s.Unchanged(input, fi.Size(), fi.ModTime()); same || err != nil {
					t.Errorf("the killed run's file is taken for indexed (%v)", err)
				}
			}
			ix := &Indexer{Store: s}
			res, err := ix.Add(input)
			if err != nil {
				t.Fatal(err)
			}
			if res.Messages == 0 {
				t.Errorf("nothing read again: %+v", res)
			}
			checkExactlyOnce(t, s, input)
			if res, _ := ix.Add(input); res.Messages != 0 || res.Skipped == 0 {
				t.Errorf("third run read again: %+v", res)
			}
		})
	}
}

// failAfter opens input through a reader that fails after n bytes.
func failAfter(n int64) func(string, *mailbox.Options) (*mailbox.Reader, error) {
	return func(name string, o *mailbox.Options) (*mailbox.Reader, error) {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		r := io.MultiReader(io.LimitReader(f, n), iotest.ErrReader(errors.New("device gone")))
		return mailbox.NewReader(r, name, o)
	}
}

// TestFailedIndex: an index run whose input fails in the middle leaves
// the file to be read again, in both stores.
func TestFailedIndex(t *testing.T) {
	dir := t.TempDir()
	input := genMbox(t, dir, 256<<10, 3)
	stores(t, func(t *testing.T, s Store) {
		if sq, ok := s.(*SQLite); ok {
			sq.opts.BatchSize = 10
		}
		ix := &Indexer{Store: s, Open: failAfter(100 << 10)}
		res, err := ix.Add(input)
		if err == nil || res.Messages == 0 {
			t.Fatalf("the failing read: %+v, %v", res, err)
		}
		fi, _ := os.Stat(input)
		if same, _ := s.Unchanged(input, fi.Size(), fi.ModTime()); same {
			t.Fatal("a file whose read failed is taken for indexed")
		}
		if st, _ := s.Stats(); st.Incomplete != 1 {
			t.Errorf("incomplete files %d, want 1", st.Incomplete)
		}
		ix.Open = nil
		if _, err := ix.Add(input); err != nil {
			t.Fatal(err)
		}
		if _, ok := s.(*SQLite); ok { // memory keeps copies when a file is added twice
			checkExactlyOnce(t, s, input)
		}
		if same, _ := s.Unchanged(input, fi.Size(), fi.ModTime()); !same {
			t.Error("a completely indexed file is not unchanged")
		}
	})
}

// TestUnreadableMessageFile: a message file of a Maildir that cannot be
// read is not recorded as indexed.
func TestUnreadableMessageFile(t *testing.T) {
	if testutil.AsNobody(t) { // root reads files whatever their mode
		return
	}
	root := genMaildir(t, t.TempDir(), 3)
	locked := filepath.Join(root, "cur", "000001.1.host:2,S")
	os.Chmod(locked, 0)
	defer os.Chmod(locked, 0o644)
	s, err := OpenSQLite(filepath.Join(t.TempDir(), "i.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ix := &Indexer{Store: s}
	if _, err := ix.Add(root); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(locked)
	if same, _ := s.Unchanged(locked, fi.Size(), fi.ModTime()); same {
		t.Error("an unreadable file is recorded as indexed")
	}
	os.Chmod(locked, 0o644)
	if res, _ := ix.Add(root); res.Messages != 1 || res.Skipped != 2 {
		t.Errorf("second run: %+v, want the one file read again", res)
	}
	if l, _ := s.Messages("m1@maildir.example"); len(l) != 1 {
		t.Errorf("the file read again: %d locations", len(l))
	}
}

// TestConcurrentWriters runs two index processes on one index file at
// once, on different archives and on the same one: both finish (the
// later one on the same file waits for the other and passes over it),
// and every message is there exactly once.
func TestConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	a := genMbox(t, dir, 512<<10, 11)
	b := genMbox(t, dir, 512<<10, 12)
	run := func(t *testing.T, db string, inputs ...string) []int {
		var cmds []*exec.Cmd
		var errs []*bytes.Buffer
		for _, in := range inputs {
			c := childCmd(t, "index", db, in, 10)
			e := &bytes.Buffer{}
			c.Stderr = e
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			cmds = append(cmds, c)
			errs = append(errs, e)
		}
		var codes []int
		for i, c := range cmds {
			done := make(chan error, 1)
			go func() { done <- c.Wait() }()
			select {
			case <-done:
			case <-time.After(5 * time.Minute): // a guard against a hang, not a measurement
				for _, c := range cmds {
					c.Process.Kill()
				}
				t.Fatal("an indexer hangs")
			}
			codes = append(codes, c.ProcessState.ExitCode())
			if code := c.ProcessState.ExitCode(); code != 0 && code != 3 {
				t.Errorf("indexer %d: exit %d: %s", i, code, errs[i])
			}
		}
		return codes
	}
	t.Run("different-files", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "index.db")
		// a reader at the same time: WAL lets it read while they write
		r, err := OpenSQLite(db)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		readErr := make(chan error, 1)
		go func() {
			defer close(readErr)
			for {
				select {
				case <-done:
					return
				default:
				}
				if _, err := r.Stats(); err != nil {
					readErr <- err
					return
				}
			}
		}()
		codes := run(t, db, a, b)
		close(done)
		if err := <-readErr; err != nil {
			t.Errorf("a reader during two writers: %v", err)
		}
		r.Close()
		if codes[0] != 0 || codes[1] != 0 {
			t.Fatalf("exit codes %v", codes)
		}
		s, err := OpenSQLite(db)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		checkExactlyOnce(t, s, a, b)
	})
	t.Run("same-file", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "index.db")
		codes := run(t, db, a, a)
		if codes[0] != 0 || codes[1] != 0 {
			t.Fatalf("exit codes %v: the later run must wait for the file, then pass over it", codes)
		}
		s, err := OpenSQLite(db)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		checkExactlyOnce(t, s, a)
	})
}

// indexed makes an index of the refs test data and closes it.
func indexed(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "index.db")
	s, err := OpenSQLite(db)
	if err != nil {
		t.Fatal(err)
	}
	index(t, s, refs+"list.mbox", refs+"maildir")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return db
}

func openNotices(db string) ([]string, error) {
	var notices []string
	s, err := OpenSQLiteOptions(db, &SQLiteOptions{Notice: func(m string) { notices = append(notices, m) }})
	if err == nil {
		err = s.Close()
	}
	return notices, err
}

// TestCleanClose: an index closed cleanly is opened without a check; one
// changed since is checked.
func TestCleanClose(t *testing.T) {
	db := indexed(t)
	if n, err := openNotices(db); err != nil || len(n) != 0 {
		t.Fatalf("a cleanly closed index: %v %q", err, n)
	}
	// a reader's run leaves it clean too
	if n, err := openNotices(db); err != nil || len(n) != 0 {
		t.Fatalf("after a run that changed nothing: %v %q", err, n)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(db, old, old)
	n, err := openNotices(db)
	if err != nil || len(n) != 1 || !strings.Contains(n[0], "quick_check found no damage") {
		t.Fatalf("a changed index: %v %q", err, n)
	}
	if n, err := openNotices(db); err != nil || len(n) != 0 {
		t.Fatalf("once checked, the index is clean again: %v %q", err, n)
	}
}

// TestDamagedIndex: an index with zeroed pages or random bytes is
// refused with an error naming the file, never read as if whole.
func TestDamagedIndex(t *testing.T) {
	for _, tt := range []struct {
		name   string
		damage func(b []byte)
	}{
		{"zeroed-pages", func(b []byte) { clear(b[4096 : 4*4096]) }},
		{"random-header", func(b []byte) {
			for i := range 100 {
				b[i] = byte(i*131 + 7)
			}
		}},
		{"random-pages", func(b []byte) {
			x := uint32(12345)
			for i := 4096; i < len(b); i++ {
				x = x*1664525 + 1013904223
				b[i] = byte(x >> 24)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := indexed(t)
			b, err := os.ReadFile(db)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) < 5*4096 {
				t.Fatalf("index of %d bytes: too small to damage", len(b))
			}
			tt.damage(b)
			os.WriteFile(db, b, 0o644)
			_, err = openNotices(db)
			if err == nil || !strings.Contains(err.Error(), db) {
				t.Fatalf("a damaged index opened: %v", err)
			}
		})
	}
}

// TestNotAnIndex: other SQLite databases, newer and older schemas.
func TestNotAnIndex(t *testing.T) {
	other := filepath.Join(t.TempDir(), "places.sqlite")
	d, _ := sql.Open("sqlite", other)
	d.Exec(`CREATE TABLE bookmarks(url TEXT)`)
	d.Close()
	if _, err := OpenSQLite(other); err == nil || !strings.Contains(err.Error(), "not a linkscan index") || !strings.Contains(err.Error(), other) {
		t.Errorf("another application's database: %v", err)
	}
	d, _ = sql.Open("sqlite", other)
	var n int
	d.QueryRow(`SELECT count(*) FROM sqlite_master`).Scan(&n)
	d.Close()
	if n != 1 {
		t.Errorf("the other database was changed: %d objects", n)
	}

	db := indexed(t)
	d, _ = sql.Open("sqlite", db)
	d.Exec(`UPDATE meta SET value = '3' WHERE key = 'schema'`)
	d.Close()
	if _, err := OpenSQLite(db); err == nil || !strings.Contains(err.Error(), "newer") || !strings.Contains(err.Error(), db) {
		t.Errorf("a newer schema: %v", err)
	}

	dir := t.TempDir()
	if _, err := OpenSQLite(dir); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("a directory: %v", err)
	}
	if _, err := OpenSQLite(filepath.Join(dir, "no/such/dir/i.db")); err == nil || !strings.Contains(err.Error(), "cannot open or create") {
		t.Errorf("a file in a missing directory: %v", err)
	}
}

// TestUpgradeV1: a schema 1 index (which could hold half-indexed files
// as complete) is upgraded, and its files are read again, not doubled.
func TestUpgradeV1(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "v1.db")
	mbox := filepath.Join(dir, "a.mbox")
	os.WriteFile(mbox, []byte("From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <one@x>\n\nbody\n\nFrom a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <two@x>\n\nbody\n"), 0o644)
	fi, _ := os.Stat(mbox)
	d, _ := sql.Open("sqlite", db)
	for _, q := range []string{
		`CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)`,
		`CREATE TABLE files(path TEXT PRIMARY KEY, size INTEGER, mtime INTEGER)`,
		`CREATE TABLE messages(id TEXT, synthetic INTEGER, file TEXT, offset INTEGER, name TEXT)`,
		`CREATE TABLE parts(id TEXT, cid TEXT, part TEXT, file TEXT, offset INTEGER, name TEXT)`,
		`CREATE TABLE articles(article TEXT, id TEXT, file TEXT, offset INTEGER, name TEXT)`,
		`CREATE TABLE groups(name TEXT, file TEXT)`,
		`CREATE TABLE hosts(name TEXT, file TEXT)`,
		`INSERT INTO meta VALUES ('schema', '1')`,
		// the lie of schema 1: the file recorded, one of its two messages committed
		fmt.Sprintf(`INSERT INTO files VALUES ('%s', %d, %d)`, mbox, fi.Size(), fi.ModTime().UnixNano()),
		fmt.Sprintf(`INSERT INTO messages VALUES ('one@x', 0, '%s', 0, '')`, mbox),
	} {
		if _, err := d.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	d.Close()
	var notices []string
	s, err := OpenSQLiteOptions(db, &SQLiteOptions{Notice: func(m string) { notices = append(notices, m) }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.Contains(strings.Join(notices, "\n"), "schema 1 upgraded") {
		t.Errorf("notices %q", notices)
	}
	res, err := (&Indexer{Store: s}).Add(mbox)
	if err != nil || res.Messages != 2 {
		t.Errorf("the file of a schema 1 index is not read again: %+v %v", res, err)
	}
	checkExactlyOnce(t, s, mbox)
}

// TestEmptyIndexFile: a zero-byte file is taken as a new index, and said.
func TestEmptyIndexFile(t *testing.T) {
	db := filepath.Join(t.TempDir(), "empty.db")
	os.WriteFile(db, nil, 0o644)
	n, err := openNotices(db)
	if err != nil || len(n) != 1 || !strings.Contains(n[0], "empty file (0 bytes)") || !strings.Contains(n[0], db) {
		t.Fatalf("a zero-byte index: %v %q", err, n)
	}
	if n, err := openNotices(db); err != nil || len(n) != 0 {
		t.Errorf("the index made in it: %v %q", err, n)
	}
}

// failingStore is a Store whose every lookup fails.
type failingStore struct{ *Memory }

var errLookup = errors.New("disk I/O error")

func (failingStore) Messages(string) ([]Location, error)      { return nil, errLookup }
func (failingStore) Parts(string, string) ([]Location, error) { return nil, errLookup }
func (failingStore) Article(string) ([]Location, error)       { return nil, errLookup }
func (failingStore) HasGroup(string) (bool, error)            { return false, errLookup }
func (failingStore) HasHost(string) (bool, error)             { return false, errLookup }

// TestLookupError: a lookup that fails is status error with the error,
// never dangling (nor external-server).
func TestLookupError(t *testing.T) {
	r := &Resolver{Store: failingStore{NewMemory()}}
	for _, link := range []string{
		"mid:a@b", "mid:a@b/c@d", "news:a@b", "news:comp.lang.go", "news://news.example/comp.lang.go",
		"nntp://news.example/comp.lang.go/1", "nntp://news.example/comp.lang.go",
	} {
		res, err := r.Resolve(link, nil)
		if res.Status != Error || !errors.Is(err, errLookup) || !errors.Is(err, mailbox.ErrUnreadable) {
			t.Errorf("%s: %s, %v; want status error and the lookup's error", link, res.Status, err)
		}
		u, _ := uri.Parse(link)
		if res2, _ := r.ResolveURL(u, nil); res2.Status != res.Status {
			t.Errorf("%s: ResolveURL %s, Resolve %s", link, res2.Status, res.Status)
		}
	}
	// a lookup that needs no index still resolves
	if res, err := r.Resolve("news:*", nil); res.Status != NotATarget || err != nil {
		t.Errorf("news:*: %s %v", res.Status, err)
	}
}

// TestSpill moves the index to a temporary file in the middle of an
// archive: every lookup answers as the memory store does, the stats
// agree, and Close removes the file.
func TestSpill(t *testing.T) {
	dir := t.TempDir()
	input := genMbox(t, dir, 2<<20, 9)
	mem := NewMemory()
	index(t, mem, input, refs+"list.mbox", refs+"maildir")
	full := mem.Size()
	tmp := t.TempDir()
	var notices []string
	sp := NewSpill(full/2, tmp, func(m string) { notices = append(notices, m) })
	index(t, sp, input, refs+"list.mbox", refs+"maildir")
	if !sp.Spilled() || len(notices) != 1 || !strings.Contains(notices[0], tmp) {
		t.Fatalf("not moved at half the memory: %v %q", sp.Spilled(), notices)
	}
	ms, _ := mem.Stats()
	ss, _ := sp.Stats()
	if ms != ss {
		t.Errorf("stats: memory %+v, spilled %+v", ms, ss)
	}
	ids, _ := idCounts(t, input)
	for _, f := range []string{refs + "list.mbox", refs + "maildir"} {
		more, _ := idCounts(t, f)
		for id := range more {
			ids[id]++
		}
	}
	for id := range ids {
		a, _ := mem.Messages(id)
		b, err := sp.Messages(id)
		if err != nil || fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%s: memory %v, spilled %v %v", id, a, b, err)
		}
	}
	rm := &Resolver{Store: mem, LocalHosts: []string{"news.test.invalid"}}
	rs := &Resolver{Store: sp, LocalHosts: []string{"news.test.invalid"}}
	for _, link := range []string{"mid:related@example.org/diagram@example.org", "mid:related@example.org/twice@example.org",
		"news:comp.infosystems.www", "nntp://news.test.invalid/comp.infosystems.www/1", "mid:copy@example.org"} {
		a, _ := rm.Resolve(link, nil)
		b, _ := rs.Resolve(link, nil)
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%s: memory %+v, spilled %+v", link, a, b)
		}
	}
	if err := sp.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestMemorySize: what Memory.Size accounts per message of a generated
// mbox stays within the target of 100 bytes (the heap figure is in
// BenchmarkMemoryBytesPerMessage).
func TestMemorySize(t *testing.T) {
	input := genMbox(t, t.TempDir(), 16<<20, 4)
	m := NewMemory()
	index(t, m, input)
	st, _ := m.Stats()
	if per := float64(m.Size()) / float64(st.Messages); per > 100 {
		t.Errorf("%.1f bytes per message (%d messages)", per, st.Messages)
	}
}

// TestWritersTakeTurns: a writer that commits batch after batch lets a
// second writer in between two batches (it pauses after each commit),
// and a writer kept out longer than its BusyTimeout gets an error
// saying the index is locked.
func TestWritersTakeTurns(t *testing.T) {
	db := filepath.Join(t.TempDir(), "index.db")
	a, err := OpenSQLiteOptions(db, &SQLiteOptions{BatchSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenSQLiteOptions(db, &SQLiteOptions{BusyTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := a.BeginFile("a.mbox", 1, time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	bDone := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		close(started)
		err := b.BeginFile("b.mbox", 1, time.Unix(1, 0))
		if err == nil {
			err = b.Commit()
		}
		bDone <- err
	}()
	<-started
	// a writes on, a message per transaction, until b had its turn. b
	// polls every millisecond and a pauses 3 ms after each commit: b gets
	// in after a commit or two (without the pause, after hundreds: a
	// begins again within microseconds). 100 leaves a wide margin for a
	// loaded machine.
	const most = 100
	turn := -1
writing:
	for n := range most {
		select {
		case err := <-bDone:
			if err != nil {
				t.Fatalf("the second writer: %v", err)
			}
			turn = n
			break writing
		default:
		}
		if err := a.Add(&Entry{ID: fmt.Sprintf("%d@a", n), Loc: Location{File: "a.mbox"}}); err != nil {
			t.Fatal(err)
		}
	}
	if turn < 0 {
		if err := <-bDone; err != nil {
			t.Fatal(err)
		}
		t.Fatalf("the second writer got no turn in %d commits of the first", most)
	}

	// a holds the write lock; c gives up after its timeout, saying why
	if err := a.Add(&Entry{ID: "held@a", Loc: Location{File: "a.mbox"}}); err != nil { // opens a transaction
		t.Fatal(err)
	}
	a.opts.BatchSize = 1 << 30
	a.Add(&Entry{ID: "held2@a", Loc: Location{File: "a.mbox"}})
	c, err := OpenSQLiteOptions(db, &SQLiteOptions{BusyTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.BeginFile("c.mbox", 1, time.Unix(1, 0)); err == nil || !strings.Contains(err.Error(), "locked by another process") || !strings.Contains(err.Error(), db) {
		t.Errorf("a writer kept out: %v", err)
	}
	if err := a.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := c.BeginFile("c.mbox", 1, time.Unix(1, 0)); err != nil {
		t.Errorf("after the other committed: %v", err)
	}
}

// TestIndexReaders: the index of an archive read a byte at a time, or in
// halves, is the index of the archive read whole.
func TestIndexReaders(t *testing.T) {
	input := genMbox(t, t.TempDir(), 256<<10, 21)
	whole := NewMemory()
	index(t, whole, input)
	want, _ := whole.Stats()
	ids, _ := idCounts(t, input)
	for name, wrap := range map[string]func(io.Reader) io.Reader{"one-byte": iotest.OneByteReader, "half": iotest.HalfReader} {
		s := NewMemory()
		ix := &Indexer{Store: s, Open: func(n string, o *mailbox.Options) (*mailbox.Reader, error) {
			f, err := os.Open(n)
			if err != nil {
				return nil, err
			}
			return mailbox.NewReader(wrap(f), n, o)
		}}
		if _, err := ix.Add(input); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Stats(); got != want {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
		for id := range ids {
			a, _ := whole.Messages(id)
			b, _ := s.Messages(id)
			if !slices.Equal(a, b) {
				t.Fatalf("%s: %s: %v, want %v", name, id, b, a)
			}
		}
	}
}

// TestPrune: a message file deleted from a Maildir since it was indexed
// is forgotten when the Maildir is indexed again; not when an entry of
// the directory could not be read, since its files may be there still.
// Each store does so (memory: in one run).
func TestPrune(t *testing.T) { stores(t, testPrune) }

func testPrune(t *testing.T, s Store) {
	base := t.TempDir()
	root := genMaildir(t, base, 5) // base/maildir
	// base/maildir-x/maildir: its paths share the string prefix base/maildir
	other := filepath.Join(base, "maildir-x", "maildir")
	for i, f := range []string{"cur/a", "cur/b"} {
		os.MkdirAll(filepath.Join(other, "cur"), 0o755)
		os.MkdirAll(filepath.Join(other, "new"), 0o755)
		os.MkdirAll(filepath.Join(other, "tmp"), 0o755)
		os.WriteFile(filepath.Join(other, f), []byte(fmt.Sprintf("From: a@b\nMessage-ID: <o%d@x>\n\nbody\n", i)), 0o644)
	}
	ix := &Indexer{Store: s}
	for _, d := range []string{root, other} {
		if _, err := ix.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	os.Remove(filepath.Join(root, "cur", "000003.1.host:2,S"))

	// an unreadable entry (reported through OnSkip): nothing is forgotten
	ix.Open = func(n string, o *mailbox.Options) (*mailbox.Reader, error) {
		o.OnSkip(mailbox.Skip{Path: filepath.Join(n, "cur/locked"), Reason: "permission denied", Err: errors.New("permission denied")})
		return mailbox.Open(n, o)
	}
	res, err := ix.Add(root + "/")
	if err != nil || res.Pruned != 0 {
		t.Fatalf("with an unreadable entry: %+v %v", res, err)
	}
	if l, _ := s.Messages("m3@maildir.example"); len(l) != 1 {
		t.Fatalf("forgotten although an entry could not be read: %v", l)
	}

	ix.Open = nil
	res, err = ix.Add(root + "/") // spelled with a slash: the same directory
	if err != nil || res.Pruned != 1 || res.Skipped != 4 {
		t.Fatalf("second run: %+v %v", res, err)
	}
	if l, _ := s.Messages("m3@maildir.example"); len(l) != 0 {
		t.Errorf("a deleted message is still indexed: %v", l)
	}
	if r, _ := (&Resolver{Store: s}).Resolve("mid:m3@maildir.example", nil); r.Status != Dangling {
		t.Errorf("mid: of the deleted message: %s", r.Status)
	}
	st, _ := s.Stats()
	if st.Files != 6 || st.Messages != 6 {
		t.Errorf("stats after the prune: %+v", st)
	}
	if l, _ := s.Messages("o1@x"); len(l) != 1 {
		t.Errorf("a message of the other directory was forgotten")
	}
}

// TestReadOnlyIndex: an index the user may read but not write (its
// directory read-only, so SQLite cannot make FILE-wal and FILE-shm, or
// the file itself read-only) is said to be read-only, never "not a
// linkscan index, or damaged" (a message that would invite the user to
// remove a good index). As user nobody when run as root.
func TestReadOnlyIndex(t *testing.T) {
	if testutil.AsNobody(t) { // root writes whatever the mode
		return
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "i.db")
	mb := genMbox(t, t.TempDir(), 64<<10, 3)
	s, err := OpenSQLite(db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&Indexer{Store: s}).Add(mb); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{db + "-wal", db + "-shm"} {
		if _, err := os.Stat(f); err == nil {
			t.Fatalf("%s is left after a clean close: the directory case tests nothing", f)
		}
	}
	said := func(what string, err error) {
		t.Helper()
		if err == nil || strings.Contains(err.Error(), "or damaged") || !strings.Contains(err.Error(), "cannot be written") || !strings.Contains(err.Error(), db) {
			t.Errorf("%s: %v", what, err)
		}
	}
	// the directory read-only: opening it needs FILE-wal and FILE-shm
	os.Chmod(dir, 0o555)
	_, err = OpenSQLite(db)
	said("read-only directory", err)
	os.Chmod(dir, 0o755)
	// the file read-only: opened, read; the first write is refused
	os.Chmod(db, 0o444)
	defer os.Chmod(db, 0o644)
	s, err = OpenSQLite(db)
	if err != nil {
		t.Fatalf("read-only file: %v", err)
	}
	defer s.Close()
	if l, err := s.Messages("m1@gen.example"); err != nil {
		t.Errorf("read-only file, lookup: %v, %v", l, err)
	}
	other := genMbox(t, t.TempDir(), 16<<10, 4)
	_, err = (&Indexer{Store: s}).Add(other)
	said("read-only file, a write", err)
}

// TestResolverIncomplete: with Resolver.Incomplete (building the index
// failed), what the index holds resolves as ever, and what it does not
// hold is Error, not Dangling (mid:, news: by id, news: groups); a cid:
// link, looked for in its own message, is Dangling still. Without it,
// the same lookups are Dangling.
func TestResolverIncomplete(t *testing.T) {
	s := NewMemory()
	s.BeginFile("a.mbox", 1, time.Time{})
	s.Add(&Entry{ID: "here@x", Loc: Location{File: "a.mbox"}, Groups: []string{"comp.x"}})
	s.EndFile("a.mbox")
	ctx := &Context{Loc: Location{File: "a.mbox", MessageID: "here@x"}}
	for _, incomplete := range []bool{false, true} {
		r := &Resolver{Store: s, Incomplete: incomplete}
		missing := Dangling
		if incomplete {
			missing = Error
		}
		for _, tc := range []struct {
			url  string
			want Status
		}{
			{"mid:here@x", Resolved},
			{"mid:gone@x", missing},
			{"news:gone@x", missing},
			{"news:comp.gone", missing},
			{"cid:nowhere@x", Dangling},
		} {
			res, err := r.Resolve(tc.url, ctx)
			if err != nil || res.Status != tc.want {
				t.Errorf("Incomplete %v: %s: %s, %v; want %s", incomplete, tc.url, res.Status, err, tc.want)
			}
		}
	}
}

// TestCleanMarkNotOnTimeAlone: a file given back the clean mark's
// modification time after a change (touch -r, cp -p, rsync -a) is
// checked when opened: a damaged one is refused, a good copy
// passes with a notice and is clean after; with the time and stamp
// untouched no check is made.
func TestCleanMarkNotOnTimeAlone(t *testing.T) {
	if fileStamp(os.DevNull) == "" {
		t.Skip("no status-change time here: the modification time alone marks a clean close")
	}
	db := indexed(t)
	fi, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	// damaged, then given the mark's time back, as touch -r does
	bad := bytes.Clone(good)
	clear(bad[4096 : 4*4096])
	os.WriteFile(db, bad, 0o644)
	os.Chtimes(db, fi.ModTime(), fi.ModTime())
	if _, err := openNotices(db); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("a damaged index with the clean mark's time opened: %v", err)
	}
	// a good copy with the time kept (cp -p, with its -writers file)
	cp := filepath.Join(t.TempDir(), "copy.db")
	os.WriteFile(cp, good, 0o644)
	os.Chtimes(cp, fi.ModTime(), fi.ModTime())
	if b, err := os.ReadFile(db + "-writers"); err == nil {
		os.WriteFile(cp+"-writers", b, 0o644)
	}
	n, err := openNotices(cp)
	if err != nil || len(n) != 1 || !strings.Contains(n[0], "quick_check found no damage") {
		t.Fatalf("a copy with the time kept: %v %q", err, n)
	}
	if n, err := openNotices(cp); err != nil || len(n) != 0 {
		t.Fatalf("the copy once checked: %v %q", err, n)
	}
}

// TestFileKeys: the index knows a file by its cleaned absolute path, so
// that one file named four ways is indexed once and skipped unchanged
// the other times, and the same relative name in another directory is
// another file, which does not reconcile this one away.
// Targets show an input's files as the input was named, others relative
// to the working directory under it, absolute elsewhere.
func TestFileKeys(t *testing.T) {
	dir := t.TempDir()
	mb := genMbox(t, dir, 32<<10, 5)
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	os.Chdir(dir)
	s, err := OpenSQLite(filepath.Join(t.TempDir(), "i.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ix := &Indexer{Store: s}
	base := filepath.Base(mb)
	first, err := ix.Add(base)
	if err != nil || first.Messages == 0 {
		t.Fatalf("%s: %+v, %v", base, first, err)
	}
	for _, name := range []string{"./" + base, "../" + filepath.Base(dir) + "/" + base, mb} {
		st, err := ix.Add(name)
		if err != nil || st.Messages != 0 || st.Skipped != 1 {
			t.Errorf("%s: %+v, %v; want it skipped unchanged", name, st, err)
		}
	}
	if st, _ := s.Stats(); st.Files != 1 {
		t.Errorf("%d files, want 1", st.Files)
	}
	// a Maildir md here, and another md elsewhere with the same name
	for _, d := range []string{filepath.Join(dir, "md"), filepath.Join(dir, "other", "md")} {
		for _, sub := range []string{"cur", "new", "tmp"} {
			os.MkdirAll(filepath.Join(d, sub), 0o755)
		}
	}
	os.WriteFile(filepath.Join(dir, "md", "cur", "1:2,S"), []byte("From: a@b\nMessage-ID: <here@x>\n\nx\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "other", "md", "cur", "9:2,S"), []byte("From: a@b\nMessage-ID: <there@x>\n\nx\n"), 0o644)
	if _, err := ix.Add("md"); err != nil {
		t.Fatal(err)
	}
	os.Chdir(filepath.Join(dir, "other"))
	st, err := ix.Add("md")
	if err != nil || st.Pruned != 0 {
		t.Errorf("other/md: %+v, %v; want nothing of ../md forgotten", st, err)
	}
	for _, id := range []string{"here@x", "there@x"} {
		if l, err := s.Messages(id); err != nil || len(l) != 1 || !filepath.IsAbs(l[0].File) {
			t.Errorf("%s: %v, %v", id, l, err)
		}
	}
	os.Chdir(dir)
	r := &Resolver{Store: s, Inputs: []string{"./md"}}
	for _, tc := range []struct{ url, file string }{
		{"mid:here@x", "md/cur/1:2,S"},                                // in an input: as it was named (cleaned by Join)
		{"mid:there@x", filepath.Join("other", "md", "cur", "9:2,S")}, // under the working directory
	} {
		res, err := r.Resolve(tc.url, nil)
		if err != nil || len(res.Targets) != 1 || res.Targets[0].File != tc.file {
			t.Errorf("%s: %+v, %v; want file %q", tc.url, res, err, tc.file)
		}
	}
	os.Chdir(t.TempDir())
	r = &Resolver{Store: s}
	if res, _ := r.Resolve("mid:here@x", nil); len(res.Targets) != 1 || res.Targets[0].File != filepath.Join(dir, "md", "cur", "1:2,S") {
		t.Errorf("outside the working directory: %+v, want the absolute path", res)
	}
}

// TestFileKeysThroughLinks: a file reached through a linked directory,
// or through a link to it, is the file itself: skipped unchanged, no
// second entry; so is a Maildir reached through a linked directory, and
// indexing it again through the link forgets nothing (fails if the mbox
// named through a linked directory is indexed again, with two targets
// per id).
func TestFileKeysThroughLinks(t *testing.T) {
	dir := t.TempDir()
	mb := genMbox(t, dir, 32<<10, 6)
	links := t.TempDir()
	os.Symlink(dir, filepath.Join(links, "dirlink"))
	os.Symlink(mb, filepath.Join(links, "file.mbox"))
	md := filepath.Join(dir, "md")
	for _, sub := range []string{"cur", "new", "tmp"} {
		os.MkdirAll(filepath.Join(md, sub), 0o755)
	}
	os.WriteFile(filepath.Join(md, "cur", "1:2,S"), []byte("From: a@b\nMessage-ID: <here@x>\n\nx\n"), 0o644)
	s, err := OpenSQLite(filepath.Join(t.TempDir(), "i.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ix := &Indexer{Store: s}
	for _, in := range []string{mb, md} {
		if st, err := ix.Add(in); err != nil || st.Messages == 0 {
			t.Fatalf("%s: %+v, %v", in, st, err)
		}
	}
	before, _ := s.Stats()
	for _, in := range []string{
		filepath.Join(links, "dirlink", filepath.Base(mb)),
		filepath.Join(links, "file.mbox"),
		filepath.Join(links, "dirlink", "md"),
	} {
		st, err := ix.Add(in)
		if err != nil || st.Messages != 0 || st.Skipped != 1 || st.Pruned != 0 {
			t.Errorf("%s: %+v, %v; want it skipped unchanged", in, st, err)
		}
	}
	if after, _ := s.Stats(); after.Files != before.Files || after.Messages != before.Messages {
		t.Errorf("files %d -> %d, messages %d -> %d", before.Files, after.Files, before.Messages, after.Messages)
	}
	// changed, and read again through the link: replaced, not doubled
	f, _ := os.OpenFile(mb, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("From a@b Thu Mar 24 02:31:00 1994\nMessage-ID: <late@x>\n\nmore\n")
	f.Close()
	if _, err := ix.Add(filepath.Join(links, "file.mbox")); err != nil {
		t.Fatal(err)
	}
	if after, _ := s.Stats(); after.Files != before.Files || after.Messages != before.Messages+1 {
		t.Errorf("after a change read through the link: files %d -> %d, messages %d -> %d", before.Files, after.Files, before.Messages, after.Messages)
	}
	r := &Resolver{Store: s, Inputs: []string{filepath.Join(links, "dirlink", "md")}}
	if res, _ := r.Resolve("mid:here@x", nil); len(res.Targets) != 1 || res.Targets[0].File != filepath.Join(links, "dirlink", "md", "cur", "1:2,S") {
		t.Errorf("target through the linked input: %+v", res.Targets)
	}
}
