package rewrite

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"errors"
	"html"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/linkscan/linkscan/extract"
	"github.com/linkscan/linkscan/mailbox"
)

// edit replaces m.Raw[start:end] with text.
type edit struct {
	start, end int
	text       []byte
}

// applyEdits writes raw with the edits (sorted here; they do not
// overlap) into a new buffer.
func applyEdits(raw []byte, ed []edit) []byte {
	sort.SliceStable(ed, func(i, j int) bool { return ed[i].start < ed[j].start })
	n := len(raw)
	for _, e := range ed {
		n += len(e.text) - (e.end - e.start)
	}
	out := make([]byte, 0, n)
	at := 0
	for _, e := range ed {
		out = append(out, raw[at:e.start]...)
		out = append(out, e.text...)
		at = e.end
	}
	return append(out, raw[at:]...)
}

// The three ways a part's text stands in the file.
const (
	srcPlain  = iota // 7bit, 8bit, binary: the file bytes are the source
	srcQP            // quoted-printable: decoded here line by line
	srcBase64        // base64: decoded, edited, encoded again whole
)

// partSplice plans the changes of one part's links. Edits are made in
// the part's source: the bytes the text was decoded from by the charset
// (and HTML references), that is the body itself for unencoded parts and
// the transfer-decoded body otherwise.
type partSplice struct {
	r    *Rules
	m    *mailbox.Message
	p    *mailbox.Part
	opts *Options

	kind int
	bs   int    // index of the body in m.Raw
	body []byte // the body as written
	src  []byte // the source (body for srcPlain)
	qp   qpLines
	cuts []int // pieces' buffer

	html       bool
	utf8       bool   // the charset is UTF-8: non-ASCII URLs may stay
	charsetBad string // why the charset cannot take a new URL at all
	stateful   bool   // ISO-2022 and the like: only where source == text
	skip       string // why no link of the part may change

	edits *editLog   // made at the first edit
	chs   *Changes   // the message's changes (nil: none yet), this part's added at the end
	found *urlSet    // the URLs found, when Message checks a pass
	env   *lookupEnv // for archive rules
	err   error      // the first failed archive lookup: the part stops there
	// risky: an edit changed a link's form, was written in pieces, in
	// HTML text, could not be read back on its lines, or shares its line
	// with another link's: Message reads the message again
	risky bool
}

// sedit replaces src[start:end] with text, for change number ch.
type sedit struct {
	start, end int
	text       []byte
	ch         int
}

// addEdit adds e to the part's edits.
func (ps *partSplice) addEdit(e sedit) {
	if ps.edits == nil {
		ps.edits = &editLog{}
	}
	ps.edits.add(e)
}

// addChange adds c to the message's changes, made at the first.
func (ps *partSplice) addChange(c *LinkChange) {
	if ps.chs == nil {
		ps.chs = &Changes{}
	}
	ps.chs.add(c)
}

func newPartSplice(r *Rules, m *mailbox.Message, p *mailbox.Part, opts *Options) *partSplice {
	ps := &partSplice{r: r, m: m, p: p, opts: opts, html: p.ContentType == "text/html"}
	ps.bs = int(p.RawStart - m.RawOffset)
	be := int(p.RawEnd - m.RawOffset)
	if ps.bs < 0 || be > len(m.Raw) || ps.bs > be {
		ps.skip = "the part's bytes are not in the message"
		return ps
	}
	ps.body = m.Raw[ps.bs:be]
	switch p.Encoding {
	case "quoted-printable":
		ps.kind = srcQP
	case "base64":
		ps.kind = srcBase64
	}
	cs := strings.ToLower(strings.TrimSpace(p.Charset))
	ps.utf8 = cs == "utf-8" || cs == "utf8"
	switch {
	case hasAnyPrefix(cs, "utf-16", "utf-32", "utf16", "utf32", "ucs-2", "ucs-4", "ucs2", "ucs4", "unicode", "ibm037", "cp037", "ibm500", "cp500", "ibm1047", "cp1047", "ebcdic", "ibm-"):
		ps.charsetBad = "charset " + cs + " is not ASCII-compatible"
	case hasAnyPrefix(cs, "iso-2022", "csiso2022", "hz-gb", "utf-7", "utf7"):
		ps.stateful = true
	}
	if inlinePGP(p.Text) {
		ps.skip = "inline PGP block in the part"
	}
	if d := strings.TrimSpace(p.Header.Get("Content-Disposition")); !opts.Attachments && hasPrefixFold(d, "attachment") {
		ps.skip = "the part is an attachment (Options.Attachments rewrites it)"
	}
	for _, pr := range p.Problems {
		if ps.kind == srcBase64 && (errors.Is(pr.Err, mailbox.ErrDecode) || errors.Is(pr.Err, mailbox.ErrTruncated)) {
			ps.skip = "the part's base64 is damaged; encoding it again would lose bytes"
		}
	}
	return ps
}

