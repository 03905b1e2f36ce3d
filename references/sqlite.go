package references

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sqlite "modernc.org/sqlite" // registers the "sqlite" driver, pure Go
)

// SQLite is a Store in an SQLite database file, kept between runs. Writes
// go through one open transaction, committed by Commit (and every
// BatchSize messages), so that indexing a large archive neither holds it
// in memory nor pays for a commit per message.
//
// The index never claims more than it holds: a file counts as indexed
// (Unchanged) only once EndFile for it is committed, so a run that was
// killed or failed leaves its files to be read again, and their partial
// rows are replaced then. The database is in WAL mode: readers and one
// writer work side by side, and several processes writing the same index
// take turns, a transaction at a time, waiting up to BusyTimeout.
//
// On opening, the file is checked: it must be a linkscan index of a
// schema this code reads, and when it was not closed cleanly since it
// was last written (a killed run, or a change by anything else),
// PRAGMA quick_check must pass.
type SQLite struct {
	path   string
	opts   SQLiteOptions
	db     *sql.DB
	tx     *sql.Tx
	n      int
	stmts  map[string]*sql.Stmt // the writes of the open transaction
	reads  map[string]*sql.Stmt // the lookups, prepared once on the database
	rmu    sync.Mutex           // guards reads: lookups come from many goroutines
	owner  string               // this session's mark on the files it indexes
	cur    string               // the file begun and not yet ended
	wrote  bool                 // written in this session: Close records a clean close
	waited atomic.Bool          // a wait for another run was said (retry)
	check  bool                 // quick_check passed on opening: Close records it
	commit time.Time            // the last commit of a batch
	txAdds int                  // messages added in the open transaction
	lost   int                  // messages added in transactions rolled back (Lost)
	live   *os.File             // the lock of a run writing the index (live_unix.go), from its first write
	// afterBatch, when set (by tests), runs after each batch is
	// committed.
	afterBatch func()
}

// SQLiteOptions tunes OpenSQLiteOptions. The zero value is the default.
type SQLiteOptions struct {
	// BusyTimeout is how long a write (or the opening) waits while
	// another process holds the index; 0 means DefaultBusyTimeout.
	BusyTimeout time.Duration
	// BatchSize is the number of messages per transaction; 0 means 20000.
	BatchSize int
	// Notice, if set, receives what the user should know although it is
	// no error: an empty file taken as a new index, an index checked
	// because it was not closed cleanly, an older schema upgraded, files
	// left incomplete by an interrupted run.
	Notice func(msg string)
}

// afterStat, when set (by tests), runs when OpenSQLiteOptions has looked
// at the file and before it opens the database: another run's turn.
var afterStat func(path string)

// DefaultBusyTimeout is how long a write waits for another writer by
// default: long enough for the other to finish a transaction, or to
// delete a large file's rows.
const DefaultBusyTimeout = 2 * time.Minute

// SchemaVersion is the version of the index schema this package writes.
// It reads version 1 (which it upgrades) and SchemaVersion.
const SchemaVersion = 2

// ErrInProgress is what BeginFile returns (an *InProgressError) when
// another run that is still alive is indexing the file: the Indexer
// waits for it to finish, then passes over the file.
var ErrInProgress = errors.New("references: another run is indexing this file")

// InProgressError is ErrInProgress for File, which process PID of this
// host is indexing.
type InProgressError struct {
	File string
	PID  int
}

func (e *InProgressError) Error() string {
	return fmt.Sprintf("references: %s: another run (process %d) is indexing it", e.File, e.PID)
}

// Is reports ErrInProgress as matching.
func (e *InProgressError) Is(target error) bool { return target == ErrInProgress }

// ErrIndexed is what BeginFile returns when another run has completely
// indexed the file, as it is, since the caller found it not indexed
// (Unchanged): the caller passes over it.
var ErrIndexed = errors.New("references: another run has indexed this file")

// ErrSuperseded is returned by a write when another process began
// indexing the same file after this one: the file is left to it.
var ErrSuperseded = errors.New("references: another run began indexing this file since; it is left to that run")

const (
	defaultBatch = 20000
	// pollEvery is how often a waiting writer tries again, and turnPause
	// how long a writer waits after committing a batch before it begins
	// the next, so that a waiting writer gets its turn.
	pollEvery = time.Millisecond
	turnPause = 3 * time.Millisecond
)

