package mailbox

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/linkscan/linkscan/internal/corpus"
	"golang.org/x/text/encoding"
)

// The span steps (quoted-printable decoding, charset conversion,
// format=flowed, HTML text) and the spanBuilder under them are written
// for speed. These tests hold them to the reference in spanref_test.go,
// the steps as they were before: the same text and the same spans, span
// for span, on every part of the test inputs and of a generated mbox, on
// fuzzed bodies, and, for the builder alone, on random sequences of
// operations over random input maps.

// stepDiff runs one step's new and reference versions and describes the
// first difference, or returns "".
func stepDiff(step string, got, want []byte, gs, ws []Span) string {
	if !bytes.Equal(got, want) {
		return fmt.Sprintf("%s: text %q, reference %q", step, got, want)
	}
	if !slices.Equal(gs, ws) {
		for i := range min(len(gs), len(ws)) {
			if gs[i] != ws[i] {
				return fmt.Sprintf("%s: span %d is %+v, reference %+v (text %q)", step, i, gs[i], ws[i], got)
			}
		}
		return fmt.Sprintf("%s: %d spans, reference %d (%+v against %+v)", step, len(gs), len(ws), gs[min(len(gs), len(ws)):], ws[min(len(gs), len(ws)):])
	}
	return ""
}

// compareSteps runs every span step on body (at file offset off) and its
// reference, feeding each step the output of the one before, and reports
// the first difference. enc is the charset to convert from (nil: none);
// unflow and htmlText run on every input, whatever its type, to try them
// on more text.
func compareSteps(body []byte, off int64, qp bool, enc encoding.Encoding, delsp bool) string {
	data, spans := body, []Span{{Text: 0, Raw: off, Exact: true}}
	if qp {
		d, s, _, _, _ := decodeBody(nil, nil, nil, "quoted-printable", body, off, -1)
		rd, rs := refDecodeQP(nil, nil, body, off, -1)
		if msg := stepDiff("quoted-printable", d, rd, s, rs); msg != "" {
			return msg
		}
		data, spans = d, s
	}
	if enc != nil {
		t, s := convert(nil, nil, enc, data, spans)
		rt, rs := refConvert(nil, nil, enc, data, spans)
		if msg := stepDiff("convert", t, rt, s, rs); msg != "" {
			return msg
		}
		data, spans = t, s
	}
	ft, fs := unflow(nil, nil, data, spans, delsp)
	rft, rfs := refUnflow(nil, nil, data, spans, delsp)
	if msg := stepDiff("unflow", ft, rft, fs, rfs); msg != "" {
		return msg
	}
	for _, in := range []struct {
		text  []byte
		spans []Span
	}{{data, spans}, {ft, fs}} {
		var p, rp Part
		ht, hs := htmlText(nil, nil, &p, in.text, in.spans)
		rht, rhs := refHTMLText(nil, nil, &rp, in.text, in.spans)
		if msg := stepDiff("htmlText", ht, rht, hs, rhs); msg != "" {
			return msg
		}
		if !slices.Equal(p.AttrLinks, rp.AttrLinks) || p.Base != rp.Base {
			return fmt.Sprintf("htmlText: links %+v base %q, reference %+v %q", p.AttrLinks, p.Base, rp.AttrLinks, rp.Base)
		}
	}
	return ""
}

// compareMessages runs compareSteps on every text part of the messages
// r reads, with the part's own encoding and charset, and once more
// converted from a charset of fuzzCharsets. It returns the number of
// parts compared.
func compareMessages(t *testing.T, name string, r *Reader) int {
	t.Helper()
	n := 0
	for {
		m, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Logf("%s: %v", name, err)
			}
			return n
		}
		for _, p := range m.Parts() {
			if p.Text == nil || p.Reencode() {
				continue
			}
			qp := p.Encoding == "quoted-printable"
			if msg := compareSteps(p.body, p.RawStart, qp, p.decoder, n%2 == 0); msg != "" {
				t.Fatalf("%s@%d part %s (%s, %s, %s): %s", name, m.Offset, p.Path, p.ContentType, p.Encoding, p.Charset, msg)
			}
			cs := fuzzCharsets[n%len(fuzzCharsets)]
			enc, _ := lookupCharset(cs)
			if msg := compareSteps(p.body, p.RawStart, qp, enc, n%2 == 1); msg != "" {
				t.Fatalf("%s@%d part %s as %s: %s", name, m.Offset, p.Path, cs, msg)
			}
			n++
		}
		m.Release()
	}
}

