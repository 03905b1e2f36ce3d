// Package refs holds the scan stages of references: the implicit
// references of a message (In-Reply-To, References, attribution lines)
// as records, the resolution of mid:, cid:, news: and nntp: links against
// an index, and the filter that keeps only those. A command composes them
// into scan.Config.Stages; package scan knows none of them.
package refs

import (
	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/record"
	"github.com/linkscan/linkscan/references"
	"github.com/linkscan/linkscan/uri"
)

// Only keeps the records of the schemes references deal with (mid:, cid:,
// news:, nntp:).
type Only struct{}

// Records implements scan.Stage.
func (Only) Records(_ *mailbox.Message, _ []*mailbox.Part, recs []record.Record) []record.Record {
	kept := recs[:0]
	for _, r := range recs {
		if references.Handles(r.Scheme) {
			kept = append(kept, r)
		}
	}
	clear(recs[len(kept):])
	return kept
}

// RecordsSlice implements scan.SlicedStage: each record is kept or not on
// its own.
func (o Only) RecordsSlice(m *mailbox.Message, parts []*mailbox.Part, recs []record.Record, _ bool) []record.Record {
	return o.Records(m, parts, recs)
}

// Implicit adds the implicit references of a message as records of form
// "implicit", after the message's other records.
type Implicit struct{}

// Records implements scan.Stage.
func (Implicit) Records(m *mailbox.Message, parts []*mailbox.Part, recs []record.Record) []record.Record {
	base := record.Record{
		Path: m.Path, Blob: m.Blob, Offset: m.Offset, MessageID: m.MessageID, Date: record.Date(m.Date),
		From: m.From, Subject: m.Subject, Newsgroups: m.Newsgroups,
	}
	for _, ref := range references.Implicit(m, parts) {
		r := base
		r.URL, r.Form, r.Where, r.Part = ref.URL, "implicit", ref.Where, ref.Part
		r.Line, r.Column, r.Start, r.End, r.RawOffset = ref.Line, ref.Column, ref.Start, ref.End, ref.RawOffset
		r.RawStart, r.RawEnd = r.RawOffset, r.RawOffset
		record.Normalize(&r, ref.URL)
		recs = append(recs, r)
	}
	return recs
}

// RecordsSlice implements scan.SlicedStage: the implicit references go
// after all of the message's other records, with the last slice.
func (i Implicit) RecordsSlice(m *mailbox.Message, parts []*mailbox.Part, recs []record.Record, last bool) []record.Record {
	if !last {
		return recs
	}
	return i.Records(m, parts, recs)
}

// Resolve resolves the mid:, cid:, news: and nntp: records against the
// Resolver's index and fills their status and targets; with Statuses set,
// it keeps only records (of any scheme) whose status is one of them. A
// lookup that fails (the index cannot be read) gives status "error" and a
// problem of the message whose error is the lookup's
// (errors.Is(err, mailbox.ErrUnreadable)).
type Resolve struct {
	Resolver *references.Resolver
	Statuses map[string]bool
}

// Records implements scan.Stage.
func (s Resolve) Records(m *mailbox.Message, parts []*mailbox.Part, recs []record.Record) []record.Record {
	ctx := &references.Context{Loc: references.Location{File: m.Path, Offset: m.Offset, MessageID: m.MessageID, Name: m.Name, Blob: m.Blob}, Parts: parts}
	kept := recs[:0]
	for _, r := range recs {
		if references.Handles(r.Scheme) {
			ctx.Part = r.Part
			u, _ := uri.Parse(r.Canonical)
			rs, err := s.Resolver.ResolveURL(u, ctx)
			if err != nil { // the index could not be read
				m.Problems = append(m.Problems, mailbox.Problem{Offset: m.Offset, Part: r.Part,
					Msg: err.Error(), Err: err})
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
		if len(s.Statuses) == 0 || s.Statuses[r.Status] {
			kept = append(kept, r)
		}
	}
	clear(recs[len(kept):])
	return kept
}

// RecordsSlice implements scan.SlicedStage: each record is resolved on
// its own.
func (s Resolve) RecordsSlice(m *mailbox.Message, parts []*mailbox.Part, recs []record.Record, _ bool) []record.Record {
	return s.Records(m, parts, recs)
}
