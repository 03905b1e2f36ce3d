package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/linkscan/linkscan/rewrite"
)

var cmdRules = &command{
	Name:      "rules",
	UsageLine: "linkscan rules check FILE | linkscan rules test [--form FORM] [--where WHERE] FILE URL...",
	Short:     "check a rules file, or show what it does to URLs",
	Long: `
Rules checks the rules file of rewrite and filter (docs/rewrite.md).

  linkscan rules check FILE
      reads FILE and reports each error as FILE:LINE:COL: message, the
      form editors jump to. Nothing is printed for a valid file.
  linkscan rules test FILE URL...
      runs the rules over each URL and prints it, its result, and the
      rules that applied, or why none did: no rule matches it, a keep
      rule stopped the rules, or the rules that matched changed nothing
      (with the reason a rule gives for skipping). An archive rule has
      no audit history here: it says so and skips.

A host pattern "*.example.org" means example.org and its subdomains,
in rules (from-host, match.host, except-hosts) as in scan's --host.

Flags of test (what the rules see of each link, for their match.form
and match.location):

  --form FORM        how the link was written: bare (the default),
                     angle, quoted, url-wrapper, abbrev, email, html
  --where WHERE      where it stood: body (the default), html:href,
                     header:NAME, preamble, epilogue

Exit status:
  0  the file is valid (check), the URLs were tested (test)
  1  the file could not be read
  2  usage error, or errors in the rules file (each with its line and
     column)
`,
}

func init() { cmdRules.Run = runRules }

func runRules(e *env, args []string) int {
	fs := newFlagSet(cmdRules, e)
	link := rewrite.Link{Form: "bare", Where: "body", ContentType: "text/plain"}
	fs.StringVar(&link.Form, "form", link.Form, "how the link was written")
	fs.StringVar(&link.Where, "where", link.Where, "where the link stood")
	rest, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	usage := func() int {
		fmt.Fprintf(e.stderr, "usage: %s\nRun 'linkscan help rules' for details.\n", cmdRules.UsageLine)
		return exitUsage
	}
	if len(rest) < 2 {
		return usage()
	}
	switch verb, file := rest[0], rest[1]; {
	case verb == "check" && len(rest) == 2:
		_, code := loadRules(e, file)
		return code
	case verb == "test" && len(rest) > 2:
		rs, code := loadRules(e, file)
		if rs == nil {
			return code
		}
		return testRules(e, rs, link, rest[2:])
	}
	return usage()
}

// loadRules reads the rules file; on errors it prints them, each as
// FILE:LINE:COL: message, and returns nil and the exit status.
func loadRules(e *env, file string) (*rewrite.Rules, int) {
	rs, err := rewrite.Load(file)
	if err == nil {
		return rs, exitOK
	}
	errs := rewrite.Errors(err)
	if errs == nil {
		fmt.Fprintf(e.stderr, "linkscan rules: %s\n", escape(err.Error()))
		return nil, exitFail
	}
	slices.SortStableFunc(errs, func(a, b *rewrite.Error) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	for _, re := range errs {
		fmt.Fprintln(e.stderr, escape(re.Position()))
	}
	return nil, exitUsage
}

// testRules prints what the rules do to each URL.
func testRules(e *env, rs *rewrite.Rules, link rewrite.Link, urls []string) int {
	status := exitOK
	for _, u := range urls {
		link.URL = u
		ex, err := rs.Explain(link)
		fmt.Fprintln(e.stdout, escape(u))
		if err != nil {
			fmt.Fprintf(e.stdout, "  error: %s\n", escape(err.Error()))
			if u == "" {
				status = exitUsage
			}
			continue
		}
		writeExplanation(e.stdout, link, ex)
	}
	return status
}

// writeExplanation prints the result of one link and why.
func writeExplanation(w io.Writer, l rewrite.Link, ex rewrite.Explanation) {
	if ex.Changed(l) {
		fmt.Fprintf(w, "  result: %s", escape(ex.URL))
		if ex.Form != l.Form {
			fmt.Fprintf(w, " (written %s)", escape(ex.Form))
		}
		fmt.Fprintln(w)
	} else {
		fmt.Fprintln(w, "  result: unchanged")
	}
	for _, ch := range ex.Changes {
		if ch.Skipped != "" {
			fmt.Fprintf(w, "  skipped: %s (%s): %s\n", quoteRule(ch.Rule), ch.Action, escape(ch.Skipped))
			continue
		}
		if ch.Old == ch.New && ch.Form != "" {
			fmt.Fprintf(w, "  applied: %s (%s): written %s\n", quoteRule(ch.Rule), ch.Action, escape(ch.Form))
			continue
		}
		fmt.Fprintf(w, "  applied: %s (%s): %s -> %s\n", quoteRule(ch.Rule), ch.Action, escape(ch.Old), escape(ch.New))
	}
	switch {
	case len(ex.Matched) == 0:
		fmt.Fprintln(w, "  no rule matches it")
	case ex.KeptBy != "":
		fmt.Fprintf(w, "  kept by %s: the rules after it are not tried\n", quoteRule(ex.KeptBy))
	case len(ex.Changes) == 0:
		q := make([]string, len(ex.Matched))
		for i, m := range ex.Matched {
			q[i] = quoteRule(m)
		}
		fmt.Fprintf(w, "  matched, changed nothing: %s\n", strings.Join(q, ", "))
	}
}

// quoteRule quotes a rule's name; "rule at line N" stays as it is.
func quoteRule(label string) string {
	if n, ok := strings.CutPrefix(label, "rule at line "); ok {
		if _, err := strconv.Atoi(n); err == nil {
			return label
		}
	}
	return strconv.Quote(label)
}
