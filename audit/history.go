package audit

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"modernc.org/sqlite" // the "sqlite" driver, pure Go
	sqlite3 "modernc.org/sqlite/lib"
)

// HistorySchema is the version of the history database this package
// writes and reads.
const HistorySchema = 1

const historyApp = "linkscan-audit"

// DB is the history of audits: every link's first check, every check, the
// last that worked, and the archived copies found. It is an SQLite file in
// WAL mode, so that a report can read it while an audit writes.
// URLs are kept redacted (Redact): no credentials are ever written.
//
// Writes go through one transaction committed every historyBatch checks
// or historyBatchTime, and by Flush and Close: a run that is killed loses
// at most that many of its last checks, and nothing older.
type DB struct {
	mu    sync.Mutex
	path  string
	db    *sql.DB
	tx    *sql.Tx   // the open transaction, nil when none
	n     int       // checks written in tx
	began time.Time // when tx began
}

const (
	historyBatch     = 1000
	historyBatchTime = time.Second
)

// txn returns the open transaction, beginning one if needed; d.mu is held.
func (d *DB) txn() (*sql.Tx, error) {
	if d.tx == nil {
		tx, err := d.db.Begin()
		if err != nil {
			return nil, fmt.Errorf("audit: history %s: %w", d.path, err)
		}
		d.tx, d.n, d.began = tx, 0, time.Now()
	}
	return d.tx, nil
}

// commit commits the open transaction, if any; d.mu is held.
func (d *DB) commit() error {
	if d.tx == nil {
		return nil
	}
	err := d.tx.Commit()
	d.tx = nil
	if err != nil {
		return fmt.Errorf("audit: history %s: %w", d.path, err)
	}
	return nil
}

// Flush commits the checks written so far.
func (d *DB) Flush() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.commit()
}

// DefaultDBPath is where the history is kept when no file is given: in the
// user's cache directory.
func DefaultDBPath() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "linkscan", "audit.db"), nil
}

// OpenDB opens the history at path, creating it (and its directory) if
// needed. busy is how long a write waits for another process holding the
// file (0: one minute).
func OpenDB(path string, busy time.Duration) (*DB, error) {
	if busy <= 0 {
		busy = time.Minute
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("audit: cannot open or create the history %s: %w", path, err)
	}
	// SQLite opens a file it cannot write read-only, and fails at the
	// first write: say it now
	if f, err := os.OpenFile(path, os.O_RDWR, 0); err == nil {
		f.Close()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("audit: cannot open or create the history %s: %w", path, errors.Unwrap(err))
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("audit: history %s: %w", path, err)
	}
	dsn := (&url.URL{Scheme: "file", Path: abs}).String() + "?_txlock=immediate&_pragma=synchronous(NORMAL)" +
		"&_pragma=busy_timeout(" + strconv.FormatInt(busy.Milliseconds(), 10) + ")"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("audit: history %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	d := &DB{path: path, db: db}
	if err := d.setup(); err != nil {
		db.Close()
		return nil, openError(path, err)
	}
	return d, nil
}

// openError says why the history at path could not be opened: a file
// SQLite cannot open, create or write (permissions, a read-only file
// system: SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_PERM) is not a damaged
// one (SQLITE_NOTADB, SQLITE_CORRUPT), and a user told "damaged" might
// delete a good history.
func openError(path string, err error) error {
	var e *sqlite.Error
	if errors.As(err, &e) {
		switch e.Code() & 0xff {
		case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
			return fmt.Errorf("audit: history %s: not an SQLite database, or damaged: %w", path, err)
		case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM:
			if cause := openCause(path); cause != "" {
				return fmt.Errorf("audit: cannot open or create the history %s: %s (%w)", path, cause, err)
			}
			return fmt.Errorf("audit: cannot open or create the history %s: %w", path, err)
		}
	}
	return fmt.Errorf("audit: history %s: %w", path, err)
}

// openCause finds what SQLite does not say: whether the file, or its
// directory (where the write-ahead log and its index are made), cannot
// be written by this user. It returns "" when both can.
func openCause(path string) string {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err == nil {
		f.Close()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Sprintf("the file: %v", errors.Unwrap(err))
	}
	dir := filepath.Dir(path)
	t, err := os.CreateTemp(dir, ".linkscan-probe-*")
	if err != nil {
		return fmt.Sprintf("its directory %s: %v", dir, errors.Unwrap(err))
	}
	t.Close()
	os.Remove(t.Name())
	return ""
}

// Close commits what is written and closes the database.
func (d *DB) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	err := d.commit()
	if cerr := d.db.Close(); err == nil {
		err = cerr
	}
	return err
}

