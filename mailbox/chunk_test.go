package mailbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"golang.org/x/text/encoding/japanese"
)

// withChunks runs f with parts longer than min decoded in chunks of size
// bytes (min < 0: none is).
func withChunks(min, size int, f func()) {
	m, s, lm, ls := chunkMin, chunkSize, lazyMin, lazyChunk
	defer func() { chunkMin, chunkSize, lazyMin, lazyChunk = m, s, lm, ls }()
	if min < 0 {
		min = 1 << 62
	}
	chunkMin, chunkSize, lazyMin, lazyChunk = min, size, min, size
	f()
}

// readChunkTest reads every message of in with opts, and its parts.
func readChunkTest(t testing.TB, open func() (*Reader, error), holes bool) ([]*Message, [][]*Part) {
	t.Helper()
	r, err := open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var ms []*Message
	var ps [][]*Part
	for {
		m, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Log(err)
			}
			break
		}
		if holes && len(m.Raw) > 40 {
			// a hole taken out of the message's middle: offsets past it
			// move, and the part that held it maps only near
			m.Holes = []Hole{{At: len(m.Raw) / 2, Len: 1000}}
		}
		ms = append(ms, m)
		ps = append(ps, m.Parts())
	}
	return ms, ps
}

// compareChunked reads in whole and in chunks of size bytes, and compares
// the parts: their text, problems and charset, and every map from text to
// file and back over ranges around each line, each chunk's start and at
// random. It returns how many parts were decoded in chunks.
func compareChunked(t testing.TB, name string, in []byte, opts *Options, size int, holes bool, rng *rand.Rand) int {
	t.Helper()
	return compareChunkedOpen(t, name, func(half bool) (*Reader, error) {
		if half {
			return NewReader(iotest.HalfReader(bytes.NewReader(in)), "in", opts)
		}
		return NewReader(bytes.NewReader(in), "in", opts)
	}, size, holes, rng)
}

// compareChunkedOpen is compareChunked on what open opens (half: through
// iotest.HalfReader, if it can).
func compareChunkedOpen(t testing.TB, name string, open func(half bool) (*Reader, error), size int, holes bool, rng *rand.Rand) int {
	t.Helper()
	var wm, cm []*Message
	var wp, cp [][]*Part
	withChunks(-1, 0, func() { wm, wp = readChunkTest(t, func() (*Reader, error) { return open(false) }, holes) })
	withChunks(0, size, func() { cm, cp = readChunkTest(t, func() (*Reader, error) { return open(true) }, holes) })
	if len(wp) != len(cp) {
		t.Fatalf("%s: %d messages whole, %d in chunks", name, len(wp), len(cp))
	}
	chunked := 0
	for i := range wp {
		if !reflect.DeepEqual(wm[i].Problems, cm[i].Problems) {
			t.Fatalf("%s message %d: problems\n%v whole\n%v in chunks", name, i, wm[i].Problems, cm[i].Problems)
		}
		if len(wp[i]) != len(cp[i]) {
			t.Fatalf("%s message %d: %d parts whole, %d in chunks", name, i, len(wp[i]), len(cp[i]))
		}
		for j, w := range wp[i] {
			c := cp[i][j]
			if c.lazy != nil {
				chunked++
			}
			comparePart(t, fmt.Sprintf("%s message %d part %s (%s, %s, %s, chunks of %d)", name, i, w.Path, w.ContentType, w.Encoding, w.Charset, size), w, c, rng)
		}
	}
	return chunked
}

