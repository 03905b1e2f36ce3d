package audit

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"time"
)

// The robots.txt parser and matcher (RFC 9309, the Robots Exclusion
// Protocol), written here rather than taken from a library: the Go
// library considered, github.com/temoto/robotstxt, had its last release
// in March 2021, before RFC 9309 (September 2022), and differs from it
// where an audit needs it: of an Allow and a Disallow rule of the same
// length it obeys the one written first, where RFC 9309 §2.2.2 says the
// Allow rule should win; a rule with wildcards is as long as the regular
// expression made of it, not as its octets; a group applies to every
// User-Agent that begins with its name ("link" to "linkscan/0.4"), not to
// the product token alone; and a rule before any user-agent line, or a
// Crawl-delay that is not a number, makes it refuse the whole file. What
// is here is small, held to RFC 9309's examples by TestRobots, and fuzzed
// (FuzzRobots, whose matcher is compared with a plain backtracking one).
//
// Deviations and choices, all RFC 9309 leaves open:
//   - Lines are read up to robotsMaxBytes (500 KiB, the least §2.5
//     allows); a line cut there is dropped.
//   - A key is case-insensitive and may have spaces before its colon; a
//     line without a colon, or with an unknown key, is ignored (and ends
//     no group; sitemap lines neither).
//   - A user-agent value matches the product token when its leading run
//     of letters, "_" and "-" equals the token, case-insensitively
//     ("linkscan/1.0" matches "linkscan"); "*" (and "*" followed by
//     anything) is the catch-all group.
//   - A rule value that starts with neither "/" nor "*" gets a "/" in
//     front; an empty value is no rule.
//   - Crawl-delay (not in RFC 9309) is read as seconds, decimals allowed,
//     from the groups obeyed, the longest taken.

// robotsMaxBytes is how much of a robots.txt file is read (RFC 9309 §2.5:
// at least 500 kibibytes).
const robotsMaxBytes = 500 << 10

// robotsRule is one allow or disallow rule, its pattern normalized
// (robotsNormalize).
type robotsRule struct {
	allow   bool
	pattern string
}

// robotsRules are the rules of the groups that apply to one product
// token, and what else the audit needs of a robots.txt file.
type robotsRules struct {
	rules      []robotsRule
	crawlDelay time.Duration // 0: none given
	own        bool          // the groups are the token's own, not "*"
}

// parseRobots reads a robots.txt file (at most robotsMaxBytes of it) and
// returns the rules that apply to token: those of every group naming it,
// else those of every "*" group, else none (RFC 9309 §2.2.1).
func parseRobots(body []byte, token string) robotsRules {
	if len(body) > robotsMaxBytes {
		body = body[:robotsMaxBytes]
		if i := bytes.LastIndexAny(body, "\r\n"); i >= 0 {
			body = body[:i] // the line cut at the limit
		} else {
			body = nil
		}
	}
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	var own, star robotsRules
	var inOwn, inStar bool // the group being read names the token, "*"
	sawOwn := false        // a group names the token (if without rules, it still is the one obeyed)
	inRules := true        // the last line of the group was a rule: a user-agent begins another
	for len(body) > 0 {
		var line []byte
		if i := bytes.IndexAny(body, "\r\n"); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			line, body = body, nil
		}
		if i := bytes.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		key := strings.ToLower(string(bytes.TrimSpace(k)))
		val := string(bytes.TrimSpace(v))
		switch key {
		case "user-agent":
			if inRules {
				inOwn, inStar, inRules = false, false, false
			}
			switch {
			case strings.HasPrefix(val, "*"):
				inStar = true
			case agentToken(val) != "" && strings.EqualFold(agentToken(val), token):
				inOwn, sawOwn = true, true
			}
		case "allow", "disallow":
			inRules = true
			if val == "" || !inOwn && !inStar {
				continue
			}
			if val[0] != '/' && val[0] != '*' {
				val = "/" + val
			}
			r := robotsRule{allow: key == "allow", pattern: robotsNormalize(val)}
			if inOwn {
				own.rules = append(own.rules, r)
			}
			if inStar {
				star.rules = append(star.rules, r)
			}
		case "crawl-delay":
			inRules = true
			d, ok := crawlDelay(val)
			if !ok {
				continue
			}
			if inOwn && d > own.crawlDelay {
				own.crawlDelay = d
			}
			if inStar && d > star.crawlDelay {
				star.crawlDelay = d
			}
		}
	}
	if sawOwn {
		own.own = true
		return own
	}
	return star
}

