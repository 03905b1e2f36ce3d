package uri

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// Canonical returns the canonical form of the URL s, which is what
// [Equal] compares. The rules, in order of the URL:
//
//   - the scheme and the host are lower-cased (RFC 3986 §6.2.2.1); an IDN
//     host becomes its A-label (RFC 5891) through idna's Lookup profile;
//   - escapes of unreserved characters are decoded, every other escape
//     gets upper-case hex digits (RFC 3986 §6.2.2.1–2), and reserved
//     characters are never converted between literal and escaped forms
//     (RFC 1630 "Example 2");
//   - unsafe bytes written raw (controls, space, " < > \ ^ ` { | } and
//     non-ASCII) are percent-encoded (RFC 1738 §2.2; RFC 3987 §3.1);
//   - the scheme's default port and an empty port are removed
//     (RFC 3986 §6.2.3), and an empty http or https path becomes "/";
//   - dot segments are removed from hierarchical paths (RFC 3986 §5.2.4);
//   - ";type=" codes of ftp URLs are lower-cased (RFC 1738 §3.2.2);
//   - only the domains of mailto: addresses are lower-cased; the
//     message-ids of mid: and news: keep their case.
//
// Canonical is idempotent. It returns a canonical form even for an
// invalid URL, together with the URL's first problem (a "%" that starts no
// escape is then written "%25", so that the canonical form reads back as
// it was meant); it fails with an
// empty string only when s has no scheme. It does not allocate when s is
// already canonical.
func Canonical(s string) (string, error) {
	if canonicalHTTP(s) {
		return s, nil
	}
	return canonicalFull(s)
}

// canonicalFull is Canonical by the full parse.
func canonicalFull(s string) (string, error) {
	var u URL
	if err := u.parse(s); err != nil {
		return "", err
	}
	c := u.canonicalOf(s)
	if len(u.Problems) > 0 {
		return c, u.Problems[0]
	}
	return c, nil
}

// Canonical returns the canonical form of u; see the function [Canonical].
func (u *URL) Canonical() string {
	b := u.appendCanonical(make([]byte, 0, len(u.Raw)+8))
	if string(b) == u.Raw {
		return u.Raw
	}
	return string(b)
}

// Equal reports whether a and b have the same canonical form. It returns
// an error, and false, if either is not a valid URL.
func Equal(a, b string) (bool, error) {
	ca, err := Canonical(a)
	if err != nil {
		return false, err
	}
	cb, err := Canonical(b)
	if err != nil {
		return false, err
	}
	return ca == cb, nil
}

func (u *URL) appendCanonical(b []byte) []byte {
	info, known := u.info, u.known
	if !known { // a URL not made by Parse, or an unknown scheme
		info, known = schemes[u.Scheme]
	}
	b = append(b, u.Scheme...)
	b = append(b, ':')
	if u.HasAuthority {
		b = append(b, "//"...)
		if u.HasUser {
			b = appendEscapes(b, u.User, false)
			if u.HasPassword {
				b = append(b, ':')
				b = appendEscapes(b, u.Password, false)
			}
			b = append(b, '@')
		}
		if u.alabel != "" && u.alabelOf == u.Host {
			b = append(b, u.alabel...) // what appendHost would make again
		} else {
			b = appendHost(b, u.Host)
		}
		if u.HasPort && u.Port != "" {
			if validPort(u.Port) {
				p := strings.TrimLeft(u.Port, "0")
				if p == "" {
					p = "0"
				}
				if p != info.port {
					b = append(b, ':')
					b = append(b, p...)
				}
			} else {
				b = append(b, ':')
				b = appendEscapes(b, u.Port, false)
			}
		}
		start := len(b)
		b = appendEscapes(b, u.Path, false)
		if (info.dotSegments || !known) && hasDotSegment(b[start:]) {
			p := removeDotSegments(string(b[start:]))
			b = append(b[:start], p...)
		}
		if len(b) == start && info.emptyPathDir {
			b = append(b, '/')
		}
		if u.Scheme == "ftp" {
			lowerFTPType(b[start:])
		}
	} else if u.Scheme == "mailto" {
		b = appendMailto(b, u.Opaque)
	} else {
		b = appendEscapes(b, u.Opaque, false)
	}
	if u.HasQuery {
		b = append(b, '?')
		b = appendEscapes(b, u.RawQuery, false)
	}
	if u.HasFragment {
		b = append(b, '#')
		b = appendEscapes(b, u.Fragment, false)
	}
	return b
}

