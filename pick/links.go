package pick

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/record"
	"github.com/linkscan/linkscan/rewrite"
	"github.com/linkscan/linkscan/scan"
)

// Item is one distinct target of the message: the first link that leads
// there and how many do.
type Item struct {
	Target   string            // what is opened: URL as written (or its canonical form, for a link written without a scheme), unwrapped, rules applied
	URL      string            // the link as written (the first of them)
	Wrappers []rewrite.Wrapper // gateway wrappers removed, outermost first
	Rules    []string          // the rules that changed the link, in order
	Problem  string            // why the target may not be the link's own (a wrapper that could not be decoded, a rule's error)
	Context  string            // the line the link stands on, white space folded; for a header field, the message's subject
	Where    string            // "line 12", "part 2 (text/html) line 3", "header List-Post"
	Count    int               // links with this target
}

// Wrapped reports whether what is opened differs from the link as written.
func (it *Item) Wrapped() bool { return it.Target != it.URL }

// Options are what Read needs besides the input.
type Options struct {
	// Rules, if not nil, are applied to each link before its remaining
	// wrappers are removed (the rules of `linkscan rewrite`).
	Rules *rewrite.Rules
	// MaxItems bounds the items kept (default 10000); links past it are
	// counted in Stats.Dropped.
	MaxItems int
	// MaxContext bounds a context line, in characters (default 240).
	MaxContext int
}

// Stats says what Read met besides links.
type Stats struct {
	Messages int
	Subject  string // of the first message
	Links    int    // links found, folded or not
	Dropped  int    // links past Options.MaxItems
	Problems []mailbox.Problem
}

// ErrNoMessage is returned by Read for input with no message in it.
var ErrNoMessage = errors.New("no message in the input")

// Read finds the links of the messages in r (one message as mutt pipes
// it, or an archive: mailbox detects the format) through scan.Message
// with the header fields that carry links, and folds them by target in
// the order they first occur.
func Read(r io.Reader, name string, o Options) ([]Item, Stats, error) {
	if o.MaxItems <= 0 {
		o.MaxItems = 10000
	}
	if o.MaxContext <= 0 {
		o.MaxContext = 240
	}
	var st Stats
	rd, err := mailbox.NewReader(r, name, nil)
	if err != nil {
		return nil, st, err
	}
	defer rd.Close()
	f := folder{o: o, seen: map[string]int{}, st: &st}
	cfg := &scan.Config{Headers: true, Hold: true}
	for {
		m, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return f.items, st, err
		}
		if st.Messages == 0 {
			m.Parse()
			st.Subject = m.Subject
		}
		st.Messages++
		res := scan.Message(m, cfg)
		st.Problems = append(st.Problems, res.Problems...)
		f.message(m, res.Records)
		m.Release()
	}
	if st.Messages == 0 {
		return nil, st, ErrNoMessage
	}
	return f.items, st, nil
}

// folder gathers the items of a run of messages.
type folder struct {
	o     Options
	items []Item
	seen  map[string]int // target -> index in items
	st    *Stats
}

// message adds the records of one message, scanned with its parts held.
func (f *folder) message(m *mailbox.Message, recs []record.Record) {
	texts := map[string]*mailbox.Part{}
	if len(recs) > 0 {
		for _, p := range m.Parts() {
			texts[p.Path] = p
		}
	}
	many := len(texts) > 1
	inOrder(recs)
	for i := range recs {
		r := &recs[i]
		f.st.Links++
		it := f.o.target(r)
		if j, ok := f.seen[it.Target]; ok {
			f.items[j].Count++
			continue
		}
		if len(f.items) == f.o.MaxItems {
			f.st.Dropped++
			continue
		}
		it.Count = 1
		it.Context, it.Where = f.o.context(m, r, texts[r.Part], many)
		f.seen[it.Target] = len(f.items)
		f.items = append(f.items, it)
	}
}

// inOrder sorts the records of each part by where they stand in its
// text: scan gives a part's links in its text first, then those of its
// HTML attributes.
func inOrder(recs []record.Record) {
	for i := 0; i < len(recs); {
		j := i + 1
		for j < len(recs) && recs[j].Part == recs[i].Part && !isHeader(&recs[j]) && !isHeader(&recs[i]) {
			j++
		}
		slices.SortStableFunc(recs[i:j], func(a, b record.Record) int { return cmp.Compare(a.Start, b.Start) })
		i = j
	}
}

// isHeader reports whether r was found in a header field.
func isHeader(r *record.Record) bool { return strings.HasPrefix(r.Where, "header:") }

// target is what opening the record's link opens.
func (o *Options) target(r *record.Record) Item {
	it := Item{URL: r.URL}
	u := r.URL
	if !hasScheme(u) && r.Canonical != "" {
		u = r.Canonical // www.example.org, user@example.org
	}
	if o.Rules != nil {
		l := rewrite.Link{URL: u, Canonical: r.Canonical, Scheme: r.Scheme, Host: r.Host,
			Form: r.Form, Where: r.Where, ContentType: r.ContentType}
		ex, err := o.Rules.Explain(l)
		switch {
		case err != nil:
			it.Problem = err.Error()
		default:
			for _, c := range ex.Changes {
				if c.Skipped == "" && c.Old != c.New {
					it.Rules = append(it.Rules, c.Rule)
				}
			}
			u = ex.URL
		}
	}
	un, layers, err := rewrite.Unwrap(u, 0)
	if err != nil && it.Problem == "" {
		it.Problem = err.Error()
	}
	it.Target, it.Wrappers = un, layers
	return it
}

// hasScheme reports whether s begins with "scheme:".
func hasScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ':':
			return i > 0
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return false
}

// context is the line a link stands on and where that is.
func (o *Options) context(m *mailbox.Message, r *record.Record, p *mailbox.Part, many bool) (line, where string) {
	if name, ok := strings.CutPrefix(r.Where, "header:"); ok {
		where = "header " + name
		if r.Part != "" {
			where = "part " + r.Part + " " + where
		}
		return o.clip("Subject: " + m.Subject), where
	}
	where = fmt.Sprintf("line %d", r.Line)
	if many && p != nil {
		where = fmt.Sprintf("part %s (%s) %s", r.Part, p.ContentType, where)
	}
	if p == nil || r.Start < 0 || int(r.Start) > len(p.Text) {
		return "", where
	}
	t := p.Text
	s, e := int(r.Start), int(r.Start)
	for s > 0 && t[s-1] != '\n' {
		s--
	}
	for e < len(t) && t[e] != '\n' {
		e++
	}
	return o.clip(string(t[s:e])), where
}

// clip folds white space and cuts s to MaxContext characters.
func (o *Options) clip(s string) string {
	s = strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
	if utf8.RuneCountInString(s) <= o.MaxContext {
		return s
	}
	n := 0
	for i := range s {
		if n == o.MaxContext {
			return s[:i] + "…"
		}
		n++
	}
	return s
}
