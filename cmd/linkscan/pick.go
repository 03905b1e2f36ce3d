package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/linkscan/linkscan/pick"
)

var cmdPick = &command{
	Name:      "pick",
	UsageLine: "linkscan pick [--rules FILE] [--run CMD] [--copy-cmd CMD] [--list | --print N | --open N] [FILE]",
	Short:     "pick a link of a message to open or copy (for mutt, neomutt, aerc)",
	Long: `
Pick lists the links of a message full-screen, each with the line it
stands on, for a reader to open or copy one: the urlscan of mutt's
pipe-message (docs/pick.md has the bindings of mutt, neomutt and aerc):

  macro pager \cb "<pipe-message> linkscan pick<Enter>"

The message is read from FILE, or from standard input when no FILE is
given and standard input is not a terminal; the list is drawn on the
terminal itself (/dev/tty), so that it works with the message on a pipe.
An mbox of several messages lists the links of all of them.

Links are found as scan finds them, header fields that carry links
(List-Post, List-Unsubscribe, ...) included, and listed in the order they
occur; links with the same target are shown once, with their count.
The target is what is opened: the link with the wrappers of security
gateways removed (Safe Links, URL Defense, ...; docs/rewrite.md lists
them), the link as written shown dimmed below it. With --rules FILE the
rules of rewrite apply to each link first (strip tracking parameters,
moved hosts; docs/rewrite.md), then any wrapper left is removed.

Keys:

  up, down, k, j     move (page up, page down, home, end, g, G too)
  /                  search the targets, links and context lines;
                     Enter keeps the search, Esc drops it
  Enter              open the target
  y                  copy the target (OSC 52, or --copy-cmd)
  q, Esc             quit

Flags:

  --rules FILE       apply the rules of FILE to each link (the rules of
                     rewrite; linkscan rules test shows what they do)
  --run CMD          open with CMD, "{}" in it standing for the target
                     (added at the end when CMD has no "{}"), as
                     urlscan's -r; no shell reads it. Default: $BROWSER
                     (its first program; "%s" standing for the target),
                     else xdg-open
  --copy-cmd CMD     copy by giving the target on the standard input of
                     CMD (such as "wl-copy" or "xclip -selection
                     clipboard") instead of the OSC 52 sequence of the
                     terminal
  --list             print the numbered list with each target, the link
                     as written when it differs, and its place and
                     context line; no terminal is needed
  --print N          print the target of item N of --list
  --open N           open the target of item N of --list

Colours follow NO_COLOR (https://no-color.org): set, the list uses
bold, faint and reverse video only; the selected item is marked in the
first column in any case.

Exit status:
  0  the list was shown (or printed), the target opened
  1  the input could not be read, there is no terminal, or the program
     that opens the target failed
  2  usage error, no item N, or errors in the rules file
`,
}

func init() { cmdPick.Run = runPick }

// pickFlags are the flags of pick.
type pickFlags struct {
	rules, run, copyCmd string
	list                bool
	print, open         int
}

func runPick(e *env, args []string) int {
	fs := newFlagSet(cmdPick, e)
	var f pickFlags
	fs.StringVar(&f.rules, "rules", "", "rules file")
	fs.StringVar(&f.run, "run", "", "command that opens the target")
	fs.StringVar(&f.copyCmd, "copy-cmd", "", "command that copies the target")
	fs.BoolVar(&f.list, "list", false, "print the list")
	fs.IntVar(&f.print, "print", 0, "print the target of item N")
	fs.IntVar(&f.open, "open", 0, "open the target of item N")
	rest, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	rest = inputPaths(e, rest)
	modes := 0
	for _, on := range []bool{f.list, f.print != 0, f.open != 0} {
		if on {
			modes++
		}
	}
	if len(rest) != 1 || modes > 1 || f.print < 0 || f.open < 0 {
		fmt.Fprintf(e.stderr, "usage: %s\nRun 'linkscan help pick' for details.\n", cmdPick.UsageLine)
		return exitUsage
	}
	o := pick.Options{}
	if f.rules != "" {
		rs, code := loadRules(e, f.rules)
		if rs == nil {
			return code
		}
		o.Rules = rs
	}
	items, title, code := readPick(e, rest[0], o)
	if items == nil && code != exitOK {
		return code
	}
	switch {
	case f.list:
		writePickList(e.stdout, items)
		return exitOK
	case f.print != 0, f.open != 0:
		n := max(f.print, f.open)
		if n > len(items) {
			fmt.Fprintf(e.stderr, "linkscan pick: no item %d: the message has %s\n", n, plural(len(items), "link", "links"))
			return exitUsage
		}
		if f.print != 0 {
			fmt.Fprintln(e.stdout, escape(items[n-1].Target))
			return exitOK
		}
		return openTarget(e, f.run, items[n-1].Target)
	}
	if len(items) == 0 {
		fmt.Fprintln(e.stderr, "linkscan pick: no links in the message")
		return exitOK
	}
	return pickInteractive(e, f, items, title)
}