func hasAnyPrefix(s string, ps ...string) bool {
	for _, p := range ps {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// source decodes the part's body when it is encoded; false when it
// cannot be.
func (ps *partSplice) source() bool {
	if ps.src != nil {
		return true
	}
	switch ps.kind {
	case srcPlain:
		ps.src = ps.body
	case srcQP:
		ps.src, ps.qp = qpDecode(ps.body)
	case srcBase64:
		ps.src = ps.p.Decoded()
	}
	return ps.src != nil
}

// links finds the part's links and plans the changes the rules make.
func (ps *partSplice) links(sc *extract.Scanner) {
	sc.ResetBytes(ps.p.Text, &ps.opts.Extract)
	for sc.Scan() {
		l := sc.Link()
		if ps.found != nil {
			ps.found.add(l.URL)
		}
		ps.link(&l)
		if ps.err != nil {
			return
		}
	}
	if ps.found != nil {
		for _, a := range ps.p.AttrLinks {
			if u, ok := cleanAttr(a.URL); ok {
				ps.found.add(u)
			}
		}
	}
	if ps.html && ps.attrsChange() && ps.source() {
		ps.attrs()
	}
}

// attrsChange reports whether the rules touch any of the attribute links
// the walk found (Part.AttrLinks), so that a part whose attributes stay
// as they are is not decoded again to look for them.
func (ps *partSplice) attrsChange() bool {
	for _, a := range ps.p.AttrLinks {
		u, ok := cleanAttr(a.URL)
		if !ok || u == "" || !hasScheme(u) {
			continue
		}
		lk := Link{URL: u, Form: "html", Where: "html:" + a.Attr, ContentType: ps.p.ContentType}
		res, err := ps.r.rewrite(lk, ps.env)
		if err != nil && !errors.Is(err, ErrEmptyURL) || err == nil && len(res.Changes) > 0 {
			return true // attrs meets the error again, with the attribute's place
		}
	}
	return false
}

func (ps *partSplice) link(l *extract.Link) {
	if l.URL == "" {
		return
	}
	lk := Link{URL: l.URL, Canonical: l.Canonical, Scheme: l.Scheme, Host: l.Host, Form: string(l.Form),
		Where: ps.p.Where, ContentType: ps.p.ContentType}
	res, err := ps.r.rewrite(lk, ps.env)
	var unsettled string
	if err == nil {
		res, unsettled, err = ps.r.settle(lk, res, ps.env)
	}
	if err != nil {
		if !errors.Is(err, ErrEmptyURL) {
			ps.err = err
			fc := failedChange(LinkChange{Part: ps.p.Path, Where: ps.p.Where, ContentType: ps.p.ContentType,
				Start: l.Start, End: l.End, Line: l.Line, Column: l.Column, RawOffset: ps.p.RawOffset(int(l.Start)), OldForm: lk.Form}, lk, res)
			ps.addChange(&fc)
		}
		return
	}
	if len(res.Changes) == 0 {
		return // the common case: no rule did anything
	}
	c := LinkChange{Part: ps.p.Path, Where: ps.p.Where, ContentType: ps.p.ContentType,
		Start: l.Start, End: l.End, Line: l.Line, Column: l.Column,
		RawOffset: ps.p.RawOffset(int(l.Start)),
		Old:       l.URL, New: res.URL, OldForm: lk.Form, NewForm: res.Form, Rules: res.Changes}
	if !res.Changed(lk) {
		if c.Skipped = skippedBy(res.Changes); c.Skipped != "" {
			ps.addChange(&c)
		}
		return
	}
	switch {
	case cutLink(l):
		c.Skipped = SkipCut
	case unsettled != "":
		c.Skipped = unsettled
	case ps.skip != "":
		c.Skipped = ps.skip
	case unproven(l, ps.p.Text) != "":
		c.Skipped = unproven(l, ps.p.Text)
	case cutWrapper(l.URL) != "":
		c.Skipped = cutWrapper(l.URL)
	case glued(l, ps.p.Text) != "":
		c.Skipped = glued(l, ps.p.Text)
	default:
		c.Skipped = ps.plan(l, &res, ps.chs.Len())
		c.written, _ = writtenAs(lk.Form, &res)
	}
	ps.addChange(&c)
}

// SkipCut is the reason (LinkChange.Skipped) a link that package extract
// cut at its length limit (extract.ErrTooLong) is not written: its text
// is only the start of the link, and writing a new URL in its place
// would leave the rest of the link behind it.
const SkipCut = "link cut at the length limit"

// cutLink reports whether l's text is not the whole link: extract cut
// it at Options.MaxLinkLength.
func cutLink(l *extract.Link) bool {
	for _, err := range l.Errors {
		if errors.Is(err, extract.ErrTooLong) {
			return true
		}
	}
	return false
}

// unproven says why a link joined from several lines may not be
// written, "" when it may: a link in pieces is replaced only where its
// own structure proves where it ends, since a join that took one piece
// too many would have the new URL replace that piece too (the words of
// a following line, a second link). Proofs: "<URL:" or "<" before it and
// the ">" that closes it, or a gateway wrapper that ends with its end
// marker (EndProven). A link on one line ends where white space or a
// delimiter ends it, which needs no proof. Package extract says what
// ended a link (Link.Ending); a delimited link it could not prove
// (EndUnproven) is refused too, and a gateway link is checked here
// against the unwrappers' grammar whatever extract says.
func unproven(l *extract.Link, text []byte) string {
	if !l.Joined {
		return ""
	}
	if delimitedBy(l) && l.Ending != extract.EndUnproven || EndProven(l.URL) {
		return ""
	}
	lines := 1
	if l.Start >= 0 && l.End <= int64(len(text)) && l.Start <= l.End {
		lines += bytes.Count(text[l.Start:l.End], []byte("\n"))
	}
	how := "joined from " + strconv.Itoa(lines) + " lines"
	switch {
	case l.Heuristic:
		how += " by the mailer-wrap rule"
	case l.Form == extract.FormQuoted:
		how += " inside quotes"
	default:
		how += " (a quoted or indented continuation)"
	}
	return how + ", and nothing in the link proves where it ends (no <...> around it, no gateway wrapper closed by its end marker)"
}

// cutWrapper says why a link that is a gateway wrapper cut before its
// end marker (ErrCut) may not be written by any rule, "" when it is no
// such link: its text is only the start of the link, the rest stands on
// the lines after it, and a new URL or form (a <URL:...> around it)
// would part the two.
func cutWrapper(u string) string {
	_, _, _, _, err := unwrapOnce(u)
	if errors.Is(err, ErrCut) {
		return "a gateway link cut before its end marker is not written: " + err.Error()
	}
	return ""
}

// glued says why a bare link that starts right after a letter, a digit
// or a character URLs are written with ("_", "/", "=", "%" ...) is not
// written, "" when it does not: it is then a piece of a longer token,
// often of a larger link (the URL a wrapper embeds after "v3/__" or
// "url=", whose head stands on the line before), and a new URL in its
// place would change that token.
func glued(l *extract.Link, text []byte) string {
	if l.Form != extract.FormBare || l.Start <= 0 || l.Start > int64(len(text)) {
		return ""
	}
	c := text[l.Start-1]
	if c < utf8.RuneSelf && (isLetter(c) || c >= '0' && c <= '9' || strings.IndexByte("_/=%&~+-.", c) >= 0) {
		return "the link starts inside a longer word (after " + strconv.QuoteRune(rune(c)) + "): it may be a piece of a larger link"
	}
	return ""
}

// delimitedBy reports whether l is closed by the delimiters of its form:
// "<URL:...>" or "<...>", the closer found.
func delimitedBy(l *extract.Link) bool {
	if l.Form != extract.FormWrapper && l.Form != extract.FormAngle {
		return false
	}
	for _, err := range l.Errors {
		if errors.Is(err, extract.ErrUnterminated) {
			return false
		}
	}
	return true
}

// skippedBy joins the reasons of the rules that could not do their work.
func skippedBy(chs []Change) string {
	var rs []string
	for _, ch := range chs {
		if ch.Skipped != "" {
			rs = append(rs, ch.Rule+": "+ch.Skipped)
		}
	}
	return strings.Join(rs, "; ")
}

// piece is a range of the source.
type piece struct{ s, e int }

// srcRange maps the text range [a, b), which no cut crosses, to the
// source.
func (ps *partSplice) srcRange(a, b int) (piece, bool) {
	p := ps.p
	switch ps.kind {
	case srcBase64:
		s, e, ok := p.DecodedSpan(a, b)
		return piece{s, e}, ok && s >= 0 && e <= len(ps.src) && s <= e
	case srcQP:
		rs, re, ok := p.RawSpan(a, b)
		if !ok {
			return piece{}, false
		}
		s, ok1 := qpOffset(ps.body, ps.qp, int(rs-p.RawStart))
		e, ok2 := qpOffset(ps.body, ps.qp, int(re-p.RawStart))
		return piece{s, e}, ok1 && ok2 && s <= e
	}
	rs, re, ok := p.RawSpan(a, b)
	s, e := int(rs-p.RawStart), int(re-p.RawStart)
	return piece{s, e}, ok && s >= 0 && e <= len(ps.src) && s <= e
}

// pieces maps the text range [a, b) to source ranges, split where the
// decoding cut the source (format=flowed line breaks, HTML tags).
func (ps *partSplice) pieces(dst []piece, a, b int) ([]piece, bool) {
	ps.cuts = ps.p.AppendCuts(ps.cuts[:0], a, b)
	from := a
	for _, c := range ps.cuts {
		pc, ok := ps.srcRange(from, c)
		if !ok {
			return dst, false
		}
		dst = append(dst, pc)
		from = c
	}
	pc, ok := ps.srcRange(from, b)
	return append(dst, pc), ok
}

// encode writes a URL for the part's source: in ASCII unless the
// charset is UTF-8, and HTML-escaped in HTML (attr: the quote of an
// attribute value, 0 for text).
func (ps *partSplice) encode(u string, attr byte) []byte {
	if !ps.utf8 {
		u = asciiForm(u)
	}
	if !ps.html {
		return []byte(u)
	}
	var b []byte
	for i := 0; i < len(u); i++ {
		switch c := u[i]; {
		case c == '&':
			b = append(b, "&amp;"...)
		case c == '<' && attr == 0:
			b = append(b, "&lt;"...)
		case c == '>' && attr == 0:
			b = append(b, "&gt;"...)
		case c == '"' && attr != '\'':
			b = append(b, "&quot;"...)
		case c == '\'' && attr == '\'':
			b = append(b, "&#39;"...)
		default:
			b = append(b, c)
		}
	}
	return b
}

// plan works out the source edits that write link l as res says, and
// returns why it cannot ("" when planned).
func (ps *partSplice) plan(l *extract.Link, res *Result, ch int) string {
	if ps.charsetBad != "" {
		return ps.charsetBad
	}
	if !ps.source() {
		return "the part's body could not be decoded again"
	}
	text := ps.p.Text
	var pcs []piece
	var old []byte
	for _, sg := range l.Spans() {
		if sg.Start < 0 || sg.End > int64(len(text)) || sg.Start > sg.End {
			return "the link's place is outside the part's text"
		}
		old = append(old, text[sg.Start:sg.End]...)
		var ok bool
		if pcs, ok = ps.pieces(pcs, int(sg.Start), int(sg.End)); !ok {
			return "the link's text does not map exactly to the bytes it was decoded from"
		}
	}
	if string(old) != l.URL {
		return "the link's URL is not its text as written"
	}
	var oldSrc []byte
	for _, pc := range pcs {
		oldSrc = append(oldSrc, ps.src[pc.s:pc.e]...)
	}
	if ps.stateful {
		if !bytes.Equal(oldSrc, old) {
			return "charset " + ps.p.Charset + " is stateful and the link is not written in ASCII there"
		}
	}
	nu, _ := writtenAs(string(l.Form), res)
	nb := ps.encode(nu, 0)
	var open, closeB []byte
	var extra []sedit
	if res.Form != string(l.Form) {
		switch {
		case res.Form == "url-wrapper" && (l.Form == extract.FormBare || l.Form == extract.FormAbbrev || l.Form == extract.FormDomain):
			open, closeB = ps.encode("<URL:", 0), ps.encode(">", 0)
		case res.Form == "bare" && (l.Form == extract.FormWrapper || l.Form == extract.FormAngle):
			spans := l.Spans()
			o, c, ok := delimiters(text, int(spans[0].Start), int(spans[len(spans)-1].End), l.Form)
			if !ok {
				return "the link's delimiters were not found"
			}
			for _, r := range [2]piece{o, c} {
				pc, ok := ps.srcRange(r.s, r.e)
				if !ok {
					return "the link's delimiters do not map exactly to the bytes they were decoded from"
				}
				extra = append(extra, sedit{pc.s, pc.e, nil, ch})
			}
		default:
			return "writing a link of form " + string(l.Form) + " as " + res.Form + " is not supported"
		}
	}
	texts := distribute(nb, oldSrc, pcs, l.Heuristic || len(l.Segments) > 0 && !delimited(l.Form), ps.html)
	if ps.html {
		// the bytes between the pieces are tags: keep them all, even
		// around pieces left empty
		for len(texts) < len(pcs) {
			texts = append(texts, nil)
		}
	}
	last := len(texts) - 1
	wrapped := false
	if open != nil {
		if w, ok := ps.breakWrapped(nb, pcs[0].s, pcs[len(pcs)-1].e, len(texts)); ok {
			texts, last, wrapped = [][]byte{w}, 0, true
		}
	}
	if !wrapped {
		texts[0] = append(open[:len(open):len(open)], texts[0]...)
		texts[last] = append(texts[last][:len(texts[last]):len(texts[last])], closeB...)
	}
	for i, t := range texts {
		e := pcs[i].e
		if i == last {
			e = pcs[len(pcs)-1].e
		}
		extra = append(extra, sedit{pcs[i].s, e, t, ch})
	}
	if res.Form != string(l.Form) || len(pcs) > 1 {
		ps.risky = true
	}
	if !ps.readsBack(extra, string(oldSrc), string(nb), len(pcs) > 1) {
		return "the new URL would not read back as one link where it is written"
	}
	slices.SortStableFunc(extra, func(a, b sedit) int { return cmp.Compare(a.start, b.start) })
	for _, e := range extra {
		ps.addEdit(e)
	}
	return ""
}

// readsBack reports whether the lines the edits touch (and one line
// either side), edited, read as
// they did with the link old become the link u, as package extract finds
// links: the same links but that one. It checks that the text written
// is the link meant and that the change does not make the text around
// it read otherwise (an unterminated "<" or "<URL:" before a link newly
// wrapped could swallow it, or let a later word be read as a link the
// next pass would rewrite). When the lines alone do not show the old
// link (its reading depends on lines around them), only the new link is
// looked for. HTML sources are not plain text to extract, and are not
// checked, nor links that format=flowed joined from several lines. The
// lines of a format=flowed part read otherwise once unflowed (soft
// breaks joined, quote depth taken off): a longer URL may join the next
// line there and not here, so every edit of such a part is read again
// in the whole message too (risky: Message does, and refuses a new URL
// that is not a link of the result).
func (ps *partSplice) readsBack(ed []sedit, old, u string, pieces bool) bool {
	flowed := strings.EqualFold(ps.p.Params["format"], "flowed")
	if ps.html || pieces && flowed || len(ed) == 0 {
		ps.risky = true // not checked here: Message reads the result again
		return true
	}
	if flowed {
		ps.risky = true
	}
	ed = append([]sedit(nil), ed...)
	slices.SortStableFunc(ed, func(a, b sedit) int { return cmp.Compare(a.start, b.start) })
	src := ps.src
	// the lines touched and one line either side: a longer or shorter
	// line may make a mailer wrap be joined, or no more, across them
	ls := bytes.LastIndexByte(src[:ed[0].start], '\n') + 1
	if ls > 0 {
		ls = bytes.LastIndexByte(src[:ls-1], '\n') + 1
	}
	end := ed[len(ed)-1].end
	le := len(src)
	if k := bytes.IndexByte(src[end:], '\n'); k >= 0 {
		le = end + k + 1
		if k := bytes.IndexByte(src[le:], '\n'); k >= 0 {
			le += k + 1
		} else {
			le = len(src)
		}
	}
	count := func(text []byte) map[string]int {
		n := map[string]int{}
		for _, l := range extract.All(text, &ps.opts.Extract) {
			n[l.URL]++
		}
		return n
	}
	after := count(applySource(src, ed, ls, le))
	before := count(src[ls:le])
	if before[old] == 0 {
		ps.risky = true
		return after[u] > 0
	}
	before[old]--
	before[u]++
	for k, v := range before {
		if after[k] != v {
			return false
		}
	}
	for k, v := range after {
		if before[k] != v {
			return false
		}
	}
	return true
}

// WrapWidth is the width of the lines a link newly written <URL:...>
// is broken into when it would pass it (RFC 1738 Appendix).
const WrapWidth = 78

// breakWrapped writes nb as <URL:...> in lines of WrapWidth when, written
// whole at source offset at, it would pass that width: cut by
// BreakWrapped, each continuation line starting with the quote prefix
// of the line ("> > ") and two spaces of indentation, lines ended as the
// line is. Not in HTML nor format=flowed parts (flowed text is wrapped
// by its reader), and not when the lines would not read back as the one
// link (package extract does not join every indented continuation):
// then the link stays on one line.
func (ps *partSplice) breakWrapped(nb []byte, at, end, ntexts int) ([]byte, bool) {
	if ntexts != 1 || ps.html || strings.EqualFold(ps.p.Params["format"], "flowed") {
		return nil, false
	}
	src := ps.src
	ls := bytes.LastIndexByte(src[:at], '\n') + 1
	// the column is the line's as written so far: earlier links on it
	// may have been made shorter or longer, or wrapped
	before := ps.written(ls, at)
	col := utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:])
	if col+len("<URL:")+len(nb)+len(">") <= WrapWidth {
		return nil, false
	}
	eol := []byte("\n")
	if le := bytes.IndexByte(src[at:], '\n'); le > 0 && src[at+le-1] == '\r' {
		eol = []byte("\r\n")
	} else if le < 0 && ls >= 2 && src[ls-2] == '\r' {
		eol = []byte("\r\n")
	}
	q := ls
	for q < at && (src[q] == '>' || src[q] == ' ' && q > ls) {
		q++
	}
	indent := append(append([]byte(nil), src[ls:q]...), "  "...)
	lines := BreakWrapped(string(nb), WrapWidth-col, WrapWidth-len(indent))
	var out []byte
	for i, l := range lines {
		if i > 0 {
			out = append(append(out, eol...), indent...)
		}
		out = append(out, l...)
	}
	// The lines must read back as the one link: the line as it would
	// stand, up to its end, scanned as scan does.
	le := len(src)
	if k := bytes.IndexByte(src[end:], '\n'); k >= 0 {
		le = end + k + 1
	}
	var check []byte
	check = append(check, before...)
	check = append(check, out...)
	check = append(check, src[end:le]...)
	for _, l := range extract.All(check, &ps.opts.Extract) {
		if l.Form == extract.FormWrapper && l.URL == string(nb) {
			return out, true
		}
	}
	return nil, false
}

