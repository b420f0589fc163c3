package api

import (
	"context"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/glb-dns/glb/pools"
)

// tokenTTL is how long a node trusts a token it looked up: a token
// revoked on another node is refused here within this time.
const tokenTTL = 500 * time.Millisecond

// touchEvery bounds how often a token's last use is written back.
const touchEvery = time.Minute

// maxCachedTokens bounds the cache against callers sending many secrets.
const maxCachedTokens = 10000

// tokenCache keeps recently used tokens by hash for tokenTTL, so that a
// busy client costs one store read per TTL rather than one per request.
// Unknown secrets are not cached: a token created on another node works
// at once.
type tokenCache struct {
	store pools.TokenStore
	now   func() time.Time
	log   *slog.Logger

	mu sync.Mutex
	m  map[[32]byte]cachedToken
}

type cachedToken struct {
	tok pools.Token
	at  time.Time
}

func newTokenCache(store pools.TokenStore, now func() time.Time, log *slog.Logger) *tokenCache {
	return &tokenCache{store: store, now: now, log: log, m: map[[32]byte]cachedToken{}}
}

// lookup returns the token whose secret hashes to hash, or ErrNotFound.
func (c *tokenCache) lookup(ctx context.Context, hash []byte) (pools.Token, error) {
	key := [32]byte(hash)
	now := c.now()
	c.mu.Lock()
	ct, ok := c.m[key]
	c.mu.Unlock()
	if ok && now.Sub(ct.at) < tokenTTL {
		return ct.tok, nil
	}
	tok, err := c.store.TokenByHash(ctx, hash)
	if err != nil {
		c.forget(key)
		return pools.Token{}, err
	}
	// The store found it by hash; compare again in constant time so that
	// no lookup shortcut can let a different secret through.
	if subtle.ConstantTimeCompare(tok.Hash, hash) != 1 {
		c.forget(key)
		return pools.Token{}, fmt.Errorf("token: %w", pools.ErrNotFound)
	}
	c.mu.Lock()
	if len(c.m) >= maxCachedTokens {
		clear(c.m)
	}
	c.m[key] = cachedToken{tok: tok, at: now}
	c.mu.Unlock()
	if tok.LastUsed == nil || now.Sub(*tok.LastUsed) >= touchEvery {
		go c.touch(tok.Name, now)
	}
	return tok, nil
}

func (c *tokenCache) forget(key [32]byte) {
	c.mu.Lock()
	delete(c.m, key)
	c.mu.Unlock()
}

// invalidate drops every cached token, after a revocation on this node.
func (c *tokenCache) invalidate() {
	c.mu.Lock()
	clear(c.m)
	c.mu.Unlock()
}

func (c *tokenCache) touch(name string, at time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.store.TouchToken(ctx, name, at); err != nil {
		c.log.Debug("recording a token's last use", "token", name, "err", err)
	}
}
