// Package report writes link records in the formats linkscan offers:
// JSON lines, CSV, aligned text, and summaries (plain and JSON). The
// records and their field names come from package record; the tests hold
// the writers to its table of fields.
package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/linkscan/linkscan/internal/spill"
	"github.com/linkscan/linkscan/record"
)

// Record is one occurrence of a link; its home is package record.
type Record = record.Record

// Target is where a reference leads; its home is package record.
type Target = record.Target

// Fields lists the column names of CSV output, in order (from
// record.Fields).
var Fields = record.CSVColumns()

// columns returns r's CSV columns, in the order of Fields.
func columns(r *Record) []string {
	var t Target
	off := ""
	if r.Target != nil {
		t = *r.Target
		off = strconv.FormatInt(t.Offset, 10)
	}
	return []string{r.URL, r.Canonical, r.Form, strconv.FormatBool(r.Joined), strconv.FormatBool(r.Heuristic),
		strconv.FormatBool(r.Valid), strings.Join(r.Problems, "; "), r.Scheme, r.Host,
		r.Path, r.Blob, strconv.FormatInt(r.Offset, 10), r.MessageID, r.Date, r.From, r.Subject, r.Newsgroups,
		r.Part, r.ContentType, r.Where, strconv.Itoa(r.Line), strconv.Itoa(r.Column),
		strconv.FormatInt(r.Start, 10), strconv.FormatInt(r.End, 10), strconv.FormatInt(r.RawOffset, 10), strconv.FormatInt(r.RawStart, 10), strconv.FormatInt(r.RawEnd, 10), strconv.Itoa(r.Count),
		r.Status, t.File, off, t.MessageID, t.Part, t.Group, t.Blob, strconv.Itoa(len(r.Targets))}
}

// Format names an output format.
type Format string

// The formats.
const (
	JSONL       Format = "jsonl"
	CSV         Format = "csv"
	Text        Format = "text"
	PlainText   Format = "plain" // FILE:LINE:COL URL, for text input
	Summary     Format = "summary"
	SummaryJSON Format = "summary-json"
	URLs        Format = "urls" // one link a line, its url field
)

// Formats lists the formats for help texts.
var Formats = []Format{Text, JSONL, CSV, URLs, Summary, SummaryJSON}

// Writer writes records in one format.
type Writer interface {
	Write(r *Record) error
	// Message counts a message read, damaged or not, and its parts.
	Message(parts int, damaged bool)
	Close() error
}

// Flusher is implemented by the writers that hold records back (text, to
// line up its columns; CSV): Flush writes out what they hold, so that a
// caller can pass on each message's records as soon as they are known.
type Flusher interface {
	Flush() error
}

// NewWriter returns a Writer of format f on w.
func NewWriter(w io.Writer, f Format) (Writer, error) {
	switch f {
	case JSONL:
		return &fastJSONWriter{w: w}, nil
	case CSV:
		cw := csv.NewWriter(w)
		if err := cw.Write(Fields); err != nil {
			return nil, err
		}
		return &csvWriter{w: cw}, nil
	case Text:
		return &textWriter{w: w, tw: tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)}, nil
	case PlainText:
		return &textWriter{w: w, plain: true}, nil
	case URLs:
		return urlsWriter{w: w}, nil
	case Summary, SummaryJSON:
		return NewSummary(w, f == SummaryJSON, DefaultMemory, ""), nil
	}
	return nil, fmt.Errorf("report: unknown format %q", f)
}

type nopCounter struct{}

func (nopCounter) Message(int, bool) {}

type csvWriter struct {
	nopCounter
	w *csv.Writer
}

func (c *csvWriter) Write(r *Record) error { return c.w.Write(columns(r)) }
func (c *csvWriter) Flush() error          { c.w.Flush(); return c.w.Error() }
func (c *csvWriter) Close() error          { return c.Flush() }

type textWriter struct {
	nopCounter
	w     io.Writer
	tw    *tabwriter.Writer // aligns columns, flushed every textBlock records
	n     int
	plain bool
}

