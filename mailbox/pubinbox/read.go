package pubinbox

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/linkscan/linkscan/mailbox"
)

func init() { mailbox.RegisterDirReader(open) }

// open is the mailbox.DirReader of public-inbox archives.
func open(dir string, opts *mailbox.Options) (mailbox.Source, mailbox.Format, string, bool, error) {
	l, ok, err := detect(dir)
	if !ok || err != nil {
		return nil, "", "", ok, err
	}
	return &Source{l: l, opts: *opts}, mailbox.FormatPublicInbox, l.reason, true, nil
}

// window is how many blobs are asked of git cat-file before the first
// is read: enough to keep git busy while a message is parsed, and few
// enough that the requests (at most 67 bytes each, under 9 KiB in all) always
// fit in a pipe's buffer (16 KiB at the least where linkscan runs), so
// that writing them never waits for git to be read.
const window = 128

// Source reads the messages of one archive, epoch after epoch; it is
// the mailbox.Source that mailbox.Open returns a Reader of.
type Source struct {
	l       layout
	opts    mailbox.Options
	next    int              // the epoch to read after cur
	cur     *epochReader     // nil between epochs
	deleted map[oid]struct{} // of a v2 inbox, across its epochs
	closed  bool
}

// oid is an object id in binary, SHA-1 or SHA-256.
type oid [32]byte

func parseOID(s string) (oid, bool) {
	var o oid
	if (len(s) != 40 && len(s) != 64) || !isHex(s) {
		return o, false
	}
	hex.Decode(o[:], []byte(s))
	return o, true
}

// Next returns the next message: every message of each epoch reachable
// from its head, once, oldest commit first, the epochs in order. A
// message whose blob is missing or damaged, and an epoch that git
// cannot walk, come as a message with one problem (mailbox.ErrUnreadable,
// the object id or the git error in its text); reading goes on.
func (s *Source) Next() (*mailbox.Message, error) {
	for {
		if s.closed {
			return nil, io.EOF
		}
		if s.cur == nil {
			if s.next >= len(s.l.epochs) {
				return nil, io.EOF
			}
			e := s.l.epochs[s.next]
			s.next++
			er, m := s.openEpoch(e)
			if m != nil {
				return m, nil
			}
			s.cur = er
			continue
		}
		m, done := s.cur.next()
		if done {
			s.cur.close()
			s.cur = nil
		}
		if m != nil {
			return m, nil
		}
	}
}

// Close stops the git commands still running.
func (s *Source) Close() error {
	s.closed = true
	if s.cur != nil {
		s.cur.close()
		s.cur = nil
	}
	return nil
}

// openEpoch starts reading epoch e: nil and nil when it holds nothing
// to read (no commit, or nothing new since Options.EpochSince's
// commit), a message with the problem when git fails on it.
func (s *Source) openEpoch(e epoch) (*epochReader, *mailbox.Message) {
	fail := func(err error) (*epochReader, *mailbox.Message) {
		return nil, mailbox.NewUnreadable(e.path, mailbox.FormatPublicInbox, err)
	}
	head, err := headOf(e.path)
	if err != nil {
		return fail(err)
	}
	since := ""
	if s.opts.EpochSince != nil && head != "" {
		since = s.opts.EpochSince(e.path, head)
		if since == head {
			return nil, nil
		}
		if since != "" && !isAncestor(e.path, since, head) {
			since = "" // history rewritten, or not this repository's: all again
		}
	}
	if s.opts.OnFile != nil {
		fi, _ := os.Stat(e.path)
		reason := fmt.Sprintf("public-inbox %s epoch, up to commit %s", e.kind, head)
		switch {
		case head == "":
			reason = "public-inbox epoch without commits"
		case since != "":
			reason = fmt.Sprintf("public-inbox %s epoch, commits after %s up to %s", e.kind, since, head)
		}
		s.opts.OnFile(mailbox.FileRead{Path: e.path, Info: fi, Format: mailbox.FormatPublicInbox, Reason: reason, Head: head, Since: since})
	}
	if head == "" {
		return nil, nil
	}
	if e.kind == 0 {
		if e.kind, err = kindOf(e.path, head); err != nil {
			return fail(err)
		}
		if e.kind == 0 {
			return fail(fmt.Errorf("commit %s holds neither a public-inbox v2 message (\"m\") nor v1 messages (hash paths)", head))
		}
	}
	del := s.deleted
	if !s.l.inbox || del == nil {
		eps := []epoch{e}
		if s.l.inbox {
			eps = s.l.epochs
		}
		del = deletions(eps)
		if s.l.inbox {
			s.deleted = del
		}
	}
	er, err := startEpoch(e, head, since, del, &s.opts)
	if err != nil {
		return fail(err)
	}
	return er, nil
}

