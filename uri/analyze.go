package uri

import "strings"

// Result is what one reading of a URL tells: its canonical form, scheme,
// host and problems. [Analyze] makes it.
type Result struct {
	// Canonical is the canonical form, as [Canonical] gives it; "" only
	// when the text has no scheme.
	Canonical string
	// Scheme is the lower-cased scheme, the part of Canonical before its
	// first ":"; "" when there is none.
	Scheme string
	// Host is the host in canonical form, as [HostOf] gives it for
	// Canonical: "" for a URL without an authority, except that a
	// mailto: URL gives the domain of its last address.
	Host string
	// Problems lists every problem, in order of offset, as [URL.Problems]
	// of [Parse]; nil when there are none. For a text without a scheme it
	// holds the one [ErrNoScheme] error that Parse returns.
	Problems []*Error
}

// Err returns the first problem, as [Canonical] and [Parse] return it, or
// nil.
func (r Result) Err() error {
	if len(r.Problems) == 0 {
		return nil
	}
	return r.Problems[0]
}

// Valid reports whether the URL has a scheme and no problems.
func (r Result) Valid() bool { return len(r.Problems) == 0 }

// Analyze reads s once and returns its canonical form, scheme, host and
// problems: the answers of [Canonical], [Parse], [HostOf] and the scheme
// of the canonical form, from one parse instead of one each. Like
// Canonical it does not allocate when s is already canonical; the strings
// of the result then share the memory of s.
func Analyze(s string) Result {
	if canonicalHTTP(s) {
		n := len("http://")
		if s[4] == 's' {
			n++
		}
		return Result{Canonical: s, Scheme: s[:n-3], Host: s[n : n+strings.IndexByte(s[n:], '/')]}
	}
	var u URL
	if err := u.parse(s); err != nil {
		return Result{Problems: []*Error{err.(*Error)}}
	}
	c := u.canonicalOf(s)
	return Result{Canonical: c, Scheme: c[:len(u.Scheme)], Host: HostOf(c), Problems: u.Problems}
}

// Analyze returns the [Result] of u, which Parse made, without parsing
// again: for a caller that needs the parsed URL as well (its [URL.View],
// say) and so calls Parse rather than the function [Analyze]. Its answers
// are those of Analyze(u.Raw).
func (u *URL) Analyze() Result {
	c := u.canonicalOf(u.Raw)
	return Result{Canonical: c, Scheme: c[:len(u.Scheme)], Host: HostOf(c), Problems: u.Problems}
}

// canonicalOf returns the canonical form of u, parsed from s, without
// allocating when it is s.
func (u *URL) canonicalOf(s string) string {
	var buf [256]byte
	b := u.appendCanonical(buf[:0])
	if string(b) == s {
		return s
	}
	return string(b)
}
