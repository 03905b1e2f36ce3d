// Package uri parses, checks, canonicalizes, compares and resolves the URLs
// found in mail and news archives.
//
// The ground rules are those of the 1994 drafts that became RFC 1630
// (Universal Resource Identifiers in WWW) and RFC 1738 (Uniform Resource
// Locators): their character classes, the "%" escape, the per-scheme
// syntax of ftp, http, gopher, mailto, news, nntp, telnet, wais, file and
// prospero, and the mid: and cid: schemes (later RFC 2392). The generic
// syntax, canonical form and reference resolution of RFC 3986 are layered
// on top of them. Where the two generations disagree this package says
// which one it follows.
//
// Notable divergences and choices:
//
//  1. Scheme names follow RFC 1738 §2.1 (letters, digits, "+", "-", "."
//     in any order, case-insensitive), so a scheme may begin with a digit;
//     RFC 3986 §3.1 requires a letter first. [Resolve] with [RFC3986] uses
//     the RFC 3986 rule when it decides whether a reference is relative.
//  2. A "%" not followed by two hexadecimal digits is a problem (RFC 1630
//     "Example 3"; RFC 3986 §2.1). The URL stays inspectable and its
//     canonical form encodes the bare "%" as "%25".
//  3. A reserved character is never converted between its literal and
//     escaped forms (RFC 1630 "Example 2": "%2F" is not "/"). Only escapes
//     of unreserved characters are decoded (RFC 3986 §6.2.2.2). RFC 1738
//     lists "~" as unsafe; RFC 3986 made it unreserved, and we follow
//     RFC 3986 so that "%7E" and "~" are the same.
//  4. Non-ASCII characters are not allowed in a URI (RFC 1738 §2.2,
//     RFC 3986 §2). In a host name they are accepted as an IDN and
//     canonicalized to its A-label (RFC 5891, through
//     golang.org/x/net/idna's Lookup profile less its rule against "--" in
//     the third and fourth places of a label); anywhere else they are
//     reported as a problem and percent-encoded as UTF-8 by the canonical
//     form, as RFC 3987 §3.1 maps an IRI to a URI.
//  5. Dot segments are removed (RFC 3986 §5.2.4) only for schemes whose
//     paths are hierarchical: http, https, ftp, file and unknown schemes
//     written with "//". Gopher selectors are opaque strings (RFC 1738
//     §3.4, RFC 1630 "Note: Gopher") and are left alone.
//  6. The "#" character is accepted once, as the fragment delimiter. RFC
//     1738 calls "#" unsafe everywhere; RFC 3986 permits it nowhere else,
//     and a second "#" is reported as a problem.
//  7. The message-ids of mid: and news: and the content-ids of cid: keep
//     their case (RFC 2392 §2, RFC 5536 §3.1.3); only the domain of a
//     mailto: address is lower-cased (RFC 5321 §2.4).
//  8. Hosts. For the schemes of RFC 1738 §3.1 (http, https, ftp, gopher,
//     nntp, news, telnet, wais, prospero, file) the host must be a DNS
//     name (labels of 1 to 63 letters, digits and "-", not beginning or
//     ending with "-", at most 253 bytes, a trailing "." allowed), a
//     dotted-decimal IPv4 address, or an RFC 3986 IP literal; a name whose
//     last label is a number must be an IPv4 address. RFC 1738's
//     hostname rule has no "_"; RFC 3986 allows it, DNS permits it and
//     real hosts carry it, so "_" is accepted in ASCII labels. Other
//     schemes get RFC 3986's reg-name syntax, and the DNS label rules only
//     for names made of DNS characters. An "@" in userinfo must be written
//     "%40" (RFC 3986 §3.2.1). The domains of mailto: addresses are held
//     to the rules of http hosts, and may be IDNs. See [ValidHost] and
//     the Err* kinds of host problem, which all wrap [ErrBadHost].
//
// Parse never fails on a string that has a scheme: problems are recorded in
// [URL.Problems] with their byte offsets and the first one is also
// returned as an [*Error].
package uri

//go:generate go run gen_tables.go

import (
	"errors"
	"fmt"
	"strings"
)

