package extract

import "testing"

// TestHosts: hosts that no DNS name or IP literal can be are reported
// with a problem and valid=false.
func TestHosts(t *testing.T) {
	for _, in := range []string{"http://u:p@a@b.example/", "http://.a.example", "https://x.-y.example", "www.a..example", "https://=go.microsoft.com/"} {
		ls := All([]byte(in), nil)
		if len(ls) != 1 || ls[0].Valid || len(ls[0].Problems) == 0 {
			t.Errorf("%q: got %+v, want one link, not valid, with a problem", in, ls)
		}
	}
}
