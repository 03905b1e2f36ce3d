package mailbox

import (
	"bytes"
	"fmt"
	"strings"
)

// sniff tells the format of a stream from its first bytes, and why.
func sniff(head []byte) (Format, string) {
	h := head
	for len(h) > 0 && (h[0] == '\n' || h[0] == '\r') {
		h = h[1:]
	}
	first, rest := nextLine(h)
	if bytes.HasPrefix(h, []byte("From ")) && isFromLine(first, true) {
		if why := mboxStart(first, rest); why != "" {
			return FormatMbox, why
		}
	}
	switch {
	case bytes.HasPrefix(h, mmdfSep):
		return FormatMMDF, "the first line is ^A^A^A^A"
	case isANews(h):
		return FormatMessage, "a 1982 A-news article (no header fields: A and an id site.number, the newsgroups, a !-path and a date on the first lines)"
	}
	if !looksLikeHeader(h) {
		// lines of spaces or tabs before a header (finishMessage skips
		// them and says so)
		if k, n := leadingBlankLines(h); k > 0 && k < len(h) && looksLikeHeader(h[k:]) {
			if v := readHeaderShape(h[k:]); v.mail() || v.cutMail(len(head)) {
				return FormatMessage, fmt.Sprintf("a header block with mail or news fields (%s) after %s of white space", strings.Join(v.names, ", "), plural(n, "line"))
			}
		}
		return FormatText, "no mbox separator, header field or A-news article at the start"
	}
	v := readHeaderShape(h)
	if v.mail() {
		return FormatMessage, fmt.Sprintf("a header block with mail or news fields (%s)", strings.Join(v.names, ", "))
	}
	if v.cutMail(len(head)) {
		return FormatMessage, fmt.Sprintf("a header block with mail or news fields (%s) that goes on past the first %d bytes looked at", strings.Join(v.names, ", "), len(head))
	}
	return FormatText, fmt.Sprintf("the first line looks like a header field (%q) but what follows does not look like mail (%d mail or news field names, %d header lines, %d other lines%s)",
		v.first, len(v.names), v.fields, v.bad, map[bool]string{true: ", no blank line after them"}[!v.ended])
}

// mboxStart says why a stream whose first line is a "From " line (first)
// is an mbox, or "" when it is not: the line has the whole From_ form (a
// sender and a ctime date), or a header block follows it, or a later
// separator in the head has a header block after it (a first message
// whose header is damaged). Otherwise "From john@example.org about ..." or
// "From - my notes" begins a text, read as text so that no link is lost.
func mboxStart(first, rest []byte) string {
	switch {
	case fullFromLine(first):
		return `the first line is an mbox "From " line (a sender and a date)`
	case headerBlockAt(rest):
		return `the first line is an mbox "From " line and a header block follows it`
	}
	blank := false
	for len(rest) > 0 {
		var line []byte
		line, rest = nextLine(rest)
		if blank && isFromLine(line, true) && len(rest) > 0 && headerBlockAt(rest) {
			return `the first line is an mbox "From " line, and a later one has a header block after it`
		}
		blank = len(line) == 0
	}
	return ""
}

// looksLikeHeader reports whether b starts with a header field (a URL
// line is none).
func looksLikeHeader(b []byte) bool {
	end := bytes.IndexAny(b, "\r\n")
	if end < 0 {
		end = len(b)
	}
	line := b[:end]
	colon := bytes.IndexByte(line, ':')
	return colon > 0 && validName(line[:colon]) && bytes.IndexByte(line[:colon], ' ') < 0 && !urlAfter(line, colon)
}

// headerShape is what the lines at the start of a stream look like.
type headerShape struct {
	first  string   // the first field name
	names  []string // mail or news field names seen (at most 3 kept)
	known  int      // how many fields have such names
	fields int      // lines that are header fields
	bad    int      // lines that are neither fields nor continuations
	ended  bool     // a blank line ends the block
}

// mail decides whether the block is a message header: fields outnumber
// the lines that are not fields, and either two of them have mail or news
// names, or the one field there is has such a name and a blank line and
// a body follow it. A URL list or a log whose first line is "Name: value"
// is thus read as text, where none of its links is lost.
func (v headerShape) mail() bool {
	if v.fields <= v.bad {
		return false
	}
	return v.known >= 2 || (v.known == 1 && v.fields == 1 && v.ended)
}

// cutMail decides for a header block that the detection's window (head
// bytes long) cut before it ended: only field lines (and their
// continuations) were seen, one of them with a mail or news name, and
// the window was full, so that the block goes on past it. A first field
// longer than the window (a References: or DKIM-Signature: of several
// KiB) must not make a message text.
func (v headerShape) cutMail(head int) bool {
	return !v.ended && v.bad == 0 && v.known >= 1 && head >= headSize-len(utf8BOM)
}

// readHeaderShape reads the lines of b up to the first blank line.
func readHeaderShape(b []byte) headerShape {
	var v headerShape
	for len(b) > 0 {
		end := bytes.IndexByte(b, '\n')
		if end < 0 {
			if i := bytes.IndexByte(b, '\r'); i >= 0 {
				end = i // bare CR line endings
			}
		} else if i := bytes.IndexByte(b[:end], '\r'); i >= 0 && i < end-1 {
			end = i // a bare CR before the first LF
		}
		var line []byte
		if end < 0 {
			line, b = b, nil // the last line, maybe cut by the read
		} else {
			line, b = b[:end], b[end+1:]
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 {
			v.ended = true
			break
		}
		if line[0] == ' ' || line[0] == '\t' {
			if v.fields == 0 {
				v.bad++
			}
			continue
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || !validName(line[:colon]) || bytes.IndexByte(line[:colon], ' ') >= 0 || urlAfter(line, colon) {
			v.bad++ // a URL line ("http://...") is text, not a field named "http"
			continue
		}
		name := string(line[:colon])
		if v.fields == 0 {
			v.first = name
		}
		v.fields++
		if mailField(name) {
			v.known++
			if len(v.names) < 3 {
				v.names = append(v.names, name)
			}
		}
	}
	return v
}

// mailFields are the field names of mail and news headers (RFC 5322,
// 2045, 5536, 1036 and common practice), lower case.
var mailFields = map[string]bool{
	"from": true, "to": true, "cc": true, "bcc": true, "subject": true, "date": true,
	"message-id": true, "received": true, "return-path": true, "reply-to": true,
	"sender": true, "in-reply-to": true, "references": true, "mime-version": true,
	"newsgroups": true, "path": true, "xref": true, "organization": true,
	"lines": true, "followup-to": true, "distribution": true, "delivered-to": true,
	"envelope-to": true, "user-agent": true, "keywords": true, "summary": true,
	"relay-version": true, "posting-version": true, "article-i.d.": true,
	"nntp-posting-host": true, "approved": true, "expires": true, "control": true,
	"status": true, "precedence": true, "errors-to": true, "apparently-to": true,
	"comments": true, "encrypted": true, "importance": true, "priority": true,
	"thread-topic": true, "thread-index": true, "injection-info": true,
	"injection-date": true, "supersedes": true, "archived-at": true,
	"authentication-results": true, "original-recipient": true, "final-recipient": true,
	"reporting-mta": true, "arrival-date": true, "disposition-notification-to": true,
}

// mailField reports whether name is a mail or news header field name.
func mailField(name string) bool {
	n := strings.ToLower(name)
	if mailFields[n] {
		return true
	}
	for _, p := range []string{"x-", "content-", "list-", "resent-", "dkim-", "arc-", "nntp-"} {
		if strings.HasPrefix(n, p) && len(n) > len(p) {
			return true
		}
	}
	return false
}
