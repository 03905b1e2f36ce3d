// Package auditspool holds what linkscan audit keeps on disk during a
// run to write its report in another order than the checks end in: the
// results by URL (ResultStore, for --in-order and --occurrences) and
// every occurrence of the links (OccurrenceSpool, for --occurrences), in
// bounded memory.
package auditspool

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/linkscan/linkscan/audit"
)

// ResultStore keeps the results of a run in a temporary SQLite file, by
// (redacted) URL, so that a caller can write them after the checks in
// another order than the checks end in (linkscan audit --in-order: input
// order; --occurrences: once per occurrence) in bounded memory. Put the
// results, call Done, then Lookup; Close removes the file.
type ResultStore struct {
	dir string
	db  *sql.DB
	tx  *sql.Tx
	ins *sql.Stmt
	get *sql.Stmt
}

// NewResultStore makes the store's file in a new directory of tmpDir (""
// for os.TempDir()).
func NewResultStore(tmpDir string) (*ResultStore, error) {
	d, err := os.MkdirTemp(tmpDir, "linkscan-audit-results-")
	if err != nil {
		return nil, err
	}
	if a, err := filepath.Abs(d); err == nil {
		d = a // a relative --tmpdir: a file: URL wants an absolute path
	}
	s := &ResultStore{dir: d}
	dsn := (&url.URL{Scheme: "file", Path: filepath.Join(d, "results.db")}).String() +
		"?_pragma=journal_mode(OFF)&_pragma=synchronous(OFF)&_pragma=cache_size(-16384)"
	if s.db, err = sql.Open("sqlite", dsn); err != nil {
		os.RemoveAll(d)
		return nil, err
	}
	s.db.SetMaxOpenConns(1)
	fail := func(err error) (*ResultStore, error) {
		s.Close()
		return nil, fmt.Errorf("results file %s: %w", d, err)
	}
	if _, err := s.db.Exec(`CREATE TABLE results (url TEXT PRIMARY KEY, result BLOB NOT NULL)`); err != nil {
		return fail(err)
	}
	if s.tx, err = s.db.Begin(); err != nil {
		return fail(err)
	}
	if s.ins, err = s.tx.Prepare(`INSERT OR REPLACE INTO results (url, result) VALUES (?, ?)`); err != nil {
		return fail(err)
	}
	return s, nil
}

// Put keeps r under its (redacted) URL; a later result of the same URL
// replaces it.
func (s *ResultStore) Put(r audit.Result) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if _, err := s.ins.Exec(r.Link.URL, b); err != nil {
		return fmt.Errorf("results file %s: %w", s.dir, err)
	}
	return nil
}

// Done ends the Puts; Lookups may begin.
func (s *ResultStore) Done() error {
	s.ins.Close()
	err := s.tx.Commit()
	s.tx = nil
	if err == nil {
		s.get, err = s.db.Prepare(`SELECT result FROM results WHERE url = ?`)
	}
	if err != nil {
		return fmt.Errorf("results file %s: %w", s.dir, err)
	}
	return nil
}

// Lookup returns the result of a canonical URL (found by its redacted
// form, as results carry it); ok is false when it has none (a run cut
// short).
func (s *ResultStore) Lookup(canonical string) (r audit.Result, ok bool, err error) {
	var b []byte
	err = s.get.QueryRow(audit.Redact(canonical)).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, nil
	}
	if err == nil {
		err = json.Unmarshal(b, &r)
	}
	if err != nil {
		return r, false, fmt.Errorf("results file %s: %w", s.dir, err)
	}
	return r, true, nil
}

// Close closes the store and removes its file.
func (s *ResultStore) Close() {
	if s.tx != nil {
		s.tx.Rollback()
	}
	if s.get != nil {
		s.get.Close()
	}
	if s.db != nil {
		s.db.Close()
	}
	os.RemoveAll(s.dir)
}

// Occurrence is one place a link was found, as OccurrenceSpool keeps it.
type Occurrence struct {
	URL       string    `json:"u"`
	Path      string    `json:"p"`
	Blob      string    `json:"b,omitempty"`
	Offset    int64     `json:"o"`
	MessageID string    `json:"m,omitempty"`
	Part      string    `json:"t,omitempty"`
	Line      int       `json:"l"`
	Column    int       `json:"c"`
	Date      time.Time `json:"d"`
}

// Place returns l with the occurrence's place (path ... date); the rest
// of l (its URL, count) is kept.
func (o Occurrence) Place(l audit.Link) audit.Link {
	l.Path, l.Blob, l.Offset, l.MessageID, l.Part, l.Line, l.Column, l.Date = o.Path, o.Blob, o.Offset, o.MessageID, o.Part, o.Line, o.Column, o.Date
	return l
}

// OccurrenceSpool keeps every occurrence of the links of a run in a
// temporary file, in order (linkscan audit --occurrences), in bounded
// memory. The file is removed at once and gone when the spool is closed.
type OccurrenceSpool struct {
	f   *os.File
	bw  *bufio.Writer
	enc *json.Encoder
}

// NewOccurrenceSpool makes the spool's file in dir ("" for os.TempDir()).
func NewOccurrenceSpool(dir string) (*OccurrenceSpool, error) {
	f, err := os.CreateTemp(dir, "linkscan-audit-occurrences-")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name()) // gone when closed
	bw := bufio.NewWriterSize(f, 64<<10)
	return &OccurrenceSpool{f: f, bw: bw, enc: json.NewEncoder(bw)}, nil
}

// Add keeps l's place (a link of scan --unique stands for its first
// occurrence only).
func (s *OccurrenceSpool) Add(l audit.Link) error {
	return s.enc.Encode(Occurrence{URL: l.URL, Path: l.Path, Blob: l.Blob, Offset: l.Offset, MessageID: l.MessageID, Part: l.Part,
		Line: l.Line, Column: l.Column, Date: l.Date})
}

// Each calls fn with every occurrence, in the order added; an error of
// fn or of the file ends it and is returned.
func (s *OccurrenceSpool) Each(fn func(Occurrence) error) error {
	if err := s.bw.Flush(); err != nil {
		return err
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	dec := json.NewDecoder(bufio.NewReaderSize(s.f, 64<<10))
	for {
		var o Occurrence
		if err := dec.Decode(&o); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("occurrences file: %w", err)
		}
		if err := fn(o); err != nil {
			return err
		}
	}
}

// Close closes (and so removes) the spool's file.
func (s *OccurrenceSpool) Close() error { return s.f.Close() }
