package mailbox

import "testing"

// TestInternedNames: the constant tag and attribute names are the names
// themselves, and a name not among them is copied as it is.
func TestInternedNames(t *testing.T) {
	for _, tag := range []string{"a", "img", "link", "area", "base", "form", "iframe", "frame", "script", "blockquote", "q",
		"body", "table", "td", "th", "tr", "input", "source", "video", "audio", "embed", "object", "x-custom", "", "aa"} {
		if got := tagString([]byte(tag)); got != tag {
			t.Errorf("tagString(%q) = %q", tag, got)
		}
	}
	for _, a := range []string{"href", "src", "cite", "background", "action", "longdesc"} {
		if got := linkAttr([]byte(a)); got != a || !isLinkAttr([]byte(a)) {
			t.Errorf("linkAttr(%q) = %q", a, got)
		}
	}
	for _, a := range []string{"hre", "hrefs", "alt", "", "HREF"} {
		if got := linkAttr([]byte(a)); got != "" || isLinkAttr([]byte(a)) {
			t.Errorf("linkAttr(%q) = %q, want none", a, got)
		}
	}
}
