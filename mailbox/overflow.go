package mailbox

import (
	"bytes"
	"strings"
)

// overflow decides, line by line, what of a message past
// Options.MaxMessageSize is kept in Raw: the structure (every line that
// starts with "--", a possible boundary, and the part header after it)
// and the text (the body lines of parts whose type is text, message or
// multipart, or not given, up to Options.MaxPartSize a part). The rest,
// typically a large attachment, is left out, each run of lines left out a
// Hole, so that the text parts after a large attachment are still read.
// What is kept past the limit is bounded by the limit again: Raw never
// exceeds twice Options.MaxMessageSize.
type overflow struct {
	eol      byte
	maxPart  int64
	budget   int64 // bytes that may still be kept
	inHeader bool  // in a part header, after a "--" line
	ct       string
	keepBody bool
	partKept int64
	keep     bool // the decision for the line being read
	midLine  bool // the last piece fed did not end its line
	// the last line left out, if short and whole: kept after all when a
	// boundary-like line follows, so that the hole lies inside the part
	// it took bytes from, not at its end
	lastDrop    []byte
	lastDropOff int64
	dropOK      bool
	// sp, if set, holds what is kept aside (spool.go) instead of raw
	// growing in copies: held bytes of it so far
	sp   *spool
	held int64
}

// holdIn makes what is kept past the limit go to sp, for a limit of
// spoolAfter or more (a raw of that size is not grown in copies); the
// caller fills raw from it at the end.
func (v *overflow) holdIn(sp *spool, limit int64) {
	if sp != nil && limit >= int64(spoolAfter) {
		v.sp = sp
	}
}

// at is the length raw has with what is held aside.
func (v *overflow) at(raw []byte) int { return len(raw) + int(v.held) }

// keepBytes keeps b, the bytes at lineSrc offset off.
func (v *overflow) keepBytes(raw, b []byte, off int64) []byte {
	if v.sp != nil && !v.sp.on && (v.held > 0 || !v.sp.startGaps(off)) {
		v.sp = nil // (at the first bytes kept only: else fill ended it)
	}
	if v.sp != nil && v.sp.hold(b, off) {
		v.held += int64(len(b))
		return raw
	}
	return append(raw, b...)
}

// newOverflow starts at a line start past the limit, raw being what is
// kept so far (a message header, then body) and cr whether LF in raw
// stands for a bare CR.
func newOverflow(raw []byte, eol byte, o *Options) *overflow {
	v := &overflow{eol: eol, maxPart: int64(o.MaxPartSize), budget: o.MaxMessageSize}
	// the part being read when the limit was reached: after the last line
	// that starts with "--", or the message's body
	start := 0
	if i := bytes.LastIndex(raw, []byte{eol, '-', '-'}); i >= 0 {
		start = i + 1
	} else if !bytes.HasPrefix(raw, []byte("--")) {
		start = -1 // no boundary-like line: the message's own header
	}
	block := raw
	if start >= 0 {
		block = raw[start:]
		_, block = nextLine(block) // the "--" line itself
	}
	end := blankLine(block, eol)
	if end < 0 {
		// the header is not over: go on reading it
		v.inHeader = start >= 0
		v.ct = contentTypeOf(block, eol)
		return v
	}
	v.ct = contentTypeOf(block[:end], eol)
	v.keepBody = keepType(v.ct)
	v.partKept = int64(len(block) - end)
	return v
}

// continueLine is for a limit reached inside a line whose first bytes
// are kept: the rest of the line is kept as the lines of the part being
// read are (a part header's, or a text part's body within MaxPartSize),
// else left out, as singleSrc's overflow and a line that comes whole
// decide it. (It was always left out, so that a line cut into two pieces
// by a push-back lost its rest where the same line read whole kept it.)
func (v *overflow) continueLine() {
	v.midLine = true
	v.keep = v.inHeader || v.keepBody && v.partKept <= v.maxPart
}

