package pools

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// KindTSIGKey is the kind of TSIG keys in the audit log; its object id is
// the key's name.
const KindTSIGKey Kind = "tsig_keys"

// TSIG algorithms a key may use (RFC 8945 §6: HMAC-SHA256 is mandatory;
// SHA-1 and MD5 are not offered).
const (
	TSIGHMACSHA256 = "hmac-sha256"
	TSIGHMACSHA512 = "hmac-sha512"
)

// TSIGAlgorithms lists the accepted algorithms.
var TSIGAlgorithms = []string{TSIGHMACSHA256, TSIGHMACSHA512}

// How a grant's name matches the owner of a record being updated, in the
// spirit of BIND's update-policy rule types name, subdomain and the
// _acme-challenge label of ACME DNS-01 (RFC 8555 §8.4).
const (
	// MatchExact: the owner is the grant's name.
	MatchExact = "exact"
	// MatchSubtree: the owner is the grant's name or below it.
	MatchSubtree = "subtree"
	// MatchACMEChallenge: the owner is _acme-challenge.<name>.
	MatchACMEChallenge = "acme-challenge"
)

// TSIGMatches lists the grant matches.
var TSIGMatches = []string{MatchExact, MatchSubtree, MatchACMEChallenge}

// TSIGUpdateTypes are the record types a grant may name: the static
// record types of a zone that an update may change (SOA and the apex NS
// never; see the DNS server's UPDATE processing).
var TSIGUpdateTypes = []string{"A", "AAAA", "CNAME", "TXT", "MX", "CAA", "NS", "DS", "SRV", "SVCB", "HTTPS"}

// ActorTSIGPrefix starts the audit actor of a write made by a DNS UPDATE
// signed with a TSIG key: "tsig:" and the key's name.
const ActorTSIGPrefix = "tsig:"

// MethodDNSUpdate is the audit method of a write made by DNS UPDATE.
const MethodDNSUpdate = "UPDATE"

// TSIGKey is a shared secret with which DNS UPDATE messages are signed
// (RFC 8945), and what it may change. The store keeps the secret itself,
// since checking an HMAC needs it; the API shows it once, on creation.
type TSIGKey struct {
	// Name is the key's DNS name as clients sign with it ("acme"),
	// lower case, without a trailing dot.
	Name      string      `json:"name"`
	Algorithm string      `json:"algorithm"`
	Grants    []TSIGGrant `json:"grants"`
	CreatedOn time.Time   `json:"created_on"`
	// Secret is the base64 key; never shown but on creation.
	Secret string `json:"-"`
}

// TSIGGrant lets a key change records of the given types at the names
// the grant matches, in one zone.
type TSIGGrant struct {
	// Zone is the id of the zone.
	Zone  string   `json:"zone"`
	Name  string   `json:"name"`
	Match string   `json:"match"`
	Types []string `json:"types"`
}

// Validate checks a key to be created on its own, listing every fault.
func (k *TSIGKey) Validate() error {
	var e errs
	if k.Name == "" {
		e.add("name", "required")
	} else if msg := checkHostname(k.Name, false); msg != "" {
		e.add("name", "%s", msg)
	}
	if !slices.Contains(TSIGAlgorithms, k.Algorithm) {
		e.add("algorithm", "%q is not one of %s", k.Algorithm, strings.Join(TSIGAlgorithms, ", "))
	}
	// A key without grants changes nothing by UPDATE: it signs zone
	// transfers (a zone's transfer.tsig_keys).
	for i, g := range k.Grants {
		p := fmt.Sprintf("grants[%d]", i)
		if g.Zone == "" {
			e.add(p+".zone", "required")
		}
		if msg := checkHostname(g.Name, false); msg != "" {
			e.add(p+".name", "%s", msg)
		}
		if !slices.Contains(TSIGMatches, g.Match) {
			e.add(p+".match", "%q is not one of %s", g.Match, strings.Join(TSIGMatches, ", "))
		}
		if len(g.Types) == 0 {
			e.add(p+".types", "at least one of %s", strings.Join(TSIGUpdateTypes, ", "))
		}
		for j, t := range g.Types {
			if !slices.Contains(TSIGUpdateTypes, t) {
				e.add(fmt.Sprintf("%s.types[%d]", p, j), "%q is not one of %s", t, strings.Join(TSIGUpdateTypes, ", "))
			}
		}
	}
	return e.err()
}

// Prepare readies a key for storing at now: canonical names and types,
// created now, and valid on its own.
func (k *TSIGKey) Prepare(now time.Time) error {
	k.Name = CanonicalName(k.Name)
	k.CreatedOn = StoreTime(now)
	if k.Grants == nil {
		k.Grants = []TSIGGrant{}
	}
	for i := range k.Grants {
		g := &k.Grants[i]
		g.Name = CanonicalName(g.Name)
		for j := range g.Types {
			g.Types[j] = strings.ToUpper(g.Types[j])
		}
	}
	return k.Validate()
}

// CheckZones checks the grants against the stored zones, inside the
// write's transaction: each zone exists and the grant's name is inside it.
func (k *TSIGKey) CheckZones(tx Tx) error {
	var e errs
	for i, g := range k.Grants {
		o, err := tx.Get(KindZone, g.Zone)
		if err != nil {
			if errors.Is(err, ErrNotFound) {
				e.add(fmt.Sprintf("grants[%d].zone", i), "no zone %q", g.Zone)
				continue
			}
			return err
		}
		zone := CanonicalName(o.(*Zone).Name)
		if !InZone(g.Name, zone) {
			e.add(fmt.Sprintf("grants[%d].name", i), "%q is not inside zone %q", g.Name, zone)
		}
	}
	return e.err()
}

// Allows reports whether the key may change records of type typ at owner
// (canonical) in the zone with id zoneID.
func (k *TSIGKey) Allows(zoneID, owner, typ string) bool {
	for _, g := range k.Grants {
		if g.Zone != zoneID || !slices.Contains(g.Types, typ) {
			continue
		}
		switch g.Match {
		case MatchExact:
			if owner == g.Name {
				return true
			}
		case MatchSubtree:
			if InZone(owner, g.Name) {
				return true
			}
		case MatchACMEChallenge:
			if owner == "_acme-challenge."+g.Name {
				return true
			}
		}
	}
	return false
}

// NewTSIGSecret returns a fresh secret for alg, base64 as nsupdate -y and
// BIND's key files take it: as many random bytes as the hash's output
// (RFC 2104 §3: a longer key adds nothing).
func NewTSIGSecret(alg string) string {
	n := 32
	if alg == TSIGHMACSHA512 {
		n = 64
	}
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails: crypto/rand panics instead
	return base64.StdEncoding.EncodeToString(b)
}

// TSIGKeyStore keeps the TSIG keys. Creating and deleting a key bumps the
// global revision and is audited, like any other write; the audit entry
// never holds the secret.
type TSIGKeyStore interface {
	// CreateTSIGKey stores k (with its Secret); *ValidationError when the
	// name is taken, a grant's zone does not exist, or k is invalid.
	CreateTSIGKey(ctx context.Context, k TSIGKey) (TSIGKey, error)
	// TSIGKeys lists every key by name, without secrets.
	TSIGKeys(ctx context.Context) ([]TSIGKey, error)
	// TSIGKey returns the key named name (canonical), with its secret, or
	// ErrNotFound.
	TSIGKey(ctx context.Context, name string) (TSIGKey, error)
	// DeleteTSIGKey removes a key; ErrNotFound when there is none.
	DeleteTSIGKey(ctx context.Context, name string) error
}
