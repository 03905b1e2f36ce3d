package rewrite

import (
	"bytes"
	"slices"
	"strings"

	"github.com/linkscan/linkscan/extract"
	"github.com/linkscan/linkscan/mailbox"
)

// SkipVerify starts the reason (LinkChange.Skipped) every change of a
// message gets when its new bytes fail the check of verifyOutput: the
// message is given back as it was.
const SkipVerify = "the message was left as it was: read back, its text outside the links written would change"

// verifyOutput reads out, the bytes one pass of Message made of m, as a
// message of its own (package mailbox, as a reader of the file will) and
// checks that nothing but the links written changed (p1 are m's parts): the same header
// fields with the same values (but Content-Length and Lines, and the
// annotation field; a header link written stands where the old one
// stood), the same parts with the same headers (but Content-Length), the
// same decoded text outside the place of each link written, where the
// new URL stands (between its pieces only the line breaks, quote
// prefixes and indentation of the old link, and of a <URL:...> newly
// broken into lines), the same HTML attribute links but those written.
// It returns what differs, "" when nothing does. It is the last guard
// before a message is written: it does not trust the splicer's offsets
// beyond the link spans package extract gave.
func verifyOutput(m *mailbox.Message, p1 []*mailbox.Part, out []byte, changes *Changes) string {
	m2 := mailbox.ReadMessage(out, m.Path, &mailbox.Options{MaxMessageSize: -1})
	// m2 is not released: its buffers go with it, not into the pools
	m2.Parse()
	if len(m2.Holes) > 0 {
		return "the new message does not read whole"
	}
	written := make([]LinkChange, 0, changes.Len())
	for c := range changes.All() {
		if c.Skipped == "" && !c.Annotated {
			written = append(written, c)
		}
	}
	if why := sameHeader(m.Header, m2.Header, written, true); why != "" {
		return why
	}
	p2 := m2.Parts()
	if len(p1) != len(p2) {
		return "the new message has another number of parts"
	}
	for i, a := range p1 {
		b := p2[i]
		if a.Path != b.Path || a.ContentType != b.ContentType || a.Encoding != b.Encoding {
			return "part " + a.Path + " reads as another part"
		}
		ownHeader := len(a.Header) == 0 || len(m.Header) == 0 || a.Header[0].Offset != m.Header[0].Offset
		if why := sameHeader(a.Header, b.Header, nil, false); ownHeader && why != "" {
			return "part " + a.Path + ": " + why
		}
		var body, attrs []*LinkChange // pointers: a LinkChange is some hundreds of bytes
		for i := range written {
			c := &written[i]
			switch {
			case c.Part != a.Path || strings.HasPrefix(c.Where, "header:"):
			case strings.HasPrefix(c.Where, "html:"):
				attrs = append(attrs, c)
			default:
				body = append(body, c)
			}
		}
		if (a.Text == nil) != (b.Text == nil) {
			return "part " + a.Path + ": its text reads otherwise"
		}
		if a.Text == nil {
			if !bytes.Equal(a.Decoded(), b.Decoded()) {
				return "part " + a.Path + ": its body changed"
			}
			continue
		}
		if !sameOutside(a.Text, b.Text, body) {
			return "part " + a.Path + ": its text outside the links written would change"
		}
		if !sameAttrs(a.AttrLinks, b.AttrLinks, attrs) {
			return "part " + a.Path + ": its HTML links other than those written would change"
		}
	}
	return ""
}

// sameHeader compares two header blocks field by field: Content-Length
// (and, for a message, Lines) may differ, the annotation field is
// passed over, and a field holding header links written (Where
// "header:NAME", when the field is the only one of its name) may differ
// at the links' places.
func sameHeader(h1, h2 mailbox.Header, written []LinkChange, top bool) string {
	keep := func(h mailbox.Header) []mailbox.Field {
		var fs []mailbox.Field
		for _, f := range h {
			if !strings.EqualFold(f.Name, AnnotateField) {
				fs = append(fs, f)
			}
		}
		return fs
	}
	f1, f2 := keep(h1), keep(h2)
	if len(f1) != len(f2) {
		return "the header would have another number of fields"
	}
	for i, a := range f1 {
		b := f2[i]
		if !strings.EqualFold(a.Name, b.Name) {
			return "header field " + a.Name + " would be another"
		}
		if strings.EqualFold(a.Name, "Content-Length") || top && strings.EqualFold(a.Name, "Lines") || a.Value == b.Value {
			continue
		}
		var links []*LinkChange
		for i := range written {
			if strings.EqualFold(written[i].Where, "header:"+a.Name) {
				links = append(links, &written[i])
			}
		}
		if len(links) == 0 || len(h1.Values(a.Name)) != 1 ||
			!sameOutside([]byte(a.Name+": "+a.Value), []byte(b.Name+": "+b.Value), links) {
			return "header field " + a.Name + " would change outside its links"
		}
	}
	return ""
}

