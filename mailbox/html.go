package mailbox

import (
	"bytes"
	"strings"

	"golang.org/x/net/html"
)

// htmlText turns HTML into text and collects the URLs of its attributes
// (href, src, cite, background, action, longdesc). The text is written to
// dst[:0], its spans to sdst[:0].
//
// It is written by hand rather than on golang.org/x/net/html's tokenizer,
// which reads every byte through a method call and took a fifth of a
// whole scan's instructions (docs/performance.md); this scanner jumps from
// "<" to "<" with bytes.IndexByte. It follows the HTML5 tokenizer where it
// matters for links: comments, doctypes and processing instructions are
// skipped, script and style contents are not text, a "<" that starts no
// tag is text, attribute values may be quoted with either quote and hold
// ">", and entities are decoded with x/net/html's UnescapeString. One
// deviation: in attribute values only references ending in ";" are
// decoded, so that "?a=1&copy=2" keeps its "&copy" (HTML5 leaves such a
// legacy reference alone before "=" too, but decodes it elsewhere).
// TestHTMLAgainstTokenizer compares it with the tokenizer's reading.
func htmlText(dst []byte, sdst []Span, p *Part, src []byte, spans []Span) ([]byte, []Span) {
	out, sp, _ := htmlTextState(dst, sdst, p, src, spans, nil)
	return out, sp
}

// htmlTextState is htmlText on a piece of a part's HTML (chunk.go), that
// goes on from the output before it when seed, the last span of that
// output's map, is given (spanBuilder.seed). It
// also reports whether src ends open: inside a tag, a comment or a script
// or style element, after a tag (whose line break the text after it
// would take), on a "<" or "</" whose reading depends on what follows, or
// inside what may be a character reference. Text that goes on from a
// piece that does not end open is read as it would be read whole.
func htmlTextState(dst []byte, sdst []Span, p *Part, src []byte, spans []Span, seed *Span) ([]byte, []Span, bool) {
	b := newSpanBuilder(spans, sdst, true)
	if seed != nil {
		b.seed(*seed)
	}
	out := dst[:0]
	links := p.AttrLinks // p.AttrLinks at the end (a local slice costs a tag less)
	text := func(from, to int) {
		if from >= to {
			return
		}
		t := src[from:to]
		if bytes.IndexByte(t, '&') < 0 {
			if !b.copyLead(len(out), from, to-from) {
				b.copyRun(len(out), from, to-from)
			}
			out = append(out, t...)
			return
		}
		// a reference is a unit of its own, unless it stands for itself
		for len(t) > 0 {
			i := bytes.IndexByte(t, '&')
			if i < 0 {
				i = len(t)
			}
			if i > 0 {
				b.copyRun(len(out), from, i)
				out = append(out, t[:i]...)
				from, t = from+i, t[i:]
				continue
			}
			n := refLen(t)
			o := len(out)
			out = appendUnescaped(out, t[:n], false)
			if string(out[o:]) == string(t[:n]) {
				b.copyRun(o, from, n)
			} else {
				b.emit(o, len(out)-o, from, n)
			}
			from, t = from+n, t[n:]
		}
	}
	textStart := 0
	for pos := 0; pos < len(src); {
		j := bytes.IndexByte(src[pos:], '<')
		if j < 0 {
			break
		}
		k := pos + j
		if k+1 >= len(src) {
			break // a "<" at the end is text
		}
		switch c := src[k+1]; {
		case c == '!' || c == '?':
			text(textStart, k)
			if bytes.HasPrefix(src[k:], []byte("<!--")) {
				pos = commentEnd(src, k+4)
			} else {
				pos = skipPast(src, k+2, ">") // doctype, CDATA, bogus comment
			}
			textStart = pos
		case c == '/' && k+2 < len(src) && isLetter(src[k+2]):
			text(textStart, k)
			var nb [16]byte
			name, e := tagName(nb[:0], src, k+2)
			end, closed := forAttrs(src, e, func(_, _ []byte) {})
			pos, textStart = end, end
			if closed && isBlockTag(name) {
				b.insert(len(out))
				out = append(out, '\n')
			}
		case c == '/' && k+2 >= len(src):
			pos = len(src) // "</" at the end is text
		case c == '/':
			// "</>" is dropped, "</ x>" a bogus comment
			text(textStart, k)
			pos = skipPast(src, k+2, ">")
			textStart = pos
		case isLetter(c):
			text(textStart, k)
			var nb [16]byte
			name, e := tagName(nb[:0], src, k+1)
			nl := len(links)
			var base string
			var end int
			var closed, self bool
			links, base, end, closed, self = tagLinks(links, src, e, name)
			pos, textStart = end, end
			if !closed {
				links = links[:nl]
				break // cut off by the end of the input: no tag
			}
			if isBlockTag(name) {
				b.insert(len(out))
				out = append(out, '\n')
			}
			if len(links) > nl {
				found := links[nl:]
				r := b.rawAt(k)
				for i := range found {
					found[i].Text, found[i].Raw = len(out), r
				}
			}
			if base != "" {
				p.Base = base
			}
			if string(name) == "script" || string(name) == "style" {
				// its content is raw text up to its end tag: no tags inside,
				// and not text either, but after a "/>" (which HTML5 ignores
				// here) the tokenizer's reading gave it as text
				rt := rawTextEnd(src, pos, name)
				if self {
					text(pos, rt)
				}
				pos, textStart = rt, rt
			}
		default:
			pos = k + 1 // "<" that starts no tag: text
		}
	}
	open := textStart >= len(src) || bytes.HasSuffix(src, []byte("<")) || bytes.HasSuffix(src, []byte("</")) || refOpen(src[textStart:])
	text(textStart, len(src))
	p.AttrLinks = links
	return out, b.finish(), open
}

