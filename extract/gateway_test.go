package extract

import (
	"io"
	"mime/quotedprintable"
	"strconv"
	"strings"
	"testing"
)

// Security gateways' links as Outlook and other mailers hard-wrap them,
// written for these tests after the shapes of 2019-2026 list mail: Safe
// Links over several short lines, bare and quoted, with "&amp;" copied
// from HTML; URL Defense v2 and v3 (and its US host); and what must not
// be joined to them.

// The pieces of one Safe Links link, as a mailer wraps it at 72 columns
// or Outlook in short lines.
const safe = "https://nam06.safelinks.protection.outlook.com/?url=https%3A%2F%2Flore.kernel.org%2Flinux-cifs%2F20210604.a1b2c3%40example.org%2F&data=04%7C01%7Cjane%40example.com%7Cf7e7a8acfce742a8613d08d9274dd650%7C72f988bf86f141af91ab2d7cd011db47%7C1%7C0%7C637584037569130123%7CUnknown%7CTWFpbGZsb3d8eyJWIjoiMC4wLjAwMDAiLCJQIjoiV2luMzIiLCJBTiI6Ik1haWwiLCJXVCI6Mn0%3D%7C1000&sdata=KtltZkg52K1iI84809CQTxkIN4OxmoxhRDZ%2B%2BW4hu00%3D&reserved=0"

const v2 = "https://urldefense.proofpoint.com/v2/url?u=https-3A__git.example.org_pub_scm_linux_kernel_git_torvalds_linux.git_tree_fs_cifs&d=DwIFaQ&c=jf_iaSHvJObTbx-siA1ZOg&r=aBcDeFgHiJkLmNoPqRsTuVwXyZ012345&m=0123456789abcdefABCDEF0123456789abcdefAB&s=ZyXwVuTsRqPoNmLkJiHgFeDcBa9876543210zyxwvu&e="

const v3 = "https://urldefense.com/v3/__https://lore.kernel.org/linux-xfs/20240726171358.GA27612@lst.de/T/*t__;Iw!!ACWV5N9M2RV99hQ!P5jeP96F8wAtRAblbm8NvRo8nlpil03vA26UMMX8qrYa4IzKecAAk7x1l1M45bBshC3Czxn1CkDXypNSAg$"

// wrap cuts u into lines of n characters, each after prefix.
func wrap(prefix, u string, n int) string {
	var b strings.Builder
	for len(u) > n {
		b.WriteString(prefix + u[:n] + "\n")
		u = u[n:]
	}
	b.WriteString(prefix + u)
	return b.String()
}

type endWant struct {
	url    string
	form   Form
	joined bool
	ending Ending
	prob   string // a substring of one problem, or ""
}

