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
	"sync"
	"time"
)

// HistoryReader reads a history read-only, for those who use what audits
// found without auditing: `linkscan rewrite`'s archive rules (it is the
// rewrite.Archive they look links up in). It opens the SQLite file in
// read-only mode, writes nothing (not even the WAL setting), and asks no
// network: what it knows is what audits kept. An audit may write the
// file meanwhile (WAL): each query reads the history as last committed.
//
// It is safe for concurrent use.
type HistoryReader struct {
	path string
	db   *sql.DB
	cfg  Config // DeadChecks, DeadAfter: when a failing link is dead
	hist *DB    // last and fill, which name the file in their errors

	q           *prepared
	mu          sync.Mutex
	known       map[string]known // what Archived read, by URL
	knownCopies int              // the copies known holds
}

// prepared runs queries through statements prepared once (SQLite
// compiles a statement each time otherwise); safe for concurrent use.
type prepared struct {
	db *sql.DB
	mu sync.Mutex
	st map[string]*sql.Stmt
}

func (p *prepared) stmt(q string) (*sql.Stmt, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st, ok := p.st[q]; ok {
		return st, nil
	}
	st, err := p.db.Prepare(q)
	if err != nil {
		return nil, err
	}
	p.st[q] = st
	return st, nil
}

// QueryRow is (*sql.DB).QueryRow through a prepared statement.
func (p *prepared) QueryRow(q string, args ...any) *sql.Row {
	st, err := p.stmt(q)
	if err != nil {
		return p.db.QueryRow(q, args...) // gives the error
	}
	return st.QueryRow(args...)
}

// Query is (*sql.DB).Query through a prepared statement.
func (p *prepared) Query(q string, args ...any) (*sql.Rows, error) {
	st, err := p.stmt(q)
	if err != nil {
		return nil, err
	}
	return st.Query(args...)
}

func (p *prepared) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, st := range p.st {
		st.Close()
	}
	clear(p.st)
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
	c := Config{HistoryPolicy: HistoryPolicy{DeadChecks: cfg.DeadChecks, DeadAfter: cfg.DeadAfter}}.Defaults()
	return &HistoryReader{path: path, db: db, cfg: c, hist: &d, q: &prepared{db: db, st: map[string]*sql.Stmt{}},
		known: map[string]known{}}, nil
}

