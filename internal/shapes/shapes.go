// Package shapes builds the inputs of the shape benchmark: one shape of
// mail at a time, a message repeated to a given size, so that a change
// that costs one kind of mail (quoted-printable Latin-1, HTML, tiny
// messages...) shows in the figures of that shape alone.
//
// The messages are built from documents: the 1994 drafts of the URI and
// URL specifications and a 1994 mail carrying a diff of them, as they
// circulated (Docs; scripts/shapes.sh reads them from a directory of
// seed documents), and real mboxes repeated (the lore and mboxsrc
// shapes). Without documents, a built-in text of the same kind stands for
// each one, as in the Go benchmarks.
package shapes

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"mime/quotedprintable"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"golang.org/x/text/encoding/charmap"
)

// Docs are the documents the messages are made of; a nil one is the
// built-in text.
type Docs struct {
	URI   []byte // the URI draft: numbered lines, NBSP for spaces (UTF-8)
	URL   []byte // the URL draft as a web archive shows it (HTML)
	Early []byte // an earlier URL draft in long paragraphs
	Diff  []byte // a mail with its header carrying a diff ("> ", "< ")
	Lore  []byte // an mbox of modern list mail (lore shape)
	Mbox  []byte // an mbox of 1999 list mail (mboxsrc shape)
}

// Shape is one shape of mail.
type Shape struct {
	Name, About string
	// Needs names the document without which the shape is not built
	// (Lore, Mbox), "" if a built-in text stands for each.
	Needs string
}

// All lists the shapes, in the order the benchmark runs them.
var All = []Shape{
	{"diff", "plain 7-bit mail carrying a diff (\"> \"/\"< \" lines)", ""},
	{"urlmail", "the URL draft as a plain mail (many <URL:...>)", ""},
	{"qp-latin1", "the URI draft in ISO-8859-1, quoted-printable", ""},
	{"qp-utf8", "the URI draft in UTF-8, quoted-printable", ""},
	{"base64", "multipart/alternative: text and HTML, both base64", ""},
	{"html", "the URL draft's HTML as a text/html part", ""},
	{"flowed", "the early draft as format=flowed text", ""},
	{"tiny", "many tiny messages of a few lines and a link", ""},
	{"mix", "the five seed-shaped messages together (diff, urlmail, qp-latin1, base64, flowed)", ""},
	{"maildir", "a Maildir of many files: the mix and tiny messages, one a file", ""},
	{"lore", "modern list mail (an mbox repeated)", "Lore"},
	{"mboxsrc", "1999 list mail (an mbox repeated)", "Mbox"},
}

// Load reads the documents from dir, a directory of seed documents named
// by their number (001_*.txt ...), and the mboxes lore and mbox (paths;
// "" or a missing file: none).
func Load(dir, lore, mbox string) (Docs, error) {
	var d Docs
	for _, f := range []struct {
		n string
		p *[]byte
	}{{"001", &d.URI}, {"002", &d.URL}, {"003", &d.Early}, {"004", &d.Diff}} {
		m, _ := filepath.Glob(filepath.Join(dir, f.n+"_*.txt"))
		if len(m) == 0 {
			continue
		}
		b, err := os.ReadFile(m[0])
		if err != nil {
			return d, err
		}
		*f.p = b
	}
	for _, f := range []struct {
		path string
		p    *[]byte
	}{{lore, &d.Lore}, {mbox, &d.Mbox}} {
		if f.path == "" {
			continue
		}
		b, err := os.ReadFile(f.path)
		if err != nil && !os.IsNotExist(err) {
			return d, err
		}
		*f.p = b
	}
	return d, nil
}

// Available reports whether shape s can be built from d.
func (d Docs) Available(s Shape) bool {
	switch s.Needs {
	case "Lore":
		return len(d.Lore) > 0
	case "Mbox":
		return len(d.Mbox) > 0
	}
	return true
}

// Write writes about size bytes of shape name as an mbox to w (not the
// maildir shape: see WriteMaildir).
func Write(w io.Writer, name string, size int64, d Docs) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	var n int64
	switch name {
	case "lore", "mboxsrc":
		mb := d.Lore
		if name == "mboxsrc" {
			mb = d.Mbox
		}
		if len(mb) == 0 {
			return fmt.Errorf("shape %s: no mbox given", name)
		}
		if !bytes.HasSuffix(mb, []byte("\n\n")) {
			mb = append(bytes.TrimRight(mb, "\n"), "\n\n"...)
		}
		for n < size {
			k, err := bw.Write(mb)
			if err != nil {
				return err
			}
			n += int64(k)
		}
		return bw.Flush()
	}
	msgs, err := Messages(name, d)
	if err != nil {
		return err
	}
	for i := 0; n < size; i++ {
		m := msgs[i%len(msgs)]
		k, err := fmt.Fprintf(bw, "From shapes@example.org Sat Mar 26 10:%02d:%02d 1994\n", i/60%60, i%60)
		if err != nil {
			return err
		}
		n += int64(k)
		b := fromQuoted(m)
		if _, err := bw.Write(b); err != nil {
			return err
		}
		bw.WriteString("\n")
		n += int64(len(b)) + 1
	}
	return bw.Flush()
}

