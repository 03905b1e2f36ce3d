//go:build unix

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestPickNoTerminal: without a terminal to draw on (a process with no
// controlling terminal) the list is not shown: exit 1, with a message
// that names the forms that need none.
func TestPickNoTerminal(t *testing.T) {
	bin := linkscanBin(t)
	f, err := os.Open(pickFixture)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(bin, "pick")
	cmd.Stdin = f
	var errb bytes.Buffer
	cmd.Stderr = &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Run()
	ee, ok := errors.AsType[*exec.ExitError](err)
	if !ok || ee.ExitCode() != exitFail || !strings.Contains(errb.String(), "no terminal for the list") || !strings.Contains(errb.String(), "--list") {
		t.Errorf("without a terminal: %v, %q", err, errb.String())
	}
}
