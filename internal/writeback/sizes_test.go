package writeback

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestQuoteNewFromLines(t *testing.T) {
	tests := []struct{ old, out, want string }{
		{"a\nb\n", "a\nb\n", "a\nb\n"},
		{"a\nFrom here\n", "a\nFrom here\n", "a\nFrom here\n"},                                     // kept as it was
		{"a\n<URL:x\n y>\n", "a\n<URL:x\nFrom y>\n", "a\n<URL:x\n>From y>\n"},                      // a new one quoted
		{"From a\n", "From a\nFrom b\r\nFrom a\n", "From a\n>From b\r\n>From a\n"},                 // one of two kept
		{"x\n", "From x", ">From x"},                                                               // no line ending
		{"a\nFrom here <http://a/>\n", "a\nFrom here <http://b/>\n", "a\nFrom here <http://b/>\n"}, // a link changed in one: kept
	}
	for _, tc := range tests {
		if got := string(QuoteNewFromLines([]byte(tc.old), []byte(tc.out))); got != tc.want {
			t.Errorf("QuoteNewFromLines(%q, %q) = %q, want %q", tc.old, tc.out, got, tc.want)
		}
	}
}

// TestMaildirSized: ,S= grows by the change of size, ,W= becomes the
// virtual size counted from the new bytes, every other byte of the name
// stays; a name whose size fields cannot be read is left whole (ok false).
func TestMaildirSized(t *testing.T) {
	lf := "See <ftp://x/>.\n"     // 16 bytes, one LF: virtual size 17
	crlf := "See <ftp://x/>.\r\n" // 17 bytes, virtual size 17
	tests := []struct {
		name         string
		delta, vsize int64
		want         string
		ok           bool
	}{
		{"d/cur/1.2.h,S=100:2,S", 5, -1, "d/cur/1.2.h,S=105:2,S", true},
		{"d/cur/1.2.h,S=100:2,S", 5, 300, "d/cur/1.2.h,S=105:2,S", true}, // no W=: no vsize used
		{"d/new/1.2.h", 5, -1, "d/new/1.2.h", true},
		// S and W, LF message: W is the count, not the old W plus delta
		{"d/cur/1.2.h,S=100,W=104:2,", -3, virtualSize([]byte(lf)), "d/cur/1.2.h,S=97,W=17:2,", true},
		// CRLF message: W = S
		{"d/cur/1.2.h,S=17,W=17:2,FS", 0, virtualSize([]byte(crlf)), "d/cur/1.2.h,S=17,W=17:2,FS", true},
		{"d/cur/1.2.h,S=10,W=10:2,FS", 7, virtualSize([]byte(crlf)), "d/cur/1.2.h,S=17,W=17:2,FS", true},
		// W only
		{"d/cur/1.2.h,W=5:2,S", 3, 1234, "d/cur/1.2.h,W=1234:2,S", true},
		{"d/cur/1.2.h,W=5:2,S", 3, -1, "d/cur/1.2.h,W=5:2,S", true}, // not counted: left
		// W before S, other fields and flags kept byte for byte
		{"1.M2P3.h,W=20,X=a=b,S=18,,Z:2,a,S", 2, 23, "1.M2P3.h,W=23,X=a=b,S=20,,Z:2,a,S", true},
		// no info part (new/): the whole base holds the fields
		{"d/new/1.2.h,S=100,W=103", 1, 105, "d/new/1.2.h,S=101,W=105", true},
		// fields are read before ':' only; the directory is never touched
		{"d/cur/1.2.h:2,S=5", 1, 9, "d/cur/1.2.h:2,S=5", true},
		{"d,S=5/cur/1.2.h,S=5", 1, -1, "d,S=5/cur/1.2.h,S=6", true},
		{"S=5:2,", 1, 9, "S=5:2,", true},             // the unique part itself is no field
		{"1.2.h,s=5:2,", 1, 9, "1.2.h,s=5:2,", true}, // lower case: not Dovecot's
		{"1.2.h,SIZE=5:2,", 1, 9, "1.2.h,SIZE=5:2,", true},
		// leading zeros: kept where the value stays, dropped where it changes
		{"1.2.h,S=007,W=010:2,", 0, 10, "1.2.h,S=007,W=010:2,", true},
		{"1.2.h,S=007,W=010:2,", 5, 13, "1.2.h,S=12,W=13:2,", true},
		// not numbers: the name is left whole
		{"d/cur/1.2.h,S=abc,W=104:2,S", 5, 109, "d/cur/1.2.h,S=abc,W=104:2,S", false},
		{"d/cur/1.2.h,S=100,W=1e3:2,S", 5, 109, "d/cur/1.2.h,S=100,W=1e3:2,S", false},
		{"d/cur/1.2.h,S=12x:2,S", 5, -1, "d/cur/1.2.h,S=12x:2,S", false},
		{"d/cur/1.2.h,S=:2,S", 5, -1, "d/cur/1.2.h,S=:2,S", false},
		{"d/cur/1.2.h,S=+5:2,S", 5, -1, "d/cur/1.2.h,S=+5:2,S", false},
		{"d/cur/1.2.h,S=-5:2,S", 5, -1, "d/cur/1.2.h,S=-5:2,S", false},
		{"d/cur/1.2.h,W= 5:2,S", 5, 9, "d/cur/1.2.h,W= 5:2,S", false},
		{"d/cur/1.2.h,S=99999999999999999999:2,S", 5, -1, "d/cur/1.2.h,S=99999999999999999999:2,S", false},
		{"d/cur/1.2.h,S=5;2,S", 5, -1, "d/cur/1.2.h,S=5;2,S", false}, // another info separator: not read
		// twice, or an S= the file cannot have: not this file's
		{"d/cur/1.2.h,S=5,S=5:2,", 1, -1, "d/cur/1.2.h,S=5,S=5:2,", false},
		{"d/cur/1.2.h,W=5,W=6:2,", 1, 9, "d/cur/1.2.h,W=5,W=6:2,", false},
		{"d/cur/1.2.h,S=5,W=5:2,", -6, 0, "d/cur/1.2.h,S=5,W=5:2,", false},
	}
	for _, tc := range tests {
		got, ok := MaildirSized(tc.name, tc.delta, tc.vsize)
		if got != tc.want || ok != tc.ok {
			t.Errorf("MaildirSized(%q, %d, %d) = %q, %v, want %q, %v", tc.name, tc.delta, tc.vsize, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzMaildirSized: a name left (ok false) is the name itself; otherwise
// only the digits of ,S= and ,W= change, the new W= is vsize, and no
// change (delta 0, vsize not counted) gives the name back.
func FuzzMaildirSized(f *testing.F) {
	f.Add("d/cur/1.2.h,S=100,W=104:2,S", int64(5), int64(109))
	f.Add("1.M2P3.h,W=20,X=a=b,S=18,,Z:2,a,S", int64(-2), int64(0))
	f.Add("d/cur/1.2.h,S=12x:2,S", int64(1), int64(-1))
	sizes := regexp.MustCompile(`,([SW])=[0-9]+`)
	f.Fuzz(func(t *testing.T, name string, delta, vsize int64) {
		if delta > 1<<50 || delta < -1<<50 {
			delta %= 1 << 50 // no overflow of S+delta: sizes are below 2^63
		}
		got, ok := MaildirSized(name, delta, vsize)
		if !ok {
			if got != name {
				t.Fatalf("not ok but changed: %q -> %q", name, got)
			}
			return
		}
		if a, b := sizes.ReplaceAllString(name, ",$1="), sizes.ReplaceAllString(got, ",$1="); a != b {
			t.Fatalf("%q -> %q: more than the sizes changed", name, got)
		}
		dir, base := filepath.Split(name)
		if !strings.HasPrefix(got, dir) {
			t.Fatalf("%q -> %q: the directory changed", name, got)
		}
		if vsize >= 0 && strings.Contains(maildirBase(base), ",W=") && !strings.Contains(got, fmt.Sprintf(",W=%d", vsize)) {
			t.Fatalf("%q -> %q: no W=%d", name, got, vsize)
		}
		if same, ok := MaildirSized(name, 0, -1); same != name || !ok {
			t.Fatalf("%q -> %q, %v with no change", name, same, ok)
		}
	})
}

// TestVsizeWriter: the counts of any bytes written in pieces of any size
// (a CR LF pair split between two writes included) are their size and
// virtual size, and the bytes pass unchanged.
func TestVsizeWriter(t *testing.T) {
	for _, in := range []string{"", "\n", "\r", "\r\n", "\n\r", "\n\n\r\r\n", "a\r\nb\nc\rd\r\r\n\n", "From: x\r\n\r\nbody\n"} {
		for size := 1; size <= len(in)+1; size++ {
			checkVsizeWriter(t, []byte(in), size)
		}
	}
}

func checkVsizeWriter(t *testing.T, in []byte, size int) {
	t.Helper()
	var buf bytes.Buffer
	v := &vsizeWriter{w: &buf}
	for p := in; len(p) > 0; {
		k := min(size, len(p))
		if n, err := v.Write(p[:k]); n != k || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
		p = p[k:]
	}
	if !bytes.Equal(buf.Bytes(), in) {
		t.Fatalf("%q in pieces of %d: passed %q", in, size, buf.Bytes())
	}
	if v.n != int64(len(in)) || v.vsize() != virtualSize(in) {
		t.Fatalf("%q in pieces of %d: size %d, vsize %d, want %d, %d", in, size, v.n, v.vsize(), len(in), virtualSize(in))
	}
}

// TestVsizeWriterShort: a writer that takes fewer bytes than given: only
// those are counted.
func TestVsizeWriterShort(t *testing.T) {
	v := &vsizeWriter{w: &failWriter{w: io.Discard, n: 3}}
	n, err := v.Write([]byte("a\n\nb\n"))
	if n != 3 || err == nil || v.n != 3 || v.vsize() != 5 {
		t.Fatalf("n %d, err %v, size %d, vsize %d", n, err, v.n, v.vsize())
	}
}

func FuzzVsizeWriter(f *testing.F) {
	f.Add([]byte("a\r\nb\nc\rd\r\r\n\n"), 2)
	f.Add([]byte("\r\n"), 1)
	f.Fuzz(func(t *testing.T, in []byte, size int) {
		if size <= 0 || size > len(in)+1 {
			size = len(in) + 1
		}
		checkVsizeWriter(t, in, size)
	})
}

// FuzzQuoteNewFromLines: the result has out's lines, each as it was or,
// when it begins "From ", with a '>' before it; and when out has more
// such lines than old, no more lines begin "From " than old had of each.
func FuzzQuoteNewFromLines(f *testing.F) {
	f.Add([]byte("a\nFrom x\n"), []byte("a\nFrom x\nFrom y\n"))
	f.Add([]byte(""), []byte("From "))
	f.Fuzz(func(t *testing.T, old, out []byte) {
		got := splitLines(QuoteNewFromLines(old, out))
		want := splitLines(out)
		if len(got) != len(want) {
			t.Fatalf("%d lines, want %d", len(got), len(want))
		}
		from := map[string]int{}
		forEachLine(old, func(l []byte) {
			if bytes.HasPrefix(l, []byte("From ")) {
				from[string(l)]++
			}
		})
		nOld, nOut := 0, 0
		for _, n := range from {
			nOld += n
		}
		for _, l := range want {
			if bytes.HasPrefix(l, []byte("From ")) {
				nOut++
			}
		}
		for i, l := range got {
			switch {
			case bytes.Equal(l, want[i]):
				if bytes.HasPrefix(l, []byte("From ")) && nOut > nOld {
					if from[string(l)] == 0 {
						t.Fatalf("unquoted new From line %q", l)
					}
					from[string(l)]--
				}
			case l[0] == '>' && bytes.Equal(l[1:], want[i]) && bytes.HasPrefix(want[i], []byte("From ")):
			default:
				t.Fatalf("line %d: %q, want %q", i, l, want[i])
			}
		}
	})
}

// virtualSize is Dovecot's virtual size of b, counted here on its own:
// every line feed not preceded by a carriage return counts two bytes.
func virtualSize(b []byte) int64 {
	n := int64(len(b))
	for i, c := range b {
		if c == '\n' && (i == 0 || b[i-1] != '\r') {
			n++
		}
	}
	return n
}

// failWriter fails every write after n bytes.
type failWriter struct {
	w io.Writer
	n int
}

var errInjected = errors.New("injected write failure")

func (f *failWriter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k, _ := f.w.Write(p[:f.n])
		f.n = 0
		return k, errInjected
	}
	f.n -= len(p)
	return f.w.Write(p)
}

// splitLines splits b after each line feed, counted on its own.
func splitLines(b []byte) [][]byte {
	var ls [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n') + 1
		if i == 0 {
			i = len(b)
		}
		ls = append(ls, b[:i])
		b = b[i:]
	}
	return ls
}
