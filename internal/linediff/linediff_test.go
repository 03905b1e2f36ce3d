package linediff

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestOps(t *testing.T) {
	var b strings.Builder
	for _, op := range Ops([]byte("a\nb\nc\nd\n"), []byte("a\nB\nc\nD\n")) {
		b.WriteByte(op.Kind)
		b.Write(op.Line)
	}
	if want := " a\n-b\n+B\n c\n-d\n+D\n"; b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
}

// FuzzOps: the diff's kept and removed lines give the old text back, its
// kept and added lines the new one, and it changes no more lines than a
// shortest edit script does (minChanges).
func FuzzOps(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte("a\nB\nc\n"))
	f.Add([]byte("a\nb"), []byte("a\nb\nc\nd"))
	f.Add([]byte(""), []byte("x\r\n"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var oa, ob []byte
		for _, op := range Ops(a, b) {
			if op.Kind != '+' {
				oa = append(oa, op.Line...)
			}
			if op.Kind != '-' {
				ob = append(ob, op.Line...)
			}
		}
		if !bytes.Equal(oa, a) || !bytes.Equal(ob, b) {
			t.Fatalf("diff of %q and %q gives back %q and %q", a, b, oa, ob)
		}
		if len(a) < 2000 && len(b) < 2000 {
			if got, want := changes(Ops(a, b)), minChanges(lines(a), lines(b)); got != want {
				t.Fatalf("diff of %q and %q changes %d lines, a shortest %d", a, b, got, want)
			}
		}
	})
}

// changes counts the ops that are not kept lines.
func changes(ops []Op) int {
	n := 0
	for _, op := range ops {
		if op.Kind != ' ' {
			n++
		}
	}
	return n
}

// minChanges is the length of a shortest edit script of la and lb: their
// lines less twice their longest common subsequence (a table of it).
func minChanges(la, lb [][]byte) int {
	prev, cur := make([]int, len(lb)+1), make([]int, len(lb)+1)
	for i := range la {
		for j := range lb {
			if bytes.Equal(la[i], lb[j]) {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev, cur = cur, prev
	}
	return len(la) + len(lb) - 2*prev[len(lb)]
}

// TestMinimal: on random pairs of texts of recurring lines (lines
// changed, dropped and added, the counts unequal or not) the diff changes
// as few lines as a shortest edit script, and a change that shifts the
// lines after it is shown where it is, not as the whole middle.
func TestMinimal(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		sa := make([]byte, rnd.IntN(40))
		for j := range sa {
			sa[j] = byte(rnd.IntN(4))
		}
		sb := slices.Clone(sa)
		for range rnd.IntN(8) {
			j := rnd.IntN(len(sb) + 1)
			switch rnd.IntN(3) {
			case 0:
				if j < len(sb) {
					sb[j] = byte(rnd.IntN(4))
				}
			case 1:
				if j < len(sb) {
					sb = slices.Delete(sb, j, j+1)
				}
			default:
				sb = slices.Insert(sb, j, byte(rnd.IntN(4)))
			}
		}
		a, b := linesOf(sa, true), linesOf(sb, true)
		if got, want := changes(Ops(a, b)), minChanges(lines(a), lines(b)); got != want {
			t.Fatalf("%q -> %q: %d lines changed, a shortest script %d", a, b, got, want)
		}
	}
	// a line split in two near the top and one joined near the end of a
	// long text: two small hunks, not one of the whole text
	var a, b strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&a, "line %d\n", i)
		switch i {
		case 10:
			b.WriteString("line 1\n0\n")
		case 990:
		case 991:
			b.WriteString("line 990line 991\n")
		default:
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	h := hunks([]byte(a.String()), []byte(b.String()), 3)
	if n := strings.Count(h, "@@ -"); n != 2 || strings.Count(h, "\n") > 20 {
		t.Errorf("%d hunks, %d lines:\n%s", n, strings.Count(h, "\n"), h)
	}
}

// esc marks each line written, so that the tests see escape applied.
func esc(s string) string { return "<" + s + ">" }

// lines cuts b into lines as the command's forEachLine does.
func lines(b []byte) [][]byte {
	var ls [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return append(ls, b)
		}
		ls, b = append(ls, b[:i+1]), b[i+1:]
	}
	return ls
}

// refHunks prints the hunks of the ops of Ops(a, b) from slices of
// every op (the ops before each hunk counted again for its line
// numbers): the reference WriteHunks's choice of hunks is held to.
func refHunks(a, b []byte, context int) string {
	ops := Ops(a, b)
	var w strings.Builder
	for i := 0; i < len(ops); {
		if ops[i].Kind == ' ' {
			i++
			continue
		}
		start := max(i-context, 0)
		end := i
		for end < len(ops) {
			if ops[end].Kind != ' ' {
				end++
				continue
			}
			k := end
			for k < len(ops) && ops[k].Kind == ' ' {
				k++
			}
			if k == len(ops) || k-end > 2*context {
				end = min(end+context, len(ops))
				break
			}
			end = k
		}
		oldLine, newLine := 1, 1
		for _, op := range ops[:start] {
			if op.Kind != '+' {
				oldLine++
			}
			if op.Kind != '-' {
				newLine++
			}
		}
		oldN, newN := 0, 0
		for _, op := range ops[start:end] {
			if op.Kind != '+' {
				oldN++
			}
			if op.Kind != '-' {
				newN++
			}
		}
		fmt.Fprintf(&w, "@@ -%d,%d +%d,%d @@\n", oldLine, oldN, newLine, newN)
		for _, op := range ops[start:end] {
			l := bytes.TrimSuffix(bytes.TrimSuffix(op.Line, []byte{'\n'}), []byte{'\r'})
			w.WriteByte(op.Kind)
			w.WriteString(esc(string(l)))
			w.WriteByte('\n')
		}
		i = end
	}
	return w.String()
}