const schemaV2 = `
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE files(path TEXT PRIMARY KEY, size INTEGER, mtime INTEGER, done INTEGER NOT NULL DEFAULT 0, owner TEXT NOT NULL DEFAULT '');
CREATE INDEX files_incomplete ON files(path) WHERE done = 0;
CREATE TABLE messages(id TEXT, synthetic INTEGER, file TEXT, offset INTEGER, name TEXT);
CREATE INDEX messages_id ON messages(id);
CREATE INDEX messages_file ON messages(file);
CREATE TABLE parts(id TEXT, cid TEXT, part TEXT, file TEXT, offset INTEGER, name TEXT);
CREATE INDEX parts_key ON parts(id, cid);
CREATE INDEX parts_file ON parts(file);
CREATE TABLE articles(article TEXT, id TEXT, file TEXT, offset INTEGER, name TEXT);
CREATE INDEX articles_key ON articles(article);
CREATE INDEX articles_file ON articles(file);
CREATE TABLE groups(name TEXT, file TEXT);
CREATE INDEX groups_name ON groups(name);
CREATE INDEX groups_file ON groups(file);
CREATE TABLE hosts(name TEXT, file TEXT);
CREATE INDEX hosts_name ON hosts(name);
CREATE INDEX hosts_file ON hosts(file);
INSERT INTO meta(key, value) VALUES ('application', 'linkscan-index'), ('schema', '2');
`

// upgradeV1 turns a schema 1 index into schema 2. Schema 1 recorded a
// file before its messages were committed, so none of its files is
// trusted: each is read again (done = 0) when next given.
const upgradeV1 = `
ALTER TABLE files ADD COLUMN done INTEGER NOT NULL DEFAULT 0;
ALTER TABLE files ADD COLUMN owner TEXT NOT NULL DEFAULT '';
CREATE INDEX files_incomplete ON files(path) WHERE done = 0;
INSERT OR REPLACE INTO meta(key, value) VALUES ('application', 'linkscan-index'), ('schema', '2');
`

var tablesV2 = []string{"meta", "files", "messages", "parts", "articles", "groups", "hosts"}

// OpenSQLite opens (creating if needed) the index database at path, with
// the default options.
func OpenSQLite(path string) (*SQLite, error) { return OpenSQLiteOptions(path, nil) }

// OpenSQLiteOptions opens (creating if needed) the index database at
// path. It refuses a file that is not a linkscan index, an index of a
// newer schema, and a damaged index, with an error naming the file.
func OpenSQLiteOptions(path string, o *SQLiteOptions) (*SQLite, error) {
	s := &SQLite{path: path, stmts: map[string]*sql.Stmt{}, reads: map[string]*sql.Stmt{}}
	if o != nil {
		s.opts = *o
	}
	if s.opts.BusyTimeout <= 0 {
		s.opts.BusyTimeout = DefaultBusyTimeout
	}
	if s.opts.BatchSize <= 0 {
		s.opts.BatchSize = defaultBatch
	}
	var tok [8]byte
	rand.Read(tok[:])
	s.owner = ownerMark(hex.EncodeToString(tok[:]))

	fi, err := os.Stat(path)
	empty := false
	switch {
	case err == nil && fi.IsDir():
		return nil, fmt.Errorf("references: %s: is a directory, not an index file", path)
	case err == nil && !fi.Mode().IsRegular():
		return nil, fmt.Errorf("references: %s: not a regular file", path)
	case err == nil && fi.Size() == 0:
		empty = true
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("references: %w", err)
	}
	if afterStat != nil {
		afterStat(path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("references: %s: %w", path, err)
	}
	// a file: URI, so that no character of the path is taken for a
	// parameter; the driver begins write transactions IMMEDIATE, so that
	// two writers queue at BEGIN rather than fail on their first write.
	dsn := (&url.URL{Scheme: "file", Path: abs}).String() + "?_txlock=immediate&_pragma=synchronous(NORMAL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("references: %s: %w", path, err)
	}
	db.SetMaxOpenConns(1) // one writer; reads go through the same connection
	s.db = db
	if err := s.retry(s.setup); err != nil {
		db.Close()
		return nil, err
	}
	if empty && s.wrote {
		// said only when this run made the index: a file another run
		// has just made (and not yet written) is no empty file left
		// behind
		s.notice("%s: empty file (0 bytes): taken as a new index", path)
	}
	return s, nil
}

