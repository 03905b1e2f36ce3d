package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/linkscan/linkscan/internal/linediff"
	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/record"
	"github.com/linkscan/linkscan/rewrite"
)

// diffContext is the number of unchanged lines shown around a change in
// --dry-run's diffs.
const diffContext = 2

// writeDiff prints the unified diff of one message: its place, then its
// hunks (package linediff), with line numbers counted from the message's
// first header line (line 1; the mbox "From " line is not counted).
func (r *rewriter) writeDiff(m *mailbox.Message, out []byte) error {
	newText := out
	if m.BareCR() {
		newText = bytes.ReplaceAll(out, []byte{'\r'}, []byte{'\n'})
	}
	w := r.diff
	fmt.Fprintf(w, "--- %s\n+++ %s (rewritten)\n", escape(where(m)), escape(where(m)))
	linediff.WriteHunks(w, m.Raw, newText, diffContext, escape)
	_, err := w.Write(nil)
	if err == nil {
		err = r.e.out.err
	}
	return err
}

// changeFields is the table of the fields of a --report line (of
// linkscan rewrite and linkscan filter), in the order of changeLine: the
// one place their names and meanings are written. The link's place is
// that of scan's records (record.Shared); status means something else
// than scan's. The help of rewrite and the table in docs/rewrite.md are
// made from it, and rewrite_diff_test.go holds changeLine's tags and the
// JSON lines to it.
var changeFields = record.Table{
	record.Shared.Path,
	withNote(record.Shared.Offset, "`-1` on a `file-not-written` line"),
	record.Shared.MessageID,
	record.Shared.Part,
	record.Shared.ContentType,
	record.Shared.Where,
	withNote(record.Shared.Line, htmlPlace),
	withNote(record.Shared.Column, htmlPlace),
	withNote(record.Shared.RawOffset, "but here, for `html:` links, the offset of the attribute's value in an unencoded part, else the start of the part's body"),
	{Name: "old_url", Doc: "the link before the change, as scan's `url` gives it"},
	{Name: "new_url", Doc: "the link the rules make of it (on a `skipped` or `not-written` line, what would have been written)"},
	{Name: "old_form", Doc: "the form the link was written in (scan's `form`)"},
	{Name: "new_form", Doc: "the form it is written in after the change (`wrap` and `drop-wrapper` rules change it)"},
	{Name: "rule", Doc: "the names of the rules that changed the link, `; `-separated"},
	{Name: "status", Doc: "`written` (or, with `--dry-run`, would be), `annotated` (listed in the `X-Linkscan-Rewritten` field instead: `--annotate`), `skipped` (`reason` says why), `not-written` (the message could not be written: `reason`), or `file-not-written` (see below)"},
	{Name: "reason", Omitted: true, Doc: "why the link was skipped or not written; left out when it was written"},
	{Name: "note", Omitted: true, Doc: "the rules' remarks, `; `-separated: an archived copy's status and capture time, a content-id dropped; left out when there are none"},
}

// htmlPlace is what line and column of a --report line say more than
// scan's.
const htmlPlace = "but here, for `html:` links, the place of the attribute's value in the part's body, transfer-decoded (scan's records give that of the element's text in the text made from the HTML)"

// withNote returns f with note: what a --report line's field says more
// than scan's.
func withNote(f record.Field, note string) record.Field {
	f.Note = note
	return f
}

// reportFieldsLead introduces the list of changeFields in rewrite's help.
const reportFieldsLead = "--report lines carry (docs/rewrite.md says what each holds): "

func init() {
	cmdRewrite.Long = strings.Replace(cmdRewrite.Long, "{{report-fields}}", wrap(reportFieldsLead+changeFields.Summary()+".", 72), 1)
}

// changeLine is one line of --report: a link the rules change, with the
// fields of changeFields, in order.
type changeLine struct {
	Path        string `json:"path"`
	Offset      int64  `json:"offset"`
	MessageID   string `json:"message_id"`
	Part        string `json:"part"`
	ContentType string `json:"content_type"`
	Where       string `json:"where"`
	Line        int    `json:"line"`
	Column      int    `json:"column"`
	RawOffset   int64  `json:"raw_offset"`
	OldURL      string `json:"old_url"`
	NewURL      string `json:"new_url"`
	OldForm     string `json:"old_form"`
	NewForm     string `json:"new_form"`
	Rule        string `json:"rule"`
	Status      string `json:"status"`
	Reason      string `json:"reason,omitempty"`
	Note        string `json:"note,omitempty"`
}

func (r *rewriter) reportLine(m *mailbox.Message, ch *rewrite.LinkChange, status string, msgErr error) error {
	l := changeLine{
		Path: m.Path, Offset: m.Offset, MessageID: m.MessageID, Part: ch.Part, ContentType: ch.ContentType,
		Where: ch.Where, Line: ch.Line, Column: ch.Column, RawOffset: ch.RawOffset,
		OldURL: ch.Old, NewURL: ch.New, OldForm: ch.OldForm, NewForm: ch.NewForm, Status: "written",
	}
	var names, notes []string
	for _, c := range ch.Rules {
		if c.Old != c.New || c.Form != "" || c.Skipped != "" {
			names = append(names, c.Rule)
		}
		if c.Note != "" {
			notes = append(notes, c.Note)
		}
	}
	l.Rule, l.Note = strings.Join(names, "; "), strings.Join(notes, "; ")
	switch {
	case ch.Skipped != "":
		l.Status, l.Reason = "skipped", ch.Skipped
	case ch.Annotated:
		l.Status = "annotated"
	case status != "written":
		l.Status = "not-written"
		if msgErr != nil {
			l.Reason = msgErr.Error()
		}
	}
	enc := json.NewEncoder(r.repW)
	enc.SetEscapeHTML(false)
	return enc.Encode(&l)
}
