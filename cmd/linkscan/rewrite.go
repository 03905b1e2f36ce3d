package main

import (
	"bufio"
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
	"strings"

	"github.com/linkscan/linkscan/internal/inputs"
	"github.com/linkscan/linkscan/internal/ordered"
	"github.com/linkscan/linkscan/internal/output"
	"github.com/linkscan/linkscan/internal/writeback"
	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/rewrite"
	"github.com/linkscan/linkscan/scan"
)

var cmdRewrite = &command{
	Name:      "rewrite",
	UsageLine: "linkscan rewrite --rules FILE [flags] PATH...",
	Short:     "rewrite links in archives by rules, keeping every other byte",
	Long: `
Rewrite changes the links of mail and news archives by the rules of a
rules file (docs/rewrite.md) and keeps every other byte of the archive:
the "From " lines, the bytes between messages, headers, line endings,
and every message no rule changes, copied byte for byte. PATH is an
mbox file (mboxo, mboxrd, mboxcl, mboxcl2, MMDF), a single message, a
Maildir, an MH folder, a news spool, or - for standard input. With no
PATH, standard input is read when it is not a terminal.

Where the result goes (one of):

  -o OUT             for one file input: the file OUT; for a directory
                     input, or several inputs: the directory OUT, where
                     each input is mirrored under its base name (only
                     the files that hold messages are written there).
                     OUT may not be an input nor lie inside one
  --in-place         replace each file that changes: the new file is
                     written next to the old one, synced, and renamed
                     over it, so that a crash leaves either the old file
                     or the whole new one. Files nothing changes in are
                     not touched. A Maildir file whose name carries its
                     size (,S=N) or Dovecot's virtual size (,W=N) gets a
                     name with the new file's: the new file is put in
                     place first and the old removed after, so that a
                     crash between the two leaves both
  --backup SUFFIX    with --in-place: keep the old file as FILE+SUFFIX
                     (a hard link, or a copy). Refused for a Maildir,
                     whose readers would take FILE+SUFFIX in cur/ or
                     new/ as one more message: use -o DIR there
  --dry-run          change nothing: print a unified diff of each
                     changed message on standard output
  (none)             the result of file inputs and standard input on
                     standard output

Flags:

  --rules FILE       the rules file (TOML; required)
  --report FILE      write one JSON line per link the rules change,
                     written or skipped (with the reason), with the
                     message's place in the field names of scan's
                     records
  --break-dkim       rewrite bodies covered by a DKIM signature (which
                     then no longer verifies); without it their links
                     are reported as skipped
  --annotate         leave bodies alone and add one header field,
                     X-Linkscan-Rewritten, listing OLD -> NEW
  --headers          rewrite links in header fields too (List-*,
                     Archived-At, Link, Content-Base ...)
  --attachments      rewrite text parts sent as attachments too
` + archiveHelp + `  --no-heuristic     do not join bare URLs broken by a mailer's wrap
  --as FORMAT        force the input format (mbox, mmdf, message,
                     maildir, mh, spool)
  --jobs N           messages worked on in parallel (default: all cores)
  --progress WHEN    auto, always or never (a progress bar on standard
                     error; auto: when it is a terminal that the result
                     is not shown on; as for scan)
  --max-message-size SIZE
                     largest message held in memory whole (default
                     64MiB); a longer one is copied as it is and
                     reported
  --quiet            no line per problem on standard error
  --warn-limit N     print each problem at most N times (default 10);
                     problems are counted by kind and text, numbers and
                     quoted values aside
  --damage-exit N    exit status when damage was reported (default 0:
                     success, counted on standard error; 4 to tell it)

{{sizes}}

Compressed inputs (.gz, .bz2, .xz, .zst) can only be read with --dry-run
(and --report): rewrite does not write compressed files. One inside a
directory is said once (exit 1) and its messages are not rewritten; -o
DIR copies it into the mirror as it is, --in-place leaves it. So is an
Apple Mail .emlx file (unless --as names another format): its first
line counts the message's bytes.

The run ends with its counts on standard error: the messages and links
changed, then the links left as written, by reason ("skipped 8 links: 8
in DKIM-signed messages (--break-dkim)"); --report names each.

{{report-fields}}

Exit status:
  0  done (damage in messages read past is reported on standard error
     and is success: --damage-exit 4 gives it a code of its own)
  1  some input, or some message, could not be read or written (or the
     audit history read for it); each is reported with its place, and
     left as it was (nothing is lost)
  2  usage error, or an error in the rules file (with its line and
     column), or an archive rule without its audit history (--db)
`,
}

func init() { cmdRewrite.Run = runRewrite }

// testWrapOutput, when set (by tests), wraps every output file's writer:
// to inject write failures. testBeforeCopy, when set, is called before an
// input file is opened to be copied: to change it meanwhile.
var (
	testWrapOutput func(w io.Writer) io.Writer
	testBeforeCopy func(path string)
	// testBetweenNames is called after a Maildir file's new name is in
	// place and before its old name is removed.
	testBetweenNames func()
)

