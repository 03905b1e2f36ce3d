package mailbox

import "bytes"

// isANews reports whether raw is a 1982 A-news article: "A" and an id on
// the first line, then newsgroups, path, date and title, no header fields.
func isANews(raw []byte) bool {
	lines := bytes.SplitN(raw, []byte("\n"), 6)
	if len(lines) < 6 || len(lines[0]) < 2 || lines[0][0] != 'A' {
		return false
	}
	first := trimEOL(lines[0])
	return bytes.IndexByte(first, ':') < 0 && bytes.IndexByte(first, ' ') < 0 && bytes.IndexByte(trimEOL(lines[1]), ':') < 0
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
