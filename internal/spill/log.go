package spill

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// MaxRecord is the largest record a Log holds.
const MaxRecord = 1 << 30

// A Log is an append-only sequence of byte records, kept in memory up to a
// limit and in a temporary file past it, then read back in order. It is
// not safe for concurrent use.
type Log struct {
	dir      string
	memLimit int
	mem      []byte // the records while they fit memLimit
	f        *os.File
	w        *bufio.Writer
	n        int64
	err      error
	reading  bool
}

// NewLog returns an empty Log that keeps up to memLimit bytes in memory
// and writes its temporary file in dir (os.TempDir() when dir is "").
func NewLog(memLimit int, dir string) *Log {
	return &Log{dir: dir, memLimit: max(memLimit, 0)}
}

// Len returns the number of records appended.
func (l *Log) Len() int64 { return l.n }

// Memory returns the bytes the log holds in memory: the records while
// they fit the limit, then the write buffer.
func (l *Log) Memory() int64 {
	if l.w != nil {
		return int64(l.w.Size())
	}
	return int64(cap(l.mem))
}

// OnDisk reports whether the log went to a temporary file.
func (l *Log) OnDisk() bool { return l.f != nil }

// Append appends a copy of p as a record. After an error the log is
// unusable and every call returns that error.
func (l *Log) Append(p []byte) error {
	if l.err != nil {
		return l.err
	}
	if l.reading {
		l.err = errors.New("spill: Append after Reader")
		return l.err
	}
	if len(p) > MaxRecord {
		return fmt.Errorf("spill: a record of %d bytes is larger than %d", len(p), MaxRecord)
	}
	var hdr [binary.MaxVarintLen64]byte
	h := binary.PutUvarint(hdr[:], uint64(len(p)))
	if l.f == nil && len(l.mem)+h+len(p) > l.memLimit {
		f, err := createIn(l.dir, "linkscan-log-*", int64(l.memLimit))
		if err != nil {
			l.err = err
			return err
		}
		l.f, l.w = f, bufio.NewWriterSize(f, 64<<10)
		_, err = l.w.Write(l.mem)
		l.mem = nil
		if err != nil {
			return l.writeErr(err)
		}
	}
	if l.f == nil {
		if need := len(l.mem) + h + len(p); need > cap(l.mem) {
			// Grow by doubling, but never past the limit.
			m := make([]byte, len(l.mem), min(max(2*cap(l.mem), need, 4096), l.memLimit))
			copy(m, l.mem)
			l.mem = m
		}
		l.mem = append(l.mem, hdr[:h]...)
		l.mem = append(l.mem, p...)
	} else {
		if _, err := l.w.Write(hdr[:h]); err != nil {
			return l.writeErr(err)
		}
		if _, err := l.w.Write(p); err != nil {
			return l.writeErr(err)
		}
	}
	l.n++
	return nil
}

func (l *Log) writeErr(err error) error {
	l.err = fmt.Errorf("spill: writing a temporary file: %w", err)
	return l.err
}

// Reader returns a reader of the records in order. Append may not be
// called after it.
func (l *Log) Reader() (*LogReader, error) {
	if l.err != nil {
		return nil, l.err
	}
	l.reading = true
	if l.f == nil {
		return &LogReader{mem: l.mem, left: l.n}, nil
	}
	if err := l.w.Flush(); err != nil {
		return nil, l.writeErr(err)
	}
	size, err := l.f.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, l.writeErr(err)
	}
	return &LogReader{r: bufio.NewReaderSize(io.NewSectionReader(l.f, 0, size), 64<<10), left: l.n}, nil
}

// Close releases the log's memory and removes its temporary file.
func (l *Log) Close() error {
	l.mem = nil
	if l.err == nil {
		l.err = errors.New("spill: log closed")
	}
	if l.f != nil {
		err := closeTemp(l.f)
		l.f = nil
		return err
	}
	return nil
}

// A LogReader reads a Log's records in order.
type LogReader struct {
	mem  []byte
	r    *bufio.Reader
	buf  []byte
	left int64
}

// Next returns the next record, or io.EOF after the last. The record is
// valid until the next call.
func (r *LogReader) Next() ([]byte, error) {
	if r.left == 0 {
		return nil, io.EOF
	}
	if r.r == nil {
		n, h := binary.Uvarint(r.mem)
		if h <= 0 || n > uint64(len(r.mem)-h) {
			return nil, errDamaged
		}
		p := r.mem[h : h+int(n)]
		r.mem = r.mem[h+int(n):]
		r.left--
		return p, nil
	}
	n, err := binary.ReadUvarint(r.r)
	if err != nil || n > MaxRecord {
		return nil, fmt.Errorf("spill: reading a temporary file: %w", errors.Join(err, errDamaged))
	}
	if uint64(cap(r.buf)) < n {
		r.buf = make([]byte, n)
	}
	r.buf = r.buf[:n]
	if _, err := io.ReadFull(r.r, r.buf); err != nil {
		return nil, fmt.Errorf("spill: reading a temporary file: %w", err)
	}
	r.left--
	return r.buf, nil
}
