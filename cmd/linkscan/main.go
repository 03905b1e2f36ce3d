// Command linkscan finds, canonicalizes, resolves, rewrites and audits the links inside mail
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
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	lsversion "github.com/linkscan/linkscan/internal/version"
)

// version is the release this source is (shared with the audit's
// User-Agent); --version adds what the build knows (module version, VCS
// revision and time).
const version = lsversion.Version

// Exit codes shared by every command (docs/scan.md).
const (
	exitOK    = 0
	exitFail  = 1 // some input could not be read at all, or the output could not be written
	exitUsage = 2
	// exitDamage is the status --damage-exit 4 asks for: everything was
	// read, and damage in messages was reported. By default damage read
	// past is success (0), as for grep and lychee: it is reported on
	// standard error with its count all the same.
	exitDamage = 4
)

// defaultDamageExit is the exit status of damage read past when
// --damage-exit is not given.
const defaultDamageExit = exitOK

// env is what a command may touch: no globals, so tests can run commands
// side by side.
type env struct {
	stdin  io.Reader
	stdout io.Writer // out
	stderr io.Writer
	out    *checkedWriter // run reports its first error, unless the command did

	// setMemoryLimit sets the soft memory limit of the process (main
	// gives debug.SetMemoryLimit when GOMEMLIMIT is unset; nil in tests,
	// which share a process).
	setMemoryLimit func(int64)

	// onFlags, if not nil, is given each flag set parseFlags parses,
	// with every flag of its command registered (tests: the flags a
	// command's help must name).
	onFlags func(*flag.FlagSet)
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
	commands = []*command{cmdScan, cmdResolve, cmdIndex, cmdURI, cmdRewrite, cmdFilter, cmdAudit, cmdRules, cmdPick, cmdCompletion, cmdMan, cmdHelp}
	for _, c := range commands { // the paragraph on SIZE, from parseSize's table
		c.Long = strings.ReplaceAll(c.Long, "{{sizes}}", sizeHelp)
	}
}

func main() {
	if os.Getenv("GOGC") == "" {
		// A scan allocates per message and keeps little: collecting less
		// often is about a fifth faster and peak memory stays near 30 MB
		// (docs/performance.md).
		debug.SetGCPercent(400)
	}
	// A closed pipe on standard output is an error to write, not a
	// signal that kills: the command stops reading, cleans up (the
	// progress bar, a temporary output file) and ends quietly.
	signal.Ignore(syscall.SIGPIPE)
	var setLimit func(int64)
	if os.Getenv("GOMEMLIMIT") == "" {
		setLimit = func(n int64) { debug.SetMemoryLimit(n) }
	}
	os.Exit(runWith(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, setLimit))
}

// checkedWriter keeps the first error of the writes to standard output,
// so that no command can finish with rc 0 on a full disk; after an error
// it writes nothing more.
type checkedWriter struct {
	w        io.Writer
	err      error
	reported bool // the command reported err itself
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err != nil {
		c.err = err
	}
	return n, err
}

// isBrokenPipe reports whether err says the reader of the output went
// away (| head): not a failure to report.
func isBrokenPipe(err error) bool { return errors.Is(err, syscall.EPIPE) }

// run is the whole program: it parses args and returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runWith(args, stdin, stdout, stderr, nil)
}

// runWith is run with the process's memory limit setter (nil: leave it).
func runWith(args []string, stdin io.Reader, stdout, stderr io.Writer, setMemoryLimit func(int64)) int {
	out := &checkedWriter{w: stdout}
	e := &env{stdin: stdin, stdout: out, stderr: stderr, out: out, setMemoryLimit: setMemoryLimit}
	code := dispatch(e, args)
	if out.err != nil && !out.reported && !isBrokenPipe(out.err) {
		name := "linkscan"
		if len(args) > 0 {
			name += " " + args[0]
		}
		fmt.Fprintf(stderr, "%s: writing standard output: %v\n", name, out.err)
		if code == exitOK || code == exitDamage {
			code = exitFail
		}
	}
	return code
}