func (s *SQLite) notice(format string, args ...any) {
	if s.opts.Notice != nil {
		s.opts.Notice("references: " + fmt.Sprintf(format, args...))
	}
}

// isBusy reports whether err is SQLite's "locked by another connection".
func isBusy(err error) bool {
	var e *sqlite.Error
	if errors.As(err, &e) {
		c := e.Code() & 0xff
		return c == 5 || c == 6 // SQLITE_BUSY, SQLITE_LOCKED
	}
	return false
}

// cleanClose reports whether the index file at path (fi) is as its last
// clean close left it: its modification time is the mark in meta, and,
// where the system gives one (fileStamp), its stamp is the one recorded
// beside it in PATH-writers, so that a copy or a damaged file given the
// mark's time back (touch -r, cp -p, rsync -a) is checked all the same.
func cleanClose(path, mark string, fi os.FileInfo) bool {
	if mark == "" || mark != strconv.FormatInt(fi.ModTime().UnixNano(), 10) {
		return false
	}
	st := fileStamp(path)
	if st == "" {
		return true // the modification time alone, as before
	}
	b, err := os.ReadFile(path + "-writers")
	return err == nil && string(b) == st
}

// isReadOnly reports whether err is SQLite's SQLITE_READONLY (the file,
// or the directory where SQLite makes FILE-wal and FILE-shm, may not be
// written by this user) or SQLITE_PERM.
func isReadOnly(err error) bool {
	var e *sqlite.Error
	if errors.As(err, &e) {
		c := e.Code() & 0xff
		return c == 8 || c == 3 // SQLITE_READONLY, SQLITE_PERM
	}
	return false
}

// readOnlyError says that the index file p cannot be written: not that
// it is damaged, which would have a user remove a good index.
func readOnlyError(p string, err error) error {
	return fmt.Errorf("references: %s: the index cannot be written by this user (the file, or its directory, where SQLite keeps %s-wal and %s-shm, is read-only to it); it is not damaged: %w", p, filepath.Base(p), filepath.Base(p), err)
}

// retry runs fn until it does not fail with SQLITE_BUSY, for up to
// BusyTimeout. The connection itself does not wait (busy_timeout 0):
// polling here, often, lets a waiting writer in between two batches of
// another.
//
// A wait of over waitSaid is said once (Notice), so that a run waiting
// for another is not taken for hung.
func (s *SQLite) retry(fn func() error) error {
	start := time.Now()
	deadline := start.Add(s.opts.BusyTimeout)
	for {
		err := fn()
		if err == nil || !isBusy(err) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("references: %s: index locked by another process for over %v: %w", s.path, s.opts.BusyTimeout, err)
		}
		if time.Since(start) > waitSaid && !s.waited.Swap(true) {
			s.notice("%s: another run is writing the index: waiting for its turn (at most %v)", s.path, s.opts.BusyTimeout)
		}
		time.Sleep(pollEvery)
	}
}

// waitSaid is how long a write waits for another run before it says so.
const waitSaid = 200 * time.Millisecond

