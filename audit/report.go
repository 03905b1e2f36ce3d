package audit

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/linkscan/linkscan/internal/termesc"
	"github.com/linkscan/linkscan/record"
)

// Formats lists the report formats NewWriter knows.
var Formats = []string{"jsonl", "csv", "markdown", "summary", "html"}

// Writer writes results in one format. Close must be called at the end:
// the summary and HTML formats write everything then, and the others
// flush.
type Writer interface {
	Write(r Result) error
	Close() error
}

// ReportOptions tunes a report.
type ReportOptions struct {
	Title   string    // of the HTML page and the summary; "linkscan audit"
	Now     time.Time // when the report was made (shown); zero: not shown
	MaxRows int       // links of each status listed in the HTML report (dead, failing, redirected, blocked); 5000 (the rest counted)
}

// Record is one result as the jsonl and csv formats write it: the
// fields of Fields, in its order. The link's place has the names and
// meanings of scan's records (record.Shared).
type Record struct {
	URL           string `json:"url"`
	Scheme        string `json:"scheme"`
	Host          string `json:"host"`
	Status        Status `json:"status"`
	Permanent     bool   `json:"permanent,omitempty"`
	HTTPStatus    int    `json:"http_status,omitempty"`
	Class         Class  `json:"class,omitempty"`
	Error         string `json:"error,omitempty"`
	FinalURL      string `json:"final_url,omitempty"`
	Redirects     []Hop  `json:"redirects,omitempty"`
	Attempts      int    `json:"attempts"`
	CheckedAt     string `json:"checked_at"`
	Cached        bool   `json:"cached,omitempty"`
	FirstSeen     string `json:"first_seen"`
	LastOK        string `json:"last_ok"`
	Failures      int    `json:"failures"`
	FailingSince  string `json:"failing_since"`
	ArchiveURL    string `json:"archive_url"`
	ArchiveTime   string `json:"archive_time"`
	ArchiveSource string `json:"archive_source"`
	Path          string `json:"path"`
	Blob          string `json:"blob"`
	Offset        int64  `json:"offset"`
	MessageID     string `json:"message_id"`
	Part          string `json:"part"`
	Line          int    `json:"line"`
	Column        int    `json:"column"`
	Date          string `json:"date"`
	Count         int    `json:"count"`
}

// Fields is the table of Record's fields, in the order of jsonl and csv
// output: the one place their names and meanings are written. The csv
// header, the help of linkscan audit and the table in docs/audit.md are
// made from it, and report_test.go holds Record's JSON tags and the csv
// columns to it. The location is scan's (record.Shared); url, status,
// date and count mean something else than the fields of scan's records
// with those names, as their Docs say.
var Fields = record.Table{
	{Name: "url", Doc: "the link's canonical form ([uri.md](uri.md)), with its user information replaced by `REDACTED@` (scan's `url` is the link as written)"},
	record.Shared.Scheme,
	record.Shared.Host,
	{Name: "status", Doc: statusList() + " ([Statuses](#statuses))"},
	{Name: "permanent", Omitted: true, Doc: "`redirected`: every redirect was permanent (301, 308); `failing` or `dead`: the failure is permanent (a `syntax` error, an HTTP 410 Gone), `dead` at once"},
	{Name: "http_status", Omitted: true, Doc: "the last HTTP status; left out when there was none"},
	{Name: "class", Omitted: true, Doc: "the class of a failure, or why the link is unchecked ([Statuses](#statuses)); left out when there is none (`ok`, `redirected`, `offline-ok`)"},
	{Name: "error", Omitted: true, Doc: "what failed, or why the link is unchecked, credentials redacted; left out when nothing failed"},
	{Name: "final_url", Omitted: true, Doc: "the URL that answered last, credentials redacted; left out when it is `url`"},
	{Name: "redirects", Omitted: true, Doc: "the redirects followed, in order, each `{\"url\": ..., \"status\": N}` (credentials redacted); in csv `STATUS URL` joined by ` \\| `"},
	{Name: "attempts", Doc: "requests made, retries included"},
	{Name: "checked_at", Doc: "when the check the result stands on began (RFC 3339, UTC)"},
	{Name: "cached", Omitted: true, Doc: "that check comes from the history (`--max-age`, `--offline`), not from this run"},
	{Name: "first_seen", Doc: "the link's first check in the history (this one when new)"},
	{Name: "last_ok", Doc: "its last check that worked; `\"\"` when none"},
	{Name: "failures", Doc: "failing checks since the last that worked"},
	{Name: "failing_since", Doc: "the first of those; `\"\"` when none"},
	{Name: "archive_url", Doc: "failing and dead http(s) links: the archived copy closest to the message's date, when one was found ([Archived copies](#archived-copies)); `\"\"` otherwise"},
	{Name: "archive_time", Doc: "when that copy was captured"},
	{Name: "archive_source", Doc: "`wayback` or `memento`"},
	record.Shared.Path,
	record.Shared.Blob,
	record.Shared.Offset,
	record.Shared.MessageID,
	record.Shared.Part,
	record.Shared.Line,
	record.Shared.Column,
	{Name: "date", Doc: "the message's `Date`, RFC 3339 in UTC (scan's `date` keeps the message's zone); `\"\"` when unknown"},
	{Name: "count", Doc: "occurrences of the link in the input (scan's `count` is there with `--unique` only)"},
}