// sameAttrs compares the HTML attribute links of a part before and
// after: in order, the same, or a link written (its old URL, now its
// new one).
func sameAttrs(a1, a2 []mailbox.AttrLink, written []*LinkChange) bool {
	if len(a1) != len(a2) {
		return false
	}
	for i := range a1 {
		if a1[i].URL == a2[i].URL {
			continue
		}
		u1, ok1 := cleanAttr(a1[i].URL)
		u2, ok2 := cleanAttr(a2[i].URL)
		if !ok1 || !ok2 || !slices.ContainsFunc(written, func(c *LinkChange) bool {
			return c.Old == u1 && (c.New == u2 || asciiForm(c.New) == u2)
		}) {
			return false
		}
	}
	return true
}

// sameOutside reports whether text t2 is text t with each link written
// (its span [Start, End) in t, with its delimiters when a drop-wrapper
// removed them) replaced by its new text: the new URL as written (or in
// ASCII), inside "<URL:" and ">" when newly wrapped, and between its
// characters nothing but bytes that stood between the old link's pieces
// (line breaks, quote prefixes, indentation) or white space and ">" (a
// <URL:...> newly broken into lines, with the line's quote prefix).
func sameOutside(t, t2 []byte, links []*LinkChange) bool {
	slices.SortFunc(links, func(a, b *LinkChange) int { return int(a.Start - b.Start) })
	p1, p2 := 0, 0
	for _, c := range links {
		s, e := int(c.Start), int(c.End)
		if s < p1 || e < s || e > len(t) {
			return false
		}
		w := c.written
		if w == "" {
			w = c.New
		}
		switch {
		case c.NewForm == "url-wrapper" && c.OldForm != "url-wrapper":
			w = "<URL:" + w + ">"
		case c.NewForm == "bare" && (c.OldForm == "url-wrapper" || c.OldForm == "angle"):
			o, cl, ok := delimiters(t, s, e, extract.Form(c.OldForm))
			if !ok {
				return false
			}
			s, e = o.s, cl.e
		}
		out := t[p1:s]
		if !bytes.HasPrefix(t2[p2:], out) {
			return false
		}
		p2 += len(out)
		skip := gapBytes(t[s:e], c.Old)
		n, ok := matchLink(t2[p2:], w, skip)
		if !ok && !isASCIIString(w) {
			n, ok = matchLink(t2[p2:], asciiForm(w), skip)
		}
		if !ok {
			return false
		}
		p1, p2 = e, p2+n
	}
	return bytes.Equal(t[p1:], t2[p2:])
}

// gapBytes returns the set of bytes of span, the text of a link, that
// are not its URL's own: those left when url is matched in it in order
// (the line breaks, prefixes and indentation between its pieces), and
// white space and ">" always.
func gapBytes(span []byte, url string) *[256]bool {
	var set [256]bool
	for _, c := range []byte(" \t\r\n>") {
		set[c] = true
	}
	j := 0
	for _, c := range span {
		if j < len(url) && c == url[j] {
			j++
			continue
		}
		set[c] = true
	}
	return &set
}

// matchLink matches w at the start of t, passing over bytes of skip
// between its characters, and returns the length of t it took.
func matchLink(t []byte, w string, skip *[256]bool) (int, bool) {
	i := 0
	for j := 0; j < len(w); {
		switch {
		case i >= len(t):
			return 0, false
		case t[i] == w[j]:
			i++
			j++
		case j > 0 && skip[t[i]]:
			i++
		default:
			return 0, false
		}
	}
	return i, true
}
