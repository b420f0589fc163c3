package dnssec

import (
	"fmt"
	"strings"

	"github.com/miekg/dns"

	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/zonekeys"
)

// Zone is what signing one zone needs, built once per snapshot: its keys
// and its apex key RRsets in wire form.
type Zone struct {
	signerName string
	// Active signs every RRset.
	Active *Key
	active []*Key // Active alone, for Signers
	// All are every key in the DNSKEY RRset; each signs the DNSKEY, CDS
	// and CDNSKEY RRsets.
	All []*Key
	// DNSKEY, CDS and CDNSKEY are the apex RRsets as record tails (type,
	// class, TTL, rdlength, rdata), ready to copy after the owner name.
	DNSKEY, CDS, CDNSKEY [][]byte
}

// NewZone parses a zone's stored keys. It returns nil without error when
// none is active yet: the zone is answered unsigned until its first key
// reaches the snapshot (there is no DS at the parent before that).
func NewZone(apex string, ttl uint32, stored []pools.ZoneKey) (*Zone, error) {
	z := &Zone{signerName: dns.Fqdn(strings.ToLower(apex))}
	for _, sk := range stored {
		k, err := ParseKey(apex, sk)
		if err != nil {
			return nil, err
		}
		z.All = append(z.All, k)
		if sk.State == pools.KeyActive {
			if z.Active != nil {
				return nil, fmt.Errorf("zone %s: two active keys (%d, %d)", apex, z.Active.Tag, k.Tag)
			}
			z.Active = k
		}
		d := *k.dnskey
		d.Hdr.Ttl = ttl
		t, err := tail(&d)
		if err != nil {
			return nil, err
		}
		z.DNSKEY = append(z.DNSKEY, t)
		if zonekeys.OfferedToParent(sk) {
			cdnskey := d.ToCDNSKEY()
			ds := d.ToDS(dns.SHA256)
			ds.Hdr.Ttl = ttl
			cds := ds.ToCDS()
			t1, err := tail(cdnskey)
			if err != nil {
				return nil, err
			}
			t2, err := tail(cds)
			if err != nil {
				return nil, err
			}
			z.CDNSKEY = append(z.CDNSKEY, t1)
			z.CDS = append(z.CDS, t2)
		}
	}
	if z.Active == nil {
		return nil, nil
	}
	z.active = []*Key{z.Active}
	return z, nil
}

// tail packs a copy of rr with the root as owner and drops that one-byte
// owner; rr itself is left as it is.
func tail(rr dns.RR) ([]byte, error) {
	rr = dns.Copy(rr)
	rr.Header().Name = "."
	buf := make([]byte, dns.Len(rr)+16) // Len counts the owner "." and no compression
	n, err := dns.PackRR(rr, buf, 0, nil, false)
	if err != nil {
		return nil, fmt.Errorf("pack %s: %w", dns.TypeToString[rr.Header().Rrtype], err)
	}
	return append([]byte(nil), buf[1:n]...), nil
}

// Signers are the keys that sign an RRset of type typ: every key for the
// apex key RRsets (so that a resolver holding any offered DS validates
// them), the active key for the rest.
func (z *Zone) Signers(typ uint16) []*Key {
	switch typ {
	case dns.TypeDNSKEY, dns.TypeCDS, dns.TypeCDNSKEY:
		return z.All
	}
	return z.active
}
