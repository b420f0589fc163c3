package steering

import (
	"net/netip"
	"testing"

	"github.com/glb-dns/glb/geodata"
	"github.com/glb-dns/glb/pools"
)

// TestHashScopeCoversTheHashedSubnet: hash origin steering answers per
// client subnet, so the ECS scope must be at least that subnet's length
// even where the location came from a shorter network; a resolver would
// otherwise reuse one subnet's origin for its neighbours, which hash to
// others. The scope never exceeds the source prefix (RFC 7871 §7.2.1).
func TestHashScopeCoversTheHashedSubnet(t *testing.T) {
	t.Parallel()
	w := newWorld()
	w.pool("p", origin{"a", "192.0.2.1", "", 1}, origin{"b", "192.0.2.2", "", 1},
		origin{"c", "2001:db8::1", "", 1}, origin{"d", "2001:db8::2", "", 1}).OriginSteering.Policy = pools.OriginHash
	w.lb("hash", []string{"p"}, "p").SteeringPolicy = pools.SteeringOff
	s := w.compile(t)
	for _, c := range []struct {
		ecs     string
		located int // the network that located the client
		qtype   QType
		want    int
	}{
		{"198.51.100.0/24", 16, QTypeA, 24},
		{"198.51.100.16/28", 16, QTypeA, 28},
		{"198.51.100.0/24", 24, QTypeA, 24},
		{"198.51.100.0/24", -1, QTypeA, 24},
		{"2001:db8:1:100::/56", 32, QTypeAAAA, 56},
	} {
		subnet := netip.MustParsePrefix(c.ecs)
		req := Request{Client: geodata.Location{Prefix: c.located}, Subnet: subnet, SourcePrefix: subnet.Bits(), Type: c.qtype}
		ans, tr, _ := decide(t, s, "hash.glb.example.com", req, nil)
		if ans.N == 0 || ans.Scope != c.want || tr.ECSScope != c.want || !ans.LocationDependent {
			t.Errorf("ECS %s located by /%d: %d records, scope %d (trace %d), dependent %v; want scope %d",
				c.ecs, c.located, ans.N, ans.Scope, tr.ECSScope, ans.LocationDependent, c.want)
		}
	}
}

// TestSubnetHashReadsTheSubnetOnly: the hash is of the subnet, so the host
// bits of an unmasked prefix do not move a client, while the length and
// every network bit do (a hash that dropped the low half of an IPv6
// address, or the length, would put neighbours together).
func TestSubnetHashReadsTheSubnetOnly(t *testing.T) {
	t.Parallel()
	h := func(s string) uint64 { return subnetHash(netip.MustParsePrefix(s)) }
	same := [][2]string{
		{"198.51.100.7/24", "198.51.100.0/24"},
		{"2001:db8:1:2:3:4:5:6/56", "2001:db8:1::/56"},
		{"2001:db8:1:2:3:4:5:6/100", "2001:db8:1:2:3:4:5:0/100"},
		{"10.1.2.3/0", "192.0.2.0/0"},
	}
	for _, c := range same {
		if h(c[0]) != h(c[1]) {
			t.Errorf("%s and %s hash apart; the host bits must not count", c[0], c[1])
		}
	}
	apart := [][2]string{
		{"198.51.100.0/24", "198.51.101.0/24"},
		{"198.51.100.0/24", "198.51.100.0/25"},
		{"2001:db8:1::/56", "2001:db8:1:100::/56"},
		{"2001:db8::1:0/112", "2001:db8::2:0/112"}, // the low half
		{"2001:db8::/128", "2001:db8::1/128"},
	}
	for _, c := range apart {
		if h(c[0]) == h(c[1]) {
			t.Errorf("%s and %s hash together", c[0], c[1])
		}
	}
}
