package audit

import (
	"context"
	"errors"
	"net"
	"net/mail"
	"net/url"
	"strings"
)

// mailtoChecker checks mailto: URLs: every address must parse (RFC 5322
// addr-spec with a domain), and with Config.MX each domain must have an MX
// record, or an address (the implicit MX of RFC 5321).
type mailtoChecker struct {
	cfg *Config
}

// mailtoAddresses returns the addresses of a mailto: URL: those before the
// query and those of its to= fields.
func mailtoAddresses(u *url.URL) []string {
	var out []string
	add := func(s string) {
		for _, a := range strings.Split(s, ",") {
			if a = strings.TrimSpace(a); a != "" {
				out = append(out, a)
			}
		}
	}
	p := u.Opaque
	if p == "" {
		p = u.Path
	}
	if d, err := url.PathUnescape(p); err == nil {
		p = d
	}
	add(p)
	for _, to := range u.Query()["to"] {
		add(to)
	}
	return out
}

func (m *mailtoChecker) check(ctx context.Context, u *url.URL) Check {
	c := Check{FinalURL: Redact(u.String())}
	fail := func(cl Class, msg string) Check {
		c.Status, c.Class, c.Error = Failing, cl, msg
		return c
	}
	addrs := mailtoAddresses(u)
	if len(addrs) == 0 {
		if u.RawQuery != "" {
			// mailto:?subject=... is a valid URL (RFC 6068: the address is
			// optional), which leaves the sender to choose one
			c.Status = OK
			return c
		}
		return fail(ClassSyntax, "no address")
	}
	domains := map[string]bool{}
	var order []string
	for _, a := range addrs {
		pa, err := mail.ParseAddress(a)
		if err != nil {
			return fail(ClassSyntax, "bad address "+clip(a, 100)+": "+err.Error())
		}
		at := strings.LastIndexByte(pa.Address, '@')
		if at < 0 || at == len(pa.Address)-1 {
			return fail(ClassSyntax, "no domain in "+clip(a, 100))
		}
		d := strings.ToLower(strings.Trim(pa.Address[at+1:], "[]"))
		if net.ParseIP(d) == nil && !domainLabels(d) {
			return fail(ClassSyntax, "bad domain in "+clip(a, 100))
		}
		if !domains[d] {
			domains[d] = true
			order = append(order, d)
		}
	}
	if !m.cfg.MX {
		c.Status = OK
		return c
	}
	for _, d := range order {
		if net.ParseIP(d) != nil {
			continue // an address literal needs no lookup
		}
		c.Attempts++
		mx, err := m.cfg.Resolver.LookupMX(ctx, d)
		if err == nil && len(mx) > 0 {
			if len(mx) == 1 && mx[0].Host == "." {
				return fail(ClassNoMX, d+": null MX (RFC 7505): the domain takes no mail")
			}
			continue
		}
		var de *net.DNSError
		if err != nil && errors.As(err, &de) && (de.IsTimeout || de.IsTemporary) {
			cl, msg := classify(err)
			c.retry = true
			return fail(cl, msg)
		}
		ips, err2 := m.cfg.Resolver.LookupIPAddr(ctx, d)
		if err2 == nil && len(ips) > 0 {
			continue
		}
		return fail(ClassNoMX, d+": neither MX nor address")
	}
	c.Status = OK
	return c
}

// domainLabels reports whether d is a domain name whose labels are 1 to 63
// bytes, none beginning or ending with a hyphen (RFC 1123 and RFC 5890;
// internationalized labels are not checked further). A final dot is
// allowed.
func domainLabels(d string) bool {
	d = strings.TrimSuffix(d, ".")
	if d == "" || len(d) > 253 {
		return false
	}
	for _, l := range strings.Split(d, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if c < 0x80 && !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