// setup checks the file and creates or upgrades the schema.
func (s *SQLite) setup() error {
	p := s.path
	bad := func(err error) error {
		var e *sqlite.Error
		switch {
		case isBusy(err):
			return err
		case errors.As(err, &e) && e.Code()&0xff == 14: // SQLITE_CANTOPEN
			return fmt.Errorf("references: %s: cannot open or create the index file: %w", p, err)
		case isReadOnly(err):
			return readOnlyError(p, err)
		}
		return fmt.Errorf("references: %s: not a linkscan index, or damaged: %w", p, err)
	}
	tables, err := s.tables()
	if err != nil {
		return bad(err)
	}
	if len(tables) == 0 {
		return s.create()
	}
	if !tables["meta"] {
		return fmt.Errorf("references: %s: an SQLite database, but not a linkscan index (tables: %s)", p, names(tables))
	}
	meta, err := s.meta()
	if err != nil {
		return bad(err)
	}
	switch {
	case meta["application"] == "" && meta["schema"] == "1" && tables["files"] && tables["messages"]:
		if err := s.upgrade(); err != nil {
			return err
		}
		s.notice("%s: index of schema 1 upgraded to %d; its files are read again when next given", p, SchemaVersion)
		if meta, err = s.meta(); err != nil {
			return bad(err)
		}
	case meta["application"] != "linkscan-index":
		return fmt.Errorf("references: %s: an SQLite database, but not a linkscan index (tables: %s)", p, names(tables))
	case meta["schema"] != strconv.Itoa(SchemaVersion):
		if v, err := strconv.Atoi(meta["schema"]); err == nil && v > SchemaVersion {
			return fmt.Errorf("references: %s: index schema %d is newer than this linkscan reads (%d)", p, v, SchemaVersion)
		}
		return fmt.Errorf("references: %s: unknown index schema %q (this linkscan reads %d)", p, meta["schema"], SchemaVersion)
	}
	for _, t := range tablesV2 {
		if !tables[t] {
			return fmt.Errorf("references: %s: damaged index: table %s is missing", p, t)
		}
	}
	if _, err := s.db.Exec(`PRAGMA journal_mode = WAL`); err != nil {
		return bad(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("references: %w", err)
	}
	if !cleanClose(p, meta["clean"], fi) && !othersWriting(p) {
		if err := s.quickCheck(); err != nil {
			return err
		}
		s.check = true
		s.notice("%s: not closed cleanly since it was last written (an interrupted run, another process, a change by another program, or a copy); quick_check found no damage", p)
	}
	var files, dirs int
	if err := s.db.QueryRow(`SELECT count(*) FILTER (WHERE size >= 0), count(*) FILTER (WHERE size < 0) FROM files WHERE done = 0`).Scan(&files, &dirs); err != nil {
		return bad(err)
	}
	if files > 0 {
		s.notice("%s: %s not completely indexed (an interrupted run, or one in progress); read again when next given", p, count(files, "file was", "files were"))
	}
	if dirs > 0 {
		s.notice("%s: %s not walked to the end (an interrupted run, or one in progress); walked again when next given", p, count(dirs, "directory was", "directories were"))
	}
	return nil
}

// count is "1 file was" or "N files were".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func (s *SQLite) tables() (map[string]bool, error) {
	rows, err := s.db.Query(`SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	t := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		t[n] = true
	}
	return t, rows.Err()
}

func names(t map[string]bool) string {
	var n []string
	for k := range t {
		n = append(n, k)
	}
	if len(n) > 8 {
		n = append(n[:8], "...")
	}
	return strings.Join(n, ", ")
}

func (s *SQLite) meta() (map[string]string, error) {
	rows, err := s.db.Query(`SELECT key, value FROM meta`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := map[string]string{}
	for rows.Next() {
		var k string
		var v sql.NullString
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		m[k] = v.String
	}
	return m, rows.Err()
}

// create makes the schema in an empty database, unless another process
// did so meanwhile.
func (s *SQLite) create() error {
	if _, err := s.db.Exec(`PRAGMA journal_mode = WAL`); err != nil {
		return err
	}
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table'`).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		tx.Rollback()
		return s.setup() // made by another process in the meantime
	}
	if _, err := tx.Exec(schemaV2); err != nil {
		return fmt.Errorf("references: %s: cannot create the index: %w", s.path, err)
	}
	s.wrote = true
	return tx.Commit()
}

func (s *SQLite) upgrade() error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var v sql.NullString
	if err := tx.QueryRow(`SELECT value FROM meta WHERE key = 'schema'`).Scan(&v); err != nil {
		return err
	}
	if v.String != "1" {
		return nil // upgraded by another process in the meantime
	}
	if _, err := tx.Exec(upgradeV1); err != nil {
		return fmt.Errorf("references: %s: cannot upgrade the index: %w", s.path, err)
	}
	s.wrote = true
	return tx.Commit()
}

// quickCheck runs PRAGMA quick_check and turns what it finds into an
// error naming the file.
func (s *SQLite) quickCheck() error {
	rows, err := s.db.Query(`PRAGMA quick_check(10)`)
	if err != nil {
		if isBusy(err) {
			return err
		}
		return fmt.Errorf("references: %s: damaged index (quick_check: %v); remove it and index again", s.path, err)
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var msg string
		if err := rows.Scan(&msg); err != nil {
			return fmt.Errorf("references: %s: damaged index (quick_check: %v); remove it and index again", s.path, err)
		}
		found = append(found, msg)
	}
	if err := rows.Err(); err != nil {
		if isBusy(err) {
			return err
		}
		return fmt.Errorf("references: %s: damaged index (quick_check: %v); remove it and index again", s.path, err)
	}
	if len(found) != 1 || found[0] != "ok" {
		return fmt.Errorf("references: %s: damaged index (quick_check: %s); remove it and index again", s.path, strings.Join(found, "; "))
	}
	return nil
}

