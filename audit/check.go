package audit

import (
	"context"
	"net/url"
	"strings"
)

// checkers holds one checker per scheme, sharing one guarded dialer.
type checkers struct {
	cfg    *Config
	dl     *dialer
	http   *httpChecker
	ftp    *ftpChecker
	gopher *gopherChecker
	mailto *mailtoChecker
}

func newCheckers(cfg *Config) *checkers {
	dl := newDialer(cfg.Resolver, cfg.AllowPrivate, cfg)
	return &checkers{
		cfg:    cfg,
		dl:     dl,
		http:   newHTTPChecker(cfg, dl),
		ftp:    &ftpChecker{cfg: cfg, dl: dl},
		gopher: &gopherChecker{dl: dl},
		mailto: &mailtoChecker{cfg: cfg},
	}
}

// networked reports whether links of the scheme are checked over the
// network, through the politeness of their host.
func networked(scheme string) bool {
	switch scheme {
	case "http", "https", "ftp", "gopher":
		return true
	}
	return false
}

// target parses a link to check, or returns the Check that says why it is
// not checked.
func target(l *Link, anyPort bool) (*url.URL, *Check) {
	u, err := url.Parse(l.URL)
	if err != nil {
		return nil, &Check{Status: Failing, Class: ClassSyntax, Permanent: true, Error: redactErr(err.Error(), u)}
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme == "file":
		return nil, &Check{Status: Unchecked, Class: ClassForbidden, Error: "file: URLs are never opened"}
	case networked(scheme) && u.Hostname() == "":
		return nil, &Check{Status: Failing, Class: ClassSyntax, Permanent: true, Error: "no host"}
	case networked(scheme) && !anyPort && badPort(scheme, u.Port()):
		return nil, &Check{Status: Unchecked, Class: ClassBadPort, Error: "port " + u.Port() + " is refused (browsers refuse it too)"}
	}
	return u, nil
}

// attempt checks a link once, without retries or politeness (the caller
// keeps those). A refusal by the security policy makes the link
// Unchecked: it says nothing of the target. A syntax error (a mailto:
// address that does not parse, a gopher selector with a line break) is
// in the link as written: permanent, never retried.
func (k *checkers) attempt(ctx context.Context, l *Link, u *url.URL) Check {
	c := k.attempt1(ctx, l, u)
	switch {
	case c.Class == ClassForbidden || c.Class == ClassBadPort:
		c.Status, c.retry = Unchecked, false
	case c.Class == ClassSyntax && c.Status == Failing:
		c.Permanent, c.retry = true, false
	}
	return c
}

func (k *checkers) attempt1(ctx context.Context, l *Link, u *url.URL) Check {
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return k.http.check(ctx, u)
	case "ftp":
		return k.ftp.check(ctx, u)
	case "gopher":
		return k.gopher.check(ctx, u)
	case "mailto":
		return k.mailto.check(ctx, u)
	case "news", "nntp", "mid", "cid":
		return checkRef(k.cfg.Refs, l)
	}
	return Check{Status: Unchecked, Class: ClassScheme, Error: "no checker for " + u.Scheme + ": links"}
}
