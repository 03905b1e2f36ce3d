package rewrite

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Wrapper names the link format of a security gateway or redirector.
type Wrapper string

// The wrappers UnwrapOnce knows.
const (
	SafeLinks    Wrapper = "safelinks"     // https://*.safelinks.protection.outlook.com/?url=
	URLDefenseV1 Wrapper = "urldefense-v1" // https://urldefense.proofpoint.com/v1/url?u=...&k=
	URLDefenseV2 Wrapper = "urldefense-v2" // https://urldefense.proofpoint.com/v2/url?u= ("-" for "%", "_" for "/")
	URLDefenseV3 Wrapper = "urldefense-v3" // https://urldefense.com/v3/__URL__;BASE64URL!!...
	URLDefense   Wrapper = "urldefense"    // a URL Defense path of an unknown version (never decoded)
	Google       Wrapper = "google"        // https://www.google.com/url?q=
	Barracuda    Wrapper = "barracuda"     // https://linkprotect.cudasvc.com/url?a=
	FireEye      Wrapper = "fireeye"       // https://protect2.fireeye.com/v1/url?u=
	TrendMicro   Wrapper = "trendmicro"    // https://*.trendmicro.com/wis/clicktime/v1/query?url=
	AWSSES       Wrapper = "awstrack"      // https://*.awstrack.me/L0/<percent-encoded URL>/...
	Mimecast     Wrapper = "mimecast"      // https://protect-*.mimecast.com/s/<token>?domain= (never decoded)
)

// Sentinel errors of unwrapping; an *UnwrapError wraps one of them.
var (
	// ErrNotDecodable: the wrapper holds a token that only its vendor's
	// server can turn into the URL (Mimecast, unknown URL Defense
	// versions). Nothing is guessed.
	ErrNotDecodable = errors.New("cannot be decoded offline")
	// ErrMalformed: the URL is a wrapper of a known format but its
	// encoded URL is missing or broken; nothing is decoded.
	ErrMalformed = errors.New("malformed wrapper")
	// ErrTooDeep: still a wrapper after the maximum number of layers.
	ErrTooDeep = errors.New("too many nested wrappers")
)

// UnwrapError reports a wrapper that was recognized but not decoded.
type UnwrapError struct {
	Wrapper Wrapper
	URL     string // the wrapper URL as given
	Detail  string // what is wrong, for people
	Err     error  // ErrNotDecodable, ErrMalformed or ErrTooDeep
}

