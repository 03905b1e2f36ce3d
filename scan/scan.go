// Package scan joins mailbox and extract: it turns the messages of
// archives into link records, in parallel across messages and always in
// input order.
//
// The pipeline is internal/ordered's, the sequencer of cmd/gofmt a batch
// at a time: one goroutine reads and splits the archives into batches of
// messages, Jobs workers walk the MIME structure and scan the text of one
// batch each, and the caller's emit function receives the results in the
// order the messages were read. Queues are deep (a shallow one left
// workers idle on small messages: 141 % of two cores used instead of
// 196 %) and bounded both in batches (4×Jobs waiting for output) and in
// message bytes (Config.InFlightBytes).
//
// After extraction, each message's records go through Config.Stages
// (resolution of references, package refs; later audit and rewrite
// decisions), composed by the command; scan knows none of them.
//
// A link-dense message has many records (one of 20 MB with a link a line,
// 240,000), and a record.Record costs some 500 bytes with its strings.
// With Config.CompactAfter, the records of a message past that many are
// kept in a compact encoding (compact.go: some tens of bytes each) from
// the worker to the writer, which reads them one at a time with
// Result.Each; stages then take them a slice at a time when they are
// SlicedStages, and hold the message's records whole otherwise.
package scan

import (
	"bytes"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/linkscan/linkscan/extract"
	"github.com/linkscan/linkscan/internal/ordered"
	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/record"
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

	// Stages work on each message's records after extraction, in order,
	// in the worker that scanned the message: resolution of references,
	// later audit history and rewrite decisions (package refs has the
	// stages of references). Records that stages add go through the
	// filters above (Schemes, HostPatterns) too.
	Stages []Stage

	// Hold leaves each message unreleased after its scan: emit receives
	// it with its bytes and parts, and the caller calls
	// Result.Message.Release when it is done with it (a rewrite splices
	// into the bytes). The in-flight bound (InFlightBytes) then counts a
	// message until it is emitted. Without Hold, a message is released
	// as soon as it is scanned.
	Hold bool

	// CompactAfter, if positive, keeps the records of a message in a
	// compact encoding (some tens of bytes a record instead of some
	// hundreds) once it has more than this many: a link-dense message
	// then costs little more than its size from the worker to the
	// writer. The records of such a message are read with Result.Each
	// (Result.Records holds only the last of them); a caller that sets
	// CompactAfter must read every result that way. With Stages, it has
	// effect only when every stage is a SlicedStage: a Stage works on all
	// the records of a message at once (refs.Implicit adds records after
	// them), so they are held whole for it. DefaultCompactAfter is the
	// command's choice.
	CompactAfter int
}

// Stage works on the records of one message after extraction: it returns
// them changed, added to or filtered (reusing recs's memory if it likes),
// and may add problems to m.Problems. It is called from several workers
// at once, each with a message of its own.
type Stage interface {
	Records(m *mailbox.Message, parts []*mailbox.Part, recs []record.Record) []record.Record
}

// A SlicedStage is a Stage that can work on a message's records a slice
// at a time, so that a link-dense message need not be held whole for it
// (Config.CompactAfter): RecordsSlice is called on consecutive slices of
// the message's records, in order, each call after the stages before it
// are done with that slice, and last is true on the last call (whose
// slice may be empty). A stage that adds records after all of the
// message's others adds them when last is true. When any of
// Config.Stages is not a SlicedStage, or a message has no more than
// CompactAfter records, Records is called once with all of them instead.
type SlicedStage interface {
	Stage
	RecordsSlice(m *mailbox.Message, parts []*mailbox.Part, recs []record.Record, last bool) []record.Record
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
	Path    string
	Message *mailbox.Message // nil for an input that could not be opened
	// Records are the message's records; with Config.CompactAfter, only
	// those after the ones kept compact: read them all with Each.
	Records  []record.Record
	Parts    int
	Problems []mailbox.Problem
	Err      error // the input could not be read (further)

	store *recordStore // the records kept compact, before Records
}

// Len is the number of the message's records, compact ones included.
func (res *Result) Len() int {
	n := len(res.Records)
	if res.store != nil {
		n += res.store.n
	}
	return n
}

