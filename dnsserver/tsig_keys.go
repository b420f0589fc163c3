package dnsserver

import (
	"context"
	"errors"
	"sync"

	"github.com/glb-dns/glb/pools"
)

// TSIG keys are looked up once per configuration revision, not once per
// signed message: a key's write moves the revision, and the node then
// publishes a snapshot of the new revision, which drops every key looked
// up before it. A signed message thus learns of a key's change when
// unsigned ones learn of a record's (the snapshot), and signed queries are
// answered without a store round trip each, and while the store is away.

// maxCachedKeys bounds the keys (and unknown names) kept per revision, so
// that a flood of made-up key names cannot grow the cache.
const maxCachedKeys = 4096

// keyCache is the keys looked up at one snapshot revision.
type keyCache struct {
	rev int64
	mu  sync.Mutex
	m   map[string]cachedKey
}

type cachedKey struct {
	key   pools.TSIGKey
	known bool
}

// keyLookup is what checkTSIG needs: a key by name, pools.ErrNotFound
// when there is none.
type keyLookup interface {
	TSIGKey(ctx context.Context, name string) (pools.TSIGKey, error)
}

// snapshotKeys looks keys up in the store through the cache of the
// published snapshot's revision.
type snapshotKeys struct {
	s *Server
}

// tsigKeys is the key lookup of signed messages; nil without a store.
func (s *Server) tsigKeys() keyLookup {
	if s.cfg.Updates == nil {
		return nil
	}
	return snapshotKeys{s}
}

func (k snapshotKeys) TSIGKey(ctx context.Context, name string) (pools.TSIGKey, error) {
	s := k.s
	lv := s.live.Load()
	if lv == nil {
		return s.cfg.Updates.TSIGKey(ctx, name)
	}
	rev := lv.snap.steer.Revision()
	c := s.keys.Load()
	for c == nil || c.rev != rev {
		fresh := &keyCache{rev: rev, m: map[string]cachedKey{}}
		if s.keys.CompareAndSwap(c, fresh) {
			c = fresh
		} else {
			c = s.keys.Load()
		}
	}
	c.mu.Lock()
	e, ok := c.m[name]
	c.mu.Unlock()
	if ok {
		if !e.known {
			return pools.TSIGKey{}, pools.ErrNotFound
		}
		return e.key, nil
	}
	key, err := s.cfg.Updates.TSIGKey(ctx, name)
	if err != nil && !errors.Is(err, pools.ErrNotFound) {
		return key, err
	}
	c.mu.Lock()
	if len(c.m) < maxCachedKeys {
		c.m[name] = cachedKey{key: key, known: err == nil}
	}
	c.mu.Unlock()
	return key, err
}

// keysCached is the cache's size, for tests.
func (s *Server) keysCached() int {
	c := s.keys.Load()
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
