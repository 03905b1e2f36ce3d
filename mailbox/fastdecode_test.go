package mailbox

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// FuzzInvalidAt holds invalidAt to the first byte utf8.DecodeRune takes
// for an error (and -1 to utf8.Valid).
func FuzzInvalidAt(f *testing.F) {
	for _, s := range []string{"", "plain ascii text!", "caf\xc3\xa9 \xc2\xa0x", "\xc2", "\xc0\x80", "\xe2\x82\xac\xf0\x9f\x98\x80",
		"\xed\xa0\x80", "abcdefg\xc3", "abcdefgh\xff", "\xef\xbf\xbd\xc3\x28"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want := -1
		for i := 0; i < len(b); {
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				want = i
				break
			}
			i += n
		}
		if got := invalidAt(b); got != want || (got < 0) != utf8.Valid(b) {
			t.Errorf("invalidAt(%q) = %d, want %d", b, got, want)
		}
	})
}

// FuzzFastDecode holds decodeQP and convertTable to the bytes decodeBody
// and convert give with their maps, and decodeQP's bad line to
// decodeBody's.
func FuzzFastDecode(f *testing.F) {
	for _, s := range []string{"caf=E9 =C2=A0x\n", "a=\nb=ZZ c= \r\nd=4\n", "=E2=82=AC  \n\t\n=", "\xe9\xff plain\r\n"} {
		f.Add([]byte(s), 5)
	}
	tab := byteTableOf(charmap.Windows1252)
	f.Fuzz(func(t *testing.T, body []byte, limit int) {
		limit %= 64
		want, spans, _, bad, _ := decodeBody(nil, nil, nil, "quoted-printable", body, 100, limit)
		got, badAt := decodeQP(nil, body, 100, limit)
		wantBad := int64(-1)
		if de, ok := bad.(*decodeError); ok {
			wantBad = de.at
		}
		if !bytes.Equal(got, want) || badAt != wantBad {
			t.Fatalf("decodeQP(%q) = %q %d, want %q %d", body, got, badAt, want, wantBad)
		}
		text, _ := convert(nil, nil, charmap.Windows1252, want, spans)
		if ct := convertTable(nil, tab, want); !bytes.Equal(ct, text) {
			t.Fatalf("convertTable(%q) = %q, want %q", want, ct, text)
		}
	})
}
