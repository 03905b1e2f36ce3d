package mailbox

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"slices"
	"testing"

	"github.com/linkscan/linkscan/internal/corpus"
)

// partsOf reads every message of an mbox and describes each part's text
// and spans; with release, each message is released once described, so
// that the next decodes into the same buffers.
func partsOf(t *testing.T, in []byte, release bool) []string {
	r, err := NewReader(bytes.NewReader(in), "corpus", nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for {
		m, err := r.Next()
		if m != nil {
			parts := m.Parts()
			// described only after the whole walk: a buffer handed to two
			// parts would show here
			for _, p := range parts {
				out = append(out, fmt.Sprintf("%d %s %q %v", m.Offset, p.Path, p.Text, p.Spans))
			}
			if release {
				m.Release()
			}
		}
		if err != nil {
			break
		}
	}
	return out
}

// manyParts is an mbox whose messages have several parts that each need
// decoding (and so buffers of the same sizes at once): quoted-printable
// Latin-1, base64, quoted-printable HTML, format=flowed.
func manyParts(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "From a@b Sat Jan  3 01:05:34 1996\nMessage-ID: <%d@x>\nMIME-Version: 1.0\n"+
			"Content-Type: multipart/mixed; boundary=B\n\n", i)
		for k := range 3 {
			fmt.Fprintf(&b, "--B\nContent-Type: text/plain; charset=iso-8859-1\nContent-Transfer-Encoding: quoted-printable\n\n"+
				"Part %d.%d caf=E9 <URL:http://example.org/%d/%d> soft=\nbreak\n", i, k, i, k)
			fmt.Fprintf(&b, "--B\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n\n%s\n",
				base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "base64 %d.%d http://example.com/%d\n", i, k, k)))
			fmt.Fprintf(&b, "--B\nContent-Type: text/html; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n\n"+
				"<p>html %d.%d &amp; <a href=3D\"http://h.example/%d\">x</a></p>\n", i, k, k)
			fmt.Fprintf(&b, "--B\nContent-Type: text/plain; format=flowed; delsp=yes\n\n"+
				"flowed %d.%d http://f.example/ \n%d/path\n> quoted \n> more\n", i, k, k)
		}
		b.WriteString("--B--\n\n")
	}
	return b.Bytes()
}

// TestReleaseReuse checks that texts decoded into recycled buffers are
// those decoded into new ones, on a generated archive that has every
// encoding, charsets, format=flowed and HTML, and on messages with many
// parts to decode.
func TestReleaseReuse(t *testing.T) {
	var buf bytes.Buffer
	if err := corpus.Write(&buf, 2<<20, 7); err != nil {
		t.Fatal(err)
	}
	buf.Write(manyParts(50))
	noPools = true
	want := partsOf(t, buf.Bytes(), false)
	noPools = false
	for round := range 2 {
		got := partsOf(t, buf.Bytes(), true)
		if !slices.Equal(got, want) {
			for i := range min(len(got), len(want)) {
				if got[i] != want[i] {
					t.Fatalf("round %d: part %d differs with recycled buffers:\ngot  %.300s\nwant %.300s", round, i, got[i], want[i])
				}
			}
			t.Fatalf("round %d: %d parts with recycled buffers, want %d", round, len(got), len(want))
		}
	}
}

// TestSpanCursor: the builder's cursor finds the span holding an offset
// as a search does, for offsets in increasing order and after a step back.
func TestSpanCursor(t *testing.T) {
	spans := []Span{{Text: 0, Raw: 7}, {Text: 2, Raw: 100, Exact: true}, {Text: 5, Raw: 200}, {Text: 5, Raw: 300, Exact: true}, {Text: 9, Raw: 400}}
	b := spanBuilder{in: spans}
	for _, off := range []int{0, 1, 2, 3, 5, 6, 6, 9, 12, 4, 10} {
		if got, want := b.locate(off), spanAt(spans, off); got != want {
			t.Errorf("offset %d: cursor at span %d, search %d", off, got, want)
		}
	}
}
