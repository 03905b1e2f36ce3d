package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/references"
	"github.com/linkscan/linkscan/scan"
)

var cmdResolve = &command{
	Name:      "resolve",
	UsageLine: "linkscan resolve [--index FILE] [flags] PATH...",
	Short:     "resolve mid:, cid:, news: and nntp: references against the archive",
	Long: `
Resolve reports every mid:, cid:, news: and nntp: reference in the
archives, explicit (links in the text) and implicit (In-Reply-To and
References headers, and "In article <id>" attribution lines), with where
it leads. The archives are indexed first (Message-IDs, Content-IDs,
newsgroups), then scanned.

Each record has scan's fields (see 'linkscan help scan') plus:

  status   resolved, dangling, ambiguous, not-a-target or external-server
  target   the first target: file, offset, message_id, part, group
  targets  every target, when there are several (copies, crossposts,
           ambiguous Content-IDs)

Flags:

  --index FILE       keep the index in an SQLite file: later runs and other
                     archives resolve against it, and files already indexed
                     and unchanged are not read again
  --nntp-host LIST   further names of the archive's own news server
                     (comma-separated); the hosts named in Xref: headers
                     count too. nntp:// links to other hosts are
                     external-server.
  --status LIST      keep only these statuses (e.g. dangling,ambiguous)
  --no-implicit      leave out In-Reply-To, References and attributions
  --format, -o, --as, --jobs, --progress, --max-part-size
                     as for scan

Exit status: 0 when every input was read cleanly, 1 when some were
damaged or unreadable, 2 for usage errors. Dangling references are
reported, not errors. See docs/references.md.
`,
}

var cmdIndex = &command{
	Name:      "index",
	UsageLine: "linkscan index [--index FILE] [--format text|json] PATH...",
	Short:     "build or update the Message-ID index of archives",
	Long: `
Index reads the archives and records their Message-IDs (every location of
each), Content-IDs (message and part), newsgroups and "group:number"
articles. With --index FILE the index is kept in an SQLite file and
updated: a file whose size and modification time are unchanged is not read
again, a changed one replaces what was indexed from it. Without --index the
index lives in memory for this run only, which tells what an archive holds.

It prints what the index holds (files, messages, distinct Message-IDs,
messages without one, Content-IDs, groups, articles) and what this run
added and skipped; --format json prints the same as one JSON object.
--as FORMAT forces the input format, as for scan. Damage found in messages
is printed on standard error with its location, and the exit status is
then 1; the damaged messages are indexed all the same.
`,
}

func init() {
	cmdResolve.Run = runResolve
	cmdIndex.Run = runIndex
}

// refFlags are the flags resolve and scan --resolve share.
type refFlags struct {
	index, nntpHosts string
}

// openStore opens the index: an SQLite file or memory.
func openStore(file string) (references.Store, error) {
	if file == "" {
		return references.NewMemory(), nil
	}
	return references.OpenSQLite(file)
}

// stdinOpener lets "-" be read twice (index, then scan) by keeping
// standard input in a temporary file.
type stdinOpener struct {
	e    *env
	temp string
}

func (s *stdinOpener) open(name string, o *mailbox.Options) (*mailbox.Reader, error) {
	if name != "-" {
		return mailbox.Open(name, o)
	}
	if s.temp == "" {
		f, err := os.CreateTemp("", "linkscan-stdin-*")
		if err != nil {
			return nil, err
		}
		s.temp = f.Name()
		_, err = io.Copy(f, s.e.stdin)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
	}
	f, err := os.Open(s.temp)
	if err != nil {
		return nil, err
	}
	r, err := mailbox.NewReader(f, "-", o)
	if err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

func (s *stdinOpener) cleanup() {
	if s.temp != "" {
		os.Remove(s.temp)
	}
}

// buildIndex indexes the inputs into store; it returns exitFail if an
// input could not be indexed. With showProblems, the damage found in
// messages is printed too (resolve leaves that to its scan pass).
func buildIndex(e *env, store references.Store, paths []string, opts mailbox.Options, open func(string, *mailbox.Options) (*mailbox.Reader, error), showProblems bool) (added, skipped int, status int) {
	ix := &references.Indexer{Store: store, Mailbox: opts, Open: open}
	for _, p := range paths {
		st, err := ix.Add(p)
		added += st.Messages
		skipped += st.Skipped
		if showProblems {
			for _, pr := range st.Problems {
				fmt.Fprintln(e.stderr, pr)
				status = exitFail
			}
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "linkscan: indexing %s: %v\n", p, err)
			status = exitFail
		}
	}
	return added, skipped, status
}

