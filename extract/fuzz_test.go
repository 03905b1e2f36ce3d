package extract

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"
	"testing/iotest"
	"unicode"

	"github.com/linkscan/linkscan/uri"
)

func FuzzScanner(f *testing.F) {
	for _, c := range cases {
		f.Add(c.in, false)
	}
	for _, cs := range [][]classCase{falseJoinCases, endCases, startCases, emailCases, spaceCases, domainCases} {
		for _, c := range cs {
			f.Add(c.in, c.opts != nil)
		}
	}
	f.Add("<URL:ftp://ds.inter\n   nic.net/rfc>", true)
	f.Add("  679.         http://www.library.my.town.va.us/Catalogue/76523471236%2Fwen44\n  680. --4.98\n", false)
	for _, c := range gatewayCases {
		f.Add(c.in, false)
	}
	f.Add(wrap("> ", safe, 9), true)
	f.Add(wrap("", v3, 7), true)
	f.Add("<a href=3D\"mailto:kij=\nitora@example.jp\">\n<http://a.example/x\x00y> =00", true)
	f.Fuzz(func(t *testing.T, in string, more bool) {
		// more: e-mail addresses, bare domains, data: and defanged URLs,
		// and links cut at 40 bytes
		opts := &Options{Emails: more, BareDomains: more, DataURIs: more, Refang: more, MaxLineLength: 64}
		if more {
			opts.MaxLinkLength = 40
		}
		links := All([]byte(in), opts)
		for _, l := range links {
			if msg := segmentsProblem(in, l); msg != "" {
				t.Fatal(msg)
			}
			if len(l.Errors) != len(l.Problems) {
				t.Fatalf("%d errors, %d problems: %+v", len(l.Errors), len(l.Problems), l)
			}
			if !more && isData([]byte(l.URL)) {
				t.Fatalf("data: URI reported: %q", l.URL)
			}
			if l.Start < 0 || l.End < l.Start || l.End > int64(len(in)) {
				t.Fatalf("span [%d,%d) outside %d bytes: %+v", l.Start, l.End, len(in), l)
			}
			if strings.ContainsFunc(l.URL, unicode.IsSpace) {
				t.Fatalf("URL with white space: %q", l.URL)
			}
			if hasControl([]byte(l.URL)) {
				t.Fatalf("URL with a control character: %q", l.URL)
			}
			if l.Valid && strings.Contains(l.URL, "=3D") {
				t.Fatalf("valid URL with a quoted-printable escape: %q", l.URL)
			}
			if l.URL == "" || l.Line < 1 || l.Column < 1 {
				t.Fatalf("bad link %+v", l)
			}
			endingProblem(t, l)
		}
		for i := 1; i < len(links); i++ {
			if links[i].Start < links[i-1].End {
				t.Fatalf("links overlap or go back: %+v then %+v", links[i-1], links[i])
			}
		}
		// the same links through a one-byte reader
		sc := NewScanner(iotest.OneByteReader(bytes.NewReader([]byte(in))), opts)
		n := 0
		for sc.Scan() {
			if n >= len(links) || sc.Link().URL != links[n].URL {
				t.Fatalf("one-byte reader differs at link %d", n)
			}
			n++
		}
		if n != len(links) {
			t.Fatalf("one-byte reader found %d links, want %d", n, len(links))
		}
	})
}

// FuzzIsIPv4 holds uri.IsIPv4, which reads the bare domains' IPv4
// addresses, to net/netip on bytes.
func FuzzIsIPv4(f *testing.F) {
	for _, s := range []string{"192.0.2.1", "1.6.3.3", "01.2.3.4", "256.1.1.1", "1.2.3", "1.2.3.4.5", "0.0.0.0", "1..2.3", "::1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := netip.ParseAddr(s)
		if want := err == nil && a.Is4(); uri.IsIPv4([]byte(s)) != want {
			t.Errorf("uri.IsIPv4(%q) = %v, netip says %v", s, !want, want)
		}
	})
}

// endingProblem checks a link's Ending against what it is: a heuristic
// join is never proven; a gateway's end marker ends exactly the
// gateway's link, whose characters after its path's start are its own;
// a gateway link without one is not proven.
func endingProblem(t *testing.T, l Link) {
	t.Helper()
	u := []byte(l.URL)
	g := gatewayOf(u, true)
	switch {
	case l.Heuristic && l.Ending != EndUnproven:
		t.Fatalf("heuristic join with ending %v: %+v", l.Ending, l)
	case l.Ending == EndWrapper && (g == gwNone || gatewayEnd(g, u) != len(u)):
		t.Fatalf("ending %v without the end marker: %q", l.Ending, l.URL)
	case l.Ending == EndWrapper && l.Joined && !l.Heuristic && l.Form == FormBare && !gatewayWhole(g, u):
		t.Fatalf("joined gateway link with foreign characters: %q", l.URL)
	case g != gwNone && gatewayEnd(g, u) != len(u) && l.Ending != EndUnproven:
		t.Fatalf("gateway link without its end marker, ending %v: %q", l.Ending, l.URL)
	}
}
