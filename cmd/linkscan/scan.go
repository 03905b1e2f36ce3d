package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/report"
	"github.com/linkscan/linkscan/scan"
)

var cmdScan = &command{
	Name:      "scan",
	UsageLine: "linkscan scan [flags] PATH...",
	Short:     "report every link in archives or text",
	Long: `
Scan reads mail and news archives and reports every link with its exact
location. PATH is an mbox file (mboxo, mboxrd, mboxcl, mboxcl2, MMDF), a
single message or news article, a Maildir, an MH folder, a news spool
directory, a .gz/.bz2/.xz/.zst compressed file, or - for standard input.
The format is detected; --as forces it.

Flags:

  --as FORMAT        force the input format: mbox, mmdf, message, maildir,
                     mh, spool or text (plain text, no message structure)
  --format FORMAT    output: text, jsonl, csv, summary, summary-json
                     (default: text on a terminal, jsonl otherwise)
  -o FILE            write the output to FILE instead of standard output
  --unique           one record per canonical URL: first location and count
  --scheme LIST      keep only these schemes (comma-separated: http,https)
  --host PATTERN     keep only links whose host matches the glob PATTERN
  --headers          also report links in header fields (List-*, Archived-At,
                     Link, Content-Base, Content-Location)
  --no-html          do not decode text/html parts
  --emails           report bare e-mail addresses as mailto: links
  --no-heuristic     do not join bare URLs broken by a mailer's wrap
  --jobs N           messages worked on in parallel (default: all cores);
                     output is always in input order
  --progress WHEN    auto, always or never: a progress bar on standard
                     error (auto: only when it is a terminal)
  --max-part-size N  largest decoded text part scanned, in bytes
                     (default 32 MiB)
  --resolve          resolve mid:, cid:, news: and nntp: links against the
                     archives (indexed first) and add status and target to
                     their records; see 'linkscan help resolve'
  --index FILE       with --resolve: keep the index in this SQLite file
  --nntp-host LIST   with --resolve: names of the archive's own news server

Records carry: url, canonical, form, joined, heuristic, valid, problems,
scheme, host, path, offset, message_id, date, from, subject, newsgroups,
part, content_type, where, line, column, start, end, raw_offset (and
count with --unique; status, target and targets with --resolve). See
docs/scan.md.

Exit status: 0 when every input was read cleanly; 1 when some message or
input was damaged or unreadable (every other one is still reported, and
each problem is printed on standard error with its location); 2 for
usage errors.
`,
}

type scanConfig struct {
	as, format, output, schemes, host, progress string
	unique, headers, noHTML, emails, noHeur     bool
	jobs, maxPart                               int

	openFn func(name string) (*mailbox.Reader, error) // nil: files and "-"
}

// register defines the flags scan and resolve share.
func (c *scanConfig) register(fs *flag.FlagSet) {
	fs.StringVar(&c.as, "as", "", "input format")
	fs.StringVar(&c.format, "format", "", "output format")
	fs.StringVar(&c.output, "o", "", "output file")
	fs.StringVar(&c.schemes, "scheme", "", "schemes to keep")
	fs.StringVar(&c.host, "host", "", "host pattern")
	fs.StringVar(&c.progress, "progress", "auto", "auto, always or never")
	fs.BoolVar(&c.unique, "unique", false, "one record per canonical URL")
	fs.BoolVar(&c.headers, "headers", false, "include header links")
	fs.BoolVar(&c.noHTML, "no-html", false, "skip text/html parts")
	fs.BoolVar(&c.emails, "emails", false, "report e-mail addresses")
	fs.BoolVar(&c.noHeur, "no-heuristic", false, "no mailer-wrap joins")
	fs.IntVar(&c.jobs, "jobs", 0, "parallel messages")
	fs.IntVar(&c.maxPart, "max-part-size", 0, "largest decoded part")
}

func parseFormat(as string) (mailbox.Format, bool) {
	for _, f := range mailbox.Formats {
		if string(f) == as {
			return f, true
		}
	}
	return "", false
}

// config checks the flags and makes the scan configuration; on a usage
// error it prints it and returns nil and the exit code.
func (c *scanConfig) config(e *env, name string, paths []string) (*scan.Config, int) {
	usageErr := func(format string, a ...any) (*scan.Config, int) {
		fmt.Fprintf(e.stderr, "linkscan "+name+": "+format+"\n", a...)
		return nil, exitUsage
	}
	if len(paths) == 0 {
		return usageErr("no PATH given (use - for standard input)")
	}
	cfg := &scan.Config{Headers: c.headers, HostPattern: c.host, Jobs: c.jobs}
	cfg.Extract.Emails, cfg.Extract.NoHeuristic = c.emails, c.noHeur
	cfg.Mailbox.NoHTML, cfg.Mailbox.MaxPartSize = c.noHTML, c.maxPart
	cfg.Mailbox.DeferParse = true // headers are read by the workers
	if c.as != "" {
		f, ok := parseFormat(c.as)
		if !ok {
			return usageErr("unknown --as %q (want one of %v)", c.as, mailbox.Formats)
		}
		cfg.Mailbox.Format = f
	}
	if c.schemes != "" {
		cfg.Schemes = map[string]bool{}
		for _, s := range strings.Split(c.schemes, ",") {
			if s = strings.ToLower(strings.TrimSpace(s)); s != "" {
				cfg.Schemes[s] = true
			}
		}
	}
	if c.jobs < 0 || c.maxPart < 0 {
		return usageErr("--jobs and --max-part-size must not be negative")
	}
	switch c.progress {
	case "auto", "always", "never":
	default:
		return usageErr("--progress must be auto, always or never")
	}
	switch report.Format(c.format) {
	case "", report.Text, report.JSONL, report.CSV, report.Summary, report.SummaryJSON:
	default:
		return usageErr("unknown --format %q (want one of %v)", c.format, report.Formats)
	}
	return cfg, exitOK
}