// written returns src[ls:at], the start of a line up to a link, with
// the edits planned so far in it; when an edit crosses ls, from the
// start of the line the edit starts on. The edits of each change lie
// after those of the changes before it, so only the last changes are
// looked at: those that end after the line starts.
func (ps *partSplice) written(ls, at int) []byte {
	from := ls
	log := ps.edits
	i := log.len() - 1
	for i >= 0 {
		j, end := i, 0
		for ch := log.at(i).ch; j >= 0 && log.at(j).ch == ch; j-- {
			end = max(end, log.at(j).end)
		}
		if end <= from {
			break
		}
		for k := j + 1; k <= i; k++ {
			if e := log.at(k); e.start < from && e.end > from {
				from = bytes.LastIndexByte(ps.src[:e.start], '\n') + 1
			}
		}
		i = j
	}
	var ed []sedit
	for k := i + 1; k < log.len(); k++ {
		if e := log.at(k); e.start >= from && e.end <= at {
			ed = append(ed, e)
		}
	}
	if len(ed) == 0 {
		return ps.src[ls:at]
	}
	sort.SliceStable(ed, func(i, j int) bool { return ed[i].start < ed[j].start })
	return applySource(ps.src, ed, from, at)
}

func delimited(f extract.Form) bool {
	return f == extract.FormWrapper || f == extract.FormAngle || f == extract.FormQuoted
}

