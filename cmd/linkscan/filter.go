package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/linkscan/linkscan/extract"
	"github.com/linkscan/linkscan/internal/output"
	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/rewrite"
)

var cmdFilter = &command{
	Name:      "filter",
	UsageLine: "linkscan filter --rules FILE [flags]",
	Short:     "rewrite the links of one message at delivery time (procmail, maildrop, Sieve)",
	Long: `
Filter reads one message on standard input and writes it on standard
output with its links rewritten by the rules of a rules file
(docs/rewrite.md), for use in the delivery path: a procmail ":0 fw"
recipe, maildrop's xfilter, Sieve's filter (Dovecot Pigeonhole
extprograms), or a pipe transport. Recipes: docs/filter.md.

It never loses mail. Standard input is always read to its end. Whatever
goes wrong inside the filter (an internal error, a panic, a message
that cannot be read as mail, a rules file that cannot be read, a bad
flag, a message over --max-size or with more links than --max-links,
more time than --timeout), the message is written out byte for byte as
it came in, a line on standard error says why, and the exit status is 0.
With --tempfail, nothing is written in those cases and the exit status
is 75 (EX_TEMPFAIL): the mail system keeps the message and tries again
later. But a message over --max-size or --max-links, or one that
cannot be read as mail, is passed on unchanged with --tempfail too:
every later try would fail the same way, and the mail system would
bounce it after its queue lifetime. A failure that repeats on every try
with --tempfail (a rules file left broken, a panic on one message)
defers the message until the mail system gives up and bounces it.
A panic once the output began writes nothing more (more bytes would
only follow a cut message): exit 75, with or without --tempfail, so
that the mail system throws the output away and keeps the message; a
panic once the output is whole keeps its exit.

The output is written once, when the message is done (a message over
--max-size is copied through as it is read); a leading "From "
line (procmail hands one over) and CRLF line endings are kept, and every
byte outside a rewritten link stays as it was. Signed and encrypted
messages, and bodies covered by a DKIM signature, are left alone (their
links reported as skipped) unless --break-dkim is given.

Flags:

  --rules FILE       the rules file (TOML; required)
  --max-size SIZE    the largest message rewritten (default 10MiB);
                     a longer one is passed on unchanged: what was read
                     of it, then the rest of standard input copied as
                     it comes (no temporary file)
  --max-links N      the most links a message may hold to be rewritten
                     (default 10000; links found in its text parts and
                     HTML attributes, counted before the rewrite, a
                     link longer than 100 bytes once per 100 bytes
                     begun); a message with more is passed on unchanged. With --max-size this
                     bounds the filter's memory (docs/filter.md)
  --timeout D        the longest time for reading and rewriting
                     (default 20s; 500ms, 1m, 1d); past it
                     the message is passed on unchanged
  --tempfail         on a failure, write nothing and exit 75 instead of
                     passing the message on unchanged (not for a message
                     over --max-size or --max-links, or not mail: those
                     are passed on unchanged)
  --annotate         leave bodies alone and add one header field,
                     X-Linkscan-Rewritten, listing OLD -> NEW
  --break-dkim       rewrite bodies covered by a DKIM signature (which
                     then no longer verifies)
  --headers          rewrite links in header fields too (List-*,
                     Archived-At, Link, Content-Base ...)
  --attachments      rewrite text parts sent as attachments too
` + archiveHelp + `  --no-heuristic     do not join bare URLs broken by a mailer's wrap
  --rules-cache DIR  keep the rules compiled in DIR, so that each
                     message does not parse the rules file again
                     (default $XDG_CACHE_HOME/linkscan, else
                     ~/.cache/linkscan; "off": parse every time). A
                     cache file is used only when made from the same
                     rules file content by the same linkscan; any
                     failure of the cache falls back to parsing
  --report FILE      append one JSON line per link the rules change
                     (written, annotated or skipped, with the reason),
                     in the field names of rewrite --report; the file is
                     locked (flock) while the lines are appended, so
                     that many filters may share it
  --report-wait D    the longest wait for the --report file's lock
                     (default 2s; not part of --timeout); past it the
                     lines are printed on standard error instead and the
                     message is delivered all the same; a FIFO no
                     process reads, or whose reader does not read, is
                     waited for as long
  --log              one line per message on standard error, syslog
                     style: time, host, linkscan-filter[PID], the
                     Message-ID, the size, the links changed and
                     skipped, the result, the time taken and whether
                     the rules came from the cache (rules=cache) or
                     were parsed (rules=parsed)

{{sizes}}

Test hook: the environment variable LINKSCAN_FILTER_FAULT injects
faults, for the delivery tests only (docs/filter.md): a comma-separated
list of KIND=PROBABILITY, KIND one of crash (the process kills itself
with SIGKILL before reading, halfway through reading, or halfway
through writing), sleep (the rewrite sleeps past --timeout), panic (the
rewrite panics), error (the rewrite fails), panic-write (a panic
halfway through writing the output) and panic-late (a panic once the
output is written).

Exit status:
  0   the message was written: rewritten, or unchanged (nothing to
      change, or a failure passed over: see standard error)
  75  with --tempfail, a failure: nothing was written; and in every
      mode, standard output could not be written, or standard input
      failed in the middle (the mail system should try again)
  2   a flag error while standard input is a terminal (nobody is
      delivering: nothing is read)
`,
}

