package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/linkscan/linkscan/internal/inputs"
	"github.com/linkscan/linkscan/internal/output"
	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/record"
	"github.com/linkscan/linkscan/references"
	"github.com/linkscan/linkscan/scan"
	"github.com/linkscan/linkscan/scan/refs"
)

var cmdResolve = &command{
	Name:      "resolve",
	UsageLine: "linkscan resolve [--index FILE] [flags] PATH...",
	Short:     "resolve mid:, cid:, news: and nntp: references against the archive",
	Long: `
Resolve reports every mid:, cid:, news: and nntp: reference in the
archives (PATH as for scan; with none, standard input when it is not a
terminal), explicit (links in the text) and implicit (In-Reply-To and
References headers, and "In article <id>" attribution lines), with where
it leads. The archives are indexed first (Message-IDs, Content-IDs,
newsgroups), then scanned.

Each record has scan's fields (see 'linkscan help scan') plus:

  status   resolved, dangling, ambiguous, not-a-target, external-server,
           or error: the lookup failed (the index could not be read; the
           reason is on standard error), found nothing in an index
           whose building failed or did not finish (a full disk, a run
           killed; said), or found targets only in files gone or
           changed since they were indexed (said), which is never
           reported as dangling. A target file changed since it was
           indexed is indexed again first.
  target   the first target: {{target-fields}}
  targets  every target, when there are several (copies, crossposts,
           ambiguous Content-IDs)

Flags:

  --index FILE       keep the index in an SQLite file: later runs and other
                     archives resolve against it, and files already indexed
                     completely and unchanged are not read again (see
                     'linkscan help index'); -o may not name it (nor
                     its -wal, -shm, -writers files), and it may not
                     lie in an input directory: exit 2. Standard input
                     is indexed into it under the name "-", replacing
                     an earlier standard input's entries (said)
  --nntp-host LIST   further names of the archive's own news server
                     (comma-separated); the hosts named in Xref: headers
                     count too. nntp:// links to other hosts are
                     external-server.
  --status LIST      keep only these statuses (e.g. dangling,ambiguous)
  --no-implicit      leave out In-Reply-To, References and attributions
  --memory SIZE      memory for the index when there is no --index file
                     (default 256MiB; the same budget again serves
                     --unique): past it the index moves to a temporary
                     SQLite file in --tmpdir, said on standard error
  --tmpdir DIR       where temporary files go (default $TMPDIR): also
                     standard input and a FIFO input (<(zcat a.gz)),
                     kept there to be read twice, index then scan
  --format, -o, --as, --jobs, --progress, --max-part-size,
  --max-message-size, --quiet, --verbose, --warn-limit, --damage-exit,
  --unique, --scheme, --host, --headers, --no-html, --emails,
  --no-heuristic, --bare-domains, --data-uris, --refang
                     as for scan

{{sizes}}

Exit status: as for scan; a reference whose lookup failed (status
error) counts as an input that could not be read (1), and so does an
index file that cannot be used. Dangling references are reported, not
errors. See docs/references.md.
`,
}