// textBlock is how many records share one alignment of the text columns:
// enough to read as a table, few enough to stream.
const textBlock = 200

// Write prints PATH#OFFSET <message-id> PART LINE:COL URL in columns that
// line up over blocks of records (PATH#BLOB for a message of a git
// archive, PATH its epoch repository). The offset follows the last '#': a
// colon would be ambiguous, Maildir names hold colons (":2,S"). Every
// field goes through Escape, so that archive bytes cannot drive a
// terminal.
func (t *textWriter) Write(r *Record) error {
	var err error
	if t.plain {
		_, err = fmt.Fprintf(t.w, "%s:%d:%d %s\n", Escape(r.Path), r.Line, r.Column, Escape(r.URL))
		return err
	}
	loc := Escape(r.Path) + "#" + strconv.FormatInt(r.Offset, 10)
	if r.Blob != "" {
		loc = Escape(r.Path) + "#" + Escape(r.Blob) // a git message: its blob, offsets within it
	}
	id := "<" + Escape(r.MessageID) + ">"
	if r.MessageID == "" {
		id = "-"
	}
	part := r.Part
	if strings.HasPrefix(r.Where, "header:") || r.Where == "preamble" || r.Where == "epilogue" {
		part = r.Where
	}
	extra := ""
	if r.Count > 0 {
		extra = fmt.Sprintf("  (%d)", r.Count)
	}
	if r.Status != "" {
		extra += "  " + r.Status
		if t := r.Target; t != nil {
			at := strconv.FormatInt(t.Offset, 10)
			if t.Blob != "" {
				at = t.Blob // a message of a git archive
			}
			switch {
			case t.File != "" && t.Part != "":
				extra += fmt.Sprintf(" -> %s#%s part %s", t.File, at, t.Part)
			case t.File != "":
				extra += fmt.Sprintf(" -> %s#%s", t.File, at)
			case t.Group != "":
				extra += " -> " + t.Group
			}
			if n := len(r.Targets); n > 1 {
				extra += fmt.Sprintf(" (+%d)", n-1)
			}
		}
	}
	_, err = fmt.Fprintf(t.tw, "%s\t%s\t%s\t%d:%d\t%s%s\n", loc, id, Escape(part), r.Line, r.Column, Escape(r.URL), Escape(extra))
	if t.n++; t.n%textBlock == 0 && err == nil {
		err = t.tw.Flush()
	}
	return err
}

// Flush writes out the records held back for alignment; the next ones
// start a new block.
func (t *textWriter) Flush() error {
	if t.tw != nil {
		t.n = 0
		return t.tw.Flush()
	}
	return nil
}

func (t *textWriter) Close() error { return t.Flush() }

// SummaryFields is the table of the fields of summary-json (Stats), in
// its order: the one place their names and meanings are written.
// report_test.go holds Stats' JSON tags and the output to it, and
// docs/scan.md's table of them is made from it.
var SummaryFields = record.Table{
	{Name: "messages", Doc: "messages read, damaged or not"},
	{Name: "parts", Doc: "their MIME parts"},
	{Name: "links", Doc: "links found (with `--unique`, the sum of the counts)"},
	{Name: "distinct_canonical", Doc: "distinct canonical forms (a link without one counted by its `url`)"},
	{Name: "invalid_links", Doc: "links whose canonical form has problems (`valid` false)"},
	{Name: "damaged_messages", Doc: "messages in which damage was reported"},
	{Name: "heuristic_joins", Doc: "links joined by the mailer-wrap rule (`heuristic`)"},
	{Name: "schemes", Doc: "links per scheme (`(none)` for links without one)"},
	{Name: "top_hosts", Doc: "the 20 hosts with most links, most first (then by name), each `{\"host\": ..., \"links\": N}`"},
	{Name: "links_per_year", Doc: "links per year of the message's date (`unknown` without one)"},
	{Name: "unreadable_inputs", Doc: "inputs that could not be read at all"},
	{Name: "statuses", Omitted: true, Doc: "with `--resolve` (and in `linkscan resolve`): references per `status`; left out without"},
}