// delimiters finds the text ranges of the opener ("<URL:" or "<", with
// any white space after it) and of the closer (">", with any white space
// before it) around a link whose URL runs from start to end.
func delimiters(text []byte, start, end int, f extract.Form) (open, closeR piece, ok bool) {
	o := start
	for o > 0 && (text[o-1] == ' ' || text[o-1] == '\t') {
		o--
	}
	opener := "<"
	if f == extract.FormWrapper {
		opener = "<URL:"
	}
	if o < len(opener) || !strings.EqualFold(string(text[o-len(opener):o]), opener) {
		return piece{}, piece{}, false
	}
	c := end
	for c < len(text) && (text[c] == ' ' || text[c] == '\t') {
		c++
	}
	if c >= len(text) || text[c] != '>' {
		return piece{}, piece{}, false
	}
	return piece{o - len(opener), start}, piece{end, c + 1}, true
}

// distribute cuts the new URL nb into the pieces the old one (old, the
// pieces' source bytes) stood in. The rule (docs/rewrite.md): a break
// that falls in the part the old and the new URL share at their start or
// at their end stays where it was in that part (so a moved prefix keeps
// the old line breaks of the path); any other break is put where the
// piece before it is as long as it was, moved back to a safe point
// (never right after "-", inside a %XX escape, an HTML reference or a
// UTF-8 character, and in HTML an escape like "&amp;"). When the new
// URL runs out before the last piece, it
// ends in the piece where it ran out, and the rest of the old link (the
// line breaks and prefixes between its pieces too) is removed. join puts
// the whole URL into the first piece (links joined by the mailer-wrap
// rule, which a break elsewhere might not join again). The result has
// one text per piece used; the last text used replaces everything up to
// the end of the last piece. (In HTML, where the bytes between pieces
// are tags, the caller keeps every piece, the ones past the end empty.)
func distribute(nb, old []byte, pcs []piece, join, html bool) [][]byte {
	if len(pcs) == 1 || join {
		return [][]byte{nb}
	}
	cp := 0
	for cp < len(old) && cp < len(nb) && old[cp] == nb[cp] {
		cp++
	}
	cs := 0
	for cs < len(old)-cp && cs < len(nb)-cp && old[len(old)-1-cs] == nb[len(nb)-1-cs] {
		cs++
	}
	var texts [][]byte
	pos, at := 0, 0
	for i := 0; i < len(pcs)-1; i++ {
		at += pcs[i].e - pcs[i].s
		var c int
		switch {
		case at <= cp:
			c = at
		case len(old)-at <= cs:
			c = len(nb) - (len(old) - at)
		default:
			c = -1
		}
		if c <= pos {
			want := pos + pcs[i].e - pcs[i].s
			if want >= len(nb) {
				break
			}
			c = safeCut(nb, want, pos, html)
		}
		if c >= len(nb) {
			break
		}
		texts = append(texts, nb[pos:c])
		pos = c
	}
	return append(texts, nb[pos:])
}

