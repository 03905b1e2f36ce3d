package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/linkscan/linkscan/extract"
	"github.com/linkscan/linkscan/record"
)

// MaxRecordLine is the longest line ReadJSONL reads; a longer one is
// reported and skipped.
const MaxRecordLine = 1 << 20

// ErrTooManyLinks is returned by Collector.Add past its limit.
var ErrTooManyLinks = errors.New("audit: too many distinct links")

// Collector gathers distinct links, keyed by canonical URL: the first
// occurrence keeps its location, later ones add to Count.
type Collector struct {
	max   int
	idx   map[string]int
	links []Link
}

// NewCollector returns a Collector of at most max distinct links (0: no
// limit). Each costs its strings and about 200 bytes.
func NewCollector(max int) *Collector {
	return &Collector{max: max, idx: map[string]int{}}
}

// Add adds one occurrence (l.Count of them, at least 1).
func (c *Collector) Add(l Link) error {
	n := l.Count
	if n < 1 {
		n = 1
	}
	if i, ok := c.idx[l.URL]; ok {
		c.links[i].Count += n
		c.links[i].Cut = c.links[i].Cut && l.Cut // checked when one occurrence is whole
		return nil
	}
	if c.max > 0 && len(c.links) >= c.max {
		return fmt.Errorf("%w: more than %d", ErrTooManyLinks, c.max)
	}
	l.Count = n
	c.idx[l.URL] = len(c.links)
	c.links = append(c.links, l)
	return nil
}

// Links returns the distinct links in the order they were first seen.
func (c *Collector) Links() []Link { return c.links }

// scanRecord holds the fields of a scan record that make a Link.
type scanRecord struct {
	URL       string   `json:"url"`
	Canonical string   `json:"canonical"`
	Scheme    string   `json:"scheme"`
	Host      string   `json:"host"`
	Path      string   `json:"path"`
	Blob      string   `json:"blob"`
	Offset    int64    `json:"offset"`
	MessageID string   `json:"message_id"`
	Date      string   `json:"date"`
	Part      string   `json:"part"`
	Line      int      `json:"line"`
	Column    int      `json:"column"`
	Count     int      `json:"count"`
	Problems  []string `json:"problems"`
}

// RecordError is a line of JSON records that could not be used.
type RecordError struct {
	Line int64 // 1-based
	Err  error
}

func (e *RecordError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *RecordError) Unwrap() error { return e.Err }

// ReadStats counts what ReadJSONL read.
type ReadStats struct {
	Lines     int64 // lines read, empty ones included
	Links     int64 // records handed to add
	NoCanon   int64 // records without a canonical form (relative links without a base): not checkable
	BadLines  int64 // lines reported to bad
	Truncated bool  // reading stopped at an error of r or add
}

// ReadJSONL reads scan's JSON-lines records from r (`linkscan scan
// --format jsonl`, with or without --unique) and calls add with a Link for
// each: the canonical form, scheme, host, location, message Date (RFC 3339;
// none when empty or unreadable) and count (1 without --unique). A record
// with a url and no canonical form (another program's) is canonicalized
// as scan does (record.Normalize); one that has none (a relative link) is
// counted in NoCanon. A record whose problems say the extractor cut it
// (extract.ProblemTooLong) gives a Link with Cut set. A line
// that is not such a record, or longer than MaxRecordLine, goes to bad
// (when not nil) and reading goes on. An error of add or of r ends it.
func ReadJSONL(r io.Reader, add func(Link) error, bad func(*RecordError)) (ReadStats, error) {
	var st ReadStats
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte // a line longer than br's buffer, so far
	tooLong := false
	report := func(err error) {
		st.BadLines++
		if bad != nil {
			bad(&RecordError{Line: st.Lines, Err: err})
		}
	}
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull || len(long) > 0 || tooLong {
			if !tooLong && len(long)+len(line) > MaxRecordLine {
				tooLong, long = true, long[:0]
			}
			if !tooLong {
				long = append(long, line...)
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			line = long
		}
		if len(line) > 0 || tooLong {
			st.Lines++
			if tooLong {
				report(fmt.Errorf("line over %d bytes", MaxRecordLine))
			} else if e := st.one(line, add, report); e != nil {
				st.Truncated = true
				return st, e
			}
		}
		long, tooLong = long[:0], false
		if err == io.EOF {
			return st, nil
		}
		if err != nil {
			st.Truncated = true
			return st, err
		}
	}
}

// one handles one line; it returns only add's errors.
func (st *ReadStats) one(line []byte, add func(Link) error, report func(error)) error {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	var rec scanRecord
	if err := json.Unmarshal(line, &rec); err != nil {
		report(fmt.Errorf("not a JSON record: %w", err))
		return nil
	}
	if rec.URL == "" && rec.Canonical == "" {
		report(errors.New("a JSON record without url nor canonical"))
		return nil
	}
	if rec.Canonical == "" {
		// a record of another program, with only its url: canonicalized as
		// scan would have done (a relative link stays without a canonical
		// form, as in scan's records)
		var r record.Record
		record.Normalize(&r, rec.URL)
		if r.Canonical == "" {
			st.NoCanon++
			return nil
		}
		rec.Canonical, rec.Scheme, rec.Host = r.Canonical, r.Scheme, r.Host
	}
	l := Link{URL: rec.Canonical, Scheme: strings.ToLower(rec.Scheme), Host: strings.ToLower(rec.Host),
		Path: rec.Path, Blob: rec.Blob, Offset: rec.Offset, MessageID: rec.MessageID, Part: rec.Part,
		Line: rec.Line, Column: rec.Column, Count: rec.Count, Cut: slices.Contains(rec.Problems, extract.ProblemTooLong)}
	if l.Scheme == "" {
		if i := strings.IndexByte(l.URL, ':'); i > 0 {
			l.Scheme = strings.ToLower(l.URL[:i])
		}
	}
	if rec.Date != "" {
		if t, err := time.Parse(time.RFC3339, rec.Date); err == nil {
			l.Date = t
		}
	}
	st.Links++
	return add(l)
}
