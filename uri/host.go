package uri

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// The kinds of host problem. Each wraps [ErrBadHost], so that
// errors.Is(err, ErrBadHost) holds for every one of them, and prints as
// "invalid host name: " and its own text.
var (
	ErrHostChar     = hostError("character not allowed in a host name")
	ErrEmptyLabel   = hostError("empty label")
	ErrLabelHyphen  = hostError("label begins or ends with a hyphen")
	ErrLabelTooLong = hostError("label longer than 63 bytes")
	ErrHostTooLong  = hostError("name longer than 253 bytes")
	ErrBadIPv4      = hostError("numeric name that is not a dotted-decimal IPv4 address")
	ErrBadIPLiteral = hostError("invalid IP literal")
	ErrBadIDN       = hostError("internationalized name that IDNA rejects")
)

// ErrUserinfoAt is an "@" in the userinfo of an authority, as in
// http://u:p@a@b.example/: RFC 3986 §3.2.1 lets userinfo hold no "@", and
// it must be written "%40". The host is what follows the last "@", as
// browsers and net/url read it.
var ErrUserinfoAt = errors.New(`"@" in userinfo not written %40`)

func hostError(msg string) error { return fmt.Errorf("%w: %s", ErrBadHost, msg) }

// hostProfile converts internationalized host names to A-labels: the
// Lookup profile of RFC 5891 §5 (UTS #46 mapping, joiner and Bidi rules,
// STD3 characters) less its hyphen rule, which rejects labels with "--" in
// their third and fourth places; such ASCII labels are in common use
// ("r3---sn-abc.googlevideo.com") and browsers accept them. The profile
// maps exactly as idna.Lookup does, so that every host Lookup accepts has
// the same A-label.
var hostProfile = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.Transitional(false), idna.CheckHyphens(false))

// ValidHost reports whether host is a valid host of an http, ftp or other
// URL of the RFC 1738 §3.1 schemes, as it stands between "//" (and any
// userinfo) and the port: a DNS host name, a dotted-decimal IPv4 address,
// a bracketed IPv6 or IPvFuture literal, or an internationalized name that
// IDNA accepts, each possibly written with percent escapes. It returns nil
// or an [*Error] with Op "host", URL the host, the offset of the problem
// in it, and an Err that wraps [ErrBadHost] (or is [ErrEmptyHost] or
// [ErrBadEscape]). The rules are those Parse applies to such URLs; see
// docs/uri.md.
func ValidHost(host string) error {
	if host == "" {
		return &Error{Op: "host", URL: host, Err: ErrEmptyHost}
	}
	if off, err := checkHost(host, true); err != nil {
		return &Error{Op: "host", URL: host, Offset: off, Err: err}
	}
	return nil
}

// checkHost returns the offset in the non-empty host h and the kind of its
// first problem, or (0, nil). An Internet host must be a DNS name or an
// IPv4 address; otherwise h is an RFC 3986 reg-name, held to the DNS label
// rules only when it looks like a DNS name (letters, digits, "-", "_",
// "." or non-ASCII characters only).
func checkHost(h string, internet bool) (int, error) {
	off, _, err := checkHostIDN(h, internet)
	return off, err
}

// checkHostIDN is checkHost that also returns the A-label form of an
// internationalized name when IDNA converts it: the host of the
// canonical form, which idnaHost would compute again.
func checkHostIDN(h string, internet bool) (off int, alabel string, err error) {
	if h[0] == '[' {
		off, err = checkIPLiteral(h)
		return off, "", err
	}
	for i := 0; i < len(h); i++ {
		if h[i] >= utf8.RuneSelf || h[i] == '%' {
			return checkEncodedHost(h, internet)
		}
	}
	off, err = checkASCIIHost(h, internet, false)
	return off, "", err
}

