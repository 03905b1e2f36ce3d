package audit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"syscall"
)

// Resolver looks up names. *net.Resolver satisfies it; tests give their
// own, so that any name can lead to a loopback server.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
	LookupMX(ctx context.Context, name string) ([]*net.MX, error)
}

// ErrForbiddenAddress is the error of a connection refused because its
// address is not globally reachable: loopback, private, link-local,
// multicast, unspecified, another special-purpose block, or one of these
// embedded in an IPv6 address.
var ErrForbiddenAddress = errors.New("address not allowed (loopback, private, link-local, multicast, unspecified or another address that is not globally reachable)")

// nonGlobal are the blocks of the IANA special-purpose address registries
// (RFC 6890 and the RFCs that added to them) whose addresses are not
// globally reachable, with multicast, the deprecated IPv6 site-local
// fec0::/10 and the local-use NAT64 prefix 64:ff9b:1::/48 (RFC 8215),
// whose embedded IPv4 address may sit at any of RFC 6052's positions.
// Parsed on first use (every command of linkscan links this package, the
// delivery-time filter too).
var nonGlobal = sync.OnceValue(func() []netip.Prefix {
	return prefixes(
		"0.0.0.0/8",       // "this network"
		"10.0.0.0/8",      // private (RFC 1918)
		"100.64.0.0/10",   // shared address space, carrier-grade NAT (RFC 6598)
		"127.0.0.0/8",     // loopback
		"169.254.0.0/16",  // link-local
		"172.16.0.0/12",   // private
		"192.0.0.0/24",    // IETF protocol assignments (RFC 6890)
		"192.0.2.0/24",    // documentation, TEST-NET-1 (RFC 5737)
		"192.168.0.0/16",  // private
		"198.18.0.0/15",   // benchmarking (RFC 2544)
		"198.51.100.0/24", // documentation, TEST-NET-2
		"203.0.113.0/24",  // documentation, TEST-NET-3
		"224.0.0.0/4",     // multicast
		"240.0.0.0/4",     // reserved (RFC 1112), and 255.255.255.255, limited broadcast
		"::/128",          // unspecified
		"::1/128",         // loopback
		"64:ff9b:1::/48",  // local-use IPv4/IPv6 translation (RFC 8215)
		"100::/64",        // discard-only (RFC 6666)
		"100:0:0:1::/64",  // dummy IPv6 prefix (RFC 9780)
		"2001::/23",       // IETF protocol assignments (RFC 2928), but Teredo and the exceptions below
		"2001:db8::/32",   // documentation (RFC 3849)
		"3fff::/20",       // documentation (RFC 9637)
		"5f00::/16",       // segment routing SIDs (RFC 9602)
		"fc00::/7",        // unique local (RFC 4193)
		"fe80::/10",       // link-local
		"fec0::/10",       // site-local, deprecated (RFC 3879)
		"ff00::/8",        // multicast
	)
})

// globalInside are the globally reachable blocks the registries list
// inside a block of nonGlobal: anycast services and ORCHIDv2/DRIP.
var globalInside = sync.OnceValue(func() []netip.Prefix {
	return prefixes(
		"192.0.0.9/32",    // port control protocol anycast (RFC 7723)
		"192.0.0.10/32",   // traversal using relays around NAT anycast (RFC 8155)
		"2001:1::1/128",   // port control protocol anycast
		"2001:1::2/128",   // traversal using relays around NAT anycast
		"2001:1::3/128",   // DNS-SD service registration protocol anycast (RFC 9665)
		"2001:3::/32",     // AMT (RFC 7450)
		"2001:4:112::/48", // AS112-v6 (RFC 7535)
		"2001:20::/28",    // ORCHIDv2 (RFC 7343)
		"2001:30::/28",    // drone remote ID (RFC 9374)
	)
})

func prefixes(s ...string) []netip.Prefix {
	ps := make([]netip.Prefix, len(s))
	for i, p := range s {
		ps[i] = netip.MustParsePrefix(p)
	}
	return ps
}

// The IPv6 prefixes that embed an IPv4 address, as the bytes they begin
// with: NAT64 64:ff9b::/96 (RFC 6052, the IPv4 address in the last 32
// bits), IPv4-compatible ::/96 (deprecated, RFC 4291), IPv4-translated
// ::ffff:0:0:0/96 (RFC 2765), 6to4 2002::/16 (RFC 3056, in bits 16-47) and
// Teredo 2001::/32 (RFC 4380).
var (
	nat64     = []byte{0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0}
	v4compat  = []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	siit      = []byte{0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0}
	sixToFour = []byte{0x20, 0x02}
	teredo    = []byte{0x20, 0x01, 0, 0}
)