func (e *UnwrapError) Error() string {
	s := "rewrite: " + string(e.Wrapper) + ": " + e.Err.Error()
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap returns the sentinel.
func (e *UnwrapError) Unwrap() error { return e.Err }

// DefaultMaxLayers is the number of nested wrappers Unwrap removes when
// given a bound of 0 or less.
const DefaultMaxLayers = 8

// Unwrap removes wrappers from s, outermost first, until the URL is no
// longer a wrapper or max layers (DefaultMaxLayers if max <= 0) are gone.
// It returns the URL as far as it was unwrapped and the wrappers removed;
// err is an *UnwrapError when a layer was recognized but could not be
// decoded (the URL returned is then the one that layer wraps, that is the
// last URL that could be decoded) or when more than max layers nest.
func Unwrap(s string, max int) (string, []Wrapper, error) {
	if max <= 0 {
		max = DefaultMaxLayers
	}
	var layers []Wrapper
	cur := s
	for {
		orig, w, ok, err := UnwrapOnce(cur)
		if err != nil {
			return cur, layers, err
		}
		if !ok {
			return cur, layers, nil
		}
		if len(layers) == max {
			return cur, layers, &UnwrapError{Wrapper: w, URL: cur, Err: ErrTooDeep,
				Detail: "more than " + strconv.Itoa(max) + " layers"}
		}
		layers = append(layers, w)
		cur = orig
	}
}

// UnwrapOnce removes one layer. ok is false, with a nil error, when s is
// not a wrapper of a known format. When s is one but cannot be decoded
// (malformed, or a format that holds no URL such as Mimecast's), ok is
// false and err is an *UnwrapError naming the wrapper. A decoded URL has
// a scheme; white space, control characters and bytes that are not UTF-8
// in it are percent-encoded, so it never contains any.
//
// Two kinds of debris are repaired, because mail carries them: "&amp;"
// between the wrapper's parameters (HTML-escaped text taken as plain
// text) and a parameter written "u=3D..." (quoted-printable text never
// decoded, "=3D" standing for "=").
func UnwrapOnce(s string) (orig string, w Wrapper, ok bool, err error) {
	h, ok := splitHTTP(s)
	if !ok {
		return "", "", false, nil
	}
	var name string
	var dec func(string) (string, bool)
	switch {
	case hostSuffix(h.host, "safelinks.protection.outlook.com") && (h.path == "/" || h.path == ""):
		w, name, dec = SafeLinks, "url", pctDecodeLenient
	case h.host == "urldefense.proofpoint.com" || h.host == "urldefense.com":
		switch {
		case h.path == "/v1/url":
			w, name, dec = URLDefenseV1, "u", pctDecodeLenient
		case h.path == "/v2/url":
			w, name, dec = URLDefenseV2, "u", decodeV2
		case strings.HasPrefix(h.tail, "/v3/__"):
			return unwrapV3(s, h.tail[len("/v3/__"):])
		case isVersionPath(h.path):
			return "", URLDefense, false, &UnwrapError{Wrapper: URLDefense, URL: s, Err: ErrNotDecodable,
				Detail: "unknown version " + h.path}
		default:
			return "", "", false, nil
		}
	case isGoogle(h.host) && h.path == "/url":
		w, dec = Google, pctDecodeLenient
		if _, found := param(h.query, "q"); found {
			name = "q"
		} else {
			name = "url"
		}
	case h.host == "linkprotect.cudasvc.com" && h.path == "/url":
		w, name, dec = Barracuda, "a", pctDecodeLenient
	case (h.host == "protect2.fireeye.com" || h.host == "protect.fireeye.com") && (h.path == "/v1/url" || h.path == "/url"):
		w, name, dec = FireEye, "u", pctDecodeLenient
	case hostSuffix(h.host, "trendmicro.com") && h.path == "/wis/clicktime/v1/query":
		w, name, dec = TrendMicro, "url", pctDecodeLenient
	case (h.host == "awstrack.me" || hostSuffix(h.host, "awstrack.me")) && strings.HasPrefix(h.path, "/L0/"):
		enc := h.path[len("/L0/"):]
		if i := strings.IndexByte(enc, '/'); i >= 0 {
			enc = enc[:i]
		}
		return finish(s, AWSSES, enc, pctDecodeLenient)
	case isMimecast(h.host) && strings.HasPrefix(h.path, "/s/"):
		d := "the URL is held by Mimecast's server"
		if dom, found := param(h.query, "domain"); found && dom != "" {
			d += " (it leads to a page on " + dom + ")"
		}
		return "", Mimecast, false, &UnwrapError{Wrapper: Mimecast, URL: s, Err: ErrNotDecodable, Detail: d}
	default:
		return "", "", false, nil
	}
	v, found := param(h.query, name)
	if !found {
		return "", w, false, &UnwrapError{Wrapper: w, URL: s, Err: ErrMalformed, Detail: "no " + name + "= parameter"}
	}
	return finish(s, w, v, dec)
}

// finish decodes the encoded URL v of wrapper w, retrying without a
// leading "3D" (quoted-printable debris) when the first reading has no
// scheme.
func finish(s string, w Wrapper, v string, dec func(string) (string, bool)) (string, Wrapper, bool, error) {
	if v == "" {
		return "", w, false, &UnwrapError{Wrapper: w, URL: s, Err: ErrMalformed, Detail: "empty encoded URL"}
	}
	u, good := dec(v)
	if good && hasScheme(u) {
		return clean(u), w, true, nil
	}
	if len(v) > 2 && v[0] == '3' && (v[1] == 'D' || v[1] == 'd') {
		if u2, good2 := dec(v[2:]); good2 && hasScheme(u2) {
			return clean(u2), w, true, nil
		}
	}
	d := "the encoded URL has no scheme"
	if !good {
		d = "bad escape in the encoded URL"
	}
	return "", w, false, &UnwrapError{Wrapper: w, URL: s, Err: ErrMalformed, Detail: d}
}

// httpParts is an http or https URL split as written.
type httpParts struct {
	host  string // lower-case, without user info, port or a final dot
	tail  string // everything after the authority
	path  string // tail up to "?" or "#"
	query string // after the first "?", to the end (a wrapped URL may hold "#")
}

func splitHTTP(s string) (h httpParts, ok bool) {
	var rest string
	switch {
	case hasPrefixFold(s, "https://"):
		rest = s[len("https://"):]
	case hasPrefixFold(s, "http://"):
		rest = s[len("http://"):]
	default:
		return h, false
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	auth := rest[:end]
	h.tail = rest[end:]
	if i := strings.LastIndexByte(auth, '@'); i >= 0 {
		auth = auth[i+1:]
	}
	if i := strings.LastIndexByte(auth, ':'); i >= 0 && !strings.Contains(auth[i:], "]") {
		auth = auth[:i]
	}
	h.host = strings.ToLower(strings.TrimSuffix(auth, "."))
	h.path = h.tail
	if i := strings.IndexAny(h.tail, "?#"); i >= 0 {
		h.path = h.tail[:i]
	}
	if i := strings.IndexByte(h.tail, '?'); i >= 0 {
		h.query = h.tail[i+1:]
	}
	return h, true
}

// param returns the raw value of the first parameter called name in the
// raw query q. Parameters are separated by "&", or by "&amp;" in text that
// was HTML-escaped.
func param(q, name string) (string, bool) {
	for q != "" {
		seg := q
		if i := strings.IndexByte(q, '&'); i >= 0 {
			seg, q = q[:i], q[i+1:]
		} else {
			q = ""
		}
		seg = strings.TrimPrefix(seg, "amp;")
		k, v, _ := strings.Cut(seg, "=")
		if k == name {
			return v, true
		}
	}
	return "", false
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// hostSuffix reports whether host is a subdomain of domain.
func hostSuffix(host, domain string) bool {
	return len(host) > len(domain)+1 && strings.HasSuffix(host, domain) && host[len(host)-len(domain)-1] == '.'
}

// isGoogle: google.com, www.google.com and the country domains
// (google.de, www.google.co.uk, google.com.au).
func isGoogle(host string) bool {
	host = strings.TrimPrefix(host, "www.")
	rest, ok := strings.CutPrefix(host, "google.")
	if !ok || rest == "" {
		return false
	}
	if tld, cc, two := strings.Cut(rest, "."); two {
		return (tld == "co" || tld == "com") && isLetters(cc, 2)
	}
	return rest == "com" || isLetters(rest, 2)
}

func isLetters(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}

// isMimecast: protect-eu.mimecast.com, protect-us.mimecast.com, ... and
// the newer *.mimecastprotect.com.
func isMimecast(host string) bool {
	if strings.HasPrefix(host, "protect") && strings.HasSuffix(host, ".mimecast.com") {
		return true
	}
	return hostSuffix(host, "mimecastprotect.com")
}

// isVersionPath: "/v4/..." and the like.
func isVersionPath(p string) bool {
	if len(p) < 3 || p[0] != '/' || p[1] != 'v' {
		return false
	}
	i := 2
	for i < len(p) && p[i] >= '0' && p[i] <= '9' {
		i++
	}
	return i > 2 && (i == len(p) || p[i] == '/')
}

// hasScheme: scheme ":" something, the scheme starting with a letter
// (RFC 3986 §3.1).
func hasScheme(s string) bool {
	i := schemeColon(s)
	return i > 0 && i+1 < len(s)
}

// schemeColon returns the index of the ":" after the scheme s starts
// with (RFC 3986 §3.1), -1 if it does not start with one.
func schemeColon(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case c == ':' && i > 0:
			return i
		default:
			return -1
		}
	}
	return -1
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// pctDecode decodes %XX escapes. With strict, a "%" that starts no escape
// is an error; otherwise it is kept as written. "+" is kept: the
// wrappers escape a plus sign, and a URL holds no spaces.
func pctDecode(s string, strict bool) (string, bool) {
	if strings.IndexByte(s, '%') < 0 {
		return s, true
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' {
			if i+2 < len(s) {
				hi, ok1 := unhex(s[i+1])
				lo, ok2 := unhex(s[i+2])
				if ok1 && ok2 {
					b = append(b, hi<<4|lo)
					i += 2
					continue
				}
			}
			if strict {
				return "", false
			}
		}
		b = append(b, c)
	}
	return string(b), true
}

func pctDecodeLenient(s string) (string, bool) { return pctDecode(s, false) }

// decodeV2 reads URL Defense v2's u= value: the URL percent-encoded, then
// "%" written "-" and "/" written "_". A "-" that starts no escape is an
// error (a literal "-" of the URL is always escaped as "-2D").
func decodeV2(s string) (string, bool) {
	b := []byte(s)
	for i, c := range b {
		switch c {
		case '-':
			b[i] = '%'
		case '_':
			b[i] = '/'
		}
	}
	return pctDecode(string(b), true)
}

// v3RunAlphabet gives the length of a "**X" run: X's index plus 2.
const v3RunAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// unwrapV3 decodes URL Defense v3: "__" URL "__;" REPLACEMENTS "!!" ...
// where REPLACEMENTS is base64url (no padding) of the bytes taken out of
// the URL. In the URL, "*" stands for the next one byte of REPLACEMENTS
// and "**X" for the next n bytes, n = index of X in v3RunAlphabet + 2.
// Runs count bytes, not characters: one "é" (two bytes in UTF-8) is
// "**A". All replacement bytes must be used, exactly.
func unwrapV3(s, tail string) (string, Wrapper, bool, error) {
	bad := func(d string) (string, Wrapper, bool, error) {
		return "", URLDefenseV3, false, &UnwrapError{Wrapper: URLDefenseV3, URL: s, Err: ErrMalformed, Detail: d}
	}
	i := strings.LastIndex(tail, "__;")
	if i < 0 {
		return bad(`no "__;" after the URL`)
	}
	emb, rest := tail[:i], tail[i+3:]
	j := strings.IndexByte(rest, '!')
	if j < 0 {
		return bad(`no "!" after the replacement bytes`)
	}
	repl, err := base64.RawURLEncoding.DecodeString(rest[:j])
	if err != nil {
		return bad("replacement bytes are not base64url")
	}
	b := make([]byte, 0, len(emb)+len(repl))
	k := 0
	for p := 0; p < len(emb); {
		c := emb[p]
		if c != '*' {
			b = append(b, c)
			p++
			continue
		}
		n := 1
		if p+1 < len(emb) && emb[p+1] == '*' {
			if p+2 >= len(emb) {
				return bad(`"**" at the end of the URL`)
			}
			n = strings.IndexByte(v3RunAlphabet, emb[p+2]) + 2
			if n < 2 {
				return bad(`bad run length after "**"`)
			}
			p += 3
		} else {
			p++
		}
		if k+n > len(repl) {
			return bad("more markers than replacement bytes")
		}
		b = append(b, repl[k:k+n]...)
		k += n
	}
	if k != len(repl) {
		return bad(strconv.Itoa(len(repl)-k) + " replacement bytes left over")
	}
	u := string(b)
	if !hasScheme(u) {
		return bad("the encoded URL has no scheme")
	}
	return clean(u), URLDefenseV3, true, nil
}

// clean percent-encodes white space, control characters, DEL and bytes
// that are not UTF-8, so that a decoded URL can be written back into text.
func clean(s string) string {
	need := false
	for i := 0; i < len(s); {
		c := s[i]
		if c <= ' ' || c == 0x7f {
			need = true
			break
		}
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 || isSpaceRune(r) {
			need = true
			break
		}
		i += n
	}
	if !need {
		return s
	}
	const hexdig = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+8)
	esc := func(c byte) { b = append(b, '%', hexdig[c>>4], hexdig[c&15]) }
	for i := 0; i < len(s); {
		c := s[i]
		if c <= ' ' || c == 0x7f {
			esc(c)
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 || isSpaceRune(r) {
			for k := 0; k < n; k++ {
				esc(s[i+k])
			}
			i += n
			continue
		}
		b = append(b, s[i:i+n]...)
		i += n
	}
	return string(b)
}

// isSpaceRune: non-ASCII white space and C1 controls (U+0085, U+00A0,
// U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000).
func isSpaceRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f, r == 0xa0, r == 0x1680, r >= 0x2000 && r <= 0x200a,
		r == 0x2028, r == 0x2029, r == 0x202f, r == 0x205f, r == 0x3000, r == 0xfeff:
		return true
	}
	return false
}
