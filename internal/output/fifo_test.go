//go:build unix

package output

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// mkfifo makes a FIFO in a directory of the test's.
func mkfifo(t *testing.T) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(name, 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

// unblock opens the FIFO for reading and drains it at the test's end, so
// that an open that waits for a reader (the code before OpenNoWait) ends
// and the test fails instead of hanging.
func unblock(t *testing.T, name string) {
	t.Cleanup(func() {
		if r, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			time.Sleep(10 * time.Millisecond)
			r.Close()
		}
	})
}

// TestCreateFIFONoReader: a FIFO target that no process reads is an
// error (ErrNoReader) after FIFOWait, not an open blocked for ever; one
// whose reader comes within the wait is written in place.
func TestCreateFIFONoReader(t *testing.T) {
	defer func(w time.Duration) { FIFOWait = w }(FIFOWait)
	FIFOWait = 100 * time.Millisecond
	name := mkfifo(t)
	done := make(chan error, 1)
	go func() {
		f, err := Create(name)
		if err == nil {
			f.Abort()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNoReader) {
			t.Errorf("Create of a FIFO no process reads: %v, want ErrNoReader", err)
		}
	case <-time.After(time.Minute):
		unblock(t, name)
		t.Fatal("Create of a FIFO no process reads did not return")
	}

	FIFOWait = time.Minute
	got := make(chan string, 1)
	go func() {
		time.Sleep(50 * time.Millisecond)
		r, err := os.Open(name)
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(r)
		r.Close()
		got <- string(b)
	}()
	f, err := Create(name)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("report\n"))
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "report\n" {
		t.Errorf("the reader got %q", s)
	}
	if fi, err := os.Lstat(name); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v", err)
	}
}

// TestOpenNoWaitWriteDeadline: a FIFO opened by OpenNoWait whose reader
// does not read takes a write deadline: a write larger than the pipe's
// buffer ends with a timeout instead of blocking for ever.
func TestOpenNoWaitWriteDeadline(t *testing.T) {
	name := mkfifo(t)
	r, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w, err := OpenNoWait(name, os.O_WRONLY, 0, time.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.SetWriteDeadline(time.Now().Add(100 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := w.Write(make([]byte, 4<<20))
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("write past the deadline: %v, want a timeout", err)
		}
	case <-time.After(time.Minute):
		r.Close()
		t.Fatal("the write did not end at its deadline")
	}
}
