package rewrite

import (
	"bytes"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"github.com/linkscan/linkscan/extract"
	"github.com/linkscan/linkscan/mailbox"
)

// Options control Message.
type Options struct {
	// Extract are the options links are found with; use the same as the
	// scan that reported them.
	Extract extract.Options
	// BreakDKIM rewrites bodies covered by a DKIM-Signature header, which
	// the change invalidates. Without it such messages are left alone and
	// their links reported as skipped.
	BreakDKIM bool
	// Annotate leaves every body alone and adds one header field,
	// AnnotateField, listing each change as "OLD -> NEW".
	Annotate bool
	// Attachments rewrites text parts sent as attachments too
	// (Content-Disposition: attachment: a patch, a text file); without
	// it their links are reported, not written.
	Attachments bool
	// Headers rewrites the links of the message's header fields that
	// scan reads with its Headers option (List-Archive, List-Post,
	// Archived-At, Content-Base ...; LinkHeaders), where a link stands
	// whole on one line of the field.
	Headers bool
	// Archive is the audit history that archive rules look links up in
	// (package audit's HistoryReader), with the message's Date; nil:
	// archive rules skip every link, saying so. A failed lookup makes
	// Message return an *ArchiveError and leave the message as it was.
	Archive Archive
}

// LinkHeaders are the header fields whose links Options.Headers
// rewrites: those scan reads links from (RFC 2369, RFC 5064, RFC 8288,
// RFC 2557).
var LinkHeaders = []string{"List-Archive", "List-Help", "List-Owner", "List-Post", "List-Subscribe",
	"List-Unsubscribe", "Archived-At", "Link", "Content-Base", "Content-Location", "X-URL", "X-Mailing-List"}

// AnnotateField is the header field Options.Annotate adds.
const AnnotateField = "X-Linkscan-Rewritten"

// scanners recycles link scanners from message to message.
var scanners = sync.Pool{New: func() any { return new(extract.Scanner) }}

// ErrIncomplete is returned for a message a reader did not hold whole
// (mailbox.Message.Holes): its output could not be written from Raw.
var ErrIncomplete = errors.New("rewrite: message not held whole (over the reader's size limit); left as it is")

// LinkChange is one link of a message that the rules change: written
// (Skipped empty) or not (Skipped says why).
type LinkChange struct {
	Part        string // the part's path ("1", "1.2"; "" for a preamble or epilogue)
	Where       string // body, preamble, epilogue, html:href ...
	ContentType string
	// Start and End are the link's offsets in the part's text, Line and
	// Column its place there (1-based) as package extract gives them
	// (for a header link, in "Name: value" unfolded). For an HTML
	// attribute, Start and End are 0 and Line and Column give the
	// value's place in the part's body (transfer-decoded). RawOffset is
	// a file offset: the link's in unencoded parts, the start of its
	// encoded line in quoted-printable and base64 ones, the value's for
	// an attribute in an unencoded part (else the body's start), the
	// field's for a header link.
	Start, End   int64
	Line, Column int
	RawOffset    int64
	Old, New     string // the URL before and after
	OldForm      string // the form the link was written in
	NewForm      string // the form it is written in now
	Rules        []Change
	// Skipped is why the new URL was not written: signed or encrypted
	// mail, DKIM, a span that could not be mapped exactly, a charset that
	// cannot hold it, or a rule that could not do its work.
	Skipped string
	// Annotated: Options.Annotate listed the change in a header instead.
	Annotated bool

	written string // the URL as written, for the check of Message
}