type rewriteConfig struct {
	rules, output, backup, report, progress, as string
	inPlace, dryRun                             bool
	opts                                        rewrite.Options
	noHeur, quiet                               bool
	jobs, warnLimit, damageExit                 int
	maxMessage                                  sizeFlag
	archive                                     archiveFlags
}

func runRewrite(e *env, args []string) int {
	c := rewriteConfig{maxMessage: 64 << 20}
	fs := newFlagSet(cmdRewrite, e)
	fs.StringVar(&c.rules, "rules", "", "rules file")
	fs.StringVar(&c.output, "o", "", "output file or directory")
	fs.BoolVar(&c.inPlace, "in-place", false, "replace the input files")
	fs.StringVar(&c.backup, "backup", "", "with --in-place: keep the old file as FILE+SUFFIX")
	fs.BoolVar(&c.dryRun, "dry-run", false, "print a diff, change nothing")
	fs.StringVar(&c.report, "report", "", "JSON lines of the changes")
	fs.BoolVar(&c.opts.BreakDKIM, "break-dkim", false, "rewrite DKIM-signed bodies")
	fs.BoolVar(&c.opts.Annotate, "annotate", false, "add a header listing the changes instead")
	fs.BoolVar(&c.opts.Headers, "headers", false, "rewrite header links too")
	fs.BoolVar(&c.opts.Attachments, "attachments", false, "rewrite text attachments too")
	fs.BoolVar(&c.noHeur, "no-heuristic", false, "no mailer-wrap joins")
	fs.StringVar(&c.as, "as", "", "input format")
	fs.IntVar(&c.jobs, "jobs", 0, "parallel messages")
	fs.StringVar(&c.progress, "progress", "auto", "auto, always or never")
	fs.Var(&c.maxMessage, "max-message-size", "largest message")
	fs.BoolVar(&c.quiet, "quiet", false, "no line per problem")
	fs.IntVar(&c.warnLimit, "warn-limit", 10, "lines per problem text")
	fs.IntVar(&c.damageExit, "damage-exit", defaultDamageExit, "exit status when damage was reported")
	c.archive.register(fs.FlagSet)
	paths, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	paths = inputPaths(e, paths)
	c.opts.Extract.NoHeuristic = c.noHeur
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(e.stderr, "linkscan rewrite: %s\n", escape(fmt.Sprintf(format, a...)))
		return exitUsage
	}
	if c.rules == "" {
		return usageErr("--rules FILE is required")
	}
	if len(paths) == 0 {
		return usageErr("no PATH given (use - for standard input)")
	}
	modes := 0
	for _, b := range []bool{c.output != "", c.inPlace, c.dryRun} {
		if b {
			modes++
		}
	}
	if modes > 1 {
		return usageErr("-o, --in-place and --dry-run go alone")
	}
	if c.backup != "" && !c.inPlace {
		return usageErr("--backup goes with --in-place")
	}
	if c.backup != "" && (strings.ContainsRune(c.backup, '/') || c.backup == ".") {
		return usageErr("--backup SUFFIX may not hold a /")
	}
	if c.backup != "" && strings.Trim(c.backup, "0123456789") == "" {
		return usageErr("--backup SUFFIX may not be digits only: in an MH folder or news spool FILE%s would be another message's name", c.backup)
	}
	if c.backup != "" {
		for _, p := range paths {
			if p == inputs.Stdin {
				continue
			}
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
				// beside the file itself, as the backup is made
				real := p
				if r, err := filepath.EvalSymlinks(p); err == nil {
					real = r
				}
				if _, err := os.Lstat(real + c.backup); err == nil {
					return usageErr("--backup %s: %s exists already (an older backup, or another file): it would not be replaced; remove it or choose another suffix", c.backup, real+c.backup)
				}
			}
		}
		for _, p := range paths {
			d := writeback.MaildirIn(p)
			if r, err := filepath.EvalSymlinks(p); d == "" && err == nil {
				d = writeback.MaildirIn(r) // a link into a Maildir
			}
			if d != "" {
				return usageErr("--backup cannot be used on a Maildir (%s): every Maildir reader would take FILE%s as one more message; use -o DIR to write the rewritten mail elsewhere and keep the old as it is", d, c.backup)
			}
		}
	}
	if msg := checkRunFlags(c.jobs, c.warnLimit, c.damageExit, c.progress); msg != "" {
		return usageErr("%s", msg)
	}
	var format mailbox.Format
	if c.as != "" {
		f, ok := parseFormat(c.as)
		if !ok || f == mailbox.FormatText {
			return usageErr("unknown --as %q (want mbox, mmdf, message, maildir, mh or spool)", c.as)
		}
		format = f
	}
	if !c.dryRun {
		// a Maildir's tmp/ (a glob Maildir/* gives it) holds messages
		// still being written by an MDA: never rewritten
		for _, p := range paths {
			if p == inputs.Stdin {
				continue
			}
			if d := writeback.MaildirTmp(p); d != "" {
				return usageErr("%s: %s is a Maildir's tmp/, where messages are being delivered: it is never rewritten (give the Maildir itself, or its cur/ and new/)", p, d)
			}
		}
	}
	if !c.dryRun {
		// a device or a FIFO would be read without end (/dev/zero),
		// with --in-place then replaced by a regular file (/dev/full);
		// and the write-back opens each input a second time to copy
		// it, which blocks for ever on a FIFO whose writer is gone:
		// refused at once, before anything opens it
		for _, p := range paths {
			if p == inputs.Stdin {
				continue
			}
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() && !fi.Mode().IsRegular() {
				if c.inPlace {
					return usageErr("--in-place replaces regular files and the files in directories: %s is %s; give its content as - (standard input) with -o or standard output", p, fileKindOf(fi.Mode()))
				}
				return usageErr("%s is %s: rewrite copies its input twice and reads only regular files and directories; give it as - (standard input: spooled)", p, fileKindOf(fi.Mode()))
			}
		}
	}
	// where the results go
	stdins := 0
	dirs := 0
	for _, p := range paths {
		if p == inputs.Stdin {
			stdins++
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			continue // reported as unreadable when read
		}
		if fi.IsDir() {
			if why := gitArchive(p); why != "" {
				return usageErr("%s", why)
			}
			dirs++
		} else if !c.dryRun && compressed(p) {
			return usageErr("%s: a compressed input can only be read with --dry-run: decompress it first", p)
		} else if !c.dryRun && format == mailbox.FormatAuto && emlx(p) {
			return usageErr("%s: an Apple Mail .emlx input can only be read with --dry-run: its first line counts the message's bytes, which a rewrite would change", p)
		}
	}
	if stdins > 1 {
		return usageErr("standard input (-) given twice")
	}
	// the same file twice would be written twice (in place: from its old
	// bytes); two inputs of one base name would meet in -o DIR
	bases := map[string]string{}
	var seen []os.FileInfo
	for _, p := range paths {
		fi, err := os.Stat(p)
		if p == inputs.Stdin || err != nil {
			continue
		}
		for _, o := range seen {
			if os.SameFile(o, fi) {
				return usageErr("%s is given twice", p)
			}
		}
		seen = append(seen, fi)
		if q := holder(p, paths); q != "" {
			return usageErr("%s is given twice: it is in %s, given too", p, q)
		}
		b := filepath.Base(filepath.Clean(p))
		if q, ok := bases[b]; ok && c.output != "" && len(paths) > 1 {
			return usageErr("-o DIR: %s and %s would both be written as %s", q, p, filepath.Join(c.output, b))
		}
		bases[b] = p
	}
	if c.inPlace && stdins > 0 {
		return usageErr("--in-place cannot replace standard input: use -o or standard output")
	}
	outDir := false
	switch {
	case c.output != "":
		outDir = len(paths) > 1 || dirs > 0
		if fi, err := os.Stat(c.output); err == nil && fi.IsDir() {
			outDir = true
		}
		if outDir && stdins > 0 {
			return usageErr("-o %s: a directory output is for file and directory inputs, not standard input", c.output)
		}
		if err := output.CheckInputs(c.output, paths); err != nil {
			return usageErr("-o %s: %v", c.output, err)
		}
		if sameOrWithin(c.output, c.rules) {
			return usageErr("-o %s: the output may not be the rules file", c.output)
		}
		if outDir {
			if err := writeback.CheckMirror(c.output, paths); err != nil {
				return usageErr("-o %s: %v", c.output, err)
			}
			// the rules file where the mirror writes
			for _, p := range paths {
				if writeback.CheckMirror(filepath.Join(c.output, filepath.Base(filepath.Clean(p))), []string{c.rules}) != nil {
					return usageErr("-o %s: the mirror of %s would hold the rules file %s", c.output, p, c.rules)
				}
			}
		} else if writeback.CheckMirror(c.output, []string{c.rules}) != nil {
			return usageErr("-o %s: the output may not be the rules file", c.output)
		}
	case !c.inPlace && !c.dryRun && dirs > 0:
		return usageErr("a directory input needs -o DIR, --in-place or --dry-run")
	}
	if c.report != "" {
		if err := output.CheckInputs(c.report, append(append([]string{}, paths...), c.rules)); err != nil {
			return usageErr("--report %s: %v", c.report, err)
		}
		if writeback.CheckMirror(c.report, []string{c.rules}) != nil {
			return usageErr("--report %s: it may not be the rules file", c.report)
		}
		if c.output != "" {
			// the report may not be the mail output, nor lie in it
			if output.CheckInputs(c.report, []string{c.output}) != nil || writeback.CheckMirror(c.output, []string{c.report}) != nil {
				return usageErr("--report %s: it may not be the -o output %s or lie inside it", c.report, c.output)
			}
		}
	}
	if stdoutIsInput(e, append([]string{c.rules}, paths...)) {
		return exitUsage
	}
	if e.setMemoryLimit != nil {
		// a large rules file is parsed under a limit: with main's
		// rare collections its garbage would otherwise peak at 80 MB
		// for 100,000 rules (docs/performance.md, "rewrite")
		e.setMemoryLimit(rulesParseLimit)
	}
	rules, err := rewrite.Load(c.rules)
	if err != nil {
		for _, l := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(e.stderr, "linkscan rewrite: %s\n", escape(l))
		}
		return exitUsage
	}
	hist, err := c.archive.open(rules)
	if err != nil {
		var ue *archiveUsageError
		if errors.As(err, &ue) {
			return usageErr("%v", err)
		}
		fmt.Fprintf(e.stderr, "linkscan rewrite: %s\n", escape(err.Error()))
		return exitFail
	}
	if hist != nil {
		defer hist.Close()
		c.opts.Archive = hist
	}
	if rules.Len() > 1000 {
		// the parser's garbage (the file, its syntax tree) goes back to
		// the system before the messages come
		debug.FreeOSMemory()
	}
	if e.setMemoryLimit != nil {
		// as scan's, over what the rules keep (100,000 rules: some 30
		// MB), lest the collector run without end near the limit
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		floor := max(scanMemoryLimit, rewriteHeadroom+int64(ms.HeapAlloc))
		e.setMemoryLimit(floor)
		// raised over the live heap when one message needs more
		defer followHeap(e.setMemoryLimit, floor)()
	}
	r := &rewriter{c: &c, e: e, rules: rules, paths: paths, outDir: outDir, format: format}
	return r.run()
}