// Forbidden reports whether connecting to a is refused by default: an
// address that is not globally reachable (loopback, private, shared,
// link-local, multicast, unspecified, broadcast, reserved, documentation,
// benchmarking and the other blocks of the IANA special-purpose
// registries so marked), and an IPv6 address that carries an IPv4 one
// which is any of these: IPv4-mapped (::ffff:0:0/96), IPv4-compatible
// (::/96), IPv4-translated (::ffff:0:0:0/96), NAT64 (64:ff9b::/96), 6to4
// (2002::/16) and Teredo (2001::/32, its server and its client address).
// The local-use NAT64 prefix 64:ff9b:1::/48 is refused whatever it
// carries. A network-specific NAT64 prefix cannot be known here: see
// ForbiddenNAT64.
func Forbidden(a netip.Addr) bool {
	return ForbiddenNAT64(a, nil)
}

// ForbiddenNAT64 is Forbidden on a network whose NAT64 translators use the
// network-specific prefixes nets (RFC 6052 §2.2: /32, /40, /48, /56, /64
// or /96): an address in one of them is judged by the IPv4 address it
// carries, at the place RFC 6052 gives for the prefix's length, whatever
// block the prefix itself is in (a unique local one, say). An address in
// a prefix of another length, or whose octet of bits 64-71 is not zero,
// carries no IPv4 address and is refused.
func ForbiddenNAT64(a netip.Addr, nets []netip.Prefix) bool {
	a = a.Unmap().WithZone("") // Prefix.Contains is false for an address with a zone
	if !a.IsValid() {
		return true
	}
	if a.Is6() {
		for _, p := range nets {
			if p.Addr().Is6() && p.Contains(a) {
				v4, ok := embeddedIPv4(a, p.Bits())
				return !ok || Forbidden(v4)
			}
		}
		b := a.As16()
		switch {
		case bytes.HasPrefix(b[:], nat64), bytes.HasPrefix(b[:], v4compat), bytes.HasPrefix(b[:], siit):
			return Forbidden(netip.AddrFrom4([4]byte(b[12:16])))
		case bytes.HasPrefix(b[:], sixToFour):
			return Forbidden(netip.AddrFrom4([4]byte(b[2:6])))
		case bytes.HasPrefix(b[:], teredo):
			client := [4]byte{^b[12], ^b[13], ^b[14], ^b[15]}
			return Forbidden(netip.AddrFrom4([4]byte(b[4:8]))) || Forbidden(netip.AddrFrom4(client))
		}
	}
	for _, p := range globalInside() {
		if p.Contains(a) {
			return false
		}
	}
	for _, p := range nonGlobal() {
		if p.Contains(a) {
			return true
		}
	}
	return a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsMulticast() || a.IsUnspecified()
}

// embeddedIPv4 returns the IPv4 address that a, in a network-specific
// NAT64 prefix of the given length, carries (RFC 6052 §2.2): after the
// prefix, skipping the octet of bits 64-71 (which must be zero).
func embeddedIPv4(a netip.Addr, bits int) (netip.Addr, bool) {
	b := a.As16()
	var at []int // the octets of the IPv4 address
	switch bits {
	case 32:
		at = []int{4, 5, 6, 7}
	case 40:
		at = []int{5, 6, 7, 9}
	case 48:
		at = []int{6, 7, 9, 10}
	case 56:
		at = []int{7, 9, 10, 11}
	case 64:
		at = []int{9, 10, 11, 12}
	case 96:
		return netip.AddrFrom4([4]byte(b[12:16])), true
	default:
		return netip.Addr{}, false
	}
	if b[8] != 0 {
		return netip.Addr{}, false
	}
	return netip.AddrFrom4([4]byte{b[at[0]], b[at[1]], b[at[2]], b[at[3]]}), true
}

// control is a net.Dialer Control function: it refuses to connect to a
// forbidden address. It runs on the address the socket is about to
// connect to, after every name resolution, so DNS rebinding cannot reach
// a forbidden address.
func control(network, address string, _ syscall.RawConn) error {
	return controlNAT64(network, address, nil)
}

// controlNAT64 is control on a network with the NAT64 prefixes nets.
func controlNAT64(_, address string, nets []netip.Prefix) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrForbiddenAddress, address)
	}
	if ForbiddenNAT64(ap.Addr(), nets) {
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
		if nets := cfg.NAT64; len(nets) > 0 {
			dl.d.Control = func(network, address string, _ syscall.RawConn) error {
				return controlNAT64(network, address, nets)
			}
		}
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
var badPorts = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, p := range []int{1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95,
		101, 102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465,
		512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995,
		1719, 1720, 1723, 2049, 3659, 4045, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6697, 10080} {
		m[strconv.Itoa(p)] = true
	}
	return m
})

// badPort reports whether a URL of scheme names a port refused by
// default.
func badPort(scheme, port string) bool {
	if port == "" || !badPorts()[port] {
		return false
	}
	return !(scheme == "ftp" && port == "21")
}