const historySQL = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE links (
	id INTEGER PRIMARY KEY,
	url TEXT NOT NULL UNIQUE,
	first_seen INTEGER NOT NULL,
	last_ok INTEGER
);
CREATE TABLE checks (
	link INTEGER NOT NULL REFERENCES links(id),
	time INTEGER NOT NULL,
	status TEXT NOT NULL,
	permanent INTEGER NOT NULL DEFAULT 0,
	http_status INTEGER NOT NULL DEFAULT 0,
	class TEXT NOT NULL DEFAULT '',
	error TEXT NOT NULL DEFAULT '',
	chain TEXT NOT NULL DEFAULT '',
	final_url TEXT NOT NULL DEFAULT '',
	attempts INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX checks_link ON checks(link, time);
CREATE TABLE archives (
	url TEXT NOT NULL,
	source TEXT NOT NULL,
	want INTEGER NOT NULL,
	found INTEGER NOT NULL,
	capture_url TEXT NOT NULL DEFAULT '',
	capture_time INTEGER NOT NULL DEFAULT 0,
	queried INTEGER NOT NULL,
	PRIMARY KEY (url, source, want)
);
` + robotsSQL

// robotsSQL is the table of the origins whose robots.txt was found
// unreachable (5xx), since when. It came after schema 1 and is made in a
// history of schema 1 that lacks it: a linkscan that does not know it
// reads and writes the history as before (and leaves it alone).
const robotsSQL = `
CREATE TABLE IF NOT EXISTS robots (
	origin TEXT PRIMARY KEY,
	unreachable_since INTEGER NOT NULL
);
`

func (d *DB) setup() error {
	// openError tells a damaged file from one that cannot be opened
	if _, err := d.db.Exec(`PRAGMA journal_mode = WAL`); err != nil {
		return err
	}
	var n int
	if err := d.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table'`).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		tx, err := d.db.Begin()
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if _, err := tx.Exec(historySQL); err != nil {
			return err
		}
		if _, err := tx.Exec(`INSERT INTO meta VALUES ('application', ?), ('schema', ?)`, historyApp, strconv.Itoa(HistorySchema)); err != nil {
			return err
		}
		return tx.Commit()
	}
	meta := map[string]string{}
	rows, err := d.db.Query(`SELECT key, value FROM meta`)
	if err != nil {
		return errors.New("an SQLite database, but not a linkscan audit history")
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return err
		}
		meta[k] = v
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if meta["application"] != historyApp {
		return errors.New("an SQLite database, but not a linkscan audit history")
	}
	if meta["schema"] != strconv.Itoa(HistorySchema) {
		return fmt.Errorf("history schema %q, this linkscan reads %d", meta["schema"], HistorySchema)
	}
	// the robots table, in a history made before it (checked first: a
	// history another process is writing need not be waited for)
	var robots int
	if err := d.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'robots'`).Scan(&robots); err != nil {
		return err
	}
	if robots == 0 {
		_, err = d.db.Exec(robotsSQL)
	}
	return err
}

// robotsUnreachable notes that the robots.txt of origin was unreachable
// at now, and returns since when it has been (now, or the earlier time
// kept). A history that cannot say returns now.
func (d *DB) robotsUnreachable(origin string, now time.Time) time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	tx, err := d.txn()
	if err != nil {
		return now
	}
	if _, err := tx.Exec(`INSERT OR IGNORE INTO robots (origin, unreachable_since) VALUES (?, ?)`, origin, unix(now)); err != nil {
		return now
	}
	var since int64
	if err := tx.QueryRow(`SELECT unreachable_since FROM robots WHERE origin = ?`, origin).Scan(&since); err != nil || since > unix(now) {
		return now
	}
	return fromUnix(since)
}

// robotsReachable forgets that the robots.txt of origin was unreachable.
func (d *DB) robotsReachable(origin string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if tx, err := d.txn(); err == nil {
		tx.Exec(`DELETE FROM robots WHERE origin = ?`, origin)
	}
}

func unix(t time.Time) int64 { return t.UnixMilli() }

func fromUnix(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// record writes the check of r (when insert) and fills in r's history:
// first seen, last OK, the failing streak, and Dead when the streak is
// long enough.
func (d *DB) record(r Result, insert bool, cfg *Config) (Result, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	tx, err := d.txn()
	if err != nil {
		return r, err
	}
	c := r.Check
	t := unix(c.Time)
	var id int64
	var first int64
	var lastOK sql.NullInt64
	err = tx.QueryRow(`SELECT id, first_seen, last_ok FROM links WHERE url = ?`, r.Link.URL).Scan(&id, &first, &lastOK)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if !insert {
			return r, nil
		}
		res, err := tx.Exec(`INSERT INTO links (url, first_seen) VALUES (?, ?)`, r.Link.URL, t)
		if err != nil {
			return r, fmt.Errorf("audit: history %s: %w", d.path, err)
		}
		id, first = mustID(res), t
	case err != nil:
		return r, fmt.Errorf("audit: history %s: %w", d.path, err)
	}
	if insert {
		chain := ""
		if len(c.Chain) > 0 {
			b, _ := json.Marshal(c.Chain)
			chain = string(b)
		}
		if _, err := tx.Exec(`INSERT INTO checks (link, time, status, permanent, http_status, class, error, chain, final_url, attempts)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, t, string(c.Status), c.Permanent, c.HTTPStatus, string(c.Class),
			c.Error, chain, c.FinalURL, c.Attempts); err != nil {
			return r, fmt.Errorf("audit: history %s: %w", d.path, err)
		}
		if c.Status.Works() && (!lastOK.Valid || lastOK.Int64 < t) {
			lastOK = sql.NullInt64{Int64: t, Valid: true}
			if _, err := tx.Exec(`UPDATE links SET last_ok = ? WHERE id = ?`, t, id); err != nil {
				return r, fmt.Errorf("audit: history %s: %w", d.path, err)
			}
		}
		if t < first {
			first = t
			if _, err := tx.Exec(`UPDATE links SET first_seen = ? WHERE id = ?`, t, id); err != nil {
				return r, fmt.Errorf("audit: history %s: %w", d.path, err)
			}
		}
	}
	if err := d.fill(tx, &r, id, first, lastOK, cfg); err != nil {
		return r, err
	}
	if d.n++; d.n >= historyBatch || time.Since(d.began) >= historyBatchTime {
		return r, d.commit()
	}
	return r, nil
}

