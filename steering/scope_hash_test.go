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