var cmdIndex = &command{
	Name:      "index",
	UsageLine: "linkscan index [--index FILE] [--format text|json] [--memory SIZE] [--tmpdir DIR] [--as FORMAT] [--quiet] [--warn-limit N] [--damage-exit N] PATH...",
	Short:     "build or update the Message-ID index of archives",
	Long: `
Index reads the archives (PATH as for scan; with none, standard input
when it is not a terminal) and records their Message-IDs (every location of
each), Content-IDs (message and part), newsgroups and "group:number"
articles. With --index FILE the index is kept in an SQLite file and
updated: a file whose size and modification time are unchanged is not read
again, a changed one replaces what was indexed from it. Without --index the
index lives in memory for this run only, which tells what an archive holds;
past --memory SIZE (default 256MiB, about three million messages) it moves
to a temporary SQLite file in --tmpdir DIR (default $TMPDIR), said on
standard error, so that memory stays bounded. --tmpdir is also where a
message longer than 4 MiB read from standard input or a compressed file
waits while its end is looked for.

{{sizes}}

A directory read to its end, with no entry that could not be read, is
reconciled with the index: the files indexed under it that are gone are
forgotten (removed files), so that references to deleted messages
dangle.

A file counts as indexed only when its last message is committed: after
a run that was killed or failed, its unfinished files are read again (and
their partial entries replaced) when next given. The index file is in WAL
mode, so that runs can read it while another writes, and two runs writing
it take turns (each waits up to two minutes for the other's current
transaction). A file another run is indexing is waited for (at most ten
minutes, said) and then passed over as that run indexed it. A directory
walk counts as a file too: one that was killed leaves the index
incomplete, and lookups that find nothing in an incomplete index give
status error, not dangling. On opening, an index file that was not closed cleanly since
it was last written, or is not the file closed (a copy, or one given its
old time back by touch -r, cp -p, rsync -a), is checked (PRAGMA
quick_check); a damaged file, an
SQLite database that is not a linkscan index, or an index of a newer
linkscan is refused with an error naming it. A zero-byte file is taken as
a new index, with a notice on standard error. An index the user may not
write (the file, or its directory where SQLite keeps FILE-wal and
FILE-shm) is said to be read-only, not damaged. The index file may not
be an input nor lie in an input directory (its files would be read as
mail), and standard input, a pipe or a device cannot be indexed into
it (it could not be found again, and the next one would replace it):
usage errors, exit 2; without --index they are indexed in memory.

It prints what the index holds (files, files not completely indexed,
files removed, messages, distinct Message-IDs, messages without one, Content-IDs, groups,
articles) and what this run added and skipped; --format json prints the
same as one JSON object. --as FORMAT forces the input format, as for
scan. Damage found in messages is printed on standard error as scan
prints it (PATH#OFFSET <message-id>: problem; control characters
escaped), each problem at most --warn-limit N times (default 10; 0: all;
counted by kind and text as scan counts them) and the rest in one line at
the end; --quiet prints none of these lines, only the counts. The
damaged messages are indexed all the same. Files inside directories that
are not messages are passed over and counted on standard error, as scan
does, and an input that holds no message (0 bytes, nothing once
decompressed) is named with why (not with --quiet). The last line on standard error counts the inputs that could not
be read and the damaged messages, as scan's does.

{{index-fields}}

Exit status, as for scan:
  0  every input was read (damage in messages read past is reported on
     standard error and is success: --damage-exit 4 tells it)
  1  an index that cannot be used, an input (or a file, folder or link
     inside a directory) that cannot be read, each named on standard
     error, or output that cannot be written (a full disk)
  2  usage error
`,
}

// indexFieldsLead introduces the list of indexFields in index's help.
const indexFieldsLead = "The fields of --format json (docs/references.md says what each holds): "

// indexFields is the table of the fields of index --format json, in
// order: references.StatsFields, what the index holds, then indexRun's,
// what this run did.
var indexFields = append(slices.Clip(references.StatsFields),
	record.Field{Name: "added", Doc: "messages this run added"},
	record.Field{Name: "skipped_unchanged", Doc: "files this run passed over because the index holds them unchanged"},
	record.Field{Name: "removed_files", Doc: "files this run forgot because they are gone from their directories"},
)

// indexRun is what index --format json says of the run, after the
// references.Stats of the index: the fields of indexFields past
// references.StatsFields.
type indexRun struct {
	Added   int `json:"added"`
	Skipped int `json:"skipped_unchanged"`
	Removed int `json:"removed_files"`
}

// indexJSON returns index's --format json output: st and what run did,
// as one indented JSON object.
func indexJSON(st references.Stats, run references.IndexStats) []byte {
	v := struct {
		references.Stats
		indexRun
	}{st, indexRun{run.Messages, run.Skipped, run.Pruned}}
	b, _ := json.MarshalIndent(v, "", "  ") // ints only: cannot fail
	return append(b, '\n')
}

func init() {
	cmdResolve.Run = runResolve
	cmdIndex.Run = runIndex
	cmdResolve.Long = strings.Replace(cmdResolve.Long, "{{target-fields}}", strings.Join(record.TargetFields.Names(), ", "), 1)
	cmdIndex.Long = strings.Replace(cmdIndex.Long, "{{index-fields}}", wrap(indexFieldsLead+indexFields.Summary()+".", 72), 1)
}

// refFlags are the flags resolve and scan --resolve share, and the
// stages they want.
type refFlags struct {
	index, nntpHosts string
	// refsOnly keeps only mid:, cid:, news: and nntp: records (resolve);
	// implicit adds the implicit references; statuses, if not empty,
	// keeps only records of those statuses. scan --resolve sets none.
	refsOnly, implicit bool
	statuses           map[string]bool
	// memory is the budget of an index kept in memory (0: the default,
	// references.DefaultMemoryBudget); past it the index moves to a
	// temporary SQLite file in tmpDir ("": $TMPDIR).
	memory int64
	tmpDir string
}

