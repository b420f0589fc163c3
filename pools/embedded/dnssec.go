package embedded

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.etcd.io/bbolt"

	"github.com/glb-dns/glb/pools"
)

// zoneKeys reads a zone's keys: ErrNotFound without the zone. Keys older
// than the zone belong to a deleted zone of the same id and are ignored,
// so that deleting a zone needs no second bucket to clean.
func zoneKeys(tx *bbolt.Tx, zoneID string) ([]pools.ZoneKey, error) {
	v := tx.Bucket(objectBucket(pools.KindZone)).Get([]byte(zoneID))
	if v == nil {
		return nil, fmt.Errorf("zone %q: %w", zoneID, pools.ErrNotFound)
	}
	// Only the zone's creation time is needed: decoding a zone of 10,000
	// records in full costs tens of milliseconds, after every UPDATE.
	var zone struct {
		CreatedOn time.Time `json:"created_on"`
	}
	if err := json.Unmarshal(v, &zone); err != nil {
		return nil, fmt.Errorf("decode zone %q: %w", zoneID, err)
	}
	keys := []pools.ZoneKey{}
	b := tx.Bucket(keysBucket)
	if b == nil {
		return keys, nil
	}
	doc := b.Get([]byte(zoneID))
	if doc == nil {
		return keys, nil
	}
	var all []pools.ZoneKey
	if err := json.Unmarshal(doc, &all); err != nil {
		return nil, fmt.Errorf("decode dnssec keys of zone %q: %w", zoneID, err)
	}
	created := zone.CreatedOn
	for _, k := range all {
		if !k.CreatedOn.Before(created) {
			keys = append(keys, k)
		}
	}
	return keys, nil
}

// ZoneKeys returns a zone's DNSSEC keys.
func (s *Store) ZoneKeys(ctx context.Context, zoneID string) ([]pools.ZoneKey, error) {
	return read(s, ctx, func(tx *bbolt.Tx) ([]pools.ZoneKey, error) { return zoneKeys(tx, zoneID) })
}

// UpdateZoneKeys applies fn to a zone's keys in one bbolt write
// transaction (bbolt has one writer at a time).
func (s *Store) UpdateZoneKeys(ctx context.Context, zoneID string, fn func([]pools.ZoneKey) ([]pools.ZoneKey, error)) ([]pools.ZoneKey, error) {
	var out []pools.ZoneKey
	var rev int64
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		cur, err := zoneKeys(tx, zoneID)
		if err != nil {
			return err
		}
		next, doc, err := pools.NextKeys(zoneID, cur, fn)
		if err != nil || doc == nil {
			out = next
			return err
		}
		b, err := tx.CreateBucketIfNotExists(keysBucket)
		if err != nil {
			return err
		}
		if err := b.Put([]byte(zoneID), doc); err != nil {
			return err
		}
		var ev pools.Event
		if rev, ev, err = pools.KeysChangedIn(txn{tx}, zoneID, cur, next, s.now()); err != nil {
			return err
		}
		if _, err := addEvent(tx, &ev, ""); err != nil {
			return err
		}
		out = next
		return nil
	})
	if err != nil {
		return nil, err
	}
	if rev != 0 {
		s.watchers.Notify(pools.Change{Revision: rev})
	}
	return out, nil
}

// allZoneKeys reads the keys of every zone in cfg for Config.
func allZoneKeys(tx *bbolt.Tx, zones []pools.Zone) ([]pools.ZoneKey, error) {
	var all []pools.ZoneKey
	for _, z := range zones {
		keys, err := zoneKeys(tx, z.ID)
		if err != nil {
			return nil, err
		}
		all = append(all, keys...)
	}
	return all, nil
}