// WriteMaildir writes about size bytes of the maildir shape into dir/cur,
// a message a file.
func WriteMaildir(dir string, size int64, d Docs) error {
	for _, s := range []string{"cur", "new", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, s), 0o755); err != nil {
			return err
		}
	}
	msgs, err := Messages("maildir", d)
	if err != nil {
		return err
	}
	var n int64
	for i := 0; n < size; i++ {
		m := msgs[i%len(msgs)]
		name := filepath.Join(dir, "cur", fmt.Sprintf("%d.%06d.shapes:2,S", 764150400+i, i))
		if err := os.WriteFile(name, m, 0o644); err != nil {
			return err
		}
		n += int64(len(m))
	}
	return nil
}

// Messages returns the messages that shape name repeats (not lore and
// mboxsrc), each a header and a body.
func Messages(name string, d Docs) ([][]byte, error) {
	uri, url, early, diff := orBuiltin(d.URI, builtinURI), orBuiltin(d.URL, builtinURL), orBuiltin(d.Early, builtinEarly), orBuiltin(d.Diff, builtinDiff)
	switch name {
	case "diff":
		return [][]byte{diffMail(diff)}, nil
	case "urlmail":
		return [][]byte{plain("The URL draft", "7bit", "us-ascii", "", htmlToText(url))}, nil
	case "qp-latin1":
		return [][]byte{qpLatin1(uri)}, nil
	case "qp-utf8":
		return [][]byte{plain("The URI draft", "quoted-printable", "utf-8", "", qpEncode(uri))}, nil
	case "base64":
		return [][]byte{alternative(htmlToText(url), url)}, nil
	case "html":
		return [][]byte{message("The URL draft (HTML)", "text/html; charset=us-ascii", "7bit", url)}, nil
	case "flowed":
		return [][]byte{flowedMail(early)}, nil
	case "tiny":
		return tinyMails(64), nil
	case "mix":
		return mix(uri, url, early, diff), nil
	case "maildir":
		return append(mix(uri, url, early, diff), tinyMails(200)...), nil
	}
	return nil, fmt.Errorf("no shape %q", name)
}

func mix(uri, url, early, diff []byte) [][]byte {
	return [][]byte{diffMail(diff), plain("The URL draft", "7bit", "us-ascii", "", htmlToText(url)), qpLatin1(uri), alternative(htmlToText(url), url), flowedMail(early)}
}

func orBuiltin(b []byte, s string) []byte {
	if len(b) > 0 {
		return b
	}
	return []byte(s)
}

// message is a header of the 1994 kind and body.
func message(subject, ctype, cte string, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Received: from ietf.nri.reston.va.us by IETF.CNRI.Reston.VA.US id aa24955; 23 Mar 94 21:31 EST\n")
	fmt.Fprintf(&b, "Date: Wed, 23 Mar 1994 18:58:05 +0100\nFrom: Tim Berners-Lee <timbl@info.cern.ch>\nTo: uri@bunyip.com\n")
	fmt.Fprintf(&b, "Subject: %s\nMessage-Id: <9403231758.AA14263@info.cern.ch>\nMIME-Version: 1.0\n", subject)
	fmt.Fprintf(&b, "Content-Type: %s\n", ctype)
	if cte != "" {
		fmt.Fprintf(&b, "Content-Transfer-Encoding: %s\n", cte)
	}
	b.WriteString("\n")
	b.Write(body)
	if !bytes.HasSuffix(body, []byte("\n")) {
		b.WriteString("\n")
	}
	return b.Bytes()
}

func plain(subject, cte, charset, params string, body []byte) []byte {
	return message(subject, "text/plain; charset="+charset+params, cte, body)
}

// diffMail is the diff mail from its header on (the lines before the
// first "Received:" are an archive's title).
func diffMail(doc []byte) []byte {
	if i := bytes.Index(doc, []byte("\nReceived:")); i >= 0 {
		return bytes.Clone(doc[i+1:])
	}
	return doc
}

