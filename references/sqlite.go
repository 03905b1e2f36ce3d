package references

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver, pure Go
)

// SQLite is a Store in an SQLite database file, kept between runs. Writes
// go through one open transaction, committed by Commit (and every
// batchSize messages), so that indexing a large archive neither holds it
// in memory nor pays for a commit per message.
type SQLite struct {
	db    *sql.DB
	tx    *sql.Tx
	n     int
	stmts map[string]*sql.Stmt
}

const batchSize = 20000

const schema = `
PRAGMA journal_mode = WAL;
PRAGMA synchronous = NORMAL;
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files(path TEXT PRIMARY KEY, size INTEGER, mtime INTEGER);
CREATE TABLE IF NOT EXISTS messages(id TEXT, synthetic INTEGER, file TEXT, offset INTEGER, name TEXT);
CREATE INDEX IF NOT EXISTS messages_id ON messages(id);
CREATE INDEX IF NOT EXISTS messages_file ON messages(file);
CREATE TABLE IF NOT EXISTS parts(id TEXT, cid TEXT, part TEXT, file TEXT, offset INTEGER, name TEXT);
CREATE INDEX IF NOT EXISTS parts_key ON parts(id, cid);
CREATE INDEX IF NOT EXISTS parts_file ON parts(file);
CREATE TABLE IF NOT EXISTS articles(article TEXT, id TEXT, file TEXT, offset INTEGER, name TEXT);
CREATE INDEX IF NOT EXISTS articles_key ON articles(article);
CREATE INDEX IF NOT EXISTS articles_file ON articles(file);
CREATE TABLE IF NOT EXISTS groups(name TEXT, file TEXT);
CREATE INDEX IF NOT EXISTS groups_name ON groups(name);
CREATE INDEX IF NOT EXISTS groups_file ON groups(file);
CREATE TABLE IF NOT EXISTS hosts(name TEXT, file TEXT);
CREATE INDEX IF NOT EXISTS hosts_name ON hosts(name);
CREATE INDEX IF NOT EXISTS hosts_file ON hosts(file);
INSERT OR IGNORE INTO meta(key, value) VALUES ('schema', '1');
`

// OpenSQLite opens (creating if needed) the index database at path.
func OpenSQLite(path string) (*SQLite, error) {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return nil, fmt.Errorf("references: %s: %w", path, err)
	}
	db.SetMaxOpenConns(1) // one writer; reads go through the same connection
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("references: %s: not an index database, or unusable: %w", path, err)
	}
	var v string
	if err := db.QueryRow(`SELECT value FROM meta WHERE key = 'schema'`).Scan(&v); err != nil || v != "1" {
		db.Close()
		return nil, fmt.Errorf("references: %s: index schema %q, want 1", path, v)
	}
	return &SQLite{db: db, stmts: map[string]*sql.Stmt{}}, nil
}

// exec runs a write in the current transaction, opening one if needed.
func (s *SQLite) exec(query string, args ...any) error {
	if s.tx == nil {
		tx, err := s.db.Begin()
		if err != nil {
			return err
		}
		s.tx = tx
		clear(s.stmts)
	}
	st, ok := s.stmts[query]
	if !ok {
		var err error
		if st, err = s.tx.Prepare(query); err != nil {
			return err
		}
		s.stmts[query] = st
	}
	_, err := st.Exec(args...)
	return err
}

