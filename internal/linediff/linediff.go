// Package linediff compares two texts line by line and writes the hunks
// of a unified diff, for linkscan rewrite --dry-run: a shortest edit
// script of the lines between the common prefix and suffix (Myers, in
// linear space, 16 bytes a line of that middle, up to maxScriptLines),
// walked with offsets into the texts.
package linediff

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/maphash"
)

// Op is one line of a diff: Kind ' ' kept, '-' old, '+' new; Line with
// its line break.
type Op struct {
	Kind byte
	Line []byte
}

// WriteHunks writes the hunks of the diff of a and b, as a unified diff
// does after its "---" and "+++" lines: each change with context
// unchanged lines around it, changes closer than 2*context+1 lines in
// one hunk, each hunk's "@@ -OLD,N +NEW,M @@" line counting lines from 1.
// Each line is written as its kind (' ', '-', '+'), then escape of the
// line without its line break (nor a CR before it), then '\n'.
//
// It holds no list of the lines: the ops are walked once to find where a
// hunk ends and again, from a copy of the walk taken context ops before
// its first change, to print it, so that a diff of a text of many lines
// takes no memory per line (and no time per line before each hunk).
func WriteHunks(w *bufio.Writer, a, b []byte, context int, escape func(string) string) {
	it := NewWalk(a, b)
	ring := make([]Walk, context+1) // the walk before each of the last ops
	n := 0                          // ops since the last hunk (or the start)
	for {
		ring[n%len(ring)] = it
		op, ok := it.Next()
		if !ok {
			return
		}
		n++
		if op.Kind == ' ' {
			continue
		}
		// a change: the hunk starts context ops before it, or at
		// the previous hunk's end
		start := ring[max(n-1-context, 0)%len(ring)]
		// find its end: context ops after the last change that is
		// followed by more than 2*context unchanged ops (or by the
		// end)
		afterLast := it // the walk just past the last change
		gap := 0
		for gap <= 2*context {
			op, ok := it.Next()
			if !ok {
				break
			}
			if op.Kind == ' ' {
				gap++
				continue
			}
			afterLast, gap = it, 0
		}
		end := afterLast.k + min(gap, context)
		oldN := afterLast.old + (end - afterLast.k) - start.old
		newN := afterLast.new + (end - afterLast.k) - start.new
		fmt.Fprintf(w, "@@ -%d,%d +%d,%d @@\n", start.old+1, oldN, start.new+1, newN)
		it = start
		for it.k < end {
			op, _ := it.Next()
			l := bytes.TrimSuffix(bytes.TrimSuffix(op.Line, []byte{'\n'}), []byte{'\r'})
			w.WriteByte(op.Kind)
			w.WriteString(escape(string(l)))
			w.WriteByte('\n')
		}
		n = 0
	}
}

// Ops returns all the ops of the diff of a and b (Walk's), in order.
func Ops(a, b []byte) []Op {
	var ops []Op
	for it := NewWalk(a, b); ; {
		op, ok := it.Next()
		if !ok {
			return ops
		}
		ops = append(ops, op)
	}
}

// Walk walks the line diff of two texts, one op at a time: a value copy
// of it is a bookmark. The lines of the common prefix and suffix are
// kept; between them is a shortest edit script (Myers' algorithm, see
// myers.go), held as runs of ops. Past that algorithm's limits, when both
// sides have as many lines, they are paired one to one (a run of unequal
// pairs shown as its old lines, then its new ones: the diff of a text
// changed in place, as linkscan rewrite changes links); otherwise the
// middle is shown as removed and added whole.
type Walk struct {
	script   []edit // the middle's edit script; nil: pairing, as above
	si, sn   int    // the run walked, and the ops of it walked
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

// NewWalk returns the walk of the diff of a and b (it reads their lines
// once to find the common prefix and suffix).
func NewWalk(a, b []byte) Walk {
	na, nb := countLines(a), countLines(b)
	w := Walk{a: a, b: b, na: na, nb: nb}
	// the common prefix
	ai, bi := 0, 0
	for ; w.p < na && w.p < nb; w.p++ {
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
	if ma, mb := w.midA-w.p, w.midB-w.p; ma > 0 && mb > 0 && ma <= maxScriptLines && mb <= maxScriptLines {
		seed := maphash.MakeSeed()
		w.script = editScript(newSide(a, ai, ma, seed), newSide(b, bi, mb, seed))
	}
	return w
}

// Next returns the next op, and false at the end.
func (w *Walk) Next() (Op, bool) {
	var op Op
	switch {
	case w.runA > 0: // the old lines of a run of unequal pairs
		op = Op{'-', w.takeA()}
		w.runA--
	case w.runB > 0: // then its new ones
		op.Line, w.runBi = lineAt(w.b, w.runBi)
		op.Kind = '+'
		w.runB--
		if w.runB == 0 {
			w.bi = w.runEndBi
		}
	case w.la == w.na && w.lb == w.nb:
		return op, false
	case w.script != nil && w.la >= w.p && (w.la < w.midA || w.lb < w.midB): // the edit script
		switch w.script[w.si].kind {
		case ' ':
			op = Op{' ', w.takeA()}
			_, w.bi = lineAt(w.b, w.bi)
			w.lb++
		case '-':
			op = Op{'-', w.takeA()}
		default:
			op.Line, w.bi = lineAt(w.b, w.bi)
			op.Kind = '+'
			w.lb++
		}
		if w.sn++; w.sn == w.script[w.si].n {
			w.si, w.sn = w.si+1, 0
		}
	case w.la < w.p || w.la >= w.midA && w.lb >= w.midB: // common prefix or suffix
		op = Op{' ', w.takeA()}
		_, w.bi = lineAt(w.b, w.bi)
		w.lb++
	case w.midA == w.midB: // a middle paired one to one
		la, _ := lineAt(w.a, w.ai)
		lb, nbi := lineAt(w.b, w.bi)
		if bytes.Equal(la, lb) {
			op = Op{' ', w.takeA()}
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
		return w.Next()
	case w.la < w.midA: // a middle of unequal lengths: the old lines
		op = Op{'-', w.takeA()}
	default: // then the new ones
		op.Line, w.bi = lineAt(w.b, w.bi)
		op.Kind = '+'
		w.lb++
	}
	w.k++
	if op.Kind != '+' {
		w.old++
	}
	if op.Kind != '-' {
		w.new++
	}
	return op, true
}

// takeA returns the next line of a.
func (w *Walk) takeA() []byte {
	l, next := lineAt(w.a, w.ai)
	w.ai = next
	w.la++
	return l
}

// lineAt returns the line of b at byte offset i (with its '\n': a line
// is what ends with '\n', or the bytes after the last one) and the
// offset of the next.
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

// countLines counts the lines of b as lineAt cuts them.
func countLines(b []byte) int {
	n := bytes.Count(b, []byte{'\n'})
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}
