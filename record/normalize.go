package record

import (
	"fmt"

	"github.com/linkscan/linkscan/uri"
)

// Normalize fills r's canonical form, scheme, host, validity and URL
// problems from one reading of url (uri.Analyze). It is the rule extract
// applies to the links it finds in text, for the links made elsewhere
// (HTML attributes, implicit references): each problem is written
// "PROBLEM (offset N)", as extract.URLProblem writes it, and a URL with no
// canonical form at all gets its one error. scan's
// TestNormalizeAgreesWithExtract holds the two together.
func Normalize(r *Record, url string) {
	a := uri.Analyze(url)
	r.Canonical, r.Scheme, r.Host = a.Canonical, a.Scheme, a.Host
	if a.Canonical == "" {
		r.Valid = false
		if err := a.Err(); err != nil {
			r.Problems = append(r.Problems, err.Error())
		}
		return
	}
	r.Valid = a.Valid()
	for _, p := range a.Problems {
		r.Problems = append(r.Problems, fmt.Sprintf("%v (offset %d)", p.Err, p.Offset))
	}
}
