package audit

import (
	"strings"
	"testing"
	"time"
)

// rfcRobots is the example file of RFC 9309 §5.1.
const rfcRobots = `User-Agent: *
Disallow: *.gif$
Disallow: /example/
Allow: /publications/

User-Agent: foobot
Disallow:/
Allow:/example/page.html
Allow:/example/allowed.gif

User-Agent: barbot
User-Agent: bazbot
Disallow: /example/page.html

User-Agent: quxbot

EOF
`

func TestRobots(t *testing.T) {
	big := "User-agent: *\n" + strings.Repeat("# padding padding padding padding padding padding padding\n", robotsMaxBytes/58+10) +
		"Disallow: /\n"
	cutAt := "User-agent: *\nDisallow: /keep\n" + strings.Repeat("#", robotsMaxBytes-len("User-agent: *\nDisallow: /keep\n")-14) +
		"\nDisallow: /private-area\n" // the limit falls inside this line, after "Disallow: /pr"
	for _, c := range []struct {
		name, body, token, path string
		want                    bool
	}{
		// RFC 9309 §5.1
		{"rfc *", rfcRobots, "linkscan", "/a/b.gif", false},
		{"rfc * $", rfcRobots, "linkscan", "/a/b.gif?x=1", true},
		{"rfc * dir", rfcRobots, "linkscan", "/example/x", false},
		{"rfc * allowed", rfcRobots, "linkscan", "/publications/x", true},
		{"rfc * other", rfcRobots, "linkscan", "/other", true},
		{"rfc foobot /", rfcRobots, "foobot", "/", false},
		{"rfc foobot other", rfcRobots, "foobot", "/other", false},
		{"rfc foobot allow", rfcRobots, "foobot", "/example/page.html", true},
		{"rfc foobot gif", rfcRobots, "foobot", "/example/allowed.gif", true},
		{"rfc barbot", rfcRobots, "barbot", "/example/page.html", false},
		{"rfc bazbot", rfcRobots, "bazbot", "/example/page.html", false},
		{"rfc barbot not *", rfcRobots, "barbot", "/x.gif", true},
		{"rfc quxbot no rules", rfcRobots, "quxbot", "/x.gif", true},
		{"rfc case", rfcRobots, "FooBot", "/other", false},
		// RFC 9309 §5.2: the longest match
		{"longest allow", "User-agent: *\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n", "x", "/example/page/a", true},
		{"longest disallow", "User-agent: *\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n", "x", "/example/page/disallowed.gif", false},
		// §2.2.2: allow wins a tie; no rule, or an empty one, allows
		{"tie", "User-agent: *\nDisallow: /p\nAllow: /p\n", "x", "/p", true},
		{"tie wildcards", "User-agent: *\nDisallow: /*a\nAllow: /a*\n", "x", "/aa", true},
		{"empty disallow", "User-agent: *\nDisallow:\n", "x", "/", true},
		{"empty file", "", "x", "/", true},
		{"no group", "Disallow: /\n", "x", "/", true},
		{"other agent only", "User-agent: other\nDisallow: /\n", "linkscan", "/", true},
		// §2.2.2: percent-encoding
		{"encoded unreserved in pattern", "User-agent: *\nDisallow: /foo/bar/%62%61%7A\n", "x", "/foo/bar/baz", false},
		{"encoded unreserved in path", "User-agent: *\nDisallow: /foo/bar/baz\n", "x", "/foo/%62ar/baz", false},
		{"utf-8 pattern", "User-agent: *\nDisallow: /foo/bar/ツ\n", "x", "/foo/bar/%E3%83%84", false},
		{"hex case", "User-agent: *\nDisallow: /foo/bar/%E3%83%84\n", "x", "/foo/bar/%e3%83%84", false},
		{"reserved stays encoded", "User-agent: *\nDisallow: /a%2Fb\n", "x", "/a/b", true},
		// §2.2.3: special characters
		{"star", "User-agent: *\nDisallow: /a*c\n", "x", "/abbbc/d", false},
		{"star no", "User-agent: *\nDisallow: /a*c\n", "x", "/abbb", true},
		{"dollar", "User-agent: *\nDisallow: /a$\n", "x", "/a", false},
		{"dollar longer", "User-agent: *\nDisallow: /a$\n", "x", "/ab", true},
		{"star dollar", "User-agent: *\nDisallow: /*.php$\n", "x", "/x/y.php", false},
		{"star dollar query", "User-agent: *\nDisallow: /*.php$\n", "x", "/x/y.php?a", true},
		{"stars", "User-agent: *\nDisallow: /a*b*c$\n", "x", "/aXbYbZc", false},
		{"stars no", "User-agent: *\nDisallow: /a*b*c$\n", "x", "/aXbYcZ", true},
		{"query", "User-agent: *\nDisallow: /search?q=\n", "x", "/search?q=cats", false},
		// §2.2.1: groups and user agents
		{"token match", "User-agent: LinkScan/2.0 (compatible)\nDisallow: /x\n", "linkscan", "/x", false},
		{"token prefix is not the token", "User-agent: linkscanner\nDisallow: /x\n", "linkscan", "/x", true},
		{"own group wins over *", "User-agent: *\nDisallow: /\n\nUser-agent: linkscan\nAllow: /\n", "linkscan", "/x", true},
		{"own empty group wins over *", "User-agent: linkscan\nDisallow:\n\nUser-agent: *\nDisallow: /\n", "linkscan", "/x", true},
		{"one group, two agents", "User-agent: linkscan\nUser-agent: *\nDisallow: /x\n", "linkscan", "/x", false},
		{"own groups combined", "User-agent: linkscan\nDisallow: /a\n\nUser-agent: other\nDisallow: /b\n\nUser-agent: linkscan\nDisallow: /c\n", "linkscan", "/c", false},
		{"combined, other's rule not", "User-agent: linkscan\nDisallow: /a\n\nUser-agent: other\nDisallow: /b\n\nUser-agent: linkscan\nDisallow: /c\n", "linkscan", "/b", true},
		{"rule before any agent", "Disallow: /x\nUser-agent: *\nDisallow: /y\n", "x", "/x", true},
		{"sitemap keeps the group", "User-agent: *\nSitemap: https://h/s.xml\nDisallow: /x\n", "x", "/x", false},
		// the syntax around
		{"comments", "# c\nUser-agent: * # all\nDisallow: /x # not /y\n", "x", "/x", false},
		{"comment in pattern", "User-agent: *\nDisallow: /x#y\n", "x", "/xz", false},
		{"crlf", "User-agent: *\r\nDisallow: /x\r\n", "x", "/x", false},
		{"cr", "User-agent: *\rDisallow: /x\r", "x", "/x", false},
		{"bom", "\xef\xbb\xbfUser-agent: *\nDisallow: /x\n", "x", "/x", false},
		{"key case and spaces", "USER-AGENT : *\n  disallow :  /x  \n", "x", "/x", false},
		{"no slash", "User-agent: *\nDisallow: private\n", "x", "/private/a", false},
		{"robots.txt always allowed", "User-agent: *\nDisallow: /\n", "x", "/robots.txt", true},
		{"garbage lines", "User-agent: *\n<html>\nnonsense\nDisallow: /x\n", "x", "/x", false},
		// §2.5: 500 KiB read
		{"past the limit", big, "x", "/", true},
		{"line cut at the limit", cutAt, "x", "/pr", true},
		{"before the limit", cutAt, "x", "/keep", false},
	} {
		r := parseRobots([]byte(c.body), c.token)
		if got, rule := r.allowed(c.path); got != c.want {
			t.Errorf("%s: allowed(%q) = %v (rule %+v), want %v", c.name, c.path, got, rule, c.want)
		}
	}
}

