package rewrite

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/linkscan/linkscan/uri"
)

// Link is what the rules see of one link. Only URL is required; the
// other fields are filled in from it when empty (Canonical, Scheme,
// Host) or match nothing when empty (Form, Where, ContentType).
type Link struct {
	URL         string // as written, without delimiters (extract.Link.URL)
	Canonical   string // canonical form (uri.Canonical)
	Scheme      string // lower-case scheme of Canonical
	Host        string // lower-case host of Canonical ("" for mid:, news:, ...)
	Form        string // url-wrapper, angle, quoted, bare, abbrev, email (extract.Form), html, implicit
	Where       string // body, preamble, epilogue, header:NAME, html:ATTR (report.Record.Where)
	ContentType string // media type of the part; text/html makes location "html" match its body
	// Date is the date of the link's message (mailbox.Message.Date),
	// zero when unknown: archive rules look for the archived copy
	// nearest it (RewriteWith).
	Date time.Time `json:",omitzero"`
}

// Change is one rule's effect on a link. A rule that matched but could
// not do its work (a Mimecast wrapper, a malformed one, an archive rule
// on a link that is not dead or has no archived copy) gives a
// Change with Skipped set and New equal to Old, or, for a wrapper nesting
// one that cannot be decoded, New as far as it was unwrapped.
type Change struct {
	Rule    string    // the rule's name, or "rule at line N"
	Line    int       // line of the rule in the rules file
	Action  string    // map, replace, unwrap, ...
	Old     string    // URL before the rule
	New     string    // URL after the rule
	Form    string    // form to write the link in, for wrap and drop-wrapper
	Layers  []Wrapper // wrappers removed, for unwrap
	Removed int       // parameters removed, for strip-params
	Note    string    // a remark (a content-id dropped by mid-to-web; the status and capture time of archive)
	Skipped string    // why the rule did not do all its work
}

// Result is the outcome of the rules for one link.
type Result struct {
	URL     string   // the new URL; the link's URL when nothing changed
	Form    string   // the form to write it in; the link's Form unless wrap or drop-wrapper changed it
	Changes []Change // in the order the rules applied
	KeptBy  string   // the keep rule that stopped processing, if any
}

// Changed reports whether the link is to be written differently.
func (r *Result) Changed(l Link) bool { return r.URL != l.URL || r.Form != l.Form }

// Apply runs the rules over one link and returns its new URL (the link's
// URL when nothing changed) and what each rule did. See Rewrite.
func (r *Rules) Apply(l Link) (string, []Change, error) {
	res, err := r.Rewrite(l)
	return res.URL, res.Changes, err
}

// MaxURLLength bounds a URL a rule writes: a rule whose new URL would be
// longer is skipped, saying so, and the URL stays as it was. With the
// bounded passes of settle it bounds what a rule that grows the URL each
// time it applies (pattern "^(.*)$", with "$1$1") can make of one link.
const MaxURLLength = 8 << 10

// ErrEmptyURL is returned for a Link without a URL.
var ErrEmptyURL = errors.New("rewrite: empty URL")

// Rewrite runs the rules over one link. Every rule whose match holds
// applies, in the order of the file, to the URL as the rules before it
// left it (its canonical form, scheme and host recomputed after each
// change); a keep rule stops. Each rule applies at most once per link, so
// a rule set always ends. A link written without a scheme (abbrev,
// email) is worked on in its canonical form. Archive rules have no
// history to look links up in here: they skip, saying so (RewriteWith
// gives them one).
func (r *Rules) Rewrite(l Link) (Result, error) {
	return r.rewrite(l, nil)
}

// rewrite is Rewrite with what archive rules need (env nil: nothing).
// A failed lookup of an archive rule stops the rules: the link as it was
// and the *ArchiveError.
func (r *Rules) rewrite(l Link, env *lookupEnv) (Result, error) {
	return r.rewriteTraced(l, env, nil)
}