// TestStepsAgainstReference compares the span steps with the reference on
// every text part of testdata/, ../shared/corpus/ and a generated mbox of
// each mix.
func TestStepsAgainstReference(t *testing.T) {
	parts := 0
	for _, path := range spanInputs(t) {
		r, err := Open(path, nil)
		if err != nil {
			continue
		}
		parts += compareMessages(t, path, r)
		r.Close()
	}
	size := int64(2 << 20)
	if testing.Short() {
		size = 256 << 10
	}
	for _, dense := range []bool{false, true} {
		var buf bytes.Buffer
		if dense {
			corpus.WriteDense(&buf, size, 3)
		} else {
			corpus.Write(&buf, size, 2)
		}
		r, err := NewReader(bytes.NewReader(buf.Bytes()), "generated", nil)
		if err != nil {
			t.Fatal(err)
		}
		parts += compareMessages(t, fmt.Sprintf("generated (dense %v)", dense), r)
	}
	t.Logf("%d parts compared", parts)
	if parts < 500 {
		t.Errorf("only %d parts compared", parts)
	}
}

// FuzzSpanSteps: on any body, quoted-printable or not, in any charset of
// fuzzCharsets, the span steps give what the reference gives.
func FuzzSpanSteps(f *testing.F) {
	for _, s := range []string{
		"caf=E9 http://e.org/a=\n/b=3D1 \n",
		"=93=FA=96=7B http://e.org/\n",
		"\x1b$BF|K\\\x1b(B http://e.org/\n\x1b$B\x1b(B",
		"h\x00t\x00\n\x00",
		"<p>a&amp;b=\n&#233;</p>&copy2",
		"> a \n> b\n>>c \n d\n",
		"<html><body><div>see <a href=\"http://e.org/x\">http://e.org/x</a></div>\n<p>a &lt;b&gt; &nbsp;c</p><br></body></html>\n",
		"<P>x</P><pre>y\n</pre><script>a<b</script><style/>z<!-- c --><?x?>&#x41;&unknown;&amp</p>",
		"flowed line \nnext line\n>quoted \n>quoted more\n> \n-- \nsig\n",
		" stuffed\r\n>> deep \r\n>> deeper\r\n",
		"soft=\r\nbreak  \r\ntrail\t=20\r\n=\n",
		"\xe9t\xe9 \xc3\xa9 \x80\xff <b>\xe9</b>",
		"a=\nb=\nc=\n=3D=3D=3D\n\n",
	} {
		for kind := range uint8(4) {
			f.Add(uint8(len(s)), kind, s)
		}
	}
	f.Fuzz(func(t *testing.T, cs, kind uint8, body string) {
		var enc encoding.Encoding
		if kind&1 != 0 {
			enc, _ = lookupCharset(fuzzCharsets[int(cs)%len(fuzzCharsets)])
		}
		off := int64(cs) * 37
		if msg := compareSteps([]byte(body), off, kind&2 != 0, enc, cs&1 != 0); msg != "" {
			t.Fatalf("%s", msg)
		}
	})
}

// builderOps runs a sequence of span builder operations read from ops
// over the input map in, on b (a spanBuilder or a refSpanBuilder through
// the same methods), and returns the output map.
type spanOps interface {
	copyRun(o, x, n int)
	emit(o, t, x, n int)
	insert(o int)
	rawAt(x int) int64
	finish() []Span
}

func runOps(b spanOps, ops []byte, inLen int, setShifted func(bool)) ([]Span, []int64) {
	o, x := 0, 0
	var raws []int64
	for len(ops) >= 3 && x < inLen+4 {
		op, a, c := ops[0], int(ops[1]), int(ops[2])
		ops = ops[3:]
		switch op % 6 {
		case 0, 1: // copy after a skip
			x += a % 4
			n := c%24 + 1
			b.copyRun(o, x, n)
			o, x = o+n, x+n
		case 2: // a unit
			x += a % 3
			n, t := c%5+1, c/5%4+1
			if setShifted != nil {
				setShifted(c&0x80 != 0)
			}
			b.emit(o, t, x, n)
			if setShifted != nil {
				setShifted(false)
			}
			o, x = o+t, x+n
		case 3: // inserted text
			b.insert(o)
			o += a%3 + 1
		case 4: // a long copy
			x += a % 2
			n := c * 3
			b.copyRun(o, x, n)
			o, x = o+n, x+n
		case 5:
			raws = append(raws, b.rawAt(x+a%5))
		}
	}
	return b.finish(), raws
}