// safeCut returns a place at or near c, after low, where nb may be cut
// (html: nb is HTML-escaped, so not inside "&...;" either).
func safeCut(nb []byte, c, low int, html bool) int {
	unsafe := func(c int) bool {
		if c <= 0 || c >= len(nb) {
			return false
		}
		if nb[c-1] == '-' || nb[c-1] == '%' || c >= 2 && nb[c-2] == '%' || nb[c]&0xC0 == 0x80 {
			return true
		}
		if a := bytes.LastIndexByte(nb[max(0, c-10):c], '&'); html && a >= 0 && bytes.IndexByte(nb[max(0, c-10)+a:c], ';') < 0 {
			return true
		}
		return false
	}
	for k := c; k > low; k-- {
		if !unsafe(k) {
			return k
		}
	}
	for k := c + 1; k < len(nb); k++ {
		if !unsafe(k) {
			return k
		}
	}
	return len(nb)
}

// attrs rewrites the URLs of HTML attributes (href, src, cite,
// background, action) in the source.
func (ps *partSplice) attrs() {
	// the line of an attribute: the line breaks before it, counted on
	// from the one before (they come in order; counting from the start
	// each time took time in the square of the part's size)
	lines, upto := 0, 0
	for _, a := range htmlAttrs(ps.src) {
		val := ps.src[a.vs:a.ve]
		if !ps.utf8 && !isASCIIBytes(val) {
			continue
		}
		u, ok := cleanAttr(html.UnescapeString(string(val)))
		if !ok || u == "" || !hasScheme(u) || hasPrefixFold(u, "javascript:") || hasPrefixFold(u, "data:") && !ps.opts.Extract.DataURIs {
			continue
		}
		lk := Link{URL: u, Form: "html", Where: "html:" + a.name, ContentType: ps.p.ContentType}
		res, err := ps.r.rewrite(lk, ps.env)
		var unsettled string
		if err == nil {
			res, unsettled, err = ps.r.settle(lk, res, ps.env)
		}
		if err != nil && errors.Is(err, ErrEmptyURL) {
			continue
		}
		if a.vs < upto {
			lines, upto = 0, 0
		}
		lines += bytes.Count(ps.src[upto:a.vs], []byte("\n"))
		upto = a.vs
		line := lines + 1
		col := utf8.RuneCount(ps.src[bytes.LastIndexByte(ps.src[:a.vs], '\n')+1:a.vs]) + 1
		c := LinkChange{Part: ps.p.Path, Where: lk.Where, ContentType: ps.p.ContentType, Line: line, Column: col,
			RawOffset: ps.p.RawStart, Old: u, New: res.URL, OldForm: "html", NewForm: res.Form, Rules: res.Changes}
		if ps.kind == srcPlain {
			c.RawOffset = ps.p.RawStart + int64(a.vs)
		}
		if err != nil {
			ps.err = err
			fc := failedChange(c, lk, res)
			ps.addChange(&fc)
			return
		}
		if !res.Changed(lk) {
			if c.Skipped = skippedBy(res.Changes); c.Skipped != "" {
				ps.addChange(&c)
			}
			continue
		}
		switch {
		case unsettled != "":
			c.Skipped = unsettled
		case ps.skip != "":
			c.Skipped = ps.skip
		case ps.charsetBad != "":
			c.Skipped = ps.charsetBad
		case ps.stateful:
			c.Skipped = "charset " + ps.p.Charset + " is stateful"
		default:
			nb := ps.encode(res.URL, a.quote)
			if a.quote == 0 && (len(nb) == 0 || bytes.ContainsAny(nb, " \t\r\n\"'=<>`")) {
				nb = append(append([]byte{'"'}, ps.encode(res.URL, '"')...), '"')
			}
			ps.addEdit(sedit{a.vs, a.ve, nb, ps.chs.Len()})
			c.written = res.URL // an attribute value read back is res.URL by construction
		}
		ps.addChange(&c)
	}
}

