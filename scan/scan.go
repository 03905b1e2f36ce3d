// Package scan joins mailbox and extract: it turns the messages of
// archives into link records, in parallel across messages and always in
// input order.
//
// The pipeline is the one of cmd/gofmt's sequencer: one goroutine reads
// and splits the archives into batches of messages, Jobs workers walk the
// MIME structure and scan the text of one batch each, and the caller's
// emit function receives the results in the order the messages were
// read. Queues are deep (a shallow one left workers idle on small
// messages: 141 % of two cores used instead of 196 %) and bounded both in
// batches (4×Jobs waiting for output) and in message bytes
// (Config.InFlightBytes).
package scan

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/linkscan/linkscan/extract"
	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/record"
	"github.com/linkscan/linkscan/references"
	"github.com/linkscan/linkscan/uri"
)

// Config says what to scan and which links to keep.
type Config struct {
	Mailbox mailbox.Options
	Extract extract.Options
	// Headers also scans the header fields that carry links (List-*,
	// Archived-At, Link, Content-Base, Content-Location ...).
	Headers bool
	// Schemes, if not empty, keeps only links of these schemes.
	Schemes map[string]bool
	// HostPattern, if set, keeps only links whose host matches this
	// path.Match pattern ("*.example.org"); a pattern that begins with
	// "*." matches the domain itself too (example.org).
	HostPattern string
	// HostPatterns, if not empty, keeps only links whose host matches one
	// of these patterns (as HostPattern, which is one more of them).
	HostPatterns []string
	// Jobs is the number of messages worked on at once (default: the
	// number of CPUs). Set Mailbox.DeferParse too, so that the header of
	// each message is read in the workers and the reader only splits.
	Jobs int
	// InFlightBytes bounds the bytes of the messages read but not yet
	// scanned (default 64 MiB); one message larger than that still goes.
	InFlightBytes int64

	// Resolver, if set, resolves mid:, cid:, news: and nntp: links and
	// fills the records' status and target.
	Resolver *references.Resolver
	// Implicit adds the implicit references (In-Reply-To, References,
	// attribution lines) as records of form "implicit".
	Implicit bool
	// RefsOnly keeps only mid:, cid:, news: and nntp: links.
	RefsOnly bool
	// Statuses, if not empty, keeps only references resolved with one of
	// these statuses.
	Statuses map[string]bool
}

// linkHeaders are the header fields whose values are links or lists of
// links (RFC 2369, RFC 5064, RFC 8288, RFC 2557).
var linkHeaders = map[string]bool{
	"list-archive": true, "list-help": true, "list-owner": true, "list-post": true, "list-subscribe": true,
	"list-unsubscribe": true, "archived-at": true, "link": true, "content-base": true, "content-location": true,
	"x-url": true, "x-mailing-list": true, "list-id": false,
}

// Result is what one message (or one unreadable input) gave.
type Result struct {
	Path     string
	Message  *mailbox.Message // nil for an input that could not be opened
	Records  []record.Record
	Parts    int
	Problems []mailbox.Problem
	Err      error // the input could not be read (further)
}

// scanners recycles link scanners from message to message.
var scanners = sync.Pool{New: func() any { return new(extract.Scanner) }}

// Message scans one message.
func Message(m *mailbox.Message, cfg *Config) Result { return message(m, cfg, nil) }

