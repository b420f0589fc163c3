package rum

import "net/netip"

// Network cuts an address to the client network RUM keeps: its /24
// (IPv4) or /48 (IPv6). Nothing finer than this is ever stored.
func Network(a netip.Addr) netip.Prefix {
	a = a.Unmap()
	bits := 48
	if a.Is4() {
		bits = 24
	}
	p, _ := a.Prefix(bits)
	return p
}