func init() { cmdFilter.Run = runFilter }

// exitTempFail is EX_TEMPFAIL of sysexits.h: procmail, maildrop, Postfix
// and Exim defer the message and try again later.
const exitTempFail = 75

// Defaults of filter's limits (documented in the help and docs/filter.md).
const (
	filterMaxSize = 10 << 20
	// filterMaxLinks bounds the links of a message the rewrite is given:
	// the rewrite keeps some 3 KB of state per short link and about 20
	// bytes per byte of a long one (docs/filter.md, "Memory"), so a link
	// counts once per linkUnit bytes of its URL begun.
	filterMaxLinks = 10000
	linkUnit       = 100
	filterTimeout  = 20 * time.Second
	// filterReportWait bounds the wait for the --report file's lock.
	filterReportWait = 2 * time.Second
)

// filter is one run of the filter command: one message.
type filter struct {
	e          *env
	start      time.Time
	tempfail   bool
	log        bool
	report     string
	rulesArg   string
	cacheArg   string // --rules-cache: a directory, "" for the default, "off"
	maxSize    sizeFlag
	maxLinks   int
	reportWait time.Duration
	timeout    time.Duration
	opts       rewrite.Options
	fault      faults
	archive    archiveFlags     // the audit history of archive rules
	rules      chan loadedRules // from loadRules

	in   []byte // the message as read (up to maxSize+1 bytes)
	over bool   // in holds maxSize+1 bytes: the message is over --max-size
	size int64  // bytes of input read
	eof  bool   // standard input was read to its end

	msgInfo        // set from the rewrite's result, once it is in
	result  string // rewritten, unchanged, passed (a failure), tempfail

	outN    int64 // bytes written to standard output
	outDone bool  // the output is written (or failed, said): outCode
	outCode int
}

// msgInfo is what the rewrite learnt of the message, for --log.
type msgInfo struct {
	msgID          string
	links, skipped int
	report         []byte // the --report lines of the message
	reportErr      error  // the --report lines could not be made
	rulesFrom      string // cache or parsed ("" when the rules were not read)
	cacheErr       error  // why the rules cache was not used or written
}

// filterError is a failure the filter passes over (the message goes out
// unchanged, or 75 with --tempfail). A permanent one is a property of
// the message (over --max-size or --max-links, not a message) that every
// later try would meet again: it goes out unchanged with --tempfail too.
type filterError struct {
	msg, stack string
	permanent  bool
}

func (f *filterError) Error() string { return f.msg }

func failf(format string, a ...any) error { return &filterError{msg: fmt.Sprintf(format, a...)} }

// permf is a permanent failure (filterError.permanent).
func permf(format string, a ...any) error {
	return &filterError{msg: fmt.Sprintf(format, a...), permanent: true}
}

