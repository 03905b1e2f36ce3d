package report

import (
	"fmt"

	"github.com/linkscan/linkscan/internal/spill"
)

// DefaultMemory is the memory budget of Unique, in bytes: about 4.8
// million distinct links are kept in memory before the first spill to
// disk. It is also a summary's (NewSummary, NewWriter).
const DefaultMemory = 256 << 20

// Unique is UniqueWithBudget with DefaultMemory and the system's
// temporary directory.
func Unique(w Writer) Writer { return UniqueWithBudget(w, DefaultMemory, "") }

// UniqueWithBudget wraps w so that it receives one record per distinct
// link: the first occurrence in input order, with Count set to the number
// of occurrences. Links are told apart by their canonical form, or as
// written when they have none (a link without a canonical form never
// equals one with it). The records are written at Close, in order of
// first occurrence.
//
// Memory stays within about budget bytes (DefaultMemory when budget <= 0):
// each distinct link costs a 128-bit hash of its key in a table (32 to 64
// bytes a link, see package internal/spill for the collision odds), and
// the first occurrences are kept encoded in a temporary file in tmpDir
// (os.TempDir() when ""), in memory while they take less than a sixteenth
// of the budget (at most 4 MiB). Past the budget the table spills to
// sorted runs in tmpDir. A temporary file that cannot be made, written
// or read is an error of Write or Close, which names the directory.
// Temporary files are removed at once (on Unix) or at Close.
func UniqueWithBudget(w Writer, budget int64, tmpDir string) Writer {
	if budget <= 0 {
		budget = DefaultMemory
	}
	logMem := min(budget/16, 4<<20)
	return &uniqueWriter{
		w:    w,
		hash: spill.NewHasher(),
		set:  spill.NewSet(budget-logMem, tmpDir),
		log:  spill.NewLog(int(logMem), tmpDir),
	}
}

// UniqueFirst wraps w so that it receives the first occurrence of each
// distinct link, told apart as by UniqueWithBudget, as soon as it is
// read: output streams, and a closed pipe ends the run at once. Records
// are passed on unchanged, so Count is not set (the number of occurrences
// is not known when a record is written). Memory and temporary files are
// as for UniqueWithBudget, without the file of first occurrences.
func UniqueFirst(w Writer, budget int64, tmpDir string) Writer {
	if budget <= 0 {
		budget = DefaultMemory
	}
	return &uniqueWriter{w: w, hash: spill.NewHasher(), set: spill.NewSet(budget, tmpDir), first: true}
}

type uniqueWriter struct {
	w     Writer
	hash  *spill.Hasher
	set   *spill.Set
	log   *spill.Log // nil with first
	first bool
	key   []byte
	enc   []byte
	prev  Record // the record logged last, for the binary form
	err   error
}

func (u *uniqueWriter) Message(parts int, damaged bool) { u.w.Message(parts, damaged) }

// Unreadable counts an unreadable input in the wrapped writer.
func (u *uniqueWriter) Unreadable() { Unreadable(u.w) }

// keyHash hashes the key that tells links apart: the canonical form, or
// a zero byte and the URL as written.
func (u *uniqueWriter) keyHash(r *Record) spill.Hash {
	if r.Canonical != "" {
		return u.hash.String(r.Canonical)
	}
	u.key = append(append(u.key[:0], 0), r.URL...)
	return u.hash.Bytes(u.key)
}

func (u *uniqueWriter) Write(r *Record) error {
	if u.err != nil {
		return u.err
	}
	_, isNew, err := u.set.Add(u.keyHash(r))
	if err != nil {
		u.err = fmt.Errorf("report: --unique: %w", err)
		return u.err
	}
	if !isNew {
		return nil
	}
	if u.first {
		return u.w.Write(r)
	}
	var prev *Record
	if u.log.Len() > 0 {
		prev = &u.prev
	}
	u.enc = appendRecordBinary(u.enc[:0], r, prev)
	u.prev = *r
	if err := u.log.Append(u.enc); err != nil {
		u.err = fmt.Errorf("report: --unique: %w", err)
	}
	return u.err
}

func (u *uniqueWriter) Close() error {
	defer u.set.Close()
	if u.first {
		if u.err != nil {
			abandon(u.w)
			return u.err
		}
		return u.w.Close()
	}
	defer u.log.Close()
	if u.err != nil {
		abandon(u.w)
		return u.err
	}
	if err := u.emit(); err != nil {
		abandon(u.w)
		return err
	}
	return u.w.Close()
}

// releaser is implemented by the writers that hold temporary files
// (summaries): release removes them and frees their memory, writing
// nothing.
type releaser interface{ release() error }

// abandon releases what w holds when it is not to be closed (nothing is
// written after a failure).
func abandon(w Writer) {
	if r, ok := w.(releaser); ok {
		r.release()
	}
}

// emit writes the first occurrences with their counts.
func (u *uniqueWriter) emit() error {
	rd, err := u.log.Reader()
	if err != nil {
		return fmt.Errorf("report: --unique: %w", err)
	}
	if n := u.log.Len(); uint64(n) != u.set.Len() {
		return fmt.Errorf("report: --unique: %d records kept for %d distinct links", n, u.set.Len())
	}
	var werr error // of the wrapped writer, returned as it is
	var prev *Record
	err = u.set.Each(func(_, n uint64) error {
		p, err := rd.Next()
		if err != nil {
			return err
		}
		rec := new(Record)
		if err := decodeRecordBinary(p, rec, prev); err != nil {
			return err
		}
		u.prev = *rec
		prev = &u.prev
		rec.Count = int(min(n, uint64(maxInt)))
		werr = u.w.Write(rec)
		return werr
	})
	if err != nil && err == werr {
		return err
	}
	if err != nil {
		return fmt.Errorf("report: --unique: %w", err)
	}
	return nil
}

const maxInt = int(^uint(0) >> 1)

// memory returns the bytes held in memory, for benchmarks.
func (u *uniqueWriter) memory() int64 {
	m := u.set.Memory() + int64(cap(u.enc)+cap(u.key))
	if u.log != nil {
		m += u.log.Memory()
	}
	return m
}
