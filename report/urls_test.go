package report

import (
	"bytes"
	"testing"
)

// TestURLs: one url field a line, in the order written, escaped; under
// Unique each canonical URL once, by its first record.
func TestURLs(t *testing.T) {
	recs := []Record{
		{URL: "HTTP://A.org/x", Canonical: "http://a.org/x"},
		{URL: "http://b.org/\x1b[2J", Canonical: "http://b.org/%1B%5B2J"},
		{URL: "http://a.org/x", Canonical: "http://a.org/x"},
	}
	for _, tt := range []struct {
		unique bool
		want   string
	}{
		{false, "HTTP://A.org/x\nhttp://b.org/\\x1b[2J\nhttp://a.org/x\n"},
		{true, "HTTP://A.org/x\nhttp://b.org/\\x1b[2J\n"},
	} {
		var b bytes.Buffer
		w, err := NewWriter(&b, URLs)
		if err != nil {
			t.Fatal(err)
		}
		if tt.unique {
			w = Unique(w)
		}
		for i := range recs {
			if err := w.Write(&recs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if b.String() != tt.want {
			t.Errorf("unique %v:\ngot  %q\nwant %q", tt.unique, b.String(), tt.want)
		}
	}
}
