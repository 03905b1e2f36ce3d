package mailbox

import (
	"bytes"
	"fmt"
)

// Parse reads the header of a message returned unparsed because of
// Options.DeferParse: Header, the summary fields and the header's Problems.
// It does nothing for a message already parsed, and is not safe to call
// from two goroutines at once.
func (m *Message) Parse() {
	if m.unparsed {
		m.unparsed = false
		finishMessage(m)
	}
}

// finishMessage parses the header of a message read by a splitter.
func finishMessage(m *Message) {
	if !m.crOnly && crLines(m.Raw) {
		m.crOnly = true // a message of bare CR lines in a file of LF lines
	}
	if m.crOnly {
		// A file with bare CR line endings: read each CR as LF. The bytes
		// keep their number and place, so every offset stays true.
		m.Raw = bytes.ReplaceAll(m.Raw, []byte{'\r'}, []byte{'\n'})
	}
	if len(m.Raw) == 0 && len(m.Problems) == 0 {
		m.problemErr(ErrEmpty, m.RawOffset, "", "empty message")
	}
	// blank lines before the header (a converter that dropped a From_
	// line and kept the blank line before it, a "save as" export, a
	// blank line after an mbox From_ line): the header after them is
	// read, and that is said (else the header and every encoded part
	// would be lost as body text)
	skip := 0
	if k, n := leadingBlankLines(m.Raw); k > 0 && k < len(m.Raw) && headerBlockAt(m.Raw[k:]) {
		skip = k
		m.problemErr(ErrBadHeader, m.RawOffset, "", "%s before the header; skipped, the header after %s read", plural(n, "blank line"), map[bool]string{true: "it", false: "them"}[n == 1])
	}
	h, body, probs := parseHeader(m.Raw[skip:], m.RawOffset+int64(skip), m.opts.MaxHeaderBytes, "")
	m.Header, m.bodyStart = h, skip+body
	m.Problems = append(m.Problems, probs...)
	if len(h) == 0 && len(m.Raw) > 0 {
		m.problemErr(ErrBadHeader, m.RawOffset, "", "no header fields")
	}
	m.fillSummary()
}

// crLines reports whether raw is written with bare CR line endings: it
// has a bare CR and no LF but perhaps one at its very end.
func crLines(raw []byte) bool {
	i := bytes.IndexByte(raw, '\n')
	return (i < 0 || i == len(raw)-1) && bareCR(raw) >= 0
}

// leadingBlankLines returns the length of the blank lines raw starts
// with, and how many there are: lines that are empty or hold only
// spaces and tabs (LF or CRLF; a "save as" or a paste that kept the
// indentation of an empty line).
func leadingBlankLines(raw []byte) (k, n int) {
	for {
		e := k
		for e < len(raw) && (raw[e] == ' ' || raw[e] == '\t') {
			e++
		}
		switch {
		case e < len(raw) && raw[e] == '\n':
			k = e + 1
		case e+1 < len(raw) && raw[e] == '\r' && raw[e+1] == '\n':
			k = e + 2
		default:
			return k, n
		}
		n++
	}
}

// plural says n things: "1 blank line", "2 blank lines".
func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %ss", n, one)
}
