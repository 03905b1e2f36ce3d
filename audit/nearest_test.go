package audit

import (
	"testing"
	"time"
)

// TestNearest: the copy captured nearest a date, the earlier on a tie;
// a copy of unknown time only when there is no other.
func TestNearest(t *testing.T) {
	d := func(y int, m time.Month, dd int) time.Time { return time.Date(y, m, dd, 0, 0, 0, 0, time.UTC) }
	cps := []Capture{
		{URL: "unknown"},
		{URL: "a", Time: d(1996, 1, 1)},
		{URL: "b", Time: d(1996, 1, 11)},
		{URL: "c", Time: d(2001, 1, 1)},
	}
	for _, tc := range []struct {
		cps  []Capture
		date time.Time
		want string
	}{
		{cps, d(1990, 1, 1), "a"},
		{cps, d(1996, 1, 6), "a"}, // a tie: the earlier
		{cps, d(1996, 1, 7), "b"},
		{cps, d(1999, 1, 1), "c"},
		{cps, time.Time{}, "a"},
		{cps[:1], d(1999, 1, 1), "unknown"},
		{[]Capture{cps[3], cps[0]}, d(1990, 1, 1), "c"},
		{nil, d(1999, 1, 1), ""},
	} {
		got := ""
		if cp := nearest(tc.cps, tc.date); cp != nil {
			got = cp.URL
		}
		if got != tc.want {
			t.Errorf("nearest(%v) = %q, want %q", tc.date.Format("2006-01-02"), got, tc.want)
		}
	}
}
