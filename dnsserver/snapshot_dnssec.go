package dnsserver

import (
	"fmt"
	"slices"

	"github.com/glb-dns/glb/dnsserver/dnssec"
	"github.com/glb-dns/glb/pools"
)

// Types the apex carries once a zone is signed.
const (
	typeRRSIG   = 46
	typeNSEC    = 47
	typeDNSKEY  = 48
	typeCDS     = 59
	typeCDNSKEY = 60
)

// compileSignedZone compiles a zone and, when it signs, its keys; prev
// (nil: none) is the zone it replaces (compileZone).
func compileSignedZone(pz *pools.Zone, keys []pools.ZoneKey, prev *zone) (*zone, error) {
	z, err := compileZone(pz, prev)
	if err != nil {
		return nil, err
	}
	if err := z.signZone(pz, keys); err != nil {
		return nil, err
	}
	return z, nil
}

// signZone prepares a zone with DNSSEC enabled and an active key in keys:
// the DNSKEY, CDS and CDNSKEY RRsets join the apex like any static RRset,
// and the zone keeps its signer. A zone without an active key yet (the
// first one is on its way through the store) stays unsigned.
func (z *zone) signZone(pz *pools.Zone, keys []pools.ZoneKey) error {
	if !pz.DNSSEC.Enabled {
		return nil
	}
	var mine []pools.ZoneKey
	for _, k := range keys {
		if k.Zone == pz.ID {
			mine = append(mine, k)
		}
	}
	sec, err := dnssec.NewZone(pools.CanonicalName(pz.Name), pz.TTL, mine)
	if err != nil || sec == nil {
		return err
	}
	z.sec = sec
	apex := z.nodes[string(z.apex)]
	for _, set := range []rrset{{typeDNSKEY, sec.DNSKEY}, {typeCDS, sec.CDS}, {typeCDNSKEY, sec.CDNSKEY}} {
		if len(set.rrs) == 0 {
			continue
		}
		if apex.rrset(set.typ) != nil {
			return fmt.Errorf("a static %d record at the apex of a signed zone", set.typ)
		}
		apex.rrsets = append(apex.rrsets, set)
	}
	return nil
}

// nsecTypes fills each node's type bitmap for compact denial, once every
// name (load balancers included) is in the zone. A load balancer name
// claims A and AAAA (and HTTPS with an https record): a NODATA answer
// removes the asked type per query.
func (z *zone) nsecTypes() {
	if z.sec == nil {
		return
	}
	for _, n := range z.nodes {
		n.types = lbTypes(n)
	}
}

// lbTypes is the type bitmap of n: its RRsets, and at a load balancer's
// name A and AAAA, and HTTPS when the load balancer answers one.
func lbTypes(n *node) []uint16 {
	ts := []uint16{typeRRSIG, typeNSEC}
	for _, s := range n.rrsets {
		ts = append(ts, s.typ)
	}
	if n.lb != nil {
		ts = append(ts, typeA, typeAAAA)
	}
	if n.https != nil {
		ts = append(ts, typeHTTPS)
	}
	slices.Sort(ts)
	return slices.Compact(ts)
}