func TestRobotsCrawlDelay(t *testing.T) {
	for _, c := range []struct {
		body string
		want time.Duration
		own  bool
	}{
		{"User-agent: *\nCrawl-delay: 2\n", 2 * time.Second, false},
		{"User-agent: *\nCrawl-delay: 0.5\n", 500 * time.Millisecond, false},
		{"User-agent: *\nCrawl-delay: -1\n", 0, false},
		{"User-agent: *\nCrawl-delay: soon\n", 0, false},
		{"User-agent: *\nCrawl-delay: NaN\n", 0, false},
		{"User-agent: *\nCrawl-delay: 1e30\n", 86400 * time.Second, false},
		{"User-agent: *\nCrawl-delay: 9\n\nUser-agent: linkscan\nCrawl-delay: 1\n", time.Second, true},
		{"User-agent: linkscan\nCrawl-delay: 1\nCrawl-delay: 3\n", 3 * time.Second, true},
		{"User-agent: other\nCrawl-delay: 4\n", 0, false},
	} {
		r := parseRobots([]byte(c.body), "linkscan")
		if r.crawlDelay != c.want || r.own != c.own {
			t.Errorf("%q: crawl delay %v own %v, want %v %v", c.body, r.crawlDelay, r.own, c.want, c.own)
		}
	}
}

func TestRobotsNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"/a/b":         "/a/b",
		"/%7Euser":     "/~user",
		"/%7euser":     "/~user",
		"/%2f":         "/%2F",
		"/%zz":         "/%zz",
		"/%":           "/%",
		"/a b":         "/a%20b",
		"/ツ":           "/%E3%83%84",
		"/%e3%83%84":   "/%E3%83%84",
		"/*.gif$":      "/*.gif$",
		"/%41%2a%24":   "/A%2A%24",
		"/\x7f\x00end": "/%7F%00end",
	} {
		if got := robotsNormalize(in); got != want {
			t.Errorf("robotsNormalize(%q) = %q, want %q", in, got, want)
		}
		if again := robotsNormalize(robotsNormalize(in)); again != robotsNormalize(in) {
			t.Errorf("robotsNormalize(%q) not idempotent: %q", in, again)
		}
	}
}

// matchSlow is robotsMatch by plain backtracking, the reference of the
// fuzz test.
func matchSlow(pattern, path string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	if anchored {
		pattern = pattern[:len(pattern)-1]
	}
	var m func(p, s string) bool
	m = func(p, s string) bool {
		if p == "" {
			return !anchored || s == ""
		}
		if p[0] == '*' {
			for i := 0; i <= len(s); i++ {
				if m(p[1:], s[i:]) {
					return true
				}
			}
			return false
		}
		return s != "" && s[0] == p[0] && m(p[1:], s[1:])
	}
	return m(pattern, path)
}

func TestRobotsMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, path string
	}{
		{"/", "/"}, {"/a", "/"}, {"/a$", "/a"}, {"/a$", "/ab"}, {"*", ""}, {"*$", "/x"}, {"/*", "/"},
		{"/a*a", "/a"}, {"/a*a", "/aa"}, {"/a*a$", "/aab"}, {"/a*a$", "/aba"}, {"/**", "/x"},
		{"/*b*b$", "/bb"}, {"/*b*b$", "/bxb"}, {"/*ab*ab$", "/abab"}, {"/*ab*ab$", "/aba"},
		{"/$", "/"}, {"$", ""}, {"$", "/"}, {"/x$y", "/x$y"}, {"/x$y", "/x"},
	} {
		if got, want := robotsMatch(c.pattern, c.path), matchSlow(c.pattern, c.path); got != want {
			t.Errorf("robotsMatch(%q, %q) = %v, want %v", c.pattern, c.path, got, want)
		}
	}
}

// FuzzRobots parses any file and matches any path: no panic, the matcher
// agrees with backtracking on every rule, the decision is the longest
// matching rule's (allow on a tie), and /robots.txt is always allowed.
func FuzzRobots(f *testing.F) {
	f.Add([]byte(rfcRobots), "/example/page.html", "foobot")
	f.Add([]byte("User-agent: *\nDisallow: /a*b$\nAllow: /a\n"), "/axb", "linkscan")
	f.Add([]byte("User-agent: linkscan\r\nDisallow: /%7e\rCrawl-delay: 3\n"), "/~x", "linkscan")
	f.Add([]byte("\xef\xbb\xbfuser-agent:*\ndisallow:*$"), "/", "x")
	f.Fuzz(func(t *testing.T, body []byte, path, token string) {
		if len(path) > 200 {
			path = path[:200] // the reference backtracks
		}
		r := parseRobots(body, token)
		ok, rule := r.allowed(path)
		p := robotsNormalize(path)
		best := -1
		bestAllow := true
		for _, x := range r.rules {
			if strings.Count(x.pattern, "*") > 8 || len(x.pattern) > 200 {
				continue // too slow for the reference; still run below
			}
			m := robotsMatch(x.pattern, p)
			if m != matchSlow(x.pattern, p) {
				t.Fatalf("robotsMatch(%q, %q) = %v, backtracking says otherwise", x.pattern, p, m)
			}
			if m && (len(x.pattern) > best || len(x.pattern) == best && x.allow) {
				best, bestAllow = len(x.pattern), x.allow
			}
		}
		simple := true
		for _, x := range r.rules {
			if strings.Count(x.pattern, "*") > 8 || len(x.pattern) > 200 {
				simple = false
			}
		}
		if simple && path != "/robots.txt" && ok != bestAllow {
			t.Fatalf("allowed(%q) = %v (rule %+v), the longest match says %v", path, ok, rule, bestAllow)
		}
		if ok2, _ := r.allowed("/robots.txt"); !ok2 {
			t.Fatalf("/robots.txt disallowed")
		}
		if r.crawlDelay < 0 || r.crawlDelay > 86400*time.Second {
			t.Fatalf("crawl delay %v", r.crawlDelay)
		}
		if robotsNormalize(p) != p {
			t.Fatalf("robotsNormalize not idempotent on %q", path)
		}
	})
}