// openChecked opens the database of dsn and checks that it is a
// history.
func openChecked(path, dsn string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	// two connections (each with its page cache): lookups are short, and
	// rewrite's workers are as many as the cores
	db.SetMaxOpenConns(2)
	db.SetMaxIdleConns(2)
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
func (h *HistoryReader) Close() error {
	h.q.close()
	return h.db.Close()
}

// Status returns the status the history gives the link with this URL
// (its canonical form, as audits keep it) as its last check left it,
// with Dead for a failing link whose failures since it last worked
// number DeadChecks over DeadAfter, and the result it stands on; ok is
// false when the link was never checked.
func (h *HistoryReader) Status(rawURL string) (r Result, ok bool, err error) {
	return h.hist.last(h.q, Link{URL: rawURL}, &h.cfg)
}

// maxCopies bounds the copies of one URL read from the history.
const maxCopies = 1000

// copies returns the copies the history keeps of a URL (from every
// archive asked, for every date asked), by capture time, each with the
// URL's fragment.
func (h *HistoryReader) copies(rawURL string) ([]Capture, error) {
	// the key archive() keeps copies under (no user information, no
	// fragment), and the URL as it was, under which histories written
	// before fragments were dropped keep them
	key, frag := archiveKey(rawURL)
	rows, err := h.q.Query(`SELECT source, capture_url, capture_time, queried FROM archives
		WHERE url IN (?, ?) AND found AND capture_url != '' ORDER BY capture_time, source LIMIT ?`, Redact(key), Redact(rawURL), maxCopies)
	if err != nil {
		return nil, fmt.Errorf("audit: history %s: %w", h.path, err)
	}
	defer rows.Close()
	var out []Capture
	for rows.Next() {
		var cp Capture
		var ct, queried int64
		if err := rows.Scan(&cp.Source, &cp.URL, &ct, &queried); err != nil {
			return nil, fmt.Errorf("audit: history %s: %w", h.path, err)
		}
		if ct != 0 && ct != unix(time.Time{}) {
			cp.Time = fromUnix(ct)
		}
		cp.Queried = fromUnix(queried)
		out = append(out, *withFragment(&cp, frag))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("audit: history %s: %w", h.path, err)
	}
	return out, nil
}

// nearest picks of cps the copy captured nearest date: the earlier on
// a tie, copies of unknown time only when there is no other.
func nearest(cps []Capture, date time.Time) *Capture {
	var best *Capture
	var bestD time.Duration
	for i := range cps {
		cp := &cps[i]
		if cp.Time.IsZero() {
			if best == nil {
				best, bestD = cp, -1
			}
			continue
		}
		d := cp.Time.Sub(date)
		if d < 0 {
			d = -d
		}
		if best == nil || bestD < 0 || d < bestD || d == bestD && cp.Time.Before(best.Time) {
			best, bestD = cp, d
		}
	}
	return best
}

// Nearest returns, of the archived copies the history keeps of the URL
// (from every archive asked, for every date asked), the one captured
// nearest date (the earlier on a tie; copies of unknown time only when
// there is no other); nil when it keeps none.
func (h *HistoryReader) Nearest(rawURL string, date time.Time) (*Capture, error) {
	cps, err := h.copies(rawURL)
	if err != nil {
		return nil, err
	}
	if cp := nearest(cps, date); cp != nil {
		c := *cp
		return &c, nil
	}
	return nil, nil
}

// known is what Archived read of one URL: its status ("" never
// checked) and its copies (URL and time only: Archived gives no more).
type known struct {
	status string
	copies []Capture
}

// maxKnown bounds the URLs Archived remembers (some 300 bytes each, a
// dead link with three copies 600), and maxKnownCopies the copies they
// hold together (a link may have up to maxCopies): past either, it
// forgets them all and begins again, so that the memory of a long run
// stays under about 10 MB.
const (
	maxKnown       = 1 << 14
	maxKnownCopies = 1 << 15
)

// remember keeps what Archived read of url, within maxKnown URLs and
// maxKnownCopies copies.
func (h *HistoryReader) remember(url string, k known) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.known) >= maxKnown || h.knownCopies+len(k.copies) > maxKnownCopies {
		clear(h.known)
		h.knownCopies = 0
	}
	h.known[url] = k
	h.knownCopies += len(k.copies)
}

// Archived is the lookup of rewrite's archive rules (rewrite.Archive):
// the link's status in the history ("" when never checked) and the
// archived copy kept of it captured nearest date (copyURL "" when none).
// An error is a failure to read the history. What it reads of a URL is
// remembered (up to 16,384 URLs): the same link in other messages costs
// no query, and an audit writing meanwhile is not seen for URLs already
// read.
func (h *HistoryReader) Archived(canonical string, date time.Time) (status, copyURL string, copyTime time.Time, err error) {
	h.mu.Lock()
	k, ok := h.known[canonical]
	h.mu.Unlock()
	if !ok {
		r, found, err := h.Status(canonical)
		if err != nil {
			return "", "", time.Time{}, err
		}
		if found {
			k.status = string(r.Status)
			if k.copies, err = h.copies(canonical); err != nil {
				return "", "", time.Time{}, err
			}
			for i := range k.copies {
				k.copies[i].Source, k.copies[i].Queried = "", time.Time{}
			}
		}
		h.remember(canonical, k)
	}
	if cp := nearest(k.copies, date); cp != nil {
		return k.status, cp.URL, cp.Time, nil
	}
	return k.status, "", time.Time{}, nil
}