// holder returns the directory among paths that p lies in (symbolic
// links resolved), or "": the files of p would be read and written twice.
func holder(p string, paths []string) string {
	rp, err := realPath(p)
	if err != nil {
		return ""
	}
	for _, q := range paths {
		if q == inputs.Stdin {
			continue
		}
		rq, err := realPath(q)
		if err == nil && strings.HasPrefix(rp, strings.TrimSuffix(rq, string(filepath.Separator))+string(filepath.Separator)) {
			return q
		}
	}
	return ""
}

// realPath is the absolute path of p with its symbolic links resolved.
func realPath(p string) (string, error) {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	return filepath.Abs(r)
}

// sameOrWithin reports whether the file name is the file or directory
// other (by identity, through symbolic and hard links, or by its path
// with symbolic links resolved) or lies inside it: a report or output
// that would be written over it.
func sameOrWithin(name, other string) bool {
	if other == "" {
		return false
	}
	return output.CheckInputs(name, []string{other}) != nil || writeback.CheckMirror(other, []string{name}) != nil
}

// filterCacheDir is the rules cache directory of filter's --rules-cache
// value dir ("" for rewrite.DefaultCacheDir; "" when there is none).
func filterCacheDir(dir string) string {
	if dir == "" {
		dir, _ = rewrite.DefaultCacheDir()
	}
	return dir
}