// rewriteTraced is rewrite that appends the label of each rule that
// matches to matched, when it is not nil (Explain).
func (r *Rules) rewriteTraced(l Link, env *lookupEnv, matched *[]string) (Result, error) {
	res := Result{URL: l.URL, Form: l.Form}
	if l.URL == "" {
		return res, ErrEmptyURL
	}
	st := state{url: l.URL, canonical: l.Canonical, scheme: l.Scheme, host: l.Host,
		form: l.Form, where: l.Where, ctype: l.ContentType, env: env}
	if st.canonical == "" {
		st.canonical = canon(st.url)
	}
	if st.scheme == "" || st.host == "" {
		sc, h := schemeHost(st.canonical)
		if st.scheme == "" {
			st.scheme = sc
		}
		if st.host == "" {
			st.host = h
		}
	}
	if !hasScheme(st.url) && hasScheme(st.canonical) {
		st.url = st.canonical
	}
	changed := false
	for pos := 0; ; {
		i := r.idx.next(r.rules, &st, pos)
		if i < 0 {
			break
		}
		pos = i + 1
		ru := r.rules[i]
		if matched != nil {
			*matched = append(*matched, ru.label())
		}
		if ru.act == actKeep {
			res.KeptBy = ru.label()
			break
		}
		ch, did, err := ru.apply(&st)
		if err != nil {
			return Result{URL: l.URL, Form: l.Form, Changes: res.Changes}, err
		}
		if did || ch.Skipped != "" {
			res.Changes = append(res.Changes, ch)
		}
		changed = changed || did
	}
	if changed {
		res.URL, res.Form = st.url, st.form
	}
	return res, nil
}

// state is a link as the rules so far left it.
type state struct {
	url, canonical, scheme, host, form string
	where, ctype                       string
	env                                *lookupEnv // for archive rules; nil: none
}

func (st *state) setURL(u string) {
	st.url = u
	st.canonical = canon(u)
	st.scheme, st.host = schemeHost(st.canonical)
}

func canon(u string) string {
	if c, _ := uri.Canonical(u); c != "" {
		return c
	}
	return u
}

// schemeHost splits the lower-case scheme and host out of a canonical
// URL, without allocating.
func schemeHost(c string) (scheme, host string) {
	i := strings.IndexByte(c, ':')
	if i <= 0 || !isScheme(c[:i]) {
		return "", ""
	}
	scheme = c[:i]
	if s, e, ok := hostSpan(c); ok {
		host = c[s:e]
	}
	return scheme, host
}

// hostSpan finds the host of a "scheme://" URL as written: after any
// user info, before any port.
func hostSpan(u string) (start, end int, ok bool) {
	i := strings.Index(u, "://")
	if i <= 0 || !isScheme(u[:i]) {
		return 0, 0, false
	}
	start = i + 3
	end = len(u)
	if j := strings.IndexAny(u[start:], "/?#"); j >= 0 {
		end = start + j
	}
	if j := strings.LastIndexByte(u[start:end], '@'); j >= 0 {
		start += j + 1
	}
	if j := strings.LastIndexByte(u[start:end], ':'); j >= 0 && strings.IndexByte(u[start+j:end], ']') < 0 {
		end = start + j
	}
	return start, end, true
}

func (r *rule) label() string {
	if n := r.name(); n != "" {
		return n
	}
	return "rule at line " + strconv.Itoa(int(r.line))
}

// hostMatch reports whether host is pattern, or for "*.domain" the
// domain itself or one of its subdomains: a domain that moves takes its
// bare name along, as --host of scan reads the pattern.
func hostMatch(pattern, host string) bool {
	if d, ok := strings.CutPrefix(pattern, "*."); ok {
		return host == d || hostSuffix(host, d)
	}
	return pattern == host
}

