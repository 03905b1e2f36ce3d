package audit

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// httpChecker checks http and https URLs.
type httpChecker struct {
	cfg    *Config
	client *http.Client
}

func newHTTPChecker(cfg *Config, dl *dialer) *httpChecker {
	tr := &http.Transport{
		DialContext:            dl.DialContext,
		TLSClientConfig:        cfg.TLS,
		TLSHandshakeTimeout:    cfg.ConnectTimeout,
		ResponseHeaderTimeout:  cfg.Timeout,
		MaxResponseHeaderBytes: cfg.MaxHeader,
		MaxIdleConns:           cfg.Concurrency * 2,
		MaxIdleConnsPerHost:    cfg.PerHost,
		IdleConnTimeout:        30 * time.Second,
		DisableCompression:     true,
		ForceAttemptHTTP2:      true,
		Proxy:                  nil, // never through a proxy from the environment: the guard must see the target
	}
	if cfg.TLS == nil {
		tr.TLSClientConfig = &tls.Config{}
	}
	return &httpChecker{cfg: cfg, client: &http.Client{
		Transport: tr,
		Jar:       nil, // no cookies kept
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // redirects are followed by hand, and recorded
		},
	}}
}

// refusesHEAD lists the statuses after which a HEAD is tried again as GET:
// servers answer these to HEAD while the page is there.
func refusesHEAD(code int) bool {
	switch code {
	case http.StatusBadRequest, http.StatusForbidden, http.StatusMethodNotAllowed,
		http.StatusNotAcceptable, http.StatusNotImplemented, 999:
		return true
	}
	return false
}

