package mailbox

import "bytes"

// isANews reports whether raw is a 1982 A-news article (the format RFC
// 850 replaced): five lines, no header fields —
//
//	Amhtsa.157                            "A", then the article id site.number
//	net.games                             newsgroups, comma-separated
//	utzoo!decvax!harpo!eagle!mhtsa!rick   the path, "!"-separated
//	Wed May  5 22:33:48 1982              the date (ctime(3))
//	Re: Raster vs. Vector                 the title
//
// then the body. Each line is checked for its shape, so that text whose
// first line is one word starting with "A" (Agenda, Articles) is not taken
// for an article and its lines 2-5 for header fields.
func isANews(raw []byte) bool {
	lines := bytes.SplitN(raw, []byte("\n"), 6)
	if len(lines) < 6 {
		return false
	}
	for i := range 5 {
		lines[i] = trimEOL(lines[i])
	}
	return aNewsID(lines[0]) && aNewsGroups(lines[1]) && aNewsPath(lines[2]) && aNewsDate(lines[3])
}

// aNewsID: "A", a site name, ".", a number.
func aNewsID(l []byte) bool {
	if len(l) < 4 || l[0] != 'A' {
		return false
	}
	dot := bytes.LastIndexByte(l, '.')
	if dot < 2 || !isDigits(l[dot+1:]) {
		return false
	}
	for _, c := range l[1:dot] {
		if !siteChar(c) {
			return false
		}
	}
	return true
}

// siteChar: a byte of a UUCP site or user name.
func siteChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
}

// aNewsGroups: newsgroup names separated by commas, each of letters,
// digits, "+-_" and dots, one at least with a dot (net.general, fa.sf-lovers).
func aNewsGroups(l []byte) bool {
	if len(l) == 0 {
		return false
	}
	dotted := false
	for _, g := range bytes.Split(l, []byte(",")) {
		if len(g) == 0 || g[0] == '.' || g[len(g)-1] == '.' {
			return false
		}
		for _, c := range g {
			if !siteChar(c) && c != '+' {
				return false
			}
		}
		dotted = dotted || bytes.IndexByte(g, '.') > 0
	}
	return dotted
}

// aNewsPath: site names separated by "!", at least two.
func aNewsPath(l []byte) bool {
	parts := bytes.Split(l, []byte("!"))
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if len(p) == 0 {
			return false
		}
		for _, c := range p {
			if !siteChar(c) {
				return false
			}
		}
	}
	return true
}

// aNewsDate: a date that parses (ctime(3), as A-news wrote it).
func aNewsDate(l []byte) bool {
	_, ok := parseDate(string(l))
	return ok
}

// finishANews turns the five lines of an A-news header into fields.
func finishANews(m *Message) {
	names := []string{"Message-ID", "Newsgroups", "Path", "Date", "Subject"}
	off := 0
	for i, name := range names {
		j := bytes.IndexByte(m.Raw[off:], '\n')
		line := string(trimEOL(m.Raw[off : off+j+1]))
		if i == 0 {
			line = line[1:]
		}
		m.Header = append(m.Header, Field{Name: name, Value: line, Offset: m.RawOffset + int64(off), End: m.RawOffset + int64(off+j+1)})
		off += j + 1
	}
	m.bodyStart = off
	m.fillSummary()
	if m.MessageID == "" {
		m.MessageID = m.Header.Get("Message-ID")
	}
}