// Soft memory limits of rewrite (main's collector runs rarely): while the
// rules file is parsed, and over the heap the rules keep while messages
// are rewritten (at least scan's limit).
const (
	rulesParseLimit = 48 << 20
	rewriteHeadroom = 24 << 20
)

// compressed reports whether the file starts as a gzip, bzip2, xz or
// zstd stream does.
func compressed(p string) bool {
	return headOf(p, func(h []byte) bool {
		return bytes.HasPrefix(h, []byte{0x1f, 0x8b}) || bytes.HasPrefix(h, []byte("BZh")) ||
			bytes.HasPrefix(h, []byte{0xfd, '7', 'z', 'X', 'Z', 0}) || bytes.HasPrefix(h, []byte{0x28, 0xb5, 0x2f, 0xfd})
	})
}

// emlx reports whether the file at p is an Apple Mail .emlx file, whose
// first line counts the bytes of the message after it: a message
// rewritten to another length would leave the count wrong, and Apple
// Mail would read the file wrong, so such a file is treated as a
// compressed one (read, not rewritten).
func emlx(p string) bool { return headOf(p, mailbox.IsEmlx) }

// headOf reports what is says of the first 4 KiB of the file at p (false
// when it cannot be read).
func headOf(p string, is func([]byte) bool) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [4096]byte
	n, _ := io.ReadFull(f, b[:])
	return is(b[:n])
}

// rwItem is one message (or an input's error) on its way through the
// pipeline.
type rwItem struct {
	m       *mailbox.Message
	root    string           // the input it came from
	out     []byte           // its new bytes (m.Raw when nothing is written)
	changes *rewrite.Changes // compact: held from the worker to the writer
	written bool             // some change is written into out
	err     error
	quiet   bool          // err was said once for the whole file: no line of its own
	inErr   error         // the input could not be read (further); m may be nil
	skip    *mailbox.Skip // an entry of a directory passed over
	end     bool          // the end of input root
}