// comparePart compares a part decoded whole, w, with the same decoded in
// chunks, c.
func comparePart(t testing.TB, name string, w, c *Part, rng *rand.Rand) {
	t.Helper()
	if !bytes.Equal(w.Text, c.Text) || (w.Text == nil) != (c.Text == nil) {
		t.Fatalf("%s: text differs: %d bytes whole, %d in chunks\n%q\n%q", name, len(w.Text), len(c.Text), w.Text, c.Text)
	}
	if !reflect.DeepEqual(w.Problems, c.Problems) {
		t.Fatalf("%s: problems\n%v whole\n%v in chunks", name, w.Problems, c.Problems)
	}
	if w.Charset != c.Charset || w.decoder != c.decoder || w.RawStart != c.RawStart || w.RawEnd != c.RawEnd {
		t.Fatalf("%s: charset %q %v, body %d..%d whole; %q %v, %d..%d in chunks", name, w.Charset, w.decoder, w.RawStart, w.RawEnd, c.Charset, c.decoder, c.RawStart, c.RawEnd)
	}
	if !reflect.DeepEqual(w.AttrLinks, c.AttrLinks) || w.Base != c.Base {
		t.Fatalf("%s: attribute links, base\n%+v %q whole\n%+v %q in chunks", name, w.AttrLinks, w.Base, c.AttrLinks, c.Base)
	}
	if c.lazy == nil {
		if !reflect.DeepEqual(w.Spans, c.Spans) {
			t.Fatalf("%s: spans differ", name)
		}
		return
	}
	for k := 1; k < len(c.Spans); k++ {
		if c.Spans[k].Text <= c.Spans[k-1].Text || c.Spans[k].Raw <= c.Spans[k-1].Raw || c.Spans[k].Exact {
			t.Fatalf("%s: chunk spans %+v", name, c.Spans)
		}
	}
	n := len(w.Text)
	try := func(a, b int) {
		wa, wb, wok := w.RawSpan(a, b)
		ca, cb, cok := c.RawSpan(a, b)
		if wa != ca || wb != cb || wok != cok {
			t.Fatalf("%s: RawSpan(%d, %d) = %d %d %v whole, %d %d %v in chunks\nspans %+v\nchunks %+v", name, a, b, wa, wb, wok, ca, cb, cok, w.Spans, c.Spans)
		}
		wd, we, wok := w.DecodedSpan(a, b)
		cd, ce, cok := c.DecodedSpan(a, b)
		if wd != cd || we != ce || wok != cok {
			t.Fatalf("%s: DecodedSpan(%d, %d) = %d %d %v whole, %d %d %v in chunks", name, a, b, wd, we, wok, cd, ce, cok)
		}
		if wc, cc := w.AppendCuts(nil, a, b), c.AppendCuts(nil, a, b); !slices.Equal(wc, cc) {
			t.Fatalf("%s: AppendCuts(%d, %d) = %v whole, %v in chunks", name, a, b, wc, cc)
		}
		wp, wok := w.AppendRawPieces(nil, a, b)
		cp, cok := c.AppendRawPieces(nil, a, b)
		if !reflect.DeepEqual(wp, cp) || wok != cok {
			t.Fatalf("%s: AppendRawPieces(%d, %d) = %v %v whole, %v %v in chunks", name, a, b, wp, wok, cp, cok)
		}
	}
	for a := -1; a <= n+1; a++ {
		if wr, cr := w.RawOffset(a), c.RawOffset(a); wr != cr {
			t.Fatalf("%s: RawOffset(%d) = %d whole, %d in chunks", name, a, wr, cr)
		}
		try(a, a)
		try(a, a+1)
	}
	for r := w.RawStart - 2; r <= w.RawEnd+2; r++ {
		wt, wok := w.TextOffset(r)
		ct, cok := c.TextOffset(r)
		if wt != ct || wok != cok {
			t.Fatalf("%s: TextOffset(%d) = %d %v whole, %d %v in chunks\nspans %+v\nchunks %+v\ntext %d, limit %d, marks %+v", name, r, wt, wok, ct, cok, w.Spans, c.Spans, n, c.lazy.limit, c.lazy.marks)
		}
	}
	// lines, words, each chunk's start and the bytes around it, at random
	for i, line := range lines(w.Text) {
		try(i, i+len(line))
		try(i, i+len(line)-1)
	}
	var at []int
	for _, s := range c.Spans {
		for d := -3; d <= 3; d++ {
			at = append(at, s.Text+d)
		}
	}
	slices.Sort(at)
	cl := 4 * chunkLen(c)
	for i, a := range at {
		for _, b := range at[i:] {
			if b-a >= cl {
				break
			}
			try(a, b)
		}
		if i%7 == 0 {
			try(a, n)
			try(0, a)
		}
	}
	for range 300 {
		a := rng.IntN(n + 1)
		try(a, a+rng.IntN(n-a+1))
	}
	try(0, n)
}