// blankLine returns the index just past the first blank line of b, or -1.
func blankLine(b []byte, eol byte) int {
	for p := 0; p < len(b); {
		i := bytes.IndexByte(b[p:], eol)
		if i < 0 {
			return -1
		}
		if len(trimEOL(b[p:p+i+1])) == 0 || (eol == '\n' && i == 1 && b[p] == '\r') {
			return p + i + 1
		}
		p += i + 1
	}
	return -1
}

// contentTypeOf returns the media type of the Content-Type field among
// header lines, lower case, or "".
func contentTypeOf(h []byte, eol byte) string {
	for len(h) > 0 {
		i := bytes.IndexByte(h, eol)
		line := h
		if i >= 0 {
			line, h = h[:i], h[i+1:]
		} else {
			h = nil
		}
		if ct, ok := ctLine(line); ok {
			return ct
		}
	}
	return ""
}

func ctLine(line []byte) (string, bool) {
	const name = "content-type:"
	if len(line) < len(name) || !strings.EqualFold(string(line[:len(name)]), name) {
		return "", false
	}
	v := strings.TrimSpace(string(line[len(name):]))
	if i := strings.IndexByte(v, ';'); i >= 0 {
		v = v[:i]
	}
	return strings.ToLower(strings.TrimSpace(v)), true
}

// keepType reports whether the body of a part of this type is kept.
func keepType(ct string) bool {
	return ct == "" || strings.HasPrefix(ct, "text") || strings.HasPrefix(ct, "message/") || strings.HasPrefix(ct, "multipart/")
}

// decide tells whether a line (its first piece) is kept.
func (v *overflow) decide(line []byte) bool {
	if bytes.HasPrefix(line, []byte("--")) {
		v.inHeader, v.ct = true, ""
		return true
	}
	if v.inHeader {
		if len(trimEOL(line)) == 0 || len(line) == 1 && line[0] == '\r' {
			v.inHeader = false
			v.keepBody = keepType(v.ct)
			v.partKept = 0
		} else if ct, ok := ctLine(line); ok {
			v.ct = ct
		}
		return true
	}
	if v.keepBody && v.partKept+int64(len(line)) <= v.maxPart {
		v.partKept += int64(len(line))
		return true
	}
	return false
}

// feed takes bytes past the limit (whole lines, or pieces of one long
// line), read at lineSrc offset off, and returns raw with what is kept
// appended (or held aside: holdIn); what is not makes or grows a hole.
func (v *overflow) feed(m *Message, raw, b []byte, off int64) []byte {
	for len(b) > 0 {
		i := bytes.IndexByte(b, v.eol)
		var line []byte
		if i < 0 {
			line, b = b, nil
		} else {
			line, b = b[:i+1], b[i+1:]
		}
		lineOff := off
		off += int64(len(line))
		whole := !v.midLine && i >= 0 // the piece is a whole line
		if !v.midLine {
			if v.dropOK && bytes.HasPrefix(line, []byte("--")) && int64(len(v.lastDrop)) <= v.budget {
				raw = v.takeBack(m, raw)
			}
			v.dropOK = false
			v.keep = v.decide(line)
		} else if v.keep && !v.inHeader && v.keepBody {
			// the rest of a body line: within the part's MaxPartSize
			// too, as the line read whole would be
			if v.keep = v.partKept+int64(len(line)) <= v.maxPart; v.keep {
				v.partKept += int64(len(line))
			}
		}
		v.midLine = i < 0
		if v.keep && int64(len(line)) <= v.budget {
			v.budget -= int64(len(line))
			raw = v.keepBytes(raw, line, lineOff)
			continue
		}
		v.keep = false // the rest of a line cut is left out too
		v.dropOK = whole && len(line) <= 4096
		if v.dropOK {
			v.lastDrop = append(v.lastDrop[:0], line...)
			v.lastDropOff = lineOff
		}
		if k := len(m.Holes); k > 0 && m.Holes[k-1].At == v.at(raw) {
			m.Holes[k-1].Len += int64(len(line))
		} else {
			m.Holes = append(m.Holes, Hole{At: v.at(raw), Len: int64(len(line))})
		}
	}
	return raw
}

