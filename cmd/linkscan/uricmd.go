package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/linkscan/linkscan/record"
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
	arguments it reads one URL per line from standard input. Output
	line N always answers input line (or argument) N: a URL with
	problems still gets its canonical form printed, a blank line or
	one that cannot be parsed at all gives an empty line. Problems go
	to standard error as "line N: URL:COLUMN: problem", and the exit
	status is 1 once all input has been processed.

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
	{{parse-fields}}

See docs/uri.md for the rules.
`,
}

// parseFieldsLead introduces the list of parseFields in uri's help.
const parseFieldsLead = "Its fields (docs/uri.md says what each holds): "

// parseFields is the table of the fields of uri parse --json, in order;
// problemFields those of each of its problems.
var parseFields = record.Table{
	{Name: "url", Doc: "the URL as given"},
	{Name: "scheme", Doc: "lower-cased"},
	{Name: "user", Omitted: true, Doc: "the user of `user:password@`, as written; left out when empty"},
	{Name: "password", Omitted: true, Doc: "the password of `user:password@`, as written; left out when empty"},
	{Name: "host", Doc: "as written, `\"\"` when none"},
	{Name: "port", Doc: "as written, `\"\"` when none"},
	{Name: "path", Doc: "as written, `\"\"` when none"},
	{Name: "query", Doc: "after `?`, as written, `\"\"` when none"},
	{Name: "fragment", Doc: "after `#`, as written, `\"\"` when none"},
	{Name: "opaque", Doc: "the part after `scheme:` of a URL without `//` (`mid:`, `mailto:`, ...), `\"\"` otherwise"},
	{Name: "view", Doc: "the scheme's own view (see [Scheme views](#scheme-views-urlview)), an object; `null` for a scheme without one"},
	{Name: "valid", Doc: "the URL has no problems"},
	{Name: "problems", Doc: "its problems, `[]` when none: objects with `offset` (byte offset in `url`), `column` (1-based, in characters) and `message`"},
	{Name: "canonical", Doc: "the canonical form"},
}

// problemFields is the table of the fields of a problem of uri parse
// --json (its problems field).
var problemFields = record.Table{
	{Name: "offset", Doc: "byte offset in the URL"},
	{Name: "column", Doc: "1-based, in characters"},
	{Name: "message", Doc: "what is wrong"},
}

func init() {
	cmdURI.Run = runURI
	cmdURI.Long = strings.Replace(cmdURI.Long, "{{parse-fields}}",
		strings.ReplaceAll(wrap(parseFieldsLead+parseFields.Summary()+".", 64), "\n", "\n\t"), 1)
}

func runURI(e *env, args []string) int {
	if len(args) == 0 {
		fmt.Fprintf(e.stderr, "usage: %s\n", cmdURI.UsageLine)
		return exitUsage
	}
	verb, args := args[0], args[1:]
	fs := newFlagSet(cmdURI, e)
	if verb == "-h" || verb == "-help" || verb == "--help" {
		// the help before a verb, as after one: the flag set prints it
		_, code, _ := parseFlags(fs, []string{verb})
		return code
	}
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
		fmt.Fprintf(e.stderr, "%s:%d: %s\n", escape(ue.URL), ue.Column(), escape(ue.Err.Error()))
		return
	}
	fmt.Fprintln(e.stderr, escape(err.Error()))
}

// maxCanonLine bounds an input line of "uri canon"; a longer one gives
// an empty output line and an error, and reading goes on.
const maxCanonLine = 1 << 20

// uriCanon prints one line for each URL: its canonical form, or an empty
// line when it has none (the reason on standard error, with the line
// number), so that output line N always answers input line N.
func uriCanon(e *env, args []string) int {
	status := exitOK
	one := func(n int, s string) bool {
		canon := ""
		if s != "" {
			u, err := uri.Parse(s)
			if u == nil {
				reportURLErrorAt(e, n, err)
				status = exitFail
			} else {
				canon = u.Canonical()
				for _, p := range u.Problems {
					reportURLErrorAt(e, n, p)
					status = exitFail
				}
			}
		}
		_, err := fmt.Fprintln(e.stdout, canon)
		return err == nil
	}
	if len(args) > 0 {
		for i, a := range args {
			if !one(i+1, a) {
				return exitFail
			}
		}
		return status
	}
	br := bufio.NewReaderSize(e.stdin, 64<<10)
	var long []byte
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		tooLong := false
		for err == bufio.ErrBufferFull { // a long line: keep up to the bound
			if len(long)+len(line) <= maxCanonLine {
				long = append(long, line...)
			} else {
				tooLong = true
			}
			line, err = br.ReadSlice('\n')
		}
		if long != nil {
			line = append(long, line...)
			long = long[:0]
		}
		if len(line) == 0 && err != nil {
			if err != io.EOF {
				fmt.Fprintf(e.stderr, "linkscan uri canon: reading standard input: %v\n", err)
				return exitFail
			}
			return status
		}
		if tooLong || len(line) > maxCanonLine {
			fmt.Fprintf(e.stderr, "line %d: longer than %d bytes\n", n, maxCanonLine)
			status = exitFail
			if _, werr := fmt.Fprintln(e.stdout); werr != nil {
				return exitFail
			}
		} else if !one(n, strings.TrimSpace(string(line))) {
			return exitFail
		}
		if err == io.EOF {
			return status
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "linkscan uri canon: reading standard input: %v\n", err)
			return exitFail
		}
	}
}

// reportURLErrorAt reports a URL's problem with its line (or argument)
// number.
func reportURLErrorAt(e *env, n int, err error) {
	fmt.Fprintf(e.stderr, "line %d: ", n)
	reportURLError(e, err)
}

// jsonProblem is a problem of uri parse --json, with the fields of
// problemFields.
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

// parseLine is a line of uri parse --json, with the fields of
// parseFields.
type parseLine struct {
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
		obj := parseLine{s, u.Scheme, u.User, u.Password, u.Host, u.Port, u.Path, u.RawQuery, u.Fragment, u.Opaque,
			u.View(), u.Valid(), problemsJSON(u.Problems), u.Canonical()}
		if asJSON {
			enc.Encode(obj)
			continue
		}
		// for people: what came in is shown escaped
		w := e.stdout
		fmt.Fprintf(w, "url:       %s\nscheme:    %s\n", escape(s), escape(u.Scheme))
		for _, kv := range [][2]string{{"user", u.User}, {"host", u.Host}, {"port", u.Port}, {"path", u.Path},
			{"query", u.RawQuery}, {"fragment", u.Fragment}, {"opaque", u.Opaque}} {
			if kv[1] != "" {
				fmt.Fprintf(w, "%-10s %s\n", kv[0]+":", escape(kv[1]))
			}
		}
		if v := u.View(); v != nil {
			fmt.Fprintf(w, "view:      %s\n", escape(fmt.Sprintf("%+v", v)))
		}
		fmt.Fprintf(w, "valid:     %v\n", u.Valid())
		for _, p := range obj.Problems {
			fmt.Fprintf(w, "problem:   column %d: %s\n", p.Column, escape(p.Message))
		}
		fmt.Fprintf(w, "canonical: %s\n\n", escape(obj.Canonical))
	}
	return status
}
