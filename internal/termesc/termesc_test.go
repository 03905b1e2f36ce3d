package termesc

import (
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"plain ascii, tab\there", "plain ascii, tab\there"},
		{"Zoë ünïcode 日本", "Zoë ünïcode 日本"},
		{`back\slash`, `back\slash`},
		{"\x1b[2J\x1b]0;owned\x07", `\x1b[2J\x1b]0;owned\x07`},
		{"nul\x00del\x7f", `nul\x00del\x7f`},
		{"line\nfeed\rreturn", `line\nfeed\rreturn`},
		{"c1 \u009b31m csi", `c1 \u009b31m csi`},
		{"raw c1 byte \x9b", `raw c1 byte \x9b`},
		{"latin-1 \xe9t\xe9", `latin-1 \xe9t\xe9`},
		{"bidi \u202egnp.exe", `bidi \u202egnp.exe`},
		{"isolate \u2066x\u2069", `isolate \u2066x\u2069`},
		{"nbsp\u00a0ok", "nbsp\u00a0ok"},
	}
	for _, tt := range tests {
		if got := String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// safe reports whether s holds nothing a terminal acts on.
func safe(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if escapedRune(r) {
			return false
		}
	}
	return true
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"", "a\x1bb", "\xff\xfe", "\u009b", "\u202e", "ok text"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := String(s)
		if !safe(got) {
			t.Fatalf("String(%q) = %q still drives a terminal", s, got)
		}
		if safe(s) && got != s {
			t.Fatalf("String(%q) = %q changed safe text", s, got)
		}
		if !safe(s) && got == s {
			t.Fatalf("String(%q) left unsafe text", s)
		}
	})
}