func runResolve(e *env, args []string) int {
	var c scanConfig
	var rf refFlags
	var statuses string
	var noImplicit bool
	fs := newFlagSet(cmdResolve, e)
	c.register(fs)
	fs.StringVar(&rf.index, "index", "", "SQLite index file")
	fs.StringVar(&rf.nntpHosts, "nntp-host", "", "names of the local news server")
	fs.StringVar(&statuses, "status", "", "statuses to keep")
	fs.BoolVar(&noImplicit, "no-implicit", false, "leave out implicit references")
	paths, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	cfg, code := c.config(e, "resolve", paths)
	if cfg == nil {
		return code
	}
	cfg.RefsOnly, cfg.Implicit = true, !noImplicit
	if statuses != "" {
		cfg.Statuses = map[string]bool{}
		for _, s := range strings.Split(statuses, ",") {
			switch s = strings.TrimSpace(s); references.Status(s) {
			case references.Resolved, references.Dangling, references.Ambiguous, references.NotATarget, references.ExternalServer:
				cfg.Statuses[s] = true
			default:
				fmt.Fprintf(e.stderr, "linkscan resolve: unknown --status %q\n", s)
				return exitUsage
			}
		}
	}
	return c.withResolver(e, cfg, rf, paths)
}

// withResolver indexes the inputs, then scans them with resolution.
func (c *scanConfig) withResolver(e *env, cfg *scan.Config, rf refFlags, paths []string) int {
	if cfg.Mailbox.Format == mailbox.FormatText {
		fmt.Fprintln(e.stderr, "linkscan: references need messages; --as text cannot be resolved")
		return exitUsage
	}
	store, err := openStore(rf.index)
	if err != nil {
		fmt.Fprintf(e.stderr, "linkscan: %v\n", err)
		return exitFail
	}
	defer store.Close()
	so := &stdinOpener{e: e}
	defer so.cleanup()
	_, _, status := buildIndex(e, store, paths, cfg.Mailbox, so.open, false)
	cfg.Resolver = &references.Resolver{Store: store}
	for _, h := range strings.Split(rf.nntpHosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			cfg.Resolver.LocalHosts = append(cfg.Resolver.LocalHosts, h)
		}
	}
	c.openFn = func(name string) (*mailbox.Reader, error) { return so.open(name, &cfg.Mailbox) }
	if s := c.run(e, cfg, paths); s > status {
		status = s
	}
	return status
}

func runIndex(e *env, args []string) int {
	var file, format, as string
	fs := newFlagSet(cmdIndex, e)
	fs.StringVar(&file, "index", "", "SQLite index file")
	fs.StringVar(&format, "format", "text", "text or json")
	fs.StringVar(&as, "as", "", "input format")
	paths, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(paths) == 0 || (format != "text" && format != "json") {
		fmt.Fprintf(e.stderr, "usage: %s\n", cmdIndex.UsageLine)
		return exitUsage
	}
	var opts mailbox.Options
	if as != "" {
		f, ok := parseFormat(as)
		if !ok {
			fmt.Fprintf(e.stderr, "linkscan index: unknown --as %q\n", as)
			return exitUsage
		}
		opts.Format = f
	}
	store, err := openStore(file)
	if err != nil {
		fmt.Fprintf(e.stderr, "linkscan index: %v\n", err)
		return exitFail
	}
	defer store.Close()
	so := &stdinOpener{e: e}
	defer so.cleanup()
	added, skipped, status := buildIndex(e, store, paths, opts, so.open, true)
	st, err := store.Stats()
	if err != nil {
		fmt.Fprintf(e.stderr, "linkscan index: %v\n", err)
		return exitFail
	}
	if format == "json" {
		out := struct {
			references.Stats
			Added   int `json:"added"`
			Skipped int `json:"skipped_unchanged"`
		}{st, added, skipped}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		enc.Encode(out)
		return status
	}
	where := "memory (this run only)"
	if file != "" {
		where = file
	}
	fmt.Fprintf(e.stdout, "index              %s\n", where)
	fmt.Fprintf(e.stdout, "added messages     %d\n", added)
	fmt.Fprintf(e.stdout, "unchanged files    %d (not read again)\n", skipped)
	fmt.Fprintf(e.stdout, "files              %d\n", st.Files)
	fmt.Fprintf(e.stdout, "messages           %d\n", st.Messages)
	fmt.Fprintf(e.stdout, "message-ids        %d distinct\n", st.MessageIDs)
	fmt.Fprintf(e.stdout, "without message-id %d\n", st.Synthetic)
	fmt.Fprintf(e.stdout, "content-ids        %d\n", st.ContentIDs)
	fmt.Fprintf(e.stdout, "newsgroups         %d\n", st.Groups)
	fmt.Fprintf(e.stdout, "articles           %d\n", st.Articles)
	return status
}