// rewriter is one run of the command.
type rewriter struct {
	c      *rewriteConfig
	e      *env
	rules  *rewrite.Rules
	paths  []string
	outDir bool
	format mailbox.Format

	con    *console
	opener *inputs.Opener
	t      tally
	failed int // messages that could not be rewritten or written
	// files that could not be written (or copied), each said in one line
	filesFailed int
	report      *output.File
	repW        *bufio.Writer
	stdout      *bufio.Writer // the result on standard output (no -o, --in-place, --dry-run)
	diff        *bufio.Writer // --dry-run's diffs

	cur     *fileOut   // the file being written
	written int        // messages changed
	links   int        // links written
	skips   skipCounts // links skipped, by class
}

func (r *rewriter) run() int {
	c := r.c
	prefix := "linkscan rewrite"
	r.con = newConsole(r.e.stderr)
	r.con.quiet, r.con.limit = c.quiet, c.warnLimit
	r.opener = &inputs.Opener{Stdin: r.e.stdin, Spool: !c.dryRun}
	defer r.opener.Close()
	if c.report != "" {
		f, err := output.Create(c.report)
		if err != nil {
			r.con.printf("%s: %v", prefix, err)
			return exitFail
		}
		defer f.Abort()
		defer removeOnSignal(f)()
		r.report, r.repW = f, bufio.NewWriterSize(f, 64<<10)
	}
	var out io.Writer // standard output, when results go there
	if c.dryRun || c.output == "" && !c.inPlace {
		out = resultWriter(r.con, r.e.stdout, r.e.stderr)
	}
	if c.dryRun {
		r.diff = bufio.NewWriterSize(out, 64<<10)
	} else if out != nil {
		r.stdout = bufio.NewWriterSize(out, 64<<10)
	}
	if wantBar(c.progress, out, r.e.stderr) {
		r.con.bar = newBar(r.paths, r.e.stderr)
	}
	mopts := mailbox.Options{Format: r.format, MaxMessageSize: int64(c.maxMessage), DeferParse: true}
	var writeErr error
	read := func(f *ordered.Feed[rwItem]) {
		// entries of directories passed over come in order with the
		// messages: an unreadable folder or a dangling link is said
		// and counted as an input not read, the others counted
		var root string
		mopts.OnSkip = func(sk mailbox.Skip) {
			var ie *mailbox.InputError
			if sk.Err != nil && errors.As(sk.Err, &ie) {
				return // Next returns it as well
			}
			it := f.Slot()
			*it = rwItem{root: root, skip: &sk}
			f.Commit(0)
		}
		var prog scan.Progress
		if r.con.bar != nil {
			prog = r.con
		}
		scan.ReadInputs(f, r.paths, &scan.Inputs[rwItem]{
			Open: func(in string) (*mailbox.Reader, error) {
				rd, err := r.opener.Open(in, &mopts)
				if err == nil && rd.Empty() && !c.quiet {
					// an input named that holds no message, as scan says
					r.con.printf("%s: %s: %s", prefix, in, rd.FormatReason())
				}
				return rd, err
			},
			Progress: prog,
			Begin:    func(in string) { root = in },
			Message:  func(it *rwItem, in string, m *mailbox.Message) { *it = rwItem{m: m, root: in} },
			Err:      func(it *rwItem, in string, err error) { *it = rwItem{root: in, inErr: err} },
			End:      func(it *rwItem, in string) { *it = rwItem{root: in, end: true} },
		})
	}
	work := func(it *rwItem) {
		if it.m == nil {
			return
		}
		it.m.Parse()
		if unreadableFile(it.m, it.m.Problems) {
			return
		}
		it.out, it.changes, it.err = r.rules.MessageChanges(it.m, &c.opts)
		for ch := range it.changes.All() {
			if ch.Skipped == "" {
				it.written = true
				break
			}
		}
		if it.err != nil {
			it.written = false
		}
	}
	reset := func(it *rwItem) {
		if it.m != nil {
			it.m.Release()
		}
		*it = rwItem{}
	}
	o := ordered.Options{Jobs: c.jobs, InFlightBytes: 16 << 20, HoldUntilEmitted: true}
	err := ordered.Run(o, read, work, func(it *rwItem) error {
		if err := r.emit(it); err != nil {
			writeErr = err
			return err
		}
		return nil
	}, reset)
	if err == nil {
		err = r.finishFile()
	}
	if err != nil && writeErr == nil {
		writeErr = err
	}
	for _, w := range []*bufio.Writer{r.stdout, r.diff} {
		if w != nil {
			if err := w.Flush(); err != nil && writeErr == nil {
				writeErr = err
			}
		}
	}
	if err := flushResults(out); err != nil && writeErr == nil {
		writeErr = err
	}
	if r.cur != nil {
		r.cur.abort()
		r.cur = nil
	}
	r.con.finish()
	r.con.summarize(prefix)
	if r.report != nil {
		err := r.repW.Flush()
		if err == nil {
			err = r.report.Commit()
		}
		if err != nil {
			r.con.printf("%s: writing %s: %v", prefix, c.report, err)
			r.filesFailed++ // exit 1; the inputs were read
		}
	}
	if writeErr != nil {
		r.e.out.reported = true
		if !isBrokenPipe(writeErr) {
			r.con.printf("%s: %v", prefix, writeErr)
			r.t.writeErr = writeErr
		}
	}
	verb := "changed"
	if c.dryRun {
		verb = "would change"
	}
	if writeErr != nil && r.stdout != nil && r.written > 0 {
		// standard output failed: what reached it is not known
		r.con.printf("%s: standard output failed: the %s changed may not all have reached it", prefix, plural(r.written, "message", "messages"))
	} else if r.written > 0 || c.dryRun || c.report != "" {
		r.con.printf("%s: %s %s (%s)", prefix, verb, plural(r.written, "message", "messages"), plural(r.links, "link", "links"))
	}
	if l := r.skips.line(); l != "" {
		r.con.printf("%s: %s", prefix, l)
	}
	if r.failed > 0 {
		was := "they were"
		if r.failed == 1 {
			was = "it was"
		}
		r.con.printf("%s: %s left as %s (see above)", prefix, plural(r.failed, "message", "messages"), was)
	}
	for _, l := range skipLines(r.t.skipped, "") {
		r.con.printf("%s: %s", prefix, l)
	}
	if r.t.unreadable > 0 || r.t.damaged > 0 {
		r.con.printf("%s: %s", prefix, r.t.counts())
	}
	code := r.t.status(c.damageExit)
	if (r.failed > 0 || r.filesFailed > 0) && code != exitFail {
		code = exitFail
	}
	return code
}

