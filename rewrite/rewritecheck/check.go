// Package rewritecheck checks what rewrite does to real mail with the
// shipped unwrappers, by an oracle of its own: it finds the
// security-gateway links of each text part itself, by their grammar
// (a link runs from its host to its end marker across line breaks,
// quote prefixes and the blanks mailers put in), and compares the
// words of the decoded text before and after. For tests (a fixture
// mbox) and scripts/rewrite-corpus.sh (any directory of mbox files).
//
// What it checks, for every message (rewrite.Options.BreakDKIM set):
//
//   - words: the words (runs of non-blank characters) of each text part
//     outside the links written are the same, in order, before and
//     after; the words of the new text that are part of a new URL are
//     passed over;
//   - extents: the text of each link written is, blanks and quote
//     prefixes aside, the whole gateway link the oracle finds at its
//     place, nothing more and nothing less;
//   - truncation: no target written is another than the one the whole
//     gateway link decodes to (a prefix of it is counted apart);
//   - coverage: every whole gateway link that decodes is unwrapped;
//     those that are not are counted with the reason rewrite gives.
package rewritecheck

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/rewrite"
)

// Result sums up a check.
type Result struct {
	Messages, Changed     int
	Gateway               int            // gateway links the oracle found
	Whole                 int            // of those, ending with their end marker (or needing none) and decoding
	Cut                   int            // of those, without their end marker: cut
	Unwrapped             int            // links written whose target is the oracle's
	Skipped               int            // changes reported skipped
	Reasons               map[string]int // skipped changes by reason (shortened)
	Missed                []string       // whole gateway links not unwrapped, with why
	WordFailures          []string       // messages where a word outside the links written changed
	ExtentFailures        []string       // links written whose text is not the oracle's link
	Truncated             []string       // targets written that are a prefix of the true one
	WrongTargets          []string       // targets written that differ otherwise
	Errors                []string       // messages rewrite returned an error for
	WrittenOutsideGateway int            // links written that are no gateway link the oracle found
	Outside               []string       // those links
}

// Failed reports whether any word, extent or target check failed.
func (r *Result) Failed() bool {
	return len(r.WordFailures)+len(r.ExtentFailures)+len(r.Truncated)+len(r.WrongTargets)+len(r.Errors) > 0
}

// String prints the figures and the failures, a line each, and the
// whole gateway links not unwrapped.
func (r *Result) String() string { return r.Report(true) }

// Report is String, listing the whole gateway links not unwrapped only
// with missed.
func (r *Result) Report(missed bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "messages %d, changed %d\n", r.Messages, r.Changed)
	fmt.Fprintf(&b, "gateway links found by the oracle %d: whole %d, cut (no end marker) %d\n", r.Gateway, r.Whole, r.Cut)
	fmt.Fprintf(&b, "unwrapped %d, skipped %d, whole links not unwrapped %d\n", r.Unwrapped, r.Skipped, len(r.Missed))
	fmt.Fprintf(&b, "word failures %d, extent failures %d, truncated targets %d, wrong targets %d, errors %d, written outside gateway links %d\n",
		len(r.WordFailures), len(r.ExtentFailures), len(r.Truncated), len(r.WrongTargets), len(r.Errors), r.WrittenOutsideGateway)
	keys := make([]string, 0, len(r.Reasons))
	for k := range r.Reasons {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "  skipped %4d  %s\n", r.Reasons[k], k)
	}
	lists := [][]string{r.WordFailures, r.ExtentFailures, r.Truncated, r.WrongTargets, r.Errors}
	if missed {
		lists = append(lists, r.Missed, r.Outside)
	}
	for _, l := range lists {
		for _, s := range l {
			fmt.Fprintf(&b, "  %s\n", s)
		}
	}
	return b.String()
}

// Rules returns the rules of the check: one unwrap rule.
func Rules() *rewrite.Rules {
	rs, err := rewrite.Parse(strings.NewReader("[[rule]]\nname = \"gateways\"\naction = \"unwrap\"\n"), "unwrap.toml")
	if err != nil {
		panic(err)
	}
	return rs
}

