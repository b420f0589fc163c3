package pools

import "encoding/json"

import "time"

// ZoneDNSSEC is a zone's dnssec object: whether its answers are signed.
// Off by default, so that a zone never starts signing (and needing a DS at
// its parent) by surprise.
type ZoneDNSSEC struct {
	Enabled bool `json:"enabled"`
}

// KeyRole says what a zone key signs. glb uses one combined signing key
// (CSK: flags 257, signs every RRset) per zone.
type KeyRole string

const KeyRoleCSK KeyRole = "csk"

// KeyState is where a key is in its rollover (RFC 7583, double-signature
// of the DNSKEY RRset and pre-publication of the new key).
type KeyState string

const (
	// KeyPublished: in the DNSKEY RRset (and its DS offered to the
	// parent), signing only the DNSKEY RRset, so that caches learn it
	// before any answer depends on it.
	KeyPublished KeyState = "published"
	// KeyActive: signs every RRset.
	KeyActive KeyState = "active"
	// KeyRetired: still in the DNSKEY RRset and signing it, so that
	// resolvers holding its DS keep validating until that DS is gone.
	KeyRetired KeyState = "retired"
)

// ZoneKey is one DNSSEC key of a zone, private part included. It travels
// from the store to the nodes (every node signs with the same keys) and
// never through the REST API, which shows only public parts.
type ZoneKey struct {
	ID        string   `json:"id"`
	Zone      string   `json:"zone"`
	Role      KeyRole  `json:"role"`
	State     KeyState `json:"state"`
	Algorithm uint8    `json:"algorithm"`
	Flags     uint16   `json:"flags"`
	Tag       uint16   `json:"tag"`
	// PublicKey is the DNSKEY public key field, base64.
	PublicKey string `json:"public_key"`
	// PrivateKey is the private scalar, base64 (BIND's PrivateKey field).
	PrivateKey string    `json:"private_key"`
	CreatedOn  time.Time `json:"created_on"`
	// StateSince is when the key entered State: a rollover step waits on it.
	StateSince time.Time `json:"state_since"`
}

// NextKeys runs a key update for both stores: fn gets a copy of the
// zone's current keys, its result is stamped with the zone, and doc is the
// document to store, nil when nothing changed.
func NextKeys(zoneID string, cur []ZoneKey, fn func([]ZoneKey) ([]ZoneKey, error)) (next []ZoneKey, doc []byte, err error) {
	next, err = fn(append([]ZoneKey(nil), cur...))
	if err != nil {
		return nil, nil, err
	}
	for i := range next {
		next[i].Zone = zoneID
	}
	if SameKeys(cur, next) {
		return cur, nil, nil
	}
	doc, err = json.Marshal(next)
	return next, doc, err
}

// SameKeys reports whether two key lists are the same: a store writes (and
// bumps the revision) only when a key update changed something.
func SameKeys(a, b []ZoneKey) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if !x.CreatedOn.Equal(y.CreatedOn) || !x.StateSince.Equal(y.StateSince) {
			return false
		}
		// Times compare with Equal (a JSON round trip drops the monotonic
		// clock and may change the location), the rest with ==.
		x.CreatedOn, x.StateSince = y.CreatedOn, y.StateSince
		if x != y {
			return false
		}
	}
	return true
}
