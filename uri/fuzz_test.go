package uri

import (
	"net/url"
	"strings"
	"testing"
)

var fuzzSeeds = []string{
	"http://info.cern.ch/albert/bertram/marie%2Dclaude",
	"news:12345667123%asdghfh@info.cern.ch",
	"ftp://ds.internic.net/rfc/rfc1738.txt;type=a",
	"gopher://gopher.example:70/7search%09go",
	"mailto:Tim@Info.CERN.ch", "mid:a@b/c@d", "cid:x%25y@z",
	"http://[::1]:80/a/../b?q#f", "http://B\u00fccher.example/%7e", "x://h/./a/../../b",
	"http://a/%%414", "file:///a b", "HTTP://A:0080", "news://s:119/g.h",
	"http://u:p@a@b.example/", "https://=go.microsoft.com/", "http://[v1.x]/", "http://a..b/", "http://xn--bcher-kva.example/",
	"http://1.2.3.4/", "http://0x7f.1/", "x-foo://a!b/", "http://%E4%BE%8B.jp/", "http://[::1]x:8/",
	"mailto:a@b\u00fccher.example,j\u00f6rg@c?x=\u00fc@d", "mailto:a@-b,c@",
}

// FuzzCanonical checks that Parse never panics, that canonicalization is
// idempotent, that Equal is reflexive and symmetric, and that http URLs
// agree with net/url where both accept them.
func FuzzCanonical(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, "http://a/b")
	}
	f.Fuzz(func(t *testing.T, s, s2 string) {
		u, err := Parse(s)
		if u == nil {
			if err == nil {
				t.Fatalf("Parse(%q) = nil, nil", s)
			}
			return
		}
		c := u.Canonical()
		c2, _ := Canonical(c)
		if c2 != c {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, c, c2)
		}
		if cc, _ := Canonical(s); cc != c {
			t.Fatalf("Canonical(%q) = %q, URL.Canonical = %q", s, cc, c)
		}
		for _, p := range u.Problems {
			if p.Offset < 0 || p.Offset > len(s) {
				t.Fatalf("problem offset %d out of range for %q", p.Offset, s)
			}
		}
		if u.Valid() {
			if eq, err := Equal(s, s); !eq || err != nil {
				t.Fatalf("Equal(%q, itself) = %v, %v", s, eq, err)
			}
			if e1, err1 := Equal(s, s2); err1 == nil {
				if e2, _ := Equal(s2, s); e1 != e2 {
					t.Fatalf("Equal not symmetric on %q, %q", s, s2)
				}
			}
			if cu, err := Parse(c); err != nil || !cu.Valid() {
				t.Fatalf("canonical %q of valid %q is invalid: %v", c, s, err)
			}
			agreeNetURL(t, u)
		}
		_ = u.View()
		for _, r := range []Rules{RFC3986, RFC1630} {
			Resolve(s, s2, r)
		}
	})
}

// agreeNetURL compares the components of a valid http(s) URL with
// net/url's reading of it. net/url accepts more (it does not check
// escapes outside the host, for example), so only accepted inputs are
// compared.
func agreeNetURL(t *testing.T, u *URL) {
	if (u.Scheme != "http" && u.Scheme != "https") || !u.HasAuthority {
		return
	}
	nu, err := url.Parse(u.Raw)
	if err != nil {
		return
	}
	// net/url decodes escapes in the host; we keep them as written
	host, _ := unescape(u.Host)
	if nu.Host != host+map[bool]string{true: ":" + u.Port}[u.HasPort] {
		t.Fatalf("%q: host %q, net/url %q", u.Raw, u.Host, nu.Host)
	}
	if nu.EscapedPath() != u.Path && !strings.Contains(u.Path, "%") {
		t.Fatalf("%q: path %q, net/url %q", u.Raw, u.Path, nu.EscapedPath())
	}
	if nu.RawQuery != u.RawQuery {
		t.Fatalf("%q: query %q, net/url %q", u.Raw, u.RawQuery, nu.RawQuery)
	}
}

func BenchmarkCanonical(b *testing.B) {
	for _, bc := range []struct{ name, in string }{
		{"canonical", "http://www.example.org/archives/2024/03/message-00123.html?view=thread#m5"},
		{"plain-http", "http://www.example.org/archives/2024/03/message-00123.html?view=thread"}, // the fast path
		{"needs-work", "HTTP://WWW.Example.ORG:80/archives/./2024/%7euser/message%2D00123.html?view=thread"},
		{"idn", "http://B\u00fccher.example/katalog/eintrag?id=42"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.in)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Canonical(bc.in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestCanonicalNoAlloc(t *testing.T) {
	const s = "http://www.example.org/archives/2024/03/message-00123.html?view=thread#m5"
	if n := testing.AllocsPerRun(100, func() { Canonical(s) }); n != 0 {
		t.Errorf("Canonical of a canonical URL allocates %v times", n)
	}
}

// FuzzCanonicalHTTP: a URL the fast path takes is its own canonical form,
// without problems, by the full parse.
func FuzzCanonicalHTTP(f *testing.F) {
	for _, s := range []string{"http://www.example.org/a/b?c=d&e", "https://a-b.example/x/./y", "http://1.2.3.4/", "http://a.b/..",
		"http://example.org/~user/a(b)*c!$'", "http://ex.org/?a/../b", "http://xn--r8jz45g.jp/", "https://a.org/;p=1:2@3",
		"http://xn--zz.org/", "http://0x7f.org/", "http://a.org./x", "http://a.123/", "http://a.0x1f/", "http://xn--bcher-kva.example/",
		"http://r3---sn-abc.example/", "http://1.2.3.4/x", "http://a_b.org/", "http://-a.org/", "http://a..org/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !canonicalHTTP(s) {
			return
		}
		c, err := canonicalFull(s)
		if c != s || err != nil {
			t.Errorf("%q taken by the fast path; the full parse gives %q, %v", s, c, err)
		}
	})
}

// TestCanonicalHTTPBytes tries every byte in every place of a few URLs:
// whatever the fast path takes, the full parse must give back unchanged.
func TestCanonicalHTTPBytes(t *testing.T) {
	taken := 0
	for _, tmpl := range []string{"http://a.org/x%sy", "http://a.org/x?%s", "http://a%s.org/", "https://a.org%s/",
		"http://a.org/%s", "http://a.org/.%s", "http://a.org/x/..%s", "http://%sa.org/",
		"http://a.1%s/", "http://a.0x%s/", "http://xn-%s-a.org/", "http://a.%s/", "http://%s.org/"} {
		for c := 0; c < 256; c++ {
			s := strings.Replace(tmpl, "%s", string([]byte{byte(c)}), 1)
			if !canonicalHTTP(s) {
				continue
			}
			taken++
			if got, err := canonicalFull(s); got != s || err != nil {
				t.Errorf("%q taken by the fast path; the full parse gives %q, %v", s, got, err)
			}
		}
	}
	if taken < 300 {
		t.Errorf("the fast path took only %d URLs", taken)
	}
}