// options are the refs.Options of the flags; notices go to standard
// error, as "linkscan NAME: notice".
func (rf refFlags) options(e *env, name string) refs.Options {
	return refs.Options{
		Index: rf.index, Memory: rf.memory, TempDir: rf.tmpDir,
		Notice:     func(msg string) { fmt.Fprintf(e.stderr, "linkscan %s: %s\n", name, escape(msg)) },
		LocalHosts: refs.Hosts(rf.nntpHosts),
		Only:       rf.refsOnly, Implicit: rf.implicit, Statuses: rf.statuses,
	}
}

// openStoreFn is openStore; tests put a store that fails in its place.
var openStoreFn = openStore

// openStore opens the index: an SQLite file, or memory up to the
// budget and a temporary SQLite file past it. Notices (a zero-byte file
// taken as new, a check after an unclean close, the move out of memory)
// go to standard error.
func openStore(e *env, name string, rf refFlags) (references.Store, error) {
	return refs.OpenStore(rf.options(e, name))
}

// buildIndex indexes the inputs into store; it returns exitFail if an
// input could not be indexed (or read to its end). With showProblems,
// the files of directories that could not be read and the damage found
// in messages are printed too (exitFail and exitDamage; resolve and
// audit leave them to their scan pass). Archive text is escaped.
func buildIndex(e *env, store references.Store, paths []string, opts mailbox.Options, open func(string, *mailbox.Options) (*mailbox.Reader, error), showProblems bool) (run references.IndexStats, status int) {
	ix := indexer{con: newConsole(e.stderr), prefix: "linkscan", problems: showProblems}
	if showProblems {
		ix.prefix = "linkscan index"
	}
	run = ix.index(store, paths, opts, open)
	return run, ix.t.status(exitDamage)
}

// indexer indexes inputs, with what it meets printed on a console: the
// same lines, limit and counts as scan's (damage as PATH#OFFSET
// <message-id>: problem, capped by --warn-limit, kept back by --quiet).
type indexer struct {
	con    *console
	prefix string // "linkscan index"
	// problems prints the damage found in messages and the files of
	// directories that could not be read; without it they are left to a
	// scan pass that reads the same inputs after (resolve, audit)
	problems bool
	// inputsLater leaves the inputs that could not be indexed because
	// they could not be read (a *mailbox.InputError: missing, truncated)
	// to that scan pass too, which names and counts them; errors of the
	// index itself are printed all the same
	inputsLater bool
	t           tally
}

// index adds paths to store, in order, and returns what it did, summed
// over the inputs; the problems are counted in ix.t.
func (ix *indexer) index(store references.Store, paths []string, opts mailbox.Options, open func(string, *mailbox.Options) (*mailbox.Reader, error)) references.IndexStats {
	damaged := map[string]bool{} // PATH#OFFSET of the messages with damage, of the input being read
	x := &references.Indexer{Store: store, Mailbox: opts, Open: open}
	x.Notice = func(msg string) { ix.con.printf("%s: %s", ix.prefix, msg) } // another run's file waited for
	x.OnDamage = func(d references.Damage) {
		if !ix.problems {
			return
		}
		ix.t.problems++
		if k := d.Path + "#" + strconv.FormatInt(d.Offset, 10); !damaged[k] {
			damaged[k] = true
			ix.t.damaged++
		}
		ix.con.damage(d.Problem, d.String())
	}
	var run references.IndexStats
	for _, p := range paths {
		clear(damaged) // a message's problems come together, from one input
		st, err := x.Add(p)
		run.Sum(st)
		if ix.problems {
			for _, msg := range st.Unreadable {
				ix.con.printf("%s: %s", ix.prefix, msg)
				ix.t.unreadable++
			}
		}
		if err == nil {
			continue
		}
		var ie *mailbox.InputError
		if ix.inputsLater && errors.As(err, &ie) {
			continue
		}
		ix.t.unreadable++
		ix.con.printf("%s: %s", ix.prefix, refs.Problem{Kind: refs.Failed, Input: p, Err: err}.Error())
	}
	return run
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
	paths = inputPaths(e, paths)
	cfg, code := c.config(e, "resolve", paths)
	if cfg == nil {
		return code
	}
	rf.refsOnly, rf.implicit = true, !noImplicit
	if statuses != "" {
		rf.statuses = map[string]bool{}
		for _, s := range strings.Split(statuses, ",") {
			s = strings.TrimSpace(s)
			if !slices.Contains(references.Statuses, references.Status(s)) {
				fmt.Fprintf(e.stderr, "linkscan resolve: unknown --status %s (one of %s)\n", escape(strconv.Quote(s)), statusList())
				return exitUsage
			}
			rf.statuses[s] = true
		}
	}
	return c.withResolver(e, cfg, rf, paths)
}

