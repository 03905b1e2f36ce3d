package mailbox

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// withStageMax runs f with stage pieces of at most n bytes of input.
func withStageMax(n int, f func()) {
	m := stageMax
	defer func() { stageMax = m }()
	stageMax = n
	f()
}

// randomHTMLBody writes an HTML body of random pieces for the chunk
// tests: tags that break lines and tags that do not, tags across lines,
// links in attributes, a base, comments, script and style elements,
// references whole, cut and standing for themselves, "<" and "</" that
// start no tag, and the quoted-printable escapes and bytes of
// randomTextBody's pieces.
func randomHTMLBody(rng *rand.Rand, n int) []byte {
	var b bytes.Buffer
	pieces := []string{"<p>", "</p>", "<br>", "<br/>", "<div\nclass=x>", "</div>", "<a href=\"http://e.org/x?a=1&amp;b=2\">", "</a>",
		"<a href='http://e.org/y'\n>", "<img src=i.png>", "<base href=\"http://b.org/d/\">", "<!-- c -->", "<!--", "-->", "<!---->",
		"<!doctype html>", "<?pi?>", "<script>if (a<b) x()</script>", "<style>p{}</style>", "<script>", "</script>", "</ x>", "</>",
		"&amp;", "&eacute;", "&#233;", "&#xe9;", "&", "&am", "&copy=2", "&amp\n", "<", "</", "< ", "<3", "word ", "http://example.org/a?b=c ",
		"=E9", "=C3=A9", "=3D", "=3C", "=\n", "=\r\n", "\xe9", "\xc3\xa9", "\n", "\r\n", "\n\n", " ", "\t", "  \n"}
	for b.Len() < n {
		p := pieces[rng.IntN(len(pieces))]
		if rng.IntN(300) == 0 {
			p = strings.Repeat("longline", 20+rng.IntN(200))
		}
		b.WriteString(p)
	}
	return b.Bytes()
}

// randomFlowedBody writes a format=flowed body for the chunk tests:
// flowed and fixed lines, quoted at depths that change, space-stuffed
// lines, signature separators, CRLF, and links across soft breaks.
func randomFlowedBody(rng *rand.Rand, n int) []byte {
	var b bytes.Buffer
	pieces := []string{"word ", "words\n", "soft \n", "http://example.org/a/ \n", "b/c\n", "> ", ">", ">> ", ">>", " From here \n", "-- \n",
		"\n", "\r\n", " \r\n", "caf\xc3\xa9 \n", "caf=E9 =\n", "=3D \n", "\xe9 \n", "  \n", "\t\n"}
	for b.Len() < n {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.Bytes()
}

// base64Lines encodes b in base64 lines of 76 characters.
func base64Lines(b []byte) []byte { return base64Wrap(b, 76, "\n") }

// base64Wrap encodes b in base64 lines of width characters (a width not
// a multiple of four carries characters from line to line) ending in eol.
func base64Wrap(b []byte, width int, eol string) []byte {
	e := base64.StdEncoding.EncodeToString(b)
	var out bytes.Buffer
	for len(e) > width {
		out.WriteString(e[:width] + eol)
		e = e[width:]
	}
	out.WriteString(e + eol)
	return out.Bytes()
}

// stageTypes are the content types with a stage of the chunk tests.
var stageTypes = []string{"text/html", "text/plain; format=flowed", "text/plain; format=flowed; delsp=yes", "text/html"}

// TestChunkedStagesSameAsWhole: HTML and format=flowed parts decoded in
// chunks (of sizes from a byte to more than the part, limits cut inside
// chunks, pieces of the stage joined up to a bound that is sometimes
// passed) have the text, problems, attribute links, base and maps of the
// same parts decoded whole, in every transfer encoding and charset (in
// base64, the stage run in pieces over the text decoded whole), and with
// a hole in the message.
func TestChunkedStagesSameAsWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	chunked := 0
	for n := range chunkIters {
		ct := stageTypes[n%len(stageTypes)]
		var body []byte
		if strings.HasPrefix(ct, "text/html") {
			body = randomHTMLBody(rng, 200+rng.IntN(3000))
		} else {
			body = randomFlowedBody(rng, 200+rng.IntN(3000))
		}
		cte := []string{"quoted-printable", "8bit", "", "7bit", "binary", "base64"}[rng.IntN(6)]
		cs := chunkCharsets[rng.IntN(len(chunkCharsets))]
		if cte == "base64" && n%2 == 0 {
			// valid UTF-8, whose decoded text is its map's (stagedText)
			body, cs = base64Lines(bytes.ToValidUTF8(body, []byte("\u00e9"))), "utf-8"
		}
		msg := chunkMessageType(n/len(stageTypes), ct, cte, cs, body)
		limit := 1 << 20
		if n%3 == 0 {
			limit = rng.IntN(len(body) + 10)
		}
		size := []int{1, 7, 64, 500, 5000}[rng.IntN(5)]
		opts := &Options{MaxPartSize: limit}
		withStageMax([]int{1 << 20, 40, 300}[rng.IntN(3)], func() {
			chunked += compareChunked(t, fmt.Sprintf("%s body %d", ct, n), msg, opts, size, n%5 == 4, rng)
		})
	}
	t.Logf("%d parts decoded in chunks", chunked)
	if chunked < 30 {
		t.Errorf("only %d parts decoded in chunks", chunked)
	}
}

