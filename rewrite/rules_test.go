package rewrite

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

func loadExample(t testing.TB) *Rules {
	t.Helper()
	rs, err := Load("../testdata/rewrite/rules.toml")
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// The example file of docs/rewrite.md, link by link; the results were
// worked out by following its rules in order.
func TestExampleRules(t *testing.T) {
	rs := loadExample(t)
	body := func(u, form string) Link { return Link{URL: u, Form: form, Where: "body", ContentType: "text/plain"} }
	tests := []struct {
		link    Link
		url     string
		form    string
		rules   []string // names of the rules that changed or skipped, in order
		keptBy  string
		skipped string // a word of the last change's Skipped
	}{
		{body("https://nam02.safelinks.protection.outlook.com/?url=ftp%3A%2F%2Fftp.cs.example.edu%2Fpub%2Flists%2Fx%2F1994.txt&data=1&reserved=0", "bare"),
			"https://archive.example.org/lists/x/1994.txt", "url-wrapper",
			[]string{"unwrap gateways", "list archive moved", "wrap bare URLs"}, "", ""},
		{body("http://www.example.com/page?utm_source=list&id=3&utm_id=9#s", "angle"),
			"http://example.com/page?id=3&utm_id=9#s", "angle",
			[]string{"rule at line 36", "strip tracking"}, "", ""},
		// the host as written keeps its case outside the part mapped
		{body("HTTP://WWW.EXAMPLE.COM/Index.HTML", "quoted"),
			"HTTP://example.com/Index.HTML", "quoted", []string{"rule at line 36"}, "", ""},
		{Link{URL: "https://stats.analytics.example/?utm_source=x", Form: "html", Where: "html:href", ContentType: "text/html"},
			"https://stats.analytics.example/?utm_source=x", "html", nil, "", ""},
		{body("http://bugs.example.org/show_bug.cgi?id=1234", "quoted"),
			"https://tracker.example.org/issues/1234", "quoted", []string{"bug tracker"}, "", ""},
		{body("http://bugs.example.org/show_bug.cgi?id=1234&x=1", "quoted"),
			"http://bugs.example.org/show_bug.cgi?id=1234&x=1", "quoted", nil, "", ""},
		{body("mid:1994Jun1.123@cs.example.edu", "angle"),
			"https://archive.example.org/r/1994Jun1.123@cs.example.edu", "angle", []string{"message-ids to the web"}, "", ""},
		{body("news:abc%24def@host.example", "bare"),
			"https://archive.example.org/r/abc%24def@host.example", "url-wrapper",
			[]string{"message-ids to the web", "wrap bare URLs"}, "", ""},
		// a news: group is no article
		{body("news:comp.mail.misc", "angle"), "news:comp.mail.misc", "angle", nil, "", ""},
		{body("https://archive.example.org/lists/?utm_source=x", "bare"),
			"https://archive.example.org/lists/?utm_source=x", "bare", nil, "our archive", ""},
		{Link{URL: "HTTP://Example.ORG:80/a/./b", Form: "angle", Where: "header:Archived-At"},
			"http://example.org/a/b", "angle", []string{"canonical headers"}, "", ""},
		{body("http://gone.example.net/x", "bare"),
			"http://gone.example.net/x", "url-wrapper", []string{"wrap bare URLs"}, "", ""},
		{Link{URL: "https://protect-eu.mimecast.com/s/AbC?domain=example.com", Form: "html", Where: "html:href"},
			"https://protect-eu.mimecast.com/s/AbC?domain=example.com", "html", []string{"unwrap gateways"}, "", "offline"},
		{Link{URL: "ftp://ftp.old-university.example/pub", Form: "url-wrapper", Where: "body"},
			"ftp://ftp.new-university.example/pub", "url-wrapper", []string{"domain moved"}, "", ""},
		// "*.domain" is the domain and its subdomains: the bare name moves too
		{Link{URL: "ftp://old-university.example/pub", Form: "url-wrapper", Where: "body"},
			"ftp://new-university.example/pub", "url-wrapper", []string{"domain moved"}, "", ""},
		{Link{URL: "ftp://xold-university.example/pub", Form: "url-wrapper", Where: "body"},
			"ftp://xold-university.example/pub", "url-wrapper", nil, "", ""},
	}
	for _, tt := range tests {
		res, err := rs.Rewrite(tt.link)
		if err != nil {
			t.Errorf("Rewrite(%q): %v", tt.link.URL, err)
			continue
		}
		var names []string
		for _, c := range res.Changes {
			names = append(names, c.Rule)
		}
		if res.URL != tt.url || res.Form != tt.form || !slices.Equal(names, tt.rules) || res.KeptBy != tt.keptBy {
			t.Errorf("Rewrite(%q)\ngot  %q %q %q kept=%q\nwant %q %q %q kept=%q", tt.link.URL,
				res.URL, res.Form, names, res.KeptBy, tt.url, tt.form, tt.rules, tt.keptBy)
		}
		if tt.skipped != "" && (len(res.Changes) == 0 || !strings.Contains(res.Changes[len(res.Changes)-1].Skipped, tt.skipped)) {
			t.Errorf("Rewrite(%q): last change %+v should be skipped with %q", tt.link.URL, res.Changes, tt.skipped)
		}
		// each change starts where the one before ended
		prev := tt.link.URL
		if !hasScheme(prev) {
			prev = canon(prev)
		}
		for _, c := range res.Changes {
			if c.Old != prev {
				t.Errorf("Rewrite(%q): change %+v does not start from %q", tt.link.URL, c, prev)
			}
			prev = c.New
		}
		// the rules are idempotent on this file: a second pass changes nothing
		again, _ := rs.Rewrite(Link{URL: res.URL, Form: res.Form, Where: tt.link.Where, ContentType: tt.link.ContentType})
		if again.URL != res.URL || again.Form != res.Form {
			t.Errorf("Rewrite(%q) is not stable: %q %q, then %q %q", tt.link.URL, res.URL, res.Form, again.URL, again.Form)
		}
	}
}

func TestApplyChain(t *testing.T) {
	// every matching rule applies in turn, to the URL as rewritten so
	// far; a keep stops; each rule once
	src := `
[[rule]]
action = "map"
from-host = "a.example"
to-host = "b.example"
[[rule]]
action = "map"
from = "http://b.example/"
to = "http://c.example/"
[[rule]]
name = "loop back"
action = "map"
from-host = "c.example"
to-host = "a.example"
[[rule]]
name = "stop"
action = "keep"
match.host = "a.example"
[[rule]]
name = "never reached for a.example"
action = "map"
from-host = "a.example"
to-host = "z.example"
`
	rs, err := Parse(strings.NewReader(src), "chain.toml")
	if err != nil {
		t.Fatal(err)
	}
	got, changes, err := rs.Apply(Link{URL: "http://a.example/x?y#z"})
	if err != nil || got != "http://a.example/x?y#z" || len(changes) != 3 {
		t.Fatalf("Apply = %q %+v %v", got, changes, err)
	}
	want := []string{"http://b.example/x?y#z", "http://c.example/x?y#z", "http://a.example/x?y#z"}
	for i, c := range changes {
		if c.New != want[i] || c.Action != "map" {
			t.Errorf("change %d = %+v, want New %q", i, c, want[i])
		}
	}
	res, _ := rs.Rewrite(Link{URL: "http://a.example/x?y#z"})
	if res.KeptBy != "stop" {
		t.Errorf("KeptBy = %q", res.KeptBy)
	}
	if _, _, err := rs.Apply(Link{}); !errors.Is(err, ErrEmptyURL) {
		t.Errorf("Apply of an empty link: %v", err)
	}
}

func TestActions(t *testing.T) {
	src := `
rule = [
  { name = "unwrap2", action = "unwrap", max-depth = 1, match.form = "angle" },
  { name = "strip", action = "strip-params", defaults = false, params = ["sid"], match.scheme = ["https", "http"] },
  { name = "replace", action = "replace", pattern = "^https://r\\.example/(.*)$", with = "$1" },
  { name = "drop", action = "drop-wrapper", match.form = ["url-wrapper", "angle"] },
  { name = "mid", action = "mid-to-web", template = "https://l.example/r?id={msgid}" },
]
`
	rs, err := Parse(strings.NewReader(src), "actions.toml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		link    Link
		url     string
		form    string
		skipped string
		note    string
	}{
		// two layers, a bound of one: the outer removed, the rest reported
		{Link{URL: "https://nam02.safelinks.protection.outlook.com/?url=https%3A%2F%2Fnam02.safelinks.protection.outlook.com%2F%3Furl%3Dhttps%253A%252F%252Fexample.com%252F%26reserved%3D0&reserved=0", Form: "angle"},
			"https://nam02.safelinks.protection.outlook.com/?url=https%3A%2F%2Fexample.com%2F&reserved=0", "bare", "too many", ""},
		// strip-params with defaults off: utm_source stays
		{Link{URL: "https://example.com/?sid=1&utm_source=x", Form: "bare"}, "https://example.com/?utm_source=x", "bare", "", ""},
		// a replacement that is no URL is refused
		{Link{URL: "https://r.example/not a url", Form: "bare"}, "https://r.example/not a url", "bare", "not a URL", ""},
		{Link{URL: "mid:a%2Fb@example.org/part1@example.org", Form: "url-wrapper"},
			"https://l.example/r?id=a%2Fb@example.org", "bare", "", "content-id"},
		// forms other than wrappers are left alone by drop-wrapper
		{Link{URL: "http://example.com/", Form: "quoted"}, "http://example.com/", "quoted", "", ""},
		// abbreviated links are worked on in canonical form
		{Link{URL: "www.example.com/?sid=2", Canonical: "http://www.example.com/?sid=2", Form: "abbrev"}, "http://www.example.com/", "abbrev", "", ""},
		// unless nothing changes: then it stays as written
		{Link{URL: "www.example.com/?q=2", Canonical: "http://www.example.com/?q=2", Form: "abbrev"}, "www.example.com/?q=2", "abbrev", "", ""},
	}
	for _, tt := range tests {
		res, err := rs.Rewrite(tt.link)
		if err != nil {
			t.Fatal(err)
		}
		var skipped, note string
		for _, c := range res.Changes {
			skipped += c.Skipped
			note += c.Note
		}
		if res.URL != tt.url || res.Form != tt.form || !strings.Contains(skipped, tt.skipped) || (tt.skipped == "") != (skipped == "") ||
			!strings.Contains(note, tt.note) {
			t.Errorf("Rewrite(%q)\ngot  %q %q skipped=%q note=%q\nwant %q %q skipped=%q note=%q",
				tt.link.URL, res.URL, res.Form, skipped, note, tt.url, tt.form, tt.skipped, tt.note)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		src, where, msg string
	}{
		{"[[rule]]\naction = \"frobnicate\"\n", ":2:10:", "unknown action"},
		{"[[rule]]\nname = \"x\"\n", ":1:3:", "rule without an action"},
		{"[[rule]]\naction = \"map\"\nfrom = \"http://a/\"\n", ":1:3:", "needs a non-empty from and a to"},
		{"[[rule]]\naction = \"map\"\nfrom = \"http://a/\"\nto = \"x\"\nfrom-host = \"a\"\n", ":1:3:", "not both"},
		{"[[rule]]\naction = \"map\"\nfrom-host = \"a\"\nto-host = \"*.b\"\n", ":1:3:", "has a *"},
		{"[[rule]]\naction = \"keep\"\nmatch.form = \"bogus\"\n", ":3:14:", "unknown form"},
		{"[[rule]]\naction = \"replace\"\npattern = \"(\"\nwith = \"x\"\n", ":3:11:", "missing closing )"},
		{"[[rule]]\naction = \"keep\"\naction = \"map\"\n", ":3:1:", "action given twice"},
		{"[[rule]]\naction = \"keep\"\nmatch.host = \"a\"\n[rule.match]\nhost = \"b\"\n", ":5:1:", "match.host given twice"},
		{"x = 1\n", ":1:1:", "unknown key"},
		{"version = 2\n", ":1:11:", "version must be 1"},
		{"[[rule]]\naction = \n", ":2:", ""},
		// syntax errors at the end of the file
		{"[[rule]]\naction = \"keep\"\nmatch = {", ":3:9:", "incomplete"},
		{"[[rule]]\naction = \"keep", ":2:14:", "unterminated"},
		{"[[rule", ":1:6:", "]]"},
		{"[[rules]]\n", ":1:3:", "unknown table"},
		{"[match]\n", ":1:2:", "unknown table"},
		{"[[rule]]\naction = \"strip-params\"\ntemplate = \"{msgid}\"\n", ":1:3:", "strip-params takes no template"},
		{"[[rule]]\naction = \"keep\"\nmatch.host = \"ex ample.com\"\n", ":3:14:", "not a host name"},
		{"[[rule]]\naction = \"keep\"\nmatch.host = \"bücher.example\"\n", ":3:14:", "not ASCII"},
		{"[[rule]]\naction = \"keep\"\nmatch.location = \"header:\"\n", ":3:18:", "unknown location"},
		{"[[rule]]\naction = \"keep\"\nmatch.scheme = 7\n", ":3:16:", "a string or an array"},
		{"[[rule]]\naction = \"keep\"\nmatch.colour = \"red\"\n", ":3:1:", "unknown match key"},
		{"[[rule]]\naction = \"mid-to-web\"\ntemplate = \"https://x/\"\n", ":3:12:", "must contain {msgid}"},
		{"[[rule]]\naction = \"unwrap\"\nmax-depth = 0\n", ":3:13:", "between 1 and 64"},
		{"[[rule]]\naction = \"keep\"\nmatch = \"x\"\n", ":3:9:", "match must be a table"},
		// columns count characters: "é" is one
		{`rule = [ { name = "é", action = "bogus" } ]`, ":1:33:", "unknown action"},
	}
	for _, tt := range tests {
		_, err := Parse(strings.NewReader(tt.src), "r.toml")
		if err == nil || !strings.Contains(err.Error(), "r.toml"+tt.where) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("Parse(%q)\ngot  %v\nwant r.toml%s ... %s", tt.src, err, tt.where, tt.msg)
			continue
		}
		var re *Error
		if !errors.As(err, &re) || re.Line < 1 || re.Column < 1 {
			t.Errorf("Parse(%q): %#v is no *Error with a place", tt.src, err)
		}
	}
}

func TestParseManyErrors(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 30; i++ {
		b.WriteString("[[rule]]\naction = \"nope\"\n")
	}
	_, err := Parse(strings.NewReader(b.String()), "many.toml")
	var n int
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		if _, ok := e.(*Error); ok {
			n++
		}
	}
	if n != maxErrors {
		t.Fatalf("%d errors reported, want %d", n, maxErrors)
	}
	if !strings.Contains(err.Error(), "many.toml:2:10:") || !strings.Contains(err.Error(), "many.toml:40:10:") {
		t.Fatalf("errors without their places: %v", err)
	}
}

