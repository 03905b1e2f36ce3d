package rewrite

import (
	"bytes"
	"strings"
	"testing"
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
			if tt.reason != "" && (len(chs) == 0 || !strings.Contains(chs[0].Skipped, tt.reason)) {
				t.Errorf("want the first change skipped for %q:\n%s", tt.reason, changesJSON(chs))
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
	if why := verifyOutput(m, out, changes); why != "" {
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
		if why := verifyOutput(m, []byte(bad), changes); why == "" {
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
