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
	// ErrCut: the wrapper's own end marker is not at its end (Safe
	// Links' "&reserved=0", URL Defense v2's "&e=", v3's "!...$"), or,
	// in a format without one, the encoded URL is missing or empty at
	// the link's end: the link as found is cut short, by a hard wrap or
	// a truncation, and its target may be too (or text was glued after
	// its end marker). Nothing is decoded, and rewrite writes no rule's
	// change of such a link.
	ErrCut = errors.New("cut before its end marker")
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
	u, layers, _, err := unwrap(s, max)
	return u, layers, err
}

// unwrap is Unwrap, with the notes of the layers removed (a repair
// made: see unwrapOnce).
func unwrap(s string, max int) (string, []Wrapper, []string, error) {
	if max <= 0 {
		max = DefaultMaxLayers
	}
	var layers []Wrapper
	var notes []string
	cur := s
	for {
		orig, w, note, ok, err := unwrapOnce(cur)
		if err != nil {
			return cur, layers, notes, err
		}
		if !ok {
			return cur, layers, notes, nil
		}
		if len(layers) == max {
			return cur, layers, notes, &UnwrapError{Wrapper: w, URL: cur, Err: ErrTooDeep,
				Detail: "more than " + strconv.Itoa(max) + " layers"}
		}
		layers = append(layers, w)
		if note != "" {
			notes = append(notes, note)
		}
		cur = orig
	}
}

// UnwrapOnce removes one layer. ok is false, with a nil error, when s is
// not a wrapper of a known format. When s is one but cannot be decoded
// (malformed, cut before its end marker, or a format that holds no URL
// such as Mimecast's), ok is false and err is an *UnwrapError naming the
// wrapper. A decoded URL has a scheme; white space, control characters
// and bytes that are not UTF-8 in it are percent-encoded, so it never
// contains any.
//
// The formats that close with an end marker are decoded only when it
// ends s: Safe Links' last parameter "reserved=0", URL Defense v2's
// "e=" (empty), v3's "!...$" after the replacement bytes. Without it
// the link was cut (a hard wrap, a truncation) and its target may be
// too: ErrCut, nothing decoded. EndProven tells which links end so.
//
// Debris that mail leaves is read through: "&amp;" between the
// wrapper's parameters (HTML-escaped text taken as plain text), a
// parameter written "u=3D..." (quoted-printable text never decoded,
// "=3D" standing for "="), a v3 "!" written "%21". A decoded target
// "https:/host/..." (one slash, which browsers read as two) is written
// "https://host/..." when the rest of the decoding holds.
func UnwrapOnce(s string) (orig string, w Wrapper, ok bool, err error) {
	orig, w, _, ok, err = unwrapOnce(s)
	return orig, w, ok, err
}

