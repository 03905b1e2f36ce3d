package main

import (
	"fmt"
	"io"
	"strings"
)

var cmdMan = &command{
	Name:      "man",
	UsageLine: "linkscan man",
	Short:     "print the manual page (roff)",
	Long: `
Man prints linkscan's manual page in roff, made from the help of every
command and the flags each registers (what --help shows):

  linkscan man > linkscan.1 && man -l linkscan.1
  linkscan man | groff -man -Tutf8 | less -R
`,
}

func init() { cmdMan.Run = runMan }

func runMan(e *env, args []string) int {
	fs := newFlagSet(cmdMan, e)
	rest, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(rest) != 0 {
		fmt.Fprintf(e.stderr, "usage: %s\n", cmdMan.UsageLine)
		return exitUsage
	}
	writeMan(e.stdout, commandSpecs())
	return exitOK
}

// roffText escapes s for roff: a back slash is written \e, and a line
// that starts with a control character (. or ') starts with \& first.
func roffText(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}

// writeMan writes the page: a synopsis of the commands, then each
// command's help as --help prints it (preformatted) and its flags.
func writeMan(w io.Writer, specs []cmdSpec) {
	fmt.Fprintf(w, ".\\\" linkscan(1): made by 'linkscan man' from the commands' help; do not edit.\n")
	fmt.Fprintf(w, ".TH LINKSCAN 1 \"\" \"linkscan %s\" \"User Commands\"\n", roffText(version))
	fmt.Fprintf(w, ".SH NAME\nlinkscan \\- find, canonicalize, resolve, rewrite and audit the links in mail and news archives\n")
	fmt.Fprintf(w, ".SH SYNOPSIS\n")
	for _, sp := range specs {
		fmt.Fprintf(w, ".B %s\n.br\n", roffText(sp.c.UsageLine))
	}
	fmt.Fprintf(w, ".SH DESCRIPTION\nlinkscan reads mbox files, single messages, Maildir and MH folders, news spools and compressed files, and works on the links in them.\nEach command is described below as\n.B linkscan help\n.I command\nprints it.\n")
	fmt.Fprintf(w, ".SH COMMANDS\n")
	for _, sp := range specs {
		fmt.Fprintf(w, ".SS %s\n%s\n", roffText(sp.c.Name), roffText(sp.c.Short))
		if long := strings.TrimSpace(sp.c.Long); long != "" {
			fmt.Fprintf(w, ".PP\n.nf\n%s\n.fi\n", roffText(long))
		}
		if len(sp.flags) > 0 {
			fmt.Fprintf(w, ".PP\nFlags of %s:\n", roffText(sp.c.Name))
			for _, f := range sp.flags {
				arg := ""
				if !f.isBool {
					arg = " \\fIvalue\\fR"
					if len(f.values) > 0 {
						arg = " " + roffText(strings.Join(f.values, "|"))
					}
				}
				fmt.Fprintf(w, ".TP\n.B %s%s\n%s\n", roffText(dash(f.name)), arg, roffText(f.usage))
			}
		}
	}
	fmt.Fprintf(w, ".SH EXIT STATUS\n0: done (damage in messages read past is reported on standard error and is success).\n")
	fmt.Fprintf(w, "1: an input could not be read, or the output not written.\n2: usage error.\n3: (audit) dead links were found.\n")
	fmt.Fprintf(w, "filter has its own: see its section.\n")
	fmt.Fprintf(w, ".SH SEE ALSO\nThe docs directory of the source: scan.md, references.md, rewrite.md, filter.md, audit.md, formats.md.\n")
}
