package steering

import "net/netip"

// ClientSubnet says which address locates the client of a query and which
// subnet hash steering hashes on. src is the resolver's address; ecs is
// the query's EDNS Client Subnet (invalid when absent). The ECS subnet is
// used when present and the load balancer's prefer_ecs allows it;
// sourcePrefix is then its length, else -1, so that an answer that did not
// use the ECS subnet is echoed with scope 0 (RFC 7871 §7.2.1).
func (l *LB) ClientSubnet(src netip.Addr, ecs netip.Prefix) (locate, subnet netip.Prefix, sourcePrefix int) {
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
