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
	note *Problem // damage found before the message was read (an .emlx's count), given to it
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
	if !s.text && (s.ls.sizeHint == 0 || s.ls.sizeHint-m.Offset > s.opts.MaxMessageSize) {
		// a stream, or a file longer than the limit: read as the mbox
		// splitter reads a long message (its bytes held aside, past the
		// limit its structure and text kept, Raw made once at the end),
		// not into a buffer of the limit's size first
		ms := &mboxSrc{ls: s.ls, path: s.path, opts: s.opts, one: true}
		err := ms.readBody(m)
		m.Length = s.ls.off - m.Offset
		if err != nil && err != io.EOF && m.Length == 0 {
			return nil, err // nothing read before it: no message
		}
		finishSingle(m, false) // (what was read before an error too)
		s.noteOn(m)
		if err != nil && err != io.EOF {
			return m, err
		}
		return m, nil
	}
	m.Raw = s.ls.readN(m, nil, s.opts.MaxMessageSize)
	if int64(len(m.Raw)) == s.opts.MaxMessageSize && len(s.ls.peek(1)) > 0 {
		if s.text {
			m.problemErr(ErrTooLong, m.RawOffset+int64(len(m.Raw)), "", "message longer than %d bytes; the rest is not scanned", s.opts.MaxMessageSize)
			buf := make([]byte, 0, 64<<10)
			for len(s.ls.readN(m, buf[:0], 64<<10)) > 0 {
			}
		} else {
			s.overflow(m)
		}
	}
	m.Length = s.ls.off - m.Offset
	if s.ls.err != nil && s.ls.err != io.EOF && m.Length == 0 {
		return nil, s.ls.err // nothing read before it: no message
	}
	finishSingle(m, s.text) // (what was read before an error too)
	s.noteOn(m)
	if s.ls.err != nil && s.ls.err != io.EOF {
		return m, s.ls.err
	}
	return m, nil
}

// noteOn gives m the damage found before it was read, if any.
func (s *singleSrc) noteOn(m *Message) {
	if s.note != nil {
		m.Problems = append(m.Problems, *s.note)
	}
}

// overflow reads the rest of a message longer than the limit, keeping
// its structure and text (see overflow).
func (s *singleSrc) overflow(m *Message) {
	raw := m.Raw
	var rest []byte
	i := bytes.LastIndexByte(raw, s.ls.eol)
	raw, rest = raw[:i+1], bytes.Clone(raw[i+1:])
	over := newOverflow(raw, s.ls.eol, &s.opts)
	over.holdIn(s.ls.sp, s.opts.MaxMessageSize)
	raw = over.feed(m, raw, rest, m.RawOffset+int64(i+1))
	for {
		line, off, _, err := s.ls.line()
		if err != nil {
			break
		}
		raw = over.feed(m, raw, line, off)
	}
	if sp := s.ls.sp; sp != nil && sp.on {
		raw = s.ls.fill(m, raw, 0)
	}
	m.Raw = raw
	overLimit(m, s.opts.MaxMessageSize)
}

// messageFromBytes makes m, the message or text that is the whole of
// data (a file read whole, size bytes long, data perhaps cut at the
// limit), as singleSrc would read it from a stream.
func messageFromBytes(m *Message, data []byte, size int64, text bool) {
	off := 0
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		off = 3
	}
	head := data[off:min(len(data), off+4096)]
	m.crOnly = bytes.IndexByte(head, '\n') < 0 && bytes.IndexByte(head, '\r') >= 0
	m.Offset, m.RawOffset = int64(off), int64(off)
	if text {
		m.Format = FormatText
	} else {
		m.Format = FormatMessage
		if bytes.HasPrefix(data[off:], fromCRLF) {
			eol := byte('\n')
			if m.crOnly {
				eol = '\r'
			}
			end := len(data)
			if i := bytes.IndexByte(data[off:], eol); i >= 0 {
				end = off + i + 1
			}
			m.FromLine = string(trimEOL(data[off:end]))
			m.RawOffset = int64(end)
		}
	}
	m.Raw = data[m.RawOffset:]
	m.Length = size - m.Offset
	finishSingle(m, text)
}

// finishSingle reads the header of a single message, or makes text of it.
func finishSingle(m *Message, text bool) {
	switch {
	case text:
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
}

// ReadMessage reads one message held in memory, as a file holding it
// would be read (FormatMessage: a leading "From " line is its envelope, a
// message of bare CR lines is read as such, the header is parsed), without
// a Reader and its read buffers. raw is copied into a buffer of the
// message's own, which Release gives back; path is reported as its Path.
// Past opts.MaxMessageSize only structure and text are kept, as a reader
// keeps them.
func ReadMessage(raw []byte, path string, opts *Options) *Message {
	o := opts.withDefaults()
	m := &Message{Path: path, opts: o}
	if int64(len(raw)) > o.MaxMessageSize {
		// the reader's way with a message over the limit
		r, err := NewReader(bytes.NewReader(raw), path, &Options{Format: FormatMessage, MaxMessageSize: o.MaxMessageSize,
			MaxHeaderBytes: o.MaxHeaderBytes, MaxDepth: o.MaxDepth, MaxParts: o.MaxParts, MaxPartSize: o.MaxPartSize,
			NoHTML: o.NoHTML, SkipText: o.SkipText})
		if err == nil {
			if big, err := r.Next(); err == nil && big != nil {
				return big
			}
		}
	}
	buf := m.rawBuf()
	if cap(buf) < len(raw) {
		buf = make([]byte, 0, len(raw))
	}
	buf = append(buf, raw...)
	messageFromBytes(m, buf, int64(len(raw)), false)
	return m
}