// The file is read the same through readers that return little at a time.
func TestParseReaders(t *testing.T) {
	src := mapRules(50)
	want, err := Parse(strings.NewReader(src), "x")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []func() *strings.Reader{func() *strings.Reader { return strings.NewReader(src) }} {
		for _, wrap := range []func(io.Reader) io.Reader{iotest.OneByteReader, iotest.HalfReader, iotest.DataErrReader} {
			got, err := Parse(wrap(r()), "x")
			if err != nil || got.Len() != want.Len() {
				t.Fatalf("Parse through a reader: %v, %d rules", err, got.Len())
			}
		}
	}
	if _, err := Parse(iotest.ErrReader(errors.New("disk on fire")), "x"); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("read error lost: %v", err)
	}
}

// mapRules writes n map rules, a third by prefix, a third by exact host,
// a third by domain.
func mapRules(n int) string {
	var b strings.Builder
	b.WriteString("version = 1\n")
	for i := 0; i < n; i++ {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, "[[rule]]\naction = \"map\"\nfrom = \"http://h%d.old.example/list/\"\nto = \"https://new.example/h%d/\"\n", i, i)
		case 1:
			fmt.Fprintf(&b, "[[rule]]\naction = \"map\"\nfrom-host = \"h%d.old.example\"\nto-host = \"h%d.new.example\"\n", i, i)
		default:
			fmt.Fprintf(&b, "[[rule]]\naction = \"map\"\nfrom-host = \"*.d%d.old.example\"\nto-host = \"*.d%d.new.example\"\n", i, i)
		}
	}
	return b.String()
}

