package rewrite

import (
	"slices"
	"strings"
	"testing"
)

func TestBreakWrapped(t *testing.T) {
	tests := []struct {
		u            string
		first, width int
		want         []string
	}{
		{"http://a.example/", 72, 72, []string{"<URL:http://a.example/>"}},
		{"ftp://ds.internic.net/rfc/rfc1738.txt", 20, 20,
			[]string{"<URL:ftp://ds.", "internic.net/rfc/", "rfc1738.txt>"}},
		// never after "-", never inside %2D
		{"http://example.org/a-b-c-d-e-f%2Dg", 24, 12,
			[]string{"<URL:http://example.org/", "a-b-c-d", "-e-f%2Dg>"}},
		{"http://example.org/x%2Dy", 26, 10, []string{"<URL:http://example.", "org/x%2Dy>"}},
		// never inside the scheme or before its "://" (or ":")
		{"http://x.example/ok2", 8, 72, []string{"<URL:http://", "x.example/ok2>"}},
		{"mailto:someone@example.org", 8, 72, []string{"<URL:mailto:", "someone@example.org>"}},
		{"x-y+z.1://example.org/abcdefgh", 10, 72, []string{"<URL:x-y+z.1://", "example.org/abcdefgh>"}},
		// no lone tail of fewer than MinWrapTail bytes: not "a>"
		{"http://example.org/a", 24, 72, []string{"<URL:http://", "example.org/a>"}},
		{"http://example.org/abcdefghij", 33, 72, []string{"<URL:http://example.org/", "abcdefghij>"}},
		// a run of hyphens longer than the width is left whole
		{"http://e.org/------x", 13, 8, []string{"<URL:http://", "e.org/", "------x>"}},
		{"http://e.org/a--------x", 13, 8, []string{"<URL:http://", "e.org/", "a", "--------x>"}},
	}
	for _, tt := range tests {
		got := BreakWrapped(tt.u, tt.first, tt.width)
		if !slices.Equal(got, tt.want) {
			t.Errorf("BreakWrapped(%q, %d, %d)\ngot  %q\nwant %q", tt.u, tt.first, tt.width, got, tt.want)
		}
	}
}

func FuzzBreakWrapped(f *testing.F) {
	f.Add("http://example.org/a-b-c-d-e-f%2Dg", 20, 10)
	f.Add("ftp://ds.internic.net/rfc/rfc1738.txt", 8, 8)
	f.Add("http://127.0.0.1:18081/ok2", 8, 72)
	f.Fuzz(func(t *testing.T, u string, first, width int) {
		first, width = first%200, width%200
		lines := BreakWrapped(u, first, width)
		if strings.Join(lines, "") != Wrapped(u) {
			t.Fatalf("BreakWrapped(%q) = %q does not join back", u, lines)
		}
		for i, l := range lines[:len(lines)-1] {
			if strings.HasSuffix(l, "-") {
				t.Fatalf("BreakWrapped(%q): line %d %q ends in a hyphen", u, i, l)
			}
			if j := strings.LastIndexByte(l, '%'); j >= 0 && j >= len(l)-2 {
				t.Fatalf("BreakWrapped(%q): line %d %q cuts an escape", u, i, l)
			}
			if l == "" {
				t.Fatalf("BreakWrapped(%q): empty line", u)
			}
		}
		if len(lines) > 1 {
			if n := len("<URL:") + schemeLen(u); len(lines[0]) < n {
				t.Fatalf("BreakWrapped(%q): first line %q cuts the scheme", u, lines[0])
			}
			if l := lines[len(lines)-1]; len(l) < MinWrapTail {
				t.Fatalf("BreakWrapped(%q): last line %q shorter than %d", u, l, MinWrapTail)
			}
		}
	})
}