func isASCIIBytes(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// rawEdits turns the planned source edits into edits of m.Raw: in place
// for unencoded parts, the changed lines encoded again for
// quoted-printable, the whole body encoded again for base64. A reason
// is returned when they cannot be made.
func (ps *partSplice) rawEdits() ([]edit, string) {
	ed := ps.edits.sorted()
	for i := 1; i < ed.len(); i++ {
		e, prev := ed.at(i), ed.at(i-1)
		if e.start < prev.end {
			return nil, "links of the part overlap"
		}
		if e.ch != prev.ch && bytes.IndexByte(ps.src[prev.end:e.start], '\n') < 0 {
			ps.risky = true // two links changed on one line: each was read back alone
		}
	}
	switch ps.kind {
	case srcPlain:
		// one edit of the whole body, written here: an edit per link
		// would cost more than the body's bytes in a link-dense part
		body := ed.apply(ps.src, 0, len(ps.src))
		if ps.p.Encoding != "binary" && longestLine(body) > max(998, longestLine(ps.src)) {
			return nil, "a line of the part would pass 998 characters (RFC 5322); the part is not encoded to allow it"
		}
		return []edit{{ps.bs, ps.bs + len(ps.src), body}}, ""
	case srcBase64:
		dec := ed.apply(ps.src, 0, len(ps.src))
		s, e, enc := base64Body(ps.body, dec)
		return []edit{{ps.bs + s, ps.bs + e, enc}}, ""
	}
	return qpEdits(ps.body, ps.src, ps.qp, ed, ps.bs), ""
}

// applySource returns src[from:to] with the edits inside it made.
func applySource(src []byte, ed []sedit, from, to int) []byte {
	var out []byte
	at := from
	for _, e := range ed {
		if e.start < from || e.end > to {
			continue
		}
		out = append(out, src[at:e.start]...)
		out = append(out, e.text...)
		at = e.end
	}
	return append(out, src[at:to]...)
}

// base64Body encodes dec as the base64 body was written: the length of
// its first line and its line ending; the white space before the first
// line and after the last (line endings) is kept. It returns the range
// of body replaced.
func base64Body(body, dec []byte) (int, int, []byte) {
	end := len(bytes.TrimRight(body, " \t\r\n"))
	start := len(body[:end]) - len(bytes.TrimLeft(body[:end], " \t\r\n"))
	eol := []byte("\n")
	width := 0
	if i := bytes.IndexByte(body[start:end], '\n'); i >= 0 {
		width = i
		if i > 0 && body[start+i-1] == '\r' {
			eol, width = []byte("\r\n"), i-1
		}
	}
	enc := base64.StdEncoding.EncodeToString(dec)
	if width <= 0 {
		return start, end, []byte(enc)
	}
	out := make([]byte, 0, len(enc)+len(enc)/width*len(eol)+len(eol))
	for len(enc) > width {
		out = append(out, enc[:width]...)
		out = append(out, eol...)
		enc = enc[width:]
	}
	return start, end, append(out, enc...)
}

// qpLine is one line of a quoted-printable body: rs..re its text, re..ee
// its line ending, in the body; ds the offset of its decoded bytes in
// the source; soft tells that it ends in a soft line break.
type qpLine struct {
	rs, re, ee int
	ds         int
	soft       bool
}

// qpLines are the lines of a quoted-printable body: only where each
// starts in the body and in the source is kept (16 bytes a line, where a
// qpLine is 40), the rest is read from the body again (line).
type qpLines struct {
	body []byte
	at   []qpAt
}

type qpAt struct{ rs, ds int }

func (q *qpLines) len() int { return len(q.at) }

// line returns line i.
func (q *qpLines) line(i int) qpLine {
	rs, ee := q.at[i].rs, len(q.body)
	if i+1 < len(q.at) {
		ee = q.at[i+1].rs
	}
	return qpLineAt(q.body, rs, ee, q.at[i].ds)
}

// qpLineAt reads the line body[rs:ee] (with its line ending, if any).
func qpLineAt(body []byte, rs, ee, ds int) qpLine {
	re := ee
	if re > rs && body[re-1] == '\n' {
		re--
		if re > rs && body[re-1] == '\r' {
			re--
		}
	}
	t := bytes.TrimRight(body[rs:re], " \t")
	return qpLine{rs: rs, re: re, ee: ee, ds: ds, soft: len(t) > 0 && t[len(t)-1] == '='}
}

// qpDecode decodes a quoted-printable body, keeping hard line endings as
// written, and returns the place of each line. Malformed escapes stand
// for themselves.
func qpDecode(body []byte) ([]byte, qpLines) {
	out := make([]byte, 0, len(body))
	lines := qpLines{body: body, at: make([]qpAt, 0, bytes.Count(body, []byte("\n"))+1)}
	for at := 0; at < len(body); {
		nl := bytes.IndexByte(body[at:], '\n')
		ee := len(body)
		if nl >= 0 {
			ee = at + nl + 1
		}
		ln := qpLineAt(body, at, ee, len(out))
		t := bytes.TrimRight(body[at:ln.re], " \t")
		if ln.soft {
			t = t[:len(t)-1]
		}
		out = qpAppend(out, t)
		if !ln.soft {
			out = append(out, body[ln.re:ee]...)
		}
		lines.at = append(lines.at, qpAt{rs: at, ds: ln.ds})
		at = ee
	}
	if out == nil {
		out = []byte{}
	}
	return out, lines
}

// qpAppend appends the decoding of quoted-printable text without line
// breaks.
func qpAppend(out, t []byte) []byte {
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c == '=' && i+2 < len(t)+0 && isHexDigit(t[i+1]) && isHexDigit(t[i+2]) {
			out = append(out, unhexDigit(t[i+1])<<4|unhexDigit(t[i+2]))
			i += 2
			continue
		}
		out = append(out, c)
	}
	return out
}

