package uri

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// hostCase is a URL whose first problem is err at offset.
type hostCase struct {
	in     string
	err    error
	offset int
}

func checkFirstProblem(t *testing.T, class string, tests []hostCase) {
	t.Helper()
	for _, tt := range tests {
		u, err := Parse(tt.in)
		if u == nil {
			t.Errorf("%s: Parse(%q) = nil URL", class, tt.in)
			continue
		}
		var e *Error
		if !errors.Is(err, tt.err) || !errors.As(err, &e) || e.Offset != tt.offset {
			t.Errorf("%s: Parse(%q) error = %v, want %v at offset %d", class, tt.in, err, tt.err, tt.offset)
		}
	}
}

func TestHostProblemsIssueCases(t *testing.T) {
	// the cases of issue #12, "Hosts and addresses"
	checkFirstProblem(t, "issue", []hostCase{
		{"http://u:p@a@b.example/", ErrUserinfoAt, 10},
		{"http://.a.example", ErrEmptyLabel, 7},
		{"https://x.-y.example", ErrLabelHyphen, 10},
		{"http://www.a..example", ErrEmptyLabel, 13},
		{"https://=go.microsoft.com/", ErrHostChar, 8},
	})
}

func TestHostProblemsUserinfo(t *testing.T) {
	checkFirstProblem(t, "userinfo", []hostCase{
		{"http://a@b@c.example/", ErrUserinfoAt, 8},
		{"ftp://user@host@ftp.example/pub", ErrUserinfoAt, 10},
		{"http://@@c.example/", ErrUserinfoAt, 7},
		{"telnet://u:p@ss@t.example/", ErrUserinfoAt, 12},
		{"x-any://a@b@c/", ErrUserinfoAt, 9}, // every scheme: RFC 3986 §3.2.1
	})
	for _, s := range []string{"http://u%40x:p%40y@b.example/", "http://@b.example/", "http://u:@b.example/", "http://a.example/@x@y"} {
		if u, err := Parse(s); err != nil || !u.Valid() {
			t.Errorf("Parse(%q) = %v, want valid", s, err)
		}
	}
	// the host is what follows the last "@", as net/url reads it
	if u, _ := Parse("http://u:p@a@b.example/"); u.Host != "b.example" || u.Password != "p@a" {
		t.Errorf("host %q, password %q", u.Host, u.Password)
	}
}

func TestHostProblemsLabels(t *testing.T) {
	l63 := strings.Repeat("a", 63)
	checkFirstProblem(t, "labels", []hostCase{
		{"http://a..b/", ErrEmptyLabel, 9},
		{"http://./", ErrEmptyLabel, 7},
		{"http://../", ErrEmptyLabel, 7},
		{"http://a.b../", ErrEmptyLabel, 11},
		{"http://.a.example:80/", ErrEmptyLabel, 7},
		{"http://-a.example/", ErrLabelHyphen, 7},
		{"http://a-.example/", ErrLabelHyphen, 8},
		{"http://a.example-/", ErrLabelHyphen, 16},
		{"http://-/", ErrLabelHyphen, 7},
		{"http://a.-/", ErrLabelHyphen, 9},
		{"http://" + l63 + "a.example/", ErrLabelTooLong, 70},
		{"http://x." + l63 + "a/", ErrLabelTooLong, 72},
		{"ftp://a..b/pub", ErrEmptyLabel, 8},
		{"gopher://-g.example/1", ErrLabelHyphen, 9},
		{"news://a..b/comp.lang", ErrEmptyLabel, 9},
		{"file://a..b/etc", ErrEmptyLabel, 9},
		// unknown schemes: the label rules hold for names that look like DNS names
		{"x-foo://a..b/", ErrEmptyLabel, 10},
		{"ssh://-git.example/", ErrLabelHyphen, 6},
	})
	// 4 labels of 63 and dots: 255 bytes
	long := strings.Join([]string{l63, l63, l63, l63}, ".")
	checkFirstProblem(t, "length", []hostCase{
		{"http://" + long + "/", ErrHostTooLong, 7 + 253},
		{"http://" + long[:254] + "/", ErrHostTooLong, 7 + 253},
	})
}