type byteClass uint8

func is(c byte, cls byteClass) bool { return classTable[c]&cls != 0 }

// Error records a problem found in a URL and where it was found.
type Error struct {
	Op     string // the operation: "parse", "resolve", ...
	URL    string // the URL as given
	Offset int    // byte offset of the problem in URL
	Err    error  // one of the Err* values below, possibly wrapped
}

func (e *Error) Error() string {
	return fmt.Sprintf("uri: %s %q: offset %d: %v", e.Op, e.URL, e.Offset, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Column returns the 1-based column, in characters, at which the problem
// starts.
func (e *Error) Column() int {
	if e.Offset > len(e.URL) {
		return len([]rune(e.URL)) + 1
	}
	return len([]rune(e.URL[:e.Offset])) + 1
}

// The problems a URL can have. Tests use errors.Is on an [*Error].
var (
	ErrNoScheme     = errors.New("missing scheme")
	ErrBadEscape    = errors.New(`"%" not followed by two hexadecimal digits`)
	ErrBadChar      = errors.New("character not allowed in a URL")
	ErrNonASCII     = errors.New("non-ASCII character (IRI); canonical form percent-encodes it")
	ErrEmptyHost    = errors.New("empty host")
	ErrBadHost      = errors.New("invalid host name")
	ErrBadPort      = errors.New("invalid port")
	ErrNoAt         = errors.New("message-id without @host")
	ErrEmpty        = errors.New("nothing after the scheme")
	ErrSecondHash   = errors.New(`second "#"`)
	ErrBadNNTPPath  = errors.New("nntp: path is not /group[/article-number]")
	ErrBadGroupName = errors.New("invalid newsgroup name")
)

// URL is a parsed URL. All component strings are as written (escapes kept,
// case kept) except Scheme, which is lower-cased.
//
// A URL written with "//" after the scheme has an authority (User,
// Password, Host, Port) and a Path; one without has an Opaque part
// instead. Query and Fragment can follow either.
type URL struct {
	Raw    string // the text given to Parse
	Scheme string // lower-cased scheme name

	HasAuthority bool
	HasUser      bool // userinfo present ("user@")
	HasPassword  bool // "user:password@"
	User         string
	Password     string
	Host         string // as written; IPv6 literals keep their brackets
	HasPort      bool   // a ":" followed the host, even if no digits did
	Port         string

	Path   string // hierarchical path, starting with "/" or empty
	Opaque string // everything between "scheme:" and "?"/"#" when there is no authority

	HasQuery    bool
	RawQuery    string
	HasFragment bool
	Fragment    string

	// Problems lists everything wrong with the URL, in order of offset.
	Problems []*Error

	// offsets of components in Raw, for problem reports
	hostOff, portOff, pathOff, queryOff, fragOff int

	alabel, alabelOf string // the A-label form of the IDN host alabelOf, when the check made it

	info  schemeInfo // what the package knows of the scheme
	known bool       // the scheme is one of schemes
}

// Valid reports whether the URL has no problems.
func (u *URL) Valid() bool { return len(u.Problems) == 0 }

// String returns the URL as given to Parse.
func (u *URL) String() string { return u.Raw }

// schemeInfo is what the package knows of a scheme.
type schemeInfo struct {
	port         string // default port, "" if none
	needHost     bool   // the host must not be empty
	dotSegments  bool   // dot segments are removed from the path
	opaqueToHash bool   // no query: "?" belongs to the opaque part
	emptyPathDir bool   // an empty path is canonically "/"
	inetHost     bool   // the host is an Internet host name or address (RFC 1738 §3.1)
}

var schemes = map[string]schemeInfo{
	"http":     {port: "80", needHost: true, dotSegments: true, emptyPathDir: true, inetHost: true},
	"https":    {port: "443", needHost: true, dotSegments: true, emptyPathDir: true, inetHost: true},
	"ftp":      {port: "21", needHost: true, dotSegments: true, inetHost: true},
	"gopher":   {port: "70", needHost: true, inetHost: true},
	"nntp":     {port: "119", needHost: true, inetHost: true},
	"telnet":   {port: "23", needHost: true, inetHost: true},
	"wais":     {port: "210", needHost: true, inetHost: true},
	"prospero": {port: "1525", needHost: true, inetHost: true},
	"file":     {dotSegments: true, inetHost: true},
	"news":     {port: "119", opaqueToHash: true, inetHost: true},
	"mid":      {opaqueToHash: true},
	"cid":      {opaqueToHash: true},
	"mailto":   {},
	"urn":      {},
}

// splitScheme returns the length of the scheme of s per RFC 1738 §2.1,
// or 0 if s does not start with "scheme:".
func splitScheme(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ':' {
			return i
		}
		if !is(c, clsScheme) {
			return 0
		}
	}
	return 0
}

// Parse parses s, which must begin with a scheme. The returned URL is nil
// only if s has no scheme; otherwise it is always returned, and the error
// is the first of its Problems, if any.
func Parse(s string) (*URL, error) {
	u := new(URL)
	if err := u.parse(s); err != nil && u.Scheme == "" {
		return nil, err
	}
	if len(u.Problems) > 0 {
		return u, u.Problems[0]
	}
	return u, nil
}

func (u *URL) problem(off int, err error) {
	u.Problems = append(u.Problems, &Error{Op: "parse", URL: u.Raw, Offset: off, Err: err})
}

// parse fills u from s. It is written so that a URL kept on the stack does
// not escape, which keeps [Canonical] free of allocations.
func (u *URL) parse(s string) error {
	*u = URL{Raw: s}
	n := splitScheme(s)
	if n == 0 {
		return &Error{Op: "parse", URL: s, Offset: 0, Err: ErrNoScheme}
	}
	u.Scheme = lower(s[:n])
	u.info, u.known = schemes[u.Scheme]
	info := u.info
	rest := s[n+1:]
	off := n + 1

	// Fragment: the first "#" (RFC 3986 §3.5).
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		u.HasFragment = true
		u.Fragment = rest[i+1:]
		u.fragOff = off + i + 1
		rest = rest[:i]
	}
	if strings.HasPrefix(rest, "//") {
		u.HasAuthority = true
		rest = rest[2:]
		off += 2
		end := 0 // the authority ends at "/" or "?"
		for end < len(rest) && rest[end] != '/' && rest[end] != '?' {
			end++
		}
		u.parseAuthority(rest[:end], off)
		rest = rest[end:]
		off += end
		u.Path = u.splitQuery(rest, off)
	} else {
		if !info.opaqueToHash {
			rest = u.splitQuery(rest, off)
		}
		u.Opaque = rest
	}
	u.pathOff = off
	u.checkChars()
	u.checkScheme(info)
	sortProblems(u.Problems)
	return nil
}