// Message rewrites the links of one message by the rules and returns the
// message's new bytes (in the place of m.Raw: the mbox "From " line is
// the caller's) and every link the rules change, written or skipped.
//
// Every byte outside a rewritten link is kept (docs/rewrite.md, "Byte
// preservation"). When nothing is written, out is m.Raw itself: no copy
// (but for a message of bare CR lines, m.BareCR, whose CRs mailbox
// reads as LF: out has them back as CR).
// A message with holes (mailbox.Message.Holes) gives ErrIncomplete and
// m.Raw. A failed lookup of an archive rule in Options.Archive gives an
// *ArchiveError and the message's bytes as they were: nothing of the
// message is written; changes are those planned before the failure and,
// last, the link whose lookup failed (New its old URL). Message calls
// m.Parts(), and adds the damage found in its parts (a charset that
// does not decode) to m.Problems; the caller releases m afterwards. The Rules may be used by
// several goroutines at once, one message each.
//
// A message written with a change of form (wrap, drop-wrapper), a link
// in pieces, in HTML text, two changed links on a line, or an edit that
// could not be read back on its lines is read again and rewritten once more: when that changes it
// still (the text around one link read otherwise once another changed),
// the further pass is taken, up to maxSettle passes, so that rewriting
// the output again changes nothing; a message that does not settle, or
// where a new URL is not a link of the result, is given back as it was,
// its changes reported.
func (r *Rules) Message(m *mailbox.Message, opts *Options) (out []byte, changes []LinkChange, err error) {
	out, chs, err := r.MessageChanges(m, opts)
	return out, chs.List(), err
}

// MessageChanges is Message with the changes kept compactly (Changes:
// some tens of bytes for each instead of some hundreds), for callers
// that hold them a while, as the rewrite command does from the worker
// that rewrites a message to the writer that reports it. changes is nil
// when there are none (its methods take a nil Changes as empty).
func (r *Rules) MessageChanges(m *mailbox.Message, opts *Options) (out []byte, changes *Changes, err error) {
	if opts == nil {
		opts = &Options{}
	}
	out, changes, parts, risky, err := r.message(m, opts, nil)
	if why := overGrowth(m, out); err == nil && why != "" {
		changes.skipFrom(pos{}, why, true)
		return fileBytes(m, m.Raw), changes, nil
	}
	if err != nil || len(out) > 0 && len(m.Raw) > 0 && &out[0] == &m.Raw[0] || bytes.Equal(out, fileBytes(m, m.Raw)) {
		return out, changes, err
	}
	if why := verifyOutput(m, parts, out, changes); why != "" {
		changes.skipFrom(pos{}, SkipVerify+" ("+why+")", true)
		return fileBytes(m, m.Raw), changes, nil
	}
	if !risky {
		return out, changes, nil
	}
	for range maxSettle {
		m2 := mailbox.ReadMessage(out, m.Path, &mailbox.Options{MaxMessageSize: -1})
		found := &urlSet{}
		out2, ch2, parts2, _, err := r.message(m2, opts, found)
		same := err != nil || bytes.Equal(out2, out)
		if same {
			m2.Release()
		}
		if err != nil {
			// a failed archive lookup (ErrIncomplete cannot be: out
			// is held whole)
			if last, ok := ch2.last(); ok {
				if changes == nil {
					changes = &Changes{}
				}
				changes.add(&last)
			}
			return fileBytes(m, m.Raw), changes, err
		}
		if same {
			for c := range changes.All() {
				if c.Skipped == "" && !c.Annotated && !found.has(c.written) && !found.has(asciiForm(c.written)) {
					changes.skipFrom(pos{}, "a new URL would not read back as written (the text around it reads otherwise)", false)
					return fileBytes(m, m.Raw), changes, nil
				}
			}
			return out, changes, nil
		}
		if why := overGrowth(m, out2); why != "" {
			m2.Release()
			changes.skipFrom(pos{}, why, true)
			return fileBytes(m, m.Raw), changes, nil
		}
		if why := verifyOutput(m2, parts2, out2, ch2); why != "" {
			m2.Release()
			changes.skipFrom(pos{}, SkipVerify+" ("+why+")", true)
			return fileBytes(m, m.Raw), changes, nil
		}
		changes = merged(changes, ch2)
		out = bytes.Clone(out2)
		m2.Release()
	}
	changes.skipFrom(pos{}, "the message does not settle: each pass of the rules changes it again", false)
	return fileBytes(m, m.Raw), changes, nil
}

