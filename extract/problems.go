package extract

import (
	"errors"
	"fmt"

	"github.com/linkscan/linkscan/uri"
)

// Extraction problems, as Link.Problems prints them.
const (
	ProblemUnterminated = "unterminated wrapper"
	ProblemHyphenWrap   = "hyphen at a line break inside a delimiter: it may or may not belong (RFC 3986 Appendix C)"
	ProblemTooLong      = "link longer than the limit; cut"
	ProblemDefanged     = "defanged link read as a link (Options.Refang)"
	ProblemGatewayCut   = "security gateway link without its end marker: probably cut"
	ProblemQPDebris     = "quoted-printable escapes or soft line breaks in the link: the text was not decoded"
)

// The extraction problems of Link.Errors. Problems of the URL itself are
// *URLProblem values; errors.Is tells the kinds apart.
var (
	ErrUnterminated = errors.New(ProblemUnterminated) // <URL:..., <... or "... without its closer
	ErrHyphenWrap   = errors.New(ProblemHyphenWrap)   // "-" at a line break inside a delimiter
	ErrTooLong      = errors.New(ProblemTooLong)      // cut at Options.MaxLinkLength
	ErrDefanged     = errors.New(ProblemDefanged)     // hxxp:// or [.] read back as http:// and "."
	ErrGatewayCut   = errors.New(ProblemGatewayCut)   // Safe Links, URL Defense without their end marker
	ErrQPDebris     = errors.New(ProblemQPDebris)     // "=3D", or a soft line break joined, in text read as plain
)

// URLProblem is a problem that package uri found in a link's canonical
// form: Err is one of uri.Problems, whose Err is one of uri's Err values.
// It prints as "<problem> (offset N)", N being the offset in the URL that
// was canonicalized (with "http://" or "mailto:" before an abbreviated
// link, a bare domain or an e-mail address).
type URLProblem struct {
	Err *uri.Error
}

func (p *URLProblem) Error() string { return fmt.Sprintf("%v (offset %d)", p.Err.Err, p.Err.Offset) }

// Unwrap returns the uri.Error, so that errors.Is(err, uri.ErrX) and
// errors.As(err, **uri.Error) see through it.
func (p *URLProblem) Unwrap() error { return p.Err }

// addProblem records err in the link, in both of its forms.
func (l *Link) addProblem(err error) {
	l.Errors = append(l.Errors, err)
	l.Problems = append(l.Problems, err.Error())
}
