// Package extract finds links in decoded text the way a careful human
// reader does, including the forms that 1990s mail and news wrapped,
// quoted and broke across lines.
//
// It recognizes, in order of precedence:
//
//   - RFC 1738 wrappers, <URL:...> (and "URL:..."): white space inside is
//     ignored, across line breaks and indentation (RFC 1738 Appendix,
//     "Recommendations for URLs in Context"); any scheme;
//   - delimited URLs, <scheme:...> and "scheme:..." (RFC 3986 Appendix C),
//     also when a mailer split them mid-word across lines; white space
//     inside <...> is ignored;
//   - bare URLs of known schemes (KnownScheme): scheme:// for registered
//     and historic schemes and x- schemes, and the opaque forms of the
//     schemes listed in schemes.txt (mailto:, news:, mid:, cid:, urn:,
//     tel: ...); a common scheme glued to the word before it
//     ("wordhttp://") starts a link too;
//   - abbreviated links, www.example.org and ftp.example.org;
//   - e-mail addresses, when Options.Emails is set;
//   - host names and IP literals without a scheme, when
//     Options.BareDomains is set.
//
// data: URIs are reported only with Options.DataURIs, and defanged
// hxxp:// links only with Options.Refang. A bare URL ends at white space,
// controls, a closing bracket that closes nothing opened inside it, and
// typographic, CJK and full-width punctuation; trailing punctuation is
// trimmed. docs/extract.md lists every rule with examples.
//
// A delimited URL continues on the next line only when that line carries
// the same quote prefix ("> ", "> > ", ">>", "| ", a diff's "< " or "> ",
// or the line-number gutter of a viewer such as "  679. ") and holds a
// single whitespace-free token before the closing delimiter; a blank line,
// another prefix or more than MaxJoinLines lines end the attempt. A bare
// URL that runs to the end of a long line is joined with the start of the
// next line only on strong evidence, never with a separator, a rule, a
// list item, a new link or a new sentence, and then marked Heuristic. A
// security gateway's link (Safe Links, URL Defense v2 and v3) that a
// mailer hard-wrapped is joined over the lines that continue it only up
// to the end marker of the gateway's grammar. Link.Ending says what
// ended each link, and Link.EndProven whether that end is proven rather
// than guessed. A link written in pieces gives the input ranges of its
// characters in Link.Segments.
//
// The Scanner reads an io.Reader in a bounded buffer. A line longer than
// MaxLineLength plus a context of MaxLinkLength+1 KiB is scanned in
// pieces of MaxLineLength, each seen with that context of its line on
// either side: a finder never reads further than that from the
// character that starts it (a scheme's colon, "www.", "@", a dot), since
// the runs of characters it follows around a link (white space, the
// word before " at ", a host name, a quote prefix's indentation) are cut
// at 256 bytes; so the pieces of a line give exactly the links, offsets
// and columns of the whole line, whatever its length. A Scanner over a
// reader holds at most the context and MaxJoinLines+2 lines (or first
// pieces) of MaxLineLength plus the context and a line ending: with the
// defaults 9 KiB + 10 x 73 KiB, about 740 KiB. A Scanner over bytes
// (NewBytesScanner, All) reads them in place and holds no copy. See
// Options for the limits. The Scanner knows nothing of MIME or files:
// offsets, lines and columns are those of the text it is given (columns
// in characters from the line's start).
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
	FormDomain  Form = "domain"      // example.com/path (Options.BareDomains)
)

// Ending says what ended a link, and so whether its extent is proven by
// the way it is written or guessed (Link.EndProven).
type Ending uint8