// isAncestor reports whether commit a is in the history of commit b.
func isAncestor(dir, a, b string) bool {
	_, err := gitOutput(dir, "merge-base", "--is-ancestor", a, b)
	return err == nil
}

// logArgs are the git log arguments that list the blobs each commit
// adds, as raw diff lines ":MODE MODE OLD NEW STATUS\tPATH": full ids,
// the root commit against nothing, a merge against each parent (-m),
// no rename detection.
var logArgs = []string{"log", "--no-abbrev", "--raw", "--root", "-m", "--no-renames", "--format="}

// deletions returns the blobs that the epochs delete: in v2, what a
// commit's "d" holds; in v1, a message file removed or replaced. An
// epoch that git cannot walk adds none: reading it reports why.
func deletions(eps []epoch) map[oid]struct{} {
	del := map[oid]struct{}{}
	for _, e := range eps {
		head, err := headOf(e.path)
		if err != nil || head == "" {
			continue
		}
		k := e.kind
		if k == 0 {
			if k, err = kindOf(e.path, head); err != nil {
				continue
			}
		}
		args := append(logArgs[:len(logArgs):len(logArgs)], "--diff-filter=AM", head, "--", "d")
		if k == kindV1 {
			args = append(logArgs[:len(logArgs):len(logArgs)], "--diff-filter=DM", head)
		}
		out, err := gitOutput(e.path, args...)
		if err != nil {
			continue // a history git cannot walk: reported when read
		}
		for line := range bytes.Lines(out) {
			d, ok := parseRaw(string(bytes.TrimRight(line, "\n")))
			if !ok {
				continue
			}
			switch {
			case k == kindV2 && d.path == "d":
				if o, ok := parseOID(d.new); ok {
					del[o] = struct{}{}
				}
			case k == kindV1 && hashPath(d.path):
				if o, ok := parseOID(d.old); ok {
					del[o] = struct{}{}
				}
			}
		}
	}
	return del
}

// rawDiff is one line of git's raw diff output.
type rawDiff struct {
	old, new, status, path string
}

// parseRaw reads ":100644 100644 OLD NEW M\tPATH".
func parseRaw(line string) (rawDiff, bool) {
	if !strings.HasPrefix(line, ":") {
		return rawDiff{}, false
	}
	meta, path, ok := strings.Cut(line, "\t")
	f := strings.Fields(meta)
	if !ok || len(f) != 5 {
		return rawDiff{}, false
	}
	return rawDiff{old: f[2], new: f[3], status: f[4], path: path}, true
}

// hashPath reports whether p is where v1 keeps a message: two hex
// digits, a slash, the other 38 (or 62) of the Message-ID's hash.
func hashPath(p string) bool {
	return (len(p) == 41 || len(p) == 65) && p[2] == '/' && isHex(p[:2]) && isHex(p[3:])
}

// epochReader reads one epoch: git rev-list lists the commits (v2),
// whose "m" git cat-file --batch gives as COMMIT:m, or git log the files
// each commit adds (v1), whose blobs cat-file gives.
type epochReader struct {
	e       epoch
	opts    *mailbox.Options
	deleted map[oid]struct{}
	seen    map[oid]struct{} // blobs given (or asked for) already

	log       *exec.Cmd
	logOut    *bufio.Reader
	logErr    bytes.Buffer
	logDone   bool
	logClosed io.Closer

	cat    *catFile
	queue  []string // blobs asked of cat, in order
	buf    []byte   // a blob's bytes, reused
	failed bool     // cat-file could not be started: the rest is unreadable
	catErr error    // why
}

func startEpoch(e epoch, head, since string, del map[oid]struct{}, opts *mailbox.Options) (*epochReader, error) {
	rng := head
	if since != "" {
		rng = since + ".." + head
	}
	// v1: the files each commit adds; v2: the commits, whose "m" is
	// asked of cat-file as COMMIT:m (no tree diff needed)
	args := append(logArgs[:len(logArgs):len(logArgs)], "--reverse", "--date-order", "--diff-filter=AM", rng)
	if e.kind == kindV2 {
		args = []string{"rev-list", "--reverse", "--date-order", rng}
	}
	er := &epochReader{e: e, opts: opts, deleted: del, seen: map[oid]struct{}{}}
	er.log = gitCmd(e.path, args...)
	er.log.Stderr = &limitedBuffer{b: &er.logErr, n: maxStderr}
	out, err := er.log.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := er.log.Start(); err != nil {
		return nil, fmt.Errorf("git log: %w", err)
	}
	er.logOut, er.logClosed = bufio.NewReaderSize(out, 64<<10), out
	return er, nil
}