// The index finds exactly the rule a walk through every rule finds.
func TestIndexAgreesWithLinear(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	hosts := []string{"a.example", "b.a.example", "c.b.a.example", "example", "x.org", "www.x.org"}
	var b strings.Builder
	for i := 0; i < 400; i++ {
		h := hosts[rng.IntN(len(hosts))]
		b.WriteString("[[rule]]\naction = \"canonicalize\"\n")
		switch rng.IntN(6) {
		case 0:
			fmt.Fprintf(&b, "match.host = %q\n", h)
		case 1:
			fmt.Fprintf(&b, "match.host = [%q, %q]\n", "*."+h, hosts[rng.IntN(len(hosts))])
		case 2:
			fmt.Fprintf(&b, "match.prefix = %q\n", "http://"+h+"/"+strings.Repeat("p", rng.IntN(3)))
		case 3:
			fmt.Fprintf(&b, "match = { prefix = %q, form = \"bare\" }\n", "http://"+h)
		case 4:
			fmt.Fprintf(&b, "match.scheme = [\"http\", \"ftp\"]\nmatch.form = %q\n", []string{"bare", "angle"}[rng.IntN(2)])
		default:
			fmt.Fprintf(&b, "match = { host = %q, scheme = \"ftp\" }\n", "*."+h)
		}
	}
	rs, err := Parse(strings.NewReader(b.String()), "random.toml")
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 3000; k++ {
		h := hosts[rng.IntN(len(hosts))]
		u := []string{"http", "ftp", "https"}[rng.IntN(3)] + "://" + h + "/" + strings.Repeat("p", rng.IntN(4)) + "q"
		st := state{form: []string{"bare", "angle"}[rng.IntN(2)]}
		st.setURL(u)
		pos := rng.IntN(rs.Len())
		want := -1
		for i := pos; i < rs.Len(); i++ {
			if rs.rules[i].matches(&st) {
				want = i
				break
			}
		}
		if got := rs.idx.next(rs.rules, &st, pos); got != want {
			t.Fatalf("next(%q %s, %d) = %d, a walk finds %d", u, st.form, pos, got, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(mapRules(3))
	f.Add("[[rule]]\naction = \"keep\"\nmatch = { host = [\"a\", \"*.b\"], form = \"bare\" }\n")
	f.Add("rule = [ { name = \"é\", action = \"bogus\" } ]")
	f.Add("[[rule]]\naction = \"strip-params\"\n[rule.match]\nscheme = \"https\"\n")
	f.Fuzz(func(t *testing.T, src string) {
		rs, err := Parse(strings.NewReader(src), "f.toml")
		if err != nil {
			var re *Error
			if !errors.As(err, &re) || re.Line < 1 || re.Column < 1 || re.Line > strings.Count(src, "\n")+1 {
				t.Fatalf("Parse(%q): error without a place in the file: %v", src, err)
			}
			return
		}
		for _, u := range []string{"http://a/?utm_source=1", "mid:x@y", "www.b"} {
			if _, err := rs.Rewrite(Link{URL: u, Form: "bare", Where: "body"}); err != nil {
				t.Fatalf("Rewrite(%q): %v", u, err)
			}
		}
	})
}

// A file over MaxRulesFileSize is refused, not read whole.
func TestParseTooLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 64 MiB")
	}
	big := io.LimitReader(spaces{}, MaxRulesFileSize+10)
	_, err := Parse(big, "big.toml")
	var re *Error
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("Parse of a file over the limit: %v", err)
	}
}

type spaces struct{}

func (spaces) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}