// The endings of a link.
const (
	// EndUnproven: the end is a guess. A link joined across a line break
	// by the mailer-wrap heuristic (Heuristic) or inside "..." (quotes
	// hold prose as often as links), or a security gateway's link (Safe
	// Links, URL Defense v2 and v3) that lacks its end marker, which a
	// line break or a space most likely cut. The zero value: a Link not
	// made by a Scanner proves nothing.
	EndUnproven Ending = iota
	// EndText: a link written in one piece in running text, ended by white
	// space, a stop character or trimmed punctuation.
	EndText
	// EndDelimiter: the closing delimiter of <URL:...>, <...> or "..."
	// ("..." only for a link on one line).
	EndDelimiter
	// EndWrapper: the end marker of a security gateway's grammar: Safe
	// Links' "reserved=0", URL Defense v2's "&e=", v3's final "$". A
	// gateway link hard-wrapped over several lines is joined only up to
	// its marker.
	EndWrapper
)

var endingNames = [...]string{EndUnproven: "unproven", EndText: "text", EndDelimiter: "delimiter", EndWrapper: "wrapper"}

func (e Ending) String() string {
	if int(e) < len(endingNames) {
		return endingNames[e]
	}
	return "Ending(?)"
}

// Link is one link found in the text.
type Link struct {
	// URL is the link as written, with the wrapper, the whitespace and
	// line breaks inserted by wrapping, and quote prefixes removed. It is
	// not canonicalized: abbreviated links and e-mail addresses have no
	// scheme here.
	URL       string
	Canonical string // canonical form (package uri), "" if none could be made
	Scheme    string // lower-case scheme of Canonical
	Host      string // host of Canonical, as uri.HostOf gives it ("" if none)
	Form      Form
	Joined    bool // the link crossed a line break
	Heuristic bool // joined across a line break by the mailer-wrap rule
	Valid     bool // Canonical parsed without problems
	// Ending says what ended the link: its text (one piece), its
	// delimiter, a gateway's end marker, or a guess (EndUnproven). A
	// writer replaces a link only where EndProven: see there.
	Ending   Ending
	Problems []string // extraction and URL problems, in that order, printed
	// Errors holds the same problems as Problems, in the same order, as
	// errors: ErrUnterminated, ErrHyphenWrap, ErrTooLong, ErrDefanged, or
	// a *URLProblem (or, when no canonical form could be made at all,
	// the error of uri.Canonical). Problems[i] is Errors[i].Error().
	Errors []error

	// Start and End are byte offsets of the link's text in the input
	// (without its delimiters, with any line breaks and prefixes it
	// crossed). Line and Column locate Start: 1-based, Column counted in
	// characters.
	Start, End   int64
	Line, Column int

	// Segments are the byte ranges of the input that hold the URL's own
	// characters, in order, when they are not the one range [Start, End):
	// for a link that crossed lines (without the quote prefixes, the
	// indentation and the line breaks between its pieces), for one with
	// white space ignored inside <URL:...> or <...>, and for one whose
	// closing delimiter stands after white space or on a later line (End
	// is then the closer's offset). The first starts at Start, the last
	// ends at End or before. Concatenating the input at each segment
	// gives URL (see Link.Spans). Nil for a link written in one piece,
	// which is most of them.
	Segments []Segment
}

// EndProven reports whether where the link ends is proven by the way it
// is written, not guessed: by its closing delimiter, by a security
// gateway's end marker, or by the white space or punctuation after a
// link in one piece that is no gateway link. It is false for a join by
// the mailer-wrap heuristic and for a gateway link without its end
// marker (a truncated Safe Links or URL Defense link, whose decoded
// target would be cut short). Rewriting a link that is not proven may
// change words that are not the link's, or write a truncated target.
func (l *Link) EndProven() bool { return l.Ending != EndUnproven }

// Segment is a range [Start, End) of byte offsets in the input.
type Segment struct {
	Start, End int64
}

// Spans returns the segments of the link's URL in the input: Segments,
// or the one range [Start, End) when Segments is nil. One exception:
// the white space of a quoted e-mail local part ("foo bar"@example.org)
// is written %20 in URL, so its URL is the segments' text with white
// space escaped.
func (l *Link) Spans() []Segment {
	if l.Segments != nil {
		return l.Segments
	}
	return []Segment{{l.Start, l.End}}
}

