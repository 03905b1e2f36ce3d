package extract

import (
	"bytes"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/linkscan/linkscan/uri"
)

// urlBuf collects the characters of a link written in pieces (across
// lines, or with white space ignored inside a delimiter) and the input
// segments they come from.
type urlBuf struct {
	u    []byte
	segs []Segment
}

// add appends p, which stands at absolute offset off of the input.
func (b *urlBuf) add(p []byte, off int64) {
	if len(p) == 0 {
		return
	}
	b.u = append(b.u, p...)
	if n := len(b.segs); n > 0 && b.segs[n-1].End == off {
		b.segs[n-1].End += int64(len(p))
		return
	}
	b.segs = append(b.segs, Segment{off, off + int64(len(p))})
}

// addNoSpace appends the characters of p that are not white space.
func (b *urlBuf) addNoSpace(p []byte, off int64) {
	for i := 0; i < len(p); {
		if n := spaceAt(p, i); n > 0 {
			i += n
			continue
		}
		j := i + 1
		for j < len(p) {
			if p[j] < 0x80 {
				if asciiSpace[p[j]] {
					break
				}
				j++
				continue
			}
			if spaceAt(p, j) > 0 {
				break
			}
			j++
		}
		b.add(p[i:j], off+int64(i))
		i = j
	}
}

// cutSegments cuts segs, whose text is n bytes or more, to their first n
// bytes.
func cutSegments(segs []Segment, n int64) []Segment {
	for i, sg := range segs {
		if l := sg.End - sg.Start; n <= l {
			segs[i].End = sg.Start + n
			return segs[:i+1]
		}
		n -= sg.End - sg.Start
	}
	return segs
}

// makeLink appends to s.out the Link for URL text u written in form
// (unless it is a data: URI and Options.DataURIs is off),
// starting at column position pos of window line k, and returns it (a
// pointer that the next append may invalidate): links are filled in
// place, being large to copy. segs are its pieces (nil for one range
// [start, end) of the input); probs are extraction problems found.
func (s *Scanner) makeLink(u []byte, segs []Segment, form Form, k, pos int, start, end int64, probs []error) *Link {
	s.out = append(s.out, Link{
		Form:   form,
		Start:  start,
		End:    end,
		Line:   s.lines[k].num,
		Column: s.column(k, pos) + 1,
	})
	lk := &s.out[len(s.out)-1]
	if s.opt.Refang && form != FormEmail && form != FormDomain && form != FormAbbrev && defanged(u) {
		probs = append(probs, ErrDefanged)
	}
	if len(u) > s.opt.MaxLinkLength {
		n := s.opt.MaxLinkLength
		for n > 0 && !utf8.RuneStart(u[n]) { // not inside a character
			n--
		}
		u = u[:n]
		if segs != nil {
			segs = cutSegments(segs, int64(len(u)))
			lk.End = segs[len(segs)-1].End
		} else {
			lk.End = start + int64(len(u))
		}
		if !slices.Contains(probs, ErrTooLong) {
			probs = append(probs, ErrTooLong)
		}
	}
	if !s.opt.DataURIs && isData(u) {
		// not reported: neither copied nor parsed
		s.dropped = *lk
		s.out = s.out[:len(s.out)-1]
		return &s.dropped
	}
	if len(segs) > 1 || len(segs) == 1 && segs[0] != (Segment{lk.Start, lk.End}) {
		lk.Segments = append([]Segment(nil), segs...)
	}
	lk.URL = string(u)
	lk.Ending = ending(u, form)
	if lk.Ending == EndUnproven {
		probs = append(probs, ErrGatewayCut)
	}
	for _, p := range probs {
		lk.addProblem(p)
	}
	full := lk.URL
	switch form {
	case FormAbbrev:
		if u[0]|0x20 == 'f' {
			full = "ftp://" + full
		} else {
			full = "http://" + full
		}
	case FormDomain:
		full = "http://" + full
	case FormEmail:
		// RFC 6068: the quotes of a quoted local part are escaped
		full = "mailto:" + strings.ReplaceAll(full, `"`, "%22")
	default:
		if s.opt.Refang {
			full = refanged(full)
		}
	}
	canonicalize(lk, full)
	if s.qpDebris(u, segs, k, pos) {
		lk.addProblem(ErrQPDebris)
		lk.Valid = false
	}
	return lk
}

// qpDebris reports whether the link u, which starts at position pos of
// window line k, carries quoted-printable encoding that the text was not
// decoded from (a part whose header is damaged is read as plain): the
// escape "=3D" of "=" (RFC 2045 6.7: "=" is always written so), or a
// join after a soft line break ("=" at a line's end) in a link that the
// text before it shows to be inside quoted-printable (`href=3D"mailto:kij=`
// then `itora@...`). Such a link is not the one its author wrote.
func (s *Scanner) qpDebris(u []byte, segs []Segment, k, pos int) bool {
	if bytes.Contains(u, []byte("=3D")) {
		return true
	}
	if len(segs) < 2 {
		return false
	}
	soft := false
	for _, sg := range segs[:len(segs)-1] {
		if i := sg.End - 1 - s.base; i >= 0 && i < int64(s.end) && s.buf[i] == '=' {
			soft = true
		}
	}
	if !soft {
		return false
	}
	before := s.text(k)[:pos]
	before = before[max(0, len(before)-5):]
	return bytes.Contains(before, []byte("=3D"))
}

// column returns the number of characters of its line before position
// pos of window line k, counting from the last position asked (links
// come in order, so a long line is counted once, not once a link). A
// link starts at an ASCII character or a character's first byte, where
// no valid UTF-8 sequence is cut, so the counts of the parts add up to
// utf8.RuneCount of the whole.
func (s *Scanner) column(k, pos int) int {
	l := &s.lines[k]
	t := s.buf[l.s:l.e]
	if pos >= l.colPos {
		l.colN += runeCount(t[l.colPos:pos])
	} else {
		l.colN -= runeCount(t[pos:l.colPos])
	}
	l.colPos = pos
	return l.colN
}

func canonicalize(lk *Link, full string) {
	// one parse (uri.Analyze), which does not allocate for a URL
	// already canonical
	r := uri.Analyze(full)
	if r.Canonical == "" {
		lk.addProblem(r.Err())
		return
	}
	lk.Canonical, lk.Scheme, lk.Host = r.Canonical, r.Scheme, r.Host
	lk.Valid = r.Valid()
	for _, p := range r.Problems {
		lk.addProblem(&URLProblem{p})
	}
}

// ending says what ended the link u written in form, before any join
// by the mailer-wrap heuristic: a gateway's end marker, or, for a
// gateway link without one (or cut inside the start of its path, as
// "https://urldefense.com/"), nothing proven, even inside delimiters
// (where the author may have cut the link while copying it); else its
// delimiter or its text.
func ending(u []byte, form Form) Ending {
	if g := gatewayOf(u, true); g != gwNone {
		if gatewayEnd(g, u) == len(u) {
			return EndWrapper
		}
		return EndUnproven
	}
	switch form {
	case FormWrapper, FormAngle, FormQuoted:
		return EndDelimiter
	}
	return EndText
}