func runFilter(e *env, args []string) (code int) {
	f := &filter{e: e, start: time.Now(), maxSize: filterMaxSize, maxLinks: filterMaxLinks, timeout: filterTimeout, reportWait: filterReportWait}
	f.fault = parseFaults(os.Getenv(filterFaultEnv))
	if e.setMemoryLimit != nil && os.Getenv("GOGC") == "" {
		// main collects less often (GOGC 400) for scan's many
		// messages; the filter holds one message and runs beside
		// other deliveries: the default 100 keeps its peak near
		// twice what it holds (a dense 10 MB message: 125 MB peak
		// RSS at 400, 106 MB at 100; docs/filter.md, "Memory").
		debug.SetGCPercent(100)
	}
	// A panic anywhere in this goroutine ends in the fallback (the rest
	// of standard input is read and the message goes out as it came),
	// or, once output began, in nothing more written (recovered).
	defer func() {
		if r := recover(); r != nil {
			code = f.recovered(r, debug.Stack())
		}
	}()
	for _, a := range args { // known before the flags are parsed, for their errors
		if a == "--tempfail" || a == "-tempfail" || a == "--tempfail=true" || a == "-tempfail=true" {
			f.tempfail = true
		}
	}
	fs := newFlagSet(cmdFilter, e)
	fs.StringVar(&f.rulesArg, "rules", "", "rules file")
	fs.StringVar(&f.cacheArg, "rules-cache", "", "directory of the compiled rules cache, or off")
	fs.Var(&f.maxSize, "max-size", "largest message rewritten")
	fs.IntVar(&f.maxLinks, "max-links", filterMaxLinks, "most links a message may hold to be rewritten")
	f.timeout = filterTimeout
	fs.Var((*durationFlag)(&f.timeout), "timeout", "longest time for reading and rewriting")
	fs.BoolVar(&f.tempfail, "tempfail", f.tempfail, "exit 75 on failure")
	fs.BoolVar(&f.opts.Annotate, "annotate", false, "add a header listing the changes instead")
	fs.BoolVar(&f.opts.BreakDKIM, "break-dkim", false, "rewrite DKIM-signed bodies")
	fs.BoolVar(&f.opts.Headers, "headers", false, "rewrite header links too")
	fs.BoolVar(&f.opts.Attachments, "attachments", false, "rewrite text attachments too")
	noHeur := fs.Bool("no-heuristic", false, "no mailer-wrap joins")
	fs.StringVar(&f.report, "report", "", "append JSON lines of the changes")
	f.reportWait = filterReportWait
	fs.Var((*durationFlag)(&f.reportWait), "report-wait", "longest wait for the --report file's lock")
	fs.BoolVar(&f.log, "log", false, "one line per message on standard error")
	f.archive.register(fs.FlagSet)
	rest, code, ok := parseFlags(fs, args)
	if !ok && code == exitOK {
		return code // --help
	}
	f.opts.Extract.NoHeuristic = *noHeur
	var usage error
	switch {
	case !ok:
		usage = failf("bad flags (see above)")
	case len(rest) > 0:
		usage = failf("no PATH is taken: the message is read on standard input (got %q)", rest[0])
		if why := gitArchive(rest[0]); why != "" {
			usage = failf("no PATH is taken: the message is read on standard input (got %q); and %s", rest[0], why)
		}
	case f.rulesArg == "":
		usage = failf("--rules FILE is required")
	case f.maxSize <= 0:
		usage = failf("--max-size must be positive")
	case f.maxLinks <= 0:
		usage = failf("--max-links must be positive")
	case f.timeout <= 0:
		usage = failf("--timeout must be positive")
	case f.reportWait < 0:
		usage = failf("--report-wait must not be negative")
	case f.report != "" && sameOrWithin(f.report, f.rulesArg):
		usage = failf("--report %s may not be the rules file", f.report)
	case f.report != "" && f.cacheArg != "off" && sameOrWithin(f.report, filterCacheDir(f.cacheArg)):
		usage = failf("--report %s may not lie in the rules cache directory", f.report)
	}
	if stdoutIsInput(e, []string{"-", f.rulesArg}) {
		// not the fallback either: it would copy the message onto itself
		return exitUsage
	}
	if usage != nil {
		if sf, isFile := e.stdin.(*os.File); isFile && term.IsTerminal(int(sf.Fd())) {
			fmt.Fprintf(e.stderr, "linkscan filter: %s\n", escape(usage.Error()))
			return exitUsage
		}
		return f.fail(usage)
	}
	if f.fault.crashAt("start") {
		f.fault.kill()
	}
	f.loadRules()
	if err := f.read(); err != nil {
		return f.fail(err)
	}
	if f.over {
		return f.fail(permf("message over --max-size %d", int64(f.maxSize)))
	}
	out, err := f.rewrite()
	if err != nil {
		return f.fail(err)
	}
	return f.finish(out)
}