// chunkLen is the text length of a part's longest chunk.
func chunkLen(p *Part) int {
	m := 1
	for k := range p.Spans {
		end := len(p.Text)
		if k+1 < len(p.Spans) {
			end = p.Spans[k+1].Text
		}
		m = max(m, end-p.Spans[k].Text)
	}
	return m
}

// randomTextBody writes a body of random lines for the chunk tests: words,
// links, quoted-printable escapes good and bad, soft breaks, white space
// before line ends, bytes of ISO-8859-1, UTF-8 and neither, long lines,
// CRLF, blank lines and lines of soft breaks only.
func randomTextBody(rng *rand.Rand, n int) []byte {
	var b bytes.Buffer
	pieces := []string{"word ", "http://example.org/a?b=c ", "=E9", "=C3=A9", "=3D", "=\n", "=\r\n", "=ZZ", "=4", "= ", "\xe9", "\xc3\xa9", "\xff\xfe",
		"\xe2\x82", "caf", " ", "\t", "  \n", " \r\n", "\n", "\r\n", "\n\n", "=\n=\n=\n", "=20\n", "\r",
		"=C3=\n=A9", "=E2=82=\r\n=AC", "=C3 = \n=A9", "=E2=\n=\n=82=\n=AC",
		// ISO-2022-JP: shifts to JIS X 0208 and back (to ASCII, to JIS
		// X 0201 Roman), kanji, a shift left open at a line end
		"\x1b$B", "\x1b(B", "\x1b(J", "\x1b$B$3$s\x1b(B", "$3$s", "\x1b$B$3$s\n"}
	for b.Len() < n {
		p := pieces[rng.IntN(len(pieces))]
		if rng.IntN(200) == 0 {
			p = strings.Repeat("longline", 20+rng.IntN(200))
		}
		b.WriteString(p)
	}
	return b.Bytes()
}

// chunkCharsets are the charsets of the chunk tests: those decoded in
// chunks (UTF-8, ASCII, single-byte ones, EBCDIC too, the multibyte ones
// without state), unknown ones, and those that are not, decoded whole:
// GB18030 and the stateful ones.
var chunkCharsets = []string{"utf-8", "us-ascii", "", "iso-8859-1", "windows-1252", "koi8-r", "ibm037", "x-unknown", "no-such-charset", "shift_jis", "iso-8859-15",
	"euc-jp", "euc-kr", "gbk", "gb18030", "big5", "iso-2022-jp", "utf-16"}

// chunkMessage builds a message of one text part (or a multipart with a
// small part first, or an encoded message/rfc822 holding the part).
func chunkMessage(kind int, cte, cs string, body []byte) []byte {
	return chunkMessageType(kind, "text/plain", cte, cs, body)
}

// chunkMessageType is chunkMessage with a part of content type ct
// (parameters may follow: "text/plain; format=flowed").
func chunkMessageType(kind int, ct, cte, cs string, body []byte) []byte {
	var h string
	if cs != "" {
		h = "Content-Type: " + ct + "; charset=" + cs + "\n"
	} else {
		h = "Content-Type: " + ct + "\n"
	}
	if cte != "" {
		h += "Content-Transfer-Encoding: " + cte + "\n"
	}
	top := "From a@example.org Mon Mar  7 10:00:00 1994\nFrom: a@example.org\nMessage-ID: <c@example.org>\nMIME-Version: 1.0\n"
	switch kind % 3 {
	case 1:
		return []byte(top + "Content-Type: multipart/mixed; boundary=\"b\"\n\npreamble\n--b\nContent-Type: text/plain\n\nsmall\n--b\n" + h + "\n" +
			string(bytes.ReplaceAll(body, []byte("\n--b"), []byte("\n-b"))) + "\n--b--\n")
	case 2:
		return []byte(top + "Content-Type: message/rfc822\nContent-Transfer-Encoding: quoted-printable\n\nFrom: b@example.org\n" + h + "\n" +
			string(bytes.ReplaceAll(body, []byte("=\n"), []byte("=3D\n"))) + "\n")
	}
	return []byte(top + h + "\n" + string(bytes.ReplaceAll(body, []byte("\nFrom "), []byte("\n>From "))) + "\n")
}

