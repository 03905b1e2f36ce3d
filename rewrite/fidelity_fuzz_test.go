package rewrite_test

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"mime/quotedprintable"
	"os"
	"strings"
	"testing"

	"github.com/linkscan/linkscan/rewrite"
	"github.com/linkscan/linkscan/rewrite/rewritecheck"
)

// gateway links of the kinds mail carries, whole
var fuzzLinks = []string{
	"https://nam04.safelinks.protection.outlook.com/?url=https%3A%2F%2Flore.kernel.org%2Flinux-nfs%2F20240101.1234-1-a%40example.com%2F&data=05%7C02%7Cx%40example.com%7C5f2c0a9e8b7d%7C0%7C638400000000000000%7CUnknown&sdata=Zm9vYmFy%3D&reserved=0",
	"https://urldefense.proofpoint.com/v2/url?u=https-3A__www.example.com_docs_guide-2Dv2.html-3Fs-3D4&d=DwMFaQ&c=euGZst&r=abcdef&m=Zm9v&s=c2ln&e=",
	"https://urldefense.com/v3/__https://lore.kernel.org/linux-xfs/20240102.GA1@example.net/T/*t__;Iw!!ACWV5N9M2RV99hQ!J3HKTWLF8Qx-j42OOJ4o1YAtt$",
	"https://urldefense.us/v3/__https:/files.example.com/q1.pdf__;%21%21BDRLmQDw%21a1b2c3d4e5f6$",
	"https://protect2.fireeye.com/v1/url?k=65ecaaf0-3a779239-0cc47a336fae&q=1&e=e44c9f9f&u=https%3A%2F%2Fgithub.com%2Fsmfrench%2Fpull%2F21",
	"https://www.google.com/url?q=https://example.org/page&sa=D&source=editors&usg=AOvVaw0123456789abcdefghijkl",
	"http://www.example.com/page?utm_source=list&id=3",
	"ftp://ftp.cs.example.edu/pub/lists/x.txt",
}

var fuzzWords = []string{"the", "fix", "is", "at", "see", "[[PATCH/RFC]", "NFSv4:", "--", "-- Daniel", "# good: [abc]", "____", "679.", "--4.98", "wrote:", "Thanks,", "é", "x=1", "(see", "below)", "&", "<", ">"}

// fuzzBody writes a text of random lines: words, links whole or
// hard-wrapped at a random width, under quote prefixes kept or lost on
// the continuation lines, inside quotes or angle brackets, with a
// patch subject or a second link on the line after.
func fuzzBody(r *rand.Rand) string {
	var b strings.Builder
	for range 2 + r.IntN(8) {
		prefix := [...]string{"", "> ", "> > ", ">> "}[r.IntN(4)]
		b.WriteString(prefix)
		for range r.IntN(4) {
			b.WriteString(fuzzWords[r.IntN(len(fuzzWords))] + " ")
		}
		if r.IntN(4) > 0 {
			l := fuzzLinks[r.IntN(len(fuzzLinks))]
			switch r.IntN(4) {
			case 1:
				l = "\"" + l + "\""
			case 2:
				l = "<" + l + ">"
			}
			if r.IntN(2) == 0 {
				// an Outlook hard wrap: pieces of a fixed width, each
				// continuation with the prefix, or with none
				w := 20 + r.IntN(60)
				for len(l) > w {
					b.WriteString(l[:w] + "\n")
					l = l[w:]
					if r.IntN(3) > 0 {
						b.WriteString(prefix)
					}
				}
			}
			b.WriteString(l)
			if r.IntN(3) == 0 {
				b.WriteString(" " + fuzzWords[r.IntN(len(fuzzWords))])
			}
		}
		b.WriteString("\n")
		if r.IntN(3) == 0 {
			b.WriteString(prefix + fuzzWords[r.IntN(len(fuzzWords))] + " " + fuzzWords[r.IntN(len(fuzzWords))] + "\n")
		}
	}
	return b.String()
}

// fuzzMessage puts a body in a message: 7bit, quoted-printable or
// base64, LF or CRLF.
func fuzzMessage(r *rand.Rand, body string) string {
	enc := r.IntN(3)
	var cte string
	switch enc {
	case 0:
		cte = "8bit"
	case 1:
		var q strings.Builder
		w := quotedprintable.NewWriter(&q)
		w.Write([]byte(body))
		w.Close()
		cte, body = "quoted-printable", strings.ReplaceAll(q.String(), "\r\n", "\n")
	case 2:
		e := base64.StdEncoding.EncodeToString([]byte(body))
		var lines []string
		for len(e) > 76 {
			lines, e = append(lines, e[:76]), e[76:]
		}
		cte, body = "base64", strings.Join(append(lines, e), "\n")+"\n"
	}
	msg := "From: a@example.org\nSubject: fuzz\nMessage-ID: <fuzz@example.org>\nMIME-Version: 1.0\n" +
		"Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: " + cte + "\n\n" + body
	if r.IntN(4) == 0 {
		msg = strings.ReplaceAll(msg, "\n", "\r\n")
	}
	return msg
}

// FuzzRewriteFidelity: for random messages with links (gateway links
// whole, hard-wrapped, quoted, in angle brackets, followed by words or a
// patch subject; 7bit, quoted-printable and base64 parts), rewrite with
// the shipped unwrappers, and with the example rules, never changes a
// word of the decoded text outside the links it reports written, writes
// a gateway link only whole, and never a target other than the whole
// link's (rewritecheck).
func FuzzRewriteFidelity(f *testing.F) {
	for seed := range uint64(200) {
		f.Add(seed, seed*7+1)
	}
	unwrap := rewritecheck.Rules()
	b, err := os.ReadFile("../testdata/rewrite/rules.toml")
	if err != nil {
		f.Fatal(err)
	}
	example, err := rewrite.Parse(strings.NewReader(string(b)), "rules.toml")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s1, s2 uint64) {
		r := rand.New(rand.NewPCG(s1, s2))
		msg := fuzzMessage(r, fuzzBody(r))
		for i, rs := range []*rewrite.Rules{unwrap, example} {
			var res rewritecheck.Result
			rewritecheck.Message(rs, []byte(msg), fmt.Sprintf("rules %d", i), &res)
			bad := len(res.WordFailures) + len(res.ExtentFailures) + len(res.Truncated) + len(res.WrongTargets)
			if i == 1 {
				// the example rules do more than unwrap (a moved host,
				// a link wrapped): only the words are the oracle's
				bad = len(res.WordFailures)
			}
			if bad > 0 {
				t.Fatalf("seed %d %d, rules %d:\n%s\n%s", s1, s2, i, msg, res.String())
			}
		}
	})
}
