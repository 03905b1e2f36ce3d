package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The test binary is the command itself when it is run under the name
// linkscan: linkscanBin links it under that name in a directory of its
// own. Tests then run the program as a user does, in a process of its
// own, with its own standard streams and terminal.
func init() {
	if filepath.Base(os.Args[0]) == "linkscan" {
		main()
		os.Exit(0)
	}
}

// linkscanBin returns the path of the program under test, named
// linkscan, in a directory that holds nothing else (for PATH).
func linkscanBin(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "bin", "linkscan")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// binResult is what one run of the program gave.
type binResult struct {
	code           int
	stdout, stderr string
}

// runBin runs the program with args; stdin is its standard input (nil:
// an empty file, not a terminal).
func runBin(t *testing.T, bin string, stdin io.Reader, args ...string) binResult {
	t.Helper()
	cmd := exec.Command(bin, args...)
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	cmd.Stdin = stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return binResult{code, out.String(), errb.String()}
}
