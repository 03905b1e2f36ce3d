package testutil

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"
)

// StallWriter writes N bytes to W, then makes the file Mark (so that a
// test waiting for it knows the point is reached) and blocks for ever: a
// test re-executes its binary as a child that writes through it and kills
// the child there, to see what a kill in the middle of a write leaves.
type StallWriter struct {
	W    io.Writer
	N    int
	Mark string
}

func (s *StallWriter) Write(p []byte) (int, error) {
	if len(p) > s.N {
		s.W.Write(p[:s.N])
		os.WriteFile(s.Mark, nil, 0o644)
		select {}
	}
	s.N -= len(p)
	return s.W.Write(p)
}

// stallWait is the longest RunUntilStall waits: it only keeps a broken
// child from hanging the test, and times nothing.
const stallWait = 2 * time.Minute

// RunUntilStall starts cmd, a test binary re-executed as a child that
// writes through a StallWriter (or blocks in a hook) whose Mark is mark,
// and waits until the child makes the file mark or ends, looking every
// 10 ms. When the child stalled it returns kill, which kills it
// (SIGKILL) and waits for its end: the caller looks at what the child is
// doing (its temporary file) first, then kills it. When the child ended
// with success it returns nil. A child that cannot start, ends in
// failure (its standard error is shown when cmd.Stderr was nil) or does
// neither within two minutes fails the test; what names the case in the
// messages ("after 30000").
func RunUntilStall(t testing.TB, cmd *exec.Cmd, mark, what string) (kill func()) {
	t.Helper()
	var stderr bytes.Buffer
	if cmd.Stderr == nil {
		cmd.Stderr = &stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	limit := time.NewTimer(stallWait)
	defer limit.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%s: child failed: %v: %s", what, err, stderr.String())
			}
			return nil
		case <-limit.C:
			cmd.Process.Kill()
			<-done
			t.Fatalf("%s: child neither stalled nor ended", what)
		case <-tick.C:
			if _, err := os.Stat(mark); err == nil {
				return func() {
					cmd.Process.Kill()
					<-done
				}
			}
		}
	}
}
