package extract

import (
	"bytes"
	"net/netip"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/linkscan/linkscan/uri"
	"golang.org/x/net/publicsuffix"
)

// Bare domains (Options.BareDomains): host names and IP literals written
// without a scheme. The rules and their measured precision are in
// docs/extract.md.

func isHostChar(c byte) bool { return isAlnum(c) || c == '-' || c == '.' }

// domainOpeners are the ASCII characters that may stand right before a
// bare domain: white space aside, opening brackets and quotes and
// punctuation that ends a clause.
var domainOpeners = [128]bool{'(': true, '[': true, '{': true, '<': true, '"': true, '\'': true, '`': true,
	'*': true, ',': true, ';': true, '|': true}

// domainClosers are the ASCII characters that may stand right after one
// (its path aside).
var domainClosers = [128]bool{')': true, ']': true, '}': true, '>': true, '"': true, '\'': true, '`': true,
	'*': true, ',': true, ';': true, '.': true, '!': true, '?': true, '|': true}

// boundaryBefore reports whether a bare host may start at t[st].
func boundaryBefore(t []byte, st int) bool {
	if st == 0 {
		return true
	}
	c := t[st-1]
	if c < utf8.RuneSelf {
		return asciiSpace[c] || domainOpeners[c]
	}
	r, _ := utf8.DecodeLastRune(t[:st])
	return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
}

// boundaryAfter reports whether a bare host may end at t[e], what follows
// being no path.
func boundaryAfter(t []byte, e int) bool {
	if e == len(t) {
		return true
	}
	c := t[e]
	if c < utf8.RuneSelf {
		if c == '.' || c == '?' || c == '!' { // a sentence's end ("...", "?!"), not "a.b.c" nor "x.y?z"
			lim := min(len(t), e+runCap)
			for e < lim && (t[e] == '.' || t[e] == '?' || t[e] == '!') {
				e++
			}
			if e == lim && e < len(t) {
				return false // more of them than runCap
			}
			return e == len(t) || spaceAt(t, e) > 0 || t[e] < utf8.RuneSelf && domainClosers[t[e]] && t[e] != '.'
		}
		return asciiSpace[c] || domainClosers[c]
	}
	stop, _ := stopAt(t, e)
	return stop
}

// reversedFirst are first labels of the reversed domain names of Java,
// Android and other package names (com.example.Foo, org.apache.http).
var reversedFirst = map[string]bool{"com": true, "org": true, "net": true, "edu": true, "gov": true,
	"mil": true, "io": true, "java": true, "javax": true, "android": true, "androidx": true, "kotlin": true,
	"scala": true, "sun": true, "uk": true, "de": true, "fr": true, "nl": true}

// usenetFirst are the first labels of Usenet hierarchies: comp.graphics
// and sci.math are newsgroups, although .graphics and .math are domains.
var usenetFirst = map[string]bool{"comp": true, "sci": true, "rec": true, "soc": true, "talk": true,
	"misc": true, "alt": true, "humanities": true, "gnu": true}

// fileTLDs are top-level domains that are also common file name
// extensions: "Foo.pm", "README.md", "setup.py", "run.sh", "Makefile.in"
// are file names, and a two-label name ending in one is not taken.
var fileTLDs = map[string]bool{"pm": true, "pl": true, "md": true, "py": true, "sh": true, "rs": true,
	"so": true, "cc": true, "ps": true, "ai": true, "am": true, "in": true, "ml": true, "mk": true,
	"zip": true, "mov": true, "do": true, "sc": true, "st": true, "cs": true, "ac": true, "gs": true,
	"ts": true, "js": true, "hs": true, "rb": true, "to": true, "bz": true, "gz": true, "lu": true, "tk": true, "win": true, "exe": true, "bat": true, "cfg": true, "ini": true, "conf": true}

// codeReceivers are first labels of member expressions in code
// (self.name, this.info), never of host names in mail.
var codeReceivers = map[string]bool{"self": true, "this": true, "obj": true, "args": true, "sys": true,
	"os": true, "req": true, "res": true, "ctx": true, "cls": true, "super": true, "window": true,
	"document": true, "err": true, "np": true, "std": true, "math": true, "console": true}

