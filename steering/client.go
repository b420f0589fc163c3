package steering

import (
	"net/netip"

	"github.com/glb-dns/glb/geodata"
)

// Locator places a client: the prefix is the ECS subnet, or the resolver's
// address as a full-length prefix. geodata.Locator (GeoIP and the operator
// networks) is the one glbd uses.
type Locator interface {
	Locate(client netip.Prefix) geodata.Location
}

// FillRequest fills req, the request Decide reads, for a query to the
// load balancer from the resolver at src with the EDNS Client Subnet ecs
// (invalid when absent). It writes in place rather than returning a
// Request because the answer path would copy the client's location
// twice more per query. It is the one way a query's context is built: the
// DNS servers, explain and the traffic preview call it, so that the three
// cannot answer the same client differently. loc may be nil (every client
// is then of unknown location). located is the prefix that placed the
// client.
//
// An ECS subnet counts only with a source prefix above zero: zero means the
// client opted out (RFC 7871 §7.1.2), so the resolver's address locates it.
func (l *LB) FillRequest(req *Request, src netip.Addr, ecs netip.Prefix, qtype QType, loc Locator) (located netip.Prefix) {
	if ecs.Bits() <= 0 {
		ecs = netip.Prefix{}
	}
	located, req.Subnet, req.SourcePrefix = l.clientSubnet(src, ecs)
	req.Type = qtype
	req.Client = geodata.Location{Prefix: -1}
	if loc != nil && located.IsValid() {
		req.Client = loc.Locate(located)
	}
	return located
}

// clientSubnet says which address locates the client of a query and which
// subnet hash steering hashes on. The ECS subnet is used when present and
// the load balancer's prefer_ecs allows it; sourcePrefix is then its
// length, else -1, so that an answer that did not use the ECS subnet is
// echoed with scope 0 (RFC 7871 §7.2.1).
func (l *LB) clientSubnet(src netip.Addr, ecs netip.Prefix) (locate, subnet netip.Prefix, sourcePrefix int) {
	if ecs.IsValid() && l.UseECS() {
		ecs = ecs.Masked()
		return ecs, ecs, ecs.Bits()
	}
	src = src.Unmap()
	bits, hashBits := 128, 56
	if src.Is4() {
		bits, hashBits = 32, 24
	}
	locate = netip.PrefixFrom(src, bits)
	subnet, _ = src.Prefix(hashBits)
	return locate, subnet, -1
}
