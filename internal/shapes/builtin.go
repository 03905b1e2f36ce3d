package shapes

import (
	"fmt"
	"strings"
)

// The built-in texts stand for the seed documents where none are given
// (the Go benchmarks, which may not read files outside the repository):
// of the same kinds, not the same words.

var paragraphs = []string{
	"A locator names an object on the network by the protocol that reaches it and the address the protocol needs. An example is ftp://ds.internic.net/rfc/rfc1630.txt for a text kept by file transfer.",
	"Within the text of a message a locator is best written inside angle brackets with the prefix URL:, as in <URL:http://info.cern.ch/hypertext/WWW/Addressing/URL/Overview.html>, so that a reader can tell where it ends.",
	"Where a locator is too long for one line it may be broken at a slash, and the white space that the break adds is ignored: <URL:gopher://boombox.micro.umn.edu:70/11/gopher/\n   Unix/gopher2.0.tar.Z>.",
	"The characters that are unsafe in a locator are escaped with a percent sign and two hexadecimal digits; mail to the editors goes to mailto:uri@bunyip.com and news of the drafts to news:comp.infosystems.www.",
	"A partial form is read in the context of the document it appears in: the path ../Addressing/Escaping.html is resolved against http://www.w3.org/hypertext/WWW/Addressing/URL/ as the base.",
	"Search servers are reached with wais://quake.think.com/directory-of-servers and telnet sessions with telnet://melvyl.ucop.edu/; archives of the list are on ftp://ftp.uu.net/networking/ietf/uri/.",
}

func builtinText(n int, line func(i int, s string) string) string {
	var b strings.Builder
	k := 0
	for r := range n {
		for _, p := range paragraphs {
			for _, l := range wrap(p, 64) {
				k++
				b.WriteString(line(k, l))
			}
			k++
			b.WriteString(line(k, ""))
		}
		_ = r
	}
	return b.String()
}

func wrap(p string, w int) []string {
	var out []string
	for _, part := range strings.Split(p, "\n") {
		line := ""
		for _, f := range strings.Fields(part) {
			if line != "" && len(line)+1+len(f) > w {
				out = append(out, line)
				line = ""
			}
			if line != "" {
				line += " "
			}
			line += f
		}
		if line != "" {
			out = append(out, line)
		}
	}
	return out
}

// builtinURI: numbered lines whose spaces are NBSP, as the URI draft's.
var builtinURI = builtinText(8, func(i int, s string) string {
	return fmt.Sprintf("%4d.\u00a0\u00a0\u00a0%s\n", i, strings.ReplaceAll(s, " ", "\u00a0"))
})

// builtinURL: the same as a web archive's HTML page.
var builtinURL = "<title>uri: Draft URL document</title>\n<h1>Draft URL document</h1>\n<!-- body=\"start\" -->\n<pre>\n" +
	builtinText(8, func(_ int, s string) string {
		s = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
		if s == "" {
			return "<p>\n"
		}
		return s + "<br>\n"
	}) + "</pre>\n<!-- body=\"end\" -->\n<ul><li><a href=\"0151.html\">next</a></ul>\n"

// builtinEarly: long paragraphs, a line each.
var builtinEarly = "# Uniform Resource Locators\n\n" + strings.Repeat(strings.Join(paragraphs, "\n\n")+"\n\n", 8)

// builtinDiff: a 1994 mail with a diff of two drafts.
var builtinDiff = "Received: from mocha.bunyip.com by CNRI.Reston.VA.US id aa13127; 23 Mar 94 21:29 EST\n" +
	"Date: Wed, 23 Mar 1994 18:58:05 +0100\nFrom: Tim Berners-Lee <timbl@info.cern.ch>\n" +
	"Message-Id: <9403231758.AA14263@info.cern.ch>\nTo: uri@bunyip.com\nSubject: Re: diffs of the URL document\n\n" +
	"Here are the diffs you asked for.\n\n" + builtinText(8, func(i int, s string) string {
	switch i % 3 {
	case 0:
		return "< " + s + "\n"
	case 1:
		return "> " + s + "\n"
	}
	return "---\n"
})