// wordTLDs are country-code top-level domains that are English words, and
// stopWords the words before them that make a sentence without a space
// ("did it.so there") rather than a host.
var wordTLDs = map[string]bool{"at": true, "be": true, "by": true, "do": true, "in": true, "is": true,
	"it": true, "me": true, "my": true, "no": true, "so": true, "to": true, "us": true, "am": true,
	"as": true, "id": true, "an": true}

var stopWords = map[string]bool{"it": true, "is": true, "this": true, "that": true, "there": true,
	"here": true, "me": true, "you": true, "we": true, "they": true, "he": true, "she": true, "so": true,
	"do": true, "to": true, "in": true, "at": true, "by": true, "be": true, "no": true, "yes": true,
	"up": true, "all": true, "them": true, "time": true, "now": true, "well": true, "one": true,
	"not": true, "and": true, "or": true, "but": true, "too": true, "out": true, "on": true, "go": true,
	"done": true, "him": true, "her": true, "us": true, "as": true, "if": true, "of": true, "what": true}

// domain finds a bare host name or IPv4 literal around the dot t[i] of
// line 0. When the word around the dot is no host, the result's next
// says where the word ends, so that its other dots are not tried again.
func (s *Scanner) domain(i int) (found, bool) {
	t := s.text(0)
	l0 := s.lines[0]
	lo := s.lowBound()
	blim, elim := max(lo, i-hostCap), min(len(t), i+hostCap)
	st := i
	for st > blim && isHostChar(t[st-1]) {
		st--
	}
	e := i
	for e < elim && isHostChar(t[e]) {
		e++
	}
	fail := found{l0.off + int64(e)}
	if st == blim && st > lo && isHostChar(t[st-1]) || e == elim && e < len(t) && isHostChar(t[e]) {
		return fail, false // longer than a host name
	}
	host := bytes.TrimRight(t[st:e], ".-")
	h := st + len(host)
	if len(host) < 4 || !isAlnum(host[0]) || !boundaryBefore(t, st) {
		return fail, false
	}
	if hasPrefixFold(host, "www.") || hasPrefixFold(host, "ftp.") {
		return fail, false // abbreviations are FormAbbrev's
	}
	if ip := uri.IsIPv4(host); ip && !s.ipv4OK(t, st, host) || !ip && !s.hostName(host) {
		return fail, false
	}
	if s.traceLine0() || codeLine(t, s.prefix(0)) || hiddenAddress(t, s.prefix(0), st, h) {
		return fail, false
	}
	end := h
	if h < len(t) && t[h] == ':' && h+1 < len(t) && isDigit(t[h+1]) { // a port
		end = h + 1
		for end < len(t) && isDigit(t[end]) && end-h <= 5 {
			end++
		}
	}
	if end < len(t) && (t[end] == '/' || t[end] == '?' || t[end] == '#') {
		var d brackets
		x, _ := s.extent(t, end, st+s.opt.MaxLinkLength, &d)
		end = trimTrail(t, st, x)
	} else if !boundaryAfter(t, end) || assigned(t, end) {
		return fail, false
	}
	lk := s.makeLink(t[st:end], nil, FormDomain, 0, st, l0.off+int64(st), l0.off+int64(end), nil)
	return found{lk.End}, true
}

// ipv4OK reports whether the IPv4 address host at t[st] is taken as a
// link: not in brackets as in a Received field ("[192.0.2.1]"), and,
// unless a port or a path follows, with a first number of 10 or more, so
// that version numbers (1.6.3.3, 2.6.32.1) are not taken.
func (s *Scanner) ipv4OK(t []byte, st int, host []byte) bool {
	if st > 0 && t[st-1] == '[' {
		return false
	}
	e := st + len(host)
	if e < len(t) && t[e] == ':' {
		return true
	}
	if e < len(t) && t[e] == '/' {
		return !netmask(t[e+1:])
	}
	return host[1] != '.' // "1.6.3.3"
}

