package main

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"github.com/linkscan/linkscan/audit"
)

// resultStore keeps the results of a run in a temporary SQLite file, by
// URL, so that they can be written in input order (--in-order) or once
// per occurrence (--occurrences) after the checks, in bounded memory.
type resultStore struct {
	dir string
	db  *sql.DB
	tx  *sql.Tx
	ins *sql.Stmt
	get *sql.Stmt
}

func newResultStore(tmpDir string) (*resultStore, error) {
	d, err := os.MkdirTemp(tmpDir, "linkscan-audit-results-")
	if err != nil {
		return nil, err
	}
	s := &resultStore{dir: d}
	dsn := (&url.URL{Scheme: "file", Path: filepath.Join(d, "results.db")}).String() +
		"?_pragma=journal_mode(OFF)&_pragma=synchronous(OFF)&_pragma=cache_size(-16384)"
	if s.db, err = sql.Open("sqlite", dsn); err != nil {
		os.RemoveAll(d)
		return nil, err
	}
	s.db.SetMaxOpenConns(1)
	fail := func(err error) (*resultStore, error) {
		s.close()
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

// put keeps r under its (redacted) URL.
func (s *resultStore) put(r audit.Result) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if _, err := s.ins.Exec(r.Link.URL, b); err != nil {
		return fmt.Errorf("results file %s: %w", s.dir, err)
	}
	return nil
}

// done ends the puts; lookups may begin.
func (s *resultStore) done() error {
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

// lookup returns the result of a canonical URL (found by its redacted
// form, as results carry it); ok is false when it has none (a run cut
// short).
func (s *resultStore) lookup(canonical string) (r audit.Result, ok bool, err error) {
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

func (s *resultStore) close() {
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
