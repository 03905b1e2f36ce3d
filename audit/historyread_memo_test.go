package audit

import (
	"fmt"
	"testing"
)

// TestHistoryReaderMemoBounded: the URLs Archived remembers are bounded
// by their number and by the copies they hold together (a link may have
// up to maxCopies), so a long run's memory stays bounded.
func TestHistoryReaderMemoBounded(t *testing.T) {
	h := &HistoryReader{known: map[string]known{}}
	many := make([]Capture, maxCopies)
	for i := range 3 * maxKnownCopies / maxCopies {
		h.remember(fmt.Sprintf("http://x.example/%d", i), known{status: "dead", copies: many})
		if h.knownCopies > maxKnownCopies || h.knownCopies != len(h.known)*maxCopies {
			t.Fatalf("after %d: %d URLs holding %d copies (bound %d)", i+1, len(h.known), h.knownCopies, maxKnownCopies)
		}
	}
	for i := range 3 * maxKnown {
		h.remember(fmt.Sprintf("http://y.example/%d", i), known{status: "ok"})
		if len(h.known) > maxKnown {
			t.Fatalf("after %d: %d URLs (bound %d)", i+1, len(h.known), maxKnown)
		}
	}
}