func TestHostProblemsChars(t *testing.T) {
	checkFirstProblem(t, "characters", []hostCase{
		{"https://=go.microsoft.com/", ErrHostChar, 8},
		{"http://go.microsoft.com=/", ErrHostChar, 23},
		{"http://a!b.example/", ErrHostChar, 8},
		{"http://a~b.example/", ErrHostChar, 8},
		{"http://a,b.example/", ErrHostChar, 8},
		{"http://a[b]/", ErrHostChar, 8},
		{"http://a%2Fb.example/", ErrHostChar, 8},        // an escape decoded to "/"
		{"http://a%20b.example/", ErrHostChar, 8},        // and to a space
		{"http://ab%2E%2Ec.example/", ErrEmptyLabel, 12}, // escapes of dots
		{"http://a.example%3A80/", ErrHostChar, 16},
		{"x-foo://a[b]/", ErrHostChar, 9}, // no reg-name holds a bracket
		// what checkChars finds in a host is not reported twice
		{"http://a b.example/", ErrBadChar, 8},
		{"http://a%zz.example/", ErrBadEscape, 8},
	})
	for _, s := range []string{"http://a b.example/", "http://a%zz.example/", "http://a<b>.example/"} {
		u, _ := Parse(s)
		for _, p := range u.Problems {
			if errors.Is(p, ErrBadHost) {
				t.Errorf("Parse(%q): %v reported as well", s, p)
			}
		}
	}
}

func TestHostProblemsNumeric(t *testing.T) {
	checkFirstProblem(t, "IPv4", []hostCase{
		{"http://a.123/", ErrBadIPv4, 7},
		{"http://1.2.3/", ErrBadIPv4, 7},
		{"http://1.2.3.4.5/", ErrBadIPv4, 7},
		{"http://1.2.3.256/", ErrBadIPv4, 7},
		{"http://01.2.3.4/", ErrBadIPv4, 7}, // octal to C, decimal to RFC 3986: neither
		{"http://1.2.3.04/", ErrBadIPv4, 7},
		{"http://0x7f.0.0.1/", ErrBadIPv4, 7},
		{"http://127.0.0.0x1/", ErrBadIPv4, 7},
		{"http://a.0x1f/", ErrBadIPv4, 7},
		{"http://2130706433/", ErrBadIPv4, 7}, // 127.0.0.1 as one number
		{"http://1.2.3.4./", ErrBadIPv4, 7},
		{"ftp://1.2.3.4444/", ErrBadIPv4, 6},
		{"http://[1.2.3.4]/", ErrBadIPLiteral, 7}, // IPv4 has no brackets in a URL
	})
}

func TestHostProblemsIPLiteral(t *testing.T) {
	checkFirstProblem(t, "IP literal", []hostCase{
		{"http://[::1/", ErrBadIPLiteral, 7},
		{"http://[::1]x/", ErrBadIPLiteral, 12},
		{"http://[::1]x:8080/", ErrBadIPLiteral, 12},
		{"http://[]/", ErrBadIPLiteral, 7},
		{"http://[:]/", ErrBadIPLiteral, 7},
		{"http://[:::]/", ErrBadIPLiteral, 7},
		{"http://[1:2:3:4:5:6:7]/", ErrBadIPLiteral, 7},
		{"http://[1:2:3:4:5:6:7:8:9]/", ErrBadIPLiteral, 7},
		{"http://[1::2::3]/", ErrBadIPLiteral, 7},
		{"http://[12345::]/", ErrBadIPLiteral, 7},
		{"http://[1:2:3:4:5:6:7:]/", ErrBadIPLiteral, 7},
		{"http://[:1:2:3:4:5:6:7]/", ErrBadIPLiteral, 7},
		{"http://[1::2:3:4:5:6:7:8]/", ErrBadIPLiteral, 7},
		{"http://[::1.2.3]/", ErrBadIPLiteral, 7},
		{"http://[::1.2.3.04]/", ErrBadIPLiteral, 7},
		{"http://[1.2.3.4::]/", ErrBadIPLiteral, 7},
		{"http://[1:2:3:4:5:6:7:1.2.3.4]/", ErrBadIPLiteral, 7},
		{"http://[::g]/", ErrBadIPLiteral, 10},
		{"http://[fe80::1%25eth0]/", ErrBadIPLiteral, 15}, // RFC 6874 zones are not taken
		{"http://[v1]/", ErrBadIPLiteral, 7},
		{"http://[v.x]/", ErrBadIPLiteral, 7},
		{"http://[v1.]/", ErrBadIPLiteral, 7},
		{"http://[vg.x]/", ErrBadIPLiteral, 7},
		{"http://[v1.x/y]/", ErrBadIPLiteral, 7},
	})
	// the text after a bad literal stays in the host and in the canonical form
	if c, _ := Canonical("http://[::1]X:8080/"); c != "http://[::1]x:8080/" {
		t.Errorf("canonical = %q", c)
	}
}