// Each calls fn with each of the message's records in order, those kept
// compact (Config.CompactAfter) decoded one at a time, and stops at the
// first error fn returns, returning it. fn must not keep the Record it is
// given (its memory is reused for the next); the strings and slices of
// its fields it may keep.
func (res *Result) Each(fn func(*record.Record) error) error {
	if res.store != nil && res.store.n > 0 {
		if err := res.store.each(fn); err != nil {
			return err
		}
	}
	for i := range res.Records {
		if err := fn(&res.Records[i]); err != nil {
			return err
		}
	}
	return nil
}

// sink is where the records of one message go while it is scanned:
// into res.Records and, past limit records (Config.CompactAfter), on into
// res.store, through the stages first when they take slices.
type sink struct {
	cfg    *Config
	res    Result
	limit  int           // 0: never compact
	sliced bool          // the stages are run on each slice before it is stored
	base   record.Record // the message's fields
	m      *mailbox.Message
	parts  []*mailbox.Part
}

// full moves the records into the compact store when there are limit or
// more.
func (k *sink) full() {
	if k.limit > 0 && len(k.res.Records) >= k.limit {
		k.flush()
	}
}

// flush moves the records into the compact store, through the stages
// when they take slices.
func (k *sink) flush() {
	res := &k.res
	if res.store == nil {
		res.store = new(recordStore)
		res.store.reset(&k.base)
	} else if res.store.n == 0 {
		res.store.reset(&k.base)
	}
	recs := res.Records
	if k.sliced {
		recs = k.cfg.stages(k.m, k.parts, recs, true, false)
	}
	for i := range recs {
		res.store.add(&recs[i])
	}
	clear(recs) // no strings kept alive twice
	clear(res.Records)
	res.Records = res.Records[:0]
}

// stages runs the stages on recs (sliced: as the slice of a message's
// records, last or not) and keeps the records that pass the filters.
func (cfg *Config) stages(m *mailbox.Message, parts []*mailbox.Part, recs []record.Record, sliced, last bool) []record.Record {
	for _, st := range cfg.Stages {
		if sliced {
			recs = st.(SlicedStage).RecordsSlice(m, parts, recs, last)
		} else {
			recs = st.Records(m, parts, recs)
		}
	}
	kept := recs[:0]
	for i := range recs {
		if cfg.keep(&recs[i]) {
			kept = append(kept, recs[i])
		}
	}
	clear(recs[len(kept):])
	return kept
}

// scanners recycles link scanners from message to message.
var scanners = sync.Pool{New: func() any { return new(extract.Scanner) }}

// Message scans one message.
func Message(m *mailbox.Message, cfg *Config) Result { return message(m, cfg, nil) }

// message scans one message, appending its records to recs.
func message(m *mailbox.Message, cfg *Config, recs []record.Record) Result {
	return messageInto(m, cfg, recs, nil)
}