// TestChunkedSameAsWhole: parts decoded in chunks (of sizes from a byte
// to more than the part, limits cut inside chunks) have the text,
// problems and maps of the same parts decoded whole, for random bodies in
// every transfer encoding and charset decoded in chunks, and with a hole
// in the message.
func TestChunkedSameAsWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	chunked := 0
	for n := range chunkIters {
		body := randomTextBody(rng, 200+rng.IntN(3000))
		cte := []string{"quoted-printable", "8bit", "", "7bit", "binary", "base64"}[rng.IntN(6)]
		cs := chunkCharsets[rng.IntN(len(chunkCharsets))]
		if cte == "base64" && n%3 != 0 {
			// base64 as written by mailers, in lines whose width may
			// carry characters over, with a line end of either kind
			body = base64Wrap(body, []int{76, 57, 60, 4, 1, 73}[rng.IntN(6)], []string{"\n", "\r\n"}[rng.IntN(2)])
			if n%7 == 0 {
				body = append(body, "=\n"...) // a bad character at the end
			}
		}
		msg := chunkMessage(n, cte, cs, body)
		limit := 1 << 20
		if n%2 == 0 {
			limit = rng.IntN(len(body) + 10)
		}
		size := []int{1, 7, 64, 500, 5000}[rng.IntN(5)]
		opts := &Options{MaxPartSize: limit}
		chunked += compareChunked(t, fmt.Sprintf("body %d", n), msg, opts, size, n%5 == 4, rng)
	}
	t.Logf("%d parts decoded in chunks", chunked)
	if chunked < 20 {
		t.Errorf("only %d parts decoded in chunks", chunked)
	}
}

// TestChunkedCorpus: the parts of testdata/ and the shared corpus decoded
// in small chunks are those decoded whole (text, problems, maps).
func TestChunkedCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the corpora twice")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	chunked := 0
	for _, path := range spanInputs(t) {
		if r, err := Open(path, nil); err != nil {
			continue
		} else {
			r.Close()
		}
		for _, size := range []int{16, 300} {
			chunked += compareChunkedOpen(t, path, func(bool) (*Reader, error) { return Open(path, nil) }, size, false, rng)
		}
	}
	t.Logf("%d parts decoded in chunks", chunked)
	if chunked < 10 {
		t.Errorf("only %d parts decoded in chunks", chunked)
	}
}

// FuzzChunked: any body, in a transfer encoding and charset picked by
// the fuzzer, decodes in chunks of any size to what it decodes to whole.
func FuzzChunked(f *testing.F) {
	for _, s := range []string{
		"caf=E9 http://e.org/a=\n/b=3D1 \n",
		"soft=\r\nbreak  \r\ntrail\t=20\r\n=\n",
		"\xe9t\xe9 \xc3\xa9 \x80\xff x\n",
		"a=\nb=\nc=\n=3D=3D=3D\n\n=ZZ bad\n",
		"=\n=\n=\n\n  \nx",
		"   \n\t\n=E9",
		"caf=C3=\n=A9 =E2=82=\r\n=AC\n\xc3\xa9\n",
	} {
		for k := range uint8(6) {
			f.Add(k, uint8(len(s)), uint16(3+len(s)/2), s)
		}
	}
	f.Fuzz(func(t *testing.T, kind, cs uint8, limit uint16, body string) {
		cte := []string{"quoted-printable", "8bit", "", "base64"}[int(kind)%4]
		b := []byte(body)
		if cte == "base64" && kind&32 != 0 {
			b = base64Wrap(b, 1+int(limit)%80, []string{"\n", "\r\n"}[kind>>7])
		}
		msg := chunkMessage(int(kind/4), cte, chunkCharsets[int(cs)%len(chunkCharsets)], b)
		size := 1 + int(cs)%17
		compareChunked(t, "fuzz", msg, &Options{MaxPartSize: int(limit)}, size, kind&64 != 0, rand.New(rand.NewPCG(uint64(len(body)), 1)))
	})
}

