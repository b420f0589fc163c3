package embedded

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.etcd.io/bbolt"

	"github.com/glb-dns/glb/pools"
)

// CookieSecret returns the cookie secret, made or rotated in one update.
func (s *Store) CookieSecret(ctx context.Context, rotateAfter time.Duration) (pools.CookieSecret, error) {
	var out pools.CookieSecret
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(cookieBucket)
		if err != nil {
			return err
		}
		var cur pools.CookieSecret
		if v := b.Get(cookieKey); v != nil {
			if err := json.Unmarshal(v, &cur); err != nil {
				return fmt.Errorf("decode cookie secret: %w", err)
			}
		}
		next, changed := pools.NextCookieSecret(cur, s.now(), rotateAfter)
		if changed {
			if err := putJSON(b, cookieKey, next); err != nil {
				return err
			}
		}
		out = next
		return nil
	})
	return out, err
}