// isLDH reports whether c may stand in a label of a host name: letters,
// digits, "-" (RFC 952, RFC 1123 §2.1), and "_", which RFC 3986 allows,
// DNS itself permits (RFC 2181 §11), and real host names carry.
func isLDH(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

// checkASCIIHost checks a host of ASCII characters without escapes. If
// decoded, h came from escapes, and a reg-name may then hold any byte.
func checkASCIIHost(h string, internet, decoded bool) (int, error) {
	if !internet {
		dns := true
		for i := 0; i < len(h); i++ {
			c := h[i]
			if isLDH(c) || c == '.' {
				continue
			}
			if !decoded && !is(c, clsUnreserved|clsSubDelim) {
				return i, ErrHostChar
			}
			dns = false
		}
		if !dns {
			return 0, nil // a reg-name that is no DNS name: RFC 3986 syntax only
		}
	}
	return checkDNS(h, internet)
}

// checkDNS checks the ASCII host name h by the DNS rules: labels of 1 to
// 63 letters, digits, "-" or "_", not beginning or ending with "-", at most
// 253 bytes in all (RFC 1034 §3.1, RFC 1123 §2.1), with a single trailing
// dot allowed (the root). An Internet host whose last label is a number
// (digits, or "0x" and hex digits) must be a dotted-decimal IPv4 address
// (RFC 1123 §2.1, RFC 3986 §3.2.2). A-labels ("xn--") must be valid
// (RFC 5891 §5.4).
func checkDNS(h string, internet bool) (int, error) {
	name := h
	if len(name) > 1 && name[len(name)-1] == '.' {
		name = name[:len(name)-1]
	}
	if internet && numericLabel(name[strings.LastIndexByte(name, '.')+1:]) {
		if IsIPv4(h) {
			return 0, nil
		}
		return 0, ErrBadIPv4
	}
	start, ace := 0, false
	for i := 0; i <= len(name); i++ {
		if i < len(name) && name[i] != '.' {
			c := name[i]
			if !isLDH(c) {
				return i, ErrHostChar
			}
			if c == '-' && i == start {
				return i, ErrLabelHyphen
			}
			continue
		}
		switch {
		case i == start:
			return i, ErrEmptyLabel
		case name[i-1] == '-':
			return i - 1, ErrLabelHyphen
		case i-start > 63:
			return start + 63, ErrLabelTooLong
		}
		if i-start >= 4 && isACEPrefix(name[start:]) {
			ace = true
		}
		start = i + 1
	}
	if len(name) > 253 {
		return 253, ErrHostTooLong
	}
	if ace {
		return checkALabels(name)
	}
	return 0, nil
}

// isACEPrefix reports whether s starts with "xn--" in either case.
func isACEPrefix(s string) bool {
	return len(s) >= 4 && s[0]|0x20 == 'x' && s[1]|0x20 == 'n' && s[2] == '-' && s[3] == '-'
}

// checkALabels checks that every "xn--" label of the ASCII name is an
// A-label: Punycode that decodes to a valid U-label whose A-label it is.
func checkALabels(name string) (int, error) {
	start := 0
	for label := range strings.SplitSeq(name, ".") {
		if isACEPrefix(label) {
			u, err := hostProfile.ToUnicode(label)
			if err == nil {
				var a string
				a, err = hostProfile.ToASCII(u)
				if err == nil && !strings.EqualFold(a, label) {
					err = fmt.Errorf("%q is not the A-label of %q", label, u)
				}
			}
			if err != nil {
				return start, fmt.Errorf("%w (%v)", ErrBadIDN, err)
			}
			// the hyphen rule of the U-label (RFC 5891 §4.2.3.1), which
			// the A-label hides
			if strings.HasPrefix(u, "-") || strings.HasSuffix(u, "-") {
				return start, ErrLabelHyphen
			}
		}
		start += len(label) + 1
	}
	return 0, nil
}

// numericLabel reports whether a label is a number as the IPv4 parsers of
// browsers and C libraries read one: decimal digits, or "0x" and hex
// digits.
func numericLabel(l string) bool {
	if l == "" {
		return false
	}
	if len(l) >= 2 && l[0] == '0' && l[1]|0x20 == 'x' {
		l = l[2:]
		for i := 0; i < len(l); i++ {
			if !is(l[i], clsHex) {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(l); i++ {
		if l[i] < '0' || l[i] > '9' {
			return false
		}
	}
	return true
}

// maxEncodedHost bounds the hosts given to IDNA, whose Punycode step
// takes time that grows with the square of a label's length. A name of
// at most 253 bytes in A-label form has at most 253 characters, each at
// most 4 bytes of UTF-8 or 12 bytes of escapes; longer hosts are no names
// (bar characters IDNA drops, of which a real name has none) and keep
// their written form in the canonical form.
const maxEncodedHost = 253 * 12

// checkEncodedHost checks a host with escapes or non-ASCII characters: the
// escapes are decoded, and a name with non-ASCII characters must be UTF-8
// that IDNA converts to a valid A-label name.
func checkEncodedHost(h string, internet bool) (int, string, error) {
	d, ok := unescape(h)
	if !ok {
		return badEscape(h), "", ErrBadEscape
	}
	for i := 0; i < len(d); i++ {
		if d[i] >= utf8.RuneSelf {
			return checkIDN(h, d, internet)
		}
	}
	off, err := checkASCIIHost(d, internet, true)
	return rawOffset(h, off), "", err
}

// checkIDN checks the decoded internationalized name d, written h, and
// returns its A-label form if IDNA converts it.
func checkIDN(h, d string, internet bool) (int, string, error) {
	if len(h) > maxEncodedHost {
		return 0, "", ErrHostTooLong
	}
	first := strings.IndexFunc(h, func(r rune) bool { return r >= utf8.RuneSelf || r == '%' })
	if !utf8.ValidString(d) {
		return first, "", fmt.Errorf("%w (not UTF-8)", ErrBadIDN)
	}
	a, err := hostProfile.ToASCII(d)
	if err != nil {
		return first, "", fmt.Errorf("%w (%v)", ErrBadIDN, err)
	}
	if _, err := checkDNS(a, internet); err != nil {
		return 0, a, err // offsets in the A-label name do not map back
	}
	return 0, a, nil
}

// badEscape returns the offset of the first "%" in s not followed by two
// hex digits, or -1.
func badEscape(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && (i+2 >= len(s) || !is(s[i+1], clsHex) || !is(s[i+2], clsHex)) {
			return i
		}
	}
	return -1
}

// rawOffset maps an offset in the decoded form of h to one in h.
func rawOffset(h string, off int) int {
	i := 0
	for n := 0; n < off && i < len(h); n++ {
		if h[i] == '%' {
			i += 3
		} else {
			i++
		}
	}
	return i
}

// idnaHost decodes the escapes of h and converts it to an A-label host
// name. It fails for hosts that are not valid IDNs, and for those whose
// escapes decode to reserved characters, which are no host name.
func idnaHost(h string) (string, bool) {
	if len(h) > maxEncodedHost {
		return "", false
	}
	d, ok := unescape(h)
	if !ok || !utf8.ValidString(d) {
		return "", false
	}
	a, err := hostProfile.ToASCII(d)
	if err != nil {
		return "", false
	}
	return a, true
}

// checkIPLiteral checks "[" IPv6address "]" or "[" IPvFuture "]"
// (RFC 3986 §3.2.2). Zone identifiers (RFC 6874) are not accepted.
func checkIPLiteral(h string) (int, error) {
	if len(h) < 2 || h[len(h)-1] != ']' {
		return 0, ErrBadIPLiteral
	}
	inner := h[1 : len(h)-1]
	if inner != "" && inner[0]|0x20 == 'v' {
		if validIPvFuture(inner) {
			return 0, nil
		}
		return 0, ErrBadIPLiteral
	}
	if validIPv6(inner) {
		return 0, nil
	}
	for i := 0; i < len(inner); i++ {
		if c := inner[i]; !is(c, clsHex) && c != ':' && c != '.' {
			return 1 + i, ErrBadIPLiteral
		}
	}
	return 0, ErrBadIPLiteral
}

// validIPvFuture: "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" ).
func validIPvFuture(s string) bool {
	i := 1
	for i < len(s) && is(s[i], clsHex) {
		i++
	}
	if i == 1 || i+1 >= len(s) || s[i] != '.' {
		return false
	}
	for i++; i < len(s); i++ {
		if !is(s[i], clsUnreserved|clsSubDelim) && s[i] != ':' {
			return false
		}
	}
	return true
}

// IsIPv4 reports whether s is an RFC 3986 IPv4address: four decimal
// octets (0 to 255) without leading zeros, as net/netip reads them. It
// takes bytes as well as strings, so that a scanner checks text without
// copying it.
func IsIPv4[T ~string | ~[]byte](s T) bool {
	for k := 0; k < 4; k++ {
		i := 0
		for i < len(s) && i < 4 && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		if i == 0 || i > 3 || i > 1 && s[0] == '0' || i == 3 && string(s[:3]) > "255" {
			return false
		}
		s = s[i:]
		if k < 3 {
			if len(s) == 0 || s[0] != '.' {
				return false
			}
			s = s[1:]
		}
	}
	return len(s) == 0
}

// validIPv6 reports whether s is an RFC 3986 IPv6address: eight groups of
// one to four hex digits, or fewer with one "::" standing for at least
// one group, the last two groups possibly written as an IPv4 address.
func validIPv6(s string) bool {
	groups, double := 0, false
	i := 0
	if strings.HasPrefix(s, "::") {
		double, i = true, 2
	} else if strings.HasPrefix(s, ":") {
		return false
	}
	for i < len(s) {
		j := i
		for j < len(s) && j-i < 5 && is(s[j], clsHex) {
			j++
		}
		if j < len(s) && s[j] == '.' {
			if !IsIPv4(s[i:]) {
				return false
			}
			groups += 2
			break
		}
		if j == i || j-i > 4 {
			return false
		}
		groups++
		if j == len(s) {
			break
		}
		if s[j] != ':' {
			return false
		}
		j++
		if j < len(s) && s[j] == ':' {
			if double {
				return false
			}
			double = true
			j++
		} else if j == len(s) {
			return false // a trailing single ":"
		}
		i = j
	}
	if double {
		return groups <= 7
	}
	return groups == 8
}
