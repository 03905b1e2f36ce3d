package audit

import (
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"
)

// DiskCollector gathers distinct links as Collector does, in a temporary
// SQLite file instead of memory, so that millions of links cost disk, not
// memory (SQLite's page cache is capped at 16 MiB). Each returns them in
// the order they were first added. Close removes the file.
type DiskCollector struct {
	dir  string
	db   *sql.DB
	tx   *sql.Tx
	add  *sql.Stmt
	n    int64
	done bool
}

// NewDiskCollector makes a DiskCollector in a new temporary directory
// under dir ("" for the system's).
func NewDiskCollector(dir string) (*DiskCollector, error) {
	d, err := os.MkdirTemp(dir, "linkscan-audit-links-")
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	if a, err := filepath.Abs(d); err == nil {
		d = a // a relative --tmpdir: a file: URL wants an absolute path
	}
	c := &DiskCollector{dir: d}
	dsn := (&url.URL{Scheme: "file", Path: filepath.Join(d, "links.db")}).String() +
		"?_pragma=journal_mode(OFF)&_pragma=synchronous(OFF)&_pragma=cache_size(-16384)&_pragma=temp_store(FILE)"
	if c.db, err = sql.Open("sqlite", dsn); err != nil {
		os.RemoveAll(d)
		return nil, fmt.Errorf("audit: %w", err)
	}
	c.db.SetMaxOpenConns(1)
	fail := func(err error) (*DiskCollector, error) {
		c.Close()
		return nil, fmt.Errorf("audit: links file %s: %w", d, err)
	}
	if _, err := c.db.Exec(`CREATE TABLE links (id INTEGER PRIMARY KEY, url TEXT NOT NULL UNIQUE, scheme TEXT, host TEXT,
		path TEXT, blob TEXT, offset INTEGER, message_id TEXT, part TEXT, line INTEGER, col INTEGER, date INTEGER, count INTEGER NOT NULL,
		cut INTEGER NOT NULL)`); err != nil {
		return fail(err)
	}
	if c.tx, err = c.db.Begin(); err != nil {
		return fail(err)
	}
	if c.add, err = c.tx.Prepare(`INSERT INTO links (url, scheme, host, path, blob, offset, message_id, part, line, col, date, count, cut)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (url) DO UPDATE SET count = count + excluded.count, cut = cut AND excluded.cut`); err != nil {
		return fail(err)
	}
	return c, nil
}

// Add adds one occurrence (l.Count of them, at least 1). It fails after
// Each has begun.
func (c *DiskCollector) Add(l Link) error {
	if c.done {
		return fmt.Errorf("audit: DiskCollector.Add after Each")
	}
	n := l.Count
	if n < 1 {
		n = 1
	}
	var date int64
	if !l.Date.IsZero() {
		date = l.Date.UnixNano()
	}
	if _, err := c.add.Exec(l.URL, l.Scheme, l.Host, l.Path, l.Blob, l.Offset, l.MessageID, l.Part, l.Line, l.Column, date, n, l.Cut); err != nil {
		return fmt.Errorf("audit: links file %s: %w", c.dir, err)
	}
	c.n++
	return nil
}

// Each calls fn with every distinct link, in the order first added,
// stopping at fn's first error. No link may be added after.
func (c *DiskCollector) Each(fn func(Link) error) error {
	if !c.done {
		c.done = true
		c.add.Close()
		if err := c.tx.Commit(); err != nil {
			return fmt.Errorf("audit: links file %s: %w", c.dir, err)
		}
		c.tx = nil
	}
	rows, err := c.db.Query(`SELECT url, scheme, host, path, blob, offset, message_id, part, line, col, date, count, cut FROM links ORDER BY id`)
	if err != nil {
		return fmt.Errorf("audit: links file %s: %w", c.dir, err)
	}
	defer rows.Close()
	for rows.Next() {
		var l Link
		var date int64
		if err := rows.Scan(&l.URL, &l.Scheme, &l.Host, &l.Path, &l.Blob, &l.Offset, &l.MessageID, &l.Part, &l.Line, &l.Column, &date, &l.Count, &l.Cut); err != nil {
			return fmt.Errorf("audit: links file %s: %w", c.dir, err)
		}
		if date != 0 {
			l.Date = time.Unix(0, date).UTC()
		}
		if err := fn(l); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Close removes the file.
func (c *DiskCollector) Close() error {
	if c.tx != nil {
		c.tx.Rollback()
		c.tx = nil
	}
	var err error
	if c.db != nil {
		err = c.db.Close()
		c.db = nil
	}
	if rerr := os.RemoveAll(c.dir); err == nil {
		err = rerr
	}
	return err
}
