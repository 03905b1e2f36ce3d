package extract

import "bytes"

// gateway is a URL-rewriting security gateway whose links have a grammar
// that says where they end. Outlook and other mailers hard-wrap these
// long links over several short lines; the end marker is what proves
// that the pieces joined are the whole link.
type gateway uint8

const (
	gwNone      gateway = iota
	gwSafeLinks         // https://*.safelinks.protection.outlook.com/?url=...&reserved=0
	gwDefenseV2         // https://urldefense.proofpoint.com/v2/url?u=...&e=
	gwDefenseV3         // https://urldefense.com/v3/__URL__;...!!...!...$ (or urldefense.us)
	gwPartial           // the start of one of them, cut inside its host: "https://nam06.safelinks.prot"
)

// gatewayPaths is how the path of each gateway's links starts.
var gatewayPaths = [...]string{gwSafeLinks: "/?", gwDefenseV2: "/v2/url?", gwDefenseV3: "/v3/__", gwPartial: ""}

// gatewayOf returns the gateway whose link u (as written) starts: its
// scheme (http or https) and host, then the start of its path. With
// partial set, a path cut short (a line break right after
// "https://urldefense.com/") counts too, and a host cut short gives
// gwPartial.
func gatewayOf(u []byte, partial bool) gateway {
	if len(u) < 12 || u[0]|0x20 != 'h' || u[1]|0x20 != 't' || u[2]|0x20 != 't' || u[3]|0x20 != 'p' {
		return gwNone
	}
	i := 4
	if u[i]|0x20 == 's' {
		i++
	}
	if u[i] != ':' || u[i+1] != '/' || u[i+2] != '/' {
		return gwNone
	}
	rest := u[i+3:]
	// the host ends at "/" (a gateway's link has one; the longest
	// gateway host has 64 characters with its region); one with "?" or
	// "#" in it matches no gateway's below
	h := bytes.IndexByte(rest[:min(len(rest), 96)], '/')
	if h < 0 {
		if !partial || len(rest) > 96 {
			return gwNone
		}
		h = len(rest)
	}
	host, path := rest[:h], rest[h:]
	if partial && h == len(rest) && partialHost(host) {
		return gwPartial
	}
	var g gateway
	// most hosts are told apart by their length and last letter
	// without a comparison of the whole
	switch {
	case len(host) < 13 || host[len(host)-1]|0x20 != 'm' && host[len(host)-1]|0x20 != 's':
		return gwNone
	case len(host) > 33 && hasSuffixFold(host, ".safelinks.protection.outlook.com"):
		g = gwSafeLinks
	case len(host) == 25 && bytes.EqualFold(host, []byte("urldefense.proofpoint.com")):
		g = gwDefenseV2
	case len(host) == 14 && bytes.EqualFold(host, []byte("urldefense.com")), len(host) == 13 && bytes.EqualFold(host, []byte("urldefense.us")):
		g = gwDefenseV3
	default:
		return gwNone
	}
	want := gatewayPaths[g]
	if len(path) >= len(want) {
		if !bytes.EqualFold(path[:len(want)], []byte(want)) {
			return gwNone
		}
		return g
	}
	if partial && bytes.EqualFold(path, []byte(want[:len(path)])) {
		return g
	}
	return gwNone
}

// partialHost reports whether host is the start of a gateway's host,
// cut before its end: "urldefense.c", "nam06.safelinks.prot", at least
// "urld" or a region label, a dot and "s".
func partialHost(host []byte) bool {
	for _, h := range [...]string{"urldefense.com", "urldefense.us", "urldefense.proofpoint.com"} {
		if len(host) >= 4 && len(host) < len(h) && bytes.EqualFold(host, []byte(h[:len(host)])) {
			return true
		}
	}
	const sl = "safelinks.protection.outlook.com"
	d := bytes.IndexByte(host, '.')
	if d <= 0 {
		return false
	}
	for _, c := range host[:d] {
		if !isAlnum(c) {
			return false
		}
	}
	n := len(host) - d - 1
	return n > 0 && n < len(sl) && bytes.EqualFold(host[d+1:], []byte(sl[:n]))
}

func hasSuffixFold(s []byte, suf string) bool {
	return len(s) > len(suf) && bytes.EqualFold(s[len(s)-len(suf):], []byte(suf))
}

// gatewayEnd returns the length of the link u of gateway g up to and
// with its end marker, or -1 when u does not hold it: Safe Links end
// with the parameter "reserved=0" (after "&", or after "&amp;" in text
// copied from HTML), URL Defense v2 with the empty parameter "e=", v3
// with the "$" after "__;", the encoded characters, "!!", the customer
// id, "!" and the signature (a "!" may be written "%21").
func gatewayEnd(g gateway, u []byte) int {
	q := bytes.IndexByte(u, '?')
	switch g {
	case gwSafeLinks:
		return paramEnd(u, q, "reserved=0")
	case gwDefenseV2:
		return paramEnd(u, q, "e=")
	case gwDefenseV3:
		return v3End(u)
	}
	return -1 // gwPartial: not yet known
}