// message scans one message, appending its records to recs.
func message(m *mailbox.Message, cfg *Config, recs []record.Record) Result {
	m.Parse() // if the reader deferred it (Config.Mailbox.DeferParse)
	res := Result{Path: m.Path, Message: m, Records: recs}
	base := record.Record{
		Path: m.Path, Offset: m.Offset, MessageID: m.MessageID, Date: record.Date(m.Date),
		From: m.From, Subject: m.Subject, Newsgroups: m.Newsgroups,
	}
	if cfg.Headers {
		res.Records = cfg.headerLinks(res.Records, &base, m.Header, "")
	}
	parts := m.Parts()
	res.Parts = len(parts)
	sc := scanners.Get().(*extract.Scanner)
	defer func() {
		sc.ResetBytes(nil, nil) // keep no reference to the message's text
		scanners.Put(sc)
	}()
	for _, p := range parts {
		if cfg.Headers && p.ContentType == "message/rfc822" && p.Header != nil {
			res.Records = cfg.headerLinks(res.Records, &base, p.Header, p.Path)
		}
		if p.Text == nil {
			continue
		}
		rec := base
		rec.Part, rec.ContentType, rec.Where = p.Path, p.ContentType, p.Where
		sc.ResetBytes(p.Text, &cfg.Extract)
		for sc.Scan() {
			l := sc.Link()
			// filled in place: a record is large to copy
			res.Records = append(res.Records, rec)
			r := &res.Records[len(res.Records)-1]
			fill(r, &l)
			r.RawOffset = p.RawOffset(int(l.Start))
			if !cfg.keep(r) {
				res.Records = res.Records[:len(res.Records)-1]
			}
		}
		res.Records = cfg.attrLinks(res.Records, &rec, p)
		m.Problems = append(m.Problems, p.Problems...)
	}
	if cfg.Implicit {
		for _, ref := range references.Implicit(m, parts) {
			r := base
			r.URL, r.Form, r.Where, r.Part = ref.URL, "implicit", ref.Where, ref.Part
			r.Line, r.Column, r.Start, r.End, r.RawOffset = ref.Line, ref.Column, ref.Start, ref.End, ref.RawOffset
			normalize(&r, ref.URL)
			if cfg.keep(&r) {
				res.Records = append(res.Records, r)
			}
		}
	}
	if cfg.Resolver != nil {
		ctx := &references.Context{Loc: references.Location{File: m.Path, Offset: m.Offset, MessageID: m.MessageID, Name: m.Name}, Parts: parts}
		kept := res.Records[:0]
		for _, r := range res.Records {
			if references.Handles(r.Scheme) {
				ctx.Part = r.Part
				rs, err := cfg.Resolver.Resolve(r.Canonical, ctx)
				if err != nil { // the index could not be read: no status at all
					m.Problems = append(m.Problems, mailbox.Problem{Offset: m.Offset, Part: r.Part,
						Msg: fmt.Sprintf("cannot resolve %s: %v", r.Canonical, err)})
				}
				r.Status = string(rs.Status)
				for _, t := range rs.Targets {
					r.Targets = append(r.Targets, record.Target(t))
				}
				if len(r.Targets) > 0 {
					r.Target = &r.Targets[0]
				}
				if len(r.Targets) < 2 {
					r.Targets = nil
				}
			}
			if len(cfg.Statuses) == 0 || cfg.Statuses[r.Status] {
				kept = append(kept, r)
			}
		}
		res.Records = kept
	}
	res.Problems = m.Problems
	m.Release() // the text is scanned; the bytes can be reused
	return res
}

func fill(r *record.Record, l *extract.Link) {
	r.URL, r.Canonical, r.Form = l.URL, l.Canonical, string(l.Form)
	r.Joined, r.Heuristic, r.Valid, r.Problems = l.Joined, l.Heuristic, l.Valid, l.Problems
	r.Scheme, r.Host = l.Scheme, l.Host // one parse, in extract
	r.Line, r.Column, r.Start, r.End = l.Line, l.Column, l.Start, l.End
}

// normalize fills r's canonical form, scheme, host, validity and URL
// problems from one reading of url (uri.Analyze), by the rule extract
// applies to the links it finds in text: each problem is written as
// extract.URLProblem writes it ("PROBLEM (offset N)"), and a URL with no
// canonical form at all gets its one error. Links of HTML attributes and
// implicit references go through it; TestNormalizeAgreesWithExtract holds
// the two rules together.
func normalize(r *record.Record, url string) {
	a := uri.Analyze(url)
	r.Canonical, r.Scheme, r.Host = a.Canonical, a.Scheme, a.Host
	if a.Canonical == "" {
		r.Valid = false
		if err := a.Err(); err != nil {
			r.Problems = append(r.Problems, err.Error())
		}
		return
	}
	r.Valid = a.Valid()
	for _, p := range a.Problems {
		r.Problems = append(r.Problems, (&extract.URLProblem{Err: p}).Error())
	}
}