func hunks(a, b []byte, context int) string {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	WriteHunks(w, a, b, context, esc)
	w.Flush()
	return buf.String()
}

// linesOf makes a text of one-letter lines, a line per byte of spec (its
// value modulo 4 picks the letter, so that equal lines recur), with or
// without the last line break.
func linesOf(spec []byte, lastBreak bool) []byte {
	var b []byte
	for _, c := range spec {
		b = append(b, "abcd"[c%4], '\n')
	}
	if !lastBreak && len(b) > 0 {
		b = b[:len(b)-1]
	}
	return b
}

// TestHunksAsBefore: WriteHunks writes the hunks a printer of slices of
// every op writes, on cases of each shape (prefix, suffix, paired
// runs, unequal middles, nearby and distant changes, no final line break,
// CRLF, empty texts) and on 20,000 random pairs, with 0 to 3 lines of
// context.
func TestHunksAsBefore(t *testing.T) {
	cases := [][2]string{
		{"", ""}, {"", "x\n"}, {"x\n", ""}, {"a\nb\nc\nd\n", "a\nB\nc\nD\n"}, {"a\nb", "a\nb\nc\nd"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "1\nX\n3\n4\n5\n6\n7\n8\n9\n10\nY\n12\n"},
		{"1\n2\n3\n4\n5\n6\n7\n", "1\nX\n3\n4\n5\n6\nY\n"}, {"a\r\nb\r\n", "a\r\nc\r\n"}, {"a\nb\nc\n", "a\nc\n"},
		{"x\ny\nz\n", "x\ny\nz\n"}, {"a\nb\n", "a\nb"}, {"\x1b[2J\n", "\x1b[0m\n"},
	}
	for _, c := range cases {
		for context := range 4 {
			if got, want := hunks([]byte(c[0]), []byte(c[1]), context), refHunks([]byte(c[0]), []byte(c[1]), context); got != want {
				t.Errorf("%q -> %q, context %d:\n%s\nwant:\n%s", c[0], c[1], context, got, want)
			}
		}
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		sa := make([]byte, rnd.IntN(30))
		for j := range sa {
			sa[j] = byte(rnd.IntN(4))
		}
		sb := slices.Clone(sa)
		for range rnd.IntN(6) { // change, drop or add lines
			switch j := rnd.IntN(len(sb) + 1); rnd.IntN(3) {
			case 0:
				if j < len(sb) {
					sb[j] = byte(rnd.IntN(4))
				}
			case 1:
				if j < len(sb) {
					sb = slices.Delete(sb, j, j+1)
				}
			default:
				sb = slices.Insert(sb, j, byte(rnd.IntN(4)))
			}
		}
		a, b, context := linesOf(sa, i%3 != 0), linesOf(sb, i%5 != 0), i%4
		if got, want := hunks(a, b, context), refHunks(a, b, context); got != want {
			t.Fatalf("%q -> %q, context %d:\n%s\nwant:\n%s", a, b, context, got, want)
		}
	}
}

// FuzzHunks: WriteHunks writes what the reference writes.
func FuzzHunks(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte("a\nB\nc\n"), uint8(2))
	f.Add([]byte("a\nb"), []byte("a\nb\nc\nd"), uint8(0))
	f.Add([]byte(""), []byte("x\r\n"), uint8(3))
	f.Fuzz(func(t *testing.T, a, b []byte, c uint8) {
		context := int(c % 5)
		if got, want := hunks(a, b, context), refHunks(a, b, context); got != want {
			t.Fatalf("%q -> %q, context %d:\n%s\nwant:\n%s", a, b, context, got, want)
		}
	})
}

// BenchmarkWriteHunks: the diff of a message of 200,000 changed lines
// (one hunk) and of 200,000 lines with a change on every tenth (20,000
// hunks). B/op is about the one string a printed line takes for escape's
// argument: nothing is held per line.
func BenchmarkWriteHunks(b *testing.B) {
	for _, every := range []int{1, 10} {
		var x, y bytes.Buffer
		for i := range 200000 {
			fmt.Fprintf(&x, "http://old.example.org/%d\n", i)
			if i%every == 0 {
				fmt.Fprintf(&y, "http://new.example.org/%d\n", i)
			} else {
				fmt.Fprintf(&y, "http://old.example.org/%d\n", i)
			}
		}
		b.Run(fmt.Sprintf("every%d", every), func(b *testing.B) {
			w := bufio.NewWriter(io.Discard)
			b.SetBytes(int64(x.Len() + y.Len()))
			b.ReportAllocs()
			for range b.N {
				WriteHunks(w, x.Bytes(), y.Bytes(), 2, func(s string) string { return s })
			}
		})
	}
}
