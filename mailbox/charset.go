package mailbox

import (
	"fmt"
	"io"
	"strings"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/ianaindex"
	"golang.org/x/text/encoding/unicode"
)

// lookupCharset returns the decoder for a MIME charset label, or nil for
// UTF-8 and US-ASCII (which need only validation), and whether the label
// is known.
func lookupCharset(label string) (encoding.Encoding, bool) {
	// Labels are few and repeat: the answers are kept.
	if c, ok := charsets.get(label); ok {
		return c.enc, c.known
	}
	enc, known := lookupCharsetLabel(label)
	charsets.put(label, charsetAnswer{enc, known})
	return enc, known
}

type charsetAnswer struct {
	enc   encoding.Encoding
	known bool
}

var charsets = answers[charsetAnswer]{limit: 1000}

func lookupCharsetLabel(label string) (encoding.Encoding, bool) {
	l := strings.ToLower(strings.Trim(strings.TrimSpace(label), `"'`))
	switch l {
	case "", "us-ascii", "ascii", "utf-8", "utf8", "ansi_x3.4-1968", "x-unknown", "unknown-8bit":
		return nil, l != "x-unknown" && l != "unknown-8bit"
	case "utf-16", "utf16":
		return unicode.UTF16(unicode.BigEndian, unicode.UseBOM), true
	}
	if e, err := htmlindex.Get(l); err == nil {
		return e, true
	}
	if e, err := ianaindex.MIME.Encoding(l); err == nil && e != nil {
		return e, true
	}
	return nil, false
}

// fallbackCharset is used for text in an unknown charset that is not valid
// UTF-8: Windows-1252 maps every byte, and is what most such mail is.
var fallbackCharset encoding.Encoding = charmap.Windows1252

// charsetReader is the WordDecoder's hook: a field, not a global.
func charsetReader(label string, r io.Reader) (io.Reader, error) {
	e, ok := lookupCharset(label)
	if !ok {
		return nil, fmt.Errorf("mailbox: unknown charset %q", label)
	}
	if e == nil {
		return r, nil
	}
	return e.NewDecoder().Reader(r), nil
}
