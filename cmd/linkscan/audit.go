package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/linkscan/linkscan/audit"
	"github.com/linkscan/linkscan/audit/auditspool"
	"github.com/linkscan/linkscan/extract"
	"github.com/linkscan/linkscan/internal/inputs"
	"github.com/linkscan/linkscan/internal/output"
	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/record"
	"github.com/linkscan/linkscan/references"
	"github.com/linkscan/linkscan/scan"
	"github.com/linkscan/linkscan/scan/refs"
)

// exitDead is audit's exit status when dead links were found (and every
// input was read and the report written).
const exitDead = 3

var cmdAudit = &command{
	Name:      "audit",
	UsageLine: "linkscan audit [flags] PATH... | linkscan audit [flags] --from-jsonl FILE",
	Short:     "check whether the links of archives still work, with history and archived copies",
	Long: `
Audit reads archives as scan does (with no PATH, standard input when it
is not a terminal; or, with --from-jsonl, the JSON-lines
records of 'linkscan scan'), makes the links distinct by canonical form
(keeping the first place each was found, its message's Date and the
number of occurrences), checks each once and reports what it found.

http and https are checked with HEAD (GET when HEAD is refused),
redirects followed and recorded; ftp by an anonymous login; gopher by its
selector; mailto: by its syntax (with --mx, the domain's MX); mid:, cid:,
news: and nntp: offline, against an index of the archives built when such
links are found (or --index FILE). Other schemes are unchecked, never
dead. Every check is kept in a history (--db): a link is dead only after
failing on --dead-checks checks spread over --dead-days days (a
tls-certificate failure never counts: such a link stays failing), or at
once when its failure is permanent (a syntax error, such as a mailto:
address that does not parse, or an HTTP 410 Gone); until then it is
failing. --fail-on failing makes a failing link exit 3 as a dead one
does: a one-shot check, as in CI, fails on a first 404. For failing and
dead http(s) links, the archived copy closest to the message's Date is
looked up (Wayback CDX; a Memento TimeGate with --timegate). See
docs/audit.md.

Statuses: ok, redirected, failing, dead, blocked (taken for a bot wall:
every 401 and 403, 429, 999; never dead, even where a 403 means the page
is gone: see --403-fails), unchecked (scheme, policy, disallowed by
robots.txt, offline without history, a link cut at the length limit),
offline-ok (found in the archive).

{{fields}}

Flags:

  --format FORMAT    jsonl, csv, markdown, html or summary (default:
                     summary on a terminal, jsonl otherwise). jsonl, csv
                     and markdown list the links in the order their
                     checks end; html is one self-contained page with
                     charts
  --in-order         jsonl, csv, markdown: the links in input order (of
                     their first occurrence), all written at the end (the
                     results wait in a temporary file in --tmpdir)
  --occurrences      jsonl, csv, markdown: one record per occurrence of
                     each link (its own location, the link's status and
                     count), in input order, written at the end (the
                     results and occurrences wait in temporary files)
  -o FILE            write the report to FILE: to a temporary file beside
                     it, which replaces FILE only when the audit is done
                     (as for scan: FILE.partial when an input could not be
                     read)
  --from-jsonl FILE  read scan's JSON-lines records from FILE (- for
                     standard input) instead of archives (with or without
                     scan --unique)
  --db FILE          the history (SQLite; default: linkscan/audit.db in
                     the user's cache directory, ` + defaultDBHint + `)
  --max-age DURATION reuse a check of the history younger than this
                     instead of checking again (default 0: always check;
                     a failure is never reused as a success)
  --offline          check nothing: report from the history only (links
                     it does not know are unchecked)
  --fail-on WHAT     failing or dead (the default): the links that make
                     the exit status 3. failing: every failing or dead
                     link, for a check that must pass now
  --dead-checks N    failing checks before a link is dead (default 3)
  --dead-days D      days those checks must span (default 7; may be a
                     fraction; 0: the checks alone decide; at most 100000)
  --concurrency N    checks at once over all hosts (default 32)
  --per-host N       requests at once to one host (default 4)
  --interval DURATION
                     least time between two requests to one host
                     (default 0)
  --host-limit HOST=N[/DURATION]
                     per-host override of --per-host, and of --interval
                     when DURATION is given (HOST or HOST:PORT;
                     repeatable, or comma-separated)
  --retries N        further attempts after a timeout, 408, 429 or 5xx
                     (default 2; 0: none)
  --backoff DURATION wait before the first retry, doubled each time, with
                     jitter (default 1s)
  --max-backoff DURATION
                     cap of that wait (default 30s)
  --max-retry-after DURATION
                     cap of a server's Retry-After (default 60s; a longer
                     one ends the retries)
  --timeout DURATION all attempts and waits of one link (default 2m)
  --attempt-timeout DURATION
                     one attempt, connection to last byte (default 20s)
  --allow-private    allow targets that are not globally reachable:
                     loopback, private, link-local, multicast,
                     unspecified, reserved, documentation... and IPv6
                     addresses carrying such an IPv4 one (NAT64, 6to4,
                     Teredo); refused by default, when the connection is
                     made: unchecked, class forbidden, never dead
  --nat64 PREFIX     a network-specific NAT64 prefix of this network
                     (IPv6 /32, /40, /48, /56, /64 or /96; repeatable,
                     or comma-separated): its addresses are judged by
                     the IPv4 address they carry
  --any-port         allow the ports browsers refuse (25, 110, 6667...;
                     refused by default, class forbidden-port)
  --403-fails        a 401 or 403 without a bot wall's challenge mark is
                     failing (and can become dead), not blocked: for
                     hosts that answer 403 for pages that are gone
  --ignore-robots    neither fetch nor honour robots.txt; by default each
                     http(s) origin's robots.txt is fetched once per run
                     and the links it disallows (or all of an origin
                     whose robots.txt is unreachable) are unchecked,
                     class robots, never requested
  --mx               mailto: look up each domain's MX record
  --no-archives      do not look up archived copies
  --cdx URL          Wayback CDX API (default
                     https://web.archive.org/cdx/search/cdx; - for none)
  --replay URL       Wayback replay prefix (default
                     https://web.archive.org/web/)
  --timegate URL     Memento TimeGate prefix, the URL appended (default:
                     none)
  --archive-requests N
                     archive queries at once over all links (default 2)
  --archive-interval DURATION
                     least time between the starts of two archive queries
                     (default 1s; 0: none)
  --index FILE       the references index (see 'linkscan help index') for
                     mid:, cid:, news: and nntp: links; without it, an
                     index of the archives is built for this run when
                     such links are found (none with --from-jsonl)
  --nntp-host LIST   further names of the archive's own news server
  --progress WHEN    auto, always or never: a progress bar on standard
                     error (links checked, ok/failing/dead so far, hosts
                     in back-off, time left; auto: when it is a terminal
                     that the report is not shown on; as for scan)
  --memory SIZE      memory for the index built for this run before it
                     moves to a temporary file (default 256MiB)
  --tmpdir DIR       where temporary files go: the distinct links, the
                     index, standard input spooled, a long message read
                     from a stream, --in-order and --occurrences results
                     (default $TMPDIR)
  --as, --scheme, --host, --headers, --no-html, --emails,
  --no-heuristic, --bare-domains, --data-uris, --refang, --jobs,
  --max-part-size, --max-message-size, --quiet, --warn-limit,
  --damage-exit, --verbose
                     as for scan (they choose and read the links)

{{sizes}}

Links without a canonical form (relative links without a base) cannot be
checked: they are counted on standard error. A DURATION is Go's (500ms,
30s, 5m, 2h) or in days: 7d, 1.5d, 1d12h. A link refused for its
address (loopback, private) is unchecked, and the first one is named on
standard error with the flag that checks them (--allow-private); an
archive service that cannot be reached is said once and not asked again
in the run. A timeout is reported as "timed out after 20s".

Exit status:
  0  every input was read and no dead link found (damage in messages, or
     bad lines of --from-jsonl, read past is reported on standard error
     and is success: --damage-exit 4 gives it a code of its own)
  1  some input could not be read, the history could not be used, or the
     report could not be written
  2  usage error
  3  dead links were found (everything was read); with --fail-on
     failing, failing links too
`,
}