// agentToken returns the product token at the start of a user-agent value:
// its leading letters, "_" and "-" (RFC 9309 §2.2.1).
func agentToken(v string) string {
	i := 0
	for i < len(v) {
		c := v[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '-' {
			i++
			continue
		}
		break
	}
	return v[:i]
}

// crawlDelay reads a Crawl-delay value in seconds (decimals allowed).
func crawlDelay(v string) (time.Duration, bool) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || f <= 0 {
		return 0, false
	}
	if f > 86400 {
		f = 86400
	}
	return time.Duration(f * float64(time.Second)), true
}

// allowed reports whether path (the URL's path and query, as sent) may be
// fetched, and the rule that decided ("" when none did): the rule with
// the longest pattern that matches wins, Allow over Disallow on a tie
// (RFC 9309 §2.2.2); no match allows. /robots.txt is always allowed.
func (r *robotsRules) allowed(path string) (bool, *robotsRule) {
	if path == "/robots.txt" {
		return true, nil
	}
	p := robotsNormalize(path)
	var best *robotsRule
	for i := range r.rules {
		rule := &r.rules[i]
		if best != nil && (len(rule.pattern) < len(best.pattern) || len(rule.pattern) == len(best.pattern) && !rule.allow) {
			continue
		}
		if robotsMatch(rule.pattern, p) {
			if best == nil || len(rule.pattern) > len(best.pattern) || rule.allow {
				best = rule
			}
		}
	}
	if best == nil {
		return true, nil
	}
	return best.allow, best
}

// robotsMatch reports whether pattern (normalized) matches the start of
// path (normalized): "*" matches any run of octets, a final "$" the end
// of the path (RFC 9309 §2.2.3). The pieces between stars are matched
// leftmost, which for stars alone finds a match whenever there is one, in
// time linear in the pieces' searches.
func robotsMatch(pattern, path string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	if anchored {
		pattern = pattern[:len(pattern)-1]
	}
	pieces := strings.Split(pattern, "*")
	first := pieces[0]
	if !strings.HasPrefix(path, first) {
		return false
	}
	if len(pieces) == 1 {
		return !anchored || len(path) == len(first)
	}
	rest := path[len(first):]
	last := pieces[len(pieces)-1]
	for _, piece := range pieces[1 : len(pieces)-1] {
		i := strings.Index(rest, piece)
		if i < 0 {
			return false
		}
		rest = rest[i+len(piece):]
	}
	if anchored {
		return strings.HasSuffix(rest, last)
	}
	return strings.Contains(rest, last)
}

// robotsNormalize writes a path or pattern in the one form both are
// compared in (RFC 9309 §2.2.2): octets outside US-ASCII, and controls
// and spaces, percent-encoded; percent-encoded unreserved characters
// (letters, digits, "-", ".", "_", "~") decoded; the hex digits of the
// other escapes in upper case. "*" and "$" are left as they are.
func robotsNormalize(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || c <= ' ' || c == 0x7f || c == '%' {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && ishex(s[i+1]) && ishex(s[i+2]):
			d := unhex(s[i+1])<<4 | unhex(s[i+2])
			if unreserved(d) {
				b.WriteByte(d)
			} else {
				b.WriteByte('%')
				b.WriteByte(hex[d>>4])
				b.WriteByte(hex[d&15])
			}
			i += 2
		case c >= 0x80 || c <= ' ' || c == 0x7f:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func ishex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

func unreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}