// withResolver indexes the inputs, then scans them with resolution.
func (c *scanConfig) withResolver(e *env, cfg *scan.Config, rf refFlags, paths []string) (status int) {
	if cfg.Mailbox.Format == mailbox.FormatText {
		fmt.Fprintf(e.stderr, "linkscan %s: references need messages; --as text cannot be resolved\n", c.name)
		return exitUsage
	}
	if c.output != "" && rf.index != "" && isIndexFile(c.output, rf.index) {
		// the output is renamed over its name at the end: the index
		// (or a file SQLite keeps beside it) would be lost
		fmt.Fprintf(e.stderr, "linkscan %s: -o %s is the --index file %s (or a file beside it): the index would be replaced by the output\n",
			c.name, escape(c.output), escape(rf.index))
		return exitUsage
	}
	if rf.index != "" {
		if msg := indexInInputs(rf.index, paths); msg != "" {
			fmt.Fprintf(e.stderr, "linkscan %s: %s\n", c.name, msg)
			return exitUsage
		}
		if stdoutIsInput(e, []string{rf.index}) {
			return exitUsage
		}
		for _, p := range paths {
			if isStreamInput(p) {
				fmt.Fprintf(e.stderr, "linkscan %s: %s: %s is indexed into %s for this run under the name %q, replacing what an earlier run indexed there from it; later runs cannot find its messages again (docs/references.md)\n",
					c.name, escape(p), streamWhat(p), escape(rf.index), p)
			}
		}
	}
	if rf.memory == 0 {
		rf.memory = int64(c.memory)
	}
	if rf.tmpDir == "" {
		rf.tmpDir = c.tmpDir
	}
	store, err := openStoreFn(e, c.name, rf)
	if err != nil {
		fmt.Fprintf(e.stderr, "linkscan %s: %s\n", c.name, escape(err.Error()))
		return exitFail
	}
	defer func() {
		if err := store.Close(); err != nil {
			fmt.Fprintf(e.stderr, "linkscan %s: %s\n", c.name, escape(err.Error()))
			status = exitFail
		}
	}()
	// standard input is read twice, index then scan: spooled; so is a
	// FIFO input (<(zcat a.gz)), which the second read found drained
	so := &inputs.Opener{Stdin: e.stdin, Spool: true, TempDir: rf.tmpDir}
	defer so.Close()
	fifos := &fifoSpool{dir: rf.tmpDir, next: so.Open}
	defer fifos.Close()
	// what cannot be read is named and counted once, by the scan pass
	ix := indexer{con: newConsole(e.stderr), prefix: "linkscan " + c.name, inputsLater: true}
	ix.index(store, paths, cfg.Mailbox, fifos.Open)
	status = ix.t.status(c.damageExit)
	if e.setMemoryLimit != nil && c.unique == uniqueOff {
		// as a plain scan's limit, over the index the scan keeps: main
		// collects rarely (GOGC 400), and the index pass's garbage (a
		// 60 MB message's buffer) would otherwise stay while the scan
		// pass makes its own. Not with --unique, whose budget is live.
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		e.setMemoryLimit(scanMemoryLimit + int64(ms.HeapAlloc))
	}
	// the stages of references run first: only references, implicit ones
	// added, resolution (and the status filter)
	o := rf.options(e, c.name)
	o.Mailbox = cfg.Mailbox
	res := refs.NewResolver(store, o)
	res.Inputs = paths // targets in them shown as they were named
	if ix.t.unreadable > 0 {
		// an input could not be indexed for another reason than being
		// unreadable (the scan pass names those): the index itself
		// failed, and what it does not hold may be in the archive: such
		// references are errors, not dangling
		res.Incomplete = true
		fmt.Fprintf(e.stderr, "linkscan %s: the index is incomplete (see above): references it does not hold get status error, not dangling\n", c.name)
	}
	cfg.Stages = append(refs.Stages(res, o), cfg.Stages...)
	c.openFn = func(name string) (*mailbox.Reader, error) { return fifos.Open(name, &cfg.Mailbox) }
	status = worse(status, c.run(e, cfg, paths))
	if n := res.Uncertain(); n > 0 {
		// the index could not tell (said above): as a lookup that failed
		fmt.Fprintf(e.stderr, "linkscan %s: %s status error: the index could not tell\n", c.name, plural(int(n), "reference has", "references have"))
		status = exitFail
	}
	return status
}

