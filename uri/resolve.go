package uri

import "strings"

// Rules selects how a relative reference is resolved.
type Rules int

const (
	// RFC3986 resolves as RFC 3986 §5.2 does (strict: a reference with a
	// scheme is absolute even when it is the base's scheme).
	RFC3986 Rules = iota
	// RFC1630 resolves as the 1994 draft of RFC 1630 ("Partial (relative)
	// form") does: a reference that starts with N slashes replaces
	// everything after the first run of exactly N consecutive slashes of
	// the base; any other reference replaces the last path segment, and
	// "xxx/../" and "/." are then removed where they are whole segments.
	//
	// Where the draft is silent this package decides: a base with no run
	// of exactly N slashes is kept whole; a reference of only "?query" or
	// "#fragment" replaces those parts of the base (as RFC 1808 does);
	// a leading "/.." that has no segment to cancel is kept.
	RFC1630
)

// components is a reference split as RFC 3986 §5.2 needs it.
type components struct {
	scheme, authority, path, query, fragment       string
	hasScheme, hasAuthority, hasQuery, hasFragment bool
}

// split3986 splits a URI reference as in RFC 3986 Appendix B.
func split3986(s string) components {
	var c components
	if i := strings.IndexByte(s, '#'); i >= 0 {
		c.hasFragment, c.fragment, s = true, s[i+1:], s[:i]
	}
	if i := strings.IndexByte(s, '?'); i >= 0 {
		c.hasQuery, c.query, s = true, s[i+1:], s[:i]
	}
	if i := strings.IndexByte(s, ':'); i > 0 && !strings.ContainsAny(s[:i], "/") && isScheme3986(s[:i]) {
		c.hasScheme, c.scheme, s = true, s[:i], s[i+1:]
	}
	if strings.HasPrefix(s, "//") {
		s = s[2:]
		i := strings.IndexByte(s, '/')
		if i < 0 {
			i = len(s)
		}
		c.hasAuthority, c.authority, s = true, s[:i], s[i:]
	}
	c.path = s
	return c
}

func isScheme3986(s string) bool {
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !is(s[i], clsScheme) {
			return false
		}
	}
	return true
}

func (c components) String() string {
	var b strings.Builder
	if c.hasScheme {
		b.WriteString(c.scheme)
		b.WriteByte(':')
	}
	if c.hasAuthority {
		b.WriteString("//")
		b.WriteString(c.authority)
	}
	b.WriteString(c.path)
	if c.hasQuery {
		b.WriteByte('?')
		b.WriteString(c.query)
	}
	if c.hasFragment {
		b.WriteByte('#')
		b.WriteString(c.fragment)
	}
	return b.String()
}

// Resolve resolves the reference ref against the absolute URL base under
// the given rules and returns the resulting URL, not canonicalized.
func Resolve(base, ref string, rules Rules) (string, error) {
	if splitScheme(base) == 0 {
		return "", &Error{Op: "resolve", URL: base, Err: ErrNoScheme}
	}
	if rules == RFC1630 {
		return resolve1630(base, ref), nil
	}
	return resolve3986(base, ref), nil
}

// resolve3986 is the algorithm of RFC 3986 §5.2.2 with §5.2.3 and §5.3.
func resolve3986(base, ref string) string {
	b, r := split3986(base), split3986(ref)
	var t components
	switch {
	case r.hasScheme:
		t = r
		t.path = removeDotSegments(r.path)
	case r.hasAuthority:
		t = r
		t.path = removeDotSegments(r.path)
	case r.path == "":
		t.path = b.path
		t.hasQuery, t.query = b.hasQuery, b.query
		if r.hasQuery {
			t.hasQuery, t.query = true, r.query
		}
	default:
		if strings.HasPrefix(r.path, "/") {
			t.path = removeDotSegments(r.path)
		} else {
			t.path = removeDotSegments(merge(b, r.path))
		}
		t.hasQuery, t.query = r.hasQuery, r.query
	}
	if !r.hasScheme {
		if !r.hasAuthority {
			t.hasAuthority, t.authority = b.hasAuthority, b.authority
		}
		t.hasScheme, t.scheme = true, b.scheme
	}
	t.hasFragment, t.fragment = r.hasFragment, r.fragment
	return t.String()
}

// merge is RFC 3986 §5.2.3.
func merge(b components, ref string) string {
	if b.hasAuthority && b.path == "" {
		return "/" + ref
	}
	i := strings.LastIndexByte(b.path, '/')
	return b.path[:i+1] + ref
}

func resolve1630(base, ref string) string {
	// An absolute reference: "the latter must have a colon and that colon
	// must occur before any slash characters".
	if i := strings.IndexAny(ref, ":/"); i > 0 && ref[i] == ':' && splitScheme(ref) == i {
		return ref
	}
	if i := strings.IndexByte(base, '#'); i >= 0 {
		base = base[:i]
	}
	switch {
	case ref == "":
		return base
	case ref[0] == '#':
		return base + ref
	}
	if i := strings.IndexByte(base, '?'); i >= 0 {
		base = base[:i]
	}
	var joined string
	if n := len(ref) - len(strings.TrimLeft(ref, "/")); n > 0 {
		i := firstSlashRun(base, n)
		if i < 0 {
			i = len(base)
		}
		joined = base[:i] + ref
	} else if ref[0] == '?' {
		return base + ref
	} else {
		joined = base[:strings.LastIndexByte(base, '/')+1] + ref
	}
	// Dot removal applies to the path: what follows "scheme://host".
	start := splitScheme(joined) + 1
	if strings.HasPrefix(joined[start:], "//") {
		if j := strings.IndexByte(joined[start+2:], '/'); j >= 0 {
			start += 2 + j
		} else {
			return joined
		}
	}
	end := strings.IndexAny(joined, "?#")
	if end < start {
		end = len(joined)
	}
	return joined[:start] + removeDots1630(joined[start:end]) + joined[end:]
}

// firstSlashRun returns the offset of the first run of exactly n
// consecutive slashes in s, or -1.
func firstSlashRun(s string, n int) int {
	for i := 0; i < len(s); {
		if s[i] != '/' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == '/' {
			j++
		}
		if j-i == n {
			return i
		}
		i = j
	}
	return -1
}

// removeDots1630 removes, recursively, "xxx/../" (xxx a whole segment
// other than "..") and "/." (a whole segment), keeping a trailing slash.
func removeDots1630(p string) string {
	if !strings.Contains(p, ".") {
		return p
	}
	segs := strings.Split(p, "/")
	out := segs[:0]
	for i, s := range segs {
		if s == "." && i > 0 {
			if i == len(segs)-1 {
				out = append(out, "")
			}
			continue
		}
		out = append(out, s)
	}
	// One pass with a stack is the same as removing "xxx/../" again and
	// again: each ".." cancels the nearest segment still standing.
	stack := segs[:0:0]
	for i, s := range out {
		if s == ".." && i+1 < len(out) && len(stack) > 0 {
			if top := stack[len(stack)-1]; top != "" && top != ".." {
				stack = stack[:len(stack)-1]
				continue
			}
		}
		stack = append(stack, s)
	}
	segs = stack
	return strings.Join(segs, "/")
}