// Message checks one message's bytes (m.Raw, without an mbox "From "
// line), named where in the failures, and adds to r.
func Message(rs *rewrite.Rules, raw []byte, where string, r *Result) {
	if r.Reasons == nil {
		r.Reasons = map[string]int{}
	}
	r.Messages++
	m := mailbox.ReadMessage(raw, where, &mailbox.Options{MaxMessageSize: -1})
	m.Parse()
	out, chs, err := rs.Message(m, &rewrite.Options{BreakDKIM: true})
	if err != nil {
		r.Errors = append(r.Errors, where+": "+err.Error())
		return
	}
	if !bytes.Equal(out, raw) {
		r.Changed++
	}
	m2 := mailbox.ReadMessage(out, where, &mailbox.Options{MaxMessageSize: -1})
	m2.Parse()
	parts2 := map[string]*mailbox.Part{}
	for _, p := range m2.Parts() {
		parts2[p.Path] = p
	}
	for _, c := range chs {
		if c.Skipped != "" {
			r.Skipped++
			r.Reasons[shortReason(c.Skipped)]++
		}
	}
	for _, p := range m.Parts() {
		if p.Text == nil {
			continue
		}
		var written []rewrite.LinkChange
		skipped := map[int64]string{}
		for _, c := range chs {
			if c.Part != p.Path || strings.HasPrefix(c.Where, "html:") || strings.HasPrefix(c.Where, "header:") {
				continue
			}
			if c.Skipped == "" && !c.Annotated {
				written = append(written, c)
			} else {
				skipped[c.Start] = c.Skipped
			}
		}
		gws := Gateways(p.Text)
		at := map[int]Gateway{}
		for _, g := range gws {
			r.Gateway++
			switch {
			case g.Err == nil:
				r.Whole++
			case !g.Ended:
				r.Cut++
			}
			at[g.Start] = g
		}
		done := map[int]bool{}
		for _, c := range written {
			g, ok := at[int(c.Start)]
			id := fmt.Sprintf("%s part %s line %d: %q", where, p.Path, c.Line, c.Old)
			if !ok {
				r.WrittenOutsideGateway++
				r.Outside = append(r.Outside, id+" -> "+fmt.Sprintf("%q", c.New))
				continue
			}
			done[g.Start] = true
			switch {
			case squeeze(p.Text[c.Start:c.End]) != g.URL:
				r.ExtentFailures = append(r.ExtentFailures, id+": the oracle's link is "+fmt.Sprintf("%q", g.URL))
			case g.Err != nil:
				r.ExtentFailures = append(r.ExtentFailures, id+": written, but the oracle's link does not decode: "+g.Err.Error())
			case c.New == g.Target:
				r.Unwrapped++
			case strings.HasPrefix(g.Target, c.New):
				r.Truncated = append(r.Truncated, id+": wrote "+fmt.Sprintf("%q", c.New)+", true target "+fmt.Sprintf("%q", g.Target))
			default:
				r.WrongTargets = append(r.WrongTargets, id+": wrote "+fmt.Sprintf("%q", c.New)+", true target "+fmt.Sprintf("%q", g.Target))
			}
		}
		for _, g := range gws {
			if g.Err == nil && !done[g.Start] {
				why, ok := skipped[int64(g.Start)]
				if !ok {
					why = "no change reported at its place"
				}
				r.Missed = append(r.Missed, fmt.Sprintf("%s part %s: missed %q: %s", where, p.Path, g.URL, why))
			}
		}
		p2 := parts2[p.Path]
		if p2 == nil || p2.Text == nil {
			r.WordFailures = append(r.WordFailures, where+" part "+p.Path+": the part is gone")
			continue
		}
		if d := sameWords(p.Text, p2.Text, written); d != "" {
			r.WordFailures = append(r.WordFailures, where+" part "+p.Path+": "+d)
		}
	}
}

// shortReason cuts a skip reason to its kind: the rule name and the
// message's text before any detail in parentheses or after a colon
// that names a URL.
func shortReason(s string) string {
	if i := strings.Index(s, " ("); i > 0 {
		s = s[:i]
	}
	if len(s) > 140 {
		s = s[:140] + "..."
	}
	return s
}

// SameWords is the word check of Message on one text: "" when the words
// of t2 are those of t outside the spans of the links written, else
// where they part (see Message).
func SameWords(t, t2 []byte, written []rewrite.LinkChange) string { return sameWords(t, t2, written) }

// sameWords compares the words of t (the old text) outside the spans
// of the links written with the words of t2 (the new text), in order:
// a word of t2 that is not the next word of t may only be a piece of a
// new URL (or of it in <URL:...>). "" when they agree, else where they
// part.
func sameWords(t, t2 []byte, written []rewrite.LinkChange) string {
	old := bytes.Clone(t)
	for _, c := range written {
		for i := c.Start; i < c.End && i < int64(len(old)); i++ {
			old[i] = ' ' // the link's place: out of the comparison
		}
	}
	w1 := wordList(old)
	w2 := wordList(blankNew(t2, written))
	for i := 0; i < len(w1) || i < len(w2); i++ {
		if i >= len(w1) || i >= len(w2) || w1[i] != w2[i] {
			return fmt.Sprintf("word %d: before %q, after %q", i, around(w1, i), around(w2, i))
		}
	}
	return ""
}