// splitQuery takes the query off rest, which starts at offset off, and
// returns what comes before it.
func (u *URL) splitQuery(rest string, off int) string {
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		u.HasQuery = true
		u.RawQuery = rest[i+1:]
		u.queryOff = off + i + 1
		return rest[:i]
	}
	return rest
}

func (u *URL) parseAuthority(a string, off int) {
	if i := strings.LastIndexByte(a, '@'); i >= 0 {
		u.HasUser = true
		ui := a[:i]
		if j := strings.IndexByte(ui, '@'); j >= 0 {
			u.problem(off+j, ErrUserinfoAt)
		}
		if j := strings.IndexByte(ui, ':'); j >= 0 {
			u.HasPassword = true
			u.User, u.Password = ui[:j], ui[j+1:]
		} else {
			u.User = ui
		}
		a = a[i+1:]
		off += i + 1
	}
	u.hostOff = off
	if strings.HasPrefix(a, "[") {
		i := strings.IndexByte(a, ']')
		if i < 0 {
			u.Host = a
			u.problem(off, ErrBadIPLiteral)
			return
		}
		end := i + 1
		if end < len(a) && a[end] != ':' {
			// text after the literal: kept in the host, so that the
			// canonical form loses nothing
			u.problem(off+end, ErrBadIPLiteral)
			if j := strings.IndexByte(a[end:], ':'); j >= 0 {
				end += j
			} else {
				end = len(a)
			}
		}
		u.Host = a[:end]
		a = a[end:]
		off += end
	} else if i := strings.IndexByte(a, ':'); i >= 0 {
		u.Host = a[:i]
		a = a[i:]
		off += i
	} else {
		u.Host = a
		return
	}
	if len(a) > 0 && a[0] == ':' {
		u.HasPort = true
		u.Port = a[1:]
		u.portOff = off + 1
		if !validPort(u.Port) {
			u.problem(u.portOff, ErrBadPort)
		}
	}
}

