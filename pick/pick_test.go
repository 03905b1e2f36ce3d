package pick

import (
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/linkscan/linkscan/rewrite"
)

// fixture is the message the command's tests use too: a wrapped <URL:>
// link in a quoted reply, a Safe Links link in a base64 HTML part, a
// link twice and one in List-Post.
func fixture(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../testdata/pick/message.eml")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const safeLink = "https://nam12.safelinks.protection.outlook.com/?url=https%3A%2F%2Fwiki.example.org%2Fminutes%2F2026-11-20&data=05%7C02%7Cx%40example.com&sdata=abc&reserved=0"

func TestRead(t *testing.T) {
	items, st, err := Read(iotest.OneByteReader(strings.NewReader(string(fixture(t)))), "msg", Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Item{
		{Target: "mailto:dev@lists.example.org", URL: "mailto:dev@lists.example.org", Count: 1,
			Where: "header List-Post", Context: "Subject: Re: Minutes of the November meeting"},
		{Target: "http://archive.example.net/reports/2026/november-meeting-report.html", URL: "http://archive.example.net/reports/2026/november-meeting-report.html", Count: 1,
			Where: "part 1 (text/plain) line 2", Context: "> The old report is at <URL:http://archive.example.net/reports/"},
		{Target: "https://www.example.com/plain-in-html", URL: "https://www.example.com/plain-in-html", Count: 2,
			Where: "part 1 (text/plain) line 4", Context: "> Also https://www.example.com/plain-in-html again."},
		{Target: "https://docs.example.org/draft?id=42", URL: "https://docs.example.org/draft?id=42", Count: 1,
			Where: "part 1 (text/plain) line 7", Context: "https://docs.example.org/draft?id=42 for comments."},
		{Target: "https://wiki.example.org/minutes/2026-11-20", URL: safeLink, Wrappers: []rewrite.Wrapper{rewrite.SafeLinks}, Count: 1,
			Where: "part 2 (text/html) line 6", Context: "The minutes are on the project wiki now."},
	}
	if !reflect.DeepEqual(items, want) {
		t.Errorf("items:\n%+v\nwant\n%+v", items, want)
	}
	if st.Messages != 1 || st.Links != 6 || st.Subject != "Re: Minutes of the November meeting" {
		t.Errorf("stats %+v", st)
	}
}

func TestReadRules(t *testing.T) {
	rs, err := rewrite.Parse(strings.NewReader(`
[[rule]]
name = "drop id"
action = "strip-params"
params = ["id"]
`), "rules.toml")
	if err != nil {
		t.Fatal(err)
	}
	items, _, err := Read(strings.NewReader(string(fixture(t))), "msg", Options{Rules: rs})
	if err != nil {
		t.Fatal(err)
	}
	it := items[3]
	if it.Target != "https://docs.example.org/draft" || !reflect.DeepEqual(it.Rules, []string{"drop id"}) || !it.Wrapped() {
		t.Errorf("with rules: %+v", it)
	}
	if items[4].Target != "https://wiki.example.org/minutes/2026-11-20" {
		t.Errorf("safe link not unwrapped after the rules: %+v", items[4])
	}
}

func TestReadLimits(t *testing.T) {
	items, st, err := Read(strings.NewReader(string(fixture(t))), "msg", Options{MaxItems: 2, MaxContext: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 || st.Dropped != 4 {
		t.Errorf("%d items, %d dropped; want 2, 4", len(items), st.Dropped)
	}
	if got := items[1].Context; got != "> The old …" {
		t.Errorf("context %q", got)
	}
}

func TestReadNoMessage(t *testing.T) {
	if _, _, err := Read(strings.NewReader(""), "empty", Options{}); err != ErrNoMessage {
		t.Errorf("empty input: %v, want ErrNoMessage", err)
	}
}

func TestReadUndecodable(t *testing.T) {
	msg := "Subject: x\n\nhttps://protect-eu.mimecast.com/s/AbCdEfGh?domain=example.org\n"
	items, _, err := Read(strings.NewReader(msg), "m", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].Target != items[0].URL || !strings.Contains(items[0].Problem, "mimecast") {
		t.Errorf("mimecast: %+v", items)
	}
}

func TestCommand(t *testing.T) {
	const u = "https://example.org/a b;$(x)"
	for _, c := range []struct {
		run, browser string
		want         []string
	}{
		{"", "", []string{"xdg-open", u}},
		{"", "firefox", []string{"firefox", u}},
		{"", ":w3m -N %s:lynx", []string{"w3m", "-N", u}},
		{"echo open {} now", "firefox", []string{"echo", "open", u, "now"}},
		{"echo x{}y", "", []string{"echo", "x" + u + "y"}},
		{"  printf  ", "", []string{"printf", u}},
	} {
		got, err := Command(c.run, c.browser, u)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("Command(%q, %q) = %q, %v; want %q", c.run, c.browser, got, err, c.want)
		}
	}
	if _, err := Command("", "", "-oProxyCommand=x"); err != ErrUnsafeTarget {
		t.Errorf("target beginning with '-': %v", err)
	}
}

// TestReadMbox: an mbox lists the links of all its messages, in order,
// folded across them; the title is the first message's subject.
func TestReadMbox(t *testing.T) {
	mbox := "From a@example.org Fri Nov 27 10:00:00 2026\nSubject: one\n\nsee https://example.org/a\n\n" +
		"From b@example.org Fri Nov 27 11:00:00 2026\nSubject: two\n\nsee https://example.org/b and\nhttps://example.org/a\n"
	items, st, err := Read(strings.NewReader(mbox), "mbox", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items {
		got = append(got, it.Target+" "+it.Where+" "+strconv.Itoa(it.Count))
	}
	want := []string{"https://example.org/a line 1 2", "https://example.org/b line 1 1"}
	if !reflect.DeepEqual(got, want) || st.Messages != 2 || st.Subject != "one" {
		t.Errorf("got %q, %+v; want %q", got, st, want)
	}
}