const upperHex = "0123456789ABCDEF"

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// appendEscapes appends s to b with its percent-encoding normalized:
// escapes of unreserved characters decoded, other escapes upper-cased,
// unsafe bytes encoded, and, if lowerASCII, letters lower-cased.
func appendEscapes(b []byte, s string, lowerASCII bool) []byte {
	for i := 0; i < len(s); i++ {
		// copy the run of bytes that stay as they are in one go
		j := i
		if lowerASCII {
			for j < len(s) && classTable[s[j]]&(clsPlain|clsUpper) == clsPlain {
				j++
			}
		} else {
			for j < len(s) && is(s[j], clsPlain) {
				j++
			}
		}
		b = append(b, s[i:j]...)
		if i = j; i == len(s) {
			break
		}
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && is(s[i+1], clsHex) && is(s[i+2], clsHex):
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			if is(v, clsUnreserved) {
				if lowerASCII && is(v, clsUpper) {
					v += 'a' - 'A'
				}
				b = append(b, v)
			} else {
				b = append(b, '%', upperHex[v>>4], upperHex[v&15])
			}
			i += 2
		case is(c, clsUnsafe) || c == '%':
			// a raw unsafe byte, or a "%" that starts no escape
			b = append(b, '%', upperHex[c>>4], upperHex[c&15])
		case lowerASCII && is(c, clsUpper):
			b = append(b, c+'a'-'A')
		default:
			b = append(b, c)
		}
	}
	return b
}

// appendHost appends the canonical form of host h.
func appendHost(b []byte, h string) []byte {
	if strings.HasPrefix(h, "[") {
		return appendEscapes(b, h, true)
	}
	for i := 0; i < len(h); i++ {
		if h[i] >= utf8.RuneSelf || h[i] == '%' {
			if a, ok := idnaHost(h); ok {
				return append(b, a...)
			}
			break
		}
	}
	return appendEscapes(b, h, true)
}

// unescape decodes every escape in s. It fails on a bad escape.
func unescape(s string) (string, bool) {
	if strings.IndexByte(s, '%') < 0 {
		return s, true
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b = append(b, s[i])
			continue
		}
		if i+2 >= len(s) || !is(s[i+1], clsHex) || !is(s[i+2], clsHex) {
			return "", false
		}
		b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
		i += 2
	}
	return string(b), true
}

// hasDotSegment reports whether path p has a "." or ".." segment.
func hasDotSegment(p []byte) bool {
	if bytes.IndexByte(p, '.') < 0 {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] != '.' || (i > 0 && p[i-1] != '/') {
			continue
		}
		j := i + 1
		if j < len(p) && p[j] == '.' {
			j++
		}
		if j == len(p) || p[j] == '/' {
			return true
		}
	}
	return false
}

// removeDotSegments is the algorithm of RFC 3986 §5.2.4.
func removeDotSegments(in string) string {
	out := make([]byte, 0, len(in))
	for in != "" {
		switch {
		case strings.HasPrefix(in, "../"):
			in = in[3:]
		case strings.HasPrefix(in, "./"):
			in = in[2:]
		case strings.HasPrefix(in, "/./"):
			in = in[2:]
		case in == "/.":
			in = "/"
		case strings.HasPrefix(in, "/../"):
			in = in[3:]
			out = dropLastSegment(out)
		case in == "/..":
			in = "/"
			out = dropLastSegment(out)
		case in == "." || in == "..":
			in = ""
		default:
			i := strings.IndexByte(in[1:], '/')
			if i < 0 {
				i = len(in)
			} else {
				i++
			}
			out = append(out, in[:i]...)
			in = in[i:]
		}
	}
	return string(out)
}

func dropLastSegment(out []byte) []byte {
	i := len(out) - 1
	for i >= 0 && out[i] != '/' {
		i--
	}
	if i < 0 {
		return out[:0]
	}
	return out[:i]
}

// lowerFTPType lower-cases the code of a trailing ";type=X".
func lowerFTPType(p []byte) {
	const t = ";type="
	i := bytes.LastIndex(p, []byte(t))
	if i < 0 || bytes.IndexByte(p[i:], '/') >= 0 {
		return
	}
	for j := i + len(t); j < len(p); j++ {
		if is(p[j], clsUpper) {
			p[j] += 'a' - 'A'
		}
	}
}

// appendMailto appends the canonical form of the addresses of a mailto:
// URL: escapes normalized, domains lower-cased (RFC 6068 §2).
func appendMailto(b []byte, s string) []byte {
	for first := true; ; first = false {
		addr, rest, more := strings.Cut(s, ",")
		if !first {
			b = append(b, ',')
		}
		if at := strings.LastIndexByte(addr, '@'); at >= 0 {
			b = appendEscapes(b, addr[:at], false)
			b = append(b, '@')
			b = appendHost(b, addr[at+1:])
		} else {
			b = appendEscapes(b, addr, false)
		}
		if !more {
			return b
		}
		s = rest
	}
}