// FuzzChunkedStages: any HTML or format=flowed body, in a transfer
// encoding and charset picked by the fuzzer, decodes in chunks of any
// size to what it decodes to whole.
func FuzzChunkedStages(f *testing.F) {
	for _, s := range []string{
		"<p>caf&eacute; <a href=\"http://e.org/a\">x</a></p>\n<p>line\n",
		"<div\nclass=x>a &amp\nb</div>\n<!-- c\n-->\n<script>\n</script>\n",
		"a <\nb </\nc &\n&#23\n3; <br>\n",
		"flowed \nline\n> quoted \n> on\n>> deeper\n-- \nsig\n",
		" stuffed \n From \r\nx\n",
	} {
		for k := range uint8(8) {
			f.Add(k, uint8(len(s)), uint16(3+len(s)/2), s)
		}
	}
	f.Fuzz(func(t *testing.T, kind, cs uint8, limit uint16, body string) {
		cte := []string{"quoted-printable", "8bit", "", "base64"}[int(kind)%4]
		ct := stageTypes[int(kind/4)%len(stageTypes)]
		charset, b := chunkCharsets[int(cs)%len(chunkCharsets)], []byte(body)
		if cte == "base64" && kind&32 != 0 {
			charset, b = "utf-8", base64Lines(bytes.ToValidUTF8(b, []byte("\u00e9")))
		}
		msg := chunkMessageType(int(kind/16), ct, cte, charset, b)
		size := 1 + int(cs)%17
		withStageMax(8+int(limit)%64, func() {
			compareChunked(t, "fuzz", msg, &Options{MaxPartSize: int(limit)}, size, kind&128 != 0, rand.New(rand.NewPCG(uint64(len(body)), 1)))
		})
	})
}

// TestChunkedMemoryHTML: a long HTML part, as written or in base64,
// allocates about its text, not the HTML step's map (four spans, 128
// bytes, a line: more than the text itself).
func TestChunkedMemoryHTML(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a message of 16 MiB")
	}
	var b bytes.Buffer
	for i := 0; b.Len() < 16<<20; i++ {
		if i%50 == 0 {
			fmt.Fprintf(&b, "<p>line %d see <a href=\"http://example.org/page/%d\">more</a></p>\n", i, i)
		} else {
			fmt.Fprintf(&b, "<p>line %d caf\u00e9 with nothing but words and more words</p>\n", i)
		}
	}
	for _, cte := range []string{"8bit", "base64"} {
		body := b.Bytes()
		if cte == "base64" {
			body = base64Lines(body)
		}
		msg := chunkMessageType(0, "text/html", cte, "utf-8", body)
		r, err := NewReader(bytes.NewReader(msg), "in", &Options{DeferParse: true})
		if err != nil {
			t.Fatal(err)
		}
		m, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		m.Parse()
		noPools = true
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		parts := m.Parts()
		runtime.ReadMemStats(&after)
		noPools = false
		alloc := after.TotalAlloc - before.TotalAlloc
		p := parts[0]
		t.Logf("%s: %.1f MiB allocated for %.1f MiB of body, %.1f MiB of text, %d links in attributes", cte, float64(alloc)/(1<<20), float64(len(body))/(1<<20), float64(len(p.Text))/(1<<20), len(p.AttrLinks))
		if p.lazy == nil || len(p.AttrLinks) < 5000 {
			t.Fatalf("%s: decoded in chunks %v, %d attribute links", cte, p.lazy != nil, len(p.AttrLinks))
		}
		// the text (lent its body's length at most), the attribute
		// links, and buffers for a chunk
		if limit := uint64(len(b.Bytes())) + uint64(len(p.AttrLinks))*uint64(unsafe.Sizeof(AttrLink{})) + 4<<20; alloc > limit {
			t.Errorf("%s: %d bytes allocated (at most %d)", cte, alloc, limit)
		}
		// the map is still there, exactly
		l := bytes.Index(p.Text, []byte("line 200001 caf"))
		if _, _, ok := p.RawSpan(l, l+len("line 200001 café")); l < 0 || (cte == "8bit") != ok {
			t.Errorf("%s: RawSpan of 'line 200001 café' at %d: exact %v", cte, l, ok)
		}
		m.Release()
	}
}