func TestHostProblemsIDN(t *testing.T) {
	checkFirstProblem(t, "IDN", []hostCase{
		{"http://\u2488x.com/", ErrBadIDN, 7},
		{"http://a.\u2488x.com/", ErrBadIDN, 9},
		{"http://xn--zz.org/", ErrBadIDN, 7},
		{"http://a.xn--.org/", ErrLabelHyphen, 12},
		{"http://a.xn---bcher-kva.org/", ErrLabelHyphen, 9}, // the U-label "-bücher"
		{"http://www.xn--a.com/", ErrBadIDN, 11},
		{"http://b\u00fccher..example/", ErrEmptyLabel, 7},  // found in the A-label name
		{"http://-b\u00fccher.example/", ErrLabelHyphen, 7}, // found in the A-label name
		{"http://b\u00fc_cher.example/", ErrBadIDN, 8},      // IDNA's STD3 rules refuse "_"
		{"http://%FF.example/", ErrBadIDN, 7},               // escapes that are not UTF-8
		{"http://a%C3.example/", ErrBadIDN, 8},
		{"http://b\u00fccher.123/", ErrBadIPv4, 7},
		{"http://\u0627\u0644a1.example/", ErrBadIDN, 7}, // the Bidi rule (RFC 5893)
		{"http://" + strings.Repeat("\u00fc", 60) + ".example/", ErrLabelTooLong, 7},
		{"x-foo://b\u00fc!/", ErrBadIDN, 9},
		{"http://" + strings.Repeat("\u00fc\u4f8b", 700) + "/", ErrHostTooLong, 7}, // not given to IDNA at all
	})
	for _, s := range []string{"http://B\u00fccher.example/", "http://%E4%BE%8B.jp/", "http://xn--bcher-kva.example/", "http://XN--BCHER-KVA.example/",
		"http://\u4f8b\u3048.jp/", "http://a\u3002example/", "http://r3---sn.b\u00fccher.example/", "http://xn--ls8h.la/", "x-foo://b\u00fccher/"} {
		if u, err := Parse(s); err != nil || !u.Valid() {
			t.Errorf("Parse(%q) = %v, want valid", s, err)
		}
	}
}

func TestHostValid(t *testing.T) {
	l63 := strings.Repeat("a", 63)
	for _, s := range []string{
		"http://a/", "http://localhost/", "http://a.example/", "http://A.EXAMPLE/", "http://a.example./",
		"http://a-b.example/", "http://a--b.example/", "http://r3---sn-apo3qvuoxuxbt-j5pe.googlevideo.com/",
		"http://my_blog.blogspot.com/", "http://_dmarc.example/", "http://_/", "http://a_.example/",
		"http://3com.com/", "http://1a.example/", "http://a.1com/", "http://0x7f.org/", "http://a.0xg/",
		"http://1.2.3.4/", "http://0.0.0.0:80/", "http://255.255.255.255/", "http://" + l63 + ".example/",
		"http://" + strings.Join([]string{l63, l63, l63, l63[:61]}, ".") + "/", // 253 bytes
		"http://" + strings.Join([]string{l63, l63, l63, l63[:61]}, ".") + "./",
		"http://[::1]/", "http://[::]/", "http://[::1]:8080/", "http://[1:2:3:4:5:6:7:8]/", "http://[1::]/",
		"http://[::ffff:1.2.3.4]/", "http://[1:2:3:4:5:6:1.2.3.4]/", "http://[FEDC:BA98::7654:3210]/",
		"http://[0001:0:0:0:0:0:0:1]/", "http://[v1.x]/", "http://[V7F.a:b!$]/",
		"http://%61.example/", "http://a%5Fb.example/", "http://u:p@a.example:8080/",
		"file:///etc/x", "file://localhost/etc/x", "news://news.example/comp.lang.go",
		// other schemes: RFC 3986 reg-names, DNS rules only for DNS-like names
		"mongodb://h1,h2,h3/db", "x-foo://a!b$c/", "x-foo://12345/", "x-foo://a.123/", "x-foo://a%2Fb/",
		"x-foo://~user/", "x-foo:///path", "ssh://git@github.com/x",
		"x-foo://" + strings.Repeat("%21", 2000) + "/", // RFC 3986 sets reg-names no length
	} {
		if u, err := Parse(s); err != nil || !u.Valid() {
			t.Errorf("Parse(%q) = %v, want valid", s, err)
		}
	}
}

