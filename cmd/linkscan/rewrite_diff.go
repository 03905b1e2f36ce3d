package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/linkscan/linkscan/mailbox"
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
	ops := lineDiff(m.Raw, newText)
	w := r.diff
	fmt.Fprintf(w, "--- %s\n+++ %s (rewritten)\n", escape(where(m)), escape(where(m)))
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		// a hunk: from diffContext lines before the change to
		// diffContext lines after the last change closer than
		// 2*diffContext+1 lines
		start := max(i-diffContext, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			k := end
			for k < len(ops) && ops[k].kind == ' ' {
				k++
			}
			if k == len(ops) || k-end > 2*diffContext {
				end = min(end+diffContext, len(ops))
				break
			}
			end = k
		}
		oldLine, newLine := 1, 1
		for _, op := range ops[:start] {
			if op.kind != '+' {
				oldLine++
			}
			if op.kind != '-' {
				newLine++
			}
		}
		oldN, newN := 0, 0
		for _, op := range ops[start:end] {
			if op.kind != '+' {
				oldN++
			}
			if op.kind != '-' {
				newN++
			}
		}
		fmt.Fprintf(w, "@@ -%d,%d +%d,%d @@\n", oldLine, oldN, newLine, newN)
		for _, op := range ops[start:end] {
			l := bytes.TrimSuffix(bytes.TrimSuffix(op.line, []byte{'\n'}), []byte{'\r'})
			w.WriteByte(op.kind)
			w.WriteString(escape(string(l)))
			w.WriteByte('\n')
		}
		i = end
	}
	_, err := w.Write(nil)
	if err == nil {
		err = r.e.out.err
	}
	return err
}

// lineDiff compares two texts line by line. The splicer changes links
// in place, so the lines between the first and last difference are
// paired one to one when both sides have as many; otherwise the middle
// is shown as removed and added whole.
func lineDiff(a, b []byte) []diffOp {
	la, lb := splitLines(a), splitLines(b)
	p := 0
	for p < len(la) && p < len(lb) && bytes.Equal(la[p], lb[p]) {
		p++
	}
	s := 0
	for s < len(la)-p && s < len(lb)-p && bytes.Equal(la[len(la)-1-s], lb[len(lb)-1-s]) {
		s++
	}
	ops := make([]diffOp, 0, len(la)+len(lb)-2*s-p)
	for _, l := range la[:p] {
		ops = append(ops, diffOp{' ', l})
	}
	ma, mb := la[p:len(la)-s], lb[p:len(lb)-s]
	if len(ma) == len(mb) {
		for i := 0; i < len(ma); {
			if bytes.Equal(ma[i], mb[i]) {
				ops = append(ops, diffOp{' ', ma[i]})
				i++
				continue
			}
			j := i
			for j < len(ma) && !bytes.Equal(ma[j], mb[j]) {
				j++
			}
			for _, l := range ma[i:j] {
				ops = append(ops, diffOp{'-', l})
			}
			for _, l := range mb[i:j] {
				ops = append(ops, diffOp{'+', l})
			}
			i = j
		}
	} else {
		for _, l := range ma {
			ops = append(ops, diffOp{'-', l})
		}
		for _, l := range mb {
			ops = append(ops, diffOp{'+', l})
		}
	}
	for _, l := range la[len(la)-s:] {
		ops = append(ops, diffOp{' ', l})
	}
	return ops
}

func splitLines(b []byte) [][]byte {
	var ls [][]byte
	forEachLine(b, func(l []byte) { ls = append(ls, l) })
	return ls
}

// changeLine is one line of --report: a link the rules change, with
// the message's place in the field names of scan's records (package
// record).
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
	// Rule names the rules that changed the link, in order ("; ").
	Rule string `json:"rule"`
	// Status: written (or, with --dry-run, would be), annotated (listed
	// in the X-Linkscan-Rewritten field), skipped (Reason says why),
	// or not-written (the message could not be written: Reason); a line
	// file-not-written (path, offset -1, reason only) says that the
	// file was left as it was after all, whatever lines above say.
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// Note joins the remarks of the rules ("; "): the status and the
	// capture time of an archived copy, a content-id dropped.
	Note string `json:"note,omitempty"`
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
