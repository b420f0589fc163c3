package geodata

import "net/netip"

// Locator places clients with a GeoIP database (a nil Resolver: none) and
// the operator networks of one configuration (nil: none). It is what the
// DNS servers, explain and the traffic preview all locate a client with.
type Locator struct {
	Resolver *Resolver
	Networks *Networks
}

// Locate is Resolve with the locator's database and networks.
func (l Locator) Locate(client netip.Prefix) Location {
	return l.Resolver.Resolve(client, l.Networks)
}
