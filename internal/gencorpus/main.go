// Command gencorpus writes a deterministic, realistic mbox of a given size
// for benchmarks:
//
//	go run ./internal/gencorpus -size 100M -seed 1 > /tmp/corpus.mbox
//	go run ./internal/gencorpus -size 100M -dense > /tmp/dense.mbox
//
// or a Maildir of N message files (cur/ and new/, from the same mix):
//
//	go run ./internal/gencorpus -maildir 100000 /tmp/maildir
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/linkscan/linkscan/internal/corpus"
)

func main() {
	size := flag.String("size", "10M", "approximate size: bytes, or with a K, M or G suffix")
	seed := flag.Uint64("seed", 1, "seed; the same seed gives the same bytes")
	dense := flag.Bool("dense", false, "the stress mix: a link every six lines, two thirds encoded or HTML")
	maildir := flag.Int("maildir", 0, "write a Maildir of this many messages into the directory named after the flags, instead of an mbox to standard output")
	flag.Parse()
	if *maildir > 0 {
		if flag.NArg() != 1 {
			fmt.Fprintln(os.Stderr, "gencorpus: -maildir N DIR: name one directory")
			os.Exit(2)
		}
		if err := writeMaildir(flag.Arg(0), *maildir, *seed, *dense); err != nil {
			fmt.Fprintln(os.Stderr, "gencorpus:", err)
			os.Exit(1)
		}
		return
	}
	n, err := parseSize(*size)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gencorpus:", err)
		os.Exit(2)
	}
	write := corpus.Write
	if *dense {
		write = corpus.WriteDense
	}
	if err := write(os.Stdout, n, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "gencorpus:", err)
		os.Exit(1)
	}
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, strings.TrimSuffix(s, "G")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mult, nil
}

// writeMaildir writes n messages of the corpus mix as the files of a
// Maildir: nine in ten in cur/, the rest in new/.
func writeMaildir(dir string, n int, seed uint64, dense bool) error {
	for _, sub := range []string{"cur", "new", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return err
		}
	}
	w := &maildirWriter{dir: dir, n: n, done: make(chan error, 1)}
	write := corpus.Write
	if dense {
		write = corpus.WriteDense
	}
	// corpus.Write writes until a size and does not stop at a write
	// error: it runs on its own, bounded by a size that n messages never
	// reach (64 KiB each), and the files are done when n are written.
	go func() {
		err := write(w, int64(n)<<16, seed)
		if err == nil && w.written < n && len(w.msg) > 0 {
			err = w.flush(w.msg)
		}
		if err == nil && w.written < n {
			err = fmt.Errorf("the generator stopped after %d messages", w.written)
		}
		w.finish(err)
	}()
	return <-w.done
}

var errEnough = errors.New("enough messages")

// maildirWriter cuts the generated mbox at its "From " lines (the
// generator writes no other line that starts so) and writes each message,
// without its "From " line, to a file.
type maildirWriter struct {
	dir     string
	n       int
	written int
	msg     []byte
	done    chan error // the outcome, sent once
	sent    bool
}

func (w *maildirWriter) finish(err error) {
	if !w.sent {
		w.sent = true
		w.done <- err
	}
}

func (w *maildirWriter) Write(p []byte) (int, error) {
	if w.sent {
		return 0, errEnough
	}
	w.msg = append(w.msg, p...)
	start := 0 // the message being cut starts here in w.msg
	for {
		i := bytes.Index(w.msg[start+1:], []byte("\nFrom "))
		if i < 0 {
			break
		}
		end := start + 1 + i + 1
		if err := w.flush(w.msg[start:end]); err != nil {
			w.finish(err)
			return 0, err
		}
		start = end
		if w.written >= w.n {
			w.finish(nil)
			return 0, errEnough
		}
	}
	w.msg = append(w.msg[:0], w.msg[start:]...)
	return len(p), nil
}

func (w *maildirWriter) flush(msg []byte) error {
	if i := bytes.IndexByte(msg, '\n'); bytes.HasPrefix(msg, []byte("From ")) && i >= 0 {
		msg = msg[i+1:]
	}
	sub, flags := "cur", ":2,S"
	if w.written%10 == 9 {
		sub, flags = "new", ""
	}
	name := fmt.Sprintf("%d.M%dP1.gencorpus%s", 1700000000+w.written, w.written, flags)
	w.written++
	return os.WriteFile(filepath.Join(w.dir, sub, name), msg, 0o644)
}