// TestChunkedMemory: a long ISO-8859-1 quoted-printable part with an
// escape a line, or 8-bit with an "é" a line, allocates about its text,
// not the text decoded twice and two spans for each escape or character
// converted (72 and 40 MiB for a 16 MiB body when decoded whole; 17 and
// 16 MiB in chunks).
func TestChunkedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a message of 16 MiB")
	}
	var b bytes.Buffer
	for i := 0; b.Len() < 16<<20; i++ {
		if i%50 == 0 {
			fmt.Fprintf(&b, "line %d see http://example.org/page/%d for more\n", i, i)
		} else {
			fmt.Fprintf(&b, "line %d caf=E9 with nothing but words and more words here\n", i)
		}
	}
	for _, cte := range []string{"quoted-printable", "8bit"} {
		body := b.Bytes()
		if cte == "8bit" {
			body = bytes.ReplaceAll(body, []byte("=E9"), []byte("\xe9"))
		}
		msg := chunkMessage(0, cte, "iso-8859-1", body)
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
		text := len(parts[0].Text)
		t.Logf("%s: %.1f MiB allocated for %.1f MiB of body, %.1f MiB of text", cte, float64(alloc)/(1<<20), float64(len(body))/(1<<20), float64(text)/(1<<20))
		if text < len(body)*9/10 || !bytes.Contains(parts[0].Text, []byte("café")) {
			t.Fatalf("%s: %d bytes of text", cte, text)
		}
		// the text (lent the body's length or, 8-bit, the text's), and
		// buffers for a chunk
		if limit := uint64(max(len(body), text)) + 2<<20; alloc > limit {
			t.Errorf("%s: %d bytes allocated to decode %d (at most %d)", cte, alloc, len(body), limit)
		}
		// the map is still there, exactly
		l := bytes.Index(parts[0].Text, []byte("line 200001 caf"))
		want := int64(len("line 200001 caf\xe9"))
		if cte == "quoted-printable" {
			want = int64(len("line 200001 caf=E9"))
		}
		if rs, re, ok := parts[0].RawSpan(l, l+len("line 200001 café")); l < 0 || !ok || re-rs != want {
			t.Errorf("%s: RawSpan of 'line 200000 café' %d..%d %v", cte, rs, re, ok)
		}
		m.Release()
	}
}

// chunkIters is how many random bodies TestChunkedSameAsWhole reads.
var chunkIters = 120

// TestChunkedShift: Part.shift moves the offsets of a part decoded in
// chunks as those of the part decoded whole, the spans it makes when
// asked included, twice over (the shifts compose).
func TestChunkedShift(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for n := range 20 {
		msg := chunkMessage(0, []string{"quoted-printable", "8bit"}[n%2], []string{"iso-8859-1", "utf-8"}[n/2%2], randomTextBody(rng, 2000))
		var w, c *Part
		withChunks(-1, 0, func() { _, w = onePart(t, msg) })
		withChunks(0, 50, func() { _, c = onePart(t, msg) })
		if c.lazy == nil {
			t.Fatalf("body %d: not decoded in chunks", n)
		}
		for _, f := range []func(int64) int64{func(v int64) int64 { return v + 7 }, func(v int64) int64 { return 3 * v }} {
			w.shift(f, true)
			c.shift(f, true)
			comparePart(t, fmt.Sprintf("body %d shifted", n), w, c, rng)
		}
	}
}