func wordList(t []byte) []string {
	var ws []string
	for _, w := range words(t) {
		ws = append(ws, string(t[w.s:w.e]))
	}
	return ws
}

// blankNew returns t2 with the new URL of each link written blanked
// out, found in order: its text from its first bytes on, and between
// its characters only blanks and ">" (the line breaks, quote prefixes
// and indentation between the pieces of a link written over several
// lines), blanked too. A new URL not found so is left: the words then
// differ.
func blankNew(t2 []byte, written []rewrite.LinkChange) []byte {
	t2 = bytes.Clone(t2)
	sorted := slices.Clone(written)
	slices.SortFunc(sorted, func(a, b rewrite.LinkChange) int { return int(a.Start - b.Start) })
	// the text between links stands as it did: each new URL starts
	// where the old one did, shifted by what the links before changed
	// (less a few bytes: delimiters a form change adds or drops)
	at, delta := 0, 0
	for _, c := range sorted {
		at = max(at, int(c.Start)+delta-8)
		var cands []string
		if c.NewForm == "url-wrapper" && c.OldForm != "url-wrapper" {
			cands = append(cands, "<URL:"+c.New+">", "<URL:"+asciiURL(c.New)+">")
		}
		cands = append(cands, c.New, asciiURL(c.New), strings.TrimPrefix(c.New, "http://"), strings.TrimPrefix(c.New, "mailto:"))
		for _, w := range cands {
			if s, e, ok := findLink(t2, at, w); ok {
				for i := s; i < e; i++ {
					t2[i] = ' '
				}
				at, delta = e, e-int(c.End)
				break
			}
		}
	}
	return t2
}

// findLink finds w in t from at on: its first bytes, then the rest with
// blanks and ">" allowed between its characters.
func findLink(t []byte, at int, w string) (int, int, bool) {
	head := w[:min(len(w), 12)]
	for from := at; from < len(t); {
		k := bytes.Index(t[from:], []byte(head))
		if k < 0 {
			return 0, 0, false
		}
		s := from + k
		i, j := s, 0
		for j < len(w) && i < len(t) {
			switch {
			case t[i] == w[j]:
				i++
				j++
			case isBlank(t[i]) || t[i] == '>':
				i++
			default:
				j = -1
			}
			if j < 0 {
				break
			}
		}
		if j == len(w) {
			return s, i, true
		}
		from = s + 1
	}
	return 0, 0, false
}