func mustID(res sql.Result) int64 {
	id, _ := res.LastInsertId()
	return id
}

// fill sets r's history fields: first seen, last OK, and the failing
// checks since the last that worked (up to r's check), their number and
// the first of them. r is Dead when its check is a permanent failure
// (deadAtOnce), or when the failing checks that count toward dead
// (countsTowardDead: all but tls-certificate ones) number at least
// DeadChecks and span at least DeadAfter; a check that does not count
// itself never makes its link Dead.
func (d *DB) fill(q querier, r *Result, id, first int64, lastOK sql.NullInt64, cfg *Config) error {
	r.FirstSeen = fromUnix(first)
	r.LastOK = time.Time{}
	if lastOK.Valid {
		r.LastOK = fromUnix(lastOK.Int64)
	}
	r.Failures, r.FailingSince = 0, time.Time{}
	if r.Check.Status != Failing {
		return nil
	}
	var n, counted int64
	var since, countedSince sql.NullInt64
	err := q.QueryRow(`SELECT count(*), min(time), count(CASE WHEN class != ? THEN 1 END), min(CASE WHEN class != ? THEN time END)
		FROM checks WHERE link = ? AND status = 'failing' AND time > ? AND time <= ?`,
		string(ClassTLSCert), string(ClassTLSCert), id, lastOK.Int64, unix(r.Check.Time)).Scan(&n, &since, &counted, &countedSince)
	if err != nil {
		return fmt.Errorf("audit: history %s: %w", d.path, err)
	}
	r.Failures = int(n)
	if since.Valid {
		r.FailingSince = fromUnix(since.Int64)
	}
	switch {
	case deadAtOnce(&r.Check):
		r.Status = Dead
	case !countsTowardDead(&r.Check):
	case int(counted) >= cfg.DeadChecks && countedSince.Valid && r.Check.Time.Sub(fromUnix(countedSince.Int64)) >= cfg.DeadAfter:
		r.Status = Dead
	}
	return nil
}

