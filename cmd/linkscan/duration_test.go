package main

import (
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"7d", 7 * 24 * time.Hour, true},
		{"1.5d", 36 * time.Hour, true},
		{"1d12h", 36 * time.Hour, true},
		{"0d", 0, true},
		{"10s", 10 * time.Second, true},
		{"500ms", 500 * time.Millisecond, true},
		{"0", 0, true},
		{"d", 0, false},
		{"", 0, false},
		{"7days", 0, false},
		{"-1d", 0, false},
		{"1e3d", 0, false},
		{"7d-1h", 0, false},
		{"7x", 0, false},
		{"-1s", 0, false},
	} {
		got, err := parseDuration(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// TestDurationFlagNegative: the flag takes a negative value, so that the
// command says which range it wants; parseDuration alone refuses it.
func TestDurationFlagNegative(t *testing.T) {
	var d durationFlag
	if err := d.Set("-1d12h"); err != nil || time.Duration(d) != -36*time.Hour {
		t.Errorf("Set(-1d12h) = %v, %v; want -36h", time.Duration(d), err)
	}
	if err := d.Set("--1s"); err == nil {
		t.Errorf("Set(--1s) took %v", time.Duration(d))
	}
}
