package geodata

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/glb-dns/glb/pools"
)

func TestNetworksLongestPrefixWins(t *testing.T) {
	t.Parallel()
	nets, err := NewNetworks([]pools.Network{
		{CIDR: "10.0.0.0/8", Zone: "wide"},
		{CIDR: "10.1.0.0/16", Zone: "narrow"},
		{CIDR: "10.1.2.0/24", Zone: "narrowest"},
		{CIDR: "2001:db8::/32", Zone: "v6-wide"},
		{CIDR: "2001:db8:1::/48", Zone: "v6-narrow"},
		// Configured as IPv4-mapped IPv6: matches IPv4 clients.
		{CIDR: "::ffff:192.0.2.0/120", Zone: "mapped"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if nets.Len() != 6 {
		t.Errorf("Len = %d, want 6", nets.Len())
	}
	var r *Resolver // networks only
	cases := []struct {
		addr   string
		zone   string
		prefix int
	}{
		{"10.1.2.3", "narrowest", 24},
		// 10.1.0.0/16 less 10.1.2.0/24 is 10.1.0.0/23, 10.1.3.0/24,
		// 10.1.4.0/22 ... 10.1.128.0/17.
		{"10.1.0.1", "narrow", 23},
		{"10.1.3.3", "narrow", 24},
		{"10.1.200.1", "narrow", 17},
		{"10.2.3.4", "wide", 15},
		{"10.200.0.1", "wide", 9},
		{"2001:db8:1::1", "v6-narrow", 48},
		{"2001:db8:ff::1", "v6-wide", 41},
		{"2001:db8:8000::1", "v6-wide", 33},
		{"::ffff:10.1.2.3", "narrowest", 24},
		{"192.0.2.1", "mapped", 24},
		{"::ffff:192.0.2.1", "mapped", 24},
		{"11.0.0.1", "", -1},
	}
	for _, c := range cases {
		got := r.ResolveAddr(addr(c.addr), nets)
		if got.Zone != c.zone || got.Prefix != c.prefix {
			t.Errorf("%s: zone %q prefix %d, want %q %d", c.addr, got.Zone, got.Prefix, c.zone, c.prefix)
		}
	}
}

// TestNetworksScopeIsUniform checks the property the prefix exists for:
// every address of the reported prefix resolves to the same location, so a
// resolver may cache the answer for all of it.
func TestNetworksScopeIsUniform(t *testing.T) {
	t.Parallel()
	nets, err := NewNetworks([]pools.Network{
		{CIDR: "10.0.0.0/8", Zone: "a"},
		{CIDR: "10.1.0.0/16", Zone: "b"},
		{CIDR: "10.1.2.0/24", Zone: "c"},
		{CIDR: "10.128.0.0/9", Zone: "d"},
		{CIDR: "12.0.0.0/30", Zone: "e"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var r *Resolver
	for _, a := range []string{"10.0.0.1", "10.1.0.1", "10.1.2.1", "10.1.3.1", "10.127.255.1", "10.200.0.1", "12.0.0.1", "12.0.0.4", "11.255.255.255", "13.0.0.0"} {
		loc := r.ResolveAddr(addr(a), nets)
		if loc.Prefix < 0 {
			continue
		}
		p := prefix(fmt.Sprintf("%s/%d", a, loc.Prefix)).Masked()
		for _, probe := range []netip.Addr{p.Addr(), lastAddr(p)} {
			if got := r.ResolveAddr(probe, nets); got.Zone != loc.Zone {
				t.Errorf("%s resolves in %s to zone %q, but %s in the same prefix to %q", a, p, loc.Zone, probe, got.Zone)
			}
		}
	}
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]) | host
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

func TestNewNetworks(t *testing.T) {
	t.Parallel()
	nets, err := NewNetworks([]pools.Network{
		{CIDR: "192.0.2.0/24", Zone: "first"},
		{CIDR: "192.0.2.0/24", Zone: "second"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var r *Resolver
	if got := r.ResolveAddr(addr("192.0.2.1"), nets).Zone; got != "first" {
		t.Errorf("duplicate prefixes: zone %q, want the first entry's", got)
	}
	if nets.Len() != 1 {
		t.Errorf("Len = %d, want 1", nets.Len())
	}
	if _, err := NewNetworks([]pools.Network{{Meta: pools.Meta{ID: "n1"}, CIDR: "not a prefix"}}); err == nil {
		t.Error("a bad CIDR was accepted")
	}
	empty, err := NewNetworks(nil)
	if err != nil || empty.Len() != 0 {
		t.Errorf("empty table: %v, %d", err, empty.Len())
	}
	var none *Networks
	if none.Len() != 0 {
		t.Error("nil table is not empty")
	}
}