// TestChunkedConcurrent: goroutines asking one part decoded in chunks for
// its map at once get the answers of the part decoded whole (the chunks
// decoded last are kept under a lock; go test -race).
func TestChunkedConcurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, msg := range [][]byte{
		chunkMessage(0, "quoted-printable", "iso-8859-1", randomTextBody(rng, 20000)),
		// a stage, and a base64 body: the window's buffers and the part
		// that takes the attribute links found again are shared too
		chunkMessageType(0, "text/html", "base64", "utf-8", base64Lines(bytes.ToValidUTF8(randomHTMLBody(rng, 20000), []byte("\u00e9")))),
	} {
		var w, c *Part
		withChunks(-1, 0, func() { _, w = onePart(t, msg) })
		withChunks(0, 300, func() { _, c = onePart(t, msg) })
		if c.lazy == nil {
			t.Fatal("not decoded in chunks")
		}
		n := len(w.Text)
		done := make(chan string)
		for g := range 4 {
			go func() {
				rng := rand.New(rand.NewPCG(uint64(g), 13))
				for range 2000 {
					a := rng.IntN(n + 1)
					b := a + rng.IntN(min(n-a, 3000)+1)
					wa, wb, wok := w.RawSpan(a, b)
					ca, cb, cok := c.RawSpan(a, b)
					wd, we, wdok := w.DecodedSpan(a, b)
					cd, ce, cdok := c.DecodedSpan(a, b)
					wt, wtok := w.TextOffset(wa)
					ct, ctok := c.TextOffset(wa)
					if w.Reencode() {
						wt, wtok = w.TextOffset(int64(wd)) // base64: a decoded offset
						ct, ctok = c.TextOffset(int64(wd))
					}
					if wa != ca || wb != cb || wok != cok || wd != cd || we != ce || wdok != cdok || wt != ct || wtok != ctok || w.RawOffset(a) != c.RawOffset(a) ||
						!slices.Equal(w.AppendCuts(nil, a, b), c.AppendCuts(nil, a, b)) {
						done <- fmt.Sprintf("range %d..%d: %d %d %v / %d %d %v", a, b, wa, wb, wok, ca, cb, cok)
						return
					}
				}
				done <- ""
			}()
		}
		for range 4 {
			if msg := <-done; msg != "" {
				t.Error(msg)
			}
		}
	}
}

// BenchmarkLongPart walks a message of one 8 MiB ISO-8859-1 part,
// quoted-printable or 8-bit, an escape or an "é" a line, decoded whole
// and in chunks, and maps the start and end of each of its links as a
// scan does (RawOffset, RawSpan): the cost of decoding the chunks a
// second time for the map.
//
//	go test -run XXX -bench LongPart -benchtime 10x ./mailbox
func BenchmarkLongPart(b *testing.B) {
	var body bytes.Buffer
	for i := 0; body.Len() < 8<<20; i++ {
		if i%50 == 0 {
			fmt.Fprintf(&body, "line %d see http://example.org/page/%d for more\n", i, i)
		} else {
			fmt.Fprintf(&body, "line %d caf=E9 with nothing but words and more words here\n", i)
		}
	}
	// the same lines as HTML paragraphs, the link in an attribute
	var html bytes.Buffer
	for line := range bytes.Lines(bytes.ReplaceAll(body.Bytes(), []byte("=E9"), []byte("\xc3\xa9"))) {
		line = bytes.TrimSuffix(line, []byte("\n"))
		if i := bytes.Index(line, []byte("http://")); i >= 0 {
			u := line[i : i+bytes.IndexByte(line[i:], ' ')]
			fmt.Fprintf(&html, "<p>%s<a href=\"%s\">%s</a></p>\n", line[:i], u, u)
		} else {
			fmt.Fprintf(&html, "<p>%s</p>\n", line)
		}
	}
	for _, c := range []struct{ name, ct, cte, cs string }{
		{"quoted-printable", "text/plain", "quoted-printable", "iso-8859-1"},
		{"8bit", "text/plain", "8bit", "iso-8859-1"},
		{"base64", "text/plain", "base64", "iso-8859-1"},
		{"html", "text/html", "8bit", "utf-8"},
		{"html-base64", "text/html", "base64", "utf-8"},
	} {
		src := body.Bytes()
		switch {
		case c.ct == "text/html":
			src = html.Bytes()
		case c.cte != "quoted-printable":
			src = bytes.ReplaceAll(src, []byte("=E9"), []byte("\xe9"))
		}
		if c.cte == "base64" {
			src = base64Lines(src)
		}
		msg := chunkMessageType(0, c.ct, c.cte, c.cs, src)
		for _, way := range []string{"whole", "chunks"} {
			b.Run(c.name+"/"+way, func(b *testing.B) {
				min := chunkMin
				if way == "whole" {
					min = -1
				}
				withChunks(min, chunkSize, func() {
					b.SetBytes(int64(len(msg)))
					b.ReportAllocs()
					for range b.N {
						r, err := NewReader(bytes.NewReader(msg), "in", &Options{DeferParse: true})
						if err != nil {
							b.Fatal(err)
						}
						m, _ := r.Next()
						p := m.Parts()[0]
						if (p.lazy != nil) != (way == "chunks") {
							b.Fatalf("%s: decoded in chunks: %v", way, p.lazy != nil)
						}
						for i := 0; ; {
							k := bytes.Index(p.Text[i:], []byte("http://"))
							if k < 0 {
								break
							}
							i += k
							e := i + bytes.IndexByte(p.Text[i:], ' ')
							p.RawOffset(i)
							p.RawSpan(i, e)
							i = e
						}
						m.Release()
					}
				})
			})
		}
	}
}