func TestValidHost(t *testing.T) {
	for _, tt := range []struct {
		host   string
		err    error
		offset int
	}{
		{"a.example", nil, 0}, {"b\u00fccher.example", nil, 0}, {"[::1]", nil, 0}, {"1.2.3.4", nil, 0}, {"a_b.example", nil, 0},
		{"", ErrEmptyHost, 0}, {"a..b", ErrEmptyLabel, 2}, {"=go.example", ErrHostChar, 0}, {"a.example:80", ErrHostChar, 9},
		{"u@a.example", ErrHostChar, 1}, {"a b", ErrHostChar, 1}, {"a/b", ErrHostChar, 1}, {"1.2.3", ErrBadIPv4, 0},
		{"[::1", ErrBadIPLiteral, 0}, {"[::1]:80", ErrBadIPLiteral, 0}, {"a%zz", ErrBadEscape, 1}, {"a%2", ErrBadEscape, 1},
		{"xn--zz.example", ErrBadIDN, 0}, {"\u2488", ErrBadIDN, 0}, {"a\x00b", ErrHostChar, 1},
	} {
		err := ValidHost(tt.host)
		if tt.err == nil {
			if err != nil {
				t.Errorf("ValidHost(%q) = %v", tt.host, err)
			}
			continue
		}
		var e *Error
		if !errors.Is(err, tt.err) || !errors.As(err, &e) || e.Offset != tt.offset || e.Op != "host" || e.URL != tt.host {
			t.Errorf("ValidHost(%q) = %#v, want %v at %d", tt.host, err, tt.err, tt.offset)
		}
	}
	// every kind of host problem is an ErrBadHost
	for _, k := range []error{ErrHostChar, ErrEmptyLabel, ErrLabelHyphen, ErrLabelTooLong, ErrHostTooLong, ErrBadIPv4, ErrBadIPLiteral, ErrBadIDN} {
		if !errors.Is(k, ErrBadHost) || !strings.HasPrefix(k.Error(), ErrBadHost.Error()+": ") {
			t.Errorf("%v does not wrap ErrBadHost", k)
		}
	}
}

func TestIPAddresses(t *testing.T) {
	for _, tt := range []struct {
		s        string
		v4, v6ok bool
	}{
		{"1.2.3.4", true, false}, {"0.0.0.0", true, false}, {"255.255.255.255", true, false}, {"256.1.1.1", false, false},
		{"1.2.3", false, false}, {"1.2.3.4.", false, false}, {".1.2.3.4", false, false}, {"1..2.3", false, false},
		{"00.1.2.3", false, false}, {"1.2.3.4 ", false, false}, {"1234.1.1.1", false, false}, {"", false, false},
		{"::", false, true}, {"::1", false, true}, {"1::", false, true}, {"1:2:3:4:5:6:7:8", false, true},
		{"1:2:3:4:5:6:7::", false, true}, {"::2:3:4:5:6:7:8", false, true}, {"1::8", false, true},
		{"::ffff:1.2.3.4", false, true}, {"1:2:3:4:5:6:1.2.3.4", false, true}, {"::1.2.3.4", false, true},
		{"1:2:3:4:5:6:7:8:9", false, false}, {"1:2:3:4:5:6:7", false, false}, {":1::", false, false}, {"1::2::3", false, false},
		{"1:::2", false, false}, {"12345::", false, false}, {"1:2:3:4:5:6:7:1.2.3.4", false, false}, {"::1.2.3", false, false},
		{"1.2.3.4::", false, false}, {"::1:", false, false}, {"g::", false, false},
	} {
		if got := IsIPv4(tt.s); got != tt.v4 {
			t.Errorf("IsIPv4(%q) = %v", tt.s, got)
		}
		if got := validIPv6(tt.s); got != tt.v6ok {
			t.Errorf("validIPv6(%q) = %v", tt.s, got)
		}
		agreeNetip(t, tt.s)
	}
}

