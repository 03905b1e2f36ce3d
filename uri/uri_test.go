package uri

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

func TestParseComponents(t *testing.T) {
	tests := []struct {
		in                             string
		scheme, user, host, port, path string
		opaque, query, fragment        string
		hasAuth                        bool
	}{
		// RFC 1738 §3.1 common Internet scheme syntax
		{in: "ftp://user:pw@Host.Example:2121/a/b;type=i", scheme: "ftp", user: "user", host: "Host.Example", port: "2121", path: "/a/b;type=i", hasAuth: true},
		{in: "HTTP://info.cern.ch/hypertext/WWW?q#frag", scheme: "http", host: "info.cern.ch", path: "/hypertext/WWW", query: "q", fragment: "frag", hasAuth: true},
		{in: "http://[::1]:8080/x", scheme: "http", host: "[::1]", port: "8080", path: "/x", hasAuth: true},
		// Opaque schemes
		{in: "mailto:timbl@info.cern.ch", scheme: "mailto", opaque: "timbl@info.cern.ch"},
		{in: "mailto:a@b?subject=hi", scheme: "mailto", opaque: "a@b", query: "subject=hi"},
		{in: "news:comp.infosystems.www", scheme: "news", opaque: "comp.infosystems.www"},
		// mid: keeps a "?" in the message-id (no query for mid, cid, news)
		{in: "mid:a?b@host/part", scheme: "mid", opaque: "a?b@host/part"},
		{in: "urn:isbn:0451450523", scheme: "urn", opaque: "isbn:0451450523"},
		// RFC 1738 scheme names may begin with a digit
		{in: "3com://x/", scheme: "3com", host: "x", path: "/", hasAuth: true},
	}
	for _, tt := range tests {
		u, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		got := []string{u.Scheme, u.User, u.Host, u.Port, u.Path, u.Opaque, u.RawQuery, u.Fragment}
		want := []string{tt.scheme, tt.user, tt.host, tt.port, tt.path, tt.opaque, tt.query, tt.fragment}
		if strings.Join(got, "|") != strings.Join(want, "|") || u.HasAuthority != tt.hasAuth {
			t.Errorf("Parse(%q)\ngot  %q auth=%v\nwant %q auth=%v", tt.in, got, u.HasAuthority, want, tt.hasAuth)
		}
	}
}

