package pools

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"slices"
	"time"
)

// Scope is what a token may do. Scopes nest: write includes read,
// integrations includes write, admin includes them all. Feed stands
// aside: it may only feed health and load in (and write, and what
// includes it, may too), so that a monitoring system holds a credential
// that can mark origins down and do nothing else.
type Scope string

const (
	// ScopeRead may GET everything but tokens (explain, health, audit).
	ScopeRead Scope = "read"
	// ScopeWrite may change the configuration.
	ScopeWrite Scope = "write"
	// ScopeIntegrations may, besides, manage what makes glbd send a
	// request to a URL the request names: notification subscriptions
	// (and read them and their deliveries), rollout guards.
	ScopeIntegrations Scope = "integrations"
	// ScopeAdmin may manage tokens.
	ScopeAdmin Scope = "admin"
	// ScopeFeed may only feed health and load in: PUT
	// /pools/{id}/origins/{name}/feed and POST /feeds/alertmanager.
	ScopeFeed Scope = "feed"
)

// Scopes lists the scopes: the nested ones from least to most powerful,
// then feed.
var Scopes = []Scope{ScopeRead, ScopeWrite, ScopeIntegrations, ScopeAdmin, ScopeFeed}

// nested are the scopes that include those before them.
var nested = Scopes[:4]

// includes reports whether a token with scope have may do what s allows.
func (have Scope) includes(s Scope) bool {
	if have == s {
		return true
	}
	if s == ScopeFeed {
		s = ScopeWrite // feeding is a write of a narrow kind
	}
	h, n := slices.Index(nested, have), slices.Index(nested, s)
	return h >= 0 && n >= 0 && h >= n
}

// Token is a named API credential. The store keeps only the SHA-256 of its
// secret: a leaked database does not leak working tokens, and a 256-bit
// random secret needs no slow hash.
type Token struct {
	Name      string     `json:"name"`
	Scopes    []Scope    `json:"scopes"`
	CreatedOn time.Time  `json:"created_on"`
	ExpiresOn *time.Time `json:"expires_on"`
	LastUsed  *time.Time `json:"last_used_on"`
	// Zones, when set, limits the token to these zones (ids): their
	// load balancers and the pools and monitors those use; nothing
	// else. Only a read or write token may be scoped to zones.
	Zones []string `json:"zones,omitempty"`
	// Hash is the SHA-256 of the secret; never shown.
	Hash []byte `json:"-"`
}

// Allows reports whether the token's scopes include s.
func (t *Token) Allows(s Scope) bool {
	for _, have := range t.Scopes {
		if have.includes(s) {
			return true
		}
	}
	return false
}

// Expired reports whether the token has expired at now.
func (t *Token) Expired(now time.Time) bool {
	return t.ExpiresOn != nil && !now.Before(*t.ExpiresOn)
}

// Validate checks a token to be created, listing every fault.
func (t *Token) Validate(now time.Time) error {
	var e errs
	switch {
	case t.Name == "":
		e.add("name", "required")
	case t.Name == ActorBootstrap || t.Name == ActorAnonymous || t.Name == ActorCluster || t.Name == ActorSystem:
		e.add("name", "%q is reserved", t.Name)
	default:
		if msg := checkID(t.Name); msg != "" {
			e.add("name", "%s", msg)
		}
	}
	if len(t.Scopes) == 0 {
		e.add("scopes", "at least one of read, write, integrations, admin, feed")
	}
	for i, s := range t.Scopes {
		if !slices.Contains(Scopes, s) {
			e.add(fmt.Sprintf("scopes[%d]", i), "%q is not one of read, write, integrations, admin, feed", s)
		}
	}
	if len(t.Zones) > 0 && t.Allows(ScopeIntegrations) {
		e.add("scopes", "a token scoped to zones has read or write: integrations and admin reach beyond a zone")
	}
	for i, z := range t.Zones {
		if z == "" {
			e.add(fmt.Sprintf("zones[%d]", i), "empty: a zone id")
		} else if msg := checkID(z); msg != "" {
			e.add(fmt.Sprintf("zones[%d]", i), "%s", msg)
		} else if slices.Index(t.Zones, z) < i {
			e.add(fmt.Sprintf("zones[%d]", i), "%q is listed twice", z)
		}
	}
	if t.ExpiresOn != nil && !t.ExpiresOn.After(now) {
		e.add("expires_on", "must be in the future")
	}
	return e.err()
}

// Prepare readies a token for storing at now: created now, never used,
// times at the store's precision, and valid.
func (t *Token) Prepare(now time.Time) error {
	t.CreatedOn, t.LastUsed = StoreTime(now), nil
	if t.ExpiresOn != nil {
		e := StoreTime(*t.ExpiresOn)
		t.ExpiresOn = &e
	}
	return t.Validate(now)
}

// NewTokenSecret returns a fresh secret (256 random bits, URL-safe) and
// its hash.
func NewTokenSecret() (secret string, hash []byte) {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails: crypto/rand panics instead
	secret = "glb_" + base64.RawURLEncoding.EncodeToString(b[:])
	return secret, HashToken(secret)
}

// HashToken is what the store keeps of a secret.
func HashToken(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// TokenStore keeps the API tokens. Creating and deleting a token bumps
// the global revision and is audited, like any other write.
type TokenStore interface {
	// CreateToken stores t (with its Hash); *ValidationError when the
	// name is taken or t is invalid.
	CreateToken(ctx context.Context, t Token) (Token, error)
	// Tokens lists every token by name.
	Tokens(ctx context.Context) ([]Token, error)
	// Token returns the token named name, or ErrNotFound.
	Token(ctx context.Context, name string) (Token, error)
	// TokenByHash returns the token whose secret hashes to hash, or
	// ErrNotFound.
	TokenByHash(ctx context.Context, hash []byte) (Token, error)
	// DeleteToken revokes a token; ErrNotFound when there is none.
	DeleteToken(ctx context.Context, name string) error
	// TouchToken records that a token was used at at.
	TouchToken(ctx context.Context, name string, at time.Time) error
}