// deadAtOnce reports whether a failing check is permanent: the link as
// written can never work (a syntax error), so checking it again changes
// nothing and it is Dead at once, history or not.
func deadAtOnce(c *Check) bool {
	return c.Status == Failing && c.Permanent
}

// countsTowardDead reports whether a failing check counts toward Dead. A
// tls-certificate failure does not: the server answers, and the page may
// be there for anyone who trusts its certificate; such a link stays
// Failing (it neither counts nor resets the streak of other failures).
func countsTowardDead(c *Check) bool {
	return c.Class != ClassTLSCert
}

// cached returns the result of l's last check when it is younger than
// maxAge (or any age, when anyAge). A failure is returned as the failure it
// was: nothing but a check that worked is ever reported as working.
func (d *DB) cached(l Link, now time.Time, maxAge time.Duration, anyAge bool, cfg *Config) (Result, bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	tx, err := d.txn()
	if err != nil {
		return Result{}, false, err
	}
	r, ok, err := d.last(tx, l, cfg)
	if err != nil || !ok || !anyAge && now.Sub(r.Check.Time) >= maxAge {
		return Result{}, false, err
	}
	return r, true, nil
}

// querier is a *sql.DB or a *sql.Tx.
type querier interface {
	QueryRow(string, ...any) *sql.Row
}

// last returns the result of l's last check in the history, its status
// made Dead by fill when the history says so; ok is false when the
// history has no check of it.
func (d *DB) last(q querier, l Link, cfg *Config) (Result, bool, error) {
	key := Redact(l.URL)
	var id, first int64
	var lastOK sql.NullInt64
	var c Check
	var t int64
	var status, class, chain string
	// the link and its last check in one query (links.url and
	// checks(link, time) are indexed)
	err := q.QueryRow(`SELECT l.id, l.first_seen, l.last_ok, c.time, c.status, c.permanent, c.http_status, c.class,
		c.error, c.chain, c.final_url, c.attempts
		FROM links l JOIN checks c ON c.link = l.id WHERE l.url = ? ORDER BY c.time DESC, c.rowid DESC LIMIT 1`, key).
		Scan(&id, &first, &lastOK, &t, &status, &c.Permanent, &c.HTTPStatus, &class, &c.Error, &chain, &c.FinalURL, &c.Attempts)
	if errors.Is(err, sql.ErrNoRows) {
		return Result{}, false, nil
	}
	if err != nil {
		return Result{}, false, fmt.Errorf("audit: history %s: %w", d.path, err)
	}
	c.Time, c.Status, c.Class = fromUnix(t), Status(status), Class(class)
	if chain != "" {
		if err := json.Unmarshal([]byte(chain), &c.Chain); err != nil {
			return Result{}, false, fmt.Errorf("audit: history %s: redirect chain of %s: %w", d.path, key, err)
		}
	}
	l.URL = key
	r := Result{Link: l, Check: c, Status: c.Status, Cached: true}
	if err := d.fill(q, &r, id, first, lastOK, cfg); err != nil {
		return Result{}, false, err
	}
	return r, true, nil
}