// read reads standard input into memory: to its end, or up to
// maxSize+1 bytes (f.over), the rest left to be passed on (writeInput)
// or drained.
func (f *filter) read() error {
	limit := int64(f.maxSize) + 1
	if f.in == nil {
		f.in = make([]byte, 0, min(limit, 64<<10))
	}
	crash := f.fault.crashAt("read") // once some bytes are read
	for int64(len(f.in)) < limit {
		if len(f.in) == cap(f.in) { // grown by doubling, never past limit
			nb := make([]byte, len(f.in), min(2*int64(cap(f.in))+1, limit))
			copy(nb, f.in)
			f.in = nb
		}
		buf := f.in[len(f.in):min(int64(cap(f.in)), limit)]
		n, err := f.e.stdin.Read(buf)
		f.in = f.in[:len(f.in)+n]
		f.size += int64(n)
		if crash && f.size > 0 {
			f.fault.kill()
		}
		if err == io.EOF {
			f.eof = true
			return nil
		}
		if err != nil {
			return f.readErr(err)
		}
	}
	f.over = true
	return nil
}

// readerOnly hides a reader's WriterTo: io.Copy then writes through
// the writer's Write (crashWriter).
type readerOnly struct{ r io.Reader }

func (r readerOnly) Read(p []byte) (int, error) { return r.r.Read(p) }

// readErr is a failure to read standard input: the message is not whole,
// so it cannot be passed on; the mail system has to try again.
func (f *filter) readErr(err error) error {
	f.tempfail = true
	return failf("reading standard input: %v", err)
}

// drain reads what is left of standard input and throws it away
// (nothing is written: exit 75).
func (f *filter) drain() {
	n, err := io.Copy(io.Discard, readerOnly{f.e.stdin})
	f.size += n
	f.eof = true
	if err != nil {
		f.warn("reading standard input: %v", err)
	}
}

// loadRules reads the rules file in a goroutine of its own, while the
// message is read; rewriteNow waits for it.
func (f *filter) loadRules() {
	f.rules = make(chan loadedRules, 1)
	go func() {
		var l loadedRules
		defer func() {
			if p := recover(); p != nil {
				l = loadedRules{err: &filterError{msg: fmt.Sprintf("internal error reading the rules: %v", p), stack: firstLines(debug.Stack(), 16)}}
			}
			f.rules <- l
		}()
		l.rules, l.from, l.cacheErr, l.err = loadRulesCached(f.rulesArg, f.cacheArg)
		if l.err != nil {
			l.err = failf("%v", strings.ReplaceAll(l.err.Error(), "\n", "; "))
		}
	}()
}

type loadedRules struct {
	rules    *rewrite.Rules
	from     string // cache or parsed
	cacheErr error  // why the cache was not used or written (the rules were parsed)
	err      error
}

// loadRulesCached loads the rules file through the rules cache in dir
// (rewrite.LoadCached): dir "" is rewrite.DefaultCacheDir, "off" no
// cache. A failure of the cache is cacheErr, never err: the rules are
// parsed then.
func loadRulesCached(path, dir string) (rs *rewrite.Rules, from string, cacheErr, err error) {
	if dir == "off" {
		rs, err = rewrite.Load(path)
		return rs, "parsed", nil, err
	}
	if dir == "" {
		if dir, cacheErr = rewrite.DefaultCacheDir(); cacheErr != nil {
			rs, err = rewrite.Load(path)
			return rs, "parsed", fmt.Errorf("no cache directory: %w", cacheErr), err
		}
	}
	rs, info, err := rewrite.LoadCached(path, dir)
	switch {
	case info.Hit:
		from = "cache"
	case info.WriteErr != nil:
		from, cacheErr = "parsed", info.WriteErr
	case info.ReadErr != nil:
		from, cacheErr = "parsed", fmt.Errorf("reading %s: %w", info.File, info.ReadErr)
	default:
		from = "parsed"
	}
	return rs, from, cacheErr, err
}

// rewrite reads the rules and the message and rewrites it, in a goroutine
// bounded by --timeout; out is the whole output, or nil when nothing
// changed.
func (f *filter) rewrite() ([]byte, error) {
	type result struct {
		out  []byte
		info msgInfo
		err  error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			if p := recover(); p != nil {
				r = result{info: r.info, err: &filterError{msg: fmt.Sprintf("internal error: %v", p), stack: firstLines(debug.Stack(), 16)}}
			}
			done <- r
		}()
		r.out, r.err = f.rewriteNow(&r.info)
	}()
	left := f.timeout - time.Since(f.start)
	if left <= 0 {
		return nil, failf("over --timeout %v before the rewrite began", f.timeout)
	}
	t := time.NewTimer(left)
	defer t.Stop()
	select {
	case r := <-done:
		f.msgInfo = r.info
		if r.info.reportErr != nil {
			f.warn("--report %s: %v", f.report, r.info.reportErr)
		}
		// the report lines are appended by finish, once the message is
		// written: a message deferred (exit 75) and delivered again must
		// not leave its lines twice
		return r.out, r.err
	case <-t.C:
		return nil, failf("over --timeout %v", f.timeout)
	}
}

