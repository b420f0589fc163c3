package pools

import (
	"context"
	"time"
)

// KeyStore keeps the zones' DNSSEC keys beside the configuration. Keys are
// not REST objects: they are made by glb and change only through the
// rollover, so the store offers one read and one read-modify-write.
type KeyStore interface {
	// ZoneKeys returns a zone's keys, private parts included; ErrNotFound
	// when the zone does not exist.
	ZoneKeys(ctx context.Context, zoneID string) ([]ZoneKey, error)
	// UpdateZoneKeys calls fn with the zone's keys inside one transaction
	// that serialises with every other writer, and stores what it returns.
	// A result equal to the input stores nothing; any other bumps the
	// global revision and notifies watchers, so every node re-signs with
	// the new set. ErrNotFound when the zone does not exist; an error from
	// fn is returned as is and stores nothing.
	UpdateZoneKeys(ctx context.Context, zoneID string, fn func([]ZoneKey) ([]ZoneKey, error)) ([]ZoneKey, error)
}

// KeysChangedIn records inside a store transaction, once the store has
// written a zone's keys (before, then after), what that write changes
// besides: the global revision advances, so that every node re-signs;
// the zone's SOA serial advances (its DNSKEY RRset is zone content),
// which also puts the zone in the change feed, so that nodes that follow
// the feed recompile it with the new keys. It returns the revision and
// the event the store adds.
func KeysChangedIn(tx Tx, zoneID string, before, after []ZoneKey, now time.Time) (int64, Event, error) {
	rev, err := tx.BumpRevision()
	if err != nil {
		return 0, Event{}, err
	}
	if err := touchZone(tx, zoneID, now); err != nil {
		return 0, Event{}, err
	}
	return rev, dnssecEvent(zoneID, before, after, now), nil
}
