package uri

import (
	"errors"
	"strings"
	"testing"
)

var allKinds = []error{ErrNoScheme, ErrBadEscape, ErrBadChar, ErrNonASCII, ErrEmptyHost, ErrBadHost, ErrBadPort, ErrNoAt, ErrEmpty,
	ErrSecondHash, ErrBadNNTPPath, ErrBadGroupName, ErrHostChar, ErrEmptyLabel, ErrLabelHyphen, ErrLabelTooLong, ErrHostTooLong,
	ErrBadIPv4, ErrBadIPLiteral, ErrBadIDN, ErrUserinfoAt}

// sameAsSeparateCalls fails unless Analyze(s) answers as Canonical, Parse
// and HostOf do, and its host is the parser's host in canonical form.
func sameAsSeparateCalls(t *testing.T, s string) Result {
	t.Helper()
	r := Analyze(s)
	c, cerr := Canonical(s)
	if r.Canonical != c {
		t.Fatalf("Analyze(%q).Canonical = %q, Canonical = %q", s, r.Canonical, c)
	}
	if (r.Err() == nil) != (cerr == nil) || cerr != nil && r.Err().Error() != cerr.Error() {
		t.Fatalf("Analyze(%q).Err() = %v, Canonical's error %v", s, r.Err(), cerr)
	}
	if r.Valid() != (cerr == nil) {
		t.Fatalf("Analyze(%q).Valid() = %v with error %v", s, r.Valid(), cerr)
	}
	if h := HostOf(c); r.Host != h {
		t.Fatalf("Analyze(%q).Host = %q, HostOf(%q) = %q", s, r.Host, c, h)
	}
	u, perr := Parse(s)
	if u == nil {
		if len(r.Problems) != 1 || r.Problems[0].Error() != perr.Error() || r.Scheme != "" || r.Host != "" || c != "" {
			t.Fatalf("Analyze(%q) = %+v; Parse error %v", s, r, perr)
		}
		return r
	}
	if ur := u.Analyze(); ur.Canonical != r.Canonical || ur.Scheme != r.Scheme || ur.Host != r.Host || len(ur.Problems) != len(r.Problems) {
		t.Fatalf("Parse(%q).Analyze() = %+v, Analyze = %+v", s, ur, r)
	}
	if r.Scheme != u.Scheme || r.Scheme != c[:strings.IndexByte(c, ':')] {
		t.Fatalf("Analyze(%q).Scheme = %q, Parse %q, canonical %q", s, r.Scheme, u.Scheme, c)
	}
	if len(r.Problems) != len(u.Problems) {
		t.Fatalf("Analyze(%q).Problems = %v, Parse %v", s, r.Problems, u.Problems)
	}
	for i, p := range u.Problems {
		q := r.Problems[i]
		if q.Op != p.Op || q.URL != p.URL || q.Offset != p.Offset || q.Err.Error() != p.Err.Error() {
			t.Fatalf("Analyze(%q).Problems[%d] = %#v, Parse %#v", s, i, q, p)
		}
		for _, k := range allKinds {
			if errors.Is(q, k) != errors.Is(p, k) {
				t.Fatalf("Analyze(%q).Problems[%d] = %v, Parse %v: differ on %v", s, i, q, p, k)
			}
		}
	}
	// HostOf (and so Analyze) finds in the canonical form the host the
	// parser found in s
	var want string
	if u.HasAuthority {
		want = string(appendHost(nil, u.Host))
	} else if u.Scheme == "mailto" {
		cu, _ := Parse(c)
		addrs := strings.Split(cu.Opaque, ",")
		for i := len(addrs) - 1; i >= 0; i-- {
			if at := strings.LastIndexByte(addrs[i], '@'); at >= 0 {
				want = addrs[i][at+1:]
				break
			}
		}
	}
	if r.Host != want {
		t.Fatalf("Analyze(%q).Host = %q; the parser's host is %q", s, r.Host, want)
	}
	return r
}