func TestParseProblems(t *testing.T) {
	tests := []struct {
		in     string
		err    error
		offset int
	}{
		// RFC 1630 Example 3: illegal escapes
		{"news:12345667123%asdghfh@info.cern.ch", ErrBadEscape, 16},
		{"fxqn:/us/va/reston/cnri/ietf/24/asdf%*.fred", ErrBadEscape, 36},
		{"http://a/b%4", ErrBadEscape, 10},
		// RFC 1738 §2.2 unsafe characters
		{"http://a/b c", ErrBadChar, 10},
		{"http://a/<b>", ErrBadChar, 9},
		{"http://a/\"b", ErrBadChar, 9},
		{"http://a/b\x01", ErrBadChar, 10},
		{"http://a/caf\u00e9", ErrNonASCII, 12},
		{"http://a/x#y#z", ErrSecondHash, 12},
		// hosts and ports
		{"http:///path", ErrEmptyHost, 7},
		{"ftp://:21/", ErrEmptyHost, 6},
		{"http://a:80x/", ErrBadPort, 9},
		{"http://a:65536/", ErrBadPort, 9},
		{"http://[::1/", ErrBadHost, 7},
		{"http://\u2488x.com/", ErrBadHost, 7},
		// news: message-ids need "@host" (RFC 1738 §3.6)
		{"news:123$456", ErrNoAt, 5},
		{"mid:abc", ErrNoAt, 4},
		{"nntp://host/", ErrBadNNTPPath, 11},
		{"mailto:", ErrEmpty, 7},
	}
	for _, tt := range tests {
		u, err := Parse(tt.in)
		if u == nil {
			t.Errorf("Parse(%q) = nil URL", tt.in)
			continue
		}
		if !errors.Is(err, tt.err) {
			t.Errorf("Parse(%q) error = %v, want %v", tt.in, err, tt.err)
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Offset != tt.offset || e.Op != "parse" || e.URL != tt.in {
			t.Errorf("Parse(%q) error = %#v, want offset %d", tt.in, err, tt.offset)
		}
		if u.Valid() {
			t.Errorf("Parse(%q).Valid() = true", tt.in)
		}
	}
}

func TestParseValid(t *testing.T) {
	for _, s := range []string{
		"news:*", "news:comp.lang.*", "news:alt.fan.tim-berners-lee", "news:abc@def",
		"nntp://news.example/comp.lang.go/1234", "mid:960830.1639@XIson.com/partA.960830.1639@XIson.com",
		"cid:foo4%25foo1@bar.net", "telnet://user:pass@host:23/", "wais://quake.think.com/directory-of-servers",
		"file:///etc/passwd", "file://localhost/etc/x", "prospero://host.dom//pros/name;field=value",
		"gopher://gopher.example/1", "http://\u4f8b\u3048.jp/", "x-my-scheme:anything", "http://a:/",
	} {
		if u, err := Parse(s); err != nil || !u.Valid() {
			t.Errorf("Parse(%q) = %v, want valid", s, err)
		}
	}
	if u, err := Parse("no scheme here"); u != nil || !errors.Is(err, ErrNoScheme) {
		t.Errorf("Parse without scheme = %v, %v", u, err)
	}
}

func TestErrorColumn(t *testing.T) {
	_, err := Parse("http://a/\u00e9\u00e9 x")
	var e *Error
	if !errors.As(err, &e) {
		t.Fatal(err)
	}
	if e.Column() != 10 {
		t.Errorf("Column = %d, want 10", e.Column())
	}
	if !strings.HasPrefix(e.Error(), "uri: parse ") {
		t.Errorf("Error() = %q", e.Error())
	}
}

func TestCanonical(t *testing.T) {
	tests := []struct{ in, want string }{
		// RFC 3986 §6.2.2.1 case; §6.2.3 default ports; empty http path
		{"HTTP://Info.CERN.ch:80", "http://info.cern.ch/"},
		{"https://x.org:443/a", "https://x.org/a"},
		{"https://x.org:8443/a", "https://x.org:8443/a"},
		{"http://x.org:/a", "http://x.org/a"},
		{"http://x.org:0080/a", "http://x.org/a"},
		{"ftp://ftp.x.org:21/pub", "ftp://ftp.x.org/pub"},
		{"gopher://g.org:70/1", "gopher://g.org/1"},
		{"nntp://n.org:119/a.b/1", "nntp://n.org/a.b/1"},
		{"telnet://t.org:23/", "telnet://t.org/"},
		{"wais://w.org:210/db", "wais://w.org/db"},
		{"prospero://p.org:1525/x", "prospero://p.org/x"},
		// RFC 3986 §6.2.2.2 escapes; RFC 1630 Examples 1 and 2
		{"http://info.cern.ch/albert/bertram/marie%2Dclaude", "http://info.cern.ch/albert/bertram/marie-claude"},
		{"http://info.cern.ch/albert/bertram%2fmarie-claude", "http://info.cern.ch/albert/bertram%2Fmarie-claude"},
		{"http://x.org/%7euser/%41%3a", "http://x.org/~user/A%3A"},
		{"http://x.org/a b\"c<d>e\\f^g`h{i|j}k", "http://x.org/a%20b%22c%3Cd%3Ee%5Cf%5Eg%60h%7Bi%7Cj%7Dk"},
		{"http://x.org/caf\u00e9", "http://x.org/caf%C3%A9"},
		// a bad escape's "%" is encoded
		{"news:12345667123%asdghfh@info.cern.ch", "news:12345667123%25asdghfh@info.cern.ch"},
		{"http://a/%%414", "http://a/%25A4"},
		// RFC 3986 §5.2.4 dot segments, only for hierarchical schemes
		{"http://x.org/a/./b/../c", "http://x.org/a/c"},
		{"http://x.org/a/%2E%2E/c", "http://x.org/c"},
		{"file:///a/../b", "file:///b"},
		{"gopher://g.org/0/a/../b", "gopher://g.org/0/a/../b"},
		{"x-foo://h/a/../b", "x-foo://h/b"},
		// IDN hosts (RFC 5891) through idna.Lookup
		{"http://B\u00fccher.example/", "http://xn--bcher-kva.example/"},
		{"http://%E4%BE%8B.jp/", "http://xn--fsq.jp/"},
		{"http://XN--BCHER-KVA.example/", "http://xn--bcher-kva.example/"},
		// mailto: only the domain is lower-cased
		{"MAILTO:Tim.BL@Info.CERN.CH", "mailto:Tim.BL@info.cern.ch"},
		{"mailto:A@B.ORG,C@D.ORG?Subject=Hi", "mailto:A@b.org,C@d.org?Subject=Hi"},
		// message-ids keep their case
		{"mid:ABC@Host.Example", "mid:ABC@Host.Example"},
		{"NEWS:Ab%2dC@Host", "news:Ab-C@Host"},
		{"cid:foo4%25foo1@bar.net", "cid:foo4%25foo1@bar.net"},
		// ftp ;type= codes
		{"ftp://x.org/pub/file;type=I", "ftp://x.org/pub/file;type=i"},
		// query and fragment keep reserved characters
		{"http://x.org/?a=%2F&b=/#%7e", "http://x.org/?a=%2F&b=/#~"},
		{"http://user:P%61ss@x.org/", "http://user:Pass@x.org/"},
		{"http://[::FFFF:1.2.3.4]:80/", "http://[::ffff:1.2.3.4]/"},
	}
	for _, tt := range tests {
		got, _ := Canonical(tt.in)
		if got != tt.want {
			t.Errorf("Canonical(%q)\ngot  %q\nwant %q", tt.in, got, tt.want)
		}
		again, _ := Canonical(got)
		if again != got {
			t.Errorf("Canonical not idempotent on %q: %q", got, again)
		}
		u, _ := Parse(tt.in)
		if u.Canonical() != got {
			t.Errorf("URL.Canonical(%q) = %q, Canonical = %q", tt.in, u.Canonical(), got)
		}
	}
}

func TestEqualSeedExamples(t *testing.T) {
	// RFC 1630 draft, "Example 1" and "Example 2".
	eq, err := Equal("http://info.cern.ch/albert/bertram/marie-claude", "http://info.cern.ch/albert/bertram/marie%2Dclaude")
	if err != nil || !eq {
		t.Errorf("Example 1: Equal = %v, %v; want true", eq, err)
	}
	eq, err = Equal("http://info.cern.ch/albert/bertram/marie-claude", "http://info.cern.ch/albert/bertram%2Fmarie-claude")
	if err != nil || eq {
		t.Errorf("Example 2: Equal = %v, %v; want false", eq, err)
	}
	// "Example 3": illegal
	for _, s := range []string{"fxqn:/us/va/reston/cnri/ietf/24/asdf%*.fred", "news:12345667123%asdghfh@info.cern.ch"} {
		if _, err := Equal(s, s); !errors.Is(err, ErrBadEscape) {
			t.Errorf("Example 3: Equal(%q) error = %v", s, err)
		}
	}
	eq, _ = Equal("HTTP://A.ORG:80", "http://a.org/")
	if !eq {
		t.Error("case and default port not equal")
	}
}

func TestResolveRFC3986(t *testing.T) {
	const base = "http://a/b/c/d;p?q"
	tests := []struct{ ref, want string }{
		// §5.4.1 normal examples
		{"g:h", "g:h"}, {"g", "http://a/b/c/g"}, {"./g", "http://a/b/c/g"},
		{"g/", "http://a/b/c/g/"}, {"/g", "http://a/g"}, {"//g", "http://g"},
		{"?y", "http://a/b/c/d;p?y"}, {"g?y", "http://a/b/c/g?y"},
		{"#s", "http://a/b/c/d;p?q#s"}, {"g#s", "http://a/b/c/g#s"},
		{"g?y#s", "http://a/b/c/g?y#s"}, {";x", "http://a/b/c/;x"},
		{"g;x", "http://a/b/c/g;x"}, {"g;x?y#s", "http://a/b/c/g;x?y#s"},
		{"", "http://a/b/c/d;p?q"}, {".", "http://a/b/c/"}, {"./", "http://a/b/c/"},
		{"..", "http://a/b/"}, {"../", "http://a/b/"}, {"../g", "http://a/b/g"},
		{"../..", "http://a/"}, {"../../", "http://a/"}, {"../../g", "http://a/g"},
		// §5.4.2 abnormal examples
		{"../../../g", "http://a/g"}, {"../../../../g", "http://a/g"},
		{"/./g", "http://a/g"}, {"/../g", "http://a/g"},
		{"g.", "http://a/b/c/g."}, {".g", "http://a/b/c/.g"},
		{"g..", "http://a/b/c/g.."}, {"..g", "http://a/b/c/..g"},
		{"./../g", "http://a/b/g"}, {"./g/.", "http://a/b/c/g/"},
		{"g/./h", "http://a/b/c/g/h"}, {"g/../h", "http://a/b/c/h"},
		{"g;x=1/./y", "http://a/b/c/g;x=1/y"}, {"g;x=1/../y", "http://a/b/c/y"},
		{"g?y/./x", "http://a/b/c/g?y/./x"}, {"g?y/../x", "http://a/b/c/g?y/../x"},
		{"g#s/./x", "http://a/b/c/g#s/./x"}, {"g#s/../x", "http://a/b/c/g#s/../x"},
		{"http:g", "http:g"},
	}
	for _, tt := range tests {
		got, err := Resolve(base, tt.ref, RFC3986)
		if err != nil || got != tt.want {
			t.Errorf("Resolve(%q, %q)\ngot  %q (%v)\nwant %q", base, tt.ref, got, err, tt.want)
		}
		// cross-check with net/url, which implements the same section
		b, _ := url.Parse(base)
		r, err := url.Parse(tt.ref)
		if err == nil && tt.ref != "http:g" {
			if nu := b.ResolveReference(r).String(); nu != tt.want {
				t.Logf("net/url differs on %q: %q", tt.ref, nu)
			}
		}
	}
	if _, err := Resolve("relative/base", "g", RFC3986); !errors.Is(err, ErrNoScheme) {
		t.Errorf("relative base: err = %v", err)
	}
}

func TestResolveRFC1630(t *testing.T) {
	// The draft's "Partial (relative) form" examples: both bases give the
	// same results.
	for _, base := range []string{"magic://a/b/c//d/e/f", "magic://a/b/c//d/e/"} {
		for _, tt := range []struct{ ref, want string }{
			{"g", "magic://a/b/c//d/e/g"},
			{"/g", "magic://a/g"},
			{"//g", "magic://g"},
			{"../g", "magic://a/b/c//d/g"},
			{"g:a", "g:a"},
		} {
			got, err := Resolve(base, tt.ref, RFC1630)
			if err != nil || got != tt.want {
				t.Errorf("Resolve(%q, %q, RFC1630)\ngot  %q (%v)\nwant %q", base, tt.ref, got, err, tt.want)
			}
		}
	}
	for _, tt := range []struct{ base, ref, want string }{
		{"http://h", "/g", "http://h/g"},
		{"http://h/a/b#f", "", "http://h/a/b"},
		{"http://h/a/b?q", "#s", "http://h/a/b?q#s"},
		{"http://h/a/b?q", "?r", "http://h/a/b?r"},
		{"http://h/a/b/c", "./g/.", "http://h/a/b/g/"},
		{"http://h/a/b/c", "../../g", "http://h/g"},
		{"http://h/a", "../../g", "http://h/../../g"},
		// a slash before the colon: not absolute
		{"http://h/a/b", "c/d:e", "http://h/a/c/d:e"},
	} {
		got, _ := Resolve(tt.base, tt.ref, RFC1630)
		if got != tt.want {
			t.Errorf("Resolve(%q, %q, RFC1630)\ngot  %q\nwant %q", tt.base, tt.ref, got, tt.want)
		}
	}
}

func TestViews(t *testing.T) {
	tests := []struct {
		in   string
		want View
	}{
		{"ftp://h/pub/www/doc;type=D", FTP{CWD: []string{"pub", "www"}, Name: "doc", Type: "d"}},
		{"ftp://h/a%2Fb/c", FTP{CWD: []string{"a/b"}, Name: "c"}},
		{"gopher://h/7search%09golang%09%2B", Gopher{Type: "7", Selector: "search", Search: "golang", GopherPlus: "+"}},
		{"gopher://h", Gopher{Type: "1"}},
		{"news:comp.lang.go", News{Group: "comp.lang.go"}},
		{"news:*", News{All: true}},
		{"news:a%2Fb@c", News{MessageID: "a/b@c"}},
		{"news://srv/x@y", News{Server: "srv", MessageID: "x@y"}},
		{"nntp://h/alt.test/12", NNTP{Group: "alt.test", Article: "12"}},
		{"wais://h/db?query", WAIS{Database: "db", Search: "query"}},
		{"wais://h/db/TEXT/doc-id", WAIS{Database: "db", WType: "TEXT", WPath: "doc-id"}},
		{"file:///etc/motd", File{Host: "", Localhost: true, Path: "/etc/motd"}},
		{"file://vms.host/disk$user/x", File{Host: "vms.host", Path: "/disk$user/x"}},
		{"mid:960830.1639@XIson.com/partA.960830.1639@XIson.com", MID{MessageID: "960830.1639@XIson.com", ContentID: "partA.960830.1639@XIson.com"}},
		{"cid:foo4%25foo1@bar.net", CID{ContentID: "foo4%foo1@bar.net"}},
		{"telnet://u:p@h:2323/", Telnet{User: "u", Password: "p", Host: "h", Port: "2323"}},
		{"urn:ISBN:0451450523", URN{NID: "isbn", NSS: "0451450523"}},
	}
	for _, tt := range tests {
		u, _ := Parse(tt.in)
		got := u.View()
		if g, w := fmtView(got), fmtView(tt.want); g != w {
			t.Errorf("View(%q)\ngot  %s\nwant %s", tt.in, g, w)
		}
	}
	if v := (&URL{Scheme: "x-unknown"}).View(); v != nil {
		t.Errorf("unknown scheme view = %v", v)
	}
	u, _ := Parse("mailto:a@b,c@d?subject=x")
	if m := u.View().(Mailto); len(m.Addrs) != 2 || m.Addrs[1] != "c@d" || m.Headers != "subject=x" {
		t.Errorf("mailto view = %+v", m)
	}
	u, _ = Parse("prospero://h/pros/name;a=1;b=2")
	if p := u.View().(Prospero); p.HSOName != "pros/name" || len(p.Fields) != 2 || p.Fields[1].Value != "2" {
		t.Errorf("prospero view = %+v", p)
	}
}

func fmtView(v View) string {
	if v == nil {
		return "<nil>"
	}
	return strings.ReplaceAll(strings.TrimSpace(sprint(v)), "\n", " ")
}

func TestHostOf(t *testing.T) {
	for in, want := range map[string]string{
		"http://u:p@www.x.org:8080/a?b": "www.x.org", "ftp://h/": "h", "http://[::1]:80/": "[::1]",
		"mailto:a@b.org?subject=x": "b.org", "news:comp.lang": "", "file:///etc": "", "http://h#f": "h",
	} {
		if got := HostOf(in); got != want {
			t.Errorf("HostOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestViewScheme: the view of each scheme's URL is the view type of that
// scheme (https shares http's), so that a type switch on a View cannot
// be handed the view of another scheme.
func TestViewScheme(t *testing.T) {
	for _, in := range []string{"ftp://h/f", "http://h/", "https://h/", "gopher://h/", "mailto:a@b",
		"news:comp.lang.go", "nntp://h/alt.test/12", "telnet://h/", "wais://h/db", "file:///etc/motd",
		"prospero://h/pros/name", "mid:a@b", "cid:a@b", "urn:isbn:0451450523"} {
		u, err := Parse(in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		v := u.View()
		if v == nil {
			t.Errorf("View(%q) = nil", in)
			continue
		}
		want := u.Scheme
		if want == "https" {
			want = "http"
		}
		if got := v.viewScheme(); got != want {
			t.Errorf("View(%q) is the view of %q", in, got)
		}
	}
}