func isHexDigit(c byte) bool { return c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'f' }

func unhexDigit(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

// qpOffset maps an offset in a quoted-printable body to the source; it
// must fall at the start of a unit (a character or an escape).
func qpOffset(body []byte, lines qpLines, x int) (int, bool) {
	i := sort.Search(lines.len(), func(i int) bool { return lines.at[i].rs > x }) - 1
	if i < 0 {
		return 0, x == 0
	}
	ln := lines.line(i)
	if x > ln.re {
		// in the line ending (or a soft break): the start of the next line
		if i+1 < lines.len() {
			return lines.at[i+1].ds, true
		}
		return ln.ds + len(qpAppend(nil, bytes.TrimSuffix(bytes.TrimRight(body[ln.rs:ln.re], " \t"), []byte("=")))) + (ln.ee - ln.re), true
	}
	t := body[ln.rs:x]
	if n := len(t); n > 0 && t[n-1] == '=' || n > 1 && t[n-2] == '=' && isHexDigit(t[n-1]) {
		return 0, false
	}
	return ln.ds + len(qpAppend(nil, t)), true
}

// qpEdits encodes again the logical lines (lines joined by soft breaks)
// that the edits (sorted) touch, and only those: one edit, from the
// first line encoded again to the last, the lines between copied.
func qpEdits(body, src []byte, ql qpLines, ed *editLog, bs int) []edit {
	lines := func(i int) qpLine { return ql.line(i) }
	n := ql.len()
	// the decoded end of line i's text, before its line ending
	dend := func(i int) int {
		if lines(i).soft {
			if i+1 < n {
				return ql.at[i+1].ds
			}
			return len(src)
		}
		next := len(src)
		if i+1 < n {
			next = ql.at[i+1].ds
		}
		return next - (lines(i).ee - lines(i).re)
	}
	lineOf := func(d int) int {
		return max(sort.Search(n, func(i int) bool { return ql.at[i].ds > d })-1, 0)
	}
	var out []byte
	rs, re := -1, 0 // the range of body replaced
	for k := 0; k < ed.len(); {
		// the logical lines around edit k, and the edits inside them
		ek := ed.at(k)
		first := lineOf(ek.start)
		for first > 0 && lines(first-1).soft {
			first--
		}
		last := lineOf(max(ek.end, ek.start))
		for last+1 < n && lines(last).soft {
			last++
		}
		j := k + 1
		for ; j < ed.len(); j++ {
			ej := ed.at(j)
			if ej.start > dend(last) {
				break
			}
			l2 := lineOf(ej.end)
			for l2 > last {
				last++
				for last+1 < n && lines(last).soft {
					last++
				}
			}
		}
		from, to := ql.at[first].ds, dend(last)
		dec := ed.applyRange(src, k, j, from, to)
		lf, ll := lines(first), lines(last)
		eol := body[ll.re:ll.ee]
		if len(eol) == 0 {
			eol = body[lf.re:lf.ee]
		}
		if len(eol) == 0 {
			eol = []byte("\n")
		}
		if rs < 0 {
			rs = lf.rs
		} else {
			out = append(out, body[re:lf.rs]...)
		}
		out = append(out, qpEncodeLines(dec, eol)...)
		re = ll.re
		k = j
	}
	if rs < 0 {
		return nil
	}
	return []edit{{bs + rs, bs + re, out}}
}

// qpEncodeLines encodes decoded text, whose hard line endings stand as
// written, in quoted-printable: lines of at most 76 characters with soft
// breaks (eol), "=" and bytes that are not printable ASCII escaped,
// white space escaped only at the end of a line, and "From " at the
// start of a line written "=46rom " so that no mbox reader takes it for
// a separator.
func qpEncodeLines(dec []byte, eol []byte) []byte {
	const hexdig = "0123456789ABCDEF"
	var out []byte
	for len(dec) > 0 || out == nil {
		line := dec
		var hard []byte
		if i := bytes.IndexByte(dec, '\n'); i >= 0 {
			line, hard = dec[:i], dec[i:i+1]
			if i > 0 && dec[i-1] == '\r' {
				line, hard = dec[:i-1], dec[i-1:i+1]
			}
			dec = dec[i+1:]
		} else {
			dec = nil
		}
		col := 0
		var tok [3]byte
		for i := 0; i < len(line); i++ {
			c := line[i]
			var t []byte
			esc := c == '=' || c < ' ' && c != '\t' || c > '~' ||
				(c == ' ' || c == '\t') && i == len(line)-1 ||
				col == 0 && c == 'F' && bytes.HasPrefix(line[i:], []byte("From ")) ||
				col == 0 && c == '.' && i == len(line)-1
			if esc {
				tok = [3]byte{'=', hexdig[c>>4], hexdig[c&15]}
				t = tok[:]
			} else {
				tok[0] = c
				t = tok[:1]
			}
			// room: 75 characters and "=", or 76 on the line's last
			if col+len(t) > 75 && !(i == len(line)-1 && col+len(t) <= 76) {
				out = append(out, '=')
				out = append(out, eol...)
				col = 0
				if c == 'F' && bytes.HasPrefix(line[i:], []byte("From ")) {
					tok = [3]byte{'=', hexdig[c>>4], hexdig[c&15]}
					t = tok[:]
				}
			}
			out = append(out, t...)
			col += len(t)
		}
		out = append(out, hard...)
		if hard == nil {
			break
		}
	}
	return out
}

// htmlAttr is an attribute of a tag whose value may be a link.
type htmlAttr struct {
	name   string
	vs, ve int  // the value, without its quotes
	quote  byte // '"', '\'' or 0
}

var linkAttrs = map[string]bool{"href": true, "src": true, "cite": true, "background": true, "action": true}

// htmlAttrs finds the link attributes of the tags of an HTML source,
// passing over comments and the content of script and style elements.
func htmlAttrs(b []byte) []htmlAttr {
	var out []htmlAttr
	for i := 0; i < len(b); {
		j := bytes.IndexByte(b[i:], '<')
		if j < 0 {
			break
		}
		i += j
		if bytes.HasPrefix(b[i:], []byte("<!--")) {
			k := bytes.Index(b[i+4:], []byte("-->"))
			if k < 0 {
				break
			}
			i += 4 + k + 3
			continue
		}
		i++
		if i >= len(b) || !isLetter(b[i]) {
			continue
		}
		ns := i
		for i < len(b) && !isSpaceByte(b[i]) && b[i] != '>' && b[i] != '/' {
			i++
		}
		tag := strings.ToLower(string(b[ns:i]))
		for i < len(b) && b[i] != '>' {
			if isSpaceByte(b[i]) || b[i] == '/' {
				i++
				continue
			}
			as := i
			for i < len(b) && !isSpaceByte(b[i]) && b[i] != '=' && b[i] != '>' && b[i] != '/' {
				i++
			}
			name := strings.ToLower(string(b[as:i]))
			k := i
			for k < len(b) && isSpaceByte(b[k]) {
				k++
			}
			if k >= len(b) || b[k] != '=' {
				if i == as {
					i++
				}
				continue
			}
			k++
			for k < len(b) && isSpaceByte(b[k]) {
				k++
			}
			if k >= len(b) {
				i = k
				break
			}
			a := htmlAttr{name: name}
			if q := b[k]; q == '"' || q == '\'' {
				e := bytes.IndexByte(b[k+1:], q)
				if e < 0 {
					return out
				}
				a.quote, a.vs, a.ve = q, k+1, k+1+e
				i = k + 1 + e + 1
			} else {
				e := k
				for e < len(b) && !isSpaceByte(b[e]) && b[e] != '>' {
					e++
				}
				a.vs, a.ve = k, e
				i = e
			}
			if linkAttrs[name] {
				out = append(out, a)
			}
		}
		if tag == "script" || tag == "style" {
			end := []byte("</" + tag)
			k := indexFold(b[i:], end)
			if k < 0 {
				break
			}
			i += k
		}
	}
	return out
}

func indexFold(b, sub []byte) int {
	for i := 0; i+len(sub) <= len(b); i++ {
		if bytes.EqualFold(b[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

func isLetter(c byte) bool    { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// writtenAs returns the text a new URL is written as for a link of form
// form, and the form a reader finds it in then: an e-mail address, a
// www. or ftp. link or a bare domain whose new URL only adds the scheme
// the form implies is written without it, in its form; with another
// scheme or host it is a bare URL.
func writtenAs(form string, res *Result) (string, string) {
	nu := res.URL
	if res.Form != form {
		return nu, res.Form
	}
	switch extract.Form(form) {
	case extract.FormEmail:
		if rest, ok := strings.CutPrefix(nu, "mailto:"); ok && !strings.ContainsAny(rest, "?&") {
			return rest, form
		}
	case extract.FormAbbrev:
		if rest, ok := strings.CutPrefix(nu, "http://"); ok && hasPrefixFold(rest, "www.") {
			return rest, form
		} else if rest, ok := strings.CutPrefix(nu, "ftp://"); ok && hasPrefixFold(rest, "ftp.") {
			return rest, form
		}
	case extract.FormDomain:
		if rest, ok := strings.CutPrefix(nu, "http://"); ok {
			return rest, form
		}
	default:
		return nu, form
	}
	return nu, string(extract.FormBare)
}

// maxSettle bounds the rounds of settle.
const maxSettle = 4

// settle runs the rules again on the link as it is to be written (its
// text and the form a reader will find it in) until they change nothing
// more, so that rewriting the output again changes nothing: a www. link
// that gained a scheme is a bare link to a wrap rule on the next pass.
// Rules that still change it after maxSettle rounds (a map from a to b
// and one from b to a) give the reason the link is not written.
func (r *Rules) settle(lk Link, res Result, env *lookupEnv) (Result, string, error) {
	for range maxSettle {
		if !res.Changed(lk) {
			return res, "", nil
		}
		u, f := writtenAs(lk.Form, &res)
		l2 := Link{URL: u, Form: f, Where: lk.Where, ContentType: lk.ContentType, Date: lk.Date}
		r2, err := r.rewrite(l2, env)
		if err != nil && !errors.Is(err, ErrEmptyURL) {
			return Result{URL: lk.URL, Form: lk.Form, Changes: res.Changes}, "", err
		}
		if err != nil || !r2.Changed(l2) {
			return res, "", nil
		}
		res.URL, res.Form = r2.URL, r2.Form
		res.Changes = append(res.Changes, r2.Changes...)
		if r2.KeptBy != "" {
			res.KeptBy = r2.KeptBy
		}
	}
	if !res.Changed(lk) {
		return res, "", nil
	}
	return res, "the rules do not settle on this link: rewriting it again would change it again", nil
}

// longestLine returns the length of the longest line of b, without its
// line ending.
func longestLine(b []byte) int {
	n := 0
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			i = len(b)
		}
		n = max(n, len(bytes.TrimSuffix(b[:i], []byte("\r"))))
		b = b[min(i+1, len(b)):]
	}
	return n
}