// indexInInputs says why the index file index may not be used with
// these inputs, or "": it (or a file beside it, indexFileSuffixes) is
// one of them, or lies in an input directory, where its files would be
// read as mail by every later scan (the empty FILE-writers in a
// Maildir's cur/ would be read as a damaged message).
func indexInInputs(index string, inputs []string) string {
	for _, suf := range indexFileSuffixes {
		f := index + suf
		if err := output.CheckInputs(f, inputs); err != nil {
			_, why, _ := strings.Cut(err.Error(), "output: ")
			return fmt.Sprintf("--index %s: %s: its files (%s, -wal, -shm, -writers) would be read as mail; keep the index outside the archives", escape(index), escape(why), escape(filepath.Base(index)))
		}
	}
	return ""
}

// isStreamInput reports whether the input p is standard input ("-"), a
// FIFO, socket or device, or a descriptor's name (/dev/stdin, /dev/fd/N
// as a process substitution gives, anything under /proc): an input that
// is read once as it comes, which an index file can record under its
// name only, so that the next such input replaces it.
func isStreamInput(p string) bool {
	if p == "-" {
		return true
	}
	if fi, err := os.Stat(p); err == nil && !fi.IsDir() && !fi.Mode().IsRegular() {
		return true
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return false
	}
	// descriptors, whatever they are open on (/dev/shm is a file
	// system like another)
	return abs == "/dev/stdin" || strings.HasPrefix(abs, "/dev/fd/") || strings.HasPrefix(abs, "/proc/")
}

// streamWhat names the kind of stream input p is, for messages.
func streamWhat(p string) string {
	if p == "-" {
		return "standard input"
	}
	return "a stream (a pipe, device or descriptor)"
}

// indexFileSuffixes are the files an index file FILE has beside it:
// SQLite's FILE-wal and FILE-shm, linkscan's FILE-writers.
var indexFileSuffixes = []string{"", "-wal", "-shm", "-writers"}

// isIndexFile reports whether the output file name out is the index
// file index or one of the files beside it (indexFileSuffixes): the same
// file (through symbolic and hard links) when both exist, else the same
// path once the directory's symbolic links are resolved (an index not
// made yet). An output that is not a regular file (/dev/null) is
// written in place, never renamed over anything: it is none.
func isIndexFile(out, index string) bool {
	ofi, oerr := os.Stat(out)
	if oerr == nil && !ofi.Mode().IsRegular() {
		return false
	}
	for _, suf := range indexFileSuffixes {
		f := index + suf
		if ifi, err := os.Stat(f); err == nil && oerr == nil && os.SameFile(ofi, ifi) {
			return true
		}
		if resolvedPath(out) == resolvedPath(f) {
			return true
		}
	}
	return false
}

// resolvedPath is the absolute path of name with the symbolic links of
// its directory resolved (as far as they can be).
func resolvedPath(name string) string {
	dir := filepath.Dir(name)
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	p, err := filepath.Abs(filepath.Join(dir, filepath.Base(name)))
	if err != nil {
		return filepath.Clean(name)
	}
	return p
}

// fifoSpool opens inputs for a command that reads them twice (index,
// then scan): a FIFO input (a named pipe, a process substitution
// <(zcat a.gz), /dev/stdin on a pipe) is copied to a temporary file in
// dir the first time it is opened, and every open reads that copy,
// under the FIFO's name. A second read of the FIFO itself would find it
// drained (no record, "empty (0 bytes)", exit 0) or, for a named pipe
// whose writer is gone, block for ever. Other inputs go to next.
type fifoSpool struct {
	dir  string
	next func(name string, opts *mailbox.Options) (*mailbox.Reader, error)

	mu     sync.Mutex
	copies map[string]string // FIFO name -> its temporary copy
	open   []*os.File        // the copies' files opened, closed by Close
}