// netmask reports whether what follows an IPv4 address's "/" makes it a
// network in CIDR notation ("172.31.0.250/24") or a bare "/" (as in
// "grep 172.31.0.250/"): digits alone or nothing before the word ends.
func netmask(t []byte) bool {
	i := 0
	for i < len(t) && i <= 3 && isDigit(t[i]) {
		i++
	}
	return i == len(t) || i <= 2 && !isHostChar(t[i]) && t[i] != '/' && t[i] != '?' && t[i] != '#' && t[i] != '%'
}

// traceFields are header fields whose host names are hosts of the mail's
// path, not links: quoted in bounces and delivery reports.
var traceFields = []string{"received:", "reporting-mta:", "remote-mta:", "received-from-mta:", "final-recipient:",
	"original-recipient:", "diagnostic-code:", "list-id:", "message-id:", "references:", "in-reply-to:",
	"return-path:", "authentication-results:", "dkim-signature:", "arc-", "x-"}

// traceLine reports whether the line t starts with a trace field, or is
// indented (by runCap bytes at most) and starts with "by " or "from " as
// the continuation lines of a Received field do.
func traceLine(t []byte) bool {
	if len(t) > 0 && (t[0] == ' ' || t[0] == '\t') {
		t = t[trimSpaceLeft(t[:min(len(t), runCap)]):]
		return hasPrefixFold(t, "by ") || hasPrefixFold(t, "from ")
	}
	for _, f := range traceFields {
		if hasPrefixFold(t, f) {
			return true
		}
	}
	return false
}

// hiddenAddress reports whether the host t[st:end] is the domain of an
// address that a list archive hid as "user at domain": " at " before it,
// and the address in angle brackets ("<keithp at keithp.com>") or
// parentheses ("(lars at example.edu)"), a user name no word has
// ("keith.packard at", "jan_k at"), the address alone in a quoted header
// field ("From: lars at example.edu") or followed by what an
// attribution line says ("lars at example.edu wrote:", "... did gyre and
// gimble:"). "available at example.org" stays a link. The line's quote
// prefix ends at t[pre]. The user is the runCap bytes before " at " at
// most, and the text around is looked at runCap bytes either way.
func hiddenAddress(t []byte, pre, st, end int) bool {
	if st >= 2 && t[st-1] == ' ' && t[st-2] == '@' {
		return true // "dave @ example.org", an address spaced out
	}
	if st < 5 || t[st-1] != ' ' || t[st-4] != ' ' || !bytes.EqualFold(t[st-3:st-1], []byte("at")) {
		return false
	}
	if end < len(t) && t[end] == '>' {
		return true
	}
	u := st - 4
	for u > 0 && st-4-u < runCap && t[u-1] != ' ' && t[u-1] != '\t' {
		u--
	}
	user := t[u : st-4]
	switch {
	case len(user) == 0:
		return false
	case user[0] == '<' || bytes.ContainsAny(user, "._+0123456789"):
		return true
	case user[0] == '(' && end < len(t) && t[end] == ')':
		return true
	}
	if u >= pre {
		b := t[max(pre, u-runCap):u] // what precedes it on its line, near it
		if addressField(b) || mailedTo(b, user) {
			return true
		}
	}
	return attribution(t[end:min(len(t), end+runCap)])
}

// mailVerbs are the words that take an address as their object ("mail
// lars at example.edu"); toVerbs take it after "to" ("write to lars at
// example.edu"), they and the mail verbs. ("report bugs at
// bugs.example.org" names a site.)
var (
	mailVerbs = map[string]bool{"mail": true, "email": true, "e-mail": true, "contact": true, "cc": true, "ping": true}
	toVerbs   = map[string]bool{"write": true, "send": true, "sent": true, "reply": true, "forward": true, "forwarded": true,
		"report": true, "complain": true}
)

// pronouns are users no address has ("write to us at example.org" names a
// site).
var pronouns = map[string]bool{"me": true, "us": true, "you": true, "him": true, "her": true, "them": true, "it": true}