// where names a message on standard error and in the diff.
func where(m *mailbox.Message) string {
	s := fmt.Sprintf("%s#%d", m.Path, m.Offset)
	if m.MessageID != "" {
		s += " <" + m.MessageID + ">"
	}
	return s
}

// emit handles one item in input order: messages are written into their
// file's output, diffs and report lines printed.
func (r *rewriter) emit(it *rwItem) error {
	prefix := "linkscan rewrite"
	if it.end {
		return r.endInput(it.root)
	}
	if sk := it.skip; sk != nil {
		if sk.Err != nil {
			r.con.printf("%s: %s", prefix, sk)
			r.t.unreadable++
		} else {
			if r.t.skipped == nil {
				r.t.skipped = map[mailbox.SkipKind]int{}
			}
			r.t.skipped[sk.Kind]++
		}
		return nil
	}
	if ie := (*mailbox.InputError)(nil); it.inErr != nil && it.m == nil && errors.As(it.inErr, &ie) && writeback.EmptyMaildirSub(ie.Path) {
		return nil // an empty cur/ or new/: read, nothing in it
	}
	if it.inErr != nil {
		r.con.printf("%s: %v", prefix, it.inErr)
		r.t.unreadable++
		if it.m == nil {
			return nil
		}
	}
	m := it.m
	if unreadableFile(m, m.Problems) && writeback.EmptyMaildirSub(m.Path) {
		return nil // an empty cur/ or new/: read, nothing in it
	}
	if unreadableFile(m, m.Problems) {
		r.t.unreadable++
		r.con.printf("%s: %v", prefix, m.Problems[0].Err)
		return nil
	}
	r.t.messages++
	if len(m.Problems) > 0 {
		damage := 0
		for i, p := range m.Problems {
			if slices.Contains(m.Problems[:i], p) {
				continue // each walk of the parts (a check reads them again) adds their damage
			}
			if errors.Is(p, mailbox.ErrUnreadable) {
				r.t.unreadable++
				r.con.printf("%s: %s: %s", prefix, m.Path, p.Msg)
				continue
			}
			damage++
			r.con.damage(p, fmt.Sprintf("%s: %s", where(m), p))
		}
		if damage > 0 {
			r.t.damaged++
			r.t.problems += damage
		}
	}
	if r.c.dryRun {
		if it.written && it.err == nil {
			if err := r.writeDiff(m, it.out); err != nil {
				return err
			}
		}
	} else if r.stdout != nil || r.c.output != "" || it.written {
		if err := r.toFile(it); err != nil {
			return err
		}
		if fo := r.cur; it.written && it.err == nil && fo != nil && fo.path == m.Path && fo.dead {
			it.err, it.quiet = fo.deadErr, true // the file failed on this message
		}
	}
	// the file's counts, taken back when it fails after all
	var fo *fileOut
	if r.cur != nil && r.cur.path == m.Path && !r.cur.dead && !r.cur.stream() {
		fo = r.cur
	}
	status := "written"
	if it.err != nil {
		status = "not written"
		r.failed++
		if !it.quiet {
			r.con.printf("%s: %s: %v", prefix, where(m), it.err)
		}
	} else if it.written {
		r.written++
		if fo != nil {
			fo.nWritten++
		}
	}
	for lc := range it.changes.All() {
		ch := &lc
		if ch.Skipped == "" && status == "written" && !ch.Annotated {
			r.links++
			if fo != nil {
				fo.nLinks++
			}
		}
		if ch.Skipped != "" {
			r.skips.add(ch.Skipped)
		}
		if r.repW != nil {
			if err := r.reportLine(m, ch, status, it.err); err != nil {
				return fmt.Errorf("writing %s: %w", r.c.report, err)
			}
		}
	}
	if r.con.bar != nil {
		r.con.describe(fmt.Sprintf("%d messages, %d changed", r.t.messages, r.written))
	}
	return nil
}