// isFIFO reports whether the input name is a named pipe (followed
// through symbolic links: /dev/fd/63, /dev/stdin).
func isFIFO(name string) bool {
	fi, err := os.Stat(name)
	return err == nil && fi.Mode()&os.ModeNamedPipe != 0
}

// Open opens name: a FIFO from its copy (made at its first open), any
// other input through next.
func (s *fifoSpool) Open(name string, opts *mailbox.Options) (*mailbox.Reader, error) {
	if name == inputs.Stdin || !isFIFO(name) {
		return s.next(name, opts)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tmp, ok := s.copies[name]
	if !ok {
		var err error
		if tmp, err = copyToTemp(name, s.dir); err != nil {
			return nil, &mailbox.InputError{Path: name, Offset: -1, Err: err}
		}
		if s.copies == nil {
			s.copies = map[string]string{}
		}
		s.copies[name] = tmp
	}
	f, err := os.Open(tmp)
	if err != nil {
		return nil, &mailbox.InputError{Path: name, Offset: -1, Err: err}
	}
	r, err := mailbox.NewReader(f, name, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	s.open = append(s.open, f)
	return r, nil
}

// copyToTemp copies what the FIFO name gives, to its end, into a new
// temporary file in dir ("": the system's) and returns the file's name.
func copyToTemp(name, dir string) (string, error) {
	in, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer in.Close()
	f, err := os.CreateTemp(dir, "linkscan-fifo-*")
	if err != nil {
		return "", fmt.Errorf("keeping the pipe's bytes to read them twice: %w", err)
	}
	_, err = io.Copy(f, in)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("keeping the pipe's bytes in %s to read them twice: %w", f.Name(), err)
	}
	return f.Name(), nil
}

// Close closes the copies opened and removes them.
func (s *fifoSpool) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.open {
		f.Close()
	}
	for _, tmp := range s.copies {
		os.Remove(tmp)
	}
}

// worse combines two exit statuses: exitFail (an input not read, output
// not written) above all, else the larger.
func worse(a, b int) int {
	if a == exitFail || b == exitFail {
		return exitFail
	}
	return max(a, b)
}

