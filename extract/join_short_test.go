package extract

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestShorterThan holds shorterThan to utf8.RuneCount around the
// bounds where it stops counting: ASCII, multibyte, invalid bytes.
func TestShorterThan(t *testing.T) {
	units := []string{"a", "é", "€", "𝄞", "\xff", "\xe2\x82"}
	for _, u := range units {
		for _, v := range units {
			for k := 0; k <= 4*minWrapLine+8; k++ {
				s := []byte(strings.Repeat(u, k/2) + strings.Repeat(v, k-k/2))
				for _, n := range []int{1, 2, minWrapLine} {
					if got, want := shorterThan(s, n), utf8.RuneCount(s) < n; got != want {
						t.Fatalf("shorterThan(%q, %d) = %v, want %v", s, n, got, want)
					}
				}
			}
		}
	}
}
