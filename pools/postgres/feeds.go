package postgres

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/glb-dns/glb/pools"
)

// FeedChannel is notified, in the writing transaction, when words are
// fed in (migration 024 keeps them in glb_feeds).
const FeedChannel = "glb_feeds"

const feedColumns = "pool, origin, monitor, up, reason, load, source, received_at, expires_at, alerts"

func scanFeed(row pgx.CollectableRow) (pools.FeedWord, error) {
	var w pools.FeedWord
	var alerts []byte
	err := row.Scan(&w.Pool, &w.Origin, &w.Monitor, &w.Up, &w.Reason, &w.Load, &w.Source, &w.At, &w.Expires, &alerts)
	w.At, w.Expires = w.At.UTC(), w.Expires.UTC()
	if err == nil && alerts != nil {
		err = json.Unmarshal(alerts, &w.Alerts)
	}
	return w, err
}

// SetFeeds stores and audits words in one transaction; see
// pools.FeedStore.
func (s *Store) SetFeeds(ctx context.Context, words []pools.FeedWord) ([]pools.FeedWord, error) {
	if len(words) == 0 {
		return nil, nil
	}
	out := make([]pools.FeedWord, 0, len(words))
	err := s.write(ctx, func(t *txn) error {
		out = out[:0]
		for _, w := range words {
			w.At, w.Expires = pools.StoreTime(w.At), pools.StoreTime(w.Expires)
			// The row as it was, locked until the transaction ends: two
			// webhooks about one origin at once merge one after the other.
			old, err := collect(t.ctx, t.tx, scanFeed, "select "+feedColumns+" from glb_feeds where pool = $1 and origin = $2 and monitor = $3 for update",
				w.Pool, w.Origin, w.Monitor)
			if err != nil {
				return err
			}
			var before *pools.FeedWord
			if len(old) > 0 {
				before = &old[0]
			}
			w = pools.MergeFeed(before, w)
			var alerts []byte
			if w.Alerts != nil {
				if alerts, err = json.Marshal(w.Alerts); err != nil {
					return err
				}
			}
			_, err = t.tx.Exec(t.ctx, `insert into glb_feeds (`+feedColumns+`) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
				on conflict (pool, origin, monitor) do update set up = excluded.up, reason = excluded.reason, load = excluded.load,
					source = excluded.source, received_at = excluded.received_at, expires_at = excluded.expires_at, alerts = excluded.alerts`,
				w.Pool, w.Origin, w.Monitor, w.Up, w.Reason, w.Load, w.Source, w.At, w.Expires, alerts)
			if err != nil {
				return err
			}
			out = append(out, w)
			if before != nil && before.Same(&w) {
				continue // a renewal: only the expiry moved
			}
			e, err := pools.FeedAudit(ctx, before, w)
			if err != nil {
				return err
			}
			if err := t.audit(&e); err != nil {
				return err
			}
		}
		_, err := t.tx.Exec(t.ctx, "select pg_notify('"+FeedChannel+"', '')")
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Feeds returns the words stored; see pools.FeedStore.
func (s *Store) Feeds(ctx context.Context, pool string) ([]pools.FeedWord, error) {
	out, err := selectAll(s, ctx, scanFeed, "select "+feedColumns+" from glb_feeds where $1 = '' or pool = $1", pool)
	if out == nil && err == nil {
		out = []pools.FeedWord{}
	}
	pools.SortFeeds(out) // by byte, whatever the database's collation
	return out, err
}

// PruneFeeds deletes words that expired before before.
func (s *Store) PruneFeeds(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.write(ctx, func(t *txn) error {
		tag, err := t.tx.Exec(t.ctx, "delete from glb_feeds where expires_at < $1", before)
		n = tag.RowsAffected()
		return err
	})
	return n, err
}
