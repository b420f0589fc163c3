package geodata

import (
	"fmt"
	"net/netip"

	"github.com/gaissmai/bart"
	"go4.org/netipx"

	"github.com/glb-dns/glb/pools"
)

// Networks is the operator's network table: longest-prefix match from a
// client address to what the operator says about it. It is immutable once
// built and safe for concurrent lookups; a configuration change builds a
// new one. The nil *Networks is an empty table.
type Networks struct {
	// table holds, rather than the networks themselves, the pieces of each
	// network that no more specific network overlaps (and the pieces of
	// the address space outside every network), so that one lookup gives
	// the longest prefix over which the answer cannot change: the ECS
	// scope. A network without networks inside it is one piece.
	table bart.Table[cell]
	count int
}

type cell struct {
	net  *network // nil outside every network
	bits int
}

// network is one entry with its country interned, so that a lookup copies
// only string headers.
type network struct {
	zone      string
	region    string
	country   *country
	lat, lon  float64
	hasCoords bool
}

// complete reports whether the network sets everything a location has, so
// that the GeoIP database has nothing to add.
func (n *network) complete() bool {
	return n.zone != "" && n.region != "" && n.country != nil && n.hasCoords
}

// NewNetworks compiles the operator networks of a configuration. IPv4-mapped
// IPv6 prefixes become IPv4 ones. When two entries have the same prefix the
// first one wins, so that the result does not depend on storage order
// beyond the configuration's own. It fails only on a prefix that does not
// parse, which validation rejects before anything is stored.
func NewNetworks(list []pools.Network) (*Networks, error) {
	var byPrefix bart.Table[*network]
	for i := range list {
		src := &list[i]
		p, err := netip.ParsePrefix(src.CIDR)
		if err != nil {
			return nil, fmt.Errorf("network %s: %w", src.ID, err)
		}
		p = unmapPrefix(p).Masked()
		if _, dup := byPrefix.Get(p); dup {
			continue
		}
		e := &network{zone: src.Zone, region: src.Region, country: countryOf(src.Country)}
		if src.Latitude != nil && src.Longitude != nil {
			e.lat, e.lon, e.hasCoords = *src.Latitude, *src.Longitude, true
		}
		byPrefix.Insert(p, e)
	}
	n := &Networks{count: byPrefix.Size()}
	if n.count == 0 {
		return n, nil
	}
	for _, root := range []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0")} {
		if _, ok := byPrefix.Get(root); !ok {
			n.insertPieces(&byPrefix, root, nil)
		}
	}
	for p, e := range byPrefix.All() {
		n.insertPieces(&byPrefix, p, e)
	}
	return n, nil
}

// insertPieces inserts p minus every more specific network inside it.
func (n *Networks) insertPieces(all *bart.Table[*network], p netip.Prefix, e *network) {
	var b *netipx.IPSetBuilder
	for sub := range all.Subnets(p) {
		if sub == p {
			continue
		}
		if b == nil {
			b = new(netipx.IPSetBuilder)
			b.AddPrefix(p)
		}
		b.RemovePrefix(sub)
	}
	if b == nil { // nothing inside: the network is one piece
		n.table.Insert(p, cell{net: e, bits: p.Bits()})
		return
	}
	set, err := b.IPSet()
	if err != nil {
		// Only invalid prefixes make the builder fail; p and its subnets
		// are valid. Fall back to the network itself, a shorter scope.
		n.table.Insert(p, cell{net: e, bits: p.Bits()})
		return
	}
	for _, piece := range set.Prefixes() {
		n.table.Insert(piece, cell{net: e, bits: piece.Bits()})
	}
}

// Len is the number of distinct network prefixes in the table.
func (n *Networks) Len() int {
	if n == nil {
		return 0
	}
	return n.count
}

// lookup returns the network containing addr (already unmapped), nil for
// none, and the length of the longest prefix around addr that the table
// treats alike (0 for an empty table).
func (n *Networks) lookup(addr netip.Addr) (*network, int) {
	if n == nil {
		return nil, 0
	}
	c, _ := n.table.Lookup(addr)
	return c.net, c.bits
}

// unmapPrefix turns ::ffff:a.b.c.d/n (n >= 96) into a.b.c.d/(n-96), so that
// IPv4 clients match IPv4 entries whichever way they arrive.
func unmapPrefix(p netip.Prefix) netip.Prefix {
	a := p.Addr()
	if a.Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return netip.PrefixFrom(a.WithZone(""), p.Bits())
}