// agreeNetip holds IsIPv4 and validIPv6 to net/netip, which reads the
// same grammars (and also zones, which a URL's literal does not hold).
func agreeNetip(t *testing.T, s string) {
	a, err := netip.ParseAddr(s)
	v4 := err == nil && a.Is4()
	v6 := err == nil && a.Is6() && a.Zone() == "" && !strings.Contains(s, "%")
	if IsIPv4(s) != v4 || validIPv6(s) != v6 {
		t.Errorf("%q: IsIPv4 %v, validIPv6 %v; netip %v, %v", s, IsIPv4(s), validIPv6(s), a, err)
	}
}

// FuzzHost: checkHost never panics and reports offsets inside the host;
// IP addresses agree with net/netip; ValidHost and Parse agree on the
// hosts of http URLs; the canonical host of a valid host is valid and
// canonical.
func FuzzHost(f *testing.F) {
	for _, s := range []string{"a.example", "a..b", "[::1]", "[v1.x]", "1.2.3.4", "0x7f.1", "b\u00fccher.example", "xn--bcher-kva.example",
		"%61.b", "a_b", "-a", "::ffff:1.2.3.4", "1:2::3:4", "xn--zz", "a.b.", "[::1]x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		if len(h) > 300 {
			return // longer names are in the table tests; many problems make minimizing slow
		}
		agreeNetip(t, h)
		if h == "" {
			return
		}
		// the profile maps as idna.Lookup does: hosts Lookup converts keep their A-label
		if d, ok := unescape(h); ok && utf8.ValidString(d) {
			if want, err := idna.Lookup.ToASCII(d); err == nil {
				if got, ok := idnaHost(h); !ok || got != want {
					t.Fatalf("idnaHost(%q) = %q, %v; idna.Lookup gives %q", h, got, ok, want)
				}
			}
		}
		for _, internet := range []bool{true, false} {
			if off, err := checkHost(h, internet); err != nil && (off < 0 || off > len(h)) {
				t.Fatalf("checkHost(%q, %v) offset %d", h, internet, off)
			}
		}
		if strings.ContainsAny(h, "/?#@:") && h[0] != '[' {
			return // no host alone between "//" and "/"
		}
		if strings.ContainsAny(h, "/?#@") {
			return
		}
		s := "http://" + h + "/"
		u, _ := Parse(s)
		if u.Host != h {
			return // an IP literal with text after it
		}
		hostProblem := false
		for _, p := range u.Problems {
			if p.Offset >= 7 && p.Offset < 7+len(h) || errors.Is(p, ErrBadHost) {
				hostProblem = true
			}
		}
		if err := ValidHost(h); (err == nil) == hostProblem {
			t.Fatalf("ValidHost(%q) = %v; problems of %q: %v", h, err, s, u.Problems)
		}
		if !hostProblem {
			c := string(appendHost(nil, h))
			if err := ValidHost(c); err != nil {
				t.Fatalf("canonical host %q of valid %q: %v", c, h, err)
			}
			if c2 := string(appendHost(nil, c)); c2 != c {
				t.Fatalf("canonical host %q of %q becomes %q", c, h, c2)
			}
		}
	})
}