func dispatch(e *env, args []string) int {
	if len(args) == 0 {
		usage(e.stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help":
		usage(e.stdout)
		return exitOK
	case "-version", "--version":
		printVersion(e.stdout)
		return exitOK
	}
	for _, c := range commands {
		if c.Name == args[0] {
			return c.Run(e, args[1:])
		}
	}
	fmt.Fprintf(e.stderr, "linkscan: unknown command %q\nRun 'linkscan help' for usage.\n", escapeArg(args[0]))
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprint(w, "linkscan finds, canonicalizes, resolves, rewrites and audits the links in mail and news archives.\n\nUsage:\n\n\tlinkscan <command> [arguments]\n\tlinkscan --version\n\nThe commands are:\n\n")
	for _, c := range commands {
		fmt.Fprintf(w, "\t%-8s %s\n", c.Name, c.Short)
	}
	fmt.Fprint(w, "\nUse \"linkscan help <command>\" for more information about a command.\n")
}

// printVersion prints the version constant and what the build recorded.
func printVersion(w io.Writer) {
	fmt.Fprintf(w, "linkscan %s", version)
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			fmt.Fprintf(w, " (module %s)", v)
		}
		var rev, at, dirty string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = ", modified"
				}
			}
		}
		if rev != "" {
			fmt.Fprintf(w, " revision %.12s %s%s", rev, at, dirty)
		}
	}
	fmt.Fprintf(w, " %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
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
				printHelp(e.stdout, c)
				return exitOK
			}
		}
		fmt.Fprintf(e.stderr, "linkscan help: unknown command %q\n", escapeArg(args[0]))
		return exitUsage
	}
}

// printHelp prints the whole help of a command: what "linkscan help CMD"
// and "linkscan CMD --help" both print.
func printHelp(w io.Writer, c *command) {
	fmt.Fprintf(w, "usage: %s\n\n%s\n", c.UsageLine, strings.TrimSpace(c.Long))
}

// escapingWriter escapes what is written to it but its line breaks: for
// messages made elsewhere (package flag) that quote arguments.
type escapingWriter struct{ w io.Writer }

func (e escapingWriter) Write(p []byte) (int, error) {
	lines := strings.SplitAfter(string(p), "\n")
	for i, l := range lines {
		body, nl := strings.CutSuffix(l, "\n")
		lines[i] = escape(body)
		if nl {
			lines[i] += "\n"
		}
	}
	if _, err := io.WriteString(e.w, strings.Join(lines, "")); err != nil {
		return 0, err
	}
	return len(p), nil
}

// escapeArg makes a command-line argument safe to echo on a terminal.
func escapeArg(s string) string { return escape(s) }

// cmdFlags is a command's flag set; it knows its command and env, so
// that -h prints the command's whole help on standard output.
type cmdFlags struct {
	*flag.FlagSet
	c *command
	e *env
}

// newFlagSet returns a flag set for command c. A bad flag is reported
// with the command's usage line on standard error; -h and --help print
// the whole help on standard output.
func newFlagSet(c *command, e *env) *cmdFlags {
	fs := flag.NewFlagSet(c.Name, flag.ContinueOnError)
	fs.SetOutput(escapingWriter{e.stderr}) // its messages quote arguments
	fs.Usage = func() {}                   // parseFlags prints what fits the case
	return &cmdFlags{FlagSet: fs, c: c, e: e}
}

// parseFlags parses args, allowing flags after positional arguments
// ("linkscan scan a.mbox --format csv"). It returns the positional
// arguments; when parsing stops (-h, or a bad flag, already reported) ok
// is false and code is the exit status to return.
func parseFlags(fs *cmdFlags, args []string) (rest []string, code int, ok bool) {
	if fs.e.onFlags != nil {
		fs.e.onFlags(fs.FlagSet)
	}
	for {
		if err := fs.Parse(args); err != nil {
			if err == flag.ErrHelp {
				printHelp(fs.e.stdout, fs.c)
				return nil, exitOK, false
			}
			fmt.Fprintf(fs.e.stderr, "usage: %s\nRun 'linkscan help %s' for details.\n", fs.c.UsageLine, fs.c.Name)
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