// MaxGrowth bounds how much the rules may add to one message: a message
// whose new bytes would be longer than its old ones by more is given
// back as it was, every change skipped, saying so. With MaxURLLength it
// bounds the memory and time of any rules file on any message.
const MaxGrowth = 1 << 20

// overGrowth says why out, new bytes of m, are too long, or "".
func overGrowth(m *mailbox.Message, out []byte) string {
	if n := len(out) - len(m.Raw); n > MaxGrowth {
		return "the message was left as it was: the rules would make it " + strconv.Itoa(n) + " bytes longer, over the limit of " + strconv.Itoa(MaxGrowth)
	}
	return ""
}

// merged adds to changes the changes ch2 (of a further pass) writes,
// each in the place of the change of the same URL of its part an
// earlier pass reported skipped (the first such left). It reads the
// changes a few times rather than holding them decoded, and finds the
// skipped ones by their part and URL (a search of the list for each
// took time in the square of the changes).
func merged(changes, ch2 *Changes) *Changes {
	type key struct{ part, old string }
	need := map[key]int{}
	for c := range ch2.All() {
		if c.Skipped == "" && !c.Annotated {
			need[key{c.Part, c.Old}]++
		}
	}
	if len(need) == 0 {
		return changes
	}
	removed := map[int]bool{}
	i := 0
	for c := range changes.All() {
		if k := (key{c.Part, c.Old}); c.Skipped != "" && need[k] > 0 {
			need[k]--
			removed[i] = true
		}
		i++
	}
	out := &Changes{}
	i = 0
	for c := range changes.All() {
		if !removed[i] {
			out.add(&c)
		}
		i++
	}
	for c := range ch2.All() {
		if c.Skipped == "" && !c.Annotated {
			out.add(&c)
		}
	}
	return out
}

// message is one pass of Message. found, if not nil, gets the URL of
// every link found, as package extract (or the walk, for attributes)
// gives it. parts are m's (m.Parts is called once: each call walks the
// message again and records its damage again).
func (r *Rules) message(m *mailbox.Message, opts *Options, found *urlSet) (out []byte, changes *Changes, parts []*mailbox.Part, risky bool, err error) {
	m.Parse()
	if len(m.Holes) > 0 {
		return m.Raw, changes, nil, false, ErrIncomplete
	}
	parts = m.Parts()
	for _, p := range parts {
		// the damage of its parts is the message's, as scan reports it
		// (the walk gives some of it to both)
		for _, pr := range p.Problems {
			if !slices.Contains(m.Problems, pr) {
				m.Problems = append(m.Problems, pr)
			}
		}
	}
	msgSkip := protected(m, parts)
	if msgSkip == "" && !opts.BreakDKIM && !opts.Annotate && m.Header.Get("DKIM-Signature") != "" {
		msgSkip = "the message carries a DKIM-Signature (Options.BreakDKIM rewrites it)"
	}
	var ed []edit
	env := r.messageEnv(m, opts)
	sc := scanners.Get().(*extract.Scanner)
	defer scanners.Put(sc)
	if opts.Headers {
		hed, hch, err := r.headerLinks(m, opts, env, found)
		for i := range hch {
			if changes == nil {
				changes = &Changes{}
			}
			changes.add(&hch[i])
		}
		if err != nil {
			return fileBytes(m, m.Raw), changes, parts, false, err
		}
		if msgSkip == "" && !opts.Annotate {
			ed = append(ed, hed...)
		}
	}
	for _, p := range parts {
		if p.Text == nil || p.RawEnd <= p.RawStart {
			continue
		}
		ps := newPartSplice(r, m, p, opts)
		ps.found, ps.env, ps.chs = found, env, changes
		first, n := changes.end(), changes.Len()
		ps.links(sc)
		changes = ps.chs
		if ps.err != nil {
			sc.ResetBytes(nil, nil)
			return fileBytes(m, m.Raw), changes, parts, false, ps.err
		}
		if ps.edits.len() == 0 {
			continue
		}
		if msgSkip != "" || opts.Annotate {
			continue
		}
		pe, reason := ps.rawEdits()
		if memHook != nil {
			memHook()
		}
		if reason != "" {
			if changes.Len() > n {
				changes.skipFrom(first, reason, true)
			}
			continue
		}
		ed = append(ed, pe...)
		risky = risky || ps.risky
	}
	sc.ResetBytes(nil, nil)
	switch {
	case msgSkip != "":
		changes.skipFrom(pos{}, msgSkip, true)
	case opts.Annotate:
		changes.annotateAll()
	}
	if opts.Annotate {
		if e, ok := annotation(m, changes); ok {
			ed = append(ed, e)
		}
	}
	if len(ed) == 0 {
		return fileBytes(m, m.Raw), changes, parts, false, nil
	}
	if !opts.Annotate {
		ed = append(ed, sizeEdits(m, parts, ed)...)
	}
	out = fileBytes(m, applyEdits(m.Raw, ed))
	if faultHook != nil {
		out = faultHook(out)
	}
	if memHook != nil {
		memHook()
	}
	return out, changes, parts, risky, nil
}

