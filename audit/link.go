package audit

import (
	"net/url"
	"strings"
	"time"
)

// Link is one distinct link to check, with the first place it was found.
// The field names of the location follow scan's records.
type Link struct {
	URL    string // canonical form
	Scheme string // of the canonical form, lower case
	Host   string // of the canonical form, lower case; "" when none

	// The first occurrence.
	Path      string    // input file
	Blob      string    // the message's git object id (a public-inbox archive), "" otherwise
	Offset    int64     // of the message in that file (in the blob)
	MessageID string    // without angle brackets
	Part      string    // MIME part path
	Line      int       // 1-based, in the decoded part
	Column    int       // 1-based
	Date      time.Time // the message's Date; zero when unknown

	Count int // occurrences in the input

	// Cut: the link was cut at the extractor's length limit
	// (extract.ErrTooLong), in every occurrence; what is left is not the
	// link, and is never checked (Unchecked, ClassTooLong).
	Cut bool
}

// Status is what an audit says of a link.
type Status string

// The statuses. A single check gives OK, Redirected, Failing, Blocked,
// Unchecked or OfflineOK; the history turns Failing into Dead.
const (
	OK         Status = "ok"
	Redirected Status = "redirected" // works, after redirects (Result.Permanent says of which kind)
	Failing    Status = "failing"    // failed, not (yet) long enough to be called dead
	Dead       Status = "dead"       // failed on at least Config.DeadChecks checks over at least Config.DeadAfter, or permanently (a syntax error)
	Blocked    Status = "blocked"    // refused to a robot (403, 429, 999, 401): says nothing of the target
	Unchecked  Status = "unchecked"  // not checkable (scheme, policy, offline without history); never dead
	OfflineOK  Status = "offline-ok" // news:, nntp:, mid:, cid: found in the archive
)

// Statuses lists every Status in the order reports give them.
var Statuses = []Status{OK, Redirected, Failing, Dead, Blocked, Unchecked, OfflineOK}

// Works reports whether the status says the link works.
func (s Status) Works() bool { return s == OK || s == Redirected || s == OfflineOK }

// Class is the kind of a failure, or of the reason a link is unchecked.
type Class string

// The classes.
const (
	ClassNone       Class = ""
	ClassDNS        Class = "dns"             // the name does not resolve
	ClassRefused    Class = "refused"         // connection refused
	ClassTimeout    Class = "timeout"         // no answer in time
	ClassNetwork    Class = "network"         // another network error (reset, unreachable)
	ClassTLS        Class = "tls"             // TLS handshake failed
	ClassTLSCert    Class = "tls-certificate" // certificate not trusted (self-signed, unknown authority, expired, wrong name); Failing, never Dead
	ClassHTTP       Class = "http"            // an HTTP status that says the link fails (Result.HTTPStatus)
	ClassRedirects  Class = "redirects"       // too many redirects, a loop, or a bad Location
	ClassForbidden  Class = "forbidden"       // refused by policy: a private address, file:
	ClassBadPort    Class = "forbidden-port"  // refused by policy: a port browsers refuse (Config.AnyPort)
	ClassProtocol   Class = "protocol"        // the server spoke, but not as the protocol says
	ClassNotFound   Class = "not-found"       // ftp 550, gopher error item
	ClassSyntax     Class = "syntax"          // the URL cannot be checked as written: permanent (Check.Permanent), Dead at once
	ClassNoMX       Class = "no-mail-domain"  // mailto: domain with neither MX nor address
	ClassScheme     Class = "scheme"          // no checker for the scheme
	ClassNotInIndex Class = "not-in-archive"  // mid:/news: not in the archive (may exist elsewhere)
	ClassLookup     Class = "lookup"          // the archive index could not be read
	ClassOffline    Class = "offline"         // offline, and no history
	ClassCanceled   Class = "canceled"        // the run was canceled before the check ended
	ClassTooLong    Class = "too-long"        // cut at the extractor's length limit (Link.Cut): not the link
	ClassRobots     Class = "robots"          // disallowed by the host's robots.txt, or that file unreachable (Config.IgnoreRobots)
)

// Hop is one response of a redirect chain.
type Hop struct {
	URL    string `json:"url"` // redacted
	Status int    `json:"status"`
}

// Check is the outcome of checking a link once (with its retries).
type Check struct {
	Time       time.Time     // when the check began
	Status     Status        // OK, Redirected, Failing, Blocked, Unchecked or OfflineOK
	Permanent  bool          // Redirected: every redirect was permanent (301, 308); Failing: the failure is (a syntax error), so the link is Dead at once
	HTTPStatus int           // the last HTTP status, 0 when none
	Class      Class         // ClassNone for OK and Redirected
	Error      string        // redacted; "" for OK
	Chain      []Hop         // the redirects followed, in order (not the final response)
	FinalURL   string        // redacted; the URL that answered last
	Attempts   int           // requests made, retries included
	Elapsed    time.Duration // time spent, waits included

	retry      bool          // worth another attempt
	retryAfter time.Duration // the server's Retry-After, 0 when none
}

// Capture is an archived copy of a URL.
type Capture struct {
	Source  string    `json:"source"` // "wayback" or "memento"
	URL     string    `json:"url"`    // where the copy is
	Time    time.Time `json:"time"`   // when it was captured
	Queried time.Time `json:"queried"`
}

// Result is what the audit says of one link.
type Result struct {
	Link  Link  // Link.URL redacted
	Check Check // the check this result stands on (Cached: from history)

	Status       Status    // Check.Status, or Dead once the history says so
	Cached       bool      // Check comes from the history (Config.MaxAge or Offline)
	FirstSeen    time.Time // first check in the history (this one when new)
	LastOK       time.Time // last check that worked; zero when never
	Failures     int       // failing checks since the last that worked
	FailingSince time.Time // the first of those
	Archive      *Capture  // for failing and dead http(s) links, when found
}

// Redact returns s with the user information (user:password@) of a URL
// replaced by "REDACTED@". Anything that is not a URL (or network-path
// reference) with an authority is returned unchanged.
func Redact(s string) string {
	start := -1
	if strings.HasPrefix(s, "//") {
		start = 2 // a network-path reference
	} else if i := strings.IndexByte(s, ':'); i > 0 && isScheme(s[:i]) && strings.HasPrefix(s[i+1:], "//") {
		start = i + 3
	}
	if start < 0 {
		return s
	}
	rest := s[start:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndexByte(rest[:end], '@')
	if at < 0 || rest[:at] == "REDACTED" {
		return s
	}
	return s[:start] + "REDACTED@" + rest[at+1:]
}

// isScheme reports whether s is a URL scheme (RFC 3986: a letter, then
// letters, digits, "+", "-" and ".").
func isScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// redactErr removes the user information of u from an error message, in
// whatever form a library may have written it.
func redactErr(msg string, u *url.URL) string {
	if u == nil || u.User == nil {
		return msg
	}
	if s := u.User.String(); s != "" {
		msg = strings.ReplaceAll(msg, s+"@", "REDACTED@")
	}
	if p, ok := u.User.Password(); ok && p != "" {
		msg = strings.ReplaceAll(msg, p, "REDACTED")
	}
	if n := u.User.Username(); n != "" {
		msg = strings.ReplaceAll(msg, n, "REDACTED")
	}
	return msg
}
