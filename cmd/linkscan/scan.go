package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/linkscan/linkscan/internal/inputs"
	"github.com/linkscan/linkscan/internal/output"
	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/record"
	"github.com/linkscan/linkscan/references"
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
directory, a .gz/.bz2/.xz/.zst compressed file, a public-inbox archive
(a v2 inbox, a v1 inbox or one epoch repository, read through git: its
records give the epoch as path and the message's git object id as
blob), or - for standard input.
With no PATH, standard input is read when it is not a terminal
(cat msg | linkscan scan).
The format is detected; --as forces it.

Flags:

  --as FORMAT        force the input format: mbox, mmdf, message, maildir,
                     mh, spool or text (plain text, no message structure)
  --format FORMAT    output: text, jsonl, csv, urls, summary,
                     summary-json (default: text on a terminal, jsonl
                     otherwise); urls is one link a line as written
                     (the url field), in input order; with --unique
                     each link once
  -o FILE            write the output to FILE: to a temporary file beside
                     it, which replaces FILE only when the scan is done.
                     FILE may not be an input (nor lie in an input
                     directory). When some input could not be read, FILE
                     is left as it was and the output kept in FILE.partial
                     (FILE.partial-1, -2 ... when that exists: no file is
                     replaced); on a write error or an interrupt FILE is
                     left as it was and nothing is kept
  --unique           one record per canonical URL: first location and count,
                     written at the end (counts are known only then)
  --unique=first     one record per canonical URL, its first location,
                     written at once, without a count (streams: | head
                     ends at once)
  --memory SIZE      memory for --unique, and for a summary's count of
                     distinct links and of links per host, before they
                     spill to temporary files (default 256MiB)
  --tmpdir DIR       directory for those files, and for a message longer
                     than 4 MiB read from standard input or a compressed
                     file while its end is looked for (or the bytes an
                     mbox Content-Length covers, until it is known to be
                     right) (default: $TMPDIR)
  --scheme LIST      keep only these schemes (comma-separated: http,https);
                     may be repeated
  --host PATTERN     keep only links whose host matches the glob PATTERN;
                     "*.example.org" matches example.org and its
                     subdomains; may be repeated, or a comma-separated list.
                     Case does not matter, and an internationalized name
                     matches as written ("bücher.example" is put in the
                     host field's xn-- form); a pattern that is not a
                     valid glob ("[x") is a usage error
  --headers          also report links in header fields (List-Archive,
                     -Help, -Owner, -Post, -Subscribe, -Unsubscribe,
                     Archived-At, Link, Content-Base, Content-Location,
                     X-URL, X-Mailing-List)
  --no-html          do not decode text/html parts
  --emails           report bare e-mail addresses as mailto: links
  --no-heuristic     do not join bare URLs broken by a mailer's wrap
  --bare-domains     also report host names without a scheme
                     (example.com/path) and IP literals, form domain
  --data-uris        report data: URIs (inline content; not reported by
                     default, in text or in HTML attributes)
  --refang           read defanged hxxp:// and hxxps:// links as http(s),
                     with a problem saying so
  --jobs N           messages worked on in parallel (default: all cores);
                     output is always in input order
  --progress WHEN    auto, always or never: a progress bar on standard
                     error (auto: only when it is a terminal that the
                     results are not shown on; always: in every case,
                     taken off before each result line). Results and
                     warnings on one terminal or file never split a line
  --max-part-size SIZE
                     largest decoded text part scanned (default 32MiB;
                     0 means the default)
  --max-message-size SIZE
                     largest message held in memory whole (default
                     64MiB); a longer one is reported with a problem,
                     and what of it is still read is in docs/formats.md
  --quiet            no line per problem on standard error, only the
                     counts at the end (inputs that cannot be read are
                     still named)
  --warn-limit N     print each problem at most N times, then count the
                     rest in one line at the end (default 10; 0: all);
                     problems are counted by kind and text with their
                     numbers and quoted values left out, so that "unknown
                     charset "x"" and "unknown charset "y"" count as one
  --damage-exit N    exit status when damage in messages was reported
                     (default 0: damage read past is success, counted on
                     standard error; 4 or 5 to 125 to tell it apart; 1,
                     2 and 3 are refused, they mean something else)
  --verbose          say how each input, and each file read in a
                     directory, is read (its format, and why), and name
                     the files of directories passed over or empty
                     (without it, their number is printed at the end)
  --resolve          resolve mid:, cid:, news: and nntp: links against the
                     archives (indexed first) and add status and target to
                     their records; see 'linkscan help resolve'
  --index FILE       with --resolve: keep the index in this SQLite file
  --nntp-host LIST   with --resolve: names of the archive's own news server

{{sizes}}

{{fields}}

The text format prints PATH#OFFSET (the message at byte OFFSET of PATH:
the number after the last #), <message-id>, part, LINE:COLUMN and the
URL; control characters from archives are shown escaped (\x1b), on
standard error too. With --as text it prints FILE:LINE:COL URL, the form
of grep -n and compilers that editors jump to: LINE and COL are the last
two numbers before the URL, read from the right, so a file name with ':'
in it (a Maildir name) is not cut. See docs/scan.md.

Exit status:
  0  every input was read; damage in messages read past is reported on
     standard error with its location and count, and is success
     (--damage-exit 4 gives it a code of its own)
  1  some input could not be read at all or to its end (missing,
     unreadable, truncated, decompression failed), or the output could
     not be written; everything else is still reported
  2  usage error
A closed output pipe (| head) ends the scan quietly, with the status of
what was read until then.
`,
}

type scanConfig struct {
	as, format, output, progress, tmpDir string
	schemes, hosts                       listFlag
	unique                               uniqueFlag
	headers, noHTML, emails, noHeur      bool
	bareDomains, dataURIs, refang        bool
	quiet, verbose                       bool
	jobs, warnLimit, damageExit          int
	maxPart, maxMessage, memory          sizeFlag

	name   string                                     // "scan" or "resolve", for messages
	openFn func(name string) (*mailbox.Reader, error) // nil: files and "-"

	readerGone atomic.Bool // the output is a pipe whose reader went away
}

// register defines the flags scan and resolve share.
func (c *scanConfig) register(fs *cmdFlags) {
	fs.StringVar(&c.as, "as", "", "input format")
	fs.StringVar(&c.format, "format", "", "output format")
	fs.StringVar(&c.output, "o", "", "output file")
	fs.Var(&c.schemes, "scheme", "schemes to keep")
	fs.Var(&c.hosts, "host", "host patterns to keep")
	fs.StringVar(&c.progress, "progress", "auto", "auto, always or never")
	fs.Var(&c.unique, "unique", "one record per canonical URL (=first: streamed, no count)")
	fs.BoolVar(&c.headers, "headers", false, "include header links")
	fs.BoolVar(&c.noHTML, "no-html", false, "skip text/html parts")
	fs.BoolVar(&c.emails, "emails", false, "report e-mail addresses")
	fs.BoolVar(&c.noHeur, "no-heuristic", false, "no mailer-wrap joins")
	fs.BoolVar(&c.bareDomains, "bare-domains", false, "report host names without a scheme")
	fs.BoolVar(&c.dataURIs, "data-uris", false, "report data: URIs")
	fs.BoolVar(&c.refang, "refang", false, "read hxxp:// and hxxps:// as http(s)")
	c.memory = report.DefaultMemory
	fs.Var(&c.memory, "memory", "memory budget of --unique")
	fs.StringVar(&c.tmpDir, "tmpdir", "", "directory for temporary files")
	fs.BoolVar(&c.quiet, "quiet", false, "no line per problem, only the counts")
	fs.BoolVar(&c.verbose, "verbose", false, "say how each input is read")
	fs.IntVar(&c.jobs, "jobs", 0, "parallel messages")
	fs.IntVar(&c.warnLimit, "warn-limit", 10, "lines per problem text")
	fs.IntVar(&c.damageExit, "damage-exit", defaultDamageExit, "exit status when damage was reported")
	fs.Var(&c.maxPart, "max-part-size", "largest decoded part")
	fs.Var(&c.maxMessage, "max-message-size", "largest message")
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
	c.name = name
	usageErr := func(format string, a ...any) (*scan.Config, int) {
		fmt.Fprintf(e.stderr, "linkscan %s: %s\n", name, escape(fmt.Sprintf(format, a...)))
		return nil, exitUsage
	}
	if len(paths) == 0 {
		return usageErr("no PATH given (use - for standard input)")
	}
	// a link-dense message's records are kept compact past
	// DefaultCompactAfter: every Result is read with Each and Len
	cfg := &scan.Config{Headers: c.headers, Jobs: c.jobs, CompactAfter: scan.DefaultCompactAfter}
	for _, h := range c.hosts {
		p, err := hostPattern(h)
		if err != nil {
			return usageErr("%v", err)
		}
		cfg.HostPatterns = append(cfg.HostPatterns, p)
	}
	cfg.Extract.Emails, cfg.Extract.NoHeuristic = c.emails, c.noHeur
	cfg.Extract.BareDomains, cfg.Extract.DataURIs, cfg.Extract.Refang = c.bareDomains, c.dataURIs, c.refang
	if c.maxPart > sizeFlag(int(^uint(0)>>1)) {
		return usageErr("--max-part-size %d is too large", c.maxPart)
	}
	cfg.Mailbox.NoHTML, cfg.Mailbox.MaxPartSize = c.noHTML, int(c.maxPart)
	cfg.Mailbox.MaxMessageSize = int64(c.maxMessage)
	cfg.Mailbox.DeferParse = true  // headers are read by the workers
	cfg.Mailbox.TempDir = c.tmpDir // long messages from streams wait there
	if c.as != "" {
		f, ok := parseFormat(c.as)
		if !ok {
			return usageErr("unknown --as %q (want one of %v)", c.as, mailbox.Formats)
		}
		cfg.Mailbox.Format = f
	}
	if len(c.schemes) > 0 {
		cfg.Schemes = map[string]bool{}
		for _, s := range c.schemes {
			cfg.Schemes[strings.ToLower(s)] = true
		}
	}
	if msg := checkRunFlags(c.jobs, c.warnLimit, c.damageExit, c.progress); msg != "" {
		return usageErr("%s", msg)
	}
	switch report.Format(c.format) {
	case "", report.Text, report.JSONL, report.CSV, report.URLs, report.Summary, report.SummaryJSON:
	default:
		return usageErr("unknown --format %q (want one of %v)", c.format, report.Formats)
	}
	if c.unique == uniqueFirst && (c.format == string(report.Summary) || c.format == string(report.SummaryJSON)) {
		return usageErr("--unique=first has no counts for a summary: use --unique")
	}
	if c.memory <= 0 {
		return usageErr("--memory must be more than 0")
	}
	if stdoutIsInput(e, paths) {
		return nil, exitUsage
	}
	return cfg, exitOK
}

func init() {
	cmdScan.Run = runScan
	cmdScan.Long = strings.Replace(cmdScan.Long, "{{fields}}", wrap("Records carry: "+record.Summary()+".", 72), 1)
}

// wrap breaks s into lines of at most width bytes, at spaces.
func wrap(s string, width int) string {
	var b strings.Builder
	n := 0
	for i, w := range strings.Fields(s) {
		if i > 0 && n+1+len(w) > width {
			b.WriteByte('\n')
			n = 0
		} else if i > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}

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
	paths = inputPaths(e, paths)
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
	if e.setMemoryLimit != nil && c.unique == uniqueOff {
		// A plain scan keeps little alive, and with the collector set to
		// run rarely (main) its garbage could grow with the number of
		// files read (a Maildir of 100,000: 72 MB instead of 54): a soft
		// limit makes it collect sooner near scanMemoryLimit. Not with
		// --unique or --resolve, whose budgets (--memory) are live data.
		e.setMemoryLimit(scanMemoryLimit)
	}
	return c.run(e, cfg, paths)
}

// scanMemoryLimit is the soft memory limit of a plain scan (runScan).
const scanMemoryLimit = 40 << 20

// tally counts what went wrong in a run, for the exit status and the
// final line on standard error.
type tally struct {
	messages   int                      // messages read
	unreadable int                      // inputs that could not be read (at all or to their end)
	skipped    map[mailbox.SkipKind]int // entries of directories passed over, by kind
	lookups    int                      // references whose lookup failed (resolve)
	damaged    int                      // messages with problems
	problems   int                      // problems in them
	writeErr   error                    // the output could not be written
	// outputRead is a file read inside an input directory that is the
	// -o file (through a symbolic or hard link): the output must not
	// replace it
	outputRead string
}

// status is the exit status for what t counted: 1 when an input could
// not be read or the output not written, else damageExit when damage was
// reported, else 0.
func (t *tally) status(damageExit int) int {
	switch {
	case t.unreadable > 0 || t.lookups > 0 || t.outputRead != "" || t.writeErr != nil && !isBrokenPipe(t.writeErr):
		return exitFail
	case t.damaged > 0:
		return damageExit
	}
	return exitOK
}

// run scans and writes the records.
func (c *scanConfig) run(e *env, cfg *scan.Config, paths []string) int {
	prefix := "linkscan " + c.name
	con := newConsole(e.stderr)
	con.quiet, con.limit = c.quiet, c.warnLimit
	out, outName := e.stdout, "standard output"
	var of *output.File
	if c.output != "" {
		g := guardOutput() // before the temporary file exists
		defer g.stop()
		f, code := createOutput(con, prefix, c.output, paths, "")
		if f == nil {
			return code
		}
		defer f.Abort() // after Commit or Keep, nothing
		g.set(f)
		of, out, outName = f, f, c.output
	}
	// rec tells errors of the output from those of the writers (the
	// temporary files of --unique)
	res := resultWriter(con, out, e.stderr) // whole lines, when stderr shares out
	rec := &checkedWriter{w: res}
	bw := bufio.NewWriterSize(rec, 64<<10)

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
		con.printf("%s: %v", prefix, err)
		return exitUsage
	}
	budget := int64(c.memory)
	summary := format == report.Summary || format == report.SummaryJSON
	if summary && c.unique != uniqueOff {
		budget /= 2 // a summary under --unique: --memory for the two together
	}
	if summary {
		// its count of distinct links within --memory too
		w = report.NewSummary(bw, format == report.SummaryJSON, budget, c.tmpDir)
	}
	base := w // the format's writer, under --unique's
	switch c.unique {
	case uniqueCount:
		w = report.UniqueWithBudget(w, budget, c.tmpDir)
	case uniqueFirst:
		w = report.UniqueFirst(w, budget, c.tmpDir)
	}
	// the messages of standard input are passed on one by one when the
	// output is read as it comes (a pipe, a terminal): flush each
	flush := func() error { return nil }
	if !isRegular(out) {
		flush = func() error {
			if f, ok := base.(report.Flusher); ok {
				if err := f.Flush(); err != nil {
					return err
				}
			}
			return bw.Flush()
		}
	}

	if wantBar(c.progress, out, e.stderr) {
		con.bar = newBar(paths, e.stderr)
	}
	// a reader of the output that goes away stops the run at once, as a
	// write to it would
	if f := fileOf(out); f != nil {
		defer watchReader(f, func() { c.readerGone.Store(true) })()
	}
	var t tally
	if cfg.Mailbox.Format == mailbox.FormatText {
		c.scanText(e, con, paths, cfg, w, &t)
	} else {
		c.scanArchives(e, con, paths, cfg, w, flush, &t)
	}
	// closed even after an error, so that --unique removes its temporary
	// files; a failed output makes it stop at its first write
	if err := w.Close(); t.writeErr == nil {
		t.writeErr = err
	}
	if err := bw.Flush(); t.writeErr == nil {
		t.writeErr = err
	}
	if err := flushResults(res); t.writeErr == nil && err != nil {
		t.writeErr, rec.err = err, err
	}
	con.finish()
	con.summarize(prefix)
	c.printCounts(con, prefix, &t)
	if t.writeErr != nil {
		e.out.reported = true
		switch {
		case isBrokenPipe(t.writeErr):
		case rec.err != nil:
			con.printf("%s: writing %s: %v", prefix, outName, t.writeErr)
		default:
			con.printf("%s: %v", prefix, t.writeErr)
		}
		return t.status(c.damageExit) // of is aborted: the target stays as it was
	}
	if of != nil && !finishOutput(con, prefix, of, c.output, &t) {
		return exitFail
	}
	return t.status(c.damageExit)
}

// printCounts prints the last lines of a run on standard error: the
// entries passed over in directories, and what went wrong.
func (c *scanConfig) printCounts(con *console, prefix string, t *tally) {
	more := ""
	if !c.verbose {
		more = "; --verbose names them"
	}
	for _, l := range skipLines(t.skipped, more) {
		con.printf("%s: %s", prefix, l)
	}
	if t.unreadable > 0 || t.lookups > 0 || t.damaged > 0 {
		con.printf("%s: %s", prefix, t.counts())
	}
}

// skipLines words the counts of entries passed over in directories, a
// line for each kind there is, in the order of the kinds; more ends the
// parenthesis ("; --verbose names them").
func skipLines(n map[mailbox.SkipKind]int, more string) []string {
	var lines []string
	for _, k := range []mailbox.SkipKind{mailbox.SkipNotMessage, mailbox.SkipDelivering, mailbox.SkipDirectory, mailbox.SkipEmpty} {
		switch c := n[k]; {
		case c == 0:
		case k == mailbox.SkipEmpty:
			lines = append(lines, fmt.Sprintf("%s (no messages%s)", plural(c, "empty file", "empty files"), more))
		case k == mailbox.SkipDelivering:
			lines = append(lines, fmt.Sprintf("%s in Maildir tmp/ skipped (being delivered%s)", plural(c, "file", "files"), more))
		case k == mailbox.SkipDirectory && c == 1:
			lines = append(lines, fmt.Sprintf("1 directory not followed (a link or hidden; it may hold messages%s)", more))
		case k == mailbox.SkipDirectory:
			lines = append(lines, fmt.Sprintf("%d directories not followed (links or hidden; they may hold messages%s)", c, more))
		default:
			lines = append(lines, fmt.Sprintf("%s in directories skipped (not messages%s)", plural(c, "file", "files"), more))
		}
	}
	return lines
}

// counts says what went wrong, for the last line on standard error.
func (t *tally) counts() string {
	var parts []string
	if t.unreadable > 0 {
		parts = append(parts, plural(t.unreadable, "input", "inputs")+" could not be read")
	}
	if t.lookups > 0 {
		parts = append(parts, plural(t.lookups, "reference lookup", "reference lookups")+" failed (the index could not be read)")
	}
	if t.damaged > 0 {
		parts = append(parts, fmt.Sprintf("%s damaged (%s)", plural(t.damaged, "message", "messages"), plural(t.problems, "problem", "problems")))
	}
	return strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// removeOnSignal removes the temporary output file when the command is
// interrupted (SIGINT, SIGTERM, SIGHUP), then dies of the signal as it
// would have; the returned function stops the watch.
func removeOnSignal(f *output.File) (stop func()) {
	g := guardOutput()
	g.set(f)
	return g.stop
}

// outputGuard watches for an interrupt (SIGINT, SIGTERM, SIGHUP) around
// an output file: started before the file is created, so that no moment
// is left in which a signal kills the process with its temporary file
// behind. A signal before set waits for it (or for stop, the file never
// made), a second at most (the open of a FIFO without a reader blocks);
// then the file is interrupted (output.File.Interrupt: the temporary file
// removed, a later Commit refused) and the process dies of the signal as
// it would have. A signal the process was started to ignore (nohup)
// stays ignored.
type outputGuard struct {
	ch        chan os.Signal
	done      chan struct{}
	ready     chan struct{} // closed by set or stop
	readyOnce sync.Once
	mu        sync.Mutex
	f         *output.File
	sig       os.Signal // received before set
}

func guardOutput() *outputGuard {
	g := &outputGuard{ch: make(chan os.Signal, 1), done: make(chan struct{}), ready: make(chan struct{})}
	sigs := interrupts()
	if len(sigs) == 0 {
		close(g.done)
		return g
	}
	signal.Notify(g.ch, sigs...)
	go func() {
		select {
		case sig := <-g.ch:
			g.mu.Lock()
			f := g.f
			if f == nil {
				g.sig = sig // set or stop ends the process
				g.mu.Unlock()
				// unless the file is not being made in a moment: the
				// open of a FIFO without a reader blocks
				select {
				case <-g.ready:
				case <-time.After(time.Second):
					dieOf(sig)
				}
				return
			}
			g.mu.Unlock()
			f.Interrupt() // a Commit from now on leaves the file as it was
			dieOf(sig)
		case <-g.done:
		}
	}()
	return g
}

// interrupts are the signals that end a run (SIGINT, SIGTERM, SIGHUP)
// but those the command was started to ignore (nohup, a background job's
// SIGINT): catching one of them would end the run where it should not.
func interrupts() []os.Signal {
	var sigs []os.Signal
	for _, s := range []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP} {
		if !signal.Ignored(s) {
			sigs = append(sigs, s)
		}
	}
	return sigs
}

// set gives the guard the output file once it is created.
func (g *outputGuard) set(f *output.File) {
	g.mu.Lock()
	g.f = f
	sig := g.sig
	g.mu.Unlock()
	g.readyOnce.Do(func() { close(g.ready) })
	if sig != nil {
		f.Interrupt()
		dieOf(sig)
	}
}

// stop ends the watch; a signal received before any file was set ends the
// process now.
func (g *outputGuard) stop() {
	signal.Stop(g.ch)
	g.mu.Lock()
	sig := g.sig
	g.mu.Unlock()
	g.readyOnce.Do(func() { close(g.ready) })
	if sig != nil {
		dieOf(sig)
	}
	select {
	case <-g.done:
	default:
		close(g.done)
	}
}

// waitToDie follows an output.ErrInterrupted from Commit or Keep: the
// guard's handler ends the process with the signal in a moment, and
// returning first would exit with a status instead.
func waitToDie(con *console, prefix, name string) {
	con.printf("%s: interrupted: %s is left as it was", prefix, name)
	time.Sleep(5 * time.Second)
}

// dieOf ends the process by sig, as if it had not been caught.
func dieOf(sig os.Signal) {
	signal.Reset(sig)
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		p.Signal(sig)
	}
	// the runtime's handler ends the process in a moment
	time.Sleep(5 * time.Second)
	if s, ok := sig.(syscall.Signal); ok {
		os.Exit(128 + int(s))
	}
	os.Exit(exitFail)
}

func (c *scanConfig) scanText(e *env, con *console, paths []string, cfg *scan.Config, w report.Writer, t *tally) {
	prefix := "linkscan " + c.name
	in := &inputs.Opener{Stdin: e.stdin}
	for _, p := range paths {
		r, err := in.OpenTextContent(p) // decompressed, as archives are
		if err != nil {
			con.printf("%s: %v", prefix, err)
			report.Unreadable(w)
			t.unreadable++
			continue
		}
		// an empty input (no bytes, or none once decompressed) holds
		// no text: no message, said as for archives (scanArchives)
		br := bufio.NewReader(r)
		if _, err := br.Peek(1); err == io.EOF {
			r.Close()
			if c.quiet && !c.verbose {
				if t.skipped == nil {
					t.skipped = map[mailbox.SkipKind]int{}
				}
				t.skipped[mailbox.SkipEmpty]++
			} else {
				con.printf("%s: %s: empty: no messages", prefix, p)
			}
			continue
		}
		if c.verbose {
			con.printf("%s: %s: read as text (--as text)", prefix, p)
		}
		w.Message(1, false)
		t.messages++
		err = scan.Text(p, br, cfg, func(rec *report.Record) error {
			if c.readerGone.Load() {
				return &writeError{syscall.EPIPE}
			}
			if err := w.Write(rec); err != nil {
				return &writeError{err}
			}
			return nil
		})
		r.Close()
		var we *writeError
		if errors.As(err, &we) {
			t.writeErr = we.err
			return
		}
		var ie *mailbox.InputError
		switch {
		case errors.As(err, &ie): // names the input and the offset
			con.printf("%s: %v", prefix, ie)
			t.unreadable++
		case err != nil:
			con.printf("%s: %s: %v", prefix, p, err)
			t.unreadable++
		}
	}
}

// writeError marks an error of the output among those of the inputs.
type writeError struct{ err error }

func (w *writeError) Error() string { return w.err.Error() }
func (w *writeError) Unwrap() error { return w.err }

func (c *scanConfig) scanArchives(e *env, con *console, paths []string, cfg *scan.Config, w report.Writer, flush func() error, t *tally) {
	prefix := "linkscan " + c.name
	open := c.openFn
	if open == nil {
		in := &inputs.Opener{Stdin: e.stdin}
		open = func(name string) (*mailbox.Reader, error) { return in.Open(name, &cfg.Mailbox) }
	}
	// files passed over inside directories: counted, named with
	// --verbose. Message files that could not be read come from Next as
	// well, as a message with an unreadable-input problem (their Skip's
	// error is an *InputError); a folder that cannot be read or a link
	// that cannot be followed comes only here: an input not read, named
	// even with --quiet. An empty file (no messages) is counted with
	// them, and named with --verbose
	var unread atomic.Int64
	var skipMu sync.Mutex
	skipped := map[mailbox.SkipKind]int{}
	cfg.Mailbox.OnSkip = func(sk mailbox.Skip) {
		if sk.Err != nil {
			var ie *mailbox.InputError
			if !errors.As(sk.Err, &ie) {
				unread.Add(1)
				con.printf("%s: %s", prefix, sk)
			}
			return
		}
		skipMu.Lock()
		skipped[sk.Kind]++
		skipMu.Unlock()
		switch {
		case !c.verbose:
		case sk.Kind == mailbox.SkipEmpty:
			con.printf("%s: %s: %s", prefix, sk.Path, sk.Reason)
		default:
			con.printf("%s: %s: skipped: %s", prefix, sk.Path, sk.Reason)
		}
	}
	// each file read inside a directory, with --verbose: how, as for
	// the inputs themselves. And the -o file must not be one of them,
	// reached through a symbolic or hard link inside an input directory
	// (the named inputs and their directories are refused before
	// anything is read): replacing it would lose it
	var outFI os.FileInfo
	if c.output != "" {
		if fi, err := os.Stat(c.output); err == nil && fi.Mode().IsRegular() {
			outFI = fi
		}
	}
	var outMu sync.Mutex
	if c.verbose || outFI != nil {
		cfg.Mailbox.OnFile = func(fr mailbox.FileRead) {
			if c.verbose {
				con.printf("%s: %s: read as %s: %s", prefix, fr.Path, fr.Format, fr.Reason)
			}
			if outFI != nil && fr.Info != nil && os.SameFile(outFI, fr.Info) {
				outMu.Lock()
				if t.outputRead == "" {
					t.outputRead = fr.Path
					con.printf("%s: %s is the -o file %s (a link to it in an input directory): it will not be replaced by the output", prefix, fr.Path, c.output)
				}
				outMu.Unlock()
			}
		}
	}
	// each input: how it is read with --verbose; an empty one (no bytes,
	// or none once decompressed: no messages) is named at once, being
	// an input named by the user, or with --quiet counted at the end
	inner := open
	open = func(name string) (*mailbox.Reader, error) {
		r, err := inner(name)
		switch {
		case err != nil:
		case r.Empty() && c.quiet && !c.verbose:
			skipMu.Lock()
			skipped[mailbox.SkipEmpty]++
			skipMu.Unlock()
		case r.Empty():
			con.printf("%s: %s: %s", prefix, name, r.FormatReason())
		case !c.verbose:
		case r.FormatReason() != "":
			con.printf("%s: %s: read as %s: %s", prefix, name, r.Format(), r.FormatReason())
		default:
			con.printf("%s: %s: read as %s", prefix, name, r.Format())
		}
		return r, err
	}
	// a --tmpdir where the temporary file of a long message cannot be
	// made or written: the message is held in memory, said once
	var tmpOnce sync.Once
	cfg.Mailbox.OnTempFileError = func(err error) {
		tmpOnce.Do(func() {
			con.printf("%s: a temporary file for long messages of standard input or compressed files cannot be made or written (%v): they are held in memory instead (--tmpdir)", prefix, err)
		})
	}
	defer func() {
		cfg.Mailbox.OnSkip, cfg.Mailbox.OnFile, cfg.Mailbox.OnTempFileError = nil, nil, nil
		skipMu.Lock()
		defer skipMu.Unlock()
		for k, n := range skipped {
			if t.skipped == nil {
				t.skipped = map[mailbox.SkipKind]int{}
			}
			t.skipped[k] += n
		}
		for range unread.Load() {
			t.unreadable++
			report.Unreadable(w)
		}
	}()
	var prog scan.Progress
	if con.bar != nil {
		prog = con
	}
	messages, links := 0, 0
	// an input error given on a message (the bytes of a long message that
	// could not be read again) that then ends the reading comes once
	// more from it: one failure, counted and said once
	said := map[*mailbox.InputError]bool{}
	err := scan.Run(paths, open, cfg, prog, func(r *scan.Result) error {
		if c.readerGone.Load() {
			return &writeError{syscall.EPIPE}
		}
		if ie := (*mailbox.InputError)(nil); r.Err != nil && errors.As(r.Err, &ie) && said[ie] {
			if r.Message == nil {
				return nil
			}
		} else if r.Err != nil {
			con.printf("%s: %v", prefix, r.Err)
			report.Unreadable(w)
			t.unreadable++
			if r.Message == nil {
				return nil
			}
		}
		m := r.Message
		if unreadableFile(m, r.Problems) {
			// a file of a directory that could not be read comes as an
			// empty message with the error: an input, not a message
			if ie := (*mailbox.InputError)(nil); errors.As(r.Problems[0].Err, &ie) && said[ie] {
				return nil // (said on the message before it)
			}
			t.unreadable++
			report.Unreadable(w)
			con.printf("%s: %v", prefix, r.Problems[0].Err)
			return nil
		}
		messages++
		t.messages++
		w.Message(r.Parts, len(r.Problems) > 0)
		if len(r.Problems) > 0 {
			id := ""
			if m.MessageID != "" {
				id = " <" + m.MessageID + ">"
			}
			damage := 0
			for _, p := range r.Problems {
				var le *references.LookupError
				if errors.As(p, &le) {
					// the index could not be read (resolve): a failed
					// lookup, not an input; named even with --quiet
					t.lookups++
					con.printf("%s: %s#%d%s: %s", prefix, m.Path, m.Offset, id, p.Msg)
					continue
				}
				if errors.Is(p, mailbox.ErrUnreadable) {
					// a file of a directory that could not be read: an
					// input not read, named even with --quiet
					t.unreadable++
					var ie *mailbox.InputError
					if errors.As(p, &ie) {
						said[ie] = true
						con.printf("%s: %v", prefix, ie)
					} else {
						con.printf("%s: %s: %s", prefix, m.Path, p.Msg)
					}
					continue
				}
				damage++
				con.damage(p, fmt.Sprintf("%s#%d%s: %s", m.Path, m.Offset, id, p))
			}
			if damage > 0 {
				t.damaged++
				t.problems += damage
			}
		}
		if err := r.Each(w.Write); err != nil {
			return &writeError{err}
		}
		if r.Path == "-" {
			if err := flush(); err != nil {
				return &writeError{err}
			}
		}
		links += r.Len()
		if con.bar != nil {
			con.describe(fmt.Sprintf("%d messages, %d links", messages, links))
		}
		return nil
	})
	var we *writeError
	if errors.As(err, &we) {
		t.writeErr = we.err
	} else if err != nil {
		con.printf("%s: %v", prefix, err)
		t.unreadable++
	}
}

// unreadableFile reports whether m stands for a file of a directory that
// could not be read: no bytes, and one problem, an unreadable input.
func unreadableFile(m *mailbox.Message, problems []mailbox.Problem) bool {
	return m.Length == 0 && len(problems) == 1 && errors.Is(problems[0], mailbox.ErrUnreadable) && problems[0].Err != nil
}

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
		progressbar.OptionSetWriter(barWriter(w)),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100_000_000),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionClearOnFinish(),
		// no spinner ticking in a goroutine of its own (for an unknown
		// total): every drawing of the bar goes through console's lock,
		// or it could land inside a warning line
		progressbar.OptionSetSpinnerChangeInterval(0),
	)
}

// fileOf returns the file under an output writer, or nil.
func fileOf(w io.Writer) *os.File {
	switch w := w.(type) {
	case *os.File:
		return w
	case *checkedWriter:
		return fileOf(w.w)
	case *lineWriter:
		return fileOf(w.w)
	case *output.File:
		return w.File()
	}
	return nil
}

func isTerminal(w io.Writer) bool {
	f := fileOf(w)
	return f != nil && term.IsTerminal(int(f.Fd()))
}

// isRegular reports whether w writes to a regular file, which nobody
// reads while it is written.
func isRegular(w io.Writer) bool {
	f := fileOf(w)
	if f == nil {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode().IsRegular()
}

// checkRunFlags checks the flags every command that reads archives
// shares; it returns what is wrong, or "".
func checkRunFlags(jobs, warnLimit, damageExit int, progress string) string {
	switch {
	case jobs < 0 || warnLimit < 0:
		return "--jobs and --warn-limit must not be negative"
	case damageExit < 0 || damageExit > 125:
		return "--damage-exit must be between 0 and 125"
	case damageExit >= 1 && damageExit <= 3:
		// one meaning per code, in every command
		return fmt.Sprintf("--damage-exit %d would not tell damage from %s: use 0 (the default: damage is success), 4 or 5 to 125", damageExit,
			[]string{"an input that could not be read (1)", "a usage error (2)", "dead links (3, audit)"}[damageExit-1])
	case progress != "auto" && progress != "always" && progress != "never":
		return "--progress must be auto, always or never"
	}
	return ""
}

// stdoutIsInput reports whether standard output is a file among inputs
// (output.InputIsOutput), having said so as cat does: the command would
// read what it writes (>> FILE grows FILE without end), so it must not
// run, and exits 2 before reading or writing anything.
func stdoutIsInput(e *env, inputs []string) bool {
	out := fileOf(e.stdout)
	if out == nil {
		return false
	}
	stdin, _ := e.stdin.(*os.File)
	in := output.InputIsOutput(out, stdin, inputs)
	if in == "" {
		return false
	}
	fmt.Fprintf(e.stderr, "linkscan: %s: input file is output file\n", escape(in))
	return true
}

// createOutput starts writing the -o file name of a command (package
// output: a temporary file renamed into place at Commit), refusing it
// when it is one of inputs; what says which input, for the message. On
// failure it reports and returns nil and the exit status.
func createOutput(con *console, prefix, name string, inputs []string, what string) (*output.File, int) {
	if err := output.CheckInputs(name, inputs); err != nil {
		con.printf("%s: -o %s: %s%v", prefix, name, what, err)
		return nil, exitUsage
	}
	if err := output.CheckPartial(name+".partial", inputs); err != nil {
		con.printf("%s: -o %s: %s%v", prefix, name, what, err)
		return nil, exitUsage
	}
	f, err := output.Create(name)
	if err != nil {
		con.printf("%s: %v", prefix, err)
		return nil, exitFail
	}
	return f, exitOK
}

// leftAsItWas says what became of the -o target of a run that did not
// replace it: it may never have existed.
func leftAsItWas(of *output.File) string {
	if of.Existed() {
		return "is left as it was"
	}
	return "was not created"
}

// finishOutput ends the -o file of a command once everything is written:
// it replaces the target when every input could be read; when some could
// not, what was read is kept in NAME.partial and the target left as it
// was (or, nothing at all read, nothing is kept); a target written in
// place (a device) is just closed. It reports false when the output could
// not be written, having said why.
func finishOutput(con *console, prefix string, of *output.File, name string, t *tally) bool {
	switch {
	case t.unreadable == 0 && t.outputRead == "" || of.TempName() == of.Name():
		if err := of.Commit(); errors.Is(err, output.ErrInterrupted) {
			waitToDie(con, prefix, name)
			return false
		} else if err != nil {
			con.printf("%s: writing %s: %v", prefix, name, err)
			return false
		}
	case t.messages == 0:
		of.Abort()
		con.printf("%s: nothing could be read: %s %s", prefix, name, leftAsItWas(of))
	default:
		partial, err := of.KeepNew(name + ".partial")
		if errors.Is(err, output.ErrInterrupted) {
			waitToDie(con, prefix, name)
			return false
		} else if err != nil {
			con.printf("%s: %v", prefix, err)
			return false
		}
		if t.outputRead != "" {
			con.printf("%s: %s was read as an input (%s): it is left as it was, the output is in %s", prefix, name, t.outputRead, partial)
		} else {
			con.printf("%s: some input could not be read: %s %s, the output is in %s", prefix, name, leftAsItWas(of), partial)
		}
	}
	return true
}
