package rewritecheck

import (
	"io"
	"strings"
	"testing"

	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/rewrite"
)

// TestModernFixture runs the check over testdata/rewritecheck/modern.mbox,
// mail written on the shapes of real 2019-2026 list mail: Outlook
// replies with Safe Links hard-wrapped over quoted lines, a patch subject
// on the line after a Safe Link, URL Defense v2 and v3 links in
// quoted-printable parts (a v3 "!" written "%21", a target with one
// slash, urldefense.us), a quoted link with a second link after it, an
// Outlook hard wrap whose lines lost their quote prefix, a Safe Link in
// a base64 part, a FireEye link in a mailx part with its own
// Content-Length. No word outside the links written changes, each link
// written is the whole gateway link, no target is truncated; the links
// whose end nothing proves are reported with the reason.
func TestModernFixture(t *testing.T) {
	r := checkFile(t, "../../testdata/rewritecheck/modern.mbox")
	t.Logf("\n%s", r.String())
	if r.Failed() {
		t.Fatalf("the check failed:\n%s", r.String())
	}
	if r.Messages != 6 || r.Gateway != 11 || r.Unwrapped < 6 {
		t.Fatalf("messages %d, gateway links %d, unwrapped %d; want 6, 11, at least 6", r.Messages, r.Gateway, r.Unwrapped)
	}
	for _, m := range r.Missed {
		if !strings.Contains(m, "end marker") && !strings.Contains(m, "proves where it ends") {
			t.Errorf("a whole link left without a reason about its end: %s", m)
		}
	}
}

func checkFile(t *testing.T, path string) *Result {
	t.Helper()
	rd, err := mailbox.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var r Result
	rs := Rules()
	for {
		m, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		Message(rs, m.Raw, m.MessageID, &r)
	}
	return &r
}

// TestGateways: the oracle's links run from the host to the end marker
// across line breaks, quote prefixes and blanks; formats without one
// end at a blank, less closing punctuation.
func TestGateways(t *testing.T) {
	tests := []struct {
		text string
		want string
		err  bool
	}{
		{"> see https://nam04.safelinks.protection.outlook.com/?url=https%3A%2F%2Fx.example%2Fa\n> %2Fb&data=1&reserved=0\n> [[PATCH]]\n",
			"https://nam04.safelinks.protection.outlook.com/?url=https%3A%2F%2Fx.example%2Fa%2Fb&data=1&reserved=0", false},
		{"(https://urldefense.com/v3/__https://x.example/__;!!A! B$) and more",
			"https://urldefense.com/v3/__https://x.example/__;!!A!B$", false},
		{"https://protect2.fireeye.com/v1/url?k=1&u=https%3A%2F%2Fx.example%2F, then",
			"https://protect2.fireeye.com/v1/url?k=1&u=https%3A%2F%2Fx.example%2F", false},
		{"https://nam04.safelinks.protection.outlook.com/?url=https%3A%2F%2Fx.example%2F&data=1\n\nnext paragraph",
			"https://nam04.safelinks.protection.outlook.com/?url=https%3A%2F%2Fx.example%2F&data=1", true},
	}
	for _, tt := range tests {
		gs := Gateways([]byte(tt.text))
		if len(gs) != 1 || gs[0].URL != tt.want || (gs[0].Err != nil) != tt.err {
			t.Errorf("Gateways(%q) = %+v, want %q (error %v)", tt.text, gs, tt.want, tt.err)
		}
	}
}

// TestSameWords: a word eaten or changed outside the links written is
// found; a new URL glued to the text around it is not a change.
func TestSameWords(t *testing.T) {
	old := "see (https://urldefense.com/v3/__https://x.example/__;!!A!B$) now\n> [[PATCH/RFC]] here\n"
	link := "https://urldefense.com/v3/__https://x.example/__;!!A!B$"
	s := int64(strings.Index(old, link))
	w := []rewrite.LinkChange{{Start: s, End: s + int64(len(link)), Old: link, New: "https://x.example/"}}
	if d := sameWords([]byte(old), []byte("see (https://x.example/) now\n> [[PATCH/RFC]] here\n"), w); d != "" {
		t.Errorf("a good rewrite fails: %s", d)
	}
	for _, bad := range []string{
		"see (https://x.example/) now\n> here\n",
		"see (https://x.example/)now\n> [[PATCH/RFC]] here\n",
		"see https://x.example/ now\n> [[PATCH/RFC]] here\n",
	} {
		if sameWords([]byte(old), []byte(bad), w) == "" {
			t.Errorf("damage not found: %q", bad)
		}
	}
}
