package mailbox

import (
	"bytes"
	"encoding/base64"
	"math/rand/v2"
	"testing"
)

// refLines is the map of a base64 body's lines as the walk kept it
// before lineMarks: a span per line (up to the limit), at the decoded
// offset of the line's first bytes; refLineStart finds the last at or
// before x.
func refLines(body []byte, off int64, limit int) []Span {
	var kept []Span
	out := 0
	var quad []byte
	for i, line := range lines(body) {
		if limit >= 0 && out > limit {
			break
		}
		kept = append(kept, Span{Text: out, Raw: off + int64(i)})
		for _, c := range line {
			if b64val[c] != 0xff {
				quad = append(quad, c)
			}
		}
		n := len(quad) / 4 * 4
		d := make([]byte, n/4*3)
		k, _ := base64.StdEncoding.Decode(d, quad[:n])
		out += k
		quad = append(quad[:0], quad[n:]...)
	}
	return kept
}

func refLineStart(kept []Span, x int) (int64, bool) {
	j := spanAt(kept, x)
	if j < 0 {
		return 0, false
	}
	return kept[j].Raw, true
}

// randomBase64Body encodes random text in lines of random widths, with
// blank lines, junk and a cut group now and then.
func randomBase64Body(rng *rand.Rand) []byte {
	plain := make([]byte, rng.IntN(3000))
	for i := range plain {
		plain[i] = byte('a' + rng.IntN(26))
	}
	enc := base64.StdEncoding.EncodeToString(plain)
	var b bytes.Buffer
	width := []int{76, 76, 72, 4, 5, 64, 1}[rng.IntN(7)]
	for i := 0; i < len(enc); {
		w := width
		if rng.IntN(20) == 0 {
			w = 1 + rng.IntN(100)
		}
		e := min(i+w, len(enc))
		b.WriteString(enc[i:e])
		i = e
		switch rng.IntN(30) {
		case 0:
			b.WriteString("\n\n")
		case 1:
			b.WriteString(" !*\n")
		case 2:
			b.WriteString("\r\n")
		default:
			b.WriteString("\n")
		}
	}
	if rng.IntN(4) == 0 {
		b.WriteString("\n\n")
	}
	return b.Bytes()
}

// TestBase64LineMarks: the few spans lineMarks keeps for a base64 body's
// lines map every decoded offset to the line the span per line mapped it
// to, with and without a limit, and so after splitLines at every offset.
func TestBase64LineMarks(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := range 400 {
		body := randomBase64Body(rng)
		limit := -1
		if n%3 == 0 {
			limit = rng.IntN(len(body) + 1)
		}
		const off = 1000
		data, _, marks, _, _ := decodeBody(nil, nil, nil, "base64", body, off, limit)
		ref := refLines(body, off, limit)
		check := func(what string, marks []Span) {
			for x := 0; x <= len(data)+5; x++ {
				want, wok := refLineStart(ref, x)
				got, ok := lineStart(marks, x)
				if got != want || ok != wok {
					t.Fatalf("body %d %s: offset %d maps to %d %v, want %d %v\nbody %q\nmarks %+v", n, what, x, got, ok, want, wok, body, marks)
				}
			}
		}
		check("", marks)
		if n%20 == 0 {
			for at := int64(off); at <= off+int64(len(body)); at += int64(1 + rng.IntN(7)) {
				check("split", splitLines(marks, at))
			}
		}
	}
}

// TestBase64LineMarksFew: a body of lines of 76 characters keeps three
// spans (the run, the last full line, the short last line), not one per
// line.
func TestBase64LineMarksFew(t *testing.T) {
	plain := bytes.Repeat([]byte("a line of text with http://example.org/ in it\n"), 20000)
	enc := base64.StdEncoding.EncodeToString(plain)
	var b bytes.Buffer
	for i := 0; i < len(enc); i += 76 {
		b.WriteString(enc[i:min(i+76, len(enc))] + "\r\n")
	}
	data, _, marks, _, _ := decodeBody(nil, nil, nil, "base64", b.Bytes(), 0, -1)
	if !bytes.Equal(data, plain) || len(marks) > 3 {
		t.Fatalf("%d spans for %d lines: %+v", len(marks), bytes.Count(b.Bytes(), []byte("\n")), marks)
	}
	if r, _ := lineStart(marks, 57*1000+3); r != 78*1000 {
		t.Errorf("offset in line 1000 maps to %d", r)
	}
}