func isRedirect(code int) bool {
	switch code {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

// hopKey is the context key of a hopFunc.
type hopKey struct{}

// hopFunc is called before a redirect is followed to another host (and
// port); the Auditor waits there for that host's slot and interval.
type hopFunc func(ctx context.Context, to *url.URL) error

// check makes one attempt: the request, the redirects, and the HEAD→GET
// fallback at each step.
func (h *httpChecker) check(ctx context.Context, u *url.URL) Check {
	var c Check
	orig := u
	cur := u
	seen := map[string]bool{}
	permanent := true
	for hop := 0; ; hop++ {
		key := withoutUser(cur)
		if seen[key] {
			c.Status, c.Class = Failing, ClassRedirects
			c.Error = "redirect loop back to " + Redact(cur.String())
			return c
		}
		seen[key] = true
		if rf, ok := ctx.Value(robotsKey{}).(robotsFunc); ok {
			// every request of the chain asks the robots.txt of its origin
			if rc := rf(ctx, cur); rc != nil {
				c.FinalURL = Redact(cur.String())
				c.Status, c.Class, c.Error, c.retry = rc.Status, rc.Class, redactErr(rc.Error, orig), rc.retry
				return c
			}
		}
		code, header, err := h.fetch(ctx, cur, orig, &c)
		c.FinalURL = Redact(cur.String())
		if err != nil {
			c.Status = Failing
			c.Class, c.Error = classify(err)
			c.Error = redactErr(c.Error, orig)
			c.retry = c.Class == ClassTimeout || c.Class == ClassNetwork
			return c
		}
		c.HTTPStatus = code
		if isRedirect(code) {
			loc := header.Get("Location")
			if loc == "" {
				c.Status, c.Class = Failing, ClassRedirects
				c.Error = fmt.Sprintf("HTTP %d without Location", code)
				return c
			}
			next, err := cur.Parse(loc)
			if err != nil || (next.Scheme != "http" && next.Scheme != "https") {
				c.Status, c.Class = Failing, ClassRedirects
				c.Error = fmt.Sprintf("HTTP %d to a bad Location %q", code, Redact(loc))
				return c
			}
			c.Chain = append(c.Chain, Hop{URL: Redact(cur.String()), Status: code})
			if code != 301 && code != 308 {
				permanent = false
			}
			if hop+1 > h.cfg.MaxRedirects {
				c.Status, c.Class = Failing, ClassRedirects
				c.Error = fmt.Sprintf("more than %d redirects", h.cfg.MaxRedirects)
				return c
			}
			next.Fragment = ""
			if !h.cfg.AnyPort && badPort(next.Scheme, next.Port()) {
				c.Status, c.Class = Unchecked, ClassBadPort
				c.Error = fmt.Sprintf("HTTP %d to port %s, which is refused (browsers refuse it too)", code, next.Port())
				return c
			}
			if hf, ok := ctx.Value(hopKey{}).(hopFunc); ok && !strings.EqualFold(next.Host, cur.Host) {
				if err := hf(ctx, next); err != nil {
					c.Status = Failing
					c.Class, c.Error = classify(err)
					return c
				}
			}
			cur = next
			continue
		}
		switch {
		case code >= 200 && code < 300, code == http.StatusNotModified:
			c.Status = OK
			if len(c.Chain) > 0 {
				c.Status, c.Permanent = Redirected, permanent
			}
		case header.Get("Cf-Mitigated") != "":
			// a bot wall's challenge page (Cloudflare marks it so), whatever
			// its status: the page may well be there
			c.Status, c.Class = Blocked, ClassHTTP
			c.Error = "HTTP " + strconv.Itoa(code) + " (challenge: " + clip(header.Get("Cf-Mitigated"), 40) + ")"
		case code == http.StatusRequestTimeout, code == http.StatusTooManyRequests, code >= 500:
			c.Status, c.Class = Failing, ClassHTTP
			c.Error = "HTTP " + strconv.Itoa(code)
			c.retry = true
			c.retryAfter = retryAfter(header.Get("Retry-After"), h.cfg.Clock.Now())
			if code == http.StatusTooManyRequests {
				c.Status = Blocked
			}
		case (code == http.StatusForbidden || code == http.StatusUnauthorized) && h.cfg.DenyFails:
			// asked to: some hosts answer 403 for a page that is gone
			c.Status, c.Class = Failing, ClassHTTP
			c.Error = "HTTP " + strconv.Itoa(code)
		case code == http.StatusGone:
			// the server says the page was removed for good: dead at
			// once, as a link that cannot work is
			c.Status, c.Class, c.Permanent = Failing, ClassHTTP, true
			c.Error = "HTTP 410 (Gone)"
		case code == http.StatusForbidden, code == http.StatusUnauthorized, code == 999:
			c.Status, c.Class = Blocked, ClassHTTP
			c.Error = "HTTP " + strconv.Itoa(code)
		default:
			c.Status, c.Class = Failing, ClassHTTP
			c.Error = "HTTP " + strconv.Itoa(code)
		}
		return c
	}
}

// fetch makes one request (HEAD, then GET when HEAD is refused) and reads
// at most MaxBody bytes of a GET's body.
func (h *httpChecker) fetch(ctx context.Context, u, orig *url.URL, c *Check) (int, http.Header, error) {
	code, header, err := h.do(ctx, http.MethodHead, u, orig, c)
	if err != nil || !refusesHEAD(code) {
		return code, header, err
	}
	return h.do(ctx, http.MethodGet, u, orig, c)
}

func (h *httpChecker) do(ctx context.Context, method string, u, orig *url.URL, c *Check) (int, http.Header, error) {
	c.Attempts++
	target := *u
	target.User = nil
	req, err := http.NewRequestWithContext(ctx, method, target.String(), nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("User-Agent", h.cfg.UserAgent)
	req.Header.Set("Accept", "*/*")
	// Credentials go only to the host (and port) they were written for,
	// and never from https down to http.
	if orig.User != nil && sameOrigin(u, orig) {
		pw, _ := orig.User.Password()
		req.SetBasicAuth(orig.User.Username(), pw)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	if method == http.MethodGet {
		if _, err := io.Copy(io.Discard, io.LimitReader(resp.Body, h.cfg.MaxBody)); err != nil && resp.StatusCode < 300 {
			return 0, nil, fmt.Errorf("reading the body: %w", err)
		}
	}
	return resp.StatusCode, resp.Header, nil
}

func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Host, b.Host) && a.Scheme == b.Scheme
}

func withoutUser(u *url.URL) string {
	v := *u
	v.User = nil
	v.Fragment = ""
	return v.String()
}

// retryAfter reads a Retry-After value: seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0
		}
		if n > 1<<31 {
			n = 1 << 31
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// classify names the kind of a network error and gives a message without
// the URL (which callers add, redacted).
func classify(err error) (Class, string) {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	msg := err.Error()
	var dnsErr *net.DNSError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verr *tls.CertificateVerificationError
	var recordErr tls.RecordHeaderError
	switch {
	case errors.Is(err, ErrForbiddenAddress):
		return ClassForbidden, msg
	case errors.As(err, &unknownCA):
		if c := unknownCA.Cert; c != nil && c.Issuer.String() == c.Subject.String() {
			return ClassTLSCert, "self-signed certificate (" + msg + ")"
		}
		return ClassTLSCert, msg
	case errors.As(err, &hostErr), errors.As(err, &invalid), errors.As(err, &verr):
		return ClassTLSCert, msg
	case errors.As(err, &recordErr):
		return ClassTLS, msg
	case errors.As(err, &dnsErr):
		if dnsErr.IsTimeout {
			return ClassTimeout, msg
		}
		return ClassDNS, msg
	case errors.Is(err, syscall.ECONNREFUSED):
		return ClassRefused, msg
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return ClassTimeout, msg
	case errors.Is(err, context.Canceled):
		return ClassCanceled, msg
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return ClassTimeout, msg
	}
	if strings.Contains(msg, "response headers exceeded") || strings.Contains(msg, "malformed HTTP") {
		return ClassProtocol, msg
	}
	if strings.Contains(msg, "tls:") {
		return ClassTLS, msg
	}
	return ClassNetwork, msg
}
