package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/linkscan/linkscan/audit"
	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/report"
)

var cmdCompletion = &command{
	Name:      "completion",
	UsageLine: "linkscan completion bash|zsh|fish",
	Short:     "print a shell completion script",
	Long: `
Completion prints a script that completes linkscan's commands, their
flags and the values of flags that take one of a few words (--format,
--as, --progress, --fail-on), for bash, zsh or fish. The flags are those
each command's --help describes. Install it with:

  bash:  linkscan completion bash > ~/.local/share/bash-completion/completions/linkscan
  zsh:   linkscan completion zsh > "${fpath[1]}/_linkscan"
  fish:  linkscan completion fish > ~/.config/fish/completions/linkscan.fish

or, for the running shell only, source <(linkscan completion bash).
`,
}

func init() { cmdCompletion.Run = runCompletion }

func runCompletion(e *env, args []string) int {
	fs := newFlagSet(cmdCompletion, e)
	rest, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(rest) != 1 {
		fmt.Fprintf(e.stderr, "usage: %s\n", cmdCompletion.UsageLine)
		return exitUsage
	}
	specs := commandSpecs()
	switch rest[0] {
	case "bash":
		writeBash(e.stdout, specs)
	case "zsh":
		writeZsh(e.stdout, specs)
	case "fish":
		writeFish(e.stdout, specs)
	default:
		fmt.Fprintf(e.stderr, "linkscan completion: unknown shell %q (bash, zsh or fish)\n", escape(rest[0]))
		return exitUsage
	}
	return exitOK
}

// cmdSpec is what completion and the manual page know of a command.
type cmdSpec struct {
	c     *command
	verbs []string   // words after the command (uri canon, rules check)
	flags []flagSpec // sorted by name
}

// flagSpec is one flag of a command.
type flagSpec struct {
	name, usage string
	isBool      bool
	values      []string // the words it takes, when a few
}

// subVerbs are the words that follow a command and choose what it does.
var subVerbs = map[string][]string{
	"uri":        {"canon", "equal", "resolve", "parse"},
	"rules":      {"check", "test"},
	"completion": {"bash", "zsh", "fish"},
	"help":       nil,
}

// commandSpecs returns every command with the flags its flag set
// registers: the set --help describes, collected by running the command
// with --help and its output thrown away.
func commandSpecs() []cmdSpec {
	var out []cmdSpec
	for _, c := range commands {
		sp := cmdSpec{c: c, verbs: subVerbs[c.Name]}
		if c.Name == "help" {
			for _, o := range commands {
				sp.verbs = append(sp.verbs, o.Name)
			}
		}
		seen := map[string]bool{}
		runs := [][]string{{"--help"}}
		if c.Name == "uri" {
			runs = nil
			for _, v := range sp.verbs {
				runs = append(runs, []string{v, "--help"})
			}
		}
		for _, args := range runs {
			for _, f := range registeredFlags(c, args) {
				if seen[f.Name] {
					continue
				}
				seen[f.Name] = true
				b, _ := f.Value.(interface{ IsBoolFlag() bool })
				sp.flags = append(sp.flags, flagSpec{name: f.Name, usage: f.Usage, isBool: b != nil && b.IsBoolFlag(),
					values: flagValues(c.Name, f.Name)})
			}
		}
		slices.SortFunc(sp.flags, func(a, b flagSpec) int { return strings.Compare(a.name, b.name) })
		out = append(out, sp)
	}
	return out
}

// registeredFlags runs c with args (a --help) and returns the flags of
// the flag set it parsed, none for a command without one.
func registeredFlags(c *command, args []string) []*flag.Flag {
	if c.Name == "help" || c.Name == "completion" || c.Name == "man" {
		return nil
	}
	var got []*flag.Flag
	out := &checkedWriter{w: io.Discard}
	e := &env{stdin: strings.NewReader(""), stdout: out, stderr: io.Discard, out: out}
	e.onFlags = func(fs *flag.FlagSet) {
		got = got[:0]
		fs.VisitAll(func(f *flag.Flag) { got = append(got, f) })
	}
	c.Run(e, args)
	return got
}

// flagValues are the words a flag takes, for the flags that take one of
// a few.
func flagValues(cmd, name string) []string {
	switch name {
	case "as":
		var v []string
		for _, f := range mailbox.Formats {
			v = append(v, string(f))
		}
		return v
	case "progress":
		return []string{"auto", "always", "never"}
	case "fail-on":
		return []string{"failing", "dead"}
	case "format":
		switch cmd {
		case "audit":
			return audit.Formats
		case "index":
			return []string{"text", "json"}
		case "scan", "resolve":
			var v []string
			for _, f := range report.Formats {
				v = append(v, string(f))
			}
			return v
		}
	}
	return nil
}