// next returns the next message, or done at the end of the epoch (with
// a last message perhaps: git log's failure).
func (er *epochReader) next() (m *mailbox.Message, done bool) {
	for {
		er.fill()
		if len(er.queue) == 0 {
			return er.finishLog(), true
		}
		b := er.queue[0]
		er.queue = er.queue[1:]
		if m := er.read(b); m != nil {
			return m, false
		}
	}
}

// fill asks cat-file for blobs until window are asked or the log ends.
func (er *epochReader) fill() {
	start := len(er.queue)
	for len(er.queue) < window && !er.logDone {
		line, err := er.logOut.ReadString('\n')
		if err != nil {
			er.logDone = true
			if line == "" {
				break
			}
		}
		if er.e.kind == kindV2 {
			// a commit: its "m", which read checks
			if c := strings.TrimSpace(line); len(c) == 40 || len(c) == 64 {
				er.queue = append(er.queue, c+":m")
			}
			continue
		}
		d, ok := parseRaw(strings.TrimRight(line, "\n"))
		if !ok || !hashPath(d.path) {
			continue
		}
		o, ok := parseOID(d.new)
		if !ok {
			continue
		}
		if _, gone := er.deleted[o]; gone {
			continue
		}
		if _, dup := er.seen[o]; dup {
			continue
		}
		er.seen[o] = struct{}{}
		er.queue = append(er.queue, d.new)
	}
	if len(er.queue) > start && !er.failed {
		er.ask(er.queue[start:])
	}
}

// ask sends blob requests to cat-file, starting it if need be.
func (er *epochReader) ask(ids []string) {
	if er.cat == nil {
		c, err := startCatFile(er.e.path)
		if err != nil {
			er.failed = true
			er.catErr = err
			return
		}
		er.cat = c
	}
	er.cat.ask(ids)
}

// finishLog waits for git log: a message with its failure, if it failed.
func (er *epochReader) finishLog() *mailbox.Message {
	if er.log == nil {
		return nil
	}
	er.logClosed.Close()
	err := er.log.Wait()
	what := er.log.Args[4] // git --git-dir=D -c core.quotePath=false WHAT
	er.log = nil
	if err != nil {
		return mailbox.NewUnreadable(er.e.path, mailbox.FormatPublicInbox, gitErr(what, err, er.logErr.Bytes()))
	}
	return nil
}

// close stops the epoch's commands.
func (er *epochReader) close() {
	if er.log != nil {
		er.log.Process.Kill()
		er.logClosed.Close()
		er.log.Wait()
		er.log = nil
	}
	if er.cat != nil {
		er.cat.close()
		er.cat = nil
	}
}

// read returns the message of blob b, the next answer of cat-file (nil
// when it is no message to give: an object that is not a blob is
// reported, so nil never happens but for a closed reader).
func (er *epochReader) read(req string) *mailbox.Message {
	b := req // the blob, when req is not COMMIT:m
	if strings.HasSuffix(req, ":m") {
		b = ""
	}
	unreadable := func(err error) *mailbox.Message {
		m := mailbox.NewUnreadable(er.e.path, mailbox.FormatPublicInbox, err)
		m.Blob = b
		return m
	}
	if er.failed {
		return unreadable(fmt.Errorf("%s: %w", req, er.catErr))
	}
	oid, size, err := er.cat.header(req)
	if err == errMissing && b == "" {
		// COMMIT:m missing: a commit without "m" (a deletion), or an
		// "m" whose blob is not there
		out, err := gitOutput(er.e.path, "rev-parse", "--verify", "-q", req)
		if err != nil {
			return nil
		}
		b = strings.TrimSpace(string(out))
		return unreadable(missing(er.e.path, b))
	}
	if err == errMissing {
		return unreadable(missing(er.e.path, b))
	}
	if err == nil && b == "" {
		// a blob of COMMIT:m: read once, unless deleted
		o, _ := parseOID(oid)
		_, gone := er.deleted[o]
		_, dup := er.seen[o]
		if gone || dup {
			if _, err := er.cat.out.Discard(int(size) + 1); err != nil {
				err = er.cat.died(req, err)
				er.restart()
				return unreadable(err)
			}
			return nil
		}
		er.seen[o] = struct{}{}
		b = oid
	}
	if err != nil {
		// cat-file died on a damaged object, or said it is missing:
		// this blob is unreadable, the rest asked again of a new one
		if errors.Is(err, errDied) {
			er.restart()
		}
		return unreadable(err)
	}
	m, err := er.message(b, size)
	if err != nil {
		er.restart()
		return unreadable(err)
	}
	return m
}

// restart ends a cat-file that failed and asks a new one for the rest.
func (er *epochReader) restart() {
	er.cat.close()
	er.cat = nil
	if len(er.queue) > 0 {
		er.ask(er.queue)
	}
}

