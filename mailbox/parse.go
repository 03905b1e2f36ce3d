package mailbox

import "bytes"

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
	h, body, probs := parseHeader(m.Raw, m.RawOffset, m.opts.MaxHeaderBytes, "")
	m.Header, m.bodyStart = h, body
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