var gatewayCases = []struct {
	name string
	in   string
	opts *Options
	want []endWant
}{
	{name: "safelinks-one-line", in: "see " + safe + " please", want: []endWant{{safe, FormBare, false, EndWrapper, ""}}},
	{name: "safelinks-72", in: wrap("", safe, 70) + "\nThanks,\nJane", want: []endWant{{safe, FormBare, true, EndWrapper, ""}}},
	{name: "safelinks-short-lines", in: "Link:\n" + wrap("", safe, 38) + "\n", want: []endWant{{safe, FormBare, true, EndWrapper, ""}}},
	{name: "safelinks-quoted", in: "> Patch is at\n" + wrap("> ", safe, 70) + "\n> \n> Regards", want: []endWant{{safe, FormBare, true, EndWrapper, ""}}},
	{name: "safelinks-quoted-twice", in: wrap("> > ", safe, 44) + "\n> > [[PATCH/RFC] NFSv4: do not block other mounts]", want: []endWant{{safe, FormBare, true, EndWrapper, ""}}},
	{name: "safelinks-amp", in: wrap(">>> ", strings.ReplaceAll(safe, "&", "&amp;"), 68) + "\n>>>", want: []endWant{{strings.ReplaceAll(safe, "&", "&amp;"), FormBare, true, EndWrapper, ""}}},
	{name: "safelinks-marker-then-prose", in: wrap("", safe, 70) + " looks useful, as a guide.", want: []endWant{{safe, FormBare, true, EndWrapper, ""}}},
	{name: "safelinks-marker-then-paren", in: "(see " + wrap("", safe, 70) + ") or not", want: []endWant{{safe, FormBare, true, EndWrapper, ""}}},
	{name: "safelinks-marker-split", in: safe[:len(safe)-5] + "\n" + safe[len(safe)-5:] + "\nnext", want: []endWant{{safe, FormBare, true, EndWrapper, ""}}},
	{name: "safelinks-one-line-then-patch", in: "> > " + safe + "\n> > [[PATCH/RFC] NFSv4: do not block other mounts]", want: []endWant{{safe, FormBare, false, EndWrapper, ""}}},
	{name: "safelinks-one-line-then-path", in: "> > " + safe + "\n> > /usr/lib/x_y", want: []endWant{{safe, FormBare, false, EndWrapper, ""}}},
	// not joined: the first line alone, its end not proven
	{name: "safelinks-other-prefix", in: "> " + safe[:70] + "\n" + safe[70:], want: []endWant{{safe[:70], FormBare, false, EndUnproven, ProblemGatewayCut}}},
	{name: "safelinks-space-inside", in: safe[:70] + "\n" + safe[70:140] + " " + safe[140:], want: []endWant{{safe[:70], FormBare, false, EndUnproven, ProblemGatewayCut}}},
	{name: "safelinks-no-marker", in: safe[:70] + "\n" + safe[70:140] + "\n\nThanks", want: []endWant{{safe[:70], FormBare, false, EndUnproven, ProblemGatewayCut}}},
	{name: "safelinks-too-many-lines", in: wrap("", safe, 20), want: []endWant{{safe[:20], FormBare, false, EndUnproven, ProblemGatewayCut}}},
	{name: "safelinks-then-sentence", in: safe[:70] + "\nThanks for looking.", want: []endWant{{safe[:70], FormBare, false, EndUnproven, ProblemGatewayCut}}},
	{name: "safelinks-foreign-char", in: safe[:70] + "\n" + safe[70:100] + "/x/" + safe[100:], want: []endWant{{safe[:70], FormBare, false, EndUnproven, ProblemGatewayCut}}},
	// the second link of the issue: a quoted gateway link whose quote
	// does not close where its marker is
	{name: "quoted-then-angle", in: "> see \"" + safe + "\n> <http://b.example/two>\" for details",
		want: []endWant{{safe, FormBare, false, EndWrapper, ProblemUnterminated}, {"http://b.example/two", FormAngle, false, EndDelimiter, ""}}},
	{name: "quoted-wrapped", in: "> see \"" + wrap("> ", safe, 60)[2:] + "\" for details", want: []endWant{{safe, FormQuoted, true, EndWrapper, ""}}},
	{name: "quoted-joined-plain", in: "> see \"https://a.example/one\n> two\" for details", want: []endWant{{"https://a.example/onetwo", FormQuoted, true, EndUnproven, ""}}},
	{name: "angle-wrapped", in: "<" + wrap("  ", safe, 60)[2:] + ">", want: []endWant{{safe, FormAngle, true, EndWrapper, ""}}},
	{name: "angle-cut", in: "<" + safe[:90] + ">", want: []endWant{{safe[:90], FormAngle, false, EndUnproven, ProblemGatewayCut}}},
	{name: "plain-quoted-then-angle", in: "> see \"http://a.example/one\n> <http://b.example/two>\" for details",
		want: []endWant{{"http://a.example/one", FormBare, false, EndText, ProblemUnterminated}, {"http://b.example/two", FormAngle, false, EndDelimiter, ""}}},
	// URL Defense v2 and v3
	{name: "v2-one-line", in: v2, want: []endWant{{v2, FormBare, false, EndWrapper, ""}}},
	{name: "v2-wrapped", in: wrap("> ", v2, 66) + "\n> Steve", want: []endWant{{v2, FormBare, true, EndWrapper, ""}}},
	{name: "v2-cut", in: strings.TrimSuffix(v2, "&e="), want: []endWant{{strings.TrimSuffix(v2, "&e="), FormBare, false, EndUnproven, ProblemGatewayCut}}},
	{name: "v3-one-line", in: v3 + ".", want: []endWant{{v3, FormBare, false, EndWrapper, ""}}},
	{name: "v3-wrapped", in: wrap("> > > > ", v3, 52) + "  tags/for-next", want: []endWant{{v3, FormBare, true, EndWrapper, ""}}},
	{name: "v3-wrapped-after-host", in: "fixes @ https://urldefense.com/\n" + strings.TrimPrefix(v3, "https://urldefense.com/") + "\n. I doubt it",
		want: []endWant{{v3, FormBare, true, EndWrapper, ""}}},
	{name: "v3-bang-escaped", in: wrap("", strings.ReplaceAll(v3, "!", "%21"), 60), want: []endWant{{strings.ReplaceAll(v3, "!", "%21"), FormBare, true, EndWrapper, ""}}},
	{name: "v3-us", in: wrap("", strings.Replace(v3, "urldefense.com", "urldefense.us", 1), 60), want: []endWant{{strings.Replace(v3, "urldefense.com", "urldefense.us", 1), FormBare, true, EndWrapper, ""}}},
	{name: "v3-marker-glued", in: "see " + v3[:100] + "\n" + v3[100:] + "xfs/ for more", want: []endWant{{v3[:100], FormBare, false, EndUnproven, ProblemGatewayCut}}},
	{name: "v3-marker-glued-one-line", in: v3 + "xfs/", want: []endWant{{v3 + "xfs/", FormBare, false, EndUnproven, ProblemGatewayCut}}},
	{name: "v3-marker-then-punct", in: "(" + v3[:100] + "\n" + v3[100:] + ").", want: []endWant{{v3, FormBare, true, EndWrapper, ""}}},
	{name: "v3-space-after-bang", in: v3[:100] + " " + v3[100:], want: []endWant{{v3[:100], FormBare, false, EndUnproven, ProblemGatewayCut}}},
	{name: "v3-nested", in: "https://urldefense.com/v3/__" + v3 + "xfs/x/*t__;Iw!!ACWV5N9M2RV99hQ!IuEPY6yJ1ZEQu7dpfjUplk$",
		want: []endWant{{"https://urldefense.com/v3/__" + v3 + "xfs/x/*t__;Iw!!ACWV5N9M2RV99hQ!IuEPY6yJ1ZEQu7dpfjUplk$", FormBare, false, EndWrapper, ""}}},
	{name: "v3-nested-inner-only", in: wrap("", "https://urldefense.com/v3/__"+v3, 60) + "\nxfs/x/*t__;Iw!!ACWV5N9M2RV99hQ! IuEPY6yJ1ZEQu7dpfjUplk$",
		want: []endWant{{("https://urldefense.com/v3/__" + v3)[:60], FormBare, false, EndUnproven, ProblemGatewayCut}}},
	// endings of links that are no gateway's
	{name: "text", in: "see http://a.example/x.", want: []endWant{{"http://a.example/x", FormBare, false, EndText, ""}}},
	{name: "delimiter", in: "<http://a.example/x\n  y>", want: []endWant{{"http://a.example/xy", FormAngle, true, EndDelimiter, ""}}},
	{name: "heuristic", in: long("http://a.example/q?id=") + "\n12345 is the one", want: []endWant{{"http://a.example/q?id=12345", FormBare, true, EndUnproven, ""}}},
	{name: "abbrev", in: "www.a.example/x", want: []endWant{{"www.a.example/x", FormAbbrev, false, EndText, ""}}},
	{name: "gateway-host-only", in: "https://urldefense.com/ and https://eur01.safelinks.protection.outlook.com/",
		want: []endWant{{"https://urldefense.com/", FormBare, false, EndUnproven, ProblemGatewayCut}, {"https://eur01.safelinks.protection.outlook.com/", FormBare, false, EndUnproven, ProblemGatewayCut}}},
	{name: "not-gateway", in: "https://urldefense.com.example/v3/__x", want: []endWant{{"https://urldefense.com.example/v3/__x", FormBare, false, EndText, ""}}},
	// no heuristic: gateway joins stay, being proven by the marker
	{name: "no-heuristic", in: wrap("", safe, 70), opts: &Options{NoHeuristic: true}, want: []endWant{{safe, FormBare, true, EndWrapper, ""}}},
}

