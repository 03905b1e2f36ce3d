package main

import (
	"os"

	"golang.org/x/term"
)

// inputPaths returns paths, or "-" (standard input) when none is given
// and standard input is not a terminal: "cat msg | linkscan scan" reads
// the pipe, as grep does. On a terminal nothing is read: nobody typed
// mail there, and the usage error says how to name an input.
func inputPaths(e *env, paths []string) []string {
	if len(paths) == 0 && !stdinIsTerminal(e) {
		return []string{"-"}
	}
	return paths
}

// stdinIsTerminal reports whether the command's standard input is a
// terminal.
func stdinIsTerminal(e *env) bool {
	f, ok := e.stdin.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