// endInput finishes the output of a file input, which gets all of its
// bytes even when no message was read from it (blank lines only, or a
// file that is not mail).
func (r *rewriter) endInput(root string) error {
	if r.c.dryRun || r.c.inPlace {
		return nil
	}
	if root != inputs.Stdin {
		fi, err := os.Stat(root)
		if err != nil {
			return nil
		}
		if fi.IsDir() {
			writeback.MirrorMaildir(r.c.output, root)
			return nil
		}
	}
	if r.cur != nil && r.cur.path != root {
		if err := r.finishFile(); err != nil {
			return err
		}
	}
	if r.cur == nil {
		fo, err := r.beginFile(root, root)
		if err != nil {
			if isBrokenPipe(err) {
				return err
			}
			r.con.printf("linkscan rewrite: %s: %v", root, err)
			r.filesFailed++
			return nil
		}
		r.cur = fo
	}
	return r.finishFile()
}

// toFile brings the output of m's file up to date with m: the bytes
// before it are copied from the file, and m is written anew when it
// changed. A file's output is begun at its first message that needs it.
func (r *rewriter) toFile(it *rwItem) error {
	m := it.m
	if r.cur != nil && r.cur.path != m.Path {
		if err := r.finishFile(); err != nil {
			return err
		}
	}
	if r.cur == nil {
		fo, err := r.beginFile(it.root, m.Path)
		if err != nil {
			if isBrokenPipe(err) {
				return err
			}
			// the file cannot be written: its messages stay as they
			// were, said once for the file
			r.con.printf("linkscan rewrite: %s: %v", m.Path, err)
			r.filesFailed++
			fo = &fileOut{path: m.Path, dead: true, deadErr: err}
		}
		r.cur = fo
	}
	fo := r.cur
	if fo.dead || fo.raw {
		if it.written {
			it.err, it.quiet = fo.deadErr, true
		}
		return nil
	}
	if !it.written {
		return nil // copied from the file with what follows
	}
	differs, err := fo.wb.Replace(m, it.out)
	if differs {
		// the file is not what was read (it changed, or the reader kept
		// it otherwise): the message went out as the file has it
		it.err = errors.New("the file's bytes differ from what was read (changed meanwhile?); left as it was")
	}
	if err != nil {
		return r.fileFailed(err)
	}
	return nil
}

// fileFailed gives up the output of the current file: the file (or the
// -o target) stays as it was, and every message of it counts as left.
func (r *rewriter) fileFailed(err error) error {
	fo := r.cur
	if fo.stream() {
		return err // standard output: the run ends
	}
	r.con.printf("linkscan rewrite: writing %s: %v; %s is left as it was", fo.wb.Name(), err, fo.wb.Target())
	fo.abort()
	fo.dead, fo.deadErr = true, fmt.Errorf("its file could not be written (%w); left as it was", err)
	r.filesFailed++
	r.uncount(fo)
	return r.fileNotWritten(fo.path, err)
}

// uncount takes back the messages and links of file fo counted as
// written: the file was not written after all. Its messages count as
// left as they were.
func (r *rewriter) uncount(fo *fileOut) {
	r.written -= fo.nWritten
	r.links -= fo.nLinks
	r.failed += fo.nWritten
	fo.nWritten, fo.nLinks = 0, 0
}

// fileNotWritten adds a line to --report saying that no change of the
// file path was written after all (lines above may say written).
func (r *rewriter) fileNotWritten(path string, err error) error {
	if r.repW == nil {
		return nil
	}
	enc := json.NewEncoder(r.repW)
	enc.SetEscapeHTML(false)
	if werr := enc.Encode(&changeLine{Path: path, Offset: -1, Status: "file-not-written", Reason: err.Error()}); werr != nil {
		return fmt.Errorf("writing %s: %w", r.c.report, werr)
	}
	return nil
}

// fileOut is the output of one input file: its write-back, and what
// the run counts of it.
type fileOut struct {
	path    string          // the file read
	wb      *writeback.File // nil when its output could not be begun
	dead    bool            // could not be written: its messages are left alone
	deadErr error           // why, for its messages' report lines
	raw     bool            // copied byte for byte (a compressed file in -o DIR)
	// counted as written so far, taken back if the file fails
	nWritten, nLinks int
}