// dash is how a flag is written: -o for one letter, --name otherwise.
func dash(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

func writeBash(w io.Writer, specs []cmdSpec) {
	var names []string
	for _, sp := range specs {
		names = append(names, sp.c.Name)
	}
	fmt.Fprintf(w, "# bash completion for linkscan (linkscan completion bash)\n_linkscan() {\n")
	fmt.Fprintf(w, "\tlocal cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\" cmd=\"${COMP_WORDS[1]}\" opts= verbs= vals=\n")
	fmt.Fprintf(w, "\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n\t\tCOMPREPLY=($(compgen -W %q -- \"$cur\"))\n\t\treturn\n\tfi\n", strings.Join(names, " "))
	fmt.Fprintf(w, "\tcase \"$cmd\" in\n")
	for _, sp := range specs {
		var opts []string
		for _, f := range sp.flags {
			opts = append(opts, dash(f.name))
		}
		fmt.Fprintf(w, "\t%s)\n\t\topts=%q\n\t\tverbs=%q\n", sp.c.Name, strings.Join(opts, " "), strings.Join(sp.verbs, " "))
		fmt.Fprintf(w, "\t\tcase \"$prev\" in\n")
		for _, f := range sp.flags {
			if len(f.values) > 0 {
				fmt.Fprintf(w, "\t\t%s) vals=%q ;;\n", dash(f.name), strings.Join(f.values, " "))
			}
		}
		fmt.Fprintf(w, "\t\tesac\n\t\t;;\n")
	}
	fmt.Fprintf(w, "\tesac\n")
	fmt.Fprintf(w, "\tif [ -n \"$vals\" ]; then\n\t\tCOMPREPLY=($(compgen -W \"$vals\" -- \"$cur\"))\n")
	fmt.Fprintf(w, "\telif [[ \"$cur\" == -* ]]; then\n\t\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n")
	fmt.Fprintf(w, "\telif [ -n \"$verbs\" ] && [ \"$COMP_CWORD\" -eq 2 ]; then\n\t\tCOMPREPLY=($(compgen -W \"$verbs\" -- \"$cur\"))\n")
	fmt.Fprintf(w, "\telse\n\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n\tfi\n}\n")
	fmt.Fprintf(w, "complete -o filenames -F _linkscan linkscan\n")
}

// zshQuote makes s a description for _arguments and _describe: no
// brackets, colons or single quotes.
func zshQuote(s string) string {
	return strings.NewReplacer("[", "(", "]", ")", ":", " -", "'", "", "\\", "").Replace(s)
}

func writeZsh(w io.Writer, specs []cmdSpec) {
	fmt.Fprintf(w, "#compdef linkscan\n# zsh completion for linkscan (linkscan completion zsh)\n\n_linkscan() {\n\tlocal -a cmds\n\tcmds=(\n")
	for _, sp := range specs {
		fmt.Fprintf(w, "\t\t'%s:%s'\n", sp.c.Name, zshQuote(sp.c.Short))
	}
	fmt.Fprintf(w, "\t)\n\tif (( CURRENT == 2 )); then\n\t\t_describe 'command' cmds\n\t\treturn\n\tfi\n\tcase $words[2] in\n")
	for _, sp := range specs {
		fmt.Fprintf(w, "\t%s)\n\t\t_arguments -s", sp.c.Name)
		for _, f := range sp.flags {
			spec := fmt.Sprintf("%s[%s]", dash(f.name), zshQuote(f.usage))
			switch {
			case len(f.values) > 0:
				spec += ":value:(" + strings.Join(f.values, " ") + ")"
			case !f.isBool:
				spec += ":value:_files"
			}
			fmt.Fprintf(w, " \\\n\t\t\t'%s'", spec)
		}
		if len(sp.verbs) > 0 {
			fmt.Fprintf(w, " \\\n\t\t\t'1:what:(%s)'", strings.Join(sp.verbs, " "))
		}
		fmt.Fprintf(w, " \\\n\t\t\t'*:file:_files'\n\t\t;;\n")
	}
	fmt.Fprintf(w, "\tesac\n}\n\n_linkscan \"$@\"\n")
}

// fishQuote quotes s for fish, in single quotes.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func writeFish(w io.Writer, specs []cmdSpec) {
	fmt.Fprintf(w, "# fish completion for linkscan (linkscan completion fish)\ncomplete -c linkscan -f\n")
	for _, sp := range specs {
		fmt.Fprintf(w, "complete -c linkscan -n __fish_use_subcommand -a %s -d %s\n", sp.c.Name, fishQuote(sp.c.Short))
	}
	for _, sp := range specs {
		cond := fishQuote("__fish_seen_subcommand_from " + sp.c.Name)
		if len(sp.verbs) > 0 {
			fmt.Fprintf(w, "complete -c linkscan -n %s -a %s\n", cond, fishQuote(strings.Join(sp.verbs, " ")))
		} else if sp.c.Name != "completion" {
			fmt.Fprintf(w, "complete -c linkscan -n %s -F\n", cond)
		}
		for _, f := range sp.flags {
			opt := "-l " + f.name
			if len(f.name) == 1 {
				opt = "-s " + f.name
			}
			extra := ""
			switch {
			case len(f.values) > 0:
				extra = " -x -a " + fishQuote(strings.Join(f.values, " "))
			case !f.isBool:
				extra = " -r -F"
			}
			fmt.Fprintf(w, "complete -c linkscan -n %s %s -d %s%s\n", cond, opt, fishQuote(f.usage), extra)
		}
	}
}