// refOpen reports whether text ends in what may be the start of a
// character reference: an "&" followed by nothing but the letters,
// digits and "#" that refLen would read on into the text after it.
func refOpen(text []byte) bool {
	i := bytes.LastIndexByte(text, '&')
	if i < 0 {
		return false
	}
	return refLen(text[i:]) == len(text)-i
}

// isBlockTag tells the elements after which text starts a new line; a
// switch, which the compiler turns into a few comparisons, is cheaper
// here than a map.
func isBlockTag(name []byte) bool {
	switch string(name) {
	case "p", "div", "br", "li", "tr", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote",
		"pre", "table", "hr", "ul", "ol", "dl", "dt", "dd", "title":
		return true
	}
	return false
}

// isLinkAttr tells the attributes whose values are URLs.
func isLinkAttr(name []byte) bool { return linkAttr(name) != "" }

// linkAttr returns the name of a link attribute as a constant string
// (so that an AttrLink costs no string of its own for it), or "" for
// any other attribute.
func linkAttr(name []byte) string {
	switch string(name) {
	case "href":
		return "href"
	case "src":
		return "src"
	case "cite":
		return "cite"
	case "background":
		return "background"
	case "action":
		return "action"
	case "longdesc":
		return "longdesc"
	}
	return ""
}