// defaultDBHint names the default history file for the help.
const defaultDBHint = "$XDG_CACHE_HOME/linkscan/audit.db\n                     on Linux"

// auditFieldsLead introduces the list of audit.Fields in the help.
const auditFieldsLead = "jsonl and csv records carry (docs/audit.md says what each holds): "

func init() {
	cmdAudit.Run = runAudit
	cmdAudit.Long = strings.Replace(cmdAudit.Long, "{{fields}}", wrap(auditFieldsLead+audit.Fields.Summary()+".", 72), 1)
}

// auditClock is the audit's clock; tests put a fake one in its place.
var auditClock audit.Clock

// auditFlags are audit's own flags.
type auditFlags struct {
	occurrences, inOrder, offline, allowPrivate, anyPort, mx bool
	noArchives, denyFails, ignoreRobots                      bool
	fromJSONL, db, cdx, replay, timeGate                     string
	failOn                                                   string
	index, nntpHosts                                         string
	maxAge, interval, backoff, maxBackoff                    time.Duration
	maxRetryAfter, timeout, attemptTimeout                   time.Duration
	deadChecks, concurrency, perHost, retries                int
	deadDays                                                 float64
	archiveRequests                                          int
	archiveInterval                                          time.Duration
	hostLimits, nat64                                        listFlag
}

// refSchemes are the schemes resolved against the archive.
var refSchemes = map[string]bool{"mid": true, "cid": true, "news": true, "nntp": true}