// begin opens the write transaction, waiting for other writers.
func (s *SQLite) begin() error {
	if !s.commit.IsZero() {
		if d := turnPause - time.Since(s.commit); d > 0 {
			time.Sleep(d) // a writer waiting for the index goes first
		}
	}
	var tx *sql.Tx
	if err := s.retry(func() (err error) { tx, err = s.db.Begin(); return err }); err != nil {
		if isReadOnly(err) {
			return readOnlyError(s.path, err)
		}
		return err
	}
	// from now until Close the file is not cleanly closed; in every
	// transaction, since another process may have recorded its own clean
	// close meanwhile
	if _, err := tx.Exec(`DELETE FROM meta WHERE key = 'clean'`); err != nil {
		tx.Rollback()
		if isReadOnly(err) { // the first write of the transaction
			return readOnlyError(s.path, err)
		}
		return err
	}
	if s.cur != "" {
		// the file begun in an earlier transaction: another run may have
		// begun it since, and its rows are then that run's
		var owner string
		if err := tx.QueryRow(`SELECT owner FROM files WHERE path = ?`, s.cur).Scan(&owner); err != nil && !errors.Is(err, sql.ErrNoRows) {
			tx.Rollback()
			return err
		}
		if owner != s.owner {
			tx.Rollback()
			s.cur = ""
			return ErrSuperseded
		}
	}
	s.wrote = true
	if s.live == nil {
		s.live = holdWriting(s.path)
	}
	s.tx = tx
	clear(s.stmts)
	return nil
}

// exec runs a write in the current transaction, opening one if needed.
func (s *SQLite) exec(query string, args ...any) error {
	if s.tx == nil {
		if err := s.begin(); err != nil {
			return err
		}
	}
	st, ok := s.stmts[query]
	if !ok {
		var err error
		if st, err = s.tx.Prepare(query); err != nil {
			s.abort()
			return err
		}
		s.stmts[query] = st
	}
	if _, err := st.Exec(args...); err != nil {
		s.abort()
		return err
	}
	return nil
}

// abort rolls the open transaction back after a failed write: SQLite
// itself ends it on some errors (a full disk), so that a later COMMIT
// would fail with "cannot commit - no transaction is active" and hide
// the error that counts. Its messages are lost (Lost).
func (s *SQLite) abort() {
	if s.tx == nil {
		return
	}
	s.tx.Rollback()
	s.tx = nil
	clear(s.stmts)
	s.lost += s.txAdds
	s.txAdds = 0
}

// Lost is the number of messages Add took that a failed write rolled
// back since the store was opened: they are not in the index, and a
// caller counting its Adds takes them off.
func (s *SQLite) Lost() int { return s.lost }

