package linediff

import (
	"bytes"
	"hash/maphash"
)

// The middle of a diff (what lies between the common prefix and suffix)
// is diffed line by line with Myers' algorithm ("An O(ND) Difference
// Algorithm and Its Variations", 1986) in its linear-space form: the
// middle snake is found from both ends, and the two halves around it are
// diffed in turn. The result is a shortest edit script, so the hunks are
// those of diff -u (up to the choice among scripts of one length). Within
// a run of changes the removed lines come first, then the added ones.
//
// Limits: the middle holds at most maxScriptLines lines a side (16 bytes
// of memory each: a hash and an offset), and the search gives up past
// costLimit steps (diagonals tried and lines compared: about the square of
// the number of lines changed); beyond either, the Walk falls back to
// pairing or to the whole middle (NewWalk).
const (
	maxScriptLines = 1 << 18
	costLimit      = 1 << 26
)

// edit is a run of n ops of one kind (' ', '-', '+').
type edit struct {
	kind byte
	n    int
}

// side is the lines of one text's middle: the hash of each and its byte
// offset (the end of the last at the end).
type side struct {
	text []byte
	hash []uint64
	off  []int
}

func newSide(text []byte, start, lines int, seed maphash.Seed) side {
	s := side{text: text, hash: make([]uint64, lines), off: make([]int, lines+1)}
	i := start
	for k := range lines {
		l, next := lineAt(text, i)
		s.off[k] = i
		s.hash[k] = maphash.Bytes(seed, l)
		i = next
	}
	s.off[lines] = i
	return s
}

func (s *side) line(k int) []byte { return s.text[s.off[k]:s.off[k+1]] }

// differ computes the edit script of two sides.
type differ struct {
	a, b   side
	script []edit
	cost   int // steps of the search so far
}

func (d *differ) eq(i, j int) bool {
	d.cost++
	return d.a.hash[i] == d.b.hash[j] && bytes.Equal(d.a.line(i), d.b.line(j))
}

// add appends n ops of kind, merging a change into the run of changes
// before it with the removed lines first.
func (d *differ) add(kind byte, n int) {
	if n == 0 {
		return
	}
	s := d.script
	k := len(s)
	switch {
	case k > 0 && s[k-1].kind == kind:
		s[k-1].n += n
	case kind == '-' && k > 0 && s[k-1].kind == '+':
		// a removal after an addition: before it, merged with a
		// removal before that
		if k > 1 && s[k-2].kind == '-' {
			s[k-2].n += n
		} else {
			s = append(s, edit{})
			copy(s[k:], s[k-1:])
			s[k-1] = edit{'-', n}
		}
	default:
		s = append(s, edit{kind, n})
	}
	d.script = s
}

// script returns the edit script of the middles a and b, or nil when
// the search went past costLimit.
func editScript(a, b side) []edit {
	d := &differ{a: a, b: b}
	if !d.diff(0, len(a.hash), 0, len(b.hash)) {
		return nil
	}
	return d.script
}

// diff appends the script of a[a0:a1] against b[b0:b1]; false when the
// search went past costLimit.
func (d *differ) diff(a0, a1, b0, b1 int) bool {
	pre := 0
	for a0+pre < a1 && b0+pre < b1 && d.eq(a0+pre, b0+pre) {
		pre++
	}
	d.add(' ', pre)
	a0, b0 = a0+pre, b0+pre
	suf := 0
	for a0 < a1-suf && b0 < b1-suf && d.eq(a1-suf-1, b1-suf-1) {
		suf++
	}
	a1, b1 = a1-suf, b1-suf
	switch {
	case a0 == a1:
		d.add('+', b1-b0)
	case b0 == b1:
		d.add('-', a1-a0)
	default:
		x, y, ok := d.bisect(a0, a1, b0, b1)
		if !ok {
			return false
		}
		if x < 0 { // nothing in common
			d.add('-', a1-a0)
			d.add('+', b1-b0)
		} else if !d.diff(a0, x, b0, y) || !d.diff(x, a1, y, b1) {
			return false
		}
	}
	d.add(' ', suf)
	return true
}

// bisect finds where the middle snake of a[a0:a1] against b[b0:b1]
// begins, searching from both ends at once; x < 0 when the two have no
// line in common. ok is false past costLimit.
func (d *differ) bisect(a0, a1, b0, b1 int) (x, y int, ok bool) {
	n, m := a1-a0, b1-b0
	maxD := (n + m + 1) / 2
	off, size := maxD, 2*maxD+2
	v1, v2 := make([]int, size), make([]int, size)
	for i := range v1 {
		v1[i], v2[i] = -1, -1
	}
	v1[off+1], v2[off+1] = 0, 0
	delta := n - m
	front := delta%2 != 0
	k1start, k1end, k2start, k2end := 0, 0, 0, 0
	for dd := 0; dd < maxD; dd++ {
		d.cost += 2 * (dd + 1) // the diagonals of this step; the snakes count in eq
		if d.cost > costLimit {
			return 0, 0, false
		}
		for k1 := -dd + k1start; k1 <= dd-k1end; k1 += 2 {
			i := off + k1
			var x1 int
			if k1 == -dd || k1 != dd && v1[i-1] < v1[i+1] {
				x1 = v1[i+1]
			} else {
				x1 = v1[i-1] + 1
			}
			y1 := x1 - k1
			for x1 < n && y1 < m && d.eq(a0+x1, b0+y1) {
				x1, y1 = x1+1, y1+1
			}
			v1[i] = x1
			switch {
			case x1 > n:
				k1end += 2
			case y1 > m:
				k1start += 2
			case front:
				j := off + delta - k1
				if j >= 0 && j < size && v2[j] != -1 && x1 >= n-v2[j] {
					return a0 + x1, b0 + y1, true
				}
			}
		}
		for k2 := -dd + k2start; k2 <= dd-k2end; k2 += 2 {
			i := off + k2
			var x2 int
			if k2 == -dd || k2 != dd && v2[i-1] < v2[i+1] {
				x2 = v2[i+1]
			} else {
				x2 = v2[i-1] + 1
			}
			y2 := x2 - k2
			for x2 < n && y2 < m && d.eq(a1-x2-1, b1-y2-1) {
				x2, y2 = x2+1, y2+1
			}
			v2[i] = x2
			switch {
			case x2 > n:
				k2end += 2
			case y2 > m:
				k2start += 2
			case !front:
				j := off + delta - k2
				if j >= 0 && j < size && v1[j] != -1 {
					x1 := v1[j]
					y1 := off + x1 - j
					if x1 >= n-x2 {
						return a0 + x1, b0 + y1, true
					}
				}
			}
		}
	}
	return -1, -1, true
}