// Stats are the totals of a summary: the fields of SummaryFields.
type Stats struct {
	Messages      int            `json:"messages"`
	Parts         int            `json:"parts"`
	Links         int            `json:"links"`
	Distinct      int            `json:"distinct_canonical"`
	Invalid       int            `json:"invalid_links"`
	Damaged       int            `json:"damaged_messages"`
	Heuristic     int            `json:"heuristic_joins"`
	Schemes       map[string]int `json:"schemes"`
	TopHosts      []HostCount    `json:"top_hosts"`
	Years         map[string]int `json:"links_per_year"`
	DamagedInputs int            `json:"unreadable_inputs"`
	Statuses      map[string]int `json:"statuses,omitempty"` // with resolution
}

// HostCount is a host and its number of links.
type HostCount struct {
	Host  string `json:"host"`
	Links int    `json:"links"`
}

func newSummary() *Stats {
	return &Stats{Schemes: map[string]int{}, Years: map[string]int{}}
}

// topHostsN is how many hosts a summary lists.
const topHostsN = 20

// NewSummary returns the summary Writer (JSON with asJSON) that keeps
// what grows with the archive within about memory bytes
// (DefaultMemory when memory <= 0), spilling to temporary files in
// tmpDir ("" = os.TempDir()) past it, so that a summary of any archive
// runs in bounded memory: seven eighths for its count of distinct
// links, 128-bit hashes of them (a spill.Set: two links share one with a
// probability of about n²/2¹²⁹), and an eighth for the links per host,
// the host names and their counts (a spill.Counter: exact, runs of hosts
// sorted by name merged at Close, where the top hosts are picked). A
// temporary file that cannot be made or written is an error of Write,
// which names the file or the directory, and of Close; Close then writes
// nothing. Temporary files are removed at once (on Unix) or at Close.
func NewSummary(w io.Writer, asJSON bool, memory int64, tmpDir string) Writer {
	if memory <= 0 {
		memory = DefaultMemory
	}
	return &summaryWriter{w: w, json: asJSON, s: newSummary(), memory: memory, tmpDir: tmpDir}
}

type summaryWriter struct {
	w    io.Writer
	json bool
	s    *Stats

	memory   int64
	tmpDir   string
	distinct *spill.Set // made at the first record
	hasher   *spill.Hasher
	hosts    *spill.Counter // made at the first record with a host
	err      error          // of a spill: Close reports it and writes nothing
}

func (s *summaryWriter) Message(parts int, damaged bool) {
	s.s.Messages++
	s.s.Parts += parts
	if damaged {
		s.s.Damaged++
	}
}

// Unreadable counts an input that could not be read at all.
func (s *summaryWriter) Unreadable() { s.s.DamagedInputs++ }

func (s *summaryWriter) Write(r *Record) error {
	if s.err != nil {
		return s.err
	}
	st := s.s
	n := max(r.Count, 1)
	st.Links += n
	key := r.Canonical
	if key == "" {
		key = r.URL
	}
	if s.distinct == nil {
		s.distinct, s.hasher = spill.NewSet(s.memory-s.memory/8, s.tmpDir), spill.NewHasher()
	}
	if _, _, err := s.distinct.Add(s.hasher.String(key)); err != nil {
		s.err = fmt.Errorf("report: summary: %w", err)
		return s.err
	}
	if r.Host != "" {
		if s.hosts == nil {
			s.hosts = spill.NewCounter(s.memory/8, s.tmpDir)
		}
		if err := s.hosts.Add(r.Host, uint64(n)); err != nil {
			s.err = fmt.Errorf("report: summary: %w", err)
			return s.err
		}
	}
	if !r.Valid {
		st.Invalid += n
	}
	if r.Heuristic {
		st.Heuristic += n
	}
	scheme := r.Scheme
	if scheme == "" {
		scheme = "(none)"
	}
	st.Schemes[scheme] += n
	year := "unknown"
	if len(r.Date) >= 4 {
		year = r.Date[:4]
	}
	st.Years[year] += n
	if r.Status != "" {
		if st.Statuses == nil {
			st.Statuses = map[string]int{}
		}
		st.Statuses[r.Status] += n
	}
	return nil
}

