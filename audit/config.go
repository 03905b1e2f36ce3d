package audit

import (
	"crypto/tls"
	"net"
	"net/netip"
	"time"

	"github.com/linkscan/linkscan/internal/version"
)

// Version is the version linkscan's User-Agent names: the command's
// (linkscan --version).
const Version = version.Version

// DefaultUserAgent names linkscan, its version and where its audits are
// documented, so that a site owner can find out what is calling.
const DefaultUserAgent = "linkscan/" + Version + " (link audit; +https://github.com/linkscan/linkscan/blob/main/docs/audit.md)"

// Config holds every limit of an audit, in groups that are embedded, so
// that a field is set and read as Config.PerHost as well as
// Config.RequestLimits.PerHost. The zero value of a field means its
// default (given with the field); Defaults fills them in.
type Config struct {
	RequestLimits
	RetryPolicy
	RobotsPolicy
	NetworkPolicy
	HistoryPolicy
	ArchivePolicy

	UserAgent string      // DefaultUserAgent
	MX        bool        // mailto: look up the domain's MX (else syntax only)
	DenyFails bool        // a 401 or 403 without a bot wall's challenge mark is Failing (so can be Dead), not Blocked
	Refs      RefResolver // news:, nntp:, mid:, cid:; nil: unchecked
	Clock     Clock       // the real clock
}

// RequestLimits bound the requests of an audit: how many at once, how
// often to one host, how long and how large.
type RequestLimits struct {
	Concurrency    int                  // checks at once over all hosts; 32
	PerHost        int                  // concurrent requests to one host; 4
	Interval       time.Duration        // minimum time between the starts of two requests to one host; 0 (none)
	Hosts          map[string]HostLimit // overrides by host name, or "name:port"
	Timeout        time.Duration        // one attempt, connection to last byte read; 20s
	LinkTimeout    time.Duration        // all attempts and waits of one link; 2m
	ConnectTimeout time.Duration        // one connection; 10s
	MaxRedirects   int                  // redirects followed; 10
	MaxBody        int64                // bytes of a body read (GET); 64 KiB
	MaxHeader      int64                // bytes of response headers; 64 KiB
}

// RetryPolicy says when and how often a link is tried again.
type RetryPolicy struct {
	Retries       int           // further attempts after a timeout, 408, 429 or 5xx; 2 (-1: none)
	Backoff       time.Duration // wait before the first retry, doubled each time, with up to 50% jitter; 1s
	MaxBackoff    time.Duration // cap of a wait computed from Backoff; 30s
	MaxRetryAfter time.Duration // cap of a server's Retry-After; 60s (a longer one gives up retrying)
}

// RobotsPolicy is how robots.txt (RFC 9309) is honoured; it is fetched
// once per origin for http(s) links.
type RobotsPolicy struct {
	IgnoreRobots  bool          // neither fetch nor honour robots.txt
	RobotsAgent   string        // the product token matched against user-agent lines; the UserAgent's leading token ("linkscan")
	MaxCrawlDelay time.Duration // cap of a robots.txt Crawl-delay, taken as the least interval of its host; 30s
}

// NetworkPolicy is where an audit may connect and how.
type NetworkPolicy struct {
	AllowPrivate bool           // allow loopback, private, link-local... addresses (tests, intranets)
	NAT64        []netip.Prefix // network-specific NAT64 prefixes of the network the audit runs on: their addresses are judged by the IPv4 address they carry (ForbiddenNAT64)
	AnyPort      bool           // allow the ports browsers refuse (25, 110, 6667...; see badPorts)
	Resolver     Resolver       // net.DefaultResolver
	TLS          *tls.Config    // root CAs and the like; nil: the system's
}

// HistoryPolicy is how the history of checks makes a link dead and
// spares checks.
type HistoryPolicy struct {
	DeadChecks int           // failing checks before Dead; 3
	DeadAfter  time.Duration // span of those checks before Dead; 7 days
	MaxAge     time.Duration // reuse a check younger than this; 0: always check
	Offline    bool          // no network: answer from history only
}

// ArchivePolicy is how archived copies of failing and dead http(s) links
// are looked up.
type ArchivePolicy struct {
	Archives        bool          // look them up
	ArchiveRequests int           // archive queries at once over all links; 2
	ArchiveInterval time.Duration // minimum time between the starts of two archive queries; 1s
	CDX             string        // Wayback CDX API; "https://web.archive.org/cdx/search/cdx" ("-": not used)
	Replay          string        // Wayback replay prefix; "https://web.archive.org/web/"
	TimeGate        string        // Memento TimeGate prefix, the URL is appended; "" (not used)
	// ArchiveDown, if not nil, is called once for an archive service
	// ("wayback", "memento") that cannot be reached: it is not asked
	// again in the run.
	ArchiveDown func(source string, err error)
}

// HostLimit overrides Config.PerHost and Config.Interval for one host.
// PerHost 0 means Config.PerHost; Interval is taken as given (0: none).
type HostLimit struct {
	PerHost  int
	Interval time.Duration
}

// Defaults returns c with every zero field set to its default.
func (c Config) Defaults() Config {
	set := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	setD := func(p *time.Duration, v time.Duration) {
		if *p == 0 {
			*p = v
		}
	}
	set(&c.Concurrency, 32)
	set(&c.PerHost, 4)
	set(&c.Retries, 2)
	if c.Retries < 0 {
		c.Retries = 0
	}
	setD(&c.Backoff, time.Second)
	setD(&c.MaxBackoff, 30*time.Second)
	setD(&c.MaxRetryAfter, time.Minute)
	setD(&c.Timeout, 20*time.Second)
	setD(&c.LinkTimeout, 2*time.Minute)
	setD(&c.ConnectTimeout, 10*time.Second)
	set(&c.MaxRedirects, 10)
	if c.MaxBody == 0 {
		c.MaxBody = 64 << 10
	}
	if c.MaxHeader == 0 {
		c.MaxHeader = 64 << 10
	}
	if c.UserAgent == "" {
		c.UserAgent = DefaultUserAgent
	}
	setD(&c.MaxCrawlDelay, 30*time.Second)
	if c.Resolver == nil {
		c.Resolver = net.DefaultResolver
	}
	set(&c.DeadChecks, 3)
	setD(&c.DeadAfter, 7*24*time.Hour)
	if c.CDX == "" {
		c.CDX = "https://web.archive.org/cdx/search/cdx"
	}
	if c.Replay == "" {
		c.Replay = "https://web.archive.org/web/"
	}
	set(&c.ArchiveRequests, 2)
	setD(&c.ArchiveInterval, time.Second)
	if c.Clock == nil {
		c.Clock = realClock{}
	}
	return c
}

// hostLimit returns the limits of a host ("name" or "name:port"): its
// override in Hosts (by host and port, else by name), else the defaults.
func (c *Config) hostLimit(host string) HostLimit {
	h, ok := c.Hosts[host]
	if !ok {
		if name, _, err := net.SplitHostPort(host); err == nil {
			h, ok = c.Hosts[name]
		}
	}
	if ok {
		if h.PerHost <= 0 {
			h.PerHost = c.PerHost
		}
		return h
	}
	return HostLimit{PerHost: c.PerHost, Interval: c.Interval}
}