// memHook, when set (by tests), is called where one pass of Message
// holds the most: each part's edits made, and the message's new bytes
// written.
var memHook func()

// faultHook, when set (by tests), may damage the new bytes of a pass, as
// a fault of the splicer would, for the check of verifyOutput to find.
var faultHook func(out []byte) []byte

// fileBytes writes the line endings of a message of bare CR lines back
// as they were in the file (mailbox reads each CR as LF); other
// messages' bytes are out itself.
func fileBytes(m *mailbox.Message, out []byte) []byte {
	if !m.BareCR() {
		return out
	}
	return bytes.ReplaceAll(out, []byte{'\n'}, []byte{'\r'})
}

// protected returns why a message may not be touched at all: it is
// signed or encrypted (multipart/signed, multipart/encrypted, S/MIME).
func protected(m *mailbox.Message, parts []*mailbox.Part) string {
	ct := strings.ToLower(m.Header.Get("Content-Type"))
	for _, t := range []string{"multipart/signed", "multipart/encrypted", "application/pkcs7-mime", "application/x-pkcs7-mime"} {
		if strings.Contains(ct, t) {
			return "signed or encrypted message (" + t + ")"
		}
	}
	for _, p := range parts {
		switch p.ContentType {
		case "application/pgp-signature", "application/pkcs7-signature", "application/x-pkcs7-signature",
			"application/pgp-encrypted", "application/pkcs7-mime", "application/x-pkcs7-mime":
			return "signed or encrypted message (a part of type " + p.ContentType + ")"
		}
	}
	return ""
}

// inlinePGP reports whether a text holds an inline PGP block.
func inlinePGP(text []byte) bool {
	return bytes.Contains(text, []byte("-----BEGIN PGP SIGNED MESSAGE-----")) ||
		bytes.Contains(text, []byte("-----BEGIN PGP MESSAGE-----"))
}

// maxAnnotation bounds an "OLD -> NEW" item of the annotation, which
// cannot be folded: RFC 5322 lines are at most 998 characters.
const maxAnnotation = 990