// asciiURL writes the non-ASCII bytes of u percent-encoded, as a part
// not in UTF-8 gets a new URL.
func asciiURL(u string) string {
	var b strings.Builder
	for i := 0; i < len(u); i++ {
		if c := u[i]; c >= 0x80 {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

func around(ws []string, i int) string {
	return strings.Join(ws[max(0, i-3):min(len(ws), i+4)], " ")
}

type span struct{ s, e int }

// words returns the runs of non-blank bytes of t.
func words(t []byte) []span {
	var out []span
	for i := 0; i < len(t); {
		for i < len(t) && isBlank(t[i]) {
			i++
		}
		s := i
		for i < len(t) && !isBlank(t[i]) {
			i++
		}
		if i > s {
			out = append(out, span{s, i})
		}
	}
	return out
}

func isBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'
}

// squeeze returns the text of a link as the oracle compares it: blanks
// and the quote prefixes after line breaks taken out.
func squeeze(b []byte) string {
	var out []byte
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c == '\n' {
			for i+1 < len(b) && (b[i+1] == '>' || b[i+1] == ' ' || b[i+1] == '\t') {
				i++
			}
			continue
		}
		if isBlank(c) {
			continue
		}
		out = append(out, c)
	}
	return string(out)
}

// Gateway is a security-gateway link the oracle found.
type Gateway struct {
	Start  int    // offset of its first byte in the text
	URL    string // its text, blanks and quote prefixes taken out
	Ended  bool   // its format's end marker ends it (or it has none)
	Target string // what rewrite.Unwrap decodes URL to
	Err    error  // why it does not decode (rewrite.ErrCut when it has no end marker)
}

// gatewayStart finds where gateway links start.
var gatewayStart = regexp.MustCompile(`(?i)https?://(?:[a-z0-9-]+\.)*(?:safelinks\.protection\.outlook\.com|urldefense\.(?:com|us|proofpoint\.com)|protect2?\.fireeye\.com|linkprotect\.cudasvc\.com)/`)

// errNoWrapper: what the oracle read from a gateway's host is no
// wrapper rewrite knows (a bare host, a page of the vendor's site).
var errNoWrapper = errors.New("not a wrapper of a known format")

// maxLines bounds the lines a gateway link is followed over.
const maxLines = 12

// Gateways finds the gateway links of a decoded text by their grammar:
// from the host to the end marker of the format (Safe Links'
// "reserved=0", URL Defense v2's "&e=", v3's "$"), across line breaks,
// the quote prefixes after them and blanks, as long as what is read is
// the characters of a URL; formats without an end marker (FireEye,
// Barracuda, URL Defense v1) to the first blank. A link inside another
// (a wrapper of a wrapper) is part of the outer one.
func Gateways(t []byte) []Gateway {
	var out []Gateway
	end := 0
	for _, loc := range gatewayStart.FindAllIndex(t, -1) {
		if loc[0] < end {
			continue
		}
		g, e := follow(t, loc[0])
		out = append(out, g)
		end = e
	}
	return out
}

// follow reads the gateway link starting at s and returns it and the
// offset after it.
func follow(t []byte, s int) (Gateway, int) {
	host := strings.ToLower(squeeze(t[s:min(len(t), s+160)]))
	host = host[:min(len(host), 80)]
	var marker func(u []byte) bool
	switch {
	case strings.Contains(host, "safelinks"):
		marker = func(u []byte) bool {
			return bytes.HasSuffix(u, []byte("&reserved=0")) || bytes.HasSuffix(u, []byte("&amp;reserved=0"))
		}
	case strings.Contains(host, "/v2/url"):
		marker = func(u []byte) bool { return bytes.HasSuffix(u, []byte("&e=")) }
	case strings.Contains(host, "/v3/"):
		marker = func(u []byte) bool { return bytes.HasSuffix(u, []byte("$")) }
	}
	// in <...> or <URL:...> the ">" ends the link of any format
	angle := s > 0 && t[s-1] == '<' || s >= 5 && strings.EqualFold(string(t[s-5:s]), "<URL:")
	var u []byte
	i, lines := s, 0
	ended := false
	for i < len(t) {
		c := t[i]
		if !isBlank(c) && isURLByte(c) {
			u = append(u, c)
			i++
			if marker != nil && marker(u) && (i == len(t) || !continues(t[i]) || bytes.HasSuffix(u, []byte("$"))) {
				ended = true
				break
			}
			continue
		}
		if angle && c == '>' && marker == nil {
			ended = true
			break
		}
		if marker == nil && !angle || !isBlank(c) {
			break
		}
		// a blank or a line break inside a link with an end marker: go
		// on when URL characters follow (after the quote prefix of the
		// next line), on at most maxLines lines
		j := i
		for j < len(t) && isBlank(t[j]) {
			if t[j] == '\n' {
				lines++
				if j+1 < len(t) && t[j+1] == '\n' {
					j = len(t) // a blank line ends the paragraph
					break
				}
				for j+1 < len(t) && (t[j+1] == '>' || t[j+1] == ' ' || t[j+1] == '\t') {
					j++
				}
			}
			j++
		}
		if j >= len(t) || lines > maxLines || !isURLByte(t[j]) {
			break
		}
		i = j
	}
	if marker == nil && !ended {
		// no end marker: the link ends at the first blank, less the
		// punctuation that ends a sentence or closes a bracket
		for len(u) > 0 && strings.IndexByte(".,;:!?)]'", u[len(u)-1]) >= 0 {
			u = u[:len(u)-1]
		}
	}
	g := Gateway{Start: s, URL: string(u), Ended: ended || marker == nil}
	if marker != nil && !ended {
		g.Err = rewrite.ErrCut
		return g, i
	}
	var layers []rewrite.Wrapper
	g.Target, layers, g.Err = rewrite.Unwrap(g.URL, 0)
	if g.Err == nil && len(layers) == 0 {
		g.Err = errNoWrapper
	}
	return g, i
}

// continues reports whether c, after an end marker, goes on with the
// marker's value ("reserved=01"): then it was no end.
func continues(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("%&=_~-+", c) >= 0
}

// isURLByte: the characters a gateway link is written with (RFC 3986's
// unreserved, reserved and "%"), and non-ASCII bytes.
func isURLByte(c byte) bool {
	return c >= 0x80 || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		strings.IndexByte("-._~:/?#[]@!$&'()*+,;=%", c) >= 0
}