// Unchanged reports whether file was completely indexed with this size
// and modification time.
func (s *SQLite) Unchanged(file string, size int64, mtime time.Time) (bool, error) {
	var sz, mt, done int64
	err := s.retry(func() error {
		return s.query(`SELECT size, mtime, done FROM files WHERE path = ?`, file).Scan(&sz, &mt, &done)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return done == 1 && sz == size && mt == mtime.UnixNano(), nil
}

// File implements Store.
func (s *SQLite) File(file string) (FileState, bool, error) {
	var sz, mt, done int64
	err := s.retry(func() error {
		return s.query(`SELECT size, mtime, done FROM files WHERE path = ?`, file).Scan(&sz, &mt, &done)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return FileState{}, false, nil
	}
	if err != nil {
		return FileState{}, false, fmt.Errorf("references: %s: %w", s.path, err)
	}
	return FileState{Size: sz, ModTime: time.Unix(0, mt), Done: done == 1}, true, nil
}

// Incomplete implements Store.
func (s *SQLite) Incomplete() (int, error) {
	var n int
	err := s.retry(func() error { return s.query(`SELECT count(*) FROM files WHERE done = 0`).Scan(&n) })
	if err != nil {
		return 0, fmt.Errorf("references: %s: %w", s.path, err)
	}
	return n, nil
}

// query reads inside the open transaction, if any, so that what was
// added and not yet committed is seen.
func (s *SQLite) query(q string, args ...any) *sql.Row {
	if s.tx != nil {
		return s.tx.QueryRow(q, args...)
	}
	return s.db.QueryRow(q, args...)
}

func (s *SQLite) rows(q string, args ...any) (*sql.Rows, error) {
	if s.tx != nil {
		return s.tx.Query(q, args...)
	}
	return s.db.Query(q, args...)
}

// lookup runs a read prepared once (a lookup is made for every reference
// of an archive), inside the open transaction if there is one.
func (s *SQLite) lookup(q string, args ...any) (*sql.Rows, error) {
	if s.tx != nil {
		// the one connection is the transaction's: preparing on the
		// database would wait for it for ever
		return s.tx.Query(q, args...)
	}
	s.rmu.Lock()
	st, ok := s.reads[q]
	if !ok {
		var err error
		if st, err = s.db.Prepare(q); err != nil {
			s.rmu.Unlock()
			return nil, err
		}
		s.reads[q] = st
	}
	s.rmu.Unlock()
	return st.Query(args...)
}

// BeginFile forgets what was indexed from file and records it as being
// indexed, not yet complete.
//
// A file (not standard input, "-", a directory, nor a file begun without
// a modification time, as a git archive's epoch is) that another run
// alive on this host began and has not ended is left alone: BeginFile
// returns an *InProgressError, and the caller waits (Indexer). A run that
// is gone (killed) left its file to whoever comes next. A file that
// another run indexed completely, as it is now, is left alone too
// (ErrIndexed): the caller found it not indexed before it could write.
func (s *SQLite) BeginFile(file string, size int64, mtime time.Time) error {
	s.cur = "" // a new file: the previous one is no longer watched
	if file != "-" && size != DirSize && !mtime.IsZero() {
		var sz, mt, done int64
		var owner string
		var err error
		if s.tx == nil {
			err = s.begin() // the look and the writes in one transaction
		}
		if err == nil {
			err = s.query(`SELECT size, mtime, done, owner FROM files WHERE path = ?`, file).Scan(&sz, &mt, &done, &owner)
		}
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		case done == 1 && owner != s.owner && sz == size && mt == mtime.UnixNano():
			// another run indexed it while this one waited for the index
			return ErrIndexed
		case done == 0 && owner != s.owner:
			if pid, alive := s.ownerAlive(owner); alive {
				return &InProgressError{File: file, PID: pid}
			}
		}
	}
	for _, q := range []string{
		`DELETE FROM messages WHERE file = ?`, `DELETE FROM parts WHERE file = ?`,
		`DELETE FROM articles WHERE file = ?`, `DELETE FROM groups WHERE file = ?`, `DELETE FROM hosts WHERE file = ?`,
	} {
		if err := s.exec(q, file); err != nil {
			return err
		}
	}
	if err := s.exec(`INSERT OR REPLACE INTO files(path, size, mtime, done, owner) VALUES (?, ?, ?, 0, ?)`, file, size, mtime.UnixNano(), s.owner); err != nil {
		return err
	}
	if size != DirSize {
		s.cur = file // a directory's walk is never taken over: not watched
	}
	return nil
}

// ownerMark is the owner a session writes on the files it begins: its
// random token, process id and host name, so that another run can tell
// whether the run indexing a file is still alive (ownerAlive).
func ownerMark(token string) string {
	host, _ := os.Hostname()
	return token + " " + strconv.Itoa(os.Getpid()) + " " + host
}

// ownerAlive reports whether the run that wrote owner (ownerMark) is
// alive on this host, still writing the index (runAlive), and its
// process id. An owner of an older linkscan (a token alone), or of
// another host, is taken for gone.
func (s *SQLite) ownerAlive(owner string) (int, bool) {
	f := strings.SplitN(owner, " ", 3)
	if len(f) != 3 {
		return 0, false
	}
	pid, err := strconv.Atoi(f[1])
	host, _ := os.Hostname()
	if err != nil || pid <= 0 || f[2] != host {
		return 0, false
	}
	return pid, runAlive(s.live, s.path, pid)
}

// Prune forgets the files under dir that keep does not keep, and their
// messages, parts, articles, groups and hosts.
func (s *SQLite) Prune(dir string, keep func(string) bool) (int, error) {
	prefix := dirPrefix(dir)
	hi := prefix[:len(prefix)-1] + string(filepath.Separator+1) // the first string after every one with the prefix
	var gone []string
	err := s.retry(func() error {
		gone = gone[:0]
		rows, err := s.rows(`SELECT path FROM files WHERE path >= ? AND path < ?`, prefix, hi)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var p string
			if err := rows.Scan(&p); err != nil {
				return err
			}
			if !keep(p) {
				gone = append(gone, p)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return 0, fmt.Errorf("references: %s: %w", s.path, err)
	}
	for _, p := range gone {
		for _, q := range []string{
			`DELETE FROM messages WHERE file = ?`, `DELETE FROM parts WHERE file = ?`, `DELETE FROM articles WHERE file = ?`,
			`DELETE FROM groups WHERE file = ?`, `DELETE FROM hosts WHERE file = ?`, `DELETE FROM files WHERE path = ?`,
		} {
			if err := s.exec(q, p); err != nil {
				return 0, err
			}
		}
	}
	return len(gone), nil
}

// EndFile records file as completely indexed, in the transaction of its
// last message.
func (s *SQLite) EndFile(file string) error {
	if err := s.exec(`UPDATE files SET done = 1 WHERE path = ? AND owner = ?`, file, s.owner); err != nil {
		return err
	}
	if s.cur == file {
		s.cur = ""
	}
	return nil
}

// Add implements Store.
func (s *SQLite) Add(e *Entry) error {
	synth := 0
	if e.Synthetic {
		synth = 1
	}
	l := e.Loc
	name := storedName(l)
	if err := s.exec(`INSERT INTO messages(id, synthetic, file, offset, name) VALUES (?, ?, ?, ?, ?)`, e.ID, synth, l.File, l.Offset, name); err != nil {
		return err
	}
	if !e.Synthetic {
		for _, p := range e.Parts {
			if err := s.exec(`INSERT INTO parts(id, cid, part, file, offset, name) VALUES (?, ?, ?, ?, ?, ?)`, e.ID, p.ContentID, p.Path, l.File, l.Offset, name); err != nil {
				return err
			}
		}
		for _, a := range e.Articles {
			if err := s.exec(`INSERT INTO articles(article, id, file, offset, name) VALUES (?, ?, ?, ?, ?)`, a, e.ID, l.File, l.Offset, name); err != nil {
				return err
			}
		}
	}
	for _, g := range e.Groups {
		if err := s.exec(`INSERT INTO groups(name, file) VALUES (?, ?)`, g, l.File); err != nil {
			return err
		}
	}
	if e.Host != "" {
		if err := s.exec(`INSERT INTO hosts(name, file) VALUES (?, ?)`, strings.ToLower(e.Host), l.File); err != nil {
			return err
		}
	}
	s.n++
	s.txAdds++
	if s.n%s.opts.BatchSize == 0 {
		if err := s.Commit(); err != nil {
			return err
		}
		s.commit = time.Now()
		if s.afterBatch != nil {
			s.afterBatch()
		}
	}
	return nil
}

// headKey is the meta key of an epoch repository's head (Heads).
func headKey(repo string) string { return "head " + repo }

// Head implements Heads: the head is a row of the meta table.
func (s *SQLite) Head(repo string) (string, error) {
	var v sql.NullString
	err := s.retry(func() error { return s.query(`SELECT value FROM meta WHERE key = ?`, headKey(repo)).Scan(&v) })
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("references: %s: %w", s.path, err)
	}
	return v.String, nil
}

// SetHead implements Heads, in the transaction of the messages added
// before it.
func (s *SQLite) SetHead(repo, head string) error {
	return s.exec(`INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)`, headKey(repo), head)
}

// Commit implements Store.
func (s *SQLite) Commit() error {
	if s.tx == nil {
		return nil
	}
	clear(s.stmts)
	err := s.tx.Commit()
	s.tx = nil
	if err != nil {
		s.lost += s.txAdds
	}
	s.txAdds = 0
	return err
}

func (s *SQLite) locations(q string, args ...any) ([]Location, error) {
	var out []Location
	err := s.retry(func() error {
		out = out[:0]
		rows, err := s.lookup(q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var l Location
			if err := rows.Scan(&l.MessageID, &l.File, &l.Offset, &l.Name, &l.Part, &l.Group); err != nil {
				return err
			}
			l.Name, l.Blob = loadName(l.Name)
			out = append(out, l)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("references: %s: %w", s.path, err)
	}
	return out, nil
}

// Messages implements Store.
func (s *SQLite) Messages(id string) ([]Location, error) {
	return s.locations(`SELECT id, file, offset, name, '', '' FROM messages WHERE id = ? AND synthetic = 0 ORDER BY rowid`, id)
}

// Parts implements Store.
func (s *SQLite) Parts(id, cid string) ([]Location, error) {
	return s.locations(`SELECT id, file, offset, name, part, '' FROM parts WHERE id = ? AND cid = ? ORDER BY rowid`, id, cid)
}

// Article implements Store.
func (s *SQLite) Article(groupNumber string) ([]Location, error) {
	return s.locations(`SELECT id, file, offset, name, '', article FROM articles WHERE article = ? ORDER BY rowid`, groupNumber)
}

func (s *SQLite) exists(q string, arg string) (bool, error) {
	var one int
	err := s.retry(func() error { return s.query(q, arg).Scan(&one) })
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("references: %s: %w", s.path, err)
	}
	return true, nil
}

// HasGroup implements Store.
func (s *SQLite) HasGroup(group string) (bool, error) {
	return s.exists(`SELECT 1 FROM groups WHERE name = ? LIMIT 1`, group)
}

// HasHost implements Store.
func (s *SQLite) HasHost(host string) (bool, error) {
	return s.exists(`SELECT 1 FROM hosts WHERE name = ? LIMIT 1`, strings.ToLower(host))
}

// Stats implements Store.
func (s *SQLite) Stats() (Stats, error) {
	var st Stats
	for _, q := range []struct {
		sql string
		dst *int
	}{
		{`SELECT count(*) FROM files WHERE size >= 0`, &st.Files}, // not the directories (DirSize)
		{`SELECT count(*) FROM files WHERE done = 0`, &st.Incomplete},
		{`SELECT count(*) FROM messages`, &st.Messages},
		{`SELECT count(DISTINCT id) FROM messages WHERE synthetic = 0`, &st.MessageIDs},
		{`SELECT count(*) FROM messages WHERE synthetic = 1`, &st.Synthetic},
		{`SELECT count(*) FROM (SELECT DISTINCT id, cid FROM parts)`, &st.ContentIDs},
		{`SELECT count(DISTINCT name) FROM groups`, &st.Groups},
		{`SELECT count(DISTINCT article) FROM articles`, &st.Articles},
	} {
		if err := s.retry(func() error { return s.query(q.sql).Scan(q.dst) }); err != nil {
			return st, fmt.Errorf("references: %s: %w", s.path, err)
		}
	}
	return st, nil
}

// Close commits and closes the database. When everything was committed,
// it records a clean close: the file's modification time, which the next
// opening compares to decide whether to check the file.
func (s *SQLite) Close() error {
	err := s.Commit()
	for _, st := range s.reads {
		st.Close()
	}
	var stamp time.Time
	if err == nil && (s.wrote || s.check) {
		stamp = time.Now()
		err = s.retry(func() error {
			_, err := s.db.Exec(`INSERT OR REPLACE INTO meta(key, value) VALUES ('clean', ?)`, strconv.FormatInt(stamp.UnixNano(), 10))
			return err
		})
	}
	if cerr := s.db.Close(); err == nil {
		err = cerr
	}
	if err == nil && !stamp.IsZero() {
		// the last write has reached the file (the WAL is checkpointed
		// when the last connection closes); a later change to the file
		// changes its time. If another process still has it open, its
		// checkpoint will, and the next opening checks: safe either way.
		if os.Chtimes(s.path, stamp, stamp) == nil {
			// and what no tool sets back: the next opening checks an
			// index whose file is not this one as it is now
			if st := fileStamp(s.path); st != "" {
				os.WriteFile(s.path+"-writers", []byte(st), 0o644)
			}
		}
	}
	if s.live != nil {
		s.live.Close() // the lock goes with it: this run writes no more
		s.live = nil
	}
	if err != nil {
		return fmt.Errorf("references: %s: %w", s.path, err)
	}
	return nil
}