// messageInto is message with a store to reuse for compact records (nil:
// one is made if needed).
func messageInto(m *mailbox.Message, cfg *Config, recs []record.Record, store *recordStore) Result {
	m.Parse() // if the reader deferred it (Config.Mailbox.DeferParse)
	parts := m.Parts()
	// k and the record of the message's fields in it stay on the stack
	k := &sink{cfg: cfg, res: Result{Path: m.Path, Message: m, Records: recs, store: store}, limit: cfg.CompactAfter, sliced: len(cfg.Stages) > 0, m: m, parts: parts,
		base: record.Record{
			Path: m.Path, Blob: m.Blob, Offset: m.Offset, MessageID: m.MessageID, Date: record.Date(m.Date),
			From: m.From, Subject: m.Subject, Newsgroups: m.Newsgroups,
		}}
	if store != nil {
		store.reset(&k.base)
	}
	res := &k.res
	for _, st := range cfg.Stages {
		if _, ok := st.(SlicedStage); !ok {
			// a stage that takes all the records of a message at once
			k.limit, k.sliced = 0, false
		}
	}
	if cfg.Headers {
		cfg.headerLinks(k, m.Header, "")
	}
	res.Parts = len(parts)
	sc := scanners.Get().(*extract.Scanner)
	defer func() {
		sc.ResetBytes(nil, nil) // keep no reference to the message's text
		scanners.Put(sc)
	}()
	for _, p := range parts {
		if cfg.Headers && p.ContentType == "message/rfc822" && p.Header != nil {
			cfg.headerLinks(k, p.Header, p.Path)
		}
		if p.Text == nil {
			continue
		}
		rec := k.base
		rec.Part, rec.ContentType, rec.Where = p.Path, p.ContentType, p.Where
		sc.ResetBytes(p.Text, &cfg.Extract)
		for sc.Scan() {
			l := sc.Link()
			// filled in place: a record is large to copy
			res.Records = append(res.Records, rec)
			r := &res.Records[len(res.Records)-1]
			fill(r, &l)
			r.RawOffset = p.RawOffset(int(l.Start))
			// raw_start and raw_end are where the URL's own first
			// character begins and its last ends: for a link in pieces
			// (a closer on a later line, white space inside <...>) the
			// start of its first segment and the end of its last, not
			// the closer's
			segs := l.Spans()
			first, last := segs[0], segs[len(segs)-1]
			r.RawStart, r.RawEnd, _ = p.RawSpan(int(first.Start), int(first.End))
			if len(segs) > 1 {
				_, r.RawEnd, _ = p.RawSpan(int(last.Start), int(last.End))
			}
			if !cfg.keep(r) {
				res.Records = res.Records[:len(res.Records)-1]
			}
			k.full()
		}
		cfg.attrLinks(k, &rec, p)
		m.Problems = append(m.Problems, p.Problems...)
	}
	if len(cfg.Stages) > 0 {
		// the whole message at once, or the last of its slices
		compacted := res.store != nil && res.store.n > 0
		res.Records = cfg.stages(m, parts, res.Records, k.sliced && compacted, true)
	}
	res.Problems = m.Problems
	if !cfg.Hold {
		m.Release() // the text is scanned; the bytes can be reused
	}
	return *res
}

func fill(r *record.Record, l *extract.Link) {
	r.URL, r.Canonical, r.Form = l.URL, l.Canonical, string(l.Form)
	r.Joined, r.Heuristic, r.Valid, r.Problems = l.Joined, l.Heuristic, l.Valid, l.Problems
	r.Scheme, r.Host = l.Scheme, l.Host // one parse, in extract
	r.Line, r.Column, r.Start, r.End = l.Line, l.Column, l.Start, l.End
}

func (cfg *Config) keep(r *record.Record) bool {
	if len(cfg.Schemes) > 0 && !cfg.Schemes[r.Scheme] {
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
// subdomains, and a name written fully qualified, with a dot at its end
// ("example.org."), is the same name.
func hostMatch(pattern, host string) bool {
	if pattern == "" {
		return false
	}
	pattern = strings.ToLower(pattern)
	// a name written fully qualified ("example.org.") is the same name
	host = strings.TrimSuffix(host, ".")
	pattern = strings.TrimSuffix(pattern, ".")
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
func (cfg *Config) headerLinks(k *sink, h mailbox.Header, part string) {
	res, base := &k.res, &k.base
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
			r.RawOffset, r.RawStart, r.RawEnd = f.Offset, f.Offset, f.End
			if cfg.keep(&r) {
				res.Records = append(res.Records, r)
				k.full()
			}
		}
	}
}

// attrLinks turns the URLs of HTML attributes into records, resolved
// against the part's base (Content-Base, Content-Location or <base>).
func (cfg *Config) attrLinks(k *sink, base *record.Record, p *mailbox.Part) {
	res := &k.res
	if len(p.AttrLinks) == 0 {
		return
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
		r.Where = attrWhere(a.Attr)
		r.URL, r.Form = url, "html"
		r.Line, r.Column = lines.pos(a.Text)
		r.Start, r.End = int64(a.Text), int64(a.Text)
		r.RawOffset, r.RawStart, r.RawEnd = a.Raw, a.Raw, a.Raw
		full := url
		if !hasScheme(full) {
			if p.Base == "" || !hasScheme(p.Base) {
				r.Problems = []string{"relative URL without a base"}
				if cfg.keep(&r) && len(cfg.Schemes) == 0 {
					res.Records = append(res.Records, r)
					k.full()
				}
				continue
			}
			if res, err := uri.Resolve(p.Base, full, uri.RFC3986); err == nil {
				full = res
			}
		}
		record.Normalize(&r, full)
		if cfg.keep(&r) {
			res.Records = append(res.Records, r)
			k.full()
		}
	}
}

// attrWhere is a record's Where for a link in an HTML attribute: a
// constant string for the attributes mailbox gives as constants (no
// string made per link).
func attrWhere(attr string) string {
	switch attr {
	case "href":
		return "html:href"
	case "src":
		return "html:src"
	case "cite":
		return "html:cite"
	case "background":
		return "html:background"
	case "action":
		return "html:action"
	case "longdesc":
		return "html:longdesc"
	}
	return "html:" + attr
}

// attrURL cleans the URL of an HTML attribute so that a record's URL
// never holds white space: white space around it is dropped; a run of
// white space inside it that holds a tab or a line break (a value wrapped
// over lines, with its indentation) is removed, as RFC 3986 appendix C
// and browsers do; any other white space inside it is percent-encoded,
// as browsers do with "my file.html".
func attrURL(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f {
			return attrURLSpaces(s)
		}
	}
	return s // printable ASCII without a space: nothing to clean (the common case)
}

