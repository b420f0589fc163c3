package pools

import (
	"context"
	"crypto/rand"
	"time"
)

// CookieSecretLen is the size of a DNS cookie secret: a SipHash-2-4 key.
const CookieSecretLen = 16

// CookieSecret is the cluster's DNS server cookie secret (RFC 9018 §4.4:
// every server of an anycast or load-balanced set shares it). Previous is
// the secret before the last rotation, still accepted; nil before any.
type CookieSecret struct {
	Current   []byte
	Previous  []byte
	RotatedOn time.Time
}

// CookieSecretStore keeps the cookie secret beside the configuration. It
// is not a REST object: nodes make it on first use and rotate it.
type CookieSecretStore interface {
	// CookieSecret returns the secret, creating it when there is none.
	// When rotateAfter > 0 and the current secret is older, it becomes
	// the previous one and a new one is made, in the same transaction:
	// nodes asking at once rotate once.
	CookieSecret(ctx context.Context, rotateAfter time.Duration) (CookieSecret, error)
}

// NewCookieSecret returns a random secret.
func NewCookieSecret() []byte {
	b := make([]byte, CookieSecretLen)
	_, _ = rand.Read(b)
	return b
}

// NextCookieSecret is the rule both stores apply to the stored secret
// (cur; zero value when there is none) at now: the secret to keep, and
// whether it changed.
func NextCookieSecret(cur CookieSecret, now time.Time, rotateAfter time.Duration) (CookieSecret, bool) {
	switch {
	case len(cur.Current) != CookieSecretLen:
		return CookieSecret{Current: NewCookieSecret(), RotatedOn: now}, true
	case rotateAfter > 0 && now.Sub(cur.RotatedOn) >= rotateAfter:
		return CookieSecret{Current: NewCookieSecret(), Previous: cur.Current, RotatedOn: now}, true
	}
	return cur, false
}
