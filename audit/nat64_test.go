package audit

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
)

// RFC 6052 §2.4's examples: 192.0.2.33 in each network-specific prefix.
var rfc6052Examples = []struct{ prefix, addr string }{
	{"2001:db8::/32", "2001:db8:c000:221::"},
	{"2001:db8:100::/40", "2001:db8:1c0:2:21::"},
	{"2001:db8:122::/48", "2001:db8:122:c000:2:2100::"},
	{"2001:db8:122:300::/56", "2001:db8:122:3c0:0:221::"},
	{"2001:db8:122:344::/64", "2001:db8:122:344:c0:2:2100:0"},
	{"2001:db8:122:344::/96", "2001:db8:122:344::192.0.2.33"},
}

func TestEmbeddedIPv4(t *testing.T) {
	for _, c := range rfc6052Examples {
		p := netip.MustParsePrefix(c.prefix)
		got, ok := embeddedIPv4(netip.MustParseAddr(c.addr), p.Bits())
		if !ok || got != netip.MustParseAddr("192.0.2.33") {
			t.Errorf("%s in %s: %v %v, want 192.0.2.33", c.addr, c.prefix, got, ok)
		}
	}
	if _, ok := embeddedIPv4(netip.MustParseAddr("2001:db8:122:344:1c0:2:2100:0"), 64); ok {
		t.Errorf("a u-octet that is not zero was read")
	}
	if _, ok := embeddedIPv4(netip.MustParseAddr("2001:db8::1"), 33); ok {
		t.Errorf("a prefix of 33 bits was read")
	}
}

// With the network's NAT64 prefixes, an address in one is judged by the
// IPv4 address it carries, whatever block the prefix is in.
func TestForbiddenNAT64(t *testing.T) {
	nets := []netip.Prefix{netip.MustParsePrefix("fd00:64::/96"), netip.MustParsePrefix("2001:db8:122:344::/64"),
		netip.MustParsePrefix("2001:db8:100::/40"), netip.MustParsePrefix("fd00:99::/33")}
	for _, c := range []struct {
		addr          string
		without, with bool
	}{
		{"fd00:64::808:808", true, false},              // 8.8.8.8 through a unique local prefix
		{"fd00:64::7f00:1", true, true},                // 127.0.0.1
		{"fd00:64::a9fe:a9fe", true, true},             // 169.254.169.254
		{"2001:db8:122:344:8:808:800:0", true, false},  // /64: 8.8.8.8
		{"2001:db8:122:344:7f:0:100:0", true, true},    // /64: 127.0.0.1
		{"2001:db8:122:344:108:808:800:0", true, true}, // u-octet set: no IPv4 address
		{"2001:db8:108:808:8::", true, false},          // /40: 8.8.8.8
		{"2001:db8:10a:0:1::", true, true},             // /40: 10.0.0.1
		{"fd00:99::1", true, true},                     // a prefix of no RFC 6052 length: refused
		{"2606:4700::1111", false, false},              // outside: as before
		{"fd00:65::808:808", true, true},               // outside: as before
		{"64:ff9b::808:808", false, false},             // the well-known prefix: as before
		{"::ffff:127.0.0.1", true, true},               // IPv4-mapped: as before
	} {
		a := netip.MustParseAddr(c.addr)
		if got := Forbidden(a); got != c.without {
			t.Errorf("Forbidden(%s) = %v, want %v", c.addr, got, c.without)
		}
		if got := ForbiddenNAT64(a, nets); got != c.with {
			t.Errorf("ForbiddenNAT64(%s) = %v, want %v", c.addr, got, c.with)
		}
	}
	for _, c := range rfc6052Examples { // 192.0.2.33 is a documentation address
		if !ForbiddenNAT64(netip.MustParseAddr(c.addr), []netip.Prefix{netip.MustParsePrefix(c.prefix)}) {
			t.Errorf("%s in %s let through", c.addr, c.prefix)
		}
	}
}

// Config.NAT64 reaches the dialer's guard: a name resolving to the
// network's NAT64 form of 127.0.0.1 is refused before any packet is sent.
func TestGuardNAT64(t *testing.T) {
	var hits atomic.Int32
	s := server(t, func(http.ResponseWriter, *http.Request) { hits.Add(1) })
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(s.URL, "http://"))
	r := &testResolver{hosts: map[string][]string{"local.example.com": {"fd00:64::7f00:1"}}}
	cfg := testConfig(r)
	cfg.AllowPrivate = false
	cfg.NAT64 = []netip.Prefix{netip.MustParsePrefix("fd00:64::/96")}
	c := attemptURL(t, cfg, "http://local.example.com:"+port+"/")
	if c.Status != Unchecked || c.Class != ClassForbidden || !strings.Contains(c.Error, "fd00:64::7f00:1") {
		t.Errorf("%+v", c)
	}
	if hits.Load() != 0 {
		t.Errorf("server reached")
	}
	dl := newDialer(r, false, &cfg)
	if err := dl.d.Control("tcp", "[fd00:64::7f00:1]:80", nil); err == nil {
		t.Errorf("the dialer's guard lets the NAT64 form of 127.0.0.1 through")
	}
	if err := dl.d.Control("tcp", "[fd00:64::808:808]:80", nil); err != nil {
		t.Errorf("the dialer's guard refuses the NAT64 form of 8.8.8.8: %v", err)
	}
}

// embedBits writes v4 into a after the first bits bits, bit by bit,
// skipping bits 64-71 (RFC 6052 §2.2), as a reference for embeddedIPv4's
// table of octets.
func embedBits(a [16]byte, bits int, v4 [4]byte) [16]byte {
	pos := bits
	for i := 0; i < 32; i++ {
		if pos == 64 {
			pos = 72
		}
		bit := v4[i/8] >> (7 - i%8) & 1
		a[pos/8] &^= 1 << (7 - pos%8)
		a[pos/8] |= bit << (7 - pos%8)
		pos++
	}
	return a
}

// FuzzNAT64: an IPv4 address embedded in any prefix of each RFC 6052
// length comes back out, and the address is refused exactly when that
// IPv4 address is.
func FuzzNAT64(f *testing.F) {
	f.Add([]byte{0xfd, 0, 0, 0x64, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, uint32(0x7f000001), uint8(5))
	f.Add([]byte{0x20, 1, 0xd, 0xb8}, uint32(0x08080808), uint8(0))
	f.Fuzz(func(t *testing.T, prefix []byte, v4n uint32, which uint8) {
		lengths := []int{32, 40, 48, 56, 64, 96}
		bits := lengths[int(which)%len(lengths)]
		var a [16]byte
		copy(a[:], prefix)
		a[8] = 0 // the u-octet
		v4 := [4]byte{byte(v4n >> 24), byte(v4n >> 16), byte(v4n >> 8), byte(v4n)}
		a = embedBits(a, bits, v4)
		addr := netip.AddrFrom16(a)
		got, ok := embeddedIPv4(addr, bits)
		if !ok || got != netip.AddrFrom4(v4) {
			t.Fatalf("%s /%d: %v %v, want %v", addr, bits, got, ok, netip.AddrFrom4(v4))
		}
		p, err := addr.Prefix(bits)
		if err != nil {
			t.Fatal(err)
		}
		if ForbiddenNAT64(addr, []netip.Prefix{p}) != Forbidden(netip.AddrFrom4(v4)) {
			t.Fatalf("%s in %s: ForbiddenNAT64 disagrees with Forbidden(%v)", addr, p, netip.AddrFrom4(v4))
		}
	})
}