func qpLatin1(uri []byte) []byte {
	l, err := charmap.ISO8859_1.NewEncoder().Bytes(uri)
	if err != nil {
		// a character Latin-1 lacks: the text as far as it can be
		l = bytes.Map(func(r rune) rune {
			if r > 0xff {
				return '?'
			}
			return r
		}, uri)
		l, _ = charmap.ISO8859_1.NewEncoder().Bytes(l)
	}
	return plain("The URI draft", "quoted-printable", "iso-8859-1", "", qpEncode(l))
}

func qpEncode(b []byte) []byte {
	var out bytes.Buffer
	w := quotedprintable.NewWriter(&out)
	w.Write(b)
	w.Close()
	return bytes.ReplaceAll(out.Bytes(), []byte("\r\n"), []byte("\n"))
}

func b64Lines(b []byte) []byte {
	s := base64.StdEncoding.EncodeToString(b)
	var out bytes.Buffer
	for len(s) > 76 {
		out.WriteString(s[:76])
		out.WriteString("\n")
		s = s[76:]
	}
	out.WriteString(s)
	out.WriteString("\n")
	return out.Bytes()
}

func alternative(text, html []byte) []byte {
	var b bytes.Buffer
	b.WriteString("This is a multi-part message in MIME format.\n\n--=_shape\n")
	b.WriteString("Content-Type: text/plain; charset=us-ascii\nContent-Transfer-Encoding: base64\n\n")
	b.Write(b64Lines(text))
	b.WriteString("\n--=_shape\nContent-Type: text/html; charset=us-ascii\nContent-Transfer-Encoding: base64\n\n")
	b.Write(b64Lines(html))
	b.WriteString("\n--=_shape--\n")
	return message("The URL draft, text and HTML", "multipart/alternative; boundary=\"=_shape\"", "", b.Bytes())
}

// flowedMail is doc as format=flowed: each line longer than 72 bytes
// wrapped at a space, the space left at the end of the line.
func flowedMail(doc []byte) []byte {
	var b bytes.Buffer
	for _, line := range strings.SplitAfter(string(doc), "\n") {
		for len(line) > 73 {
			i := strings.LastIndexByte(line[:72], ' ')
			if i <= 0 {
				break
			}
			b.WriteString(line[:i+1])
			b.WriteString("\n")
			line = line[i+1:]
		}
		if strings.HasPrefix(line, ">") || strings.HasPrefix(line, " ") || strings.HasPrefix(line, "From ") {
			b.WriteString(" ") // space-stuffed
		}
		b.WriteString(line)
	}
	return plain("The early URL draft", "8bit", "utf-8", "; format=flowed", b.Bytes())
}

var (
	tagRE    = regexp.MustCompile(`<[/!a-zA-Z][^>]*>`)
	entities = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&quot;", `"`, "&amp;", "&")
)

// htmlToText is the text of an HTML archive page: tags dropped, the
// common character references undone.
func htmlToText(h []byte) []byte {
	return []byte(entities.Replace(string(tagRE.ReplaceAll(h, nil))))
}

// tinyMails returns n short messages, each a few lines and a link.
func tinyMails(n int) [][]byte {
	hosts := []string{"info.cern.ch", "ds.internic.net", "ftp.uu.net", "boombox.micro.umn.edu", "www.w3.org"}
	out := make([][]byte, n)
	for i := range out {
		var b bytes.Buffer
		fmt.Fprintf(&b, "Date: Thu, 4 Aug 1994 15:%02d:18 PDT\nFrom: Larry Masinter <masinter@parc.xerox.com>\n", i%60)
		fmt.Fprintf(&b, "To: uri@bunyip.com\nSubject: Re: draft %d\nMessage-Id: <94Aug4.%d@golden.parc.xerox.com>\n\n", i, i)
		fmt.Fprintf(&b, "See <URL:http://%s/hypertext/WWW/Addressing/URL/url-%d.html>\nfor the text; comments to the list.\n", hosts[i%len(hosts)], i)
		out[i] = b.Bytes()
	}
	return out
}

// fromQuoted is m with each body line that starts with "From ", after
// any ">", given one ">" more (mboxrd).
func fromQuoted(m []byte) []byte {
	if !bytes.Contains(m, []byte("From ")) {
		return m
	}
	var b bytes.Buffer
	for _, line := range bytes.SplitAfter(m, []byte("\n")) {
		if bytes.HasPrefix(bytes.TrimLeft(line, ">"), []byte("From ")) {
			b.WriteByte('>')
		}
		b.Write(line)
	}
	return b.Bytes()
}
