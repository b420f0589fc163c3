package storetest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
)

// key is a fake but well-formed key record: the store keeps keys as data
// and never interprets them.
func key(id string, state pools.KeyState) pools.ZoneKey {
	now := time.Now().UTC().Truncate(time.Microsecond)
	return pools.ZoneKey{
		ID: id, Role: pools.KeyRoleCSK, State: state, Algorithm: 13, Flags: 257, Tag: 4242,
		PublicKey: "cHVibGlj", PrivateKey: "cHJpdmF0ZQ==", CreatedOn: now, StateSince: now,
	}
}

// ensureOne adds a key when there is none: what every node and the API do
// when a zone turns DNSSEC on.
func ensureOne(id string) func([]pools.ZoneKey) ([]pools.ZoneKey, error) {
	return func(cur []pools.ZoneKey) ([]pools.ZoneKey, error) {
		if len(cur) > 0 {
			return cur, nil
		}
		return []pools.ZoneKey{key(id, pools.KeyActive)}, nil
	}
}

func testZoneKeys(t *testing.T, c context.Context, s pools.Store) {
	if _, err := s.UpdateZoneKeys(c, "nope", ensureOne("k")); !errors.Is(err, pools.ErrNotFound) {
		t.Errorf("UpdateZoneKeys of a missing zone: %v, want ErrNotFound", err)
	}
	if _, err := s.ZoneKeys(c, "nope"); !errors.Is(err, pools.ErrNotFound) {
		t.Errorf("ZoneKeys of a missing zone: %v, want ErrNotFound", err)
	}
	z := mustCreate(t, s, Zone("signed.example.com"))
	if keys, err := s.ZoneKeys(c, z.ID); err != nil || len(keys) != 0 {
		t.Fatalf("keys of a new zone = %v, %v; want none", keys, err)
	}
	r0, _ := s.Revision(c)
	keys, err := s.UpdateZoneKeys(c, z.ID, ensureOne("k1"))
	if err != nil || len(keys) != 1 || keys[0].Zone != z.ID {
		t.Fatalf("ensure = %+v, %v; want one key of zone %s", keys, err, z.ID)
	}
	r1, _ := s.Revision(c)
	if r1 <= r0 {
		t.Errorf("revision after a key write = %d, want > %d", r1, r0)
	}
	// The zone's DNSKEY RRset changed: its serial advances and it is in
	// the change feed, so that nodes following the feed recompile it.
	if zs, err := s.Get(c, pools.KindZone, z.ID); err != nil || zs.(*pools.Zone).Serial == z.Serial {
		t.Errorf("zone serial after a key write = %v (%v), want past %d", zs, err, z.Serial)
	}
	cs, err := s.Changes(c, r0)
	if err != nil || !slices.ContainsFunc(cs.Changes, func(ch pools.ObjectChange) bool { return ch.Kind == pools.KindZone && ch.ID == z.ID }) {
		t.Errorf("changes since %d = %+v, %v; want the zone", r0, cs, err)
	}
	// The same set again stores nothing and leaves the revision alone.
	if _, err := s.UpdateZoneKeys(c, z.ID, ensureOne("k2")); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.Revision(c); r != r1 {
		t.Errorf("revision after an unchanged key set = %d, want %d", r, r1)
	}
	boom := errors.New("boom")
	if _, err := s.UpdateZoneKeys(c, z.ID, func([]pools.ZoneKey) ([]pools.ZoneKey, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("fn error = %v, want it returned", err)
	}
	got, err := s.ZoneKeys(c, z.ID)
	if err != nil || !pools.SameKeys(got, keys) {
		t.Errorf("keys after a failed update = %+v, %v; want %+v", got, err, keys)
	}
	cfg, err := s.Config(c)
	if err != nil {
		t.Fatal(err)
	}
	if !pools.SameKeys(cfg.DNSSECKeys, keys) || cfg.DNSSECKeys[0].PrivateKey == "" {
		t.Errorf("Config keys = %+v, want %+v with private parts", cfg.DNSSECKeys, keys)
	}
	// A zone's keys go with it: a new zone of the same id starts unsigned.
	if err := s.Delete(c, pools.KindZone, z.ID, 0); err != nil {
		t.Fatal(err)
	}
	z2 := Zone("signed.example.com")
	z2.ID = z.ID
	mustCreate(t, s, z2)
	if keys, err := s.ZoneKeys(c, z.ID); err != nil || len(keys) != 0 {
		t.Errorf("keys of a zone recreated with a deleted zone's id = %+v, %v; want none", keys, err)
	}
	if cfg, err := s.Config(c); err != nil || len(cfg.DNSSECKeys) != 0 {
		t.Errorf("Config keys after the zone was deleted = %+v, %v; want none", cfg.DNSSECKeys, err)
	}
}

// testZoneKeysConcurrent: nodes that all find a signed zone without keys
// and make one at once end up with one key, not one each.
func testZoneKeysConcurrent(t *testing.T, c context.Context, s pools.Store) {
	z := mustCreate(t, s, Zone("race.example.com"))
	const writers = 6
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := range writers {
		wg.Go(func() {
			_, errs[i] = s.UpdateZoneKeys(context.WithoutCancel(c), z.ID, ensureOne("k"+string(rune('a'+i))))
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	keys, err := s.ZoneKeys(c, z.ID)
	if err != nil || len(keys) != 1 {
		t.Errorf("keys after %d concurrent ensures = %+v, %v; want exactly one", writers, keys, err)
	}
}