// Limits and switches. The zero value is the default. For every limit,
// 0 means the default and a negative value means no limit (the rule of
// package mailbox too); without limits a Scanner over a reader may hold
// all of its input.
type Options struct {
	// Emails reports bare e-mail addresses as mailto: links.
	Emails bool
	// NoHeuristic turns off joining bare URLs across mailer wraps.
	NoHeuristic bool
	// DataURIs reports data: URIs, which are not reported by default:
	// they are inline content (images in HTML mail), not links.
	DataURIs bool
	// Refang reads the defanged schemes hxxp:// and hxxps:// as http://
	// and https://, and "[.]" in such a URL as ".". The link keeps its
	// URL as written, gets the canonical form of the real URL and the
	// problem ErrDefanged. Off, such text is no link in running text
	// (inside <...>, which takes any scheme, it is a link of scheme
	// hxxp).
	Refang bool
	// BareDomains reports host names written without a scheme
	// (example.com/path, news.example.org) and IP literals
	// (192.0.2.1:8080/x, [2001:db8::1]) as links of FormDomain, with
	// canonical form http://...: a host counts when its last labels are
	// a public suffix of the ICANN section of the Public Suffix List and
	// the guards of docs/extract.md (file names, package names, version
	// numbers, sentences without a space) let it through.
	BareDomains bool
	// MaxLineLength bounds the memory a long line takes (default
	// 64 KiB): a line longer than MaxLineLength plus MaxLinkLength+1 KiB
	// is scanned in pieces of MaxLineLength, each with MaxLinkLength+1
	// KiB of its line on either side, which finders read as part of the
	// line. The pieces give the links of the whole line: a link is never
	// cut or lost where a piece ends, and Line and Column are those of
	// the whole line.
	MaxLineLength int
	// MaxJoinLines is how many lines a delimited link may continue over
	// (default 8).
	MaxJoinLines int
	// MaxLinkLength is the longest link reported (default 8 KiB); a
	// longer candidate is cut there and gets a problem.
	MaxLinkLength int
}

// noLimit stands for a negative limit: large, yet far enough from the
// largest int that sums and products of limits do not overflow.
const noLimit = 1 << 30

// limit returns v, def for 0, or noLimit for a negative v.
func limit(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0 || v > noLimit:
		return noLimit
	}
	return v
}

func (o *Options) withDefaults() Options {
	var r Options
	if o != nil {
		r = *o
	}
	r.MaxLineLength = limit(r.MaxLineLength, 64<<10)
	r.MaxJoinLines = limit(r.MaxJoinLines, 8)
	r.MaxLinkLength = limit(r.MaxLinkLength, 8<<10)
	return r
}

//go:generate go run gen_schemes.go

// KnownScheme reports whether name (lower case) is a scheme of the IANA
// registry's permanent list or of the 1994 drafts, one of the few
// provisional or unregistered ones that mail carries (gen_schemes.go), an
// experimental "x-" scheme, or a compound scheme, and returns its
// description. A compound scheme is a known scheme, "+" and a transport
// ("ssh", "http", "https", "file", "srv", "unix"), as version control
// and database URLs write them: git+ssh, svn+ssh, git+https, bzr+ssh,
// mongodb+srv, redis+unix.
func KnownScheme(name string) (string, bool) {
	if strings.HasPrefix(name, "x-") && len(name) > 2 {
		return "experimental", true
	}
	if d, ok := knownSchemes[name]; ok {
		return d, true
	}
	if i := strings.IndexByte(name, '+'); i > 0 && compoundTransport[name[i+1:]] {
		if _, ok := knownSchemes[name[:i]]; ok {
			return "compound: " + name[:i] + " over " + name[i+1:], true
		}
	}
	return "", false
}

// compoundTransport lists what may follow the "+" of a compound scheme.
var compoundTransport = map[string]bool{
	"ssh": true, "http": true, "https": true, "file": true, "srv": true, "unix": true,
}
