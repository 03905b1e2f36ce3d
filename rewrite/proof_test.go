package rewrite

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/linkscan/linkscan/extract"
)

// unwrapRules is one rule, the shipped unwrappers.
func unwrapRules(t testing.TB) *Rules {
	t.Helper()
	rs, err := Parse(strings.NewReader("[[rule]]\nname = \"gateways\"\naction = \"unwrap\"\n"), "unwrap.toml")
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// TestRefuseUnproven: a link whose end nothing proves is left as
// written and reported with the reason; the words after it, and a
// second link glued to it, stay. The shapes are those Outlook and
// mailing lists write: a patch subject on the line after a Safe Link, a
// second link in the quote after a quoted one, a Safe Link hard-wrapped
// by Outlook (its first line is no whole link), a link joined by the
// mailer-wrap rule. Before, the first was unwrapped with "[[PATCH/RFC]"
// eaten, the second with "<http://b.example/two>" eaten, the third to
// "https://sashi".
func TestRefuseUnproven(t *testing.T) {
	safe := "https://nam04.safelinks.protection.outlook.com/?url=https%3A%2F%2Fexample.com%2Fa&data=05%7C02&reserved=0"
	tests := []struct {
		name   string
		body   string
		keep   []string // lines of the output
		reason string   // a word of the first change's Skipped ("" written)
	}{
		{"patch subject after a link",
			"> > " + safe + "\n> > [[PATCH/RFC] NFSv4: do not block other mounts]\n",
			[]string{"> > [[PATCH/RFC] NFSv4: do not block other mounts]"}, ""},
		{"second link after a quoted one",
			"> see \"" + safe + "\n> <http://b.example/two>\" for details\n",
			[]string{"> <http://b.example/two>\" for details"}, ""},
		{"outlook hard wrap",
			"> https://nam04.safelinks.protection.outlook.com/?url=https%3A%2F%2Fsashi\nko.\n> dev%2F%23%2Fa&data=05%7C02&reserved=0\n",
			[]string{"> https://nam04.safelinks.protection.outlook.com/?url=https%3A%2F%2Fsashi", "ko.", "> dev%2F%23%2Fa&data=05%7C02&reserved=0"}, "reserved=0"},
		{"v3 without its $",
			"see https://urldefense.com/v3/__https://lore.kernel.org/linux-__;!!ACWV5N9M2RV99hQ\n!J3HKTWLF8Qx$xfs/ for more\n",
			[]string{"see https://urldefense.com/v3/__https://lore.kernel.org/linux-__;!!ACWV5N9M2RV99hQ"}, "cut"},
		{"a wrapper of a wrapper, the outer one cut by a wrap",
			"see https://urldefense.com/\n> v3/__https://urldefense.com/v3/__https://lore.kernel.org/linux-__;!!AAAA!BBBB$\n> xfs/20251105.GV1@example.org/T/*t__;Iw!!AAAA!CCCC$ for more\n",
			[]string{"> v3/__https://urldefense.com/v3/__https://lore.kernel.org/linux-__;!!AAAA!BBBB$"}, "inside a longer word"},
		{"mailer-wrap join of a gateway link without an end marker",
			"https://protect2.fireeye.com/v1/url?k=1-2-3&q=1&e=4&u=https%3A%2F%2Fexample.com%2Fdocs%2Fsome%2Fvery%2Flong%2Fpath%2Fto\n%2Fdocument\n",
			[]string{"%2Fdocument"}, "mailer-wrap"},
	}
	rs := unwrapRules(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := "From: a@example.org\nSubject: x\n\n" + tt.body
			m := readOne(t, []byte(msg))
			out, chs, err := rs.Message(m, &Options{BreakDKIM: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range tt.keep {
				if !bytes.Contains(out, []byte("\n"+k+"\n")) {
					t.Errorf("line %q lost:\n%s\nchanges: %s", k, out, changesJSON(chs))
				}
			}
			for _, c := range chs {
				if c.Skipped == "" && !strings.HasPrefix(c.New, "https://example.com/a") {
					t.Errorf("wrote %q for %q", c.New, c.Old)
				}
			}
			if tt.reason != "" && !slices.ContainsFunc(chs, func(c LinkChange) bool { return strings.Contains(c.Skipped, tt.reason) }) {
				t.Errorf("want a change skipped for %q:\n%s", tt.reason, changesJSON(chs))
			}
		})
	}
}

// TestProvenJoin: a link joined from several lines is written where its
// structure proves its end: a Safe Link closed by "reserved=0", a link
// in <...>.
func TestProvenJoin(t *testing.T) {
	rs := unwrapRules(t)
	for _, body := range []string{
		"see\nhttps://nam04.safelinks.protection.outlook.com/?url=https%3A%2F%2Fexample.com%2Fa%2Fb&data=05%7C02%7Cx%40example.com%7C0123456789abcdef\n%7C0&sdata=abcdefgh%3D&reserved=0\nbye\n",
		"> see <https://urldefense.com/v3/__https://example.com/a__;!!AAAA!BBBB\n> CCCC$> bye\n",
		// an Outlook hard wrap with the quote prefix on each line
		"> https://nam04.safelinks.protection.outlook.com/?url=https%3A%2F%2Fexample.com%2Fa\n> %2Fb&data=05%7C02&reserved=0\n> bye\n",
	} {
		m := readOne(t, []byte("From: a@example.org\nSubject: x\n\n"+body))
		out, chs, err := rs.Message(m, nil)
		if err != nil || len(chs) != 1 || chs[0].Skipped != "" {
			t.Fatalf("%q: %v\n%s", body, err, changesJSON(chs))
		}
		if !bytes.Contains(out, []byte("https://example.com/a")) || !bytes.Contains(out, []byte("bye\n")) {
			t.Errorf("%q:\n%s", body, out)
		}
	}
}

// TestVerifyOutput: the check before a write finds a word changed
// outside the links written, and a link written in another place.
func TestVerifyOutput(t *testing.T) {
	msg := "From: a@example.org\nSubject: x\n\nsee https://urldefense.com/v3/__https://example.com/a__;!!A!B$ for\n> details\nhttp://old.example/x\n"
	rs := unwrapRules(t)
	m := readOne(t, []byte(msg))
	out, chs, err := rs.Message(m, nil)
	if err != nil || len(chs) != 1 || chs[0].Skipped != "" {
		t.Fatalf("%v %s", err, changesJSON(chs))
	}
	changes := &Changes{}
	for i := range chs {
		chs[i].written = chs[i].New
		changes.add(&chs[i])
	}
	mv := readOne(t, []byte(msg)) // read again: m.Parts is called once
	pv := mv.Parts()
	if why := verifyOutput(mv, pv, out, changes); why != "" {
		t.Fatalf("the output fails: %s", why)
	}
	for _, bad := range []string{
		strings.Replace(string(out), "> details", "> detail", 1),
		strings.Replace(string(out), "for\n", "for \n", 1),
		strings.Replace(string(out), "https://example.com/a for", "https://example.com/a  for", 1),
		strings.Replace(string(out), "Subject: x", "Subject: y", 1),
		strings.Replace(string(out), "see https://example.com/a", "see https://example.com/b", 1),
		strings.Replace(string(out), "see https://example.com/a for\n", "see for\nhttps://example.com/a ", 1),
	} {
		if bad == string(out) {
			t.Fatalf("no damage made in %q", out)
		}
		if why := verifyOutput(mv, pv, []byte(bad), changes); why == "" {
			t.Errorf("damage not found:\n%s", bad)
		}
	}
}

// TestVerifyRefuses: a pass whose output fails the check gives the
// message back as it was, every change reported with the reason.
func TestVerifyRefuses(t *testing.T) {
	msg := "From: a@example.org\nSubject: x\n\nsee https://urldefense.com/v3/__https://example.com/a__;!!A!B$ for details\n"
	rs := unwrapRules(t)
	faultHook = func(out []byte) []byte { return bytes.Replace(out, []byte("details"), []byte("detail"), 1) }
	defer func() { faultHook = nil }()
	m := readOne(t, []byte(msg))
	out, chs, err := rs.Message(m, nil)
	if err != nil || string(out) != msg[m.RawOffset:] || len(chs) != 1 || !strings.HasPrefix(chs[0].Skipped, SkipVerify) {
		t.Fatalf("%v\n%s\n%s", err, out, changesJSON(chs))
	}
}

// TestPartContentLength: a part with its own Content-Length (Solaris
// mailx writes one per part) gets the new length when a link in it
// changes; a part nothing changes in, and a field that was wrong, keep
// theirs.
func TestPartContentLength(t *testing.T) {
	body1 := "see https://urldefense.com/v3/__https://example.com/a__;!!A!B$ here\n"
	body2 := "and https://urldefense.com/v3/__https://example.com/b__;!!A!B$ there\n"
	body3 := "none here\n"
	build := func(n1, n2, n3 int) string {
		return "From: a@example.org\nSubject: x\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"b\"\n\n" +
			"--b\nContent-Type: text/plain\nContent-Length: " + strconv.Itoa(n1) + "\n\n" + body1 +
			"--b\nContent-Type: text/plain\nContent-Length: " + strconv.Itoa(n2) + "\n\n" + body2 +
			"--b\nContent-Type: text/plain\nContent-Length: " + strconv.Itoa(n3) + "\n\n" + body3 + "--b--\n"
	}
	// the body sizes as the reader gives them, then the message with
	// the right sizes in parts 1 and 3 and a wrong one in part 2
	probe := readOne(t, []byte(build(0, 0, 0)))
	var sizes []int
	for _, p := range probe.Parts() {
		if p.Path != "" {
			sizes = append(sizes, int(p.RawEnd-p.RawStart))
		}
	}
	if len(sizes) != 3 {
		t.Fatalf("%d parts", len(sizes))
	}
	msg := build(sizes[0], sizes[1]+40, sizes[2])
	out, chs, err := unwrapRules(t).Message(readOne(t, []byte(msg)), nil)
	if err != nil || len(chs) != 2 || chs[0].Skipped != "" || chs[1].Skipped != "" {
		t.Fatalf("%v %s", err, changesJSON(chs))
	}
	m2 := readOne(t, out)
	var got []string
	var now []int
	for _, p := range m2.Parts() {
		if p.Path != "" {
			got = append(got, p.Header.Get("Content-Length"))
			now = append(now, int(p.RawEnd-p.RawStart))
		}
	}
	want := []string{strconv.Itoa(now[0]), strconv.Itoa(sizes[1] + 40), strconv.Itoa(sizes[2])}
	if !slices.Equal(got, want) || now[0] == sizes[0] {
		t.Fatalf("Content-Length %v, want %v (bodies now %v, were %v)\n%s", got, want, now, sizes, out)
	}
}

// TestNumberedListing: a numbered listing whose next item starts with
// "--" (seed 001) is not eaten by a map rule: "  680. " stays, whether
// extract joins the lines (then the link is refused) or not.
func TestNumberedListing(t *testing.T) {
	rs, err := Parse(strings.NewReader("[[rule]]\naction = \"map\"\nfrom-host = \"www.library.example.edu\"\nto-host = \"library.example.org\"\n"), "map.toml")
	if err != nil {
		t.Fatal(err)
	}
	body := "  678. http://www.library.example.edu/pub/catalogue/volumes/1994/wen43\n" +
		"  679. http://www.library.example.edu/pub/catalogue/volumes/1994/wen44\n  680. --4.98\n"
	m := readOne(t, []byte("From: a@example.org\nSubject: x\n\n"+body))
	out, chs, err := rs.Message(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte("\n  680. --4.98\n")) || !bytes.Contains(out, []byte("  678. http://library.example.org/pub/catalogue/volumes/1994/wen43\n")) {
		t.Fatalf("%s\n%s", out, changesJSON(chs))
	}
}

// TestUnprovenEnding: a joined link in <...> is proven by its closer
// only where package extract says the closer ended it.
func TestUnprovenEnding(t *testing.T) {
	text := []byte("<http://a.example/x\n> y/z>")
	l := extract.Link{URL: "http://a.example/xy/z", Form: extract.FormAngle, Joined: true, Start: 1, End: 25}
	for _, tt := range []struct {
		ending extract.Ending
		proven bool
	}{{extract.EndDelimiter, true}, {extract.EndUnproven, false}} {
		l.Ending = tt.ending
		if got := unproven(&l, text) == ""; got != tt.proven {
			t.Errorf("ending %v: proven %v, want %v", tt.ending, got, tt.proven)
		}
	}
}