func TestGatewayLinks(t *testing.T) {
	for _, c := range gatewayCases {
		for _, r := range readers {
			links := scanAll(t, r.fn(strings.NewReader(c.in)), c.opts)
			checkEndings(t, c.name+"/"+r.name, c.in, links, c.want)
		}
		checkEndings(t, c.name, c.in, All([]byte(c.in), c.opts), c.want)
	}
}

func scanAll(t *testing.T, r interface{ Read([]byte) (int, error) }, opts *Options) []Link {
	t.Helper()
	sc := NewScanner(r, opts)
	var ls []Link
	for sc.Scan() {
		ls = append(ls, sc.Link())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return ls
}

func checkEndings(t *testing.T, name, in string, links []Link, ws []endWant) {
	t.Helper()
	if len(links) != len(ws) {
		t.Errorf("%s: %q\ngot %d links %q\nwant %d", name, in, len(links), urls(links), len(ws))
		return
	}
	for i, w := range ws {
		l := links[i]
		probOK := w.prob == "" && len(l.Problems) == 0
		for _, p := range l.Problems {
			probOK = probOK || w.prob != "" && strings.Contains(p, w.prob)
		}
		if l.URL != w.url || l.Form != w.form || l.Joined != w.joined || l.Ending != w.ending || !probOK {
			t.Errorf("%s: %q\ngot  %q %s joined=%v ending=%v problems=%q\nwant %q %s joined=%v ending=%v problem~%q",
				name, in, l.URL, l.Form, l.Joined, l.Ending, l.Problems, w.url, w.form, w.joined, w.ending, w.prob)
		}
		if l.EndProven() != (w.ending != EndUnproven) {
			t.Errorf("%s: %q: EndProven %v with ending %v", name, l.URL, l.EndProven(), l.Ending)
		}
		checkSpan(t, name, in, l)
	}
}

// TestQPDebris: quoted-printable text read as plain gives links with a
// problem and not valid; a control character never goes into a URL.
func TestQPDebris(t *testing.T) {
	tests := []struct {
		in, url string
		valid   bool
		prob    string
	}{
		{"https://go.microsoft.com/=fwlink/?LinkId=3D389363", "https://go.microsoft.com/=fwlink/?LinkId=3D389363", false, ProblemQPDebris},
		{long("https://go.example.com/fwlink/?LinkId=") + "\n3D389363&clcid=3D0x409 for it", "https://go.example.com/fwlink/?LinkId=3D389363&clcid=3D0x409", false, ProblemQPDebris},
		{"<a href=3D\"mailto:kij=\nitora@example.jp\">Kiji</a>", "mailto:kij=itora@example.jp", false, ProblemQPDebris},
		{"<a href=3D\"https://a.example/x?a=3Db\">", "https://a.example/x?a=3Db", false, ProblemQPDebris},
		// not debris: a query wrapped after "=", in decoded text
		{"see \"http://a.example/q?id=\n12345\" now", "http://a.example/q?id=12345", true, ""},
		{"http://a.example/q?id=3", "http://a.example/q?id=3", true, ""},
		// controls: the delimiters hold no URL, the bare one ends there
		{"<http://a.example/x\x00y>", "http://a.example/x", true, ""},
		{"<URL:http://a.example/x\x00y>", "http://a.example/x", true, ""},
		{"\"http://a.example/x\x01y\"", "http://a.example/x", true, ""},
		{"<http://a.example/x\n\x00y>", "http://a.example/x", true, ProblemUnterminated},
		{"<URL:http://a.example/x\n  \x7fy>", "http://a.example/x", true, ProblemUnterminated},
		{"<http://a.example/x\u009fy>", "http://a.example/x", true, ""},
		{"mailto:kij\x00@a.example", "mailto:kij", true, ""},
	}
	for _, tt := range tests {
		links := All([]byte(tt.in), nil)
		if len(links) != 1 {
			t.Errorf("%q: %d links %q, want 1", tt.in, len(links), urls(links))
			continue
		}
		l := links[0]
		probOK := tt.prob == "" && len(l.Problems) == 0
		for _, p := range l.Problems {
			probOK = probOK || tt.prob != "" && strings.Contains(p, tt.prob)
		}
		if l.URL != tt.url || l.Valid != tt.valid || !probOK {
			t.Errorf("%q: got %q valid=%v %q, want %q valid=%v problem~%q", tt.in, l.URL, l.Valid, l.Problems, tt.url, tt.valid, tt.prob)
		}
		checkSpan(t, tt.in, tt.in, l)
	}
}

// TestGatewayInQuotedPrintable: a Safe Links link that Outlook both
// hard-wrapped (line breaks in the text) and encoded quoted-printable
// (soft line breaks "=" and "=3D") is found whole in the decoded text,
// as scan gives it for a text/plain part; read undecoded, it is debris.
func TestGatewayInQuotedPrintable(t *testing.T) {
	u := "https://nam04.safelinks.protection.outlook.com/?url=https%3A%2F%2Fsashiko.dev%2F%23%2Fpatchset%2F20250301&data=05%7C02%7Cjane%40example.com%7C1833e410654f404c%7C0%7C0%7C638096562049062332&sdata=5LeoPwPYSRBjtu1PmH3OlLgH%2FJ2JQ%3D&reserved=0"
	var text strings.Builder
	text.WriteString("> Patchset is at\n")
	text.WriteString(wrap("> ", u, 74))
	text.WriteString("\n> \n> Thanks\n")
	var enc strings.Builder
	w := quotedprintable.NewWriter(&enc)
	if _, err := w.Write([]byte(text.String())); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if !strings.Contains(enc.String(), "=\n") && !strings.Contains(enc.String(), "=\r\n") {
		t.Fatalf("no soft line break in %q", enc.String())
	}
	dec, err := io.ReadAll(quotedprintable.NewReader(strings.NewReader(enc.String())))
	if err != nil {
		t.Fatal(err)
	}
	checkEndings(t, "decoded", string(dec), All(dec, nil), []endWant{{u, FormBare, true, EndWrapper, ""}})
	for _, l := range All([]byte(enc.String()), nil) {
		if l.Valid && strings.Contains(l.URL, "=3D") {
			t.Errorf("undecoded: valid link with =3D: %q", l.URL)
		}
	}
}

// TestGatewayWrapWidths: every gateway link wrapped at every width from
// 20 to 90 columns, after every quote prefix, with text after it, is
// found whole and proven when it takes at most 2*MaxJoinLines+1 lines,
// and otherwise reported as its first line, unproven: never as a longer
// prefix of itself, never with a word of the text after it.
func TestGatewayWrapWidths(t *testing.T) {
	links := []string{safe, strings.ReplaceAll(safe, "&", "&amp;"), v2, v3, strings.Replace(v3, "urldefense.com", "urldefense.us", 1)}
	for _, u := range links {
		for _, pfx := range []string{"", "> ", "> > ", ">>> ", "| "} {
			for n := 20; n <= 90; n++ {
				in := "Please see\n" + wrap(pfx, u, n) + " for the details.\n" + pfx + "Thanks"
				ls := All([]byte(in), nil)
				lines := (len(u) + n - 1) / n
				want := endWant{u, FormBare, lines > 1, EndWrapper, ""}
				if lines > 2*8+1 {
					want = endWant{u[:trimTrail([]byte(u), 0, n)], FormBare, false, EndUnproven, ProblemGatewayCut}
				}
				if len(ls) == 0 {
					t.Errorf("%d columns after %q: no link", n, pfx)
					continue
				}
				checkEndings(t, u[:30]+"/"+pfx+"/"+strconv.Itoa(n), in, ls[:1], []endWant{want})
			}
		}
	}
}
