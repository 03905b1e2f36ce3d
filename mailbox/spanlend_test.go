package mailbox

import (
	"bytes"
	"fmt"
	"testing"

	"golang.org/x/text/encoding/charmap"
)

// TestLongPartSpanCounts: for a long part, the spans lent to the quoted-
// printable decoder and to convert hold the map they write (so that it is
// not grown in copies), and not more than twice it (rounding to a size
// class aside).
func TestLongPartSpanCounts(t *testing.T) {
	var latin, qp bytes.Buffer
	for i := 0; latin.Len() < longPart+1000; i++ {
		fmt.Fprintf(&latin, "line %d with w\xe9rds and \xe0 \xe9t\xe9 in it\n", i)
		fmt.Fprintf(&qp, "line %d with w=E9rds and =E0 =E9t=E9 in a line that is so long that it is broken=\n in two\n", i)
	}
	enc := charmap.ISO8859_1
	check := func(name string, lent, got int) {
		t.Helper()
		if lent < got || lent > 2*got+16 {
			t.Errorf("%s: %d spans lent for %d written", name, lent, got)
		}
	}

	data, spans := latin.Bytes(), []Span{{Text: 0, Raw: 100, Exact: true}}
	_, cs := convert(nil, nil, enc, data, spans)
	check("convert of 8-bit text", convertSpans(enc, data, spans), len(cs))

	body := qp.Bytes()
	d, qs, _, _, _ := decodeBody(nil, nil, nil, "quoted-printable", body, 100, -1)
	check("quoted-printable", qpSpans(body), len(qs))
	_, cs = convert(nil, nil, enc, d, qs)
	check("convert of quoted-printable", convertSpans(enc, d, qs), len(cs))

	// short parts are not counted
	if n := convertSpans(enc, data[:1000], spans); n != len(spans)+8 {
		t.Errorf("short part: %d spans lent to convert", n)
	}
	if n := qpSpans(body[:6400]); n != 101 {
		t.Errorf("short part: %d spans lent to the quoted-printable decoder", n)
	}
}
