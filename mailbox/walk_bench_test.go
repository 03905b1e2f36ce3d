package mailbox

import (
	"bytes"
	"io"
	"slices"
	"testing"

	"github.com/linkscan/linkscan/internal/corpus"
)

// BenchmarkWalk measures the MIME walk alone (decoding, charsets,
// format=flowed, HTML and their spans) over the messages of a generated
// 4 MiB mbox, split and parsed beforehand.
func BenchmarkWalk(b *testing.B) {
	var buf bytes.Buffer
	corpus.Write(&buf, 4<<20, 1)
	r, err := NewReader(bytes.NewReader(buf.Bytes()), "bench", nil)
	if err != nil {
		b.Fatal(err)
	}
	var msgs []*Message
	for {
		m, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		for _, m := range msgs {
			m.Parts()
			// give the text back, keep the message
			m.bytes.release(&bytePools)
			m.spans.release(&spanPools)
			m.partUsed = false
		}
	}
}

// stepInput is what one span step is given: text and its map.
type stepInput struct {
	text  []byte
	spans []Span
	qp    bool // text is a quoted-printable body (the QP step's input)
}

// benchInputs returns the inputs the walk gives to the quoted-printable
// decoder, to unflow (flowed parts) and to htmlText (HTML parts) on the
// messages of a generated 4 MiB mbox, and that mbox's size.
func benchInputs(b *testing.B) (qp, flowed, htm []stepInput, size int64) {
	var buf bytes.Buffer
	corpus.Write(&buf, 4<<20, 1)
	r, err := NewReader(bytes.NewReader(buf.Bytes()), "bench", nil)
	if err != nil {
		b.Fatal(err)
	}
	for {
		m, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range m.Parts() {
			if p.Text == nil || p.Reencode() {
				continue
			}
			data, spans := p.body, []Span{{Text: 0, Raw: p.RawStart, Exact: true}}
			if p.Encoding == "quoted-printable" {
				qp = append(qp, stepInput{text: p.body, spans: spans, qp: true})
				data, spans, _, _, _ = decodeBody(nil, nil, nil, p.Encoding, p.body, p.RawStart, -1)
			}
			if p.decoder != nil {
				data, spans = convert(nil, nil, p.decoder, data, spans)
			}
			in := stepInput{text: bytes.Clone(data), spans: slices.Clone(spans)}
			switch {
			case p.ContentType == "text/html":
				htm = append(htm, in)
			case p.Params["format"] == "flowed":
				flowed = append(flowed, in)
			}
		}
		m.Release()
	}
	return qp, flowed, htm, int64(buf.Len())
}

// BenchmarkSpanSteps measures the span steps alone on the inputs the
// walk of a generated 4 MiB mbox gives them; MB/s are of the whole mbox.
func BenchmarkSpanSteps(b *testing.B) {
	qp, flowed, htm, size := benchInputs(b)
	text, spans := make([]byte, 0, 1<<20), make([]Span, 0, 1<<16)
	b.Run("qp", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			for _, in := range qp {
				text, spans, _, _, _ = decodeBody(text, spans, nil, "quoted-printable", in.text, in.spans[0].Raw, -1)
			}
		}
	})
	b.Run("unflow", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			for _, in := range flowed {
				text, spans = unflow(text, spans, in.text, in.spans, false)
			}
		}
	})
	b.Run("html", func(b *testing.B) {
		b.SetBytes(size)
		var p Part
		for b.Loop() {
			for _, in := range htm {
				p.AttrLinks = p.AttrLinks[:0]
				text, spans = htmlText(text, spans, &p, in.text, in.spans)
			}
		}
	})
}
