package zonekeys

import (
	"fmt"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/glb-dns/glb/pools"
)

// Algorithm is ECDSA P-256 with SHA-256 (RFC 6605): small keys and
// signatures, so signed answers stay well within 1232 bytes.
const Algorithm = dns.ECDSAP256SHA256

// flagsCSK is a combined signing key: zone key and secure entry point.
const flagsCSK = 257

// Generate makes a new key for a zone apex in state st.
func Generate(apex string, st pools.KeyState, now time.Time) (pools.ZoneKey, error) {
	k := dnskey(apex, pools.ZoneKey{Flags: flagsCSK, Algorithm: Algorithm}, 0)
	priv, err := k.Generate(256)
	if err != nil {
		return pools.ZoneKey{}, fmt.Errorf("generate key: %w", err)
	}
	scalar := ""
	for _, line := range strings.Split(k.PrivateKeyString(priv), "\n") {
		if v, ok := strings.CutPrefix(line, "PrivateKey: "); ok {
			scalar = v
		}
	}
	if scalar == "" {
		return pools.ZoneKey{}, fmt.Errorf("generate key: no private key in %s format", "BIND")
	}
	now = now.UTC()
	return pools.ZoneKey{
		ID: pools.NewID(), Role: pools.KeyRoleCSK, State: st, Algorithm: Algorithm, Flags: flagsCSK,
		Tag: k.KeyTag(), PublicKey: k.PublicKey, PrivateKey: scalar, CreatedOn: now, StateSince: now,
	}, nil
}

// PublicKey returns the public parts of a stored key as DNSKEY and DS
// (SHA-256 digest) in presentation format: what the API may show and a
// parent takes.
func PublicKey(apex string, zk pools.ZoneKey, ttl uint32) (dnskeyRR, ds string, err error) {
	k := dnskey(apex, zk, ttl)
	d := k.ToDS(dns.SHA256)
	if d == nil {
		return "", "", fmt.Errorf("key %s: public key does not parse", zk.ID)
	}
	d.Hdr.Ttl = ttl
	return k.String(), d.String(), nil
}

// dnskey is the DNSKEY record of zk at the apex.
func dnskey(apex string, zk pools.ZoneKey, ttl uint32) *dns.DNSKEY {
	return &dns.DNSKEY{
		Hdr:   dns.RR_Header{Name: dns.Fqdn(strings.ToLower(apex)), Rrtype: dns.TypeDNSKEY, Class: dns.ClassINET, Ttl: ttl},
		Flags: zk.Flags, Protocol: 3, Algorithm: zk.Algorithm, PublicKey: zk.PublicKey,
	}
}
