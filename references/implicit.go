package references

import (
	"bytes"
	"regexp"
	"strings"
	"sync"

	"github.com/linkscan/linkscan/mailbox"
)

// Ref is an implicit reference: a message-id in a header or an
// attribution line, turned into a link.
type Ref struct {
	URL          string // mid:ID or news:ID
	Where        string // header:In-Reply-To, header:References, attribution
	Part         string // for attributions, the part's path
	Line, Column int    // in "Name: value" for headers, in the part's text for attributions
	Start, End   int64  // in the part's text (attributions)
	RawOffset    int64
}

// The expressions are compiled when first used, not when the program
// starts: a command that never resolves (linkscan filter runs once per
// message) does not pay for them.
var (
	idInBrackets = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<([^<>\s]+)>`) })
	// an id without brackets: a word with an "@" inside
	bareID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:^|\s)([^<>\s@]+@[^<>\s@]+)`) })
	// "In article <id@host>, someone writes:" (the B-news and later
	// attribution line), possibly quoted.
	attribution = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^[> \t]*In article <([^<>\s]+@[^<>\s]+)>`)
	})
)

// Implicit returns the implicit references of a message: the ids of its
// In-Reply-To and References headers (as news: links in news articles, mid:
// links in mail) and of Usenet attribution lines in its text parts (as
// news: links).
func Implicit(m *mailbox.Message, parts []*mailbox.Part) []Ref {
	var refs []Ref
	scheme := "mid:"
	if m.Newsgroups != "" {
		scheme = "news:"
	}
	for _, f := range m.Header {
		name := strings.ToLower(f.Name)
		if name != "in-reply-to" && name != "references" {
			continue
		}
		line := f.Name + ": " + f.Value
		locs := idInBrackets().FindAllStringSubmatchIndex(line, -1)
		if len(locs) == 0 {
			// lenient: ids written without brackets, separated by spaces
			locs = bareID().FindAllStringSubmatchIndex(line[len(f.Name)+1:], -1)
			for _, l := range locs {
				for i := range l {
					l[i] += len(f.Name) + 1
				}
			}
		}
		for _, loc := range locs {
			id := line[loc[2]:loc[3]]
			refs = append(refs, Ref{URL: scheme + EscapeID(id), Where: "header:" + f.Name,
				Line: 1, Column: len([]rune(line[:loc[2]])) + 1, RawOffset: f.Offset})
		}
	}
	for _, p := range parts {
		if p.Text == nil || !bytes.Contains(p.Text, []byte("In article <")) {
			continue
		}
		for _, loc := range attribution().FindAllSubmatchIndex(p.Text, -1) {
			s, e := loc[2], loc[3]
			line := bytes.Count(p.Text[:s], []byte("\n")) + 1
			ls := bytes.LastIndexByte(p.Text[:s], '\n') + 1
			refs = append(refs, Ref{URL: "news:" + EscapeID(string(p.Text[s:e])), Where: "attribution", Part: p.Path,
				Line: line, Column: len(bytes.Runes(p.Text[ls:s])) + 1, Start: int64(s), End: int64(e), RawOffset: p.RawOffset(s)})
		}
	}
	return refs
}

// EscapeID writes a message-id or content-id for a mid:, cid: or news:
// URL: "%", "/" (which would start a content-id, RFC 2392 §2), "?", "#"
// and the characters not allowed in URLs are percent-encoded.
func EscapeID(id string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("%/?#\"<>\\^`{|}[]", c) >= 0 {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