// mailedTo reports whether user, the word before " at domain", is the
// object of a mail verb in b, what precedes it on its line: "mail lars
// at", "write to lars at", "sent it to lars at" (not a pronoun: "write
// to us at example.org" names a site).
func mailedTo(b, user []byte) bool {
	if pronouns[string(bytes.ToLower(user))] {
		return false
	}
	w, b := lastWord(b)
	if mailVerbs[w] {
		return true
	}
	if w != "to" {
		return false
	}
	w, b = lastWord(b)
	if pronouns[w] || w == "this" || w == "that" {
		w, _ = lastWord(b) // "send it to lars at"
	}
	return mailVerbs[w] || toVerbs[w]
}

// lastWord returns the last word of b (after white space or any other
// character), lower case: up to 10 letters and "-" ("" if it is longer,
// or none), and b before it.
func lastWord(b []byte) (string, []byte) {
	b = bytes.TrimRight(b, " \t")
	i := len(b)
	for i > 0 && len(b)-i < 10 && (b[i-1] >= 'a' && b[i-1] <= 'z' || b[i-1] >= 'A' && b[i-1] <= 'Z' || b[i-1] == '-') {
		i--
	}
	if i == len(b) || i > 0 && (b[i-1] >= 'a' && b[i-1] <= 'z' || b[i-1] >= 'A' && b[i-1] <= 'Z' || b[i-1] == '-') {
		return "", b[:i] // none, or longer than a mail verb
	}
	return strings.ToLower(string(b[i:])), b[:i]
}

// addressField reports whether b, what precedes an address on its line,
// is the name of a header field that holds addresses ("From: ").
func addressField(b []byte) bool {
	b = bytes.TrimSpace(b)
	for _, f := range []string{"from:", "to:", "cc:", "reply-to:", "sender:"} {
		if len(b) == len(f) && hasPrefixFold(b, f) {
			return true
		}
	}
	return false
}

// attributionVerbs are the words after the address in the line that
// introduces a quotation ("lars at example.edu wrote:").
var attributionVerbs = map[string]bool{"wrote": true, "writes": true, "said": true, "says": true, "did": true,
	"asked": true, "asks": true, "replied": true, "replies": true, "schrieb": true}

// attribution reports whether b, what follows an address, starts with
// an attribution verb, after a comment in parentheses if there is one
// ("lars at example.edu (Lars) wrote:").
func attribution(b []byte) bool {
	b = bytes.TrimLeft(b, " \t")
	if len(b) > 0 && b[0] == '(' {
		i := bytes.IndexByte(b, ')')
		if i < 0 {
			return false
		}
		b = bytes.TrimLeft(b[i+1:], " \t")
	}
	n := 0
	for n < len(b) && (b[n] >= 'a' && b[n] <= 'z' || b[n] >= 'A' && b[n] <= 'Z') {
		n++
	}
	return n > 0 && n <= 8 && attributionVerbs[string(bytes.ToLower(b[:n]))]
}

// assigned reports whether an assignment follows t[e] ("pvec.nr = n",
// "self.x=1"): code, not a host.
func assigned(t []byte, e int) bool {
	lim := min(len(t), e+runCap)
	for e < lim && t[e] == ' ' {
		e++
	}
	return e < len(t) && t[e] == '=' || e+1 < len(t) && t[e] == '-' && t[e+1] == '>'
}

func hasPrefixFold(b []byte, p string) bool {
	return len(b) >= len(p) && bytes.EqualFold(b[:len(p)], []byte(p))
}

