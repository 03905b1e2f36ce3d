package main

import (
	"bytes"
	"io"
	"os"
)

// wantBar reports whether a command draws its progress bar on stderr
// when its results go to out (nil: nothing is written on standard output
// while the bar is up). auto draws it only on a terminal that out is not
// shown on too; always draws it in every case, and results written on
// the same terminal go through a lineWriter, which takes the bar off the
// screen before each result line.
func wantBar(progress string, out, stderr io.Writer) bool {
	switch progress {
	case "never":
		return false
	case "always":
		return true
	}
	return isTerminal(stderr) && (out == nil || !sameFile(out, stderr))
}

// sameFile reports whether a and b write to the same file: a terminal,
// or 2>&1 to a pipe or a file.
func sameFile(a, b io.Writer) bool {
	fa, fb := fileOf(a), fileOf(b)
	if fa == nil || fb == nil {
		return false
	}
	sa, err := fa.Stat()
	if err != nil {
		return false
	}
	sb, err := fb.Stat()
	return err == nil && os.SameFile(sa, sb)
}

// resultWriter returns the writer a command's results go to on out: out
// itself, or, when out is the file standard error writes to, a
// lineWriter that shares con's lock.
func resultWriter(con *console, out, stderr io.Writer) io.Writer {
	if !sameFile(out, stderr) {
		return out
	}
	return &lineWriter{c: con, w: out}
}

// flushResults writes what a lineWriter holds of a last line without
// its end; for another writer it does nothing.
func flushResults(w io.Writer) error {
	if lw, ok := w.(*lineWriter); ok {
		return lw.Flush()
	}
	return nil
}

// maxPendingLine bounds the bytes of an unfinished line a lineWriter
// holds; a longer line is written in pieces of that size.
const maxPendingLine = 64 << 10

// lineWriter passes whole lines to w under the console's lock, with the
// progress bar off the screen while they are written. It is for
// standard output on the terminal (or file) standard error writes to:
// there a warning, or the bar, could otherwise land inside a result
// line. An unfinished line waits for its end, up to maxPendingLine
// bytes.
type lineWriter struct {
	c       *console
	w       io.Writer
	pending []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.c.mu.Lock()
	defer l.c.mu.Unlock()
	l.pending = append(l.pending, p...)
	n := bytes.LastIndexByte(l.pending, '\n') + 1
	if n == 0 && len(l.pending) < maxPendingLine {
		return len(p), nil
	}
	if n == 0 {
		n = len(l.pending)
	}
	err := l.c.raw(l.w, l.pending[:n])
	l.pending = append(l.pending[:0], l.pending[n:]...)
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes the unfinished line held, if any.
func (l *lineWriter) Flush() error {
	l.c.mu.Lock()
	defer l.c.mu.Unlock()
	if len(l.pending) == 0 {
		return nil
	}
	err := l.c.raw(l.w, l.pending)
	l.pending = l.pending[:0]
	return err
}
