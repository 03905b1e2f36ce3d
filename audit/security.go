package audit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"syscall"
)

// Resolver looks up names. *net.Resolver satisfies it; tests give their
// own, so that any name can lead to a loopback server.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
	LookupMX(ctx context.Context, name string) ([]*net.MX, error)
}

// ErrForbiddenAddress is the error of a connection refused because its
// address is loopback, private, link-local, multicast or unspecified.
var ErrForbiddenAddress = errors.New("address not allowed (loopback, private, link-local, multicast or unspecified)")

// Forbidden reports whether connecting to a is refused by default:
// loopback, private (RFC 1918, RFC 4193), shared (RFC 6598), link-local,
// multicast, unspecified, and IPv4 addresses mapped into IPv6 that are any
// of these.
func Forbidden(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() ||
		a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return true
	}
	if a.Is4() {
		b := a.As4()
		switch {
		case b[0] == 0: // "this network"
			return true
		case b[0] == 100 && b[1]&0xc0 == 64: // 100.64.0.0/10, carrier-grade NAT
			return true
		case b[0] == 255 && b[1] == 255 && b[2] == 255 && b[3] == 255:
			return true
		}
	}
	return false
}

// control is a net.Dialer Control function: it refuses to connect to a
// forbidden address. It runs on the address the socket is about to
// connect to, after every name resolution, so DNS rebinding cannot reach
// a forbidden address.
func control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrForbiddenAddress, address)
	}
	if Forbidden(ap.Addr()) {
		return fmt.Errorf("%w: %s", ErrForbiddenAddress, ap.Addr())
	}
	return nil
}

// dialer makes the connections of every checker: names are looked up
// through the Resolver, each address is tried in turn, and the guard
// refuses forbidden addresses at connect time.
type dialer struct {
	resolver     Resolver
	allowPrivate bool
	d            net.Dialer
}

func newDialer(r Resolver, allowPrivate bool, cfg *Config) *dialer {
	dl := &dialer{resolver: r, allowPrivate: allowPrivate}
	dl.d.Timeout = cfg.ConnectTimeout
	dl.d.KeepAlive = -1
	if !allowPrivate {
		dl.d.Control = control
	}
	return dl
}

// DialContext connects to address (host:port).
func (dl *dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	var addrs []string
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []string{net.JoinHostPort(ip.String(), port)}
	} else {
		ips, err := dl.resolver.LookupIPAddr(ctx, host)
		if err != nil {
			return nil, err
		}
		if len(ips) == 0 {
			return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
		}
		for _, ip := range ips {
			addrs = append(addrs, net.JoinHostPort(ip.IP.String(), port))
		}
	}
	var first error
	for _, a := range addrs {
		c, err := dl.d.DialContext(ctx, network, a)
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, first
}

// badPorts are the ports browsers refuse to fetch from (the Fetch
// standard's "bad port" list): services whose protocol a request to them
// could be smuggled into (mail, IRC, NFS...). The audit refuses them too,
// except an ftp: URL's own 21; Config.AnyPort lifts it.
var badPorts = map[string]bool{}

func init() {
	for _, p := range []int{1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95,
		101, 102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465,
		512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995,
		1719, 1720, 1723, 2049, 3659, 4045, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6697, 10080} {
		badPorts[strconv.Itoa(p)] = true
	}
}

// badPort reports whether a URL of scheme names a port refused by
// default.
func badPort(scheme, port string) bool {
	if port == "" || !badPorts[port] {
		return false
	}
	return !(scheme == "ftp" && port == "21")
}