// rewriteNow works in the rewrite's goroutine: it touches nothing of f
// but what it only reads (f.in, the flags), and fills info.
func (f *filter) rewriteNow(info *msgInfo) ([]byte, error) {
	if err := f.fault.inRewrite(f.timeout); err != nil {
		return nil, err
	}
	l := <-f.rules
	info.cacheErr = l.cacheErr
	if l.err != nil {
		return nil, l.err
	}
	rules := l.rules
	info.rulesFrom = l.from
	if len(f.in) == 0 {
		return nil, nil
	}
	rd, err := mailbox.NewReader(bytes.NewReader(f.in), "-", &mailbox.Options{Format: mailbox.FormatMessage, MaxMessageSize: int64(len(f.in)) + 1})
	if err != nil {
		return nil, permf("not a message: %v", err)
	}
	defer rd.Close()
	m, err := rd.Next()
	if err != nil {
		return nil, permf("not a message: %v", err)
	}
	defer m.Release()
	info.msgID = m.MessageID
	if len(m.Header) == 0 {
		return nil, permf("not a message: no header fields")
	}
	if m.RawOffset < 0 || m.RawOffset > int64(len(f.in)) || len(m.Holes) > 0 {
		return nil, failf("internal error: the message was not read whole")
	}
	// the links are counted only when there could be too many: the
	// rewrite finds them again (see linksBound)
	if linksBound(m, &f.opts.Extract) > f.maxLinks && countLinks(m, &f.opts, f.maxLinks) > f.maxLinks {
		return nil, permf("message with more than %d links (--max-links)", f.maxLinks)
	}
	// The history of archive rules (none touched when the rules hold no
	// archive rule); a history missing or unreadable, or a lookup that
	// fails (*rewrite.ArchiveError), is a failure: the message goes on
	// unchanged, or 75 with --tempfail.
	hist, err := f.archive.open(rules)
	if err != nil {
		return nil, failf("%v", err)
	}
	opts := f.opts
	if hist != nil {
		defer hist.Close()
		opts.Archive = hist
	}
	out, changes, err := rules.Message(m, &opts)
	if err != nil {
		return nil, failf("%v", err)
	}
	written := false
	for i := range changes {
		if changes[i].Skipped != "" {
			info.skipped++
			continue
		}
		info.links++
		written = true
	}
	if f.report != "" && len(changes) > 0 {
		info.report, info.reportErr = messageReport(m, changes)
	}
	if !written || bytes.Equal(out, f.in[m.RawOffset:]) {
		return nil, nil
	}
	if len(out) == 0 {
		return nil, failf("internal error: the rewritten message is empty")
	}
	whole := make([]byte, 0, int(m.RawOffset)+len(out))
	whole = append(whole, f.in[:m.RawOffset]...) // BOM, "From " line
	return append(whole, out...), nil
}

// countLinks counts the links of m's text parts as package extract
// finds them, and those of HTML attributes (Part.AttrLinks), a link once per linkUnit bytes of its URL begun, up to
// max+1: the rewrite's memory grows with the links and their length, so
// a message over --max-links is not given to it. Links of header fields
// (--headers) are not counted: a header is small.
func countLinks(m *mailbox.Message, opts *rewrite.Options, limit int) int {
	if countLinksHook != nil {
		countLinksHook()
	}
	var sc extract.Scanner
	n := 0
	for _, p := range m.Parts() {
		if p.Text == nil || p.RawEnd <= p.RawStart {
			continue
		}
		for i := 0; i < len(p.AttrLinks) && n <= limit; i++ { // href, src ... of HTML
			n += max(1, (len(p.AttrLinks[i].URL)+linkUnit-1)/linkUnit)
		}
		sc.ResetBytes(p.Text, &opts.Extract)
		for n <= limit && sc.Scan() {
			n += max(1, (len(sc.Link().URL)+linkUnit-1)/linkUnit)
		}
		if n > limit {
			break
		}
	}
	sc.ResetBytes(nil, nil)
	return n
}

