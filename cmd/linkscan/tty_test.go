package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/creack/pty"
)

// openPTY returns the two ends of a new pseudo-terminal: tty is the
// terminal a program is given, ptmx the end the test reads what it
// shows from. Both are closed at the end of the test.
func openPTY(t *testing.T) (ptmx, tty *os.File) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	// 80 columns, as a terminal a progress bar is drawn on
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: 80}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ptmx.Close(); tty.Close() })
	return ptmx, tty
}

// ttyRun says which standard streams of a run are the terminal.
type ttyRun struct {
	stdin, stdout, stderr bool
	input                 string // standard input when it is not the terminal
}

// runOnTTY runs the program with the streams r names on one
// pseudo-terminal, the others on pipes. It returns the exit status, what
// the terminal showed (its line discipline makes each "\n" "\r\n") and
// the streams that were not the terminal.
func runOnTTY(t *testing.T, bin string, r ttyRun, args ...string) (code int, screen string, res binResult) {
	t.Helper()
	ptmx, tty := openPTY(t)
	cmd := exec.Command(bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(r.input), &out, &errb
	if r.stdin {
		cmd.Stdin = tty
	}
	if r.stdout {
		cmd.Stdout = tty
	}
	if r.stderr {
		cmd.Stderr = tty
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close() // the child holds it; EOF on ptmx when the child is gone
	var shown bytes.Buffer
	done := make(chan struct{})
	go func() {
		io.Copy(&shown, ptmx) // ends with EIO once no process holds the tty
		close(done)
	}()
	err := cmd.Wait()
	<-done
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return code, shown.String(), binResult{code, out.String(), errb.String()}
}
