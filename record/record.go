// Package record holds the pipeline's data: the Record of one link found
// in an archive, with where it was found, and the Target a reference
// leads to. It is the neutral home that scan fills and that report (the
// output formats), resolution, audit and rewrite decisions all read,
// without importing one another.
//
// Field names are a public contract: fields are added, never renamed or
// removed. Fields (fields.go) is the one table of them: JSON and CSV
// output, the help text and docs/scan.md are held to it by tests. The
// other reports (audit's records, rewrite's --report lines) have tables
// of their own (record.Table) that take the fields they share with
// Record, the link's place, from Shared; record/recordtest holds the
// checks that tie a table to its struct, output, help and docs.
package record

import "time"

// Record is one occurrence of a link (or, with --unique, one distinct
// canonical link and how often it occurred).
type Record struct {
	URL       string   `json:"url"`
	Canonical string   `json:"canonical"`
	Form      string   `json:"form"`
	Joined    bool     `json:"joined"`
	Heuristic bool     `json:"heuristic"`
	Valid     bool     `json:"valid"`
	Problems  []string `json:"problems"`
	Scheme    string   `json:"scheme"`
	Host      string   `json:"host"`

	Path       string `json:"path"`   // input file
	Blob       string `json:"blob"`   // git object id of the message (public-inbox), "" otherwise
	Offset     int64  `json:"offset"` // of the message in the file
	MessageID  string `json:"message_id"`
	Date       string `json:"date"` // RFC 3339, "" when absent or unreadable
	From       string `json:"from"`
	Subject    string `json:"subject"`
	Newsgroups string `json:"newsgroups"`

	Part        string `json:"part"`
	ContentType string `json:"content_type"`
	Where       string `json:"where"` // body, preamble, epilogue, header:NAME, html:ATTR
	Line        int    `json:"line"`
	Column      int    `json:"column"`
	Start       int64  `json:"start"`      // byte offset of the link in the decoded part text
	End         int64  `json:"end"`        // and of its end
	RawOffset   int64  `json:"raw_offset"` // file offset of the link (exact for unencoded parts)
	RawStart    int64  `json:"raw_start"`  // file offset where the link's bytes begin (fields.go says when exact)
	RawEnd      int64  `json:"raw_end"`    // file offset just past the link (fields.go says when exact)

	Count int `json:"count,omitempty"` // with --unique

	// With resolution (linkscan resolve, scan --resolve): how a mid:,
	// cid:, news: or nntp: reference resolved, its first target and, when
	// there are several (copies, crossposts, ambiguity), all of them.
	Status  string   `json:"status,omitempty"`
	Target  *Target  `json:"target,omitempty"`
	Targets []Target `json:"targets,omitempty"`
}

// Target is where a reference leads.
type Target struct {
	File      string `json:"file,omitempty"`
	Offset    int64  `json:"offset"`
	MessageID string `json:"message_id,omitempty"`
	Part      string `json:"part,omitempty"`
	Group     string `json:"group,omitempty"`
	Blob      string `json:"blob,omitempty"`
	Name      string `json:"name,omitempty"`
}

// Date formats a message date for a Record: RFC 3339, "" for the zero
// time.
func Date(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	var b [40]byte
	return string(t.AppendFormat(b[:0], time.RFC3339))
}
