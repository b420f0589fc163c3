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

	"github.com/miekg/dns"

	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/zonekeys"
)

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
	if zk.Algorithm != zonekeys.Algorithm {
		return nil, fmt.Errorf("key %s: algorithm %d, want %d", zk.ID, zk.Algorithm, zonekeys.Algorithm)
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
