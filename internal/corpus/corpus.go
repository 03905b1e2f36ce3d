// Package corpus generates deterministic, realistic mbox archives for
// benchmarks and for measuring linkscan on large inputs: plain, quoted-
// printable, base64, multipart/alternative with HTML, format=flowed and
// quoted replies, with links bare, in <URL:...> and <...> wrappers, some
// wrapped across lines, from 1994 to 2024.
package corpus

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/quotedprintable"
	"strings"
	"time"
)

var words = strings.Fields(`the working group met again on tuesday and agreed after a long discussion
about escaping rules and the meaning of reserved characters to publish draft as it stands comments are
welcome please send them to list archive server mirror document protocol gopher wais prospero hypertext
resource locator identifier name address host path query fragment message news article reply thanks`)

var hosts = []string{"info.cern.ch", "ds.internic.net", "www.example.org", "lists.example.net",
	"ftp.uu.net", "boombox.micro.umn.edu", "archive.example.com", "www.w3.org", "news.example.edu"}

// Generator writes messages.
type Generator struct {
	r     *rand.Rand
	n     int
	out   *bufio.Writer
	dense bool
}

// Write writes about size bytes of mbox to w, the same bytes for the same
// seed, in the realistic mix: calibrated on the public corpora in
// shared/corpus (one link per 2 to 11 KB there; here one per about 2 KB),
// most messages plain 7-bit text, a tenth quoted-printable, a twentieth
// base64, a sixth multipart/alternative with HTML, a tenth format=flowed.
func Write(w io.Writer, size int64, seed uint64) error {
	return write(w, size, seed, false)
}

// WriteDense writes the stress mix: a link every six lines (about one per
// 370 bytes) and two thirds of the messages encoded or HTML.
func WriteDense(w io.Writer, size int64, seed uint64) error {
	return write(w, size, seed, true)
}

func write(w io.Writer, size int64, seed uint64, dense bool) error {
	g := &Generator{r: rand.New(rand.NewPCG(seed, 1994)), out: bufio.NewWriterSize(w, 1<<20), dense: dense}
	cw := &countWriter{w: g.out}
	for cw.n < size {
		g.message(cw)
	}
	return g.out.Flush()
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func (g *Generator) pick(s []string) string { return s[g.r.IntN(len(s))] }

func (g *Generator) url() string {
	h := g.pick(hosts)
	var p strings.Builder
	for i := g.r.IntN(4) + 1; i > 0; i-- {
		p.WriteString("/")
		p.WriteString(g.pick(words))
	}
	switch g.r.IntN(6) {
	case 0:
		return "ftp://" + h + "/pub" + p.String() + ".txt"
	case 1:
		return fmt.Sprintf("http://%s%s?id=%d&view=full", h, p.String(), g.r.IntN(100000))
	case 2:
		return fmt.Sprintf("news:%d.%d@%s", g.r.IntN(1e6), g.r.IntN(1e4), h)
	default:
		return "http://" + h + p.String() + ".html"
	}
}

// prose returns n lines of text with links in the forms mail has.
func (g *Generator) prose(lines int, quote string) string {
	var b strings.Builder
	for i := 0; i < lines; i++ {
		b.WriteString(quote)
		n := 6 + g.r.IntN(8)
		for j := 0; j < n; j++ {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(g.pick(words))
		}
		odds := 90
		if g.dense {
			odds = 12
		}
		switch g.r.IntN(odds) {
		case 0:
			b.WriteString(" " + g.url())
		case 1:
			b.WriteString(" <" + g.url() + ">")
		case 2:
			u := g.url()
			k := len(u) / 2
			fmt.Fprintf(&b, " <URL:%s\n%s   %s>", u[:k], quote, u[k:])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func (g *Generator) message(w io.Writer) {
	g.n++
	t := time.Date(1994, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(g.r.Int64N(int64(30 * 365 * 24 * time.Hour))))
	from := g.pick(words) + "@" + g.pick(hosts)
	fmt.Fprintf(w, "From %s %s\n", from, t.Format("Mon Jan _2 15:04:05 2006"))
	fmt.Fprintf(w, "Message-ID: <%d.%d@%s>\nDate: %s\nFrom: %s\nSubject: Re: %s %s\n",
		g.n, g.r.IntN(1e6), g.pick(hosts), t.Format(time.RFC1123Z), from, g.pick(words), g.pick(words))
	if g.r.IntN(4) == 0 {
		fmt.Fprintf(w, "Newsgroups: comp.infosystems.www\nReferences: <%d.1@%s>\n", g.n-1, g.pick(hosts))
	}
	body := g.prose(10+g.r.IntN(40), "") + "\n" + g.prose(5+g.r.IntN(10), "> ")
	kind := g.r.IntN(20)
	if g.dense {
		kind = g.r.IntN(6) * 20 / 6
	}
	switch {
	case kind < 2: // quoted-printable
		var b strings.Builder
		q := quotedprintable.NewWriter(&b)
		q.Write([]byte(body))
		q.Close()
		fmt.Fprintf(w, "MIME-Version: 1.0\nContent-Type: text/plain; charset=iso-8859-1\nContent-Transfer-Encoding: quoted-printable\n\n%s\n", b.String())
	case kind < 3: // base64
		enc := base64.StdEncoding.EncodeToString([]byte(body))
		fmt.Fprintf(w, "MIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n\n")
		for len(enc) > 76 {
			fmt.Fprintln(w, enc[:76])
			enc = enc[76:]
		}
		fmt.Fprintf(w, "%s\n\n", enc)
	case kind < 7: // multipart/alternative with HTML
		html := "<html><body><p>" + strings.ReplaceAll(body, "\n", "<br>\n") + `<a href="` + g.url() + `">more</a></p></body></html>`
		fmt.Fprintf(w, "MIME-Version: 1.0\nContent-Type: multipart/alternative; boundary=\"b%d\"\n\n--b%d\nContent-Type: text/plain\n\n%s\n--b%d\nContent-Type: text/html\n\n%s\n--b%d--\n\n",
			g.n, g.n, body, g.n, html, g.n)
	case kind < 9: // format=flowed
		flowed := strings.ReplaceAll(body, ". ", ". \n")
		fmt.Fprintf(w, "MIME-Version: 1.0\nContent-Type: text/plain; format=flowed\n\n%s\n", flowed)
	default:
		fmt.Fprintf(w, "\n%s\n", body)
	}
}