// TestChunkedSoftBreakInCharacter: a chunk does not end at a soft line
// break, which may fall inside a character: UTF-8 text whose characters
// are cut by soft breaks is valid in chunks as whole (it was read as
// windows-1252 when a chunk ended inside a character).
func TestChunkedSoftBreakInCharacter(t *testing.T) {
	var b bytes.Buffer
	for i := range 300 {
		fmt.Fprintf(&b, "line %d caf=C3=\n=A9 and =E2=82=\r\n=AC, see http://example.org/%d =\n more\n", i, i)
	}
	rng := rand.New(rand.NewPCG(14, 15))
	for _, size := range []int{1, 5, 30, 100, 1000} {
		msg := chunkMessage(0, "quoted-printable", "utf-8", b.Bytes())
		var c *Part
		withChunks(0, size, func() { _, c = onePart(t, msg) })
		if c.lazy == nil || c.decoder != nil || len(c.Problems) > 0 || !bytes.Contains(c.Text, []byte("café and €")) {
			t.Fatalf("chunks of %d: decoder %v, problems %v, text %.80q", size, c.decoder, c.Problems, c.Text)
		}
		compareChunked(t, fmt.Sprintf("soft breaks, chunks of %d", size), msg, &Options{}, size, false, rng)
	}
}

// TestChunkedISO2022JP: ISO-2022-JP text as written, each line back in
// ASCII at its end as RFC 1468 asks, or left in JIS X 0208 or JIS X 0201
// Roman over its line feed as broken mailers write it (x/text's decoder
// is back in ASCII at a line feed), or with eight-bit bytes before its
// line feed, is decoded in chunks, to what it decodes to whole. (Where a
// chunk may end, jisClean, is held by TestChunkedSameAsWhole's random
// bodies with shifts among bytes the decoder asks more input for: a
// chunk ended after any line feed fails there.)
func TestChunkedISO2022JP(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	enc := japanese.ISO2022JP.NewEncoder()
	for n := range 40 {
		var b bytes.Buffer
		for i := 0; b.Len() < 3000; i++ {
			line, err := enc.String(fmt.Sprintf("see %d 日本語のテキスト http://example.jp/~u/%d 終わり", i, i))
			if err != nil {
				t.Fatal(err)
			}
			switch rng.IntN(6) {
			case 0: // JIS X 0208 left open: the shift back to ASCII is missing
				line = strings.TrimSuffix(line, "\x1b(B")
			case 1: // JIS X 0201 Roman left open
				line += "\x1b(J\\~"
			case 2: // eight-bit bytes (UTF-8) before the line feed
				line += "\xe2\x82\xc3\xa9="
			}
			b.WriteString(line + "\n")
		}
		msg := chunkMessage(0, "8bit", "iso-2022-jp", b.Bytes())
		if c := compareChunked(t, fmt.Sprintf("body %d", n), msg, &Options{MaxPartSize: 1 << 20}, 1+rng.IntN(300), n%4 == 3, rng); c != 1 {
			t.Fatalf("body %d: %d parts decoded in chunks, want 1", n, c)
		}
	}
}