func runAudit(e *env, args []string) int {
	if e.setMemoryLimit != nil && os.Getenv("GOGC") == "" {
		// main collects rarely (GOGC 400) for scan's throughput; an
		// audit waits on the network and keeps its distinct links and
		// results live, so the default 100 is the better trade: 78 MB
		// against 62 MB peak for 100,000 distinct links offline
		// (docs/performance.md, "audit"). No soft limit: the live
		// budget (--memory) may pass any fixed one.
		debug.SetGCPercent(100)
	}
	var c scanConfig
	var af auditFlags
	fs := newFlagSet(cmdAudit, e)
	c.register(fs)
	fs.BoolVar(&af.occurrences, "occurrences", false, "one record per occurrence")
	fs.BoolVar(&af.inOrder, "in-order", false, "links in input order, written at the end")
	fs.StringVar(&af.fromJSONL, "from-jsonl", "", "scan records to read")
	fs.StringVar(&af.db, "db", "", "history file")
	fs.Var((*durationFlag)(&af.maxAge), "max-age", "reuse checks younger than this")
	fs.BoolVar(&af.offline, "offline", false, "report from history only")
	fs.IntVar(&af.deadChecks, "dead-checks", 3, "failing checks before dead")
	fs.StringVar(&af.failOn, "fail-on", "dead", "failing or dead: the links that make exit status 3")
	fs.Float64Var(&af.deadDays, "dead-days", 7, "days those checks span")
	fs.IntVar(&af.concurrency, "concurrency", 32, "checks at once")
	fs.IntVar(&af.perHost, "per-host", 4, "requests at once per host")
	fs.Var((*durationFlag)(&af.interval), "interval", "least time between requests to a host")
	fs.Var(&af.hostLimits, "host-limit", "HOST=N[/DURATION]")
	fs.Var(&af.nat64, "nat64", "a network-specific NAT64 prefix of this network")
	fs.IntVar(&af.retries, "retries", 2, "further attempts")
	af.backoff = time.Second
	fs.Var((*durationFlag)(&af.backoff), "backoff", "first retry wait")
	af.maxBackoff = 30 * time.Second
	fs.Var((*durationFlag)(&af.maxBackoff), "max-backoff", "cap of the retry wait")
	af.maxRetryAfter = time.Minute
	fs.Var((*durationFlag)(&af.maxRetryAfter), "max-retry-after", "cap of Retry-After")
	af.timeout = 2 * time.Minute
	fs.Var((*durationFlag)(&af.timeout), "timeout", "time per link")
	af.attemptTimeout = 20 * time.Second
	fs.Var((*durationFlag)(&af.attemptTimeout), "attempt-timeout", "time per attempt")
	fs.BoolVar(&af.allowPrivate, "allow-private", false, "allow private and loopback targets")
	fs.BoolVar(&af.anyPort, "any-port", false, "allow the ports browsers refuse")
	fs.BoolVar(&af.denyFails, "403-fails", false, "a 401 or 403 without a bot wall's mark is failing, not blocked")
	fs.BoolVar(&af.ignoreRobots, "ignore-robots", false, "neither fetch nor honour robots.txt")
	fs.BoolVar(&af.mx, "mx", false, "look up mailto: MX records")
	fs.BoolVar(&af.noArchives, "no-archives", false, "no archived copies")
	fs.StringVar(&af.cdx, "cdx", "", "Wayback CDX API")
	fs.IntVar(&af.archiveRequests, "archive-requests", 2, "archive queries at once")
	af.archiveInterval = time.Second
	fs.Var((*durationFlag)(&af.archiveInterval), "archive-interval", "least time between archive queries")
	fs.StringVar(&af.replay, "replay", "", "Wayback replay prefix")
	fs.StringVar(&af.timeGate, "timegate", "", "Memento TimeGate prefix")
	fs.StringVar(&af.index, "index", "", "references index file")
	fs.StringVar(&af.nntpHosts, "nntp-host", "", "names of the local news server")
	paths, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(e.stderr, "linkscan audit: %s\n", escape(fmt.Sprintf(format, a...)))
		return exitUsage
	}
	format := c.format
	c.format = "" // scan's own check of --format is not for audit's formats
	if format != "" && !validAuditFormat(format) {
		return usageErr("unknown --format %q (want one of %s)", format, strings.Join(audit.Formats, ", "))
	}
	if c.unique != uniqueOff {
		return usageErr("--unique: audit always makes links distinct")
	}
	if af.failOn != "dead" && af.failOn != "failing" {
		return usageErr("--fail-on %q: want failing or dead", af.failOn)
	}
	if af.fromJSONL != "" && len(paths) > 0 {
		return usageErr("--from-jsonl and PATH arguments do not go together")
	}
	if af.fromJSONL == "" {
		paths = inputPaths(e, paths)
	}
	cfgPaths := paths
	if af.fromJSONL != "" {
		cfgPaths = []string{af.fromJSONL} // config wants a PATH
	}
	cfg, code := c.config(e, "audit", cfgPaths)
	if cfg == nil {
		return code
	}
	acfg, err := af.config()
	if err != nil {
		return usageErr("%v", err)
	}
	if (af.occurrences || af.inOrder) && (format == "summary" || format == "html") {
		return usageErr("--occurrences and --in-order are for jsonl, csv and markdown")
	}
	if format == "" {
		format = "jsonl"
		if c.output == "" && isTerminal(e.stdout) {
			format = "summary"
		}
	}
	a := &auditRun{e: e, c: &c, af: &af, cfg: acfg, paths: paths, format: format}
	return a.run(cfg)
}