func TestAnalyze(t *testing.T) {
	for _, tt := range []struct {
		in, canonical, scheme, host string
		problems                    int
	}{
		{"http://www.example.org/a?b", "http://www.example.org/a?b", "http", "www.example.org", 0}, // the fast path
		{"https://a.example/", "https://a.example/", "https", "a.example", 0},
		{"HTTP://U:P@WWW.Example.ORG:80/a/./b", "http://U:P@www.example.org/a/b", "http", "www.example.org", 0},
		{"http://B\u00fccher.example:8080", "http://xn--bcher-kva.example:8080/", "http", "xn--bcher-kva.example", 0},
		{"http://[::1]:80/x", "http://[::1]/x", "http", "[::1]", 0},
		{"http://[::1]X:81/", "http://[::1]x:81/", "http", "[::1]x", 1},
		{"http://[::1/", "http://[::1/", "http", "[::1", 1},
		{"http://a:1:2/", "http://a:1:2/", "http", "a", 1},
		{"http://u:p@a@b.example/", "http://u:p@a@b.example/", "http", "b.example", 1},
		{"https://=go.microsoft.com/", "https://=go.microsoft.com/", "https", "=go.microsoft.com", 1},
		{"mailto:A@B.ORG,C@D.ORG?subject=x@y", "mailto:A@b.org,C@d.org?subject=x@y", "mailto", "d.org", 0},
		{"mailto:a@b.org,postmaster", "mailto:a@b.org,postmaster", "mailto", "b.org", 0},
		{"news:abc@def", "news:abc@def", "news", "", 0},
		{"mid:a://b@c", "mid:a://b@c", "mid", "", 1},
		{"file:///etc", "file:///etc", "file", "", 0},
		{"http://a/%zz b", "http://a/%25zz%20b", "http", "a", 2},
		{"no scheme", "", "", "", 1},
	} {
		r := sameAsSeparateCalls(t, tt.in)
		if r.Canonical != tt.canonical || r.Scheme != tt.scheme || r.Host != tt.host || len(r.Problems) != tt.problems {
			t.Errorf("Analyze(%q) = %q %q %q %v\nwant %q %q %q with %d problems", tt.in, r.Canonical, r.Scheme, r.Host, r.Problems,
				tt.canonical, tt.scheme, tt.host, tt.problems)
		}
	}
	if r := Analyze("no scheme"); !errors.Is(r.Err(), ErrNoScheme) {
		t.Errorf("Analyze without scheme: %v", r.Err())
	}
}

// FuzzAnalyze holds Analyze to the separate calls it replaces.
func FuzzAnalyze(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	for _, s := range []string{"mailto:a@b,c@d?x=@y#z@w", "http://a:1:2/", "http://[::1]x:8/", "mid:a://b@c", "x://u@h@i:9/", "http://www.example.org/a?b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sameAsSeparateCalls(t, s)
	})
}

func TestAnalyzeNoAlloc(t *testing.T) {
	for _, s := range []string{
		"http://www.example.org/archives/2024/03/message-00123.html?view=thread",    // the fast path
		"http://www.example.org/archives/2024/03/message-00123.html?view=thread#m5", // the full parse
		"mailto:someone@example.org",
	} {
		var r Result
		if n := testing.AllocsPerRun(100, func() { r = Analyze(s) }); n != 0 || r.Canonical != s || !r.Valid() {
			t.Errorf("Analyze(%q) allocates %v times (%+v)", s, n, r)
		}
		u, _ := Parse(s)
		if n := testing.AllocsPerRun(100, func() { r = u.Analyze() }); n != 0 || r.Canonical != s {
			t.Errorf("URL.Analyze of %q allocates %v times (%+v)", s, n, r)
		}
	}
}

func BenchmarkAnalyze(b *testing.B) {
	for _, bc := range []struct{ name, in string }{
		{"plain-http", "http://www.example.org/archives/2024/03/message-00123.html?view=thread"},
		{"canonical", "http://www.example.org/archives/2024/03/message-00123.html?view=thread#m5"},
		{"needs-work", "HTTP://WWW.Example.ORG:80/archives/./2024/%7euser/message%2D00123.html?view=thread"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.in)))
			b.ReportAllocs()
			for b.Loop() {
				Analyze(bc.in)
			}
		})
	}
}