func (r *rule) matches(st *state) bool {
	if r.from() != "" && !strings.HasPrefix(st.canonical, r.from()) {
		return false
	}
	if r.fromHost() != "" && !hostMatch(r.fromHost(), st.host) {
		return false
	}
	if r.matchSpec == nil {
		return true
	}
	if len(r.schemes) > 0 && !contains(r.schemes, st.scheme) {
		return false
	}
	if len(r.hosts) > 0 && !anyOf(r.hosts, st.host, hostMatch) {
		return false
	}
	if len(r.prefixes) > 0 && !anyOf(r.prefixes, st.canonical, func(p, c string) bool { return strings.HasPrefix(c, p) }) {
		return false
	}
	if len(r.forms) > 0 && !contains(r.forms, st.form) {
		return false
	}
	if len(r.locations) > 0 && !anyOf(r.locations, "", func(l, _ string) bool { return st.at(l) }) {
		return false
	}
	if r.re != nil && !r.re.MatchString(st.canonical) {
		return false
	}
	return true
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func anyOf(l []string, s string, f func(p, s string) bool) bool {
	for _, x := range l {
		if f(x, s) {
			return true
		}
	}
	return false
}

// at reports whether the link stands at location l (lower-case).
func (st *state) at(l string) bool {
	switch l {
	case "html":
		return hasPrefixFold(st.where, "html:") || st.where == "body" && isHTML(st.ctype)
	case "header":
		return hasPrefixFold(st.where, "header:")
	case "text":
		return st.where == "body" && !isHTML(st.ctype)
	}
	return strings.EqualFold(st.where, l)
}

func isHTML(ct string) bool {
	ct, _, _ = strings.Cut(ct, ";")
	return strings.EqualFold(strings.TrimSpace(ct), "text/html")
}

// apply does the rule's action on st; did reports a change of the URL or
// of the form. Only archive fails (its lookup).
func (r *rule) apply(st *state) (ch Change, did bool, err error) {
	ch = Change{Rule: r.label(), Line: int(r.line), Action: r.act.String(), Old: st.url, New: st.url}
	nu := st.url
	switch r.act {
	case actMap:
		if r.from() != "" {
			if strings.HasPrefix(st.url, r.from()) {
				nu = r.to() + st.url[len(r.from()):]
			} else {
				nu = r.to() + st.canonical[len(r.from()):]
			}
		} else {
			nu = r.mapHost(st)
		}
	case actReplace:
		nu = r.pattern.ReplaceAllString(st.url, r.with)
		if nu != st.url && !goodURL(nu) {
			ch.Skipped = "replace gave " + strconv.Quote(nu) + ", which is not a URL"
			return ch, false, nil
		}
	case actUnwrap:
		u, layers, notes, err := unwrap(st.url, r.maxDepth)
		ch.Layers, ch.Note = layers, strings.Join(notes, "; ")
		if err != nil {
			ch.Skipped = err.Error()
		}
		nu = u
	case actStrip:
		for _, h := range r.exceptHosts {
			if hostMatch(h, st.host) {
				return ch, false, nil
			}
		}
		nu, ch.Removed = StripParams(st.url, r.params)
	case actCanonicalize:
		nu = canon(st.url)
	case actWrap:
		switch st.form {
		case "url-wrapper":
			return ch, false, nil
		case "html", "implicit":
			ch.Skipped = "a link of form " + st.form + " cannot be written as <URL:...>"
			return ch, false, nil
		}
		if strings.HasPrefix(st.where, "html:") || strings.HasPrefix(st.where, "header:") {
			ch.Skipped = "a link in " + st.where + " cannot be written as <URL:...>"
			return ch, false, nil
		}
		st.form, ch.Form = "url-wrapper", "url-wrapper"
		return ch, true, nil
	case actDropWrapper:
		if st.form != "url-wrapper" && st.form != "angle" {
			return ch, false, nil
		}
		st.form, ch.Form = "bare", "bare"
		return ch, true, nil
	case actMidToWeb:
		id, cid, ok := messageID(st.canonical)
		if !ok {
			return ch, false, nil
		}
		if cid != "" {
			ch.Note = "content-id " + strconv.Quote(cid) + " dropped"
		}
		nu = strings.ReplaceAll(r.template, "{msgid}", escapeID(id))
	case actArchive:
		did, err := r.archive(st, &ch)
		return ch, did, err
	}
	if nu == st.url {
		return ch, false, nil
	}
	if len(nu) > MaxURLLength {
		ch.Skipped = "the new URL would be " + strconv.Itoa(len(nu)) + " bytes, over the limit of " + strconv.Itoa(MaxURLLength)
		return ch, false, nil
	}
	st.setURL(nu)
	ch.New = nu
	return ch, true, nil
}

// goodURL: a scheme, and no white space or control characters.
func goodURL(s string) bool {
	return hasScheme(s) && clean(s) == s && !strings.ContainsRune(s, ' ')
}

// mapHost writes the rule's to-host in place of the host, in the URL as
// written when its host matches there, else in the canonical form.
func (r *rule) mapHost(st *state) string {
	for _, u := range [2]string{st.url, st.canonical} {
		s, e, ok := hostSpan(u)
		if !ok {
			continue
		}
		h := strings.ToLower(u[s:e])
		if !hostMatch(r.fromHost(), h) {
			continue
		}
		nh := r.toHost()
		if to, ok := strings.CutPrefix(r.toHost(), "*."); ok {
			d := r.fromHost()[len("*."):]
			nh = h[:len(h)-len(d)] + to
		}
		return u[:s] + nh + u[e:]
	}
	return st.url
}

// messageID returns the message-id (and content-id) of a mid: URL or of
// a news: URL naming an article.
func messageID(canonical string) (id, cid string, ok bool) {
	u, _ := uri.Parse(canonical)
	if u == nil {
		return "", "", false
	}
	switch v := u.View().(type) {
	case uri.MID:
		return v.MessageID, v.ContentID, v.MessageID != ""
	case uri.News:
		return v.MessageID, "", v.MessageID != ""
	}
	return "", "", false
}

// escapeID percent-encodes a message-id for a URL template: everything
// but the unreserved characters of RFC 3986 and "@".
func escapeID(id string) string {
	const hexdig = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~' || c == '@' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexdig[c>>4])
		b.WriteByte(hexdig[c&15])
	}
	return b.String()
}
