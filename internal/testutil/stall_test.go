//go:build unix

package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// TestStallHelper is the child TestRunUntilStall runs: it writes
// "0123456789" through a StallWriter of N 4 (stalls), or exits with the
// status asked for.
func TestStallHelper(t *testing.T) {
	switch os.Getenv("TESTUTIL_STALL") {
	case "stall":
		f, err := os.Create(os.Getenv("TESTUTIL_STALL_FILE"))
		if err != nil {
			t.Fatal(err)
		}
		w := &StallWriter{W: f, N: 4, Mark: os.Getenv("TESTUTIL_STALL_MARK")}
		fmt.Fprint(w, "01")
		fmt.Fprint(w, "23456789")
		t.Fatal("StallWriter did not block")
	case "end":
		os.Exit(0)
	case "fail":
		fmt.Fprintln(os.Stderr, "the child's own words")
		os.Exit(3)
	default:
		t.Skip("run by TestRunUntilStall")
	}
}

// fatalTB is a testing.TB whose Fatalf keeps the message and ends the
// goroutine, as testing's does.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, a ...any) {
	f.msg = fmt.Sprintf(format, a...)
	runtime.Goexit()
}

// TestRunUntilStall: a child stalled in a StallWriter is seen (its mark,
// the bytes before the stall written, the child still running until
// kill), a child that ends well gives nil, and one that fails fails the
// test with its standard error.
func TestRunUntilStall(t *testing.T) {
	if testing.Short() {
		t.Skip("re-runs the test binary")
	}
	dir := t.TempDir()
	child := func(mode string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^TestStallHelper$")
		cmd.Env = append(os.Environ(), "TESTUTIL_STALL="+mode, "TESTUTIL_STALL_FILE="+filepath.Join(dir, "out"),
			"TESTUTIL_STALL_MARK="+filepath.Join(dir, "mark"))
		return cmd
	}
	cmd := child("stall")
	kill := RunUntilStall(t, cmd, filepath.Join(dir, "mark"), "stall")
	if kill == nil {
		t.Fatal("the stalled child was taken for ended")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "out")); string(b) != "0123" {
		t.Errorf("written before the stall: %q", b)
	}
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the child was not running when RunUntilStall returned: %v", err)
	}
	kill()
	if cmd.ProcessState == nil || cmd.ProcessState.Success() {
		t.Errorf("after kill: %v", cmd.ProcessState)
	}
	if kill := RunUntilStall(t, child("end"), filepath.Join(dir, "no-mark"), "end"); kill != nil {
		t.Error("a child that ended was taken for stalled")
	}
	ft := &fatalTB{TB: t}
	done := make(chan bool)
	go func() {
		defer close(done)
		RunUntilStall(ft, child("fail"), filepath.Join(dir, "no-mark"), "fail")
	}()
	<-done
	if !strings.Contains(ft.msg, "fail: child failed") || !strings.Contains(ft.msg, "the child's own words") {
		t.Errorf("a failed child: %q", ft.msg)
	}
}