// randomSpans reads an input map from data: runs in order of text and
// source, with random unit sizes, cuts, leads and shifts.
func randomSpans(data []byte) ([]Span, int) {
	var spans []Span
	text, raw := 0, int64(100)
	for len(data) >= 4 && len(spans) < 64 {
		v := binary.LittleEndian.Uint32(data)
		data = data[4:]
		s := Span{Text: text, Raw: raw, Exact: v&1 != 0, Cut: v&2 != 0 && len(spans) > 0, Shifted: v&4 != 0}
		if v&8 != 0 {
			s.TextUnit = uint16(v >> 4 % 4)
			s.RawUnit = uint16(v >> 6 % 4)
		}
		if v&(1<<8) != 0 {
			s.Lead = uint16(v >> 9 % 3)
		}
		spans = append(spans, s)
		text += int(v>>12%40) + int(s.Lead)
		raw += int64(v >> 18 % 50)
	}
	if len(spans) == 0 {
		spans = []Span{{Text: 0, Raw: 100, Exact: true}}
	}
	return spans, text + 20
}

// FuzzSpanBuilder: random operations on random input maps give the same
// output map, and the same raw offsets, from spanBuilder as from the
// reference builder, with the step's skips opaque or not.
func FuzzSpanBuilder(f *testing.F) {
	f.Add(false, []byte{1, 0, 0, 0}, []byte{0, 0, 10, 0, 1, 10, 3, 0, 0, 0, 0, 5})
	f.Add(true, []byte{1, 0, 0, 0}, []byte{0, 0, 10, 3, 1, 0, 0, 1, 10, 2, 0, 7, 0, 0, 3})
	f.Add(true, []byte{1, 0x40, 1, 0, 3, 0x10, 2, 0, 9, 0, 1, 0}, []byte{0, 0, 30, 4, 1, 40, 2, 1, 11, 5, 2, 0, 3, 0, 0, 0, 1, 9})
	f.Add(false, []byte{0x19, 0xc1, 0x40, 0, 0x0f, 0x30, 0x80, 0, 1, 0x20, 0, 1}, []byte{2, 0, 13, 0, 1, 5, 2, 1, 0x8a, 0, 0, 50, 5, 3, 0})
	f.Fuzz(func(t *testing.T, opaque bool, in, ops []byte) {
		spans, inLen := randomSpans(in)
		rb := &refSpanBuilder{in: spans, opaque: opaque}
		want, wraws := runOps(rb, ops, inLen, func(s bool) { rb.shifted = s })
		// newSpanBuilder's, which takes shorter ways for some inputs, and
		// a builder without them
		nb, cb := newSpanBuilder(spans, nil, opaque), newSpanBuilder(spans, make([]Span, 0, 8), opaque)
		for i, b := range []*spanBuilder{&nb, {in: spans, opaque: opaque}, &cb} {
			var bo spanOps = b
			if i == 2 {
				bo = leadFirst{b} // copyLead where it applies, as htmlText
			}
			got, graws := runOps(bo, ops, inLen, func(s bool) { b.shifted = s })
			if msg := stepDiff("builder", nil, nil, got, want); msg != "" {
				t.Fatalf("input %+v (builder %d, ident %v): %s", spans, i, b.ident, msg)
			}
			if !slices.Equal(graws, wraws) {
				t.Fatalf("input %+v (builder %d, ident %v): rawAt %v, reference %v", spans, i, b.ident, graws, wraws)
			}
		}
	})
}

// leadFirst is a spanBuilder whose copyRun tries copyLead first, as
// htmlText does.
type leadFirst struct{ *spanBuilder }

func (c leadFirst) copyRun(o, x, n int) {
	if n <= 0 || !c.copyLead(o, x, n) {
		c.spanBuilder.copyRun(o, x, n)
	}
}