// annotation builds the header field of Options.Annotate, inserted at
// the end of the header; none when there is nothing to list or when the
// message has that field already with the same list (rewriting twice is
// rewriting once).
func annotation(m *mailbox.Message, changes *Changes) (edit, bool) {
	var items []string
	seen := map[string]bool{}
	changes.each(func(h []byte, c *LinkChange) {
		if !c.Annotated {
			return
		}
		it := asciiField(c.Old) + " -> " + asciiField(c.New)
		if len(it) > maxAnnotation {
			changes.setHead(h, "too long to be listed on one header line ("+strconv.Itoa(len(it))+" bytes)", false)
			return
		}
		if !seen[it] {
			seen[it] = true
			items = append(items, it)
		}
	})
	if len(items) == 0 {
		return edit{}, false
	}
	value := strings.Join(items, ", ")
	for _, v := range m.Header.Values(AnnotateField) {
		if strings.Join(strings.Fields(v), " ") == strings.Join(strings.Fields(value), " ") {
			return edit{}, false
		}
	}
	if len(m.Header) == 0 {
		return edit{}, false
	}
	last := m.Header[len(m.Header)-1]
	at := int(last.End - m.RawOffset)
	if at < 0 || at > len(m.Raw) {
		return edit{}, false
	}
	eol := "\n"
	if at >= 2 && m.Raw[at-2] == '\r' && m.Raw[at-1] == '\n' {
		eol = "\r\n"
	}
	if at == 0 || m.Raw[at-1] != '\n' {
		return edit{}, false // a header without a line ending after it
	}
	var b strings.Builder
	b.WriteString(AnnotateField + ":")
	col := len(AnnotateField) + 1
	for i, it := range items {
		if i > 0 {
			b.WriteString(",")
			col++
		}
		if col+1+len(it) > 78 && i > 0 {
			b.WriteString(eol)
			b.WriteString("\t")
			col = 8
		} else {
			b.WriteString(" ")
			col++
		}
		b.WriteString(it)
		col += len(it)
	}
	b.WriteString(eol)
	return edit{start: at, end: at, text: []byte(b.String())}, true
}