// release closes the spill structures, removing their temporary files.
func (s *summaryWriter) release() error {
	var err error
	if s.distinct != nil {
		err = s.distinct.Close()
		s.distinct = nil
	}
	if s.hosts != nil {
		if e := s.hosts.Close(); err == nil {
			err = e
		}
		s.hosts = nil
	}
	if err != nil {
		return fmt.Errorf("report: summary: %w", err)
	}
	return nil
}

func (s *summaryWriter) Close() error {
	if s.err != nil {
		s.release()
		return s.err
	}
	st := s.s
	if s.distinct != nil {
		st.Distinct = int(s.distinct.Len())
		if err := s.distinct.Close(); err != nil { // its memory goes before the hosts are merged
			s.release()
			return fmt.Errorf("report: summary: %w", err)
		}
		s.distinct = nil
	}
	st.TopHosts = []HostCount{}
	if s.hosts != nil {
		err := s.hosts.Each(func(host []byte, n uint64) error {
			st.TopHosts = addTop(st.TopHosts, host, int(min(n, uint64(maxInt))))
			return nil
		})
		if rerr := s.release(); err == nil {
			err = rerr
		}
		if err != nil {
			s.err = fmt.Errorf("report: summary: %w", err)
			return s.err
		}
	}
	if s.json {
		enc := json.NewEncoder(s.w)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	w := s.w
	fmt.Fprintf(w, "messages          %d\n", st.Messages)
	fmt.Fprintf(w, "damaged messages  %d\n", st.Damaged)
	if st.DamagedInputs > 0 {
		fmt.Fprintf(w, "unreadable inputs %d\n", st.DamagedInputs)
	}
	fmt.Fprintf(w, "parts             %d\n", st.Parts)
	fmt.Fprintf(w, "links             %d\n", st.Links)
	fmt.Fprintf(w, "distinct links    %d\n", st.Distinct)
	fmt.Fprintf(w, "invalid links     %d\n", st.Invalid)
	fmt.Fprintf(w, "heuristic joins   %d\n", st.Heuristic)
	fmt.Fprintf(w, "\nlinks per scheme\n")
	for _, k := range sortedKeys(st.Schemes, true) {
		fmt.Fprintf(w, "  %-16s %d\n", Escape(k), st.Schemes[k])
	}
	fmt.Fprintf(w, "\ntop hosts\n")
	for _, h := range st.TopHosts {
		fmt.Fprintf(w, "  %-40s %d\n", Escape(h.Host), h.Links)
	}
	if len(st.Statuses) > 0 {
		fmt.Fprintf(w, "\nreferences per status\n")
		for _, k := range sortedKeys(st.Statuses, true) {
			fmt.Fprintf(w, "  %-16s %d\n", k, st.Statuses[k])
		}
	}
	fmt.Fprintf(w, "\nlinks per year\n")
	for _, k := range sortedKeys(st.Years, false) {
		fmt.Fprintf(w, "  %-8s %d\n", Escape(k), st.Years[k])
	}
	return nil
}

// Unreadable counts an input that could not be read, for summaries: it
// calls w's Unreadable method if it has one (summaries, and wrappers such
// as Unique that pass the count on).
func Unreadable(w Writer) {
	if u, ok := w.(interface{ Unreadable() }); ok {
		u.Unreadable()
	}
}

// addTop adds host with its links to top, the hosts with most links
// (then by name) sorted so, if it ranks among the first topHostsN.
func addTop(top []HostCount, host []byte, links int) []HostCount {
	below := func(e HostCount) bool { return e.Links < links || e.Links == links && e.Host > string(host) }
	if len(top) == topHostsN && !below(top[len(top)-1]) {
		return top
	}
	i := sort.Search(len(top), func(i int) bool { return below(top[i]) })
	if len(top) < topHostsN {
		top = append(top, HostCount{})
	}
	copy(top[i+1:], top[i:])
	top[i] = HostCount{string(host), links}
	return top
}

func sortedKeys(m map[string]int, byCount bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if byCount && m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}