// stream reports whether the file's output is standard output.
func (fo *fileOut) stream() bool { return fo.wb != nil && fo.wb.Target() == "" }

// abort gives up the file's output: the target stays as it was.
func (fo *fileOut) abort() {
	if fo.wb != nil {
		fo.wb.Abort()
	}
}

func (r *rewriter) beginFile(root, path string) (*fileOut, error) {
	src := path
	if path == inputs.Stdin {
		rc, err := r.opener.OpenText(inputs.Stdin) // the spool
		if err != nil {
			return nil, err
		}
		f, ok := rc.(*os.File)
		if !ok {
			rc.Close()
			return nil, errors.New("standard input was not spooled")
		}
		return r.newFileOut(path, f, root)
	}
	if testBeforeCopy != nil {
		testBeforeCopy(src)
	}
	f, err := os.Open(src)
	if err != nil {
		return nil, err
	}
	if compressed(src) {
		if r.c.output == "" || r.c.inPlace {
			f.Close()
			return nil, errors.New("a compressed file cannot be rewritten: decompress it first")
		}
		// -o DIR: the mirror gets the file byte for byte, unrewritten
		fo, err := r.newFileOut(path, f, root)
		if err != nil {
			return nil, err
		}
		r.con.printf("linkscan rewrite: %s: a compressed file cannot be rewritten: copied as it is (decompress it first to rewrite it)", path)
		r.filesFailed++
		fo.raw, fo.deadErr = true, errors.New("a compressed file cannot be rewritten: copied as it is")
		return fo, nil
	}
	if r.format == mailbox.FormatAuto && emlx(src) { // --as says what the file is
		if r.c.output == "" || r.c.inPlace {
			f.Close()
			return nil, errors.New("an Apple Mail .emlx file is not rewritten: its first line counts the message's bytes")
		}
		// -o DIR: the mirror gets the file byte for byte, unrewritten
		fo, err := r.newFileOut(path, f, root)
		if err != nil {
			return nil, err
		}
		r.con.printf("linkscan rewrite: %s: an Apple Mail .emlx file is not rewritten (its first line counts the message's bytes): copied as it is", path)
		r.filesFailed++
		fo.raw, fo.deadErr = true, errors.New("an Apple Mail .emlx file is not rewritten: copied as it is")
		return fo, nil
	}
	return r.newFileOut(path, f, root)
}

// newFileOut begins the output of the file path (of the input root),
// read from src, where the flags send it.
func (r *rewriter) newFileOut(path string, src *os.File, root string) (*fileOut, error) {
	if r.stdout != nil {
		return &fileOut{path: path, wb: writeback.NewStream(path, src, r.stdout)}, nil
	}
	o := writeback.Options{Guard: removeOnSignal, Wrap: testWrapOutput, BetweenNames: testBetweenNames}
	var target string
	switch {
	case r.c.inPlace:
		target, o.InPlace, o.Backup = path, true, r.c.backup
	case !r.outDir:
		target = r.c.output
	default:
		var err error
		if target, err = writeback.Mirror(r.c.output, root, path); err != nil {
			src.Close()
			return nil, err
		}
	}
	wb, err := writeback.Create(path, src, target, &o)
	if err != nil {
		return nil, err
	}
	return &fileOut{path: path, wb: wb}, nil
}

// finishFile copies the rest of the current file and puts its output in
// place.
func (r *rewriter) finishFile() error {
	fo := r.cur
	if fo == nil {
		return nil
	}
	r.cur = nil
	if fo.dead {
		fo.abort()
		return nil
	}
	if err := fo.wb.Flush(); err != nil {
		if fo.stream() {
			fo.abort()
			return err
		}
		r.cur = fo
		err = r.fileFailed(err)
		r.cur = nil
		return err
	}
	res, err := fo.wb.Commit()
	if res.SizesKept {
		const msg = "the size in the name (,S= or ,W=) is not a number, is written twice, or would go below zero: the name is left as it is"
		r.con.problem(msg, fmt.Sprintf("linkscan rewrite: %s: %s", fo.wb.Target(), msg))
	}
	if err == nil {
		return nil
	}
	if be := (*writeback.BackupError)(nil); errors.As(err, &be) || errors.Is(err, writeback.ErrChanged) || errors.Is(err, writeback.ErrLocked) {
		r.con.printf("linkscan rewrite: %s: %v; the file is left as it was", fo.wb.Target(), err)
	} else {
		r.con.printf("linkscan rewrite: writing %s: %v", res.Name, err)
	}
	r.filesFailed++
	r.uncount(fo)
	return r.fileNotWritten(fo.path, err)
}

// fileKindOf names a file type that is not a regular file or directory,
// in the words of the readers (mailbox.FileKind).
func fileKindOf(m os.FileMode) string { return mailbox.FileKind(m) }
