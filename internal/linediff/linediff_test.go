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
// kept and added lines the new one.
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
	})
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

// refHunks is the diff as linkscan rewrite made it before Walk (every
// line and op held in slices, and the ops before each hunk counted again
// for its line numbers): the reference WriteHunks is held to.
func refHunks(a, b []byte, context int) string {
	la, lb := lines(a), lines(b)
	p := 0
	for p < len(la) && p < len(lb) && bytes.Equal(la[p], lb[p]) {
		p++
	}
	s := 0
	for s < len(la)-p && s < len(lb)-p && bytes.Equal(la[len(la)-1-s], lb[len(lb)-1-s]) {
		s++
	}
	var ops []Op
	for _, l := range la[:p] {
		ops = append(ops, Op{' ', l})
	}
	ma, mb := la[p:len(la)-s], lb[p:len(lb)-s]
	if len(ma) == len(mb) {
		for i := 0; i < len(ma); {
			if bytes.Equal(ma[i], mb[i]) {
				ops = append(ops, Op{' ', ma[i]})
				i++
				continue
			}
			j := i
			for j < len(ma) && !bytes.Equal(ma[j], mb[j]) {
				j++
			}
			for _, l := range ma[i:j] {
				ops = append(ops, Op{'-', l})
			}
			for _, l := range mb[i:j] {
				ops = append(ops, Op{'+', l})
			}
			i = j
		}
	} else {
		for _, l := range ma {
			ops = append(ops, Op{'-', l})
		}
		for _, l := range mb {
			ops = append(ops, Op{'+', l})
		}
	}
	for _, l := range la[len(la)-s:] {
		ops = append(ops, Op{' ', l})
	}
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

// TestHunksAsBefore: WriteHunks writes what the diff made from slices of
// every line and op wrote, on cases of each shape (prefix, suffix, paired
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