// sibling returns the latest check, made at since or later, of key (an
// http, https, ftp or gopher URL without fragment, and without user
// information) or of key with any fragment, and the URL checked; ok is
// false when there is none.
func (d *DB) sibling(key string, since time.Time) (c Check, twin string, ok bool, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	tx, err := d.txn()
	if err != nil {
		return c, "", false, err
	}
	var t int64
	var status, class, chain string
	// links.url is indexed: an equality and a range ("#" < "$")
	err = tx.QueryRow(`SELECT l.url, c.time, c.status, c.permanent, c.http_status, c.class, c.error, c.chain, c.final_url, c.attempts
		FROM links l JOIN checks c ON c.link = l.id
		WHERE (l.url = ? OR l.url >= ? AND l.url < ?) AND c.time >= ?
		ORDER BY c.time DESC, c.rowid DESC LIMIT 1`, key, key+"#", key+"$", unix(since)).
		Scan(&twin, &t, &status, &c.Permanent, &c.HTTPStatus, &class, &c.Error, &chain, &c.FinalURL, &c.Attempts)
	if errors.Is(err, sql.ErrNoRows) {
		return c, "", false, nil
	}
	if err != nil {
		return c, "", false, fmt.Errorf("audit: history %s: %w", d.path, err)
	}
	c.Time, c.Status, c.Class = fromUnix(t), Status(status), Class(class)
	if chain != "" {
		if err := json.Unmarshal([]byte(chain), &c.Chain); err != nil {
			return c, "", false, fmt.Errorf("audit: history %s: redirect chain of %s: %w", d.path, twin, err)
		}
	}
	return c, twin, true, nil
}

// Checks returns every check of a URL in the history, oldest first.
func (d *DB) Checks(rawURL string) ([]Check, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	tx, err := d.txn()
	if err != nil {
		return nil, err
	}
	rows, err := tx.Query(`SELECT c.time, c.status, c.permanent, c.http_status, c.class, c.error, c.chain, c.final_url, c.attempts
		FROM checks c JOIN links l ON l.id = c.link WHERE l.url = ? ORDER BY c.time, c.rowid`, Redact(rawURL))
	if err != nil {
		return nil, fmt.Errorf("audit: history %s: %w", d.path, err)
	}
	defer rows.Close()
	var out []Check
	for rows.Next() {
		var c Check
		var t int64
		var status, class, chain string
		if err := rows.Scan(&t, &status, &c.Permanent, &c.HTTPStatus, &class, &c.Error, &chain, &c.FinalURL, &c.Attempts); err != nil {
			return nil, err
		}
		c.Time, c.Status, c.Class = fromUnix(t), Status(status), Class(class)
		if chain != "" {
			if err := json.Unmarshal([]byte(chain), &c.Chain); err != nil {
				return nil, err
			}
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// archived returns the stored answer of an archive for url near want
// (to the day): ok is false when the archive was never asked.
func (d *DB) archived(rawURL, source string, want time.Time) (cp *Capture, ok bool, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var found bool
	var capURL string
	var capTime, queried int64
	tx, err := d.txn()
	if err != nil {
		return nil, false, err
	}
	err = tx.QueryRow(`SELECT found, capture_url, capture_time, queried FROM archives WHERE url = ? AND source = ? AND want = ?`,
		Redact(rawURL), source, wantDay(want)).Scan(&found, &capURL, &capTime, &queried)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("audit: history %s: %w", d.path, err)
	}
	if !found {
		return nil, true, nil
	}
	return &Capture{Source: source, URL: capURL, Time: fromUnix(capTime), Queried: fromUnix(queried)}, true, nil
}

// keepArchived stores an archive's answer (cp nil: no capture).
func (d *DB) keepArchived(rawURL, source string, want time.Time, cp *Capture, queried time.Time) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var capURL string
	var capTime int64
	if cp != nil {
		capURL, capTime = cp.URL, unix(cp.Time)
	}
	tx, err := d.txn()
	if err != nil {
		return err
	}
	_, err = tx.Exec(`INSERT OR REPLACE INTO archives (url, source, want, found, capture_url, capture_time, queried) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		Redact(rawURL), source, wantDay(want), cp != nil, capURL, capTime, unix(queried))
	if err != nil {
		return fmt.Errorf("audit: history %s: %w", d.path, err)
	}
	return nil
}

// wantDay is the day of a date as YYYYMMDD (0 for no date).
func wantDay(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	t = t.UTC()
	return int64(t.Year()*10000 + int(t.Month())*100 + t.Day())
}