func runIndex(e *env, args []string) int {
	var file, format, as, tmpDir string
	var quiet bool
	var warnLimit, damageExit int
	memory := sizeFlag(references.DefaultMemoryBudget)
	fs := newFlagSet(cmdIndex, e)
	fs.BoolVar(&quiet, "quiet", false, "no line per problem, only the counts")
	fs.IntVar(&warnLimit, "warn-limit", 10, "lines per problem")
	fs.IntVar(&damageExit, "damage-exit", defaultDamageExit, "exit status when damage was reported")
	fs.StringVar(&file, "index", "", "SQLite index file")
	fs.Var(&memory, "memory", "memory budget of an index without --index")
	fs.StringVar(&tmpDir, "tmpdir", "", "directory for the temporary index")
	fs.StringVar(&format, "format", "text", "text or json")
	fs.StringVar(&as, "as", "", "input format")
	paths, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	paths = inputPaths(e, paths)
	if len(paths) == 0 || (format != "text" && format != "json") {
		fmt.Fprintf(e.stderr, "usage: %s\n", cmdIndex.UsageLine)
		return exitUsage
	}
	if stdoutIsInput(e, append([]string{file}, paths...)) {
		return exitUsage
	}
	if file != "" {
		if msg := indexInInputs(file, paths); msg != "" {
			fmt.Fprintf(e.stderr, "linkscan index: %s\n", msg)
			return exitUsage
		}
		for _, p := range paths {
			if isStreamInput(p) {
				// kept under its name, it would be replaced by the
				// next standard input indexed, silently
				fmt.Fprintf(e.stderr, "linkscan index: %s: %s cannot be kept in the index file %s: its messages could not be found again, and the next one indexed into it would replace them; give the file itself (compressed files are read as they are), or leave out --index to index it in memory\n",
					escape(p), streamWhat(p), escape(file))
				return exitUsage
			}
		}
	}
	if msg := checkRunFlags(0, warnLimit, damageExit, "auto"); msg != "" {
		fmt.Fprintf(e.stderr, "linkscan index: %s\n", msg)
		return exitUsage
	}
	opts := mailbox.Options{TempDir: tmpDir} // long messages from streams wait there
	if as != "" {
		f, ok := parseFormat(as)
		if !ok {
			fmt.Fprintf(e.stderr, "linkscan index: unknown --as %s\n", escape(strconv.Quote(as)))
			return exitUsage
		}
		opts.Format = f
	}
	store, err := openStore(e, "index", refFlags{index: file, memory: int64(memory), tmpDir: tmpDir})
	if err != nil {
		fmt.Fprintf(e.stderr, "linkscan index: %s\n", escape(err.Error()))
		return exitFail
	}
	if os.Getenv("GOGC") == "" {
		// main collects rarely for scan's speed (GOGC 400), which lets
		// the heap grow to five times what is live; what index keeps
		// live is the index itself, so that would multiply it, for no
		// gain: index reads headers only (docs/performance.md,
		// "Reference index memory").
		debug.SetGCPercent(100)
	}
	so := &inputs.Opener{Stdin: e.stdin}
	ix := indexer{con: newConsole(e.stderr), prefix: "linkscan index", problems: true}
	ix.con.quiet, ix.con.limit = quiet, warnLimit
	named := map[string]bool{}
	for _, p := range paths {
		named[p] = true
	}
	open := func(name string, o *mailbox.Options) (*mailbox.Reader, error) {
		r, err := so.Open(name, o)
		if err == nil && r.Empty() && named[name] && !quiet {
			// an input named that holds no message, as scan says it
			// (--quiet: not said, as scan only counts it)
			ix.con.printf("%s: %s: %s", ix.prefix, escape(name), escape(r.FormatReason()))
		}
		return r, err
	}
	run := ix.index(store, paths, opts, open)
	ix.con.summarize(ix.prefix)
	for _, l := range skipLines(run.Passed, "") {
		ix.con.printf("%s: %s", ix.prefix, l)
	}
	if ix.t.unreadable > 0 || ix.t.damaged > 0 {
		ix.con.printf("%s: %s", ix.prefix, ix.t.counts())
	}
	status := ix.t.status(damageExit)
	st, err := store.Stats()
	if err != nil {
		fmt.Fprintf(e.stderr, "linkscan index: %s\n", escape(err.Error()))
		store.Close()
		return exitFail
	}
	var out bytes.Buffer
	if format == "json" {
		out.Write(indexJSON(st, run))
	} else {
		where := "memory (this run only)"
		if file != "" {
			where = file
		}
		fmt.Fprintf(&out, "index              %s\n", where)
		fmt.Fprintf(&out, "added messages     %d\n", run.Messages)
		fmt.Fprintf(&out, "unchanged files    %d (not read again)\n", run.Skipped)
		if run.Pruned > 0 {
			fmt.Fprintf(&out, "removed files      %d (gone from their directories)\n", run.Pruned)
		}
		fmt.Fprintf(&out, "files              %d\n", st.Files)
		if st.Incomplete > 0 {
			fmt.Fprintf(&out, "incomplete files   %d (read again when next given)\n", st.Incomplete)
		}
		fmt.Fprintf(&out, "messages           %d\n", st.Messages)
		fmt.Fprintf(&out, "message-ids        %d distinct\n", st.MessageIDs)
		fmt.Fprintf(&out, "without message-id %d\n", st.Synthetic)
		fmt.Fprintf(&out, "content-ids        %d\n", st.ContentIDs)
		fmt.Fprintf(&out, "newsgroups         %d\n", st.Groups)
		fmt.Fprintf(&out, "articles           %d\n", st.Articles)
	}
	if err := store.Close(); err != nil {
		fmt.Fprintf(e.stderr, "linkscan index: %s\n", escape(err.Error()))
		status = exitFail
	}
	if err := writeOutput(e, "index", out.Bytes()); err != nil {
		return exitFail
	}
	return status
}

// writeOutput writes what a command prints and checks that it was
// written: a full disk is an error, reported on standard error (exit 1);
// a reader that went away (| head) is not.
func writeOutput(e *env, name string, b []byte) error {
	_, err := e.stdout.Write(b)
	if err == nil || isBrokenPipe(err) {
		return nil
	}
	fmt.Fprintf(e.stderr, "linkscan %s: writing standard output: %v\n", name, err)
	if e.out != nil {
		e.out.reported = true
	}
	return err
}

// statusList is the statuses for messages, comma-separated.
func statusList() string {
	var b strings.Builder
	for i, s := range references.Statuses {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(s))
	}
	return b.String()
}