func validPort(p string) bool {
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return false
		}
	}
	p = strings.TrimLeft(p, "0")
	return len(p) < 5 || len(p) == 5 && p <= "65535"
}

// checkChars reports bad escapes and characters outside RFC 3986's
// repertoire anywhere after the scheme.
func (u *URL) checkChars() {
	s := u.Raw
	start := len(u.Scheme) + 1
	hostStart, hostEnd := -1, -1
	if u.HasAuthority {
		hostStart, hostEnd = u.hostOff, u.hostOff+len(u.Host)
	}
	domStart, addrEnd := -1, -1 // the domain and end of the mailto: address last looked at
	for i := start; i < len(s); i++ {
		c := s[i]
		if is(c, clsPlain) {
			continue // the common case first
		}
		switch {
		case c == '%':
			if i+2 >= len(s) || !is(s[i+1], clsHex) || !is(s[i+2], clsHex) {
				u.problem(i, ErrBadEscape)
			}
		case c >= 0x80:
			if i >= hostStart && i < hostEnd {
				continue // IDN, checked by checkHost
			}
			if i >= addrEnd {
				domStart, addrEnd = u.mailtoDomain(i)
			}
			if i >= domStart && i < addrEnd {
				continue // IDN, checked by checkMailtoDomains
			}
			u.problem(i, ErrNonASCII)
			for i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] < 0xC0 {
				i++ // one problem per character, not per byte
			}
		case c == '#' && u.HasFragment && i >= u.fragOff:
			u.problem(i, ErrSecondHash)
		case c == '[' || c == ']':
			if i < hostStart || i >= hostEnd {
				u.problem(i, ErrBadChar)
			}
		case !is(c, clsUnreserved|clsGenDelim|clsSubDelim):
			u.problem(i, ErrBadChar)
		}
	}
}

func (u *URL) checkScheme(info schemeInfo) {
	if u.HasAuthority {
		if u.Host == "" && info.needHost {
			u.problem(u.hostOff, ErrEmptyHost)
		} else if u.Host != "" {
			u.checkHost(info.inetHost)
		}
	} else if u.Opaque == "" && !u.HasQuery {
		u.problem(len(u.Scheme)+1, ErrEmpty)
	} else if info.needHost {
		// http:foo, ftp:bar: a relative form that names no host.
		u.problem(len(u.Scheme)+1, ErrEmptyHost)
	}
	switch u.Scheme {
	case "news":
		if !u.HasAuthority {
			u.checkNews(u.Opaque, u.pathOff)
		} else if len(u.Path) > 1 {
			u.checkNews(u.Path[1:], u.pathOff+1)
		}
	case "mailto":
		if !u.HasAuthority {
			u.checkMailtoDomains()
		}
	case "mid":
		id := u.Opaque
		if i := strings.IndexByte(id, '/'); i >= 0 {
			id = id[:i]
		}
		if id != "" && !strings.Contains(id, "@") && !strings.Contains(id, "%40") {
			u.problem(u.pathOff, ErrNoAt)
		}
	case "nntp":
		if u.HasAuthority {
			p := strings.TrimPrefix(u.Path, "/")
			group, num, _ := strings.Cut(p, "/")
			if group == "" || !validGroup(group) || (num != "" && !allDigits(num)) {
				u.problem(u.pathOff, ErrBadNNTPPath)
			}
		}
	}
}