func init() { cmdScan.Run = runScan }

func runScan(e *env, args []string) int {
	var c scanConfig
	var rf refFlags
	var resolve bool
	fs := newFlagSet(cmdScan, e)
	c.register(fs)
	fs.BoolVar(&resolve, "resolve", false, "resolve mid:, cid:, news: and nntp: links")
	fs.StringVar(&rf.index, "index", "", "SQLite index file (with --resolve)")
	fs.StringVar(&rf.nntpHosts, "nntp-host", "", "names of the local news server (with --resolve)")
	paths, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	cfg, code := c.config(e, "scan", paths)
	if cfg == nil {
		return code
	}
	if resolve {
		return c.withResolver(e, cfg, rf, paths)
	}
	if rf.index != "" || rf.nntpHosts != "" {
		fmt.Fprintln(e.stderr, "linkscan scan: --index and --nntp-host go with --resolve")
		return exitUsage
	}
	return c.run(e, cfg, paths)
}

// run scans and writes the records.
func (c *scanConfig) run(e *env, cfg *scan.Config, paths []string) int {
	out := e.stdout
	if c.output != "" {
		f, err := os.Create(c.output)
		if err != nil {
			fmt.Fprintf(e.stderr, "linkscan: %v\n", err)
			return exitUsage
		}
		defer f.Close()
		out = f
	}
	bw := bufio.NewWriterSize(out, 64<<10)
	defer bw.Flush()

	format := report.Format(c.format)
	if format == "" {
		format = report.JSONL
		if isTerminal(out) {
			format = report.Text
		}
	}
	if format == report.Text && cfg.Mailbox.Format == mailbox.FormatText {
		format = report.PlainText // FILE:LINE:COL URL
	}
	w, err := report.NewWriter(bw, format)
	if err != nil {
		fmt.Fprintf(e.stderr, "linkscan: %v\n", err)
		return exitUsage
	}
	if c.unique {
		w = report.Unique(w)
	}

	var bar *progressbar.ProgressBar
	if c.progress == "always" || c.progress == "auto" && isTerminal(e.stderr) {
		bar = newBar(paths, e.stderr)
	}
	var status int
	if cfg.Mailbox.Format == mailbox.FormatText {
		status = scanText(e, paths, cfg, w)
	} else {
		status = c.scanArchives(e, paths, cfg, w, bar)
	}
	if err := w.Close(); err != nil {
		fmt.Fprintf(e.stderr, "linkscan: %v\n", err)
		status = exitFail
	}
	if err := bw.Flush(); err != nil {
		fmt.Fprintf(e.stderr, "linkscan: writing output: %v\n", err)
		status = exitFail
	}
	if bar != nil {
		bar.Finish()
		fmt.Fprintln(e.stderr)
	}
	return status
}

func scanText(e *env, paths []string, cfg *scan.Config, w report.Writer) int {
	status := exitOK
	for _, p := range paths {
		var r io.Reader = e.stdin
		name := p
		if p == "-" {
			name = "-"
		} else {
			f, err := os.Open(p)
			if err != nil {
				fmt.Fprintf(e.stderr, "linkscan scan: %v\n", err)
				report.Unreadable(w)
				status = exitFail
				continue
			}
			defer f.Close()
			r = f
		}
		w.Message(1, false)
		if err := scan.Text(name, r, cfg, w.Write); err != nil {
			fmt.Fprintf(e.stderr, "%s: %v\n", name, err)
			status = exitFail
		}
	}
	return status
}

func (c *scanConfig) scanArchives(e *env, paths []string, cfg *scan.Config, w report.Writer, bar *progressbar.ProgressBar) int {
	status := exitOK
	open := c.openFn
	if open == nil {
		open = func(name string) (*mailbox.Reader, error) {
			if name == "-" {
				return mailbox.NewReader(e.stdin, "-", &cfg.Mailbox)
			}
			return mailbox.Open(name, &cfg.Mailbox)
		}
	}
	var prog scan.Progress
	if bar != nil {
		prog = barProgress{bar}
	}
	messages, links := 0, 0
	err := scan.Run(paths, open, cfg, prog, func(r *scan.Result) error {
		if r.Err != nil {
			fmt.Fprintf(e.stderr, "linkscan scan: %v\n", r.Err)
			report.Unreadable(w)
			status = exitFail
			if r.Message == nil {
				return nil
			}
		}
		m := r.Message
		messages++
		w.Message(r.Parts, len(r.Problems) > 0)
		for _, p := range r.Problems {
			id := ""
			if m.MessageID != "" {
				id = " <" + m.MessageID + ">"
			}
			fmt.Fprintf(e.stderr, "%s:%d%s: %s\n", m.Path, m.Offset, id, p)
			status = exitFail
		}
		for i := range r.Records {
			if err := w.Write(&r.Records[i]); err != nil {
				return err
			}
		}
		links += len(r.Records)
		if bar != nil {
			bar.Describe(fmt.Sprintf("%d messages, %d links", messages, links))
		}
		return nil
	})
	if err != nil {
		fmt.Fprintf(e.stderr, "linkscan scan: %v\n", err)
		return exitFail
	}
	return status
}

type barProgress struct{ b *progressbar.ProgressBar }

func (p barProgress) BytesRead(n int64) { p.b.Add64(n) }

// newBar makes a progress bar over the total size of the file inputs.
func newBar(paths []string, w io.Writer) *progressbar.ProgressBar {
	var total int64
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			total += fi.Size()
		} else {
			total = -1
			break
		}
	}
	return progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100_000_000),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionClearOnFinish(),
	)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