// readPick reads the items of the input; title is the first message's
// subject.
func readPick(e *env, path string, o pick.Options) ([]pick.Item, string, int) {
	var r io.Reader = e.stdin
	name := "-"
	if path != "-" {
		fh, err := os.Open(path)
		if err != nil {
			fmt.Fprintf(e.stderr, "linkscan pick: %s\n", escape(err.Error()))
			return nil, "", exitFail
		}
		defer fh.Close()
		r, name = fh, path
	}
	items, st, err := pick.Read(r, name, o)
	if err != nil {
		fmt.Fprintf(e.stderr, "linkscan pick: %s: %s\n", escape(name), escape(err.Error()))
		if items == nil {
			return nil, "", exitFail
		}
	}
	if st.Dropped > 0 {
		fmt.Fprintf(e.stderr, "linkscan pick: %d more links not listed\n", st.Dropped)
	}
	if items == nil {
		items = []pick.Item{}
	}
	return items, st.Subject, exitOK
}

// writePickList prints the numbered items: the target and its count,
// the link as written when it differs, the place and context line.
func writePickList(w io.Writer, items []pick.Item) {
	for i, it := range items {
		fmt.Fprintf(w, "%d  %s", i+1, escape(it.Target))
		if it.Count > 1 {
			fmt.Fprintf(w, " (×%d)", it.Count)
		}
		fmt.Fprintln(w)
		if it.Wrapped() {
			fmt.Fprintf(w, "   written: %s\n", escape(it.URL))
		}
		if it.Problem != "" {
			fmt.Fprintf(w, "   problem: %s\n", escape(it.Problem))
		}
		fmt.Fprintf(w, "   %s: %s\n", it.Where, escape(it.Context))
	}
}

// openCommand is the command that opens target.
func openCommand(run, target string) (*exec.Cmd, error) {
	argv, err := pick.Command(run, os.Getenv("BROWSER"), target)
	if err != nil {
		return nil, err
	}
	return exec.Command(argv[0], argv[1:]...), nil
}

// openTarget opens target with the standard streams of linkscan.
func openTarget(e *env, run, target string) int {
	c, err := openCommand(run, target)
	if err == nil {
		c.Stdout, c.Stderr = e.stdout, e.stderr
		err = c.Run()
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "linkscan pick: opening %s: %s\n", escape(target), escape(err.Error()))
		return exitFail
	}
	return exitOK
}

// pickInteractive runs the list on the terminal.
func pickInteractive(e *env, f pickFlags, items []pick.Item, title string) int {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		fmt.Fprintf(e.stderr, "linkscan pick: no terminal for the list (%s); use --list, --print N or --open N\n", escape(err.Error()))
		return exitFail
	}
	defer tty.Close()
	r := lipgloss.NewRenderer(tty)
	cfg := pick.Config{
		Title:  title,
		Styles: pick.NewStyles(r, os.Getenv("NO_COLOR") == ""),
		Open: func(target string) tea.Cmd {
			c, err := openCommand(f.run, target)
			if err != nil {
				return done("opened", target, err)
			}
			return tea.ExecProcess(c, func(err error) tea.Msg { return pick.Done{Action: "opened", Target: target, Err: err} })
		},
		Copy: func(target string) tea.Cmd { return copyTarget(tty, f.copyCmd, target) },
	}
	p := tea.NewProgram(pick.New(items, cfg), tea.WithInput(tty), tea.WithOutput(tty), tea.WithAltScreen())
	if _, err := p.Run(); err != nil {
		fmt.Fprintf(e.stderr, "linkscan pick: %s\n", escape(err.Error()))
		return exitFail
	}
	return exitOK
}

// done is a command that reports an action's end at once.
func done(action, target string, err error) tea.Cmd {
	return func() tea.Msg { return pick.Done{Action: action, Target: target, Err: err} }
}

// copyTarget copies target with cmd, or with the OSC 52 sequence
// written to the terminal.
func copyTarget(tty io.Writer, cmd, target string) tea.Cmd {
	return func() tea.Msg {
		var err error
		if words := strings.Fields(cmd); len(words) > 0 {
			c := exec.Command(words[0], words[1:]...)
			c.Stdin = strings.NewReader(target)
			err = c.Run()
		} else {
			_, err = io.WriteString(tty, ansi.SetSystemClipboard(target))
		}
		return pick.Done{Action: "copied", Target: target, Err: err}
	}
}