func TestHostProblemsMailto(t *testing.T) {
	checkFirstProblem(t, "mailto", []hostCase{
		{"mailto:a@-b.example", ErrLabelHyphen, 9},
		{"mailto:a@b..example", ErrEmptyLabel, 11},
		{"mailto:a@b.example,c@=d.example", ErrHostChar, 21},
		{"mailto:a@1.2.3", ErrBadIPv4, 9},
		{"mailto:a@", ErrEmptyHost, 9},
		{"mailto:a@b.example,c@", ErrEmptyHost, 21},
		{"mailto:a@xn--zz.example?subject=x", ErrBadIDN, 9},
		{"mailto:a@[1.2.3.4]", ErrBadChar, 9}, // a domain literal's brackets, reported once
		{"mailto:a%40b@c!d.example", ErrHostChar, 14},
		{"mailto:a@\u2488x.example", ErrBadIDN, 9},
		{"mailto:j\u00f6rg@a.example", ErrNonASCII, 8}, // only the domain is an IDN; the local part is an IRI's
		{"mailto:a@b.example,j\u00f6rg@a.example", ErrNonASCII, 20},
	})
	if c, err := Canonical("mailto:a@B\u00fccher.example,x@y.example?subject=\u00fc"); c != "mailto:a@xn--bcher-kva.example,x@y.example?subject=%C3%BC" || !errors.Is(err, ErrNonASCII) {
		t.Errorf("canonical %q, %v", c, err)
	}
	for _, s := range []string{"mailto:a@b.example", "mailto:A@B.EXAMPLE,c@d.example?subject=x@y", "mailto:postmaster",
		"mailto:?to=a@b.example", "mailto:a@b\u00fccher.example", "mailto:j%C3%B6rg@%E4%BE%8B.jp", "mailto:a@localhost", "mailto:a@my_host.example"} {
		if u, err := Parse(s); err != nil || !u.Valid() {
			t.Errorf("Parse(%q) = %v, want valid", s, err)
		}
	}
	// a domain with a bad character is not reported again; one after a bad local part is checked
	for s, want := range map[string][]error{
		"mailto:a@b c.example,d@e<f":   {ErrBadChar, ErrBadChar},
		"mailto:a b@-c.example":        {ErrBadChar, ErrLabelHyphen},
		"mailto:a<b@c.example,d@e..f":  {ErrBadChar, ErrEmptyLabel},
		"mailto:a@b%zz,c@d!e,f@g.h,i@": {ErrBadEscape, ErrHostChar, ErrEmptyHost},
	} {
		u, _ := Parse(s)
		ok := len(u.Problems) == len(want)
		for i := 0; ok && i < len(want); i++ {
			ok = errors.Is(u.Problems[i], want[i])
		}
		if !ok {
			t.Errorf("Parse(%q) problems %v, want %v", s, u.Problems, want)
		}
	}
	// non-ASCII in local parts, domains, addresses without a domain, the query
	u, _ := Parse("mailto:\u00fc@\u00fc.example,a@\u00e4\u00f6,\u00fc\u00fc,b@c?subject=\u00fc@\u00fc")
	var at []int
	for _, p := range u.Problems {
		if errors.Is(p, ErrNonASCII) {
			at = append(at, p.Offset)
		}
	}
	if fmt.Sprint(at) != "[7 28 30 45 48]" || len(u.Problems) != len(at) {
		t.Errorf("non-ASCII problems at %v, want [7 28 30 45 48]; all: %v", at, u.Problems)
	}
	if u, _ := Parse("mailto:a@[1.2.3.4]"); len(u.Problems) != 2 {
		t.Errorf("problems %v, want the two brackets only", u.Problems)
	}
}

// TestIDNHostChanged: the A-label kept from the parse is not used for a
// host the caller has changed since.
func TestIDNHostChanged(t *testing.T) {
	u, _ := Parse("http://b\u00fccher.example/")
	if c := u.Canonical(); c != "http://xn--bcher-kva.example/" {
		t.Fatalf("canonical %q", c)
	}
	u.Host = "\u4f8b.jp"
	if c := u.Canonical(); c != "http://xn--fsq.jp/" {
		t.Errorf("canonical after a change of host %q", c)
	}
}

// TestFastPathHosts: the fast path of Canonical takes no host that the
// full parse rejects, and still takes the plain ones.
func TestFastPathHosts(t *testing.T) {
	l63 := strings.Repeat("a", 63)
	for _, h := range []string{
		".a.example", "x.-y.example", "www.a..example", "=go.microsoft.com", "a.123", "1.2.3.4", "1.2.3", "0x7f.0.0.1",
		"a.0x1f", "2130706433", "xn--zz.org", "a.xn--.org", "xn---bcher-kva.org", "-a.org", "a-.org", "a.org.", "a..org",
		l63 + "a.org", "a_b.org", "A.org", "[::1]", "u@a.org", "a.org:80",
	} {
		s := "http://" + h + "/x"
		if !canonicalHTTP(s) {
			continue
		}
		if c, err := canonicalFull(s); c != s || err != nil {
			t.Errorf("fast path takes %q; the full parse gives %q, %v", s, c, err)
		}
	}
	for _, h := range []string{"www.example.org", "a-b.example", "0x7f.org", "r3---sn-abc.example", "xn-a.org", "x--n.org", "3com.com", "a.1com", l63 + ".org"} {
		if s := "https://" + h + "/x"; !canonicalHTTP(s) {
			t.Errorf("fast path does not take %q", s)
		}
	}
}