func (cfg *Config) keep(r *record.Record) bool {
	if len(cfg.Schemes) > 0 && !cfg.Schemes[r.Scheme] {
		return false
	}
	if cfg.RefsOnly && !references.Handles(r.Scheme) {
		return false
	}
	if cfg.HostPattern != "" || len(cfg.HostPatterns) > 0 {
		if !hostMatch(cfg.HostPattern, r.Host) && !slices.ContainsFunc(cfg.HostPatterns, func(p string) bool { return hostMatch(p, r.Host) }) {
			return false
		}
	}
	return true
}

// hostMatch reports whether host matches the path.Match pattern, without
// regard to case; "*.example.org" matches "example.org" as well as its
// subdomains.
func hostMatch(pattern, host string) bool {
	if pattern == "" {
		return false
	}
	pattern = strings.ToLower(pattern)
	if ok, _ := path.Match(pattern, host); ok {
		return true
	}
	if rest, ok := strings.CutPrefix(pattern, "*."); ok {
		m, _ := path.Match(rest, host)
		return m
	}
	return false
}

// headerLinks scans the link-carrying fields of a header.
func (cfg *Config) headerLinks(out []record.Record, base *record.Record, h mailbox.Header, part string) []record.Record {
	for _, f := range h {
		var lb [32]byte
		if len(f.Name) > len(lb) || !linkHeaders[string(lowerInto(lb[:0], f.Name))] {
			continue
		}
		line := f.Name + ": " + f.Value
		for _, l := range extract.All([]byte(line), &cfg.Extract) {
			r := *base
			r.Part, r.Where = part, "header:"+f.Name
			fill(&r, &l)
			r.RawOffset = f.Offset
			if cfg.keep(&r) {
				out = append(out, r)
			}
		}
	}
	return out
}

// attrLinks turns the URLs of HTML attributes into records, resolved
// against the part's base (Content-Base, Content-Location or <base>).
func (cfg *Config) attrLinks(out []record.Record, base *record.Record, p *mailbox.Part) []record.Record {
	if len(p.AttrLinks) == 0 {
		return out
	}
	lines := lineCounter{text: p.Text, line: 1}
	for _, a := range p.AttrLinks {
		url := attrURL(a.URL)
		if url == "" || url[0] == '#' || hasPrefixFold(url, "javascript:") {
			continue // a place in the same document, or a script
		}
		if !cfg.Extract.DataURIs && hasPrefixFold(url, "data:") {
			continue // inline content, not a link (extract.Options.DataURIs)
		}
		r := *base
		r.Where = "html:" + a.Attr
		r.URL, r.Form = url, "html"
		r.Line, r.Column = lines.pos(a.Text)
		r.Start, r.End = int64(a.Text), int64(a.Text)
		r.RawOffset = a.Raw
		full := url
		if !hasScheme(full) {
			if p.Base == "" || !hasScheme(p.Base) {
				r.Problems = []string{"relative URL without a base"}
				if cfg.keep(&r) && len(cfg.Schemes) == 0 {
					out = append(out, r)
				}
				continue
			}
			if res, err := uri.Resolve(p.Base, full, uri.RFC3986); err == nil {
				full = res
			}
		}
		normalize(&r, full)
		if cfg.keep(&r) {
			out = append(out, r)
		}
	}
	return out
}

// attrURL cleans the URL of an HTML attribute so that a record's URL
// never holds white space: white space around it is dropped; a run of
// white space inside it that holds a tab or a line break (a value wrapped
// over lines, with its indentation) is removed, as RFC 3986 appendix C
// and browsers do; any other white space inside it is percent-encoded,
// as browsers do with "my file.html".
func attrURL(s string) string {
	s = strings.TrimFunc(s, unicode.IsSpace)
	i := strings.IndexFunc(s, unicode.IsSpace)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			b.WriteString(s[i : i+size])
			i += size
			continue
		}
		end := i + strings.IndexFunc(s[i:], func(r rune) bool { return !unicode.IsSpace(r) })
		run := s[i:end] // end > i: s does not end in white space
		if !strings.ContainsAny(run, "\t\n\r") {
			for j := 0; j < len(run); j++ {
				fmt.Fprintf(&b, "%%%02X", run[j])
			}
		}
		i = end
	}
	return b.String()
}

