package mailbox

import (
	"bytes"
	"io"
)

// singleSrc reads a file that holds one message, or plain text (text:
// no header, no "From " line).
type singleSrc struct {
	ls   *lineSrc
	path string
	opts Options
	text bool
	done bool
}

func (s *singleSrc) next() (*Message, error) {
	if s.done {
		return nil, io.EOF
	}
	s.done = true
	m := &Message{Path: s.path, Format: FormatMessage, Offset: s.ls.off, opts: s.opts, crOnly: s.ls.eol == '\r'}
	if s.text {
		m.Format = FormatText
	} else if first := s.ls.peek(5); bytes.Equal(first, fromCRLF) {
		line, _, _, _ := s.ls.line()
		m.FromLine = string(trimEOL(line))
	}
	m.RawOffset = s.ls.off
	m.Raw = s.ls.readN(s.opts.MaxMessageSize)
	if int64(len(m.Raw)) == s.opts.MaxMessageSize && len(s.ls.peek(1)) > 0 {
		m.problemErr(ErrTooLong, m.RawOffset+int64(len(m.Raw)), "", "message longer than %d bytes; the rest is not scanned", s.opts.MaxMessageSize)
		for len(s.ls.readN(1<<20)) > 0 {
		}
	}
	m.Length = s.ls.off - m.Offset
	if s.ls.err != nil && s.ls.err != io.EOF {
		return m, s.ls.err
	}
	switch {
	case s.text:
		if m.crOnly {
			m.Raw = bytes.ReplaceAll(m.Raw, []byte{'\r'}, []byte{'\n'})
		}
	case len(m.Raw) == 0 && m.FromLine == "":
		m.problemErr(ErrEmpty, m.Offset, "", "empty message")
		m.fillSummary()
	case isANews(m.Raw):
		finishANews(m)
	default:
		finishMessage(m)
	}
	return m, nil
}
