package uri

// canonicalHTTP reports whether s is an http or https URL that is its own
// canonical form and has no problems, in the plainest shape most links in
// mail have: a lower-case scheme and host name, no user, port, percent
// escape, dot segment or fragment, a path that starts with "/", and only
// characters that the canonical form writes as they are. Canonical
// answers such a URL without parsing it; anything else takes the full way.
// FuzzCanonicalHTTP holds the two to the same answer.
func canonicalHTTP(s string) bool {
	var i int
	switch {
	case len(s) > 8 && s[:8] == "https://":
		i = 8
	case len(s) > 7 && s[:7] == "http://":
		i = 7
	default:
		return false
	}
	// the host: labels of lower-case letters, digits and inner hyphens,
	// none an A-label ("xn--", which the full parse decodes to check)
	hostStart, labelStart := i, i
	for ; i < len(s) && s[i] != '/'; i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z':
		case '0' <= c && c <= '9':
		case c == '-':
			if i == labelStart || i == labelStart+3 && s[i-1] == '-' && s[labelStart] == 'x' && s[labelStart+1] == 'n' {
				return false
			}
		case c == '.':
			if i == labelStart || s[i-1] == '-' || i-labelStart > 63 {
				return false
			}
			labelStart = i + 1
		default:
			return false // upper case, port, user, IPv6, query right after the host ...
		}
	}
	if i == len(s) || i == labelStart || s[i-1] == '-' || i-labelStart > 63 || i-hostStart > 253 || numericLabel(s[labelStart:i]) {
		return false // no path, an empty or bad last label, an IPv4 address or a number
	}
	// the rest: path and query
	seg := i // start of the current path segment, after its "/"
	query := false
	for ; i < len(s); i++ {
		c := s[i]
		if !plainHTTPByte[c] {
			return false
		}
		if query {
			continue
		}
		switch c {
		case '/':
			if isDotSegment(s[seg:i]) {
				return false
			}
			seg = i + 1
		case '?':
			if isDotSegment(s[seg:i]) {
				return false
			}
			query = true
		}
	}
	return query || !isDotSegment(s[seg:])
}

func isDotSegment(seg string) bool { return seg == "." || seg == ".." }

// plainHTTPByte marks the bytes an http URL's path and query keep as they
// are in the canonical form: unreserved characters, "/", "?", and the
// sub-delimiters, ":" and "@" (RFC 3986 §2.2, §3.3, §3.4); "%" (whose
// escapes the canonical form may rewrite) and "#" are not among them.
var plainHTTPByte = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range "-._~/?!$&'()*+,;=:@" {
		t[c] = true
	}
	return t
}()
