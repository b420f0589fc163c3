package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/glb-dns/glb/pools"
)

// ZoneKeys returns a zone's DNSSEC keys.
func (s *Store) ZoneKeys(ctx context.Context, zoneID string) ([]pools.ZoneKey, error) {
	var keys []pools.ZoneKey
	err := s.read(ctx, func(tx pgx.Tx) error {
		if err := mustExist(ctx, tx, "zones", "zone", zoneID); err != nil {
			return err
		}
		var err error
		keys, err = zoneKeys(ctx, tx, zoneID)
		return err
	})
	return keys, err
}

// UpdateZoneKeys applies fn to a zone's keys under a row lock on the zone,
// so that two nodes ensuring keys at once make one set, not two.
func (s *Store) UpdateZoneKeys(ctx context.Context, zoneID string, fn func([]pools.ZoneKey) ([]pools.ZoneKey, error)) ([]pools.ZoneKey, error) {
	var out []pools.ZoneKey
	err := s.write(ctx, func(t *txn) error {
		var id string
		err := t.tx.QueryRow(t.ctx, "select id from zones where id = $1::text for update", zoneID).Scan(&id)
		if err := missing(err, "zone", zoneID); err != nil {
			return err
		}
		cur, err := zoneKeys(t.ctx, t.tx, zoneID)
		if err != nil {
			return err
		}
		next, doc, err := pools.NextKeys(zoneID, cur, fn)
		if err != nil || doc == nil {
			out = next
			return err
		}
		if _, err := t.tx.Exec(t.ctx, `insert into dnssec_keys (zone_id, keys) values ($1::text, $2::jsonb)
			on conflict (zone_id) do update set keys = excluded.keys`, zoneID, doc); err != nil {
			return err
		}
		_, ev, err := pools.KeysChangedIn(t, zoneID, cur, next, s.now())
		if err != nil {
			return err
		}
		if _, err := t.addEvent(&ev, ""); err != nil {
			return err
		}
		out = next
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func zoneKeys(ctx context.Context, tx pgx.Tx, zoneID string) ([]pools.ZoneKey, error) {
	var doc []byte
	err := tx.QueryRow(ctx, "select keys from dnssec_keys where zone_id = $1::text", zoneID).Scan(&doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return []pools.ZoneKey{}, nil
	}
	if err != nil {
		return nil, err
	}
	keys := []pools.ZoneKey{}
	if err := json.Unmarshal(doc, &keys); err != nil {
		return nil, fmt.Errorf("decode dnssec keys of zone %q: %w", zoneID, err)
	}
	return keys, nil
}

// allZoneKeys reads every zone's keys for Config, in zone id order.
func allZoneKeys(ctx context.Context, tx pgx.Tx) ([]pools.ZoneKey, error) {
	var all []pools.ZoneKey
	docs, err := collect(ctx, tx, pgx.RowTo[[]byte], "select keys from dnssec_keys order by zone_id")
	if err != nil {
		return nil, err
	}
	for _, doc := range docs {
		var keys []pools.ZoneKey
		if err := json.Unmarshal(doc, &keys); err != nil {
			return nil, fmt.Errorf("decode dnssec keys: %w", err)
		}
		all = append(all, keys...)
	}
	return all, nil
}
