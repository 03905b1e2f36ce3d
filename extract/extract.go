// Package extract finds links in decoded text the way a careful human
// reader does, including the forms that 1990s mail and news wrapped,
// quoted and broke across lines.
//
// It recognizes, in order of precedence:
//
//   - RFC 1738 wrappers, <URL:...>: whitespace inside is ignored, across
//     line breaks and indentation (RFC 1738 Appendix, "Recommendations for
//     URLs in Context");
//   - delimited URLs, <scheme:...> and "scheme:..." (RFC 3986 Appendix C),
//     also when a mailer split them mid-word across lines;
//   - bare URLs: scheme:// for any syntactically valid scheme, and the
//     opaque forms of the schemes listed in schemes.txt (mailto:, news:,
//     mid:, cid:, urn:, tel: ...);
//   - abbreviated links, www.example.org and ftp.example.org;
//   - e-mail addresses, when Options.Emails is set.
//
// A delimited URL continues on the next line only when that line carries
// the same quote prefix ("> ", "> > ", ">>", "| ", a diff's "< " or "> ",
// or the line-number gutter of a viewer such as "  679. ") and holds a
// single whitespace-free token before the closing delimiter; a blank line,
// another prefix or more than MaxJoinLines lines end the attempt. A bare
// URL that runs to the end of a long line is joined with the start of the
// next line only on strong evidence, and then marked Heuristic.
//
// The Scanner reads an io.Reader in a bounded buffer and never holds more
// than MaxJoinLines+1 lines; see Options for the limits. It knows nothing
// of MIME or files: offsets, lines and columns are those of the text it
// is given.
package extract

import "strings"

// Form says how a link was written.
type Form string

// The forms of link.
const (
	FormWrapper Form = "url-wrapper" // <URL:...>
	FormAngle   Form = "angle"       // <scheme:...>
	FormQuoted  Form = "quoted"      // "scheme:..."
	FormBare    Form = "bare"        // scheme:... in running text
	FormAbbrev  Form = "abbrev"      // www.example.org, ftp.example.org
	FormEmail   Form = "email"       // user@example.org (Options.Emails)
)

// Link is one link found in the text.
type Link struct {
	// URL is the link as written, with the wrapper, the whitespace and
	// line breaks inserted by wrapping, and quote prefixes removed. It is
	// not canonicalized: abbreviated links and e-mail addresses have no
	// scheme here.
	URL       string
	Canonical string // canonical form (package uri), "" if none could be made
	Scheme    string // lower-case scheme of Canonical
	Form      Form
	Joined    bool     // the link crossed a line break
	Heuristic bool     // joined across a line break by the mailer-wrap rule
	Valid     bool     // Canonical parsed without problems
	Problems  []string // extraction and URL problems, in that order

	// Start and End are byte offsets of the link's text in the input
	// (without its delimiters, with any line breaks and prefixes it
	// crossed). Line and Column locate Start: 1-based, Column counted in
	// characters.
	Start, End   int64
	Line, Column int
}

// Limits and switches. The zero value is the default.
type Options struct {
	// Emails reports bare e-mail addresses as mailto: links.
	Emails bool
	// NoHeuristic turns off joining bare URLs across mailer wraps.
	NoHeuristic bool
	// MaxLineLength is the longest line handled as one line (default
	// 64 KiB). A longer line is scanned in pieces of this size; a link
	// that spans pieces is joined without being marked Joined, over
	// MaxJoinLines further pieces at most.
	MaxLineLength int
	// MaxJoinLines is how many lines a delimited link may continue over
	// (default 8).
	MaxJoinLines int
	// MaxLinkLength is the longest link reported (default 8 KiB); a
	// longer candidate is cut there and gets a problem.
	MaxLinkLength int
}

func (o *Options) withDefaults() Options {
	var r Options
	if o != nil {
		r = *o
	}
	if r.MaxLineLength <= 0 {
		r.MaxLineLength = 64 << 10
	}
	if r.MaxJoinLines <= 0 {
		r.MaxJoinLines = 8
	}
	if r.MaxLinkLength <= 0 {
		r.MaxLinkLength = 8 << 10
	}
	return r
}

//go:generate go run gen_schemes.go

// KnownScheme reports whether name (lower case) is a scheme of the IANA
// registry's permanent list or of the 1994 drafts, or an experimental
// "x-" scheme, and returns its description.
func KnownScheme(name string) (string, bool) {
	if strings.HasPrefix(name, "x-") && len(name) > 2 {
		return "experimental", true
	}
	d, ok := knownSchemes[name]
	return d, ok
}

// Extraction problems.
const (
	ProblemUnterminated = "unterminated wrapper"
	ProblemHyphenWrap   = "hyphen at a line break inside a delimiter: it may or may not belong (RFC 3986 Appendix C)"
	ProblemTooLong      = "link longer than the limit; cut"
)