// tagString returns a lower-case tag name as a string: a constant one for
// the elements that carry links in mail, a new one for any other.
func tagString(tag []byte) string {
	switch string(tag) {
	case "a":
		return "a"
	case "img":
		return "img"
	case "link":
		return "link"
	case "area":
		return "area"
	case "base":
		return "base"
	case "form":
		return "form"
	case "iframe":
		return "iframe"
	case "frame":
		return "frame"
	case "script":
		return "script"
	case "blockquote":
		return "blockquote"
	case "q":
		return "q"
	case "body":
		return "body"
	case "table":
		return "table"
	case "td":
		return "td"
	case "th":
		return "th"
	case "tr":
		return "tr"
	case "input":
		return "input"
	case "source":
		return "source"
	case "video":
		return "video"
	case "audio":
		return "audio"
	case "embed":
		return "embed"
	}
	return string(tag)
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isHTMLSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// commentEnd returns the index after the comment whose text starts at i:
// after "-->" or "--!>", or at once for the abrupt "<!-->" and "<!--->"
// (HTML5 §13.2.5.43–52).
func commentEnd(src []byte, i int) int {
	switch {
	case i < len(src) && src[i] == '>':
		return i + 1
	case i+1 < len(src) && src[i] == '-' && src[i+1] == '>':
		return i + 2
	}
	for {
		j := bytes.Index(src[i:], []byte("--"))
		if j < 0 {
			return len(src)
		}
		k := i + j + 2
		for k < len(src) && src[k] == '-' {
			k++ // "--->" closes too
		}
		if k < len(src) && src[k] == '>' {
			return k + 1
		}
		if k+1 < len(src) && src[k] == '!' && src[k+1] == '>' {
			return k + 2
		}
		i = i + j + 1
	}
}

// skipPast returns the index after the first end at or after i, or the
// end of src.
func skipPast(src []byte, i int, end string) int {
	if e := bytes.Index(src[i:], []byte(end)); e >= 0 {
		return i + e + len(end)
	}
	return len(src)
}

// tagName returns the lower-cased tag name at src[i:] (in src itself if it
// is lower case already, else in b if it fits) and the index after it.
func tagName(b []byte, src []byte, i int) ([]byte, int) {
	start := i
	upper := false
	for i < len(src) && tagNameByte[src[i]] != 0 {
		upper = upper || tagNameByte[src[i]] == 2
		i++
	}
	if !upper {
		return src[start:i], i // already lower case: no copy
	}
	if i-start > cap(b) {
		b = make([]byte, 0, i-start)
	}
	return lowerBytes(b, src[start:i]), i
}

// tagNameByte tells the bytes of a tag name: 0 for those that end it
// (HTML white space, "/", ">"), 2 for upper-case letters, 1 for the rest.
var tagNameByte = func() (t [256]byte) {
	for c := range t {
		switch {
		case isHTMLSpace(byte(c)) || c == '/' || c == '>':
		case 'A' <= c && c <= 'Z':
			t[c] = 2
		default:
			t[c] = 1
		}
	}
	return t
}()

// forAttrs calls fn for each attribute of the tag whose attributes start at
// src[i] and returns the index after the tag's ">", and closed=false if
// the input ended before it (then the tag is no tag, as in HTML5).
func forAttrs(src []byte, i int, fn func(name, value []byte)) (end int, closed bool) {
	if i < len(src) && src[i] == '>' {
		return i + 1, true // no attributes (most tags): no call
	}
	end, closed, _ = forAttrsSelf(src, i, fn)
	return end, closed
}

// forAttrsSelf is forAttrs that also tells whether the tag ended in "/>".
func forAttrsSelf(src []byte, i int, fn func(name, value []byte)) (end int, closed, self bool) {
	for {
		slash := false
		for i < len(src) && (isHTMLSpace(src[i]) || src[i] == '/') {
			slash = src[i] == '/'
			i++
		}
		if i >= len(src) {
			return len(src), false, false
		}
		if src[i] == '>' {
			return i + 1, true, slash
		}
		start := i
		if src[i] == '=' {
			i++ // a name may begin with "="
		}
		for i < len(src) && !isHTMLSpace(src[i]) && src[i] != '/' && src[i] != '>' && src[i] != '=' {
			i++
		}
		name := src[start:i]
		for i < len(src) && isHTMLSpace(src[i]) {
			i++
		}
		var value []byte
		if i < len(src) && src[i] == '=' {
			i++
			for i < len(src) && isHTMLSpace(src[i]) {
				i++
			}
			if i < len(src) && (src[i] == '"' || src[i] == '\'') {
				q := src[i]
				e := bytes.IndexByte(src[i+1:], q)
				if e < 0 {
					value, i = src[i+1:], len(src)
				} else {
					value, i = src[i+1:i+1+e], i+e+2
				}
			} else {
				vs := i
				for i < len(src) && !isHTMLSpace(src[i]) && src[i] != '>' {
					i++
				}
				value = src[vs:i]
			}
		}
		fn(name, value)
	}
}

// tagLinks reads the attributes of a start tag and returns dst with its
// link attributes appended, the href of a <base>, the index after the
// tag, whether the tag was closed by ">", and whether by "/>".
func tagLinks(dst []AttrLink, src []byte, i int, tag []byte) (found []AttrLink, base string, end int, closed, self bool) {
	if i < len(src) && src[i] == '>' {
		return dst, "", i + 1, true, false // no attributes (most tags)
	}
	found = dst
	var seen [8]string // link attributes met; a repeated one is dropped (HTML5)
	nseen := 0
	end, closed, self = forAttrsSelf(src, i, func(name, value []byte) {
		var lb [16]byte
		if len(name) > len(lb) {
			return // longer than any link attribute's name
		}
		a := linkAttr(lowerBytes(lb[:0], name))
		if a == "" {
			return
		}
		for _, s := range seen[:nseen] {
			if s == a {
				return
			}
		}
		if nseen < len(seen) {
			seen[nseen] = a
			nseen++
		}
		v := strings.TrimSpace(unescapeAttr(value))
		if v == "" {
			return
		}
		t := tagString(tag)
		if t == "base" && a == "href" {
			base = v
		}
		found = append(found, AttrLink{URL: v, Tag: t, Attr: a})
	})
	return found, base, end, closed, self
}

func lowerBytes(b, s []byte) []byte {
	for _, c := range s {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}

// appendUnescaped appends t with its character references decoded, one
// reference at a time: a reference is read from its "&" through the
// letters, digits and "#" that follow and one ";", which is all that
// html.UnescapeString looks at, so each can be decoded on its own, and the
// common ones need no call at all. In text (attr false) every reference is
// decoded as UnescapeString decodes it, legacy ones without ";" too; in an
// attribute value only those that end in ";" within 40 bytes are (see
// htmlText), and an "&" that starts none is kept.
func appendUnescaped(out, t []byte, attr bool) []byte {
	for len(t) > 0 {
		i := bytes.IndexByte(t, '&')
		if i < 0 {
			return append(out, t...)
		}
		out = append(out, t[:i]...)
		t = t[i:]
		end := 1
		for end < len(t) && (isLetter(t[end]) || t[end] >= '0' && t[end] <= '9' || t[end] == '#') {
			end++
		}
		semi := end < len(t) && t[end] == ';'
		if attr && (end == 1 || !semi || end > 40) {
			out = append(out, '&')
			t = t[1:]
			continue
		}
		if semi {
			end++
		}
		if d := commonEntity(t[:end]); d != "" {
			out = append(out, d...)
		} else {
			out = append(out, html.UnescapeString(string(t[:end]))...)
		}
		t = t[end:]
	}
	return out
}

// refLen returns the length of the character reference at the start of
// t (which starts with "&"), as appendUnescaped reads it in text: the
// letters, digits and "#" after the "&", and one ";".
func refLen(t []byte) int {
	end := 1
	for end < len(t) && (isLetter(t[end]) || t[end] >= '0' && t[end] <= '9' || t[end] == '#') {
		end++
	}
	if end < len(t) && t[end] == ';' {
		end++
	}
	return end
}

// commonEntity decodes the references mail HTML is full of.
func commonEntity(ref []byte) string {
	switch string(ref) {
	case "&amp;":
		return "&"
	case "&lt;":
		return "<"
	case "&gt;":
		return ">"
	case "&quot;":
		return "\""
	case "&nbsp;":
		return "\u00a0"
	case "&#39;":
		return "'"
	}
	return ""
}

// unescapeAttr decodes the character references of an attribute value
// that end in ";" and leaves the others as written.
func unescapeAttr(v []byte) string {
	if bytes.IndexByte(v, '&') < 0 {
		return string(v)
	}
	return string(appendUnescaped(make([]byte, 0, len(v)), v, true))
}

// rawTextEnd returns the index of the end tag "</name" that closes a
// script or style element whose content starts at i, or the end of src.
func rawTextEnd(src []byte, i int, name []byte) int {
	for i < len(src) {
		j := bytes.Index(src[i:], []byte("</"))
		if j < 0 {
			return len(src)
		}
		k := i + j + 2
		if k+len(name) < len(src) && bytes.EqualFold(src[k:k+len(name)], name) &&
			(isHTMLSpace(src[k+len(name)]) || src[k+len(name)] == '>' || src[k+len(name)] == '/') {
			return i + j
		}
		i = k
	}
	return len(src)
}
