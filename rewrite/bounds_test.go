package rewrite

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/linkscan/linkscan/mailbox"
)

// growRules repeats the whole URL n times: a rule that grows every link
// it applies to, and again on each pass.
func growRules(t testing.TB, n int) *Rules {
	t.Helper()
	rs, err := Parse(strings.NewReader("version = 1\n\n[[rule]]\naction = \"replace\"\npattern = \"^(.*)$\"\nwith = \""+strings.Repeat("$1", n)+"\"\n"), "grow.toml")
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// TestMaxURLLength: a rule whose new URL would pass MaxURLLength is
// skipped with the reason, the URL left as it was; one under it applies.
func TestMaxURLLength(t *testing.T) {
	rs := growRules(t, 10)
	long := "http://e.example/" + strings.Repeat("a", 900) // 10x: 9,170 bytes
	res, err := rs.Rewrite(Link{URL: long, Form: "bare", Where: "body"})
	if err != nil || res.URL != long || len(res.Changes) != 1 ||
		res.Changes[0].Skipped != fmt.Sprintf("the new URL would be %d bytes, over the limit of 8192", 10*len(long)) {
		t.Errorf("over the limit: %d bytes, %+v, %v", len(res.URL), res.Changes, err)
	}
	short := "http://e.example/" + strings.Repeat("a", 700) // 10x: 7,170 bytes
	if res, _ := rs.Rewrite(Link{URL: short, Form: "bare", Where: "body"}); res.URL != strings.Repeat(short, 10) {
		t.Errorf("under the limit: %d bytes", len(res.URL))
	}
}

// b64Message is a message whose text part, base64 (no line-length limit
// on the text), holds n links.
func b64Message(n int) []byte {
	var text strings.Builder
	for i := range n {
		fmt.Fprintf(&text, "see http://e.example/%d here\n", i)
	}
	return []byte("Message-ID: <g@x>\nMIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n\n" +
		base64.StdEncoding.EncodeToString([]byte(text.String())) + "\n")
}

// TestMaxGrowth: rules that would make a message more than MaxGrowth
// longer leave it as it was, every change skipped with the reason (the
// 2,000 links of a message grown tenfold on each of the passes took
// minutes and gigabytes).
func TestMaxGrowth(t *testing.T) {
	m := mailbox.ReadMessage(b64Message(2000), "g.eml", nil)
	out, changes, err := growRules(t, 10).MessageChanges(m, &Options{})
	if err != nil || string(out) != string(m.Raw) {
		t.Fatalf("%d bytes out of %d, %v", len(out), len(m.Raw), err)
	}
	n := 0
	for c := range changes.All() {
		if !strings.Contains(c.Skipped, "over the limit of 1048576") {
			t.Fatalf("change not skipped for the growth: %+v", c)
		}
		n++
	}
	if n == 0 {
		t.Error("no change reported")
	}
	// a growth under the limit is written
	settles, err := Parse(strings.NewReader("version = 1\n\n[[rule]]\naction = \"replace\"\npattern = \"^http://e\\\\.example/(.*)$\"\nwith = \"https://e.example/$1/$1/$1\"\n"), "settles.toml")
	if err != nil {
		t.Fatal(err)
	}
	m = mailbox.ReadMessage(b64Message(200), "g.eml", nil)
	out, _, err = settles.MessageChanges(m, &Options{})
	if err != nil || len(out) <= len(m.Raw) {
		t.Errorf("under the limit: %d bytes out of %d, %v", len(out), len(m.Raw), err)
	}
}

// BenchmarkGrowthBound: the pathological rules on a message of 2,000
// links (plain text, and base64, where the line-length limit does not
// stop the growth first): the time and memory the bounds leave.
func BenchmarkGrowthBound(b *testing.B) {
	var plain strings.Builder
	plain.WriteString("Message-ID: <g@x>\n\n")
	for i := range 2000 {
		fmt.Fprintf(&plain, "http://e.example/%d\n", i)
	}
	rs := growRules(b, 10)
	for _, c := range []struct {
		name string
		raw  []byte
	}{{"plain", []byte(plain.String())}, {"base64", b64Message(2000)}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.raw)))
			b.ReportAllocs()
			for b.Loop() {
				m := mailbox.ReadMessage(c.raw, "g.eml", nil)
				if _, _, err := rs.MessageChanges(m, &Options{}); err != nil {
					b.Fatal(err)
				}
				m.Release()
			}
		})
	}
}