// checkMailtoDomains holds the domain of each address of a mailto: URL
// to the host rules of the RFC 1738 schemes (RFC 6068 §2: the domain of an
// addr-spec; a domain literal in brackets is not allowed unescaped in a
// URL, and checkChars reports its brackets).
func (u *URL) checkMailtoDomains() {
	off := u.pathOff
	// The problems so far are checkChars', in order of offset: one walk
	// through them finds those in each domain.
	seen := u.Problems
	for addr := range strings.SplitSeq(u.Opaque, ",") {
		if at := strings.LastIndexByte(addr, '@'); at >= 0 {
			d, doff := addr[at+1:], off+at+1
			for len(seen) > 0 && seen[0].Offset < doff {
				seen = seen[1:]
			}
			switch {
			case d == "":
				u.problem(doff, ErrEmptyHost)
			case d[0] == '[' || len(seen) > 0 && seen[0].Offset < doff+len(d):
			default:
				if o, err := checkHost(d, true); err != nil {
					u.problem(doff+o, err)
				}
			}
		}
		off += len(addr) + 1
	}
}

// mailtoDomain returns where the domain of the mailto: address around
// offset i starts and where the address ends (an empty range after i if
// it has no domain, or i is in no address), so that the answer holds up to
// the end. Asked again only past the end, it reads each address at most
// twice.
func (u *URL) mailtoDomain(i int) (start, end int) {
	lo := u.pathOff
	if u.Scheme != "mailto" || u.HasAuthority || i < lo || i >= lo+len(u.Opaque) {
		return len(u.Raw), len(u.Raw)
	}
	o := u.Opaque
	j := i - lo
	a, e := strings.LastIndexByte(o[:j], ',')+1, len(o)
	if k := strings.IndexByte(o[j:], ','); k >= 0 {
		e = j + k
	}
	at := strings.LastIndexByte(o[a:e], '@')
	if at < 0 {
		return lo + e, lo + e
	}
	return lo + a + at + 1, lo + e
}

// problemIn reports whether a problem has been found in the n bytes at
// offset off.
func (u *URL) problemIn(off, n int) bool {
	for _, p := range u.Problems {
		if p.Offset >= off && p.Offset < off+n {
			return true
		}
	}
	return false
}

// checkNews checks the part of a news: URL after "news:" (or after the
// server's "/"): "*", a group name, or a message-id with "@" (RFC 1738
// §3.6, RFC 5538 §2.2).
func (u *URL) checkNews(s string, off int) {
	switch {
	case s == "" || s == "*":
	case strings.Contains(s, "@") || strings.Contains(s, "%40"):
	case validGroup(s) || validWildmat(s):
	default:
		u.problem(off, ErrNoAt)
	}
}

// validGroup reports whether s is a newsgroup name (RFC 5536 §3.1.4:
// dot-separated components of letters, digits, "+", "-" and "_").
func validGroup(s string) bool {
	if s == "" {
		return false
	}
	for comp := range strings.SplitSeq(s, ".") {
		if comp == "" {
			return false
		}
		for i := 0; i < len(comp); i++ {
			c := comp[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// validWildmat accepts the group patterns RFC 5538 §2.2 allows in news:
// URLs, such as "comp.lang.*".
func validWildmat(s string) bool {
	if !strings.ContainsAny(s, "*?") {
		return false
	}
	r := strings.NewReplacer("*", "x", "?", "x")
	return validGroup(r.Replace(s))
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// checkHost reports the first problem of the host, unless checkChars has
// already reported one inside it.
func (u *URL) checkHost(internet bool) {
	if u.problemIn(u.hostOff, len(u.Host)) {
		return
	}
	off, a, err := checkHostIDN(u.Host, internet)
	if err != nil {
		u.problem(u.hostOff+off, err)
	}
	u.alabel, u.alabelOf = a, u.Host
}

func sortProblems(p []*Error) {
	// insertion sort: the list is short and nearly sorted
	for i := 1; i < len(p); i++ {
		for j := i; j > 0 && p[j].Offset < p[j-1].Offset; j-- {
			p[j], p[j-1] = p[j-1], p[j]
		}
	}
}

// lower returns s in ASCII lower case, without allocating when it already is.
func lower(s string) string {
	for i := 0; i < len(s); i++ {
		if is(s[i], clsUpper) {
			return strings.ToLower(s)
		}
	}
	return s
}