// asciiField writes a URL for a header: its ASCII form, and no white
// space or control characters (RFC 5322 field bodies; no encoded-words
// needed).
func asciiField(u string) string {
	u = asciiForm(u)
	var b strings.Builder
	for i := 0; i < len(u); i++ {
		c := u[i]
		if c <= ' ' || c == 0x7f || c == ',' {
			b.WriteString("%" + strings.ToUpper(strconv.FormatInt(int64(c)|0x100, 16)[1:]))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// sizeEdits fixes the Content-Length and Lines header fields of the
// message when they gave the body's size before the edits: they give it
// after. Fields that were wrong before are left as they were.
func sizeEdits(m *mailbox.Message, parts []*mailbox.Part, ed []edit) []edit {
	if len(m.Header) == 0 {
		return nil
	}
	bodyStart := int(m.Header[len(m.Header)-1].End - m.RawOffset)
	switch {
	case bodyStart < 0 || bodyStart > len(m.Raw):
		return nil
	case bytes.HasPrefix(m.Raw[bodyStart:], []byte("\r\n")):
		bodyStart += 2
	case bytes.HasPrefix(m.Raw[bodyStart:], []byte("\n")):
		bodyStart++
	}
	delta, dlines := 0, 0
	for _, e := range ed {
		if e.start < bodyStart {
			continue // an edit of the header: sizes are the body's
		}
		delta += len(e.text) - (e.end - e.start)
		dlines += bytes.Count(e.text, []byte("\n")) - bytes.Count(m.Raw[e.start:e.end], []byte("\n"))
	}
	body := m.Raw[bodyStart:]
	var out []edit
	for _, f := range m.Header {
		var want, now int
		switch {
		case strings.EqualFold(f.Name, "Content-Length"):
			want, now = len(body), len(body)+delta
		case strings.EqualFold(f.Name, "Lines"):
			n := bytes.Count(body, []byte("\n"))
			if len(body) > 0 && body[len(body)-1] != '\n' {
				n++
			}
			want, now = n, n+dlines
		default:
			continue
		}
		// an mbox reader may count the blank line before the next "From "
		// line in the body, which the field does not: allow two bytes
		// or a line less
		v, err := strconv.Atoi(strings.TrimSpace(f.Value))
		if err != nil || v > want || v < want-2 || want == now {
			continue
		}
		if e, ok := numberEdit(m, f, now+v-want); ok {
			out = append(out, e)
		}
	}
	return append(out, partSizeEdits(m, parts, ed)...)
}

// partSizeEdits fixes the Content-Length field a MIME part has in its
// own header (Solaris mailx and dtmail write one for each part) when it
// gave the part's body size before the edits: it gives it after. The
// body runs to the line break before the next boundary, which the field
// may count or not: a field up to two bytes off counts as right, and
// keeps its difference. Other fields are left as they were.
func partSizeEdits(m *mailbox.Message, parts []*mailbox.Part, ed []edit) []edit {
	var out []edit
	for _, p := range parts {
		if len(p.Header) == 0 || len(m.Header) > 0 && p.Header[0].Offset == m.Header[0].Offset {
			continue // the message's own header: sizeEdits
		}
		bs, be := int(p.RawStart-m.RawOffset), int(p.RawEnd-m.RawOffset)
		delta := 0
		for _, e := range ed {
			if e.start >= bs && e.end <= be {
				delta += len(e.text) - (e.end - e.start)
			}
		}
		if delta == 0 {
			continue
		}
		for _, f := range p.Header {
			if !strings.EqualFold(f.Name, "Content-Length") {
				continue
			}
			v, err := strconv.Atoi(strings.TrimSpace(f.Value))
			if err != nil || v < be-bs-2 || v > be-bs+2 {
				continue
			}
			if e, ok := numberEdit(m, f, v+delta); ok {
				out = append(out, e)
			}
		}
	}
	return out
}

// numberEdit writes n in the place of the digits of header field f.
func numberEdit(m *mailbox.Message, f mailbox.Field, n int) (edit, bool) {
	s, e := int(f.Offset-m.RawOffset), int(f.End-m.RawOffset)
	if s < 0 || e > len(m.Raw) || s >= e {
		return edit{}, false
	}
	line := m.Raw[s:e]
	c := bytes.IndexByte(line, ':')
	if c < 0 {
		return edit{}, false
	}
	ds := c + 1
	for ds < len(line) && (line[ds] < '0' || line[ds] > '9') {
		ds++
	}
	de := ds
	for de < len(line) && line[de] >= '0' && line[de] <= '9' {
		de++
	}
	if de == ds {
		return edit{}, false
	}
	return edit{start: s + ds, end: s + de, text: []byte(strconv.Itoa(n))}, true
}

// asciiForm writes a URL in ASCII: an internationalized host as its
// A-label (IDNA, RFC 5891), the other non-ASCII bytes percent-encoded
// (an IRI becomes its URI, RFC 3987 §3.1). A host IDNA refuses is
// percent-encoded too, which RFC 3986 §3.2.2 allows for reg-names.
func asciiForm(u string) string {
	i := 0
	for i < len(u) && u[i] < utf8.RuneSelf {
		i++
	}
	if i == len(u) {
		return u
	}
	if s, e, ok := hostSpan(u); ok && !isASCIIString(u[s:e]) {
		if h, err := idna.Lookup.ToASCII(u[s:e]); err == nil {
			return asciiForm(u[:s] + h + u[e:])
		}
	}
	const hexdig = "0123456789ABCDEF"
	b := []byte(u[:i])
	for ; i < len(u); i++ {
		c := u[i]
		if c < utf8.RuneSelf {
			b = append(b, c)
			continue
		}
		b = append(b, '%', hexdig[c>>4], hexdig[c&15])
	}
	return string(b)
}

// cleanAttr is the URL of an HTML attribute as scan reports it: white
// space around it dropped, runs of white space with a line break or tab
// inside it removed (RFC 3986 appendix C); other white space inside it
// makes it no link here (nil ok).
func cleanAttr(s string) (string, bool) {
	s = strings.TrimFunc(s, unicode.IsSpace)
	if strings.IndexFunc(s, unicode.IsSpace) < 0 {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			b.WriteString(s[i : i+size])
			i += size
			continue
		}
		end := i + strings.IndexFunc(s[i:], func(r rune) bool { return !unicode.IsSpace(r) })
		if !strings.ContainsAny(s[i:end], "\t\n\r") {
			return "", false
		}
		i = end
	}
	return b.String(), true
}

func isASCIIString(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// headerLinks plans the changes of the links of the message's link
// header fields (Options.Headers). A link is written where its URL
// stands whole on one line of the field, in ASCII; a link folded across
// lines, or whose form would change, is reported.
func (r *Rules) headerLinks(m *mailbox.Message, opts *Options, env *lookupEnv, found *urlSet) ([]edit, []LinkChange, error) {
	var ed []edit
	var chs []LinkChange
	for _, f := range m.Header {
		known := false
		for _, h := range LinkHeaders {
			known = known || strings.EqualFold(f.Name, h)
		}
		s, e := int(f.Offset-m.RawOffset), int(f.End-m.RawOffset)
		if !known || s < 0 || e > len(m.Raw) || s >= e {
			continue
		}
		raw := m.Raw[s:e]
		var fed []edit
		for _, l := range extract.All([]byte(f.Name+": "+f.Value), &opts.Extract) {
			if found != nil {
				found.add(l.URL)
			}
			lk := Link{URL: l.URL, Canonical: l.Canonical, Scheme: l.Scheme, Host: l.Host, Form: string(l.Form), Where: "header:" + f.Name}
			res, err := r.rewrite(lk, env)
			var unsettled string
			if err == nil {
				res, unsettled, err = r.settle(lk, res, env)
			}
			if err != nil {
				if errors.Is(err, ErrEmptyURL) {
					continue
				}
				chs = append(chs, failedChange(LinkChange{Where: lk.Where, Start: l.Start, End: l.End, Line: l.Line,
					Column: l.Column, RawOffset: f.Offset, OldForm: lk.Form}, lk, res))
				return ed, chs, err
			}
			c := LinkChange{Where: lk.Where, Start: l.Start, End: l.End, Line: l.Line, Column: l.Column, RawOffset: f.Offset,
				Old: l.URL, New: res.URL, OldForm: lk.Form, NewForm: res.Form, Rules: res.Changes}
			if !res.Changed(lk) {
				if c.Skipped = skippedBy(res.Changes); c.Skipped != "" {
					chs = append(chs, c)
				}
				continue
			}
			// the n-th occurrence of the URL in the value is the n-th in
			// the field's bytes, when none is folded
			n := strings.Count(f.Value[:max(0, min(int(l.Start)-len(f.Name)-2, len(f.Value)))], l.URL)
			at := -1
			if strings.Count(f.Value, l.URL) == bytes.Count(raw, []byte(l.URL)) {
				at = nthIndex(raw, []byte(l.URL), n)
			}
			switch {
			case cutLink(&l):
				c.Skipped = SkipCut
			case unsettled != "":
				c.Skipped = unsettled
			case res.Form != lk.Form:
				c.Skipped = "a link in a header is not written in another form"
			case at < 0:
				c.Skipped = "the link is folded across lines of the header field"
			default:
				c.written = asciiForm(res.URL)
				fed = append(fed, edit{s + at, s + at + len(l.URL), []byte(c.written)})
			}
			chs = append(chs, c)
		}
		ed = append(ed, fed...)
	}
	return ed, chs, nil
}

// failedChange fills in c, the change of a link whose archive lookup
// failed: the link as it was, the rules that applied before, Skipped
// empty (the message is not written: Message returns the error).
func failedChange(c LinkChange, lk Link, res Result) LinkChange {
	c.Old, c.New, c.NewForm, c.Rules = lk.URL, lk.URL, lk.Form, res.Changes
	return c
}

// nthIndex returns the index of the n-th (from 0) occurrence of sub in
// b, -1 if there is none.
func nthIndex(b, sub []byte, n int) int {
	at := 0
	for {
		i := bytes.Index(b[at:], sub)
		if i < 0 {
			return -1
		}
		if n == 0 {
			return at + i
		}
		n--
		at += i + len(sub)
	}
}
