package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/linkscan/linkscan/uri"
)

var cmdURI = &command{
	Name:      "uri",
	UsageLine: "linkscan uri canon|equal|resolve|parse [flags] [arguments]",
	Short:     "parse, canonicalize, compare and resolve URLs",
	Long: `
The uri command exposes the uri package.

  linkscan uri canon [URL...]
	Prints the canonical form of each URL, one per line; with no
	arguments it reads one URL per line from standard input. An
	invalid URL still gets its canonical form printed; its problems
	go to standard error with their columns, and the exit status is 1
	once all input has been processed.

  linkscan uri equal A B
	Exits 0 if A and B have the same canonical form, 1 if not, and 2
	if either is invalid.

  linkscan uri resolve [--rfc1630] BASE REF...
	Resolves each REF against BASE and prints one absolute URL per
	line: by RFC 3986 section 5, or with --rfc1630 by the partial-form
	rules of the 1994 URI draft (RFC 1630).

  linkscan uri parse [--json] URL...
	Prints the components of each URL: scheme, user, host, port, path,
	query, fragment, opaque part, the scheme's own view, validity,
	problems and canonical form. With --json, one JSON object per line.

See docs/uri.md for the rules.
`,
}

func init() { cmdURI.Run = runURI }

func runURI(e *env, args []string) int {
	if len(args) == 0 {
		fmt.Fprintf(e.stderr, "usage: %s\n", cmdURI.UsageLine)
		return exitUsage
	}
	verb, args := args[0], args[1:]
	fs := newFlagSet(cmdURI, e)
	var cfg struct{ rfc1630, json bool }
	switch verb {
	case "resolve":
		fs.BoolVar(&cfg.rfc1630, "rfc1630", false, "use the partial-form rules of RFC 1630")
	case "parse":
		fs.BoolVar(&cfg.json, "json", false, "print JSON lines")
	case "canon", "equal":
	default:
		fmt.Fprintf(e.stderr, "linkscan uri: unknown verb %q (want canon, equal, resolve or parse)\n", verb)
		return exitUsage
	}
	args, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	switch verb {
	case "canon":
		return uriCanon(e, args)
	case "equal":
		if len(args) != 2 {
			fmt.Fprintln(e.stderr, "usage: linkscan uri equal A B")
			return exitUsage
		}
		eq, err := uri.Equal(args[0], args[1])
		if err != nil {
			reportURLError(e, err)
			return exitUsage
		}
		if eq {
			return exitOK
		}
		return exitFail
	case "resolve":
		if len(args) < 2 {
			fmt.Fprintln(e.stderr, "usage: linkscan uri resolve [--rfc1630] BASE REF...")
			return exitUsage
		}
		rules := uri.RFC3986
		if cfg.rfc1630 {
			rules = uri.RFC1630
		}
		for _, ref := range args[1:] {
			s, err := uri.Resolve(args[0], ref, rules)
			if err != nil {
				reportURLError(e, err)
				return exitUsage
			}
			fmt.Fprintln(e.stdout, s)
		}
		return exitOK
	default: // parse
		return uriParse(e, args, cfg.json)
	}
}

func reportURLError(e *env, err error) {
	var ue *uri.Error
	if errors.As(err, &ue) {
		fmt.Fprintf(e.stderr, "%s:%d: %v\n", ue.URL, ue.Column(), ue.Err)
		return
	}
	fmt.Fprintln(e.stderr, err)
}

func uriCanon(e *env, args []string) int {
	status := exitOK
	one := func(s string) {
		u, err := uri.Parse(s)
		if u == nil {
			reportURLError(e, err)
			status = exitFail
			return
		}
		fmt.Fprintln(e.stdout, u.Canonical())
		for _, p := range u.Problems {
			reportURLError(e, p)
			status = exitFail
		}
	}
	if len(args) > 0 {
		for _, a := range args {
			one(a)
		}
		return status
	}
	sc := bufio.NewScanner(e.stdin)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			one(line)
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(e.stderr, "linkscan uri canon: reading standard input: %v\n", err)
		return exitFail
	}
	return status
}

type jsonProblem struct {
	Offset  int    `json:"offset"`
	Column  int    `json:"column"`
	Message string `json:"message"`
}

func problemsJSON(ps []*uri.Error) []jsonProblem {
	out := []jsonProblem{}
	for _, p := range ps {
		out = append(out, jsonProblem{p.Offset, p.Column(), p.Err.Error()})
	}
	return out
}

func uriParse(e *env, args []string, asJSON bool) int {
	if len(args) == 0 {
		fmt.Fprintln(e.stderr, "usage: linkscan uri parse [--json] URL...")
		return exitUsage
	}
	status := exitOK
	enc := json.NewEncoder(e.stdout)
	enc.SetEscapeHTML(false)
	for _, s := range args {
		u, err := uri.Parse(s)
		if u == nil {
			reportURLError(e, err)
			status = exitFail
			continue
		}
		if !u.Valid() {
			status = exitFail
		}
		obj := struct {
			URL       string        `json:"url"`
			Scheme    string        `json:"scheme"`
			User      string        `json:"user,omitempty"`
			Password  string        `json:"password,omitempty"`
			Host      string        `json:"host"`
			Port      string        `json:"port"`
			Path      string        `json:"path"`
			Query     string        `json:"query"`
			Fragment  string        `json:"fragment"`
			Opaque    string        `json:"opaque"`
			View      uri.View      `json:"view"`
			Valid     bool          `json:"valid"`
			Problems  []jsonProblem `json:"problems"`
			Canonical string        `json:"canonical"`
		}{s, u.Scheme, u.User, u.Password, u.Host, u.Port, u.Path, u.RawQuery, u.Fragment, u.Opaque,
			u.View(), u.Valid(), problemsJSON(u.Problems), u.Canonical()}
		if asJSON {
			enc.Encode(obj)
			continue
		}
		w := e.stdout
		fmt.Fprintf(w, "url:       %s\nscheme:    %s\n", s, u.Scheme)
		for _, kv := range [][2]string{{"user", u.User}, {"host", u.Host}, {"port", u.Port}, {"path", u.Path},
			{"query", u.RawQuery}, {"fragment", u.Fragment}, {"opaque", u.Opaque}} {
			if kv[1] != "" {
				fmt.Fprintf(w, "%-10s %s\n", kv[0]+":", kv[1])
			}
		}
		if v := u.View(); v != nil {
			fmt.Fprintf(w, "view:      %+v\n", v)
		}
		fmt.Fprintf(w, "valid:     %v\n", u.Valid())
		for _, p := range obj.Problems {
			fmt.Fprintf(w, "problem:   column %d: %s\n", p.Column, p.Message)
		}
		fmt.Fprintf(w, "canonical: %s\n\n", obj.Canonical)
	}
	return status
}