// missing tells a blob that is not in the repository from one that is
// there but damaged, by what git cat-file -t says of it.
func missing(dir, b string) error {
	_, err := gitOutput(dir, "cat-file", "-t", b)
	if err == nil || !strings.Contains(err.Error(), "error: ") {
		return fmt.Errorf("blob %s is missing from the repository", b)
	}
	_, why, _ := strings.Cut(err.Error(), "error: ")
	return fmt.Errorf("blob %s is damaged: %s", b, why)
}

// message reads the size bytes of blob b from cat-file into a message.
func (er *epochReader) message(b string, size int64) (*mailbox.Message, error) {
	var m *mailbox.Message
	if size > er.opts.MaxMessageSize && er.opts.MaxMessageSize > 0 {
		// read as a stream: past the limit only structure and text kept
		o := *er.opts
		o.Format = mailbox.FormatMessage
		lr := io.LimitReader(er.cat.out, size)
		r, err := mailbox.NewReader(lr, er.e.path, &o)
		if err == nil {
			m, err = r.Next()
			r.Close()
		}
		if _, cerr := io.Copy(io.Discard, lr); err == nil {
			err = cerr
		}
		if err != nil || m == nil {
			return nil, er.cat.died(b, fmt.Errorf("reading blob %s: %v", b, err))
		}
	} else {
		if int64(cap(er.buf)) < size {
			er.buf = make([]byte, size)
		}
		er.buf = er.buf[:size]
		if _, err := io.ReadFull(er.cat.out, er.buf); err != nil {
			return nil, er.cat.died(b, err)
		}
		m = mailbox.ReadMessage(er.buf, er.e.path, er.opts)
		if cap(er.buf) > 1<<20 {
			er.buf = nil // a long message's buffer is not kept
		}
	}
	if c, err := er.cat.out.ReadByte(); err != nil || c != '\n' {
		return nil, er.cat.died(b, fmt.Errorf("no line end after the blob"))
	}
	m.Blob = b
	m.Format = mailbox.FormatPublicInbox
	return m, nil
}

// catFile is a running git cat-file --batch.
type catFile struct {
	cmd    *exec.Cmd
	in     *bufio.Writer
	inPipe io.Closer
	out    *bufio.Reader
	stderr bytes.Buffer
}

// errMissing is cat-file's answer "missing": the object is not there,
// or cannot be read (cat-file --batch says no more of a damaged loose
// object).
var errMissing = errors.New("missing")

// errDied marks the failure of cat-file itself (a damaged object):
// it is started again for the blobs after.
var errDied = errors.New("git cat-file stopped")

func startCatFile(dir string) (*catFile, error) {
	c := &catFile{cmd: gitCmd(dir, "cat-file", "--batch")}
	c.cmd.Stderr = &limitedBuffer{b: &c.stderr, n: maxStderr}
	in, err := c.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	c.in, c.inPipe, c.out = bufio.NewWriter(in), in, bufio.NewReaderSize(out, 64<<10)
	return c, nil
}

// ask writes the requests; a write error shows at the next header.
func (c *catFile) ask(ids []string) {
	for _, id := range ids {
		c.in.WriteString(id)
		c.in.WriteByte('\n')
	}
	c.in.Flush()
}

// header reads the answer line for blob b: its size, or why not.
func (c *catFile) header(b string) (string, int64, error) {
	line, err := c.out.ReadString('\n')
	if err != nil {
		return "", 0, c.died(b, err)
	}
	f := strings.Fields(line)
	switch {
	case len(f) == 2 && f[0] == b && f[1] == "missing":
		return "", 0, errMissing
	case len(f) == 3 && (f[0] == b || strings.HasSuffix(b, ":m")):
		n, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil || n < 0 {
			return "", 0, c.died(b, fmt.Errorf("answer %q", strings.TrimSpace(line)))
		}
		if f[1] != "blob" {
			c.out.Discard(int(n) + 1)
			return "", 0, fmt.Errorf("object %s (%s) is a %s, not a blob", f[0], b, f[1])
		}
		return f[0], n, nil
	}
	return "", 0, c.died(b, fmt.Errorf("answer %q", strings.TrimSpace(line)))
}

// died ends a cat-file that failed while blob b was read, and returns
// the error, with what git said.
func (c *catFile) died(b string, cause error) error {
	c.close()
	msg := strings.TrimSpace(c.stderr.String())
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i] + " (...)"
	}
	if msg == "" {
		msg = cause.Error()
	}
	return fmt.Errorf("blob %s is damaged: %w: %s", b, errDied, msg)
}

func (c *catFile) close() {
	if c.cmd == nil {
		return
	}
	c.inPipe.Close()
	c.cmd.Process.Kill()
	c.cmd.Wait()
	c.cmd = nil
}
