package geodata

import (
	"net/netip"
)

// unknown is the location of a client nothing knows about.
var unknown = Location{Prefix: -1}

// Resolve locates a client subnet: an EDNS Client Subnet, or a single
// resolver address as a full-length prefix. The subnet's
// first address is looked up in the operator networks and in the GeoIP
// database; a network overrides GeoIP for the fields it sets.
//
// Location.ASN comes from the ASN database, whatever the operator
// networks say.
//
// Location.Prefix is the longest of the prefixes that decided (the
// database network, the network entry less any more specific entry inside
// it), capped at the subnet's length: the ECS scope the answer may claim,
// since every address in that prefix resolves alike.
//
// An ECS option with source prefix 0 (the client opted out, RFC 7871 §7.1.2)
// is not a location: locate the resolver's address instead.
//
// The networks come from the configuration snapshot of the query (nil for
// none); the database is the one the Resolver holds now. A nil Resolver
// has no database. It does not allocate.
func (r *Resolver) Resolve(client netip.Prefix, nets *Networks) Location {
	if !client.IsValid() {
		return unknown
	}
	client = unmapPrefix(client)
	addr := client.Masked().Addr()

	n, prefix := nets.lookup(addr)
	var geo geoRecord
	found := false
	db, asnDB := r.databases(addr)
	if db != nil && (n == nil || !n.complete()) {
		found = db.lookup(addr, &geo)
		prefix = max(prefix, geo.bits)
	}
	var asn uint32
	if asnDB != nil {
		// The AS number is not a place: it does not make the client
		// known, and its network does not narrow Prefix (only
		// measured_latency reads it, whose answers are scoped to the
		// whole ECS subnet).
		asn = asnDB.lookupASN(addr)
	}
	if n == nil && !found {
		loc := unknown
		loc.ASN = asn
		return loc
	}

	loc := Location{ASN: asn}
	c := geo.country
	if n != nil && n.country != nil && n.country != c {
		// The operator moved the client to another country: what the
		// database says below the country level no longer applies.
		c, found = n.country, false
	}
	if c != nil {
		loc.Country, loc.Region, loc.Continent = c.code, c.region, c.continent
	}
	if found {
		loc.Subdivision = geo.sub.code
		if geo.sub.region != "" {
			loc.Region = geo.sub.region
		}
		if geo.continent != "" {
			loc.Continent = geo.continent
		}
		if geo.hasCoords {
			loc.Latitude, loc.Longitude, loc.HasCoordinates = geo.lat, geo.lon, true
		}
	}
	if n != nil {
		if n.region != "" {
			loc.Region = n.region
		}
		if n.hasCoords {
			loc.Latitude, loc.Longitude, loc.HasCoordinates = n.lat, n.lon, true
		}
		loc.Zone = n.zone
	}
	if loc.Zone == "" {
		loc.Zone = loc.Region
	}
	loc.Prefix = min(prefix, client.Bits())
	return loc
}