// hasPrefixFold reports whether s begins with the lower-case ASCII
// prefix, in any case.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// lowerInto appends s in ASCII lower case to b.
func lowerInto(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}

func hasScheme(s string) bool {
	i := strings.IndexAny(s, ":/?#")
	return i > 0 && s[i] == ':'
}

// lineCounter finds line and column for increasing offsets in a text,
// counting newlines only between one offset and the next.
type lineCounter struct {
	text      []byte
	at        int // offset counted up to
	line      int // line number at offset at
	lineStart int // offset of that line's start
}

func (lc *lineCounter) pos(off int) (line, col int) {
	off = min(off, len(lc.text))
	if off < lc.at { // offsets went back: count again from the start
		lc.at, lc.line, lc.lineStart = 0, 1, 0
	}
	seg := lc.text[lc.at:off]
	if n := bytes.Count(seg, []byte{'\n'}); n > 0 {
		lc.line += n
		lc.lineStart = lc.at + bytes.LastIndexByte(seg, '\n') + 1
	}
	lc.at = off
	return lc.line, utf8.RuneCount(lc.text[lc.lineStart:off]) + 1
}

// budget counts the bytes of the messages in flight; acquire waits while
// they would exceed the limit, but always lets one message through.
type budget struct {
	mu          sync.Mutex
	cond        *sync.Cond
	used, limit int64
}

func newBudget(max int64) *budget {
	b := &budget{limit: max}
	b.cond = sync.NewCond(&b.mu)
	return b
}

func (b *budget) acquire(n int64) {
	b.mu.Lock()
	for b.used > 0 && b.used+n > b.limit {
		b.cond.Wait()
	}
	b.used += n
	b.mu.Unlock()
}

func (b *budget) release(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
	b.cond.Broadcast()
}

// Progress receives progress from Run; any method may be called from
// another goroutine.
type Progress interface {
	BytesRead(n int64)
}

// Opener opens an input; Run uses it so that tests and the command can
// give standard input for "-".
type Opener func(name string) (*mailbox.Reader, error)

// A batch is the unit of work: messages read one after another, scanned
// by one worker. Batching makes the cost of queueing, of the in-flight
// budget and of waking goroutines one per batch instead of one per
// message; batches, their results and the results' record slices are
// recycled.
type batch struct {
	msgs    []*mailbox.Message
	results []Result
	size    int64
	done    chan struct{} // a worker finished the batch
}

// Batches close at batchMessages messages or batchBytes bytes, and at the
// end of each input.
const (
	batchMessages = 16
	batchBytes    = 128 << 10
)

// keepRecords is the largest record slice a recycled result keeps.
const keepRecords = 16

var batches = sync.Pool{New: func() any { return &batch{done: make(chan struct{}, 1)} }}