// countLinksHook, when set (by tests), is called each time countLinks
// looks for a message's links: the search the rewrite makes again.
var countLinksHook func()

// linksBound is a bound of countLinks(m, opts, ...) found without
// looking for links, from two facts of package extract: each link is
// found at a trigger of its own in the part's text (a ':', the "www." or
// "ftp." of an abbreviated link, with opts.Emails an '@', with
// opts.BareDomains a '.'; scanning goes on after the link found), and a
// link's URL is made of bytes of the text (its segments, between Start
// and End) that no other link's holds. A link of n bytes counts
// ceil(n/linkUnit) <= 1 + n/linkUnit, so a part's links count at most its
// triggers plus its length over linkUnit (and at most its length: each
// counts at most n); its HTML attribute links are added as countLinks
// counts them. A message within the bound needs no count: its links are
// found once, by the rewrite, instead of twice; at the default
// --max-links that is every message with fewer than about 10,000 such
// triggers over its text's hundreds of bytes (under 1 MB of text without
// any ':'). TestLinksBound and FuzzLinksBound check that countLinks never
// exceeds it.
func linksBound(m *mailbox.Message, opts *extract.Options) int {
	n := 0
	for _, p := range m.Parts() {
		if p.Text == nil || p.RawEnd <= p.RawStart {
			continue
		}
		n += min(len(p.Text), linkTriggers(p.Text, opts)+len(p.Text)/linkUnit)
		for i := range p.AttrLinks {
			n += max(1, (len(p.AttrLinks[i].URL)+linkUnit-1)/linkUnit)
		}
	}
	return n
}

// linkTriggers counts the places in text where package extract, with
// opts, may find a link: ':', "www." and "ftp." (lower case, as extract
// looks for them; counted at their dot), '@' with opts.Emails and '.'
// with opts.BareDomains.
func linkTriggers(text []byte, opts *extract.Options) int {
	n := bytes.Count(text, []byte{':'})
	if opts.Emails {
		n += bytes.Count(text, []byte{'@'})
	}
	dots := 0
	for from := 0; ; {
		i := bytes.IndexByte(text[from:], '.')
		if i < 0 {
			break
		}
		i += from
		dots++
		if i >= 3 {
			if w := text[i-3 : i]; string(w) == "www" || string(w) == "ftp" {
				n++
			}
		}
		from = i + 1
	}
	if opts.BareDomains {
		n += dots
	}
	return n
}

// messageReport makes the --report lines of the message's changes.
func messageReport(m *mailbox.Message, changes []rewrite.LinkChange) ([]byte, error) {
	var b bytes.Buffer
	bw := bufio.NewWriter(&b)
	r := &rewriter{repW: bw}
	for i := range changes {
		if err := r.reportLine(m, &changes[i], "written", nil); err != nil {
			return nil, err
		}
	}
	bw.Flush()
	return b.Bytes(), nil
}

// appendReport appends the report lines b to --report, waiting at most
// --report-wait for the lock (outside --timeout: the message is
// rewritten already); lines that cannot be written are printed on
// standard error, and the delivery goes on.
func (f *filter) appendReport(b []byte) {
	err := appendLocked(f.report, b, f.reportWait)
	if err == nil {
		return
	}
	f.warn("--report %s: %v; its lines follow", f.report, err)
	for _, l := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		f.warn("--report lost: %s", l)
	}
}

// errReportLocked: another process held the report file's lock longer
// than --report-wait.
var errReportLocked = errors.New("locked by another process for all of --report-wait")

// appendLocked appends b to the file name (created 0644 when missing)
// with one write, holding an exclusive flock(2) on it: lines of
// filters running at once never interleave. Everything is bounded by
// wait: the lock (errReportLocked), the open of a FIFO no process reads
// (output.ErrNoReader: the open never blocks), and the write to a FIFO
// whose reader does not read (a timeout).
func appendLocked(name string, b []byte, wait time.Duration) error {
	end := time.Now().Add(wait)
	fd, err := output.OpenNoWait(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644, end)
	if err != nil {
		return err
	}
	defer fd.Close()
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		busy, err := lockNB(fd)
		if err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		if !busy {
			break
		}
		if !time.Now().Before(end) {
			return errReportLocked
		}
		time.Sleep(min(pause, time.Until(end)+time.Millisecond))
	}
	defer unlock(fd)
	fd.SetWriteDeadline(end) // a regular file has none: its writes do not wait
	if _, err := fd.Write(b); err != nil {
		return err
	}
	return fd.Close()
}

