package audit

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// HistoryReader reads a history read-only, for those who use what audits
// found without auditing: `linkscan rewrite`'s archive rules (it is the
// rewrite.Archive they look links up in). It opens the SQLite file in
// read-only mode, writes nothing (not even the WAL setting), and asks no
// network: what it knows is what audits kept. An audit may write the
// file meanwhile (WAL): each lookup reads the history as last committed.
//
// It is safe for concurrent use.
type HistoryReader struct {
	path string
	db   *sql.DB
	cfg  Config // DeadChecks, DeadAfter: when a failing link is dead
	hist *DB    // fill, which names the file in its errors
}

// ErrNoHistory is returned by OpenHistoryReader for a file that does not
// exist.
var ErrNoHistory = errors.New("no audit history there (run linkscan audit with --db first)")

// ErrNotHistory is returned (wrapped) by OpenHistoryReader for a file that
// is not a linkscan audit history, or one of another schema.
var ErrNotHistory = errors.New("not a linkscan audit history")

// OpenHistoryReader opens the history at path read-only. cfg gives
// DeadChecks and DeadAfter, which decide when a failing link is dead, as
// for the audit (zero fields: their defaults, 3 checks over 7 days);
// nothing else of it is used. A file that does not exist gives an error
// wrapping ErrNoHistory; a file that is not a linkscan history (or of
// another schema) one wrapping ErrNotHistory.
func OpenHistoryReader(path string, cfg Config) (*HistoryReader, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("audit: history %s: %w", path, ErrNoHistory)
	}
	if err != nil {
		return nil, fmt.Errorf("audit: history %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("audit: history %s: not a regular file", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("audit: history %s: %w", path, err)
	}
	base := (&url.URL{Scheme: "file", Path: abs}).String() + "?mode=ro&_pragma=busy_timeout(" +
		strconv.FormatInt(time.Minute.Milliseconds(), 10) + ")&_pragma=query_only(1)"
	db, err := openChecked(path, base)
	if err != nil && strings.Contains(err.Error(), "readonly database") {
		// a WAL history in a directory this user cannot write: SQLite
		// cannot make its -shm file. With no log to read (an audit ends
		// by emptying it), the file is all there is: read it as
		// immutable, without the log.
		if fi, werr := os.Stat(path + "-wal"); werr != nil || fi.Size() == 0 {
			db, err = openChecked(path, base+"&immutable=1")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("audit: history %s: %w", path, err)
	}
	d := DB{path: path, db: db}
	c := Config{DeadChecks: cfg.DeadChecks, DeadAfter: cfg.DeadAfter}.Defaults()
	return &HistoryReader{path: path, db: db, cfg: c, hist: &d}, nil
}

// openChecked opens the database of dsn and checks that it is a
// history.
func openChecked(path, dsn string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(4)
	d := DB{path: path, db: db}
	if err := d.checkMeta(); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// checkMeta checks that the database is a linkscan history of this
// schema, reading only.
func (d *DB) checkMeta() error {
	var app, schema sql.NullString
	err := d.db.QueryRow(`SELECT (SELECT value FROM meta WHERE key = 'application'), (SELECT value FROM meta WHERE key = 'schema')`).
		Scan(&app, &schema)
	switch {
	case err != nil && strings.Contains(err.Error(), "file is not a database"):
		return fmt.Errorf("%w: not an SQLite database: %v", ErrNotHistory, err)
	case err != nil && !strings.Contains(err.Error(), "no such table"):
		return err
	}
	if err != nil || app.String != historyApp {
		return fmt.Errorf("%w: an SQLite database, but not this", ErrNotHistory)
	}
	if schema.String != strconv.Itoa(HistorySchema) {
		return fmt.Errorf("%w: history schema %q, this linkscan reads %d", ErrNotHistory, schema.String, HistorySchema)
	}
	return nil
}

// Path returns the file read.
func (h *HistoryReader) Path() string { return h.path }

// Close closes the database.
func (h *HistoryReader) Close() error { return h.db.Close() }

// Status returns the status the history gives the link with this URL
// (its canonical form, as audits keep it) as its last check left it,
// with Dead for a failing link whose failures since it last worked
// number DeadChecks over DeadAfter, and the result it stands on; ok is
// false when the link was never checked.
func (h *HistoryReader) Status(rawURL string) (r Result, ok bool, err error) {
	tx, err := h.db.Begin()
	if err != nil {
		return r, false, fmt.Errorf("audit: history %s: %w", h.path, err)
	}
	defer tx.Rollback()
	return h.status(tx, rawURL)
}

func (h *HistoryReader) status(tx *sql.Tx, rawURL string) (Result, bool, error) {
	return h.hist.last(tx, Link{URL: rawURL}, &h.cfg)
}

// Nearest returns, of the archived copies the history keeps of the URL
// (from every archive asked, for every date asked), the one captured
// nearest date (the earlier on a tie; copies of unknown time last); nil
// when it keeps none.
func (h *HistoryReader) Nearest(rawURL string, date time.Time) (*Capture, error) {
	return h.nearest(h.db, rawURL, date)
}

func (h *HistoryReader) nearest(q querier, rawURL string, date time.Time) (*Capture, error) {
	// the key archive() keeps copies under: no user information
	if u, err := url.Parse(rawURL); err == nil && u.User != nil {
		rawURL = withoutUser(u)
	}
	var cp Capture
	var ct, queried int64
	err := q.QueryRow(`SELECT source, capture_url, capture_time, queried FROM archives
		WHERE url = ? AND found AND capture_url != ''
		ORDER BY capture_time = ? OR capture_time = 0, abs(capture_time - ?), capture_time LIMIT 1`,
		Redact(rawURL), unix(time.Time{}), unix(date)).Scan(&cp.Source, &cp.URL, &ct, &queried)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("audit: history %s: %w", h.path, err)
	}
	if ct != 0 && ct != unix(time.Time{}) {
		cp.Time = fromUnix(ct)
	}
	cp.Queried = fromUnix(queried)
	return &cp, nil
}

// Archived is the lookup of rewrite's archive rules (rewrite.Archive):
// the link's status in the history ("" when never checked) and the
// archived copy kept of it captured nearest date (copyURL "" when none).
// An error is a failure to read the history.
func (h *HistoryReader) Archived(canonical string, date time.Time) (status, copyURL string, copyTime time.Time, err error) {
	tx, err := h.db.Begin()
	if err != nil {
		return "", "", time.Time{}, fmt.Errorf("audit: history %s: %w", h.path, err)
	}
	defer tx.Rollback()
	r, ok, err := h.status(tx, canonical)
	if err != nil || !ok {
		return "", "", time.Time{}, err
	}
	cp, err := h.nearest(tx, canonical, date)
	if err != nil || cp == nil {
		return string(r.Status), "", time.Time{}, err
	}
	return string(r.Status), cp.URL, cp.Time, nil
}
