package rewrite

import "strings"

// DefaultTrackingParams is the list strip-params removes unless a rule
// says otherwise: names of query parameters that only track a click (who
// sent it, which campaign, which ad), never select what the page shows.
// A name ending in "*" is a prefix. Names compare without regard to
// ASCII case, after percent-decoding.
var DefaultTrackingParams = []string{
	// Google Analytics campaign tags and the Matomo ones
	"utm_*", "pk_*", "mtm_*", "_ga", "_gl",
	// click identifiers of ad networks
	"gclid", "gclsrc", "dclid", "gbraid", "wbraid", "msclkid", "fbclid", "yclid",
	"twclid", "ttclid", "li_fat_id", "igshid", "srsltid", "epik", "rb_clickid", "wickedid",
	// mailing-list and marketing-mail tools
	"mc_eid", "mc_cid", "_hsenc", "_hsmi", "__hstc", "__hssc", "__hsfp", "hsctatracking",
	"mkt_tok", "vero_id", "vero_conv", "ml_subscriber", "ml_subscriber_hash", "_kx",
	"oly_anon_id", "oly_enc_id", "s_cid", "_openstat",
}

// ParamSet is a compiled list of parameter names: exact names and
// prefixes ("utm_*"), less the names kept.
type ParamSet struct {
	exact    map[string]bool
	prefixes []string
	keep     *ParamSet
}

// NewParamSet compiles the names to strip and the names to keep even so
// (both may hold prefixes ending in "*"). A pattern that is only "*" is
// ignored: it would strip every parameter.
func NewParamSet(strip, keep []string) *ParamSet {
	p := newSet(strip)
	if len(keep) > 0 {
		p.keep = newSet(keep)
	}
	return p
}

func newSet(names []string) *ParamSet {
	p := &ParamSet{exact: make(map[string]bool, len(names))}
	for _, n := range names {
		n = strings.ToLower(n)
		if pre, ok := strings.CutSuffix(n, "*"); ok {
			if pre != "" {
				p.prefixes = append(p.prefixes, pre)
			}
			continue
		}
		p.exact[n] = true
	}
	return p
}

// Has reports whether the raw parameter name (as written in a query) is
// in the set.
func (p *ParamSet) Has(raw string) bool {
	name := raw
	if strings.IndexByte(name, '%') >= 0 {
		name, _ = pctDecode(name, false)
	}
	if !p.has(name) {
		return false
	}
	return p.keep == nil || !p.keep.has(name)
}

func (p *ParamSet) has(name string) bool {
	if p.exact[name] {
		return true
	}
	// most names are lower-case already; only fold when needed
	if hasUpper(name) {
		name = strings.ToLower(name)
		if p.exact[name] {
			return true
		}
	}
	for _, pre := range p.prefixes {
		if strings.HasPrefix(name, pre) {
			return true
		}
	}
	return false
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// queryBounds returns the offsets of the "?" that starts the query of s
// and of the end of the query (the "#" of the fragment, or len(s)); q is
// -1 when s has no query. Only URLs with an authority ("scheme://") have
// one here: the "?" of mid:, news: or mailto: belongs to something else.
func queryBounds(s string) (q, end int) {
	c := strings.Index(s, "://")
	if c <= 0 || !isScheme(s[:c]) {
		return -1, 0
	}
	q = strings.IndexByte(s, '?')
	h := strings.IndexByte(s, '#')
	if q < 0 || h >= 0 && h < q {
		return -1, 0
	}
	end = len(s)
	if h >= 0 {
		end = h
	}
	return q, end
}

// nextSeparator finds the next parameter separator of a raw query:
// "&amp;" (HTML-escaped text), "&" or ";". It returns its offset and
// length, or (len(q), 0).
func nextSeparator(q string) (int, int) {
	i := strings.IndexAny(q, "&;")
	if i < 0 {
		return len(q), 0
	}
	if q[i] == '&' && strings.HasPrefix(q[i:], "&amp;") {
		return i, len("&amp;")
	}
	return i, 1
}

// StripParams removes from the query of s every parameter whose name is
// in set, by editing the query text as written: the parameters kept keep
// their order, escapes and the separator that preceded them ("&", ";" or
// "&amp;"); empty parameters next to removed ones go too; the fragment
// stays. When nothing is left of the query, the "?" goes. It returns s
// itself, byte for byte, when nothing is removed, and the number of
// parameters removed.
func StripParams(s string, set *ParamSet) (string, int) {
	q, end := queryBounds(s)
	if q < 0 {
		return s, 0
	}
	query := s[q+1 : end]
	// first pass: anything to remove at all?
	n := 0
	for rest := query; ; {
		i, w := nextSeparator(rest)
		seg := rest[:i]
		if seg != "" && set.Has(paramName(seg)) {
			n++
		}
		if w == 0 {
			break
		}
		rest = rest[i+w:]
	}
	if n == 0 {
		return s, 0
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:q+1])
	kept := 0
	sep := ""
	for rest := query; ; {
		i, w := nextSeparator(rest)
		seg := rest[:i]
		if seg != "" && !set.Has(paramName(seg)) {
			if kept > 0 {
				b.WriteString(sep)
			}
			b.WriteString(seg)
			kept++
		}
		if w == 0 {
			break
		}
		sep = rest[i : i+w]
		rest = rest[i+w:]
	}
	out := b.String()
	if kept == 0 {
		out = out[:q] // the "?" goes
	}
	return out + s[end:], n
}

// paramName is the raw name of a query parameter: up to its "=".
func paramName(seg string) string {
	if i := strings.IndexByte(seg, '='); i >= 0 {
		return seg[:i]
	}
	return seg
}

// isScheme: a letter, then letters, digits, "+", "-" or ".".
func isScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return s != ""
}