// v3End returns the end of the URL Defense v3 link u: the "$" that closes
// its "__;" section. A v3 link may wrap another ("/v3/__https://
// urldefense.com/v3/__..."), whose own "__;...$" comes first: each
// "/v3/__" opens a level that one such section closes.
func v3End(u []byte) int {
	depth := bytes.Count(u, []byte("/v3/__"))
	if depth == 0 {
		return -1
	}
	from := 0
	for depth > 0 {
		i := bytes.Index(u[from:], []byte("__;"))
		if i < 0 {
			return -1
		}
		j := from + i + 3
		for ; j < len(u) && u[j] != '$'; j++ {
			c := u[j]
			switch {
			case isAlnum(c) || c == '-' || c == '_' || c == '!':
			case c == '%' && j+2 < len(u) && u[j+1] == '2' && u[j+2] == '1':
				j += 2
			default:
				return -1
			}
		}
		if j == len(u) {
			return -1
		}
		from, depth = j+1, depth-1
	}
	return from
}

// paramEnd returns the end of the query parameter p (name=value) in u,
// whose query starts at q: p after "?", "&" or the ";" of "&amp;", and
// not followed by more of a value. -1 if there is none.
func paramEnd(u []byte, q int, p string) int {
	if q < 0 {
		return -1
	}
	for from := q + 1; from < len(u); {
		i := bytes.Index(u[from:], []byte(p))
		if i < 0 {
			return -1
		}
		i += from
		e := i + len(p)
		if b := u[i-1]; (b == '?' || b == '&' || b == ';') && (e == len(u) || !isAlnum(u[e]) && u[e] != '%') {
			return e
		}
		from = i + 1
	}
	return -1
}

// gatewayChars says which ASCII bytes each gateway's links hold after
// the start of their path. Safe Links and URL Defense v2 encode the
// wrapped URL in their query (percent-encoding; v2 writes "-" for "%"
// and "_" for "/"); URL Defense v3 keeps it as written, so any URL
// character; those of v3 are also what a link cut inside its host may
// go on with.
var gatewayChars = func() (t [5][128]bool) {
	for c := 0; c < 128; c++ {
		b := byte(c)
		query := isAlnum(b) || bytes.IndexByte([]byte("-._~%&=;+"), b) >= 0
		t[gwSafeLinks][c] = query
		t[gwDefenseV2][c] = query
		t[gwDefenseV3][c] = urlClass[c] != clStop && bytes.IndexByte([]byte("{}|\\^"), b) < 0
		t[gwPartial][c] = t[gwDefenseV3][c]
	}
	return t
}()

// gatewayJoin joins to the gateway link t[st:e] of line 0, which runs to
// the end of its line without its end marker, the lines after it that
// continue it: each with the same quote prefix, starting right after
// the prefix, made of URL characters only and filling its line, until
// the gateway's end marker; then the whole must be that gateway's link,
// made of its characters only (gatewayChars). The link ends at the
// marker; what follows it on its line is text. It reports false, joining
// nothing, when no marker comes within gatewayJoinLines lines.
func (s *Scanner) gatewayJoin(st, e int, probs []error) (*Link, bool) {
	wide := &gatewayChars[gwPartial]
	t := s.text(0)
	l0 := s.lines[0]
	b := &s.ub
	b.u, b.segs = b.u[:0], b.segs[:0]
	b.add(t[st:e], l0.off+int64(st))
	for k := 1; k <= gatewayJoinLines(&s.opt) && len(b.u) <= s.opt.MaxLinkLength; k++ {
		if !s.fill(k) || !s.samePrefix(0, k) {
			return nil, false
		}
		tk := s.text(k)
		p := s.prefix(k)
		j := p
		for j < len(tk) && tk[j] < 0x80 && wide[tk[j]] {
			j++
		}
		if j == p {
			return nil, false
		}
		n := len(b.u)
		b.add(tk[p:j], s.lines[k].off+int64(p))
		g := gatewayOf(b.u, true)
		if g == gwNone {
			return nil, false
		}
		if end := gatewayEnd(g, b.u); end > 0 {
			// the marker ends the link: what follows it on its piece may
			// only be the punctuation that ends a link in running text
			// ("...reserved=0)."), not more of a URL ("...$xfs/")
			if end <= n || !gatewayWhole(g, b.u[:end]) || trimTrail(b.u, end, len(b.u)) != end {
				return nil, false
			}
			b.u = b.u[:end]
			b.segs = cutSegments(b.segs, int64(end))
			lk := s.makeLink(b.u, b.segs, FormBare, 0, st, l0.off+int64(st), b.segs[len(b.segs)-1].End, probs)
			lk.Joined = true
			return lk, true
		}
		if len(trimSpaceRight(tk[j:])) > 0 {
			return nil, false // the piece ends before its line does
		}
	}
	return nil, false
}

// gatewayWhole reports whether u is a link of gateway g whose characters
// after the start of its path are all the gateway's.
func gatewayWhole(g gateway, u []byte) bool {
	if gatewayOf(u, false) != g {
		return false
	}
	i := bytes.Index(u, []byte("://")) + 3
	i += bytes.IndexByte(u[i:], '/') + len(gatewayPaths[g])
	chars := &gatewayChars[g]
	for _, c := range u[i:] {
		if c >= 0x80 || !chars[c] {
			return false
		}
	}
	return true
}

// gatewayJoinLines is how many lines a gateway's link may continue over:
// twice MaxJoinLines (16 by default), since Outlook wraps a Safe Links
// link of 400 to 600 characters in lines as short as 40. The marker
// proves the join, and the window's bound in bytes stays that of
// MaxJoinLines: a join that needs more fails.
func gatewayJoinLines(o *Options) int {
	return min(2*o.MaxJoinLines, noLimit)
}
