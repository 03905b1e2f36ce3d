package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/record"
	"github.com/linkscan/linkscan/rewrite"
)

// diffContext is the number of unchanged lines shown around a change in
// --dry-run's diffs.
const diffContext = 2

// diffOp is one line of a diff: ' ' kept, '-' old, '+' new.
type diffOp struct {
	kind byte
	line []byte
}

// writeDiff prints the unified diff of one message: its place, then its
// hunks, with line numbers counted from the message's first header line
// (line 1; the mbox "From " line is not counted).
func (r *rewriter) writeDiff(m *mailbox.Message, out []byte) error {
	newText := out
	if m.BareCR() {
		newText = bytes.ReplaceAll(out, []byte{'\r'}, []byte{'\n'})
	}
	w := r.diff
	fmt.Fprintf(w, "--- %s\n+++ %s (rewritten)\n", escape(where(m)), escape(where(m)))
	writeHunks(w, m.Raw, newText)
	_, err := w.Write(nil)
	if err == nil {
		err = r.e.out.err
	}
	return err
}

// writeHunks writes the hunks of the diff of a and b: each change with
// diffContext unchanged lines around it, changes closer than
// 2*diffContext+1 lines in one hunk. It holds no list of the lines: the
// ops are walked once to find where a hunk ends and again, from a copy
// of the walk taken diffContext ops before its first change, to print
// it, so that a diff of a message of many lines takes no memory per line.
func writeHunks(w *bufio.Writer, a, b []byte) {
	it := newOpWalk(a, b)
	var ring [diffContext + 1]opWalk // the walk before each of the last ops
	n := 0                           // ops since the last hunk (or the start)
	for {
		ring[n%len(ring)] = it
		op, ok := it.next()
		if !ok {
			return
		}
		n++
		if op.kind == ' ' {
			continue
		}
		// a change: the hunk starts diffContext ops before it, or at
		// the previous hunk's end
		start := ring[max(n-1-diffContext, 0)%len(ring)]
		// find its end: diffContext ops after the last change that is
		// followed by more than 2*diffContext unchanged ops (or by the
		// end)
		afterLast := it // the walk just past the last change
		gap := 0
		for gap <= 2*diffContext {
			op, ok := it.next()
			if !ok {
				break
			}
			if op.kind == ' ' {
				gap++
				continue
			}
			afterLast, gap = it, 0
		}
		end := afterLast.k + min(gap, diffContext)
		oldN := afterLast.old + (end - afterLast.k) - start.old
		newN := afterLast.new + (end - afterLast.k) - start.new
		fmt.Fprintf(w, "@@ -%d,%d +%d,%d @@\n", start.old+1, oldN, start.new+1, newN)
		it = start
		for it.k < end {
			op, _ := it.next()
			l := bytes.TrimSuffix(bytes.TrimSuffix(op.line, []byte{'\n'}), []byte{'\r'})
			w.WriteByte(op.kind)
			w.WriteString(escape(string(l)))
			w.WriteByte('\n')
		}
		n = 0
	}
}

// lineDiff compares two texts line by line (all the ops of opWalk).
func lineDiff(a, b []byte) []diffOp {
	var ops []diffOp
	for it := newOpWalk(a, b); ; {
		op, ok := it.next()
		if !ok {
			return ops
		}
		ops = append(ops, op)
	}
}

// opWalk walks the line diff of two texts, one op at a time, holding
// nothing but offsets: a value copy of it is a bookmark. The splicer
// changes links in place, so the lines between the first and last
// difference are paired one to one when both sides have as many (a run
// of unequal pairs shown as its old lines, then its new ones); otherwise
// the middle is shown as removed and added whole.
type opWalk struct {
	a, b     []byte
	na, nb   int // lines of a and of b
	p        int // lines of the common prefix
	midA     int // lines of a before the common suffix (p + the middle)
	midB     int // and of b
	la, lb   int // lines of a and of b walked
	ai, bi   int // their byte offsets
	runA     int // in a run of unequal pairs: lines of a left to show
	runB     int // and of b
	runBi    int // byte offset of the run's first line of b
	runEndBi int // and of the line after it
	k        int // ops walked
	old, new int // of them, those of a (not '+') and of b (not '-')
}

