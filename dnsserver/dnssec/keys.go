package dnssec

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
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
	k := &dns.DNSKEY{
		Hdr:   dns.RR_Header{Name: dns.Fqdn(strings.ToLower(apex)), Rrtype: dns.TypeDNSKEY, Class: dns.ClassINET},
		Flags: flagsCSK, Protocol: 3, Algorithm: Algorithm,
	}
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

// Key is a parsed zone key, ready to sign.
type Key struct {
	Tag    uint16
	State  pools.KeyState
	dnskey *dns.DNSKEY
	signer crypto.Signer
	// id identifies the key in the signature cache; it is derived from the
	// public key, so the same key in a new snapshot finds its signatures.
	id uint64
}

// ParseKey reads a stored key for the zone apex.
func ParseKey(apex string, zk pools.ZoneKey) (*Key, error) {
	if zk.Algorithm != Algorithm {
		return nil, fmt.Errorf("key %s: algorithm %d, want %d", zk.ID, zk.Algorithm, Algorithm)
	}
	k := &dns.DNSKEY{
		Hdr:   dns.RR_Header{Name: dns.Fqdn(strings.ToLower(apex)), Rrtype: dns.TypeDNSKEY, Class: dns.ClassINET},
		Flags: zk.Flags, Protocol: 3, Algorithm: zk.Algorithm, PublicKey: zk.PublicKey,
	}
	priv, err := k.NewPrivateKey("Private-key-format: v1.3\nAlgorithm: 13 (ECDSAP256SHA256)\nPrivateKey: " + zk.PrivateKey + "\n")
	if err != nil {
		return nil, fmt.Errorf("key %s: private key: %w", zk.ID, err)
	}
	signer, ok := priv.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("key %s: private key of type %T cannot sign", zk.ID, priv)
	}
	// The stored public part must be the private key's: a mismatch would
	// sign with a key no resolver can find.
	if err := checkPublic(signer, k.PublicKey); err != nil {
		return nil, fmt.Errorf("key %s: %w", zk.ID, err)
	}
	if tag := k.KeyTag(); tag != zk.Tag {
		return nil, fmt.Errorf("key %s: stored tag %d, computed %d", zk.ID, zk.Tag, tag)
	}
	sum := sha256.Sum256([]byte(k.PublicKey))
	return &Key{Tag: zk.Tag, State: zk.State, dnskey: k, signer: signer, id: binary.BigEndian.Uint64(sum[:])}, nil
}

// checkPublic reports whether want (a DNSKEY public key field: X ‖ Y,
// RFC 6605 §4) is signer's public key.
func checkPublic(signer crypto.Signer, want string) error {
	pub, ok := signer.Public().(*ecdsa.PublicKey)
	if !ok {
		return errors.New("not an ECDSA key")
	}
	b, err := pub.Bytes()
	if err != nil {
		return err
	}
	w, err := base64.StdEncoding.DecodeString(want)
	if err != nil || !bytes.Equal(b[1:], w) {
		return errors.New("public key is not the private key's")
	}
	return nil
}

// DNSKEY is the key's DNSKEY record (owner the apex, TTL 0).
func (k *Key) DNSKEY() *dns.DNSKEY { return k.dnskey }

// DS is the key's DS record with a SHA-256 digest, in presentation format,
// as a parent takes it.
func (k *Key) DS(ttl uint32) string {
	ds := k.dnskey.ToDS(dns.SHA256)
	ds.Hdr.Ttl = ttl
	return ds.String()
}

// PublicKey returns the public parts of a stored key as DNSKEY and DS in
// presentation format: what the API may show.
func PublicKey(apex string, zk pools.ZoneKey, ttl uint32) (dnskey, ds string, err error) {
	k := &dns.DNSKEY{
		Hdr:   dns.RR_Header{Name: dns.Fqdn(strings.ToLower(apex)), Rrtype: dns.TypeDNSKEY, Class: dns.ClassINET, Ttl: ttl},
		Flags: zk.Flags, Protocol: 3, Algorithm: zk.Algorithm, PublicKey: zk.PublicKey,
	}
	d := k.ToDS(dns.SHA256)
	if d == nil {
		return "", "", fmt.Errorf("key %s: public key does not parse", zk.ID)
	}
	d.Hdr.Ttl = ttl
	return k.String(), d.String(), nil
}