// attrURLSpaces is attrURL for a URL that may hold white space.
func attrURLSpaces(s string) string {
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

// Progress receives progress from Run; any method may be called from
// another goroutine.
type Progress interface {
	BytesRead(n int64)
}

// Opener opens an input; Run uses it so that tests and the command can
// give standard input for "-".
type Opener func(name string) (*mailbox.Reader, error)

// item is a message and its result, the unit internal/ordered moves
// through the pipeline; an input's error has no message.
type item struct {
	m   *mailbox.Message
	res Result
}

// keepRecords is the largest record slice a recycled result keeps, so
// that what the batches hold between messages stays small.
const keepRecords = 16

// Run scans the inputs and calls emit with each message's result in input
// order. An input that cannot be opened or read gives a Result with Err.
// Run stops early if emit returns an error, and returns it. emit must not
// keep the Result or its Records after it returns: their memory is
// reused for later messages (with Config.Hold, the message is the
// caller's to release).
//
// The pipeline is internal/ordered's: one goroutine reads and splits the
// inputs, Jobs workers parse, walk and scan the messages, a batch of up to
// 16 messages or 128 KiB at a time, and emit runs in the caller's
// goroutine. Messages of standard input ("-"), which may be a pipe fed
// slowly, go on one at a time.
func Run(inputs []string, open Opener, cfg *Config, prog Progress, emit func(*Result) error) error {
	o := ordered.Options{Jobs: cfg.Jobs, InFlightBytes: cfg.InFlightBytes, HoldUntilEmitted: cfg.Hold}
	read := func(f *ordered.Feed[item]) {
		ReadInputs(f, inputs, &Inputs[item]{Open: open, Progress: prog,
			Message: func(it *item, _ string, m *mailbox.Message) { it.m = m },
			Err: func(it *item, in string, err error) {
				// an input's error, like a message; the slot's memory
				// (records, store) is kept for later messages
				recs, store := it.res.Records[:0], it.res.store
				*it = item{res: Result{Path: in, Err: err, Records: recs, store: store}}
			}})
	}
	work := func(it *item) {
		if it.m != nil { // else it.res is an input's error
			it.res = messageInto(it.m, cfg, it.res.Records[:0], it.res.store)
		}
	}
	reset := func(it *item) {
		recs := it.res.Records
		if cap(recs) > keepRecords {
			recs = nil
		}
		clear(recs) // no strings of past messages kept alive
		store := it.res.store
		if store != nil {
			store.reset(nil) // its chunks go back to the pool
		}
		*it = item{res: Result{Records: recs[:0], store: store}}
	}
	return ordered.Run(o, read, work, func(it *item) error { return emit(&it.res) }, reset)
}

// Text scans plain text (not a message) from r, streaming, and calls emit
// for each link.
func Text(name string, r io.Reader, cfg *Config, emit func(*record.Record) error) error {
	sc := extract.NewScanner(r, &cfg.Extract)
	for sc.Scan() {
		l := sc.Link()
		rec := record.Record{Path: name, Where: "body", RawOffset: l.Start, RawStart: l.Start, RawEnd: l.End}
		fill(&rec, &l)
		if cfg.keep(&rec) {
			if err := emit(&rec); err != nil {
				return err
			}
		}
	}
	return sc.Err()
}