// Run scans the inputs and calls emit with each message's result in input
// order. An input that cannot be opened or read gives a Result with Err.
// Run stops early if emit returns an error, and returns it. emit must not
// keep the Result or its Records after it returns: their memory is
// reused for later messages.
//
// Messages are handed to workers in batches of up to 16 messages or
// 128 KiB, except those of standard input ("-"), which may be a pipe fed
// slowly: each of them goes on alone.
func Run(inputs []string, open Opener, cfg *Config, prog Progress, emit func(*Result) error) error {
	jobs := cfg.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	// The queues are deep, so that workers never wait for the reader or the
	// writer, and bounded twice: in batches, and in the bytes of the
	// messages in flight (InFlightBytes).
	work := make(chan *batch, 2*jobs)
	order := make(chan *batch, 4*jobs)
	quit := make(chan struct{})
	limit := cfg.InFlightBytes
	if limit <= 0 {
		limit = 64 << 20
	}
	inflight := newBudget(limit)
	var wg sync.WaitGroup
	for range jobs {
		wg.Go(func() {
			for b := range work {
				for i, m := range b.msgs {
					if m != nil { // else results[i] is an input's error
						b.results[i] = message(m, cfg, b.results[i].Records[:0])
					}
				}
				inflight.release(b.size)
				b.done <- struct{}{}
			}
		})
	}
	cur := batches.Get().(*batch)
	batchMax := batchMessages
	// flush queues the current batch; it reports false once emit failed.
	flush := func() bool {
		b := cur
		if len(b.msgs) == 0 {
			return true
		}
		cur = batches.Get().(*batch)
		select {
		case order <- b:
		case <-quit:
			return false
		}
		inflight.acquire(b.size)
		work <- b
		return true
	}
	// add puts a message, or an input's error (m == nil), in the batch.
	add := func(m *mailbox.Message, r *Result) bool {
		b := cur
		b.msgs = append(b.msgs, m)
		if len(b.results) < len(b.msgs) {
			b.results = append(b.results, Result{})
		}
		if m != nil {
			b.size += int64(len(m.Raw))
		} else {
			recs := b.results[len(b.msgs)-1].Records[:0]
			b.results[len(b.msgs)-1] = *r
			b.results[len(b.msgs)-1].Records = recs
		}
		if len(b.msgs) >= batchMax || b.size >= batchBytes {
			return flush()
		}
		return true
	}
	go func() {
		defer close(order)
		defer close(work)
		for _, in := range inputs {
			// standard input may be a pipe fed slowly: each message goes on
			// at once rather than waiting for a batch to fill
			batchMax = batchMessages
			if in == "-" {
				batchMax = 1
			}
			r, err := open(in)
			if err != nil {
				// the error goes out like a message, and its batch is
				// queued at once: were it left in the current batch, the
				// error of the last input would never be flushed
				if !add(nil, &Result{Path: in, Err: err}) || !flush() {
					return
				}
				continue
			}
			var last int64
			for {
				m, err := r.Next()
				if prog != nil {
					n := r.BytesRead()
					prog.BytesRead(n - last)
					last = n
				}
				if m != nil && !add(m, nil) {
					r.Close()
					return
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					var ie *mailbox.InputError
					if !errors.As(err, &ie) { // an InputError names the file already
						err = fmt.Errorf("%s: %w", in, err)
					}
					if !add(nil, &Result{Path: in, Err: err}) {
						r.Close()
						return
					}
					break
				}
			}
			r.Close()
			if !flush() {
				return
			}
		}
	}()
	var emitErr error
	for b := range order {
		<-b.done
		for i := range b.msgs {
			if emitErr == nil {
				if emitErr = emit(&b.results[i]); emitErr != nil {
					close(quit)
				}
			}
		}
		recycle(b)
	}
	wg.Wait()
	return emitErr
}

// recycle empties a batch and puts it back in the pool, keeping the
// record slices of its results unless they grew large (a message with
// many links), so that what the pool holds stays small.
func recycle(b *batch) {
	clear(b.msgs)
	b.msgs = b.msgs[:0]
	for i := range b.results {
		recs := b.results[i].Records
		if cap(recs) > keepRecords {
			recs = nil
		}
		clear(recs) // no strings of past messages kept alive
		b.results[i] = Result{Records: recs[:0]}
	}
	b.size = 0
	batches.Put(b)
}

// Text scans plain text (not a message) from r, streaming, and calls emit
// for each link.
func Text(name string, r io.Reader, cfg *Config, emit func(*record.Record) error) error {
	sc := extract.NewScanner(r, &cfg.Extract)
	for sc.Scan() {
		l := sc.Link()
		rec := record.Record{Path: name, Where: "body", RawOffset: l.Start}
		fill(&rec, &l)
		if cfg.keep(&rec) {
			if err := emit(&rec); err != nil {
				return err
			}
		}
	}
	return sc.Err()
}
