package embedded

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.etcd.io/bbolt"

	"github.com/glb-dns/glb/pools"
)

func feedKey(w *pools.FeedWord) []byte {
	return appendName(appendName(appendName(nil, w.Pool), w.Origin), w.Monitor)
}

func decodeFeed(v []byte) (pools.FeedWord, error) {
	var w pools.FeedWord
	if err := json.Unmarshal(v, &w); err != nil {
		return w, fmt.Errorf("decode feed word: %w", err)
	}
	return w, nil
}

// SetFeeds stores and audits words in one transaction; see
// pools.FeedStore.
func (s *Store) SetFeeds(ctx context.Context, words []pools.FeedWord) ([]pools.FeedWord, error) {
	if len(words) == 0 {
		return nil, nil
	}
	out := make([]pools.FeedWord, 0, len(words))
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(feedBucket)
		if err != nil {
			return err
		}
		out = out[:0]
		for _, w := range words {
			w.At, w.Expires = pools.StoreTime(w.At), pools.StoreTime(w.Expires)
			k := feedKey(&w)
			var before *pools.FeedWord
			if v := b.Get(k); v != nil {
				old, err := decodeFeed(v)
				if err != nil {
					return err
				}
				before = &old
			}
			w = pools.MergeFeed(before, w)
			out = append(out, w)
			v, err := json.Marshal(w)
			if err != nil {
				return err
			}
			if err := b.Put(k, v); err != nil {
				return err
			}
			if before != nil && before.Same(&w) {
				continue // a renewal: only the expiry moved
			}
			e, err := pools.FeedAudit(ctx, before, w)
			if err != nil {
				return err
			}
			if err := appendAudit(tx, &e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.watchers.Notify(pools.Change{Feeds: true})
	return out, nil
}

// Feeds returns the words stored; see pools.FeedStore.
func (s *Store) Feeds(ctx context.Context, pool string) ([]pools.FeedWord, error) {
	out := []pools.FeedWord{}
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(feedBucket)
		if b == nil {
			return nil
		}
		var prefix []byte
		if pool != "" {
			prefix = appendName(nil, pool)
		}
		c := b.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			w, err := decodeFeed(v)
			if err != nil {
				return err
			}
			out = append(out, w)
		}
		return nil
	})
	// Keys sort by length-prefixed names: put them in name order.
	pools.SortFeeds(out)
	return out, err
}

// PruneFeeds deletes words that expired before before.
func (s *Store) PruneFeeds(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(feedBucket)
		if b == nil {
			return nil
		}
		var gone [][]byte
		err := b.ForEach(func(k, v []byte) error {
			w, err := decodeFeed(v)
			if err != nil {
				return err
			}
			if w.Expires.Before(before) {
				gone = append(gone, bytes.Clone(k))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range gone {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		n = int64(len(gone))
		return nil
	})
	return n, err
}