func (f *filter) warn(format string, a ...any) {
	fmt.Fprintf(f.e.stderr, "linkscan filter: %s\n", escape(fmt.Sprintf(format, a...)))
}

// fail passes over a failure: the rest of standard input is read, and the
// message written as it came (exit 0), or nothing (exit 75) with
// --tempfail unless the failure is permanent.
func (f *filter) fail(err error) int {
	var fe *filterError
	if errors.As(err, &fe) && fe.permanent {
		f.tempfail = false // a later try would fail the same way
	}
	f.warn("%v; %s", err, map[bool]string{false: "message passed on unchanged", true: "exit 75 (try again later)"}[f.tempfail])
	if fe != nil && fe.stack != "" {
		for _, l := range strings.Split(fe.stack, "\n") {
			fmt.Fprintf(f.e.stderr, "\t%s\n", escape(l))
		}
	}
	if !f.eof && !f.over {
		f.readRest()
	}
	if f.tempfail {
		if !f.eof {
			f.drain()
		}
		f.result = "tempfail"
		f.logLine(err)
		return exitTempFail
	}
	f.result = "passed"
	code := f.writeInput()
	f.logLine(err)
	return code
}

// readRest reads what is left of standard input after a failure that
// stopped the reading (a panic, a bad flag): into f.in while it fits
// (past it, writeInput copies the rest as it comes).
func (f *filter) readRest() {
	if f.maxSize <= 0 {
		f.maxSize = filterMaxSize
	}
	if err := f.read(); err != nil {
		f.warn("%v", err)
	}
}

// writeInput writes the input as it came: from memory, then, for a
// message over --max-size, the rest of standard input copied as it
// comes (nothing of it is changed, so nothing needs to be held: no
// temporary file). Standard input failing in the middle of that copy
// is exit 75, reported: the output is then short.
func (f *filter) writeInput() int {
	if f.eof {
		return f.writeOut(bytes.NewReader(f.in), int64(len(f.in)))
	}
	rest := &inputReader{r: f.e.stdin}
	code := f.writeOut(io.MultiReader(bytes.NewReader(f.in), rest), -1)
	f.size += rest.n
	f.eof = true
	return code
}

// inputReader reads the rest of standard input in writeInput: it counts
// the bytes and marks its errors (but io.EOF) as readError, to tell
// them from errors of writing.
type inputReader struct {
	r io.Reader
	n int64
}

func (r *inputReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.n += int64(n)
	if err != nil && err != io.EOF {
		err = readError{err}
	}
	return n, err
}

// readError is an error of standard input met while writing.
type readError struct{ err error }

func (e readError) Error() string { return e.err.Error() }

// finish writes the result: the rewritten message, or the input when
// nothing changed.
func (f *filter) finish(out []byte) int {
	var code int
	if out == nil {
		f.result = "unchanged"
		code = f.writeInput()
	} else {
		f.result = "rewritten"
		code = f.writeOut(bytes.NewReader(out), int64(len(out)))
	}
	if f.fault.kind == "panic-late" {
		panic("injected by " + filterFaultEnv + " after the output")
	}
	if code == exitOK && len(f.msgInfo.report) > 0 {
		f.appendReport(f.msgInfo.report)
	}
	f.logLine(nil)
	return code
}

// writeOut writes the n bytes of r on standard output (n < 0: all of
// r, which is f.in and then the rest of standard input); a failure (or
// a short write), of the output or of the input, is exit 75, reported.
// It counts the bytes written (f.outN) and marks the output done with
// its exit (f.outDone, f.outCode): once output began, a panic must not
// write more (recovered).
func (f *filter) writeOut(r io.Reader, n int64) int {
	code := f.copyOut(r, n)
	f.outDone, f.outCode = true, code
	if f.fault.kind == "panic-late" {
		panic("injected by " + filterFaultEnv + " after the output")
	}
	return code
}