// takeBack puts the last line left out back into raw, at the end of the
// hole it ended: the hole then ends inside the part before the boundary.
func (v *overflow) takeBack(m *Message, raw []byte) []byte {
	k := len(m.Holes)
	if k == 0 || m.Holes[k-1].At != v.at(raw) || m.Holes[k-1].Len <= int64(len(v.lastDrop)) {
		return raw // the line is not all of a hole's end, or the hole would vanish
	}
	m.Holes[k-1].Len -= int64(len(v.lastDrop))
	v.budget -= int64(len(v.lastDrop))
	return v.keepBytes(raw, v.lastDrop, v.lastDropOff)
}

// overLimit adds the problem of a message that passed the limit, if
// anything of it was left out.
func overLimit(m *Message, limit int64) {
	if len(m.Holes) > 0 {
		m.problemErr(ErrTooLong, m.RawOffset+int64(m.Holes[0].At), "", "message longer than %d bytes; attachments past it are skipped", limit)
	}
}

// overflowHeld is newOverflow for a message whose first bytes are in raw
// and the rest, up to the limit, held aside in sp (spool.go): it finds the
// last line that starts with "--" by reading the bytes held again, a
// window at a time from the end, and the part header after it within
// 1 MiB. It returns nil when the part header is not within that (the
// caller then fills raw and calls newOverflow). Else what is kept from
// here on is held in sp too, which allows gaps from now on.
func (s *mboxSrc) overflowHeld(raw []byte, sp *spool) *overflow {
	eol := s.ls.eol
	total := int64(len(raw)) + sp.n
	read := func(p []byte, pos int64) bool { // p = the message's bytes at pos
		if pos < int64(len(raw)) {
			k := copy(p, raw[pos:])
			p, pos = p[k:], pos+int64(k)
		}
		return len(p) == 0 || sp.readBack(p, pos-int64(len(raw)))
	}
	// the last line that starts with "--" (newOverflow's start)
	pat := []byte{eol, '-', '-'}
	const win = 64 << 10
	buf := make([]byte, win)
	start := int64(-1)
	for e := total; e > 0; {
		from := max(0, e-win)
		w := buf[:e-from]
		if !read(w, from) {
			return nil
		}
		if i := bytes.LastIndex(w, pat); i >= 0 {
			start = from + int64(i) + 1
			break
		}
		if from == 0 {
			break
		}
		e = from + int64(len(pat)) - 1 // windows overlap by a pattern less one byte
	}
	if start < 0 {
		if w := buf[:min(2, total)]; read(w, 0) && string(w) == "--" {
			start = 0
		}
	}
	// the part header after it (or the message's own header)
	from := max(start, 0)
	t := make([]byte, min(total-from, 1<<20))
	if !read(t, from) {
		return nil
	}
	complete := from+int64(len(t)) == total
	block := t
	if start >= 0 {
		i := bytes.IndexAny(t, "\r\n")
		if !complete && (i < 0 || i == len(t)-1 && t[i] == '\r') {
			return nil // the "--" line goes on past what was read
		}
		_, block = nextLine(t)
	}
	v := &overflow{eol: eol, maxPart: int64(s.opts.MaxPartSize), budget: s.opts.MaxMessageSize}
	end := blankLine(block, eol)
	switch {
	case end >= 0:
		v.ct = contentTypeOf(block[:end], eol)
		v.keepBody = keepType(v.ct)
		v.partKept = total - from - int64(len(t)-len(block)) - int64(end)
	case !complete:
		return nil // a header longer than 1 MiB, or no header end
	default:
		v.inHeader = start >= 0
		v.ct = contentTypeOf(block, eol)
	}
	// the last byte: the rest of a line begun is kept as the part's lines
	// are (as newOverflow's caller does)
	last := buf[:1]
	if total > 0 && read(last, total-1) && last[0] != eol {
		v.continueLine()
	}
	sp.allowGaps()
	v.sp, v.held = sp, sp.n
	return v
}