// hostName reports whether host (letters, digits, "-" and ".") is a DNS
// name to take as a link: labels of 1 to 63 characters that neither
// start nor end with "-", a last label of letters that is lower case
// unless the whole name is upper case, and a public suffix of the ICANN
// section with a label before it; not a file name or a reversed package
// name.
func (s *Scanner) hostName(host []byte) bool {
	var lb [253]byte
	if len(host) > len(lb) || bytes.IndexByte(host, '.') < 0 {
		return false
	}
	lower := lb[:len(host)]
	hasLower := false
	labels, fe, ls := 0, 0, 0 // label count, end of the first, start of the last
	for st := 0; st <= len(host); {
		e := bytes.IndexByte(host[st:], '.')
		if e < 0 {
			e = len(host)
		} else {
			e += st
		}
		lab := host[st:e]
		if len(lab) == 0 || len(lab) > 63 || lab[0] == '-' || lab[len(lab)-1] == '-' {
			return false
		}
		for i, c := range lab {
			switch {
			case c >= 'A' && c <= 'Z':
				c += 'a' - 'A'
			case c >= 'a' && c <= 'z':
				hasLower = true
			}
			lower[st+i] = c
		}
		if st > 0 {
			lower[st-1] = '.'
		}
		if labels == 0 {
			fe = e
		}
		labels++
		ls = st
		st = e + 1
	}
	last := host[ls:]
	if labels < 2 || len(last) < 2 {
		return false
	}
	for _, c := range last {
		if !isAlpha(c) {
			return false // 1.2.3, v2.0b
		}
		if c >= 'A' && c <= 'Z' && hasLower {
			return false // "end.Next": a sentence without a space; com.example.Foo
		}
	}
	// map lookups with string(b) keys do not allocate
	first, tld := lower[:fe], lower[ls:]
	if string(lower) == "et.al" { // "et.al." in a citation
		return false
	}
	if labels == 2 && (fileTLDs[string(tld)] || codeReceivers[string(first)] || wordTLDs[string(tld)] && stopWords[string(first)]) {
		return false
	}
	if labels >= 3 && reversedFirst[string(first)] || usenetFirst[string(first)] {
		return false
	}
	name := string(lower)
	suffix, icann := publicsuffix.PublicSuffix(name)
	return icann && len(suffix) < len(name)
}

// ipv6 finds a bracketed IPv6 literal ([2001:db8::1], with a port and a
// path) whose first colon is t[c] (Options.BareDomains).
func (s *Scanner) ipv6(c int) (found, bool) {
	if !s.opt.BareDomains {
		return found{}, false
	}
	t := s.text(0)
	lo := s.lowBound()
	o := c
	for o > lo && (isHex(t[o-1]) || t[o-1] == '.') && c-o < maxIPv6 {
		o--
	}
	if o == lo || t[o-1] != '[' || !boundaryBefore(t, o-1) {
		return found{}, false
	}
	o--
	cl := bytes.IndexByte(t[c:min(len(t), o+maxIPv6+2)], ']')
	if cl < 0 {
		return found{}, false
	}
	cl += c
	a, err := netip.ParseAddr(string(t[o+1 : cl]))
	if err != nil || !a.Is6() || a.Zone() != "" {
		return found{}, false
	}
	end := cl + 1
	if end+1 < len(t) && t[end] == ':' && isDigit(t[end+1]) {
		end++
		for end < len(t) && isDigit(t[end]) && end-cl <= maxWord { // a port; a longer number is none
			end++
		}
	}
	if end < len(t) && (t[end] == '/' || t[end] == '?' || t[end] == '#') {
		var d brackets
		x, _ := s.extent(t, end, o+s.opt.MaxLinkLength, &d)
		end = trimTrail(t, o, x)
	} else if !boundaryAfter(t, end) {
		return found{}, false
	}
	l0 := s.lines[0]
	lk := s.makeLink(t[o:end], nil, FormDomain, 0, o, l0.off+int64(o), l0.off+int64(end), nil)
	return found{lk.End}, true
}

// maxIPv6 is the longest text of an IPv6 address
// (ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255).
const maxIPv6 = 45

func isHex(c byte) bool { return isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'f' || c == ':' }

// codeLine reports whether the line t, after its quote prefix of pre
// bytes, is an added or removed line of code in a patch: "+" or "-"
// followed by a tab or by two spaces, as an indented line of a diff is
// ("-\t\tfor (i = 0; i < pv.nr; i++)"). Its dotted names are fields of
// structures, not hosts. A list item ("- example.org") has one space.
func codeLine(t []byte, pre int) bool {
	if pre+2 >= len(t) || t[pre] != '+' && t[pre] != '-' {
		return false
	}
	return t[pre+1] == '\t' || t[pre+1] == ' ' && t[pre+2] == ' '
}