func newOpWalk(a, b []byte) opWalk {
	na, nb := countLines(a), countLines(b)
	w := opWalk{a: a, b: b, na: na, nb: nb}
	// the common prefix
	for ai, bi := 0, 0; w.p < na && w.p < nb; w.p++ {
		la, na2 := lineAt(a, ai)
		lb, nb2 := lineAt(b, bi)
		if !bytes.Equal(la, lb) {
			break
		}
		ai, bi = na2, nb2
	}
	// the common suffix, not overlapping the prefix
	s := 0
	for ae, be := len(a), len(b); s < na-w.p && s < nb-w.p; s++ {
		as, bs := lineBefore(a, ae), lineBefore(b, be)
		if !bytes.Equal(a[as:ae], b[bs:be]) {
			break
		}
		ae, be = as, bs
	}
	w.midA, w.midB = na-s, nb-s
	return w
}

// next returns the next op, and false at the end.
func (w *opWalk) next() (diffOp, bool) {
	var op diffOp
	switch {
	case w.runA > 0: // the old lines of a run of unequal pairs
		op = diffOp{'-', w.takeA()}
		w.runA--
	case w.runB > 0: // then its new ones
		op.line, w.runBi = lineAt(w.b, w.runBi)
		op.kind = '+'
		w.runB--
		if w.runB == 0 {
			w.bi = w.runEndBi
		}
	case w.la == w.na && w.lb == w.nb:
		return op, false
	case w.la < w.p || w.la >= w.midA && w.lb >= w.midB: // common prefix or suffix
		op = diffOp{' ', w.takeA()}
		_, w.bi = lineAt(w.b, w.bi)
		w.lb++
	case w.midA == w.midB: // a middle paired one to one
		la, _ := lineAt(w.a, w.ai)
		lb, nbi := lineAt(w.b, w.bi)
		if bytes.Equal(la, lb) {
			op = diffOp{' ', w.takeA()}
			w.bi = nbi
			w.lb++
			break
		}
		// a run of unequal pairs: its length, then its lines
		n, ai, bi := 0, w.ai, w.bi
		for w.la+n < w.midA {
			x, nai := lineAt(w.a, ai)
			y, nbi := lineAt(w.b, bi)
			if bytes.Equal(x, y) {
				break
			}
			n, ai, bi = n+1, nai, nbi
		}
		w.runA, w.runB, w.runBi, w.runEndBi = n, n, w.bi, bi
		w.lb += n
		return w.next()
	case w.la < w.midA: // a middle of unequal lengths: the old lines
		op = diffOp{'-', w.takeA()}
	default: // then the new ones
		op.line, w.bi = lineAt(w.b, w.bi)
		op.kind = '+'
		w.lb++
	}
	w.k++
	if op.kind != '+' {
		w.old++
	}
	if op.kind != '-' {
		w.new++
	}
	return op, true
}

// takeA returns the next line of a.
func (w *opWalk) takeA() []byte {
	l, next := lineAt(w.a, w.ai)
	w.ai = next
	w.la++
	return l
}

// lineAt returns the line of b at byte offset i (with its '\n', as
// forEachLine cuts them) and the offset of the next.
func lineAt(b []byte, i int) ([]byte, int) {
	if j := bytes.IndexByte(b[i:], '\n'); j >= 0 {
		return b[i : i+j+1], i + j + 1
	}
	return b[i:], len(b)
}

// lineBefore returns the offset of the line of b that ends at end.
func lineBefore(b []byte, end int) int {
	return bytes.LastIndexByte(b[:end-1], '\n') + 1
}

// countLines counts the lines of b as forEachLine cuts them.
func countLines(b []byte) int {
	n := bytes.Count(b, []byte{'\n'})
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
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