func validAuditFormat(f string) bool {
	for _, g := range audit.Formats {
		if f == g {
			return true
		}
	}
	return false
}

// config makes the engine's configuration from the flags.
func (af *auditFlags) config() (cfg audit.Config, err error) {
	if af.deadChecks < 1 || af.concurrency < 1 || af.perHost < 1 || af.retries < 0 || af.archiveRequests < 1 {
		return cfg, errors.New("--dead-checks, --concurrency, --per-host and --archive-requests must be at least 1, --retries at least 0")
	}
	if af.archiveInterval < 0 {
		return cfg, errors.New("--archive-interval must not be negative")
	}
	after, ok := deadAfter(af.deadDays)
	if !ok {
		return cfg, fmt.Errorf("--dead-days must be from 0 to %d", maxDeadDays)
	}
	if af.maxAge < 0 || af.interval < 0 || af.backoff <= 0 || af.maxBackoff <= 0 ||
		af.maxRetryAfter <= 0 || af.timeout <= 0 || af.attemptTimeout <= 0 {
		return cfg, errors.New("durations must not be negative, and timeouts and backoffs more than 0")
	}
	cfg = audit.Config{
		RequestLimits: audit.RequestLimits{Concurrency: af.concurrency, PerHost: af.perHost, Interval: af.interval,
			Timeout: af.attemptTimeout, LinkTimeout: af.timeout},
		RetryPolicy:   audit.RetryPolicy{Retries: af.retries, Backoff: af.backoff, MaxBackoff: af.maxBackoff, MaxRetryAfter: af.maxRetryAfter},
		RobotsPolicy:  audit.RobotsPolicy{IgnoreRobots: af.ignoreRobots},
		NetworkPolicy: audit.NetworkPolicy{AllowPrivate: af.allowPrivate, AnyPort: af.anyPort},
		HistoryPolicy: audit.HistoryPolicy{DeadChecks: af.deadChecks, DeadAfter: after, MaxAge: af.maxAge, Offline: af.offline},
		ArchivePolicy: audit.ArchivePolicy{Archives: !af.noArchives, CDX: af.cdx, Replay: af.replay, TimeGate: af.timeGate,
			ArchiveRequests: af.archiveRequests, ArchiveInterval: af.archiveInterval},
		UserAgent: "linkscan/" + version + " (link audit; +https://github.com/linkscan/linkscan/blob/main/docs/audit.md)",
		MX:        af.mx, DenyFails: af.denyFails, Clock: auditClock,
	}
	if af.retries == 0 {
		cfg.Retries = -1 // the engine's "none"
	}
	if cfg.ArchiveInterval == 0 {
		cfg.ArchiveInterval = time.Nanosecond // none (0 is the engine's default)
	}
	if cfg.DeadAfter == 0 {
		cfg.DeadAfter = time.Nanosecond // 0 days: the checks alone decide (0 is the engine's default)
	}
	if cfg.NAT64, err = parseNAT64(af.nat64); err != nil {
		return cfg, err
	}
	for _, hl := range af.hostLimits {
		host, lim, hasInterval, err := parseHostLimit(hl)
		if err != nil {
			return cfg, err
		}
		if !hasInterval {
			lim.Interval = af.interval // only the number is overridden
		}
		if cfg.Hosts == nil {
			cfg.Hosts = map[string]audit.HostLimit{}
		}
		cfg.Hosts[host] = lim
	}
	return cfg, nil
}