// unwrapOnce is UnwrapOnce with the note of a repair made ("" when none).
func unwrapOnce(s string) (orig string, w Wrapper, note string, ok bool, err error) {
	h, ok := splitHTTP(s)
	if !ok {
		return "", "", "", false, nil
	}
	var name string
	var dec func(string) (string, bool)
	switch {
	case hostSuffix(h.host, "safelinks.protection.outlook.com") && (h.path == "/" || h.path == ""):
		w, name, dec = SafeLinks, "url", pctDecodeLenient
	case isURLDefense(h.host):
		switch {
		case h.path == "/v1/url":
			w, name, dec = URLDefenseV1, "u", pctDecodeLenient
		case h.path == "/v2/url":
			w, name, dec = URLDefenseV2, "u", decodeV2
		case strings.HasPrefix(h.tail, "/v3/__"):
			return unwrapV3(s, h.tail[len("/v3/__"):])
		case h.path == "" || h.path == "/" || strings.HasPrefix("/v3/__", h.path) || strings.HasPrefix("/v2/url", h.path):
			// the host and the start of a path: the rest of the link is
			// on the next lines
			return "", URLDefense, "", false, &UnwrapError{Wrapper: URLDefense, URL: s, Err: ErrCut,
				Detail: "only " + strconv.Quote(h.host+h.path) + ": the link is cut short (a hard wrap or a truncation)"}
		case isVersionPath(h.path):
			return "", URLDefense, "", false, &UnwrapError{Wrapper: URLDefense, URL: s, Err: ErrNotDecodable,
				Detail: "unknown version " + h.path}
		default:
			return "", "", "", false, nil
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
		return "", Mimecast, "", false, &UnwrapError{Wrapper: Mimecast, URL: s, Err: ErrNotDecodable, Detail: d}
	default:
		return "", "", "", false, nil
	}
	v, found := param(h.query, name)
	if !found {
		if d := cutDetail(w, h.query); d != "" {
			return "", w, "", false, &UnwrapError{Wrapper: w, URL: s, Err: ErrCut, Detail: d}
		}
		if _, marked := endMarkers[w]; marked {
			// its end marker is there: the link is whole, and broken
			return "", w, "", false, &UnwrapError{Wrapper: w, URL: s, Err: ErrMalformed, Detail: "no " + name + "= parameter"}
		}
		// no end marker to tell a cut link from a broken one: the
		// link ends where its line did, and its rest may be below
		return "", w, "", false, &UnwrapError{Wrapper: w, URL: s, Err: ErrCut,
			Detail: "no " + name + "= parameter" + mayBeCut}
	}
	if v == "" && strings.HasSuffix(h.query, name+"=") {
		return "", w, "", false, &UnwrapError{Wrapper: w, URL: s, Err: ErrCut,
			Detail: "empty encoded URL at the link's end" + mayBeCut}
	}
	if d := cutDetail(w, h.query); d != "" {
		return "", w, "", false, &UnwrapError{Wrapper: w, URL: s, Err: ErrCut, Detail: d}
	}
	return finish(s, w, v, dec)
}

// mayBeCut ends the detail of a wrapper without an end marker whose
// encoded URL is missing: a hard wrap of the line may have cut it.
const mayBeCut = " (the link may be cut short, by a hard wrap or a truncation)"

// isURLDefense: Proofpoint URL Defense's hosts.
func isURLDefense(host string) bool {
	return host == "urldefense.proofpoint.com" || host == "urldefense.com" || host == "urldefense.us"
}

// endMarkers are the last parameters of the wrappers that close with
// one: name and value (the value "3D"-prefixed too, for
// quoted-printable debris).
var endMarkers = map[Wrapper][2]string{
	SafeLinks:    {"reserved", "0"},
	URLDefenseV2: {"e", ""},
}

// cutDetail says why the query q of a wrapper w that closes with an
// end marker does not end with it; "" when it does, or when w has no
// end marker.
func cutDetail(w Wrapper, q string) string {
	m, has := endMarkers[w]
	if !has {
		return ""
	}
	k, v, _ := strings.Cut(lastParam(q), "=")
	if k == m[0] && (v == m[1] || v == "3D"+m[1] || v == "3d"+m[1]) {
		return ""
	}
	marker := m[0] + "=" + m[1]
	if k == m[0] && strings.HasPrefix(v, m[1]) || strings.Contains(q, "&"+marker+"&") {
		return `text follows its end marker "` + marker + `": the link as found runs on past its end (a join took in what follows it)`
	}
	return `no "&` + marker + `" at its end: the link is cut short (a hard wrap or a truncation) and its target may be too`
}

// lastParam returns the last parameter of the raw query q ("&amp;" read
// as "&").
func lastParam(q string) string {
	if i := strings.LastIndexByte(q, '&'); i >= 0 {
		q = q[i+1:]
	}
	return strings.TrimPrefix(q, "amp;")
}

// EndProven reports whether the URL s is a wrapper whose own grammar
// proves where it ends: it decodes, and it closes with its format's end
// marker (Safe Links' "reserved=0", URL Defense v2's "e=", v3's "$",
// Google's "usg=" signature, Barracuda's "typo=1"). A link joined from
// several lines is written only when its end is proven so (or by
// delimiters around it): text glued after the marker would spoil it.
// FireEye, Trend Micro, URL Defense v1 and Amazon SES links end with
// the encoded URL or a parameter of no fixed form, so nothing proves
// their end.
func EndProven(s string) bool {
	_, w, _, ok, _ := unwrapOnce(s)
	if !ok {
		return false
	}
	switch w {
	case SafeLinks, URLDefenseV2, URLDefenseV3:
		return true // unwrapOnce found the end marker
	case Google, Barracuda:
		h, _ := splitHTTP(s)
		k, v, _ := strings.Cut(lastParam(h.query), "=")
		if w == Google {
			return k == "usg" && strings.HasPrefix(v, "AOvVaw") && len(v) == 28
		}
		return k == "typo" && v == "1"
	}
	return false
}

// finish decodes the encoded URL v of wrapper w, retrying without a
// leading "3D" (quoted-printable debris) when the first reading has no
// scheme.
func finish(s string, w Wrapper, v string, dec func(string) (string, bool)) (string, Wrapper, string, bool, error) {
	if v == "" {
		return "", w, "", false, &UnwrapError{Wrapper: w, URL: s, Err: ErrMalformed, Detail: "empty encoded URL"}
	}
	u, good := dec(v)
	if good && hasScheme(u) {
		u, note := oneSlash(u)
		return clean(u), w, note, true, nil
	}
	if len(v) > 2 && v[0] == '3' && (v[1] == 'D' || v[1] == 'd') {
		if u2, good2 := dec(v[2:]); good2 && hasScheme(u2) {
			u2, note := oneSlash(u2)
			return clean(u2), w, note, true, nil
		}
	}
	d := "the encoded URL has no scheme"
	if !good {
		d = "bad escape in the encoded URL"
	}
	return "", w, "", false, &UnwrapError{Wrapper: w, URL: s, Err: ErrMalformed, Detail: d}
}

// oneSlash repairs a decoded target written "http:/host/..." or
// "https:/host/..." (one slash after the scheme, which browsers read as
// two: Proofpoint writes such targets) to "https://host/...", and says
// so in the note.
func oneSlash(u string) (string, string) {
	for _, sc := range [...]string{"https:/", "http:/"} {
		if hasPrefixFold(u, sc) && len(u) > len(sc) && u[len(sc)] != '/' && u[len(sc)] != '?' && u[len(sc)] != '#' {
			return u[:len(sc)] + "/" + u[len(sc):], `the wrapped target read "` + u[:len(sc)] + `" with one slash; written with two`
		}
	}
	return u, ""
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
func unwrapV3(s, tail string) (string, Wrapper, string, bool, error) {
	bad := func(err error, d string) (string, Wrapper, string, bool, error) {
		return "", URLDefenseV3, "", false, &UnwrapError{Wrapper: URLDefenseV3, URL: s, Err: err, Detail: d}
	}
	const cut = "the link is cut short (a hard wrap or a truncation) and its target may be too"
	i := strings.LastIndex(tail, "__;")
	if i < 0 {
		return bad(ErrCut, `no "__;" after the URL: `+cut)
	}
	emb, rest := tail[:i], strings.ReplaceAll(tail[i+3:], "%21", "!")
	j := strings.IndexByte(rest, '!')
	if j < 0 {
		return bad(ErrCut, `no "!" after the replacement bytes: `+cut)
	}
	if d := v3Tail(rest[j:]); d != "" {
		if !strings.HasPrefix(d, "text follows") {
			d += ": " + cut
		}
		return bad(ErrCut, d)
	}
	repl, err := base64.RawURLEncoding.DecodeString(rest[:j])
	if err != nil {
		return bad(ErrMalformed, "replacement bytes are not base64url")
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
				return bad(ErrMalformed, `"**" at the end of the URL`)
			}
			n = strings.IndexByte(v3RunAlphabet, emb[p+2]) + 2
			if n < 2 {
				return bad(ErrMalformed, `bad run length after "**"`)
			}
			p += 3
		} else {
			p++
		}
		if k+n > len(repl) {
			return bad(ErrMalformed, "more markers than replacement bytes")
		}
		b = append(b, repl[k:k+n]...)
		k += n
	}
	if k != len(repl) {
		return bad(ErrMalformed, strconv.Itoa(len(repl)-k)+" replacement bytes left over")
	}
	u := string(b)
	if !hasScheme(u) {
		return bad(ErrMalformed, "the encoded URL has no scheme")
	}
	u, note := oneSlash(u)
	return clean(u), URLDefenseV3, note, true, nil
}

// v3Tail checks the end of a v3 link after its replacement bytes,
// "!!CUSTOMER!SIGNATURE$" ("!" may have been written "%21"): "!"s and
// base64url text, closed by the one "$" that ends the link. It returns
// what is wrong, "" when nothing is.
func v3Tail(t string) string {
	if !strings.HasSuffix(t, "$") {
		if strings.Contains(t, "$") {
			return `text follows its end marker "$": the link as found runs on past its end (a join took in what follows it)`
		}
		return `no "$" at its end`
	}
	for i := 0; i < len(t)-1; i++ {
		if c := t[i]; c != '!' && strings.IndexByte(v3RunAlphabet, c) < 0 {
			return `text after the signature, before its "$"`
		}
	}
	return ""
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