func (f *filter) copyOut(r io.Reader, n int64) int {
	w := io.Writer(&countWriter{w: f.e.stdout, n: &f.outN})
	panicNow := f.fault.kind == "panic-write" && !f.fault.fired // once, as a real one
	if f.fault.crashAt("write") || panicNow {
		half := n / 2
		if n < 0 { // a message copied through: half of what was read
			half = int64(len(f.in)) / 2
		}
		if panicNow {
			f.fault.fired = true
			w = &panicWriter{w: w, left: half}
		} else {
			w = &crashWriter{w: w, left: half, fault: &f.fault}
		}
	}
	c, err := io.Copy(w, readerOnly{r})
	if re := (readError{}); errors.As(err, &re) {
		f.e.out.reported = true
		f.warn("reading standard input: %v; %d bytes written: exit 75 (try again later)", re.err, c)
		f.result = "read-failed"
		return exitTempFail
	}
	if err == nil && n >= 0 && c != n {
		err = fmt.Errorf("%d bytes written of %d", c, n)
	}
	if err != nil {
		f.e.out.reported = true
		f.warn("writing standard output: %v", err)
		f.result = "write-failed"
		return exitTempFail
	}
	return exitOK
}

// countWriter counts the bytes written through it into *n.
type countWriter struct {
	w io.Writer
	n *int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	k, err := c.w.Write(p)
	*c.n += int64(k)
	return k, err
}

// recovered ends a run in which the filter's goroutine panicked. Before
// any output, the panic is a failure passed over as any other (fail:
// the message as it came, or 75 with --tempfail). Once output began,
// nothing more is written: what follows the bytes written would not
// make the message whole, only longer (the message twice, the first
// cut). So a panic with the output done keeps its exit (the message is
// written whole, once, or its failure said), and one in the middle of
// it is exit 75, with or without --tempfail: every mail system throws
// away the output of a filter that fails and keeps the message
// (docs/filter.md). A panic while passing the first over ends the same
// way, by what was written.
func (f *filter) recovered(p any, stack []byte) (code int) {
	err := &filterError{msg: fmt.Sprintf("internal error: %v", p), stack: firstLines(stack, 16)}
	if f.outN == 0 && !f.outDone {
		defer func() {
			if p := recover(); p != nil {
				code = f.failAfterOutput(&filterError{msg: fmt.Sprintf("internal error while passing over another: %v", p), stack: firstLines(debug.Stack(), 16)})
			}
		}()
		return f.fail(err)
	}
	return f.failAfterOutput(err)
}

// failAfterOutput is recovered's end once output began (or a second
// panic): nothing more is written; the output done keeps its exit,
// else 75. Standard input is read to its end.
func (f *filter) failAfterOutput(err *filterError) int {
	code := exitTempFail
	if f.outDone {
		code = f.outCode
		f.warn("%v, after the output was done (%d bytes); exit %d", err, f.outN, code)
	} else {
		f.warn("%v, after %d bytes of output: nothing more is written; exit 75 (try again later)", err, f.outN)
		f.result = "tempfail"
	}
	for _, l := range strings.Split(err.stack, "\n") {
		fmt.Fprintf(f.e.stderr, "\t%s\n", escape(l))
	}
	if !f.eof {
		f.drain()
	}
	func() {
		defer func() { recover() }() // the log line is what failed, perhaps
		f.logLine(err)
	}()
	return code
}

// logLine writes --log's line: syslog style, one per message.
func (f *filter) logLine(err error) {
	if !f.log {
		return
	}
	host, _ := os.Hostname()
	if i := strings.IndexByte(host, '.'); i > 0 {
		host = host[:i]
	}
	id := f.msgID
	if id == "" {
		id = "-"
	} else {
		id = "<" + id + ">"
	}
	s := fmt.Sprintf("%s %s linkscan-filter[%d]: message-id=%s size=%d links=%d skipped=%d result=%s time=%s",
		time.Now().UTC().Format(time.RFC3339), host, os.Getpid(), id, f.size, f.links, f.skipped, f.result,
		strconv.FormatFloat(float64(time.Since(f.start).Microseconds())/1000, 'f', 1, 64)+"ms")
	if f.rulesFrom != "" {
		s += " rules=" + f.rulesFrom
	}
	if f.cacheErr != nil {
		s += " rules-cache=" + strconv.Quote(f.cacheErr.Error())
	}
	if err != nil {
		msg := err.Error()
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		s += " reason=" + strconv.Quote(msg)
	}
	fmt.Fprintln(f.e.stderr, escape(s))
}

// firstLines returns the first n lines of b (a stack trace, for a panic's
// report).
func firstLines(b []byte, n int) string {
	ls := strings.SplitN(string(b), "\n", n+1)
	if len(ls) > n {
		ls = ls[:n]
	}
	return strings.Join(ls, "\n")
}