// statusList writes the statuses as the docs' table does:
// "`ok`, `redirected`, ... or `offline-ok`".
func statusList() string {
	var b strings.Builder
	for i, st := range Statuses {
		switch {
		case i == len(Statuses)-1:
			b.WriteString(" or ")
		case i > 0:
			b.WriteString(", ")
		}
		b.WriteString("`" + string(st) + "`")
	}
	return b.String()
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// MakeRecord turns a result into its record.
func MakeRecord(r Result) Record {
	rec := Record{
		URL: Redact(r.Link.URL), Scheme: r.Link.Scheme, Host: r.Link.Host, Status: r.Status,
		Permanent: r.Check.Permanent, HTTPStatus: r.Check.HTTPStatus, Class: r.Check.Class, Error: r.Check.Error,
		FinalURL: Redact(r.Check.FinalURL), Redirects: r.Check.Chain, Attempts: r.Check.Attempts,
		CheckedAt: stamp(r.Check.Time), Cached: r.Cached, FirstSeen: stamp(r.FirstSeen), LastOK: stamp(r.LastOK),
		Failures: r.Failures, FailingSince: stamp(r.FailingSince),
		Path: r.Link.Path, Blob: r.Link.Blob, Offset: r.Link.Offset, MessageID: r.Link.MessageID, Part: r.Link.Part,
		Line: r.Link.Line, Column: r.Link.Column, Date: stamp(r.Link.Date), Count: r.Link.Count,
	}
	if rec.FinalURL == rec.URL {
		rec.FinalURL = ""
	}
	if a := r.Archive; a != nil {
		rec.ArchiveURL, rec.ArchiveTime, rec.ArchiveSource = a.URL, stamp(a.Time), a.Source
	}
	return rec
}

// csvColumns are the columns of the csv format, in order.
var csvColumns = Fields.CSVColumns()

func (rec *Record) columns() []string {
	var hops []string
	for _, h := range rec.Redirects {
		hops = append(hops, strconv.Itoa(h.Status)+" "+h.URL)
	}
	b := func(v bool) string { return strconv.FormatBool(v) }
	return []string{rec.URL, rec.Scheme, rec.Host, string(rec.Status), b(rec.Permanent), strconv.Itoa(rec.HTTPStatus),
		string(rec.Class), rec.Error, rec.FinalURL, strings.Join(hops, " | "), strconv.Itoa(rec.Attempts), rec.CheckedAt,
		b(rec.Cached), rec.FirstSeen, rec.LastOK, strconv.Itoa(rec.Failures), rec.FailingSince, rec.ArchiveURL,
		rec.ArchiveTime, rec.ArchiveSource, rec.Path, rec.Blob, strconv.FormatInt(rec.Offset, 10), rec.MessageID, rec.Part,
		strconv.Itoa(rec.Line), strconv.Itoa(rec.Column), rec.Date, strconv.Itoa(rec.Count)}
}

// NewWriter returns a Writer of format (one of Formats) on w.
func NewWriter(w io.Writer, format string, opts ReportOptions) (Writer, error) {
	if opts.Title == "" {
		opts.Title = "linkscan audit"
	}
	if opts.MaxRows <= 0 {
		opts.MaxRows = 5000
	}
	bw := bufio.NewWriter(w)
	switch format {
	case "jsonl":
		return &jsonlWriter{w: bw, enc: json.NewEncoder(bw)}, nil
	case "csv":
		cw := csv.NewWriter(bw)
		return &csvWriter{w: bw, cw: cw}, nil
	case "markdown":
		return &markdownWriter{w: bw}, nil
	case "summary":
		return &summaryWriter{w: bw, st: newStats(opts.MaxRows), opts: opts}, nil
	case "html":
		return &htmlWriter{w: bw, st: newStats(opts.MaxRows), opts: opts}, nil
	}
	return nil, fmt.Errorf("audit: unknown report format %q (known: %s)", format, strings.Join(Formats, ", "))
}

type jsonlWriter struct {
	w   *bufio.Writer
	enc *json.Encoder
}

func (j *jsonlWriter) Write(r Result) error { return j.enc.Encode(MakeRecord(r)) }
func (j *jsonlWriter) Close() error         { return j.w.Flush() }

type csvWriter struct {
	w      *bufio.Writer
	cw     *csv.Writer
	header bool
}

func (c *csvWriter) Write(r Result) error {
	if !c.header {
		c.header = true
		if err := c.cw.Write(csvColumns); err != nil {
			return err
		}
	}
	rec := MakeRecord(r)
	return c.cw.Write(rec.columns())
}

func (c *csvWriter) Close() error {
	if !c.header {
		c.header = true
		c.cw.Write(csvColumns)
	}
	c.cw.Flush()
	if err := c.cw.Error(); err != nil {
		return err
	}
	return c.w.Flush()
}

type markdownWriter struct {
	w      *bufio.Writer
	header bool
}

// mdReplacer escapes what Markdown would read in a table cell, with
// backslashes, which CommonMark takes off every ASCII punctuation mark:
// no HTML entity, so that the report reads the same as text.
var mdReplacer = strings.NewReplacer("|", `\|`, "`", "\\`", "<", `\<`, "[", `\[`, "]", `\]`)

// mdEntity is what CommonMark reads as an entity or a character
// reference ("&amp;", "&#38;"): its "&" is escaped.
var mdEntity = regexp.MustCompile(`&(?:[A-Za-z][A-Za-z0-9]*|#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6});`)

// mdCell escapes text for a cell of a Markdown table: control characters
// (a line break, or an escape sequence from an archive that would reach
// the terminal of whoever prints the report) as the text formats write
// them (internal/termesc), then Markdown's own.
func mdCell(s string) string {
	s = mdReplacer.Replace(termesc.String(s))
	if strings.IndexByte(s, '&') >= 0 {
		s = mdEntity.ReplaceAllStringFunc(s, func(e string) string { return `\` + e })
	}
	return s
}

func (m *markdownWriter) Write(r Result) error {
	if !m.header {
		m.header = true
		if _, err := m.w.WriteString("| status | url | http | error | first seen in | message date | archived copy |\n|---|---|---|---|---|---|---|\n"); err != nil {
			return err
		}
	}
	rec := MakeRecord(r)
	code := ""
	if rec.HTTPStatus != 0 {
		code = strconv.Itoa(rec.HTTPStatus)
	}
	where := rec.Path
	if rec.Blob != "" {
		where += "#" + rec.Blob
	}
	if rec.MessageID != "" {
		where += " <" + rec.MessageID + ">"
	}
	arch := ""
	if rec.ArchiveURL != "" {
		arch = rec.ArchiveURL
	}
	_, err := fmt.Fprintf(m.w, "| %s | %s | %s | %s | %s | %s | %s |\n", rec.Status, mdCell(rec.URL), code,
		mdCell(rec.Error), mdCell(where), rec.Date, mdCell(arch))
	return err
}

func (m *markdownWriter) Close() error {
	if !m.header {
		m.w.WriteString("No links.\n")
	}
	return m.w.Flush()
}

// stats gathers what the summary and HTML reports show.
type stats struct {
	total    int
	byStatus map[Status]int
	byClass  map[Class]int
	years    map[int]*yearStats
	hosts    map[string]*hostStats
	rows     map[Status][]Record // the links of each listed status (listedStatuses), up to max each
	more     map[Status]int      // of those, the links not kept
	max      int
	archived int
}

type yearStats struct{ works, judged int }

type hostStats struct{ dead, failing int }

func newStats(max int) *stats {
	return &stats{byStatus: map[Status]int{}, byClass: map[Class]int{}, years: map[int]*yearStats{}, hosts: map[string]*hostStats{},
		rows: map[Status][]Record{}, more: map[Status]int{}, max: max}
}

func (s *stats) add(r Result) {
	s.total++
	s.byStatus[r.Status]++
	if r.Check.Class != ClassNone {
		s.byClass[r.Check.Class]++
	}
	if r.Archive != nil {
		s.archived++
	}
	// survival counts the links whose state is known: neither unchecked
	// nor blocked
	if !r.Link.Date.IsZero() && r.Status != Unchecked && r.Status != Blocked {
		y := r.Link.Date.UTC().Year()
		ys := s.years[y]
		if ys == nil {
			ys = &yearStats{}
			s.years[y] = ys
		}
		ys.judged++
		if r.Status.Works() {
			ys.works++
		}
	}
	if r.Status == Dead || r.Status == Failing {
		h := r.Link.Host
		if h == "" {
			h = "(" + r.Link.Scheme + ")"
		}
		hs := s.hosts[h]
		if hs == nil {
			hs = &hostStats{}
			s.hosts[h] = hs
		}
		if r.Status == Dead {
			hs.dead++
		} else {
			hs.failing++
		}
	}
	if slices.Contains(listedStatuses, r.Status) {
		if len(s.rows[r.Status]) < s.max {
			s.rows[r.Status] = append(s.rows[r.Status], MakeRecord(r))
		} else {
			s.more[r.Status]++
		}
	}
}

// listedStatuses are the statuses whose links the HTML report lists, each
// in a section of its own, in this order.
var listedStatuses = []Status{Dead, Failing, Redirected, Blocked}

type hostCount struct {
	Host          string
	Dead, Failing int
}

// topHosts returns the n hosts with most dead links (then failing, then by
// name).
func (s *stats) topHosts(n int) []hostCount {
	var out []hostCount
	for h, c := range s.hosts {
		out = append(out, hostCount{h, c.dead, c.failing})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Dead != b.Dead {
			return a.Dead > b.Dead
		}
		if a.Failing != b.Failing {
			return a.Failing > b.Failing
		}
		return a.Host < b.Host
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

type yearShare struct {
	Year          int
	Works, Judged int
	Share         float64 // Works/Judged
}

func (s *stats) survival() []yearShare {
	var out []yearShare
	for y, ys := range s.years {
		out = append(out, yearShare{y, ys.works, ys.judged, float64(ys.works) / float64(ys.judged)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Year < out[j].Year })
	return out
}

type summaryWriter struct {
	w    *bufio.Writer
	st   *stats
	opts ReportOptions
}

func (s *summaryWriter) Write(r Result) error { s.st.add(r); return nil }

func (s *summaryWriter) Close() error {
	st := s.st
	fmt.Fprintf(s.w, "%s: %d links\n", termesc.String(s.opts.Title), st.total)
	for _, status := range Statuses {
		fmt.Fprintf(s.w, "  %-11s %d\n", status, st.byStatus[status])
	}
	if len(st.byClass) > 0 {
		var cs []string
		for c := range st.byClass {
			cs = append(cs, string(c))
		}
		sort.Strings(cs)
		fmt.Fprintf(s.w, "by class:\n")
		for _, c := range cs {
			fmt.Fprintf(s.w, "  %-15s %d\n", c, st.byClass[Class(c)])
		}
	}
	fmt.Fprintf(s.w, "archived copies found: %d\n", st.archived)
	if sv := st.survival(); len(sv) > 0 {
		fmt.Fprintf(s.w, "links that work, by year of the message:\n")
		for _, y := range sv {
			fmt.Fprintf(s.w, "  %d  %3.0f%%  (%d of %d)\n", y.Year, 100*y.Share, y.Works, y.Judged)
		}
	}
	if hs := st.topHosts(20); len(hs) > 0 {
		fmt.Fprintf(s.w, "hosts with most dead (and failing) links:\n")
		for _, h := range hs {
			fmt.Fprintf(s.w, "  %-40s %d dead, %d failing\n", termesc.String(h.Host), h.Dead, h.Failing)
		}
	}
	return s.w.Flush()
}