func (s *SQLite) Unchanged(file string, size int64, mtime time.Time) (bool, error) {
	var sz, mt int64
	err := s.query(`SELECT size, mtime FROM files WHERE path = ?`, file).Scan(&sz, &mt)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return sz == size && mt == mtime.UnixNano(), nil
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

func (s *SQLite) BeginFile(file string, size int64, mtime time.Time) error {
	for _, q := range []string{
		`DELETE FROM messages WHERE file = ?`, `DELETE FROM parts WHERE file = ?`,
		`DELETE FROM articles WHERE file = ?`, `DELETE FROM groups WHERE file = ?`, `DELETE FROM hosts WHERE file = ?`,
	} {
		if err := s.exec(q, file); err != nil {
			return err
		}
	}
	return s.exec(`INSERT OR REPLACE INTO files(path, size, mtime) VALUES (?, ?, ?)`, file, size, mtime.UnixNano())
}

func (s *SQLite) Add(e *Entry) error {
	synth := 0
	if e.Synthetic {
		synth = 1
	}
	l := e.Loc
	if err := s.exec(`INSERT INTO messages(id, synthetic, file, offset, name) VALUES (?, ?, ?, ?, ?)`, e.ID, synth, l.File, l.Offset, l.Name); err != nil {
		return err
	}
	if !e.Synthetic {
		for _, p := range e.Parts {
			if err := s.exec(`INSERT INTO parts(id, cid, part, file, offset, name) VALUES (?, ?, ?, ?, ?, ?)`, e.ID, p.ContentID, p.Path, l.File, l.Offset, l.Name); err != nil {
				return err
			}
		}
		for _, a := range e.Articles {
			if err := s.exec(`INSERT INTO articles(article, id, file, offset, name) VALUES (?, ?, ?, ?, ?)`, a, e.ID, l.File, l.Offset, l.Name); err != nil {
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
	if s.n%batchSize == 0 {
		return s.Commit()
	}
	return nil
}

func (s *SQLite) Commit() error {
	if s.tx == nil {
		return nil
	}
	clear(s.stmts)
	err := s.tx.Commit()
	s.tx = nil
	return err
}

func (s *SQLite) locations(q string, args ...any) ([]Location, error) {
	rows, err := s.rows(q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Location
	for rows.Next() {
		var l Location
		if err := rows.Scan(&l.MessageID, &l.File, &l.Offset, &l.Name, &l.Part, &l.Group); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

func (s *SQLite) Messages(id string) ([]Location, error) {
	return s.locations(`SELECT id, file, offset, name, '', '' FROM messages WHERE id = ? AND synthetic = 0 ORDER BY rowid`, id)
}

func (s *SQLite) Parts(id, cid string) ([]Location, error) {
	return s.locations(`SELECT id, file, offset, name, part, '' FROM parts WHERE id = ? AND cid = ? ORDER BY rowid`, id, cid)
}

func (s *SQLite) Article(groupNumber string) ([]Location, error) {
	return s.locations(`SELECT id, file, offset, name, '', article FROM articles WHERE article = ? ORDER BY rowid`, groupNumber)
}

func (s *SQLite) HasGroup(group string) (bool, error) {
	var one int
	err := s.query(`SELECT 1 FROM groups WHERE name = ? LIMIT 1`, group).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

func (s *SQLite) HasHost(host string) (bool, error) {
	var one int
	err := s.query(`SELECT 1 FROM hosts WHERE name = ? LIMIT 1`, strings.ToLower(host)).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

func (s *SQLite) Stats() (Stats, error) {
	var st Stats
	for _, q := range []struct {
		sql string
		dst *int
	}{
		{`SELECT count(*) FROM files`, &st.Files},
		{`SELECT count(*) FROM messages`, &st.Messages},
		{`SELECT count(DISTINCT id) FROM messages WHERE synthetic = 0`, &st.MessageIDs},
		{`SELECT count(*) FROM messages WHERE synthetic = 1`, &st.Synthetic},
		{`SELECT count(*) FROM (SELECT DISTINCT id, cid FROM parts)`, &st.ContentIDs},
		{`SELECT count(DISTINCT name) FROM groups`, &st.Groups},
		{`SELECT count(DISTINCT article) FROM articles`, &st.Articles},
	} {
		if err := s.query(q.sql).Scan(q.dst); err != nil {
			return st, err
		}
	}
	return st, nil
}

func (s *SQLite) Close() error {
	err := s.Commit()
	if cerr := s.db.Close(); err == nil {
		err = cerr
	}
	return err
}
