package extract

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// prose is link-free English text of the kind that fills most of a
// mailbox.
var prose = strings.Repeat("The working group met again on Tuesday and agreed, after a long discussion\n"+
	"about escaping rules and the meaning of the reserved set, to publish the\n"+
	"draft as it stands. Comments are welcome; please send them to the list.\n\n", 2000)

func benchScan(b *testing.B, in []byte) { benchScanOpts(b, in, nil) }

func benchScanOpts(b *testing.B, in []byte, opts *Options) {
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	r := bytes.NewReader(in)
	for b.Loop() {
		r.Reset(in)
		sc := NewScanner(r, opts)
		for sc.Scan() {
		}
	}
}

func BenchmarkProse(b *testing.B) { benchScan(b, []byte(prose)) }

// BenchmarkLinkDense scans the seed mail, which has a link every few
// lines, wrapped and quoted ones among them.
func BenchmarkLinkDense(b *testing.B) {
	in, err := os.ReadFile(filepath.Join("..", "testdata", "seed-004.txt"))
	if err != nil {
		b.Fatal(err)
	}
	benchScan(b, in)
}

func BenchmarkManyLinks(b *testing.B) {
	in := strings.Repeat("> see <http://www.example.org/archives/2024/msg00123.html> and\n"+
		"> http://lists.example.net/pipermail/dev/2003-October/000123.html, or\n"+
		"> <URL:ftp://ds.internic.net/rfc/\n>   rfc1738.txt> for the spec.\n", 1000)
	benchScan(b, []byte(in))
}

// BenchmarkProseDomains scans the link-free prose with
// Options.BareDomains, which looks at every dot: the cost of the opt-in
// mode on text without links (against BenchmarkProse).
func BenchmarkProseDomains(b *testing.B) {
	benchScanOpts(b, []byte(prose), &Options{BareDomains: true})
}

// longLine is one line of 4 MiB with a link every 500 bytes or so, as
// the decoded text of a base64 or quoted-printable part without line
// breaks: scanned in pieces of MaxLineLength.
var longLine = func() []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < 4<<20; i++ {
		b.WriteString(strings.Repeat("lorem ipsum dolor sit amet, ", 16))
		b.WriteString("see http://www.example.org/archives/2024/msg00123.html and ")
	}
	b.WriteByte('\n')
	return b.Bytes()
}()

// BenchmarkLongLine scans longLine through a reader (the streaming
// window) and in memory (what package scan does with a decoded part).
func BenchmarkLongLine(b *testing.B) {
	b.Run("reader", func(b *testing.B) { benchScan(b, longLine) })
	b.Run("bytes", func(b *testing.B) {
		b.SetBytes(int64(len(longLine)))
		b.ReportAllocs()
		s := NewBytesScanner(nil, nil)
		for b.Loop() {
			s.ResetBytes(longLine, nil)
			for s.Scan() {
			}
		}
	})
}
