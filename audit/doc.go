// Package audit checks whether the links found in mail and news archives
// still work, and keeps a history of the answers.
//
// It is the engine of the `linkscan audit` command (cmd/linkscan/audit.go,
// docs/audit.md): the caller hands it a stream of distinct links (Link:
// canonical URL, scheme, host, the first place it was seen, the message's
// Date and the number of occurrences) and receives one Result per link.
//
// The pieces:
//
//   - Checkers for http and https (HEAD, GET when HEAD is refused,
//     redirects followed by hand and recorded), ftp (anonymous login,
//     SIZE, CWD or LIST), gopher (the selector, the first bytes of the answer),
//     mailto (syntax; with Config.MX a DNS MX lookup) and news, nntp, mid
//     and cid (offline, through a references.Resolver). Other schemes are
//     Unchecked, never dead; so is a link cut at the extractor's length
//     limit (Link.Cut, ClassTooLong), which is never requested.
//   - Politeness (Auditor): a global limit of concurrent checks, per-host
//     limits of concurrent requests and a minimum interval between them,
//     per-host overrides, retries with exponential backoff and jitter
//     honouring Retry-After (capped), and a short circuit: after a DNS
//     failure, a refused connection or a refusal by the security guard,
//     the host's other links get the same answer without a request.
//     Links that differ only in their #fragment are fetched once.
//   - robots.txt (RFC 9309; robots.go, robotsfetch.go): each http(s)
//     origin's file fetched once per run and asked before every request;
//     a link it disallows is Unchecked, ClassRobots, never requested; its
//     Crawl-delay is a lower bound of the host's interval.
//     Config.IgnoreRobots turns it off. The parser is this package's own:
//     the Go library considered, github.com/temoto/robotstxt, had
//     its last release in March 2021, before RFC 9309, and departs from
//     it where an audit needs it (of an Allow and a Disallow rule of one
//     length it obeys the first written, where the RFC says Allow; a rule
//     before any user-agent line, or a Crawl-delay that is not a number,
//     makes it refuse the whole file); robots.go says more.
//   - Security (Forbidden, the dialer's Control function): connections to
//     addresses that are not globally reachable (loopback, private,
//     link-local, multicast, unspecified, the IANA special-purpose blocks
//     so marked, and IPv6 addresses carrying such an IPv4 one: mapped,
//     compatible, NAT64, 6to4, Teredo) are refused when the socket is
//     about to connect (so a name that resolves differently the second
//     time cannot slip through), unless Config.AllowPrivate. Credentials
//     in URLs are sent only to the host they were written for and are
//     redacted in every result and in the history (Redact).
//   - History (DB): every check in SQLite; a link is Dead only after failing
//     on at least DeadChecks checks spread over DeadAfter, Failing until then
//     (tls-certificate failures do not count), or at once when its failure
//     is permanent (a syntax error).
//   - Archived copies (Wayback CDX and Memento TimeGate): the capture closest
//     to the message's date, kept in the history.
//   - Reading the history without auditing (HistoryReader, read-only):
//     the status of a link and the kept copy nearest a date, for the
//     archive rules of `linkscan rewrite` (it implements rewrite.Archive
//     without importing package rewrite). Package audit/audittest builds
//     histories for tests by real audits on loopback.
//   - Input (ReadJSONL, Collector, DiskCollector): scan's JSON-lines
//     records made into distinct links.
//   - Reports (Writer): jsonl, csv, markdown, summary and a self-contained
//     HTML page with inline SVG charts; the formats for people escape
//     control characters from archives (internal/termesc).
//
// Every limit is in Config with its default; nothing here reads flags or
// the environment.
package audit