// parseNAT64 reads the --nat64 prefixes: IPv6, of one of the lengths of
// RFC 6052 (§2.2), made canonical (the bits past the length zero).
func parseNAT64(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		p, err := netip.ParsePrefix(s)
		if err != nil || !p.Addr().Is6() || p.Addr().Is4In6() || !slices.Contains([]int{32, 40, 48, 56, 64, 96}, p.Bits()) {
			return nil, fmt.Errorf("--nat64 %q: must be an IPv6 prefix of /32, /40, /48, /56, /64 or /96 (RFC 6052)", s)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// parseHostLimit reads HOST=N, HOST=N/DURATION or HOST=/DURATION;
// hasInterval says whether a DURATION was given.
func parseHostLimit(s string) (host string, lim audit.HostLimit, hasInterval bool, err error) {
	host, v, ok := strings.Cut(s, "=")
	host = strings.ToLower(strings.TrimSpace(host))
	n, d, hasD := strings.Cut(v, "/")
	if !ok || host == "" || n == "" && !hasD {
		return "", lim, false, fmt.Errorf("--host-limit %q: want HOST=N[/DURATION]", s)
	}
	if n != "" {
		k, err := strconv.Atoi(n)
		if err != nil || k < 1 {
			return "", lim, false, fmt.Errorf("--host-limit %q: %q is not a number of requests (at least 1)", s, n)
		}
		lim.PerHost = k
	}
	if hasD {
		dur, err := parseDuration(d)
		if err != nil {
			return "", lim, false, fmt.Errorf("--host-limit %q: %q is not a duration", s, d)
		}
		lim.Interval = dur
	}
	return host, lim, hasD, nil
}

// auditRun is one run of the command.
type auditRun struct {
	e      *env
	c      *scanConfig
	af     *auditFlags
	cfg    audit.Config
	paths  []string
	format string

	con      *console
	out      io.Writer // where the report goes while links are checked
	failing  int       // links failing (not yet dead), for --fail-on failing
	private  bool      // a private address was refused, and said so
	links    *audit.DiskCollector
	occ      *auditspool.OccurrenceSpool // --occurrences: every occurrence, in order
	occErr   error                       // of the pass over occ
	noCanon  int                         // links without a canonical form
	badLines int                         // --from-jsonl lines that are not scan records
	refs     bool                        // a mid:, cid:, news: or nntp: link was collected
	addErr   error                       // the first error of the collector

	ctx         context.Context // canceled by an interrupt
	interrupted atomic.Bool
	inOrderErr  error // of the report's writer, writing --in-order
}

func (a *auditRun) run(cfg *scan.Config) (status int) {
	e, c := a.e, a.c
	const prefix = "linkscan audit"
	con := newConsole(e.stderr)
	con.quiet, con.limit = c.quiet, c.warnLimit
	a.con = con
	a.cfg.ArchiveDown = func(source string, err error) {
		con.printf("%s: the %s archive service cannot be reached (%v): it is not asked again in this run", prefix, source, err)
	}

	// An interrupt (SIGINT, SIGTERM, SIGHUP) stops the read and the checks;
	// the report file is left as it was, the history keeps the checks
	// done, and then the command dies of the signal as it would have. A
	// second one kills at once.
	var cancel context.CancelFunc
	a.ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	var sig atomic.Value
	defer func() {
		if s, ok := sig.Load().(os.Signal); ok {
			con.printf("%s: interrupted (%v): the checks done are in the history", prefix, s)
			signal.Reset(s)
			if p, err := os.FindProcess(os.Getpid()); err == nil {
				p.Signal(s)
				// the runtime's handler kills the process in a moment;
				// returning first would exit with a status instead
				time.Sleep(5 * time.Second)
			}
			status = exitFail
		}
	}()
	if f := fileOf(e.stdout); f != nil && c.output == "" {
		// a reader of the report that goes away (| head) ends the run
		// quietly: the read of the archives and the checks stop
		defer watchReader(f, func() { c.readerGone.Store(true); cancel() })()
	}
	sigCh := make(chan os.Signal, 1)
	if sigs := interrupts(); len(sigs) > 0 {
		signal.Notify(sigCh, sigs...)
	}
	sigDone := make(chan struct{})
	defer func() { signal.Stop(sigCh); close(sigDone) }()
	go func() {
		select {
		case s := <-sigCh:
			signal.Stop(sigCh)
			sig.Store(s)
			a.interrupted.Store(true)
			c.readerGone.Store(true) // stops the read of the archives
			cancel()
		case <-sigDone:
		}
	}()

	// inputs that may not be the output
	ins := a.paths
	if a.af.fromJSONL != "" {
		ins = []string{a.af.fromJSONL}
	}
	dbPath := a.af.db
	if dbPath == "" {
		p, err := audit.DefaultDBPath()
		if err != nil {
			con.printf("%s: no --db given, and no cache directory: %v", prefix, err)
			return exitFail
		}
		dbPath = p
	}
	if stdoutIsInput(e, []string{dbPath, a.af.index}) {
		return exitUsage
	}
	out, outName := io.Writer(e.stdout), "standard output"
	var of *output.File
	if c.output != "" {
		if err := output.CheckInputs(c.output, ins); err != nil {
			con.printf("%s: -o %s: %v", prefix, c.output, err)
			return exitUsage
		}
		if a.af.index != "" && isIndexFile(c.output, a.af.index) { // the report would replace the index
			con.printf("%s: -o %s is the --index file %s (or a file beside it): the index would be replaced by the output", prefix, escape(c.output), escape(a.af.index))
			return exitUsage
		}
	}
	if a.af.index != "" {
		if msg := indexInInputs(a.af.index, ins); msg != "" { // its files would be read as mail
			con.printf("%s: %s", prefix, msg)
			return exitUsage
		}
		for _, p := range a.paths {
			if isStreamInput(p) { // the next stream would replace its entries
				con.printf("%s: %s: %s is indexed into %s for this run under the name %q, replacing what an earlier run indexed there from it; later runs cannot find its messages again (docs/references.md)", prefix, escape(p), streamWhat(p), escape(a.af.index), p)
			}
		}
	}
	db, err := audit.OpenDB(dbPath, 0)
	if err != nil {
		con.printf("%s: %s", prefix, auditErr(err))
		return exitFail
	}
	defer func() {
		if err := db.Close(); err != nil {
			con.printf("%s: %s", prefix, auditErr(err))
			status = exitFail
		}
	}()
	if c.output != "" {
		// the history exists now: -o may not be it
		f, code := createOutput(con, prefix, c.output, []string{dbPath}, "the history (--db): ")
		if f == nil {
			return code
		}
		defer f.Abort() // after Commit or Keep, nothing
		of, out, outName = f, f, c.output
	}

	a.links, err = audit.NewDiskCollector(c.tmpDir)
	if err != nil {
		con.printf("%s: %s", prefix, auditErr(err))
		return exitFail
	}
	defer a.links.Close()
	if a.af.occurrences {
		if a.occ, err = auditspool.NewOccurrenceSpool(c.tmpDir); err != nil {
			con.printf("%s: %v", prefix, err)
			return exitFail
		}
		defer a.occ.Close()
	}

	// 1. the links
	var t tally
	so := &inputs.Opener{Stdin: e.stdin, Spool: true, TempDir: c.tmpDir} // read twice when indexed
	defer so.Close()
	fifos := &fifoSpool{dir: c.tmpDir, next: so.Open} // a FIFO input too: it cannot be opened twice
	defer fifos.Close()
	if wantBar(c.progress, nil, e.stderr) { // nothing is reported yet
		if a.af.fromJSONL == "" {
			con.bar = newBar(a.paths, e.stderr)
		}
	}
	switch {
	case a.af.fromJSONL != "":
		a.readJSONL(so, &t)
	case cfg.Mailbox.Format == mailbox.FormatText:
		c.scanText(e, con, a.paths, cfg, &collectWriter{a: a}, &t)
	default:
		c.openFn = func(name string) (*mailbox.Reader, error) { return fifos.Open(name, &cfg.Mailbox) }
		c.scanArchives(e, con, a.paths, cfg, &collectWriter{a: a}, func() error { return nil }, &t)
	}
	con.finish()
	if a.addErr != nil {
		con.printf("%s: %s", prefix, auditErr(a.addErr))
		return exitFail
	}
	if a.interrupted.Load() {
		return exitFail
	}
	if t.writeErr != nil { // the output pipe went away while reading
		return exitOK
	}
	if a.noCanon > 0 {
		con.printf("%s: %s without a canonical form (relative, no base) not checked", prefix, plural(a.noCanon, "link", "links"))
	}

	// 2. the references index, when needed
	if a.refs || a.af.index != "" {
		res, closeStore, st := a.resolver(fifos.Open, cfg)
		defer closeStore()
		t.unreadable += st
		if res != nil {
			a.cfg.Refs = res
			// references the index could not tell (said): as an
			// input not read
			defer func() {
				if res.Uncertain() > 0 {
					status = worse(status, exitFail)
				}
			}()
		}
	}

	// 3. the checks
	a.out = resultWriter(con, out, e.stderr) // whole lines, when stderr shares out
	rec := &checkedWriter{w: a.out}
	var now time.Time
	if auditClock != nil {
		now = auditClock.Now()
	} else {
		now = time.Now()
	}
	w, err := audit.NewWriter(rec, a.format, audit.ReportOptions{Now: now})
	if err != nil {
		con.printf("%s: %s", prefix, auditErr(err))
		return exitUsage
	}
	dead, histErr := a.check(db, w)
	werr := w.Close()
	if err := flushResults(a.out); werr == nil && err != nil {
		werr, rec.err = err, err
	}
	if a.occ != nil && werr == nil && rec.err == nil {
		werr = a.occErr
	}
	if werr == nil && rec.err == nil {
		werr = a.inOrderErr
	}
	if a.interrupted.Load() {
		return exitFail // the report file is not committed
	}
	con.summarize(prefix)
	c.printCounts(con, prefix, &t)
	if a.badLines > 0 {
		// bad lines of --from-jsonl are not damaged messages; the exit
		// status is damage's all the same
		con.printf("%s: %s: %s skipped (not scan records)", prefix, a.af.fromJSONL, plural(a.badLines, "bad line", "bad lines"))
		t.damaged++
	}
	if histErr != nil {
		con.printf("%s: %s", prefix, auditErr(histErr))
		t.unreadable++ // the history could not be used: as an input not read
	}
	if rec.err != nil || werr != nil {
		err := rec.err
		if err == nil {
			err = werr
		}
		e.out.reported = true
		if isBrokenPipe(err) {
			return t.status(c.damageExit)
		}
		con.printf("%s: writing %s: %v", prefix, outName, err)
		return exitFail
	}
	if of != nil && !finishOutput(con, prefix, of, c.output, &t) {
		return exitFail
	}
	if dead > 0 {
		con.printf("%s: %s", prefix, plural(dead, "dead link", "dead links"))
	}
	failing := 0
	if a.af.failOn == "failing" {
		failing = a.failing
		if failing > 0 {
			con.printf("%s: %s (--fail-on failing)", prefix, plural(failing, "failing link", "failing links"))
		}
	}
	st := t.status(c.damageExit)
	if st == exitFail || dead+failing == 0 {
		return st
	}
	return exitDead
}

// sayPrivate says, the first time a link is refused for its address
// (loopback, private...), how to check such links.
func (a *auditRun) sayPrivate(r audit.Result) {
	if a.private || a.af.allowPrivate || r.Check.Class != audit.ClassForbidden || !strings.Contains(r.Check.Error, "not globally reachable") {
		return
	}
	a.private = true
	a.con.printf("linkscan audit: %s: its address is not public, and such links are not checked (class forbidden); --allow-private checks them", escape(r.Link.URL))
}

// check audits the collected links, writing the results to w; it
// returns the number of dead links and the history's error.
func (a *auditRun) check(db *audit.DB, w audit.Writer) (dead int, err error) {
	e, c := a.e, a.c
	ctx, cancel := context.WithCancel(a.ctx)
	defer cancel()
	au := audit.New(a.cfg, db)
	if wantBar(c.progress, a.out, e.stderr) {
		var total int64
		a.links.Each(func(audit.Link) error { total++; return nil })
		a.con.bar = newAuditBar(total, e.stderr)
		a.con.bar.Describe("ok 0, failing 0, dead 0, hosts in back-off 0")
	}
	links := make(chan audit.Link)
	feedErr := make(chan error, 1)
	go func() {
		defer close(links)
		feedErr <- a.links.Each(func(l audit.Link) error {
			select {
			case links <- l:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	// --in-order and --occurrences write after the checks, from a file
	var store *auditspool.ResultStore
	if a.occ != nil || a.af.inOrder {
		if store, err = auditspool.NewResultStore(c.tmpDir); err != nil {
			return 0, err
		}
		defer store.Close()
	}
	var writeErr error
	err = au.Run(ctx, links, func(r audit.Result) {
		if r.Status == audit.Dead {
			dead++
		}
		if r.Status == audit.Failing {
			a.failing++
		}
		a.sayPrivate(r)
		if a.con.bar != nil {
			p := au.Progress()
			a.con.mu.Lock()
			// the count first: each of Set64 and Describe draws the bar
			// (when its throttle lets it), so the description drawn is
			// this one or the one before, never ahead of the count
			a.con.bar.Set64(p.Checked)
			a.con.bar.Describe(fmt.Sprintf("ok %d, failing %d, dead %d, hosts in back-off %d",
				p.ByStatus[audit.OK]+p.ByStatus[audit.Redirected]+p.ByStatus[audit.OfflineOK],
				p.ByStatus[audit.Failing], p.ByStatus[audit.Dead], p.HostsBack))
			a.con.mu.Unlock()
		}
		if writeErr != nil {
			return
		}
		if store != nil {
			writeErr = store.Put(r)
		} else {
			writeErr = w.Write(r)
		}
		if writeErr != nil {
			cancel()
		}
	})
	a.con.finish()
	if ferr := <-feedErr; ferr != nil && !errors.Is(ferr, context.Canceled) && err == nil {
		err = ferr
	}
	if store == nil || writeErr != nil || err != nil {
		if writeErr != nil && store != nil && err == nil {
			err = writeErr // the results file, not the report
		}
		return dead, err
	}
	if err := store.Done(); err != nil {
		return dead, err
	}
	var lookErr error
	write := func(canonical string, o *auditspool.Occurrence) error {
		r, ok, err := store.Lookup(canonical)
		if err != nil {
			lookErr = err
			return err
		}
		if !ok {
			return nil // not checked: the run was cut short
		}
		if o != nil {
			r.Link = o.Place(r.Link) // this occurrence's place; the link's count
		}
		return w.Write(r)
	}
	if a.occ != nil {
		a.occErr = a.occ.Each(func(o auditspool.Occurrence) error { return write(o.URL, &o) })
	} else {
		if ferr := a.links.Each(func(l audit.Link) error { return write(l.URL, nil) }); ferr != nil && lookErr == nil {
			a.inOrderErr = ferr // the report's writer failed
		}
	}
	if lookErr != nil {
		err = lookErr
	}
	return dead, err
}

// auditErr is an error of package audit as the command says it, without
// the package's "audit: ", which would double the command's "linkscan
// audit: ".
func auditErr(err error) string { return strings.TrimPrefix(err.Error(), "audit: ") }

// newAuditBar is the bar of the checks: links checked of total.
func newAuditBar(total int64, w io.Writer) *progressbar.ProgressBar {
	return progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(barWriter(w)),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100_000_000),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetSpinnerChangeInterval(0),
	)
}

// add collects one occurrence.
func (a *auditRun) add(l audit.Link) error {
	if refSchemes[l.Scheme] {
		a.refs = true
	}
	if a.occ != nil {
		if err := a.occ.Add(l); err != nil {
			return err
		}
	}
	return a.links.Add(l)
}

// collectWriter is the report.Writer of the scan pass: it collects links.
type collectWriter struct{ a *auditRun }

func (w *collectWriter) Write(r *record.Record) error {
	if w.a.addErr != nil {
		return w.a.addErr
	}
	if r.Canonical == "" {
		w.a.noCanon++
		return nil
	}
	l := audit.Link{URL: r.Canonical, Scheme: strings.ToLower(r.Scheme), Host: strings.ToLower(r.Host),
		Path: r.Path, Blob: r.Blob, Offset: r.Offset, MessageID: r.MessageID, Part: r.Part, Line: r.Line, Column: r.Column, Count: r.Count,
		Cut: slices.Contains(r.Problems, extract.ProblemTooLong)}
	if l.Scheme == "" {
		if i := strings.IndexByte(l.URL, ':'); i > 0 {
			l.Scheme = strings.ToLower(l.URL[:i])
		}
	}
	if r.Date != "" {
		if t, err := time.Parse(time.RFC3339, r.Date); err == nil {
			l.Date = t
		}
	}
	if err := w.a.add(l); err != nil {
		w.a.addErr = err
		return err
	}
	return nil
}

func (w *collectWriter) Message(int, bool) {}
func (w *collectWriter) Close() error      { return nil }

// readJSONL collects the links of --from-jsonl.
func (a *auditRun) readJSONL(so *inputs.Opener, t *tally) {
	const prefix = "linkscan audit"
	name := a.af.fromJSONL
	r, err := so.OpenText(name)
	if err != nil {
		a.con.printf("%s: %v", prefix, err)
		t.unreadable++
		return
	}
	defer r.Close()
	st, err := audit.ReadJSONL(r, func(l audit.Link) error {
		if err := a.add(l); err != nil {
			a.addErr = err
			return err
		}
		return nil
	}, func(re *audit.RecordError) {
		a.con.problem(re.Err.Error(), fmt.Sprintf("%s: %s: %v", prefix, name, re))
	})
	t.messages++
	a.noCanon += int(st.NoCanon)
	a.badLines = int(st.BadLines) // lines, not messages: said after the counts
	if err != nil && a.addErr == nil {
		a.con.printf("%s: %s: %v", prefix, name, err)
		t.unreadable++
	}
}

// resolver opens (and, from archives, builds) the references index for
// mid:, cid:, news: and nntp: links; it returns the number of inputs that
// could not be indexed (or 1 when the index cannot be opened).
func (a *auditRun) resolver(open func(string, *mailbox.Options) (*mailbox.Reader, error), cfg *scan.Config) (*references.Resolver, func(), int) {
	e, c := a.e, a.c
	if cfg.Mailbox.Format == mailbox.FormatText || (a.af.fromJSONL != "" && a.af.index == "") {
		return nil, func() {}, 0
	}
	rf := refFlags{index: a.af.index, nntpHosts: a.af.nntpHosts, memory: int64(c.memory), tmpDir: c.tmpDir}
	store, err := openStoreFn(e, "audit", rf)
	if err != nil {
		a.con.printf("linkscan audit: %v", err)
		return nil, func() {}, 1
	}
	closeStore := func() {
		if err := store.Close(); err != nil {
			a.con.printf("linkscan audit: %v", err)
		}
	}
	bad := 0
	if a.af.fromJSONL == "" {
		var st int
		_, st = buildIndex(e, store, a.paths, cfg.Mailbox, open, false)
		if st == exitFail {
			bad = 1
		}
	}
	o := rf.options(e, "audit")
	o.Mailbox = cfg.Mailbox
	res := refs.NewResolver(store, o)
	res.Inputs = a.paths // targets shown as the inputs were named
	if bad != 0 {
		// what the index does not hold may be in the archive: not dangling
		res.Incomplete = true
		a.con.printf("linkscan audit: the index is incomplete (see above): references it does not hold are errors, not not-in-archive")
	}
	return res, closeStore, bad
}
