// Command linkscan finds, canonicalizes and resolves the links inside mail
// and news archives.
//
// Usage:
//
//	linkscan <command> [arguments]
//
// Run "linkscan help" for the list of commands and "linkscan help
// <command>" for the flags of one.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
)

// Exit codes shared by every command.
const (
	exitOK    = 0
	exitFail  = 1 // some input was bad or unreadable; the rest was processed
	exitUsage = 2
)

// env is what a command may touch: no globals, so tests can run commands
// side by side.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// command is one subcommand, in the manner of cmd/go's base.Command.
type command struct {
	Name      string
	UsageLine string
	Short     string
	Long      string
	// Run executes the command with the arguments after its name.
	Run func(e *env, args []string) int
}

var commands []*command

func init() {
	commands = []*command{cmdScan, cmdResolve, cmdIndex, cmdURI, cmdHelp}
}

func main() {
	if os.Getenv("GOGC") == "" {
		// A scan allocates per message and keeps little: collecting less
		// often is about a fifth faster and peak memory stays near 30 MB
		// (docs/performance.md).
		debug.SetGCPercent(400)
	}
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the whole program: it parses args and returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help":
		usage(stdout)
		return exitOK
	}
	for _, c := range commands {
		if c.Name == args[0] {
			return c.Run(e, args[1:])
		}
	}
	fmt.Fprintf(stderr, "linkscan: unknown command %q\nRun 'linkscan help' for usage.\n", args[0])
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprint(w, "linkscan finds, canonicalizes and resolves the links in mail and news archives.\n\nUsage:\n\n\tlinkscan <command> [arguments]\n\nThe commands are:\n\n")
	for _, c := range commands {
		fmt.Fprintf(w, "\t%-8s %s\n", c.Name, c.Short)
	}
	fmt.Fprint(w, "\nUse \"linkscan help <command>\" for more information about a command.\n")
}

var cmdHelp = &command{
	Name:      "help",
	UsageLine: "linkscan help [command]",
	Short:     "show help for a command",
}

func init() {
	cmdHelp.Run = func(e *env, args []string) int {
		if len(args) == 0 {
			usage(e.stdout)
			return exitOK
		}
		for _, c := range commands {
			if c.Name == args[0] {
				fmt.Fprintf(e.stdout, "usage: %s\n\n%s\n", c.UsageLine, strings.TrimSpace(c.Long))
				return exitOK
			}
		}
		fmt.Fprintf(e.stderr, "linkscan help: unknown command %q\n", args[0])
		return exitUsage
	}
}

// newFlagSet returns a flag set whose usage prints the command's help.
func newFlagSet(c *command, e *env) *flag.FlagSet {
	fs := flag.NewFlagSet(c.Name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "usage: %s\nRun 'linkscan help %s' for details.\n", c.UsageLine, c.Name)
	}
	return fs
}

// parseFlags parses args, allowing flags after positional arguments
// ("linkscan scan a.mbox --format csv"). It returns the positional
// arguments; when parsing stops (-h, or a bad flag, already reported) ok
// is false and code is the exit status to return.
func parseFlags(fs *flag.FlagSet, args []string) (rest []string, code int, ok bool) {
	for {
		if err := fs.Parse(args); err != nil {
			if err == flag.ErrHelp {
				return nil, exitOK, false
			}
			return nil, exitUsage, false
		}
		args = fs.Args()
		if len(args) == 0 {
			return rest, exitOK, true
		}
		if args[0] == "--" {
			return append(rest, args[1:]...), exitOK, true
		}
		rest = append(rest, args[0])
		args = args[1:]
	}
}
