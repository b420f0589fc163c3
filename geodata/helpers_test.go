package geodata

import "net/netip"

// ResolveAddr locates a single address as a full-length prefix: how the
// tests ask about one address.
func (r *Resolver) ResolveAddr(addr netip.Addr, nets *Networks) Location {
	if !addr.IsValid() {
		return unknown
	}
	addr = addr.Unmap()
	return r.Resolve(netip.PrefixFrom(addr, addr.BitLen()), nets)
}

// Loads counts the databases loaded and the files rejected since start.
func (r *Resolver) Loads() (loaded, rejected uint64) {
	return r.loads.Load(), r.rejections.Load()
}
