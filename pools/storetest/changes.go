package storetest

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/glb-dns/glb/pools"
)

// testChanges: applying Changes(since) to the configuration read at since
// gives the configuration read now, from every revision on the way; the
// changes come in revision order, a deletion has no object, a refused
// write leaves no trace, and a reader ahead of the store is told of a gap.
func testChanges(t *testing.T, c context.Context, s pools.Store) {
	config := func() *pools.Config {
		t.Helper()
		cfg, err := s.Config(c)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	seen := []*pools.Config{config()}
	f := newFixture(t, s)
	seen = append(seen, config())

	p := *f.pool
	p.Origins[0].Weight = 0.9
	if _, err := s.Replace(c, &p, 0); err != nil {
		t.Fatal(err)
	}
	seen = append(seen, config())
	bad := Pool("", "")
	if _, err := s.Create(c, bad); err == nil {
		t.Fatal("a pool without a name was stored")
	}
	gone := mustCreate(t, s, Pool("short-lived", ""))
	seen = append(seen, config())
	if err := s.Delete(c, pools.KindPool, gone.ID, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(c, pools.KindNetwork, f.network.ID, 0); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, Network("10.2.0.0/16"))
	now := config()

	for _, from := range seen {
		cs, err := s.Changes(c, from.Revision)
		if err != nil {
			t.Fatalf("changes since %d: %v", from.Revision, err)
		}
		if cs.Since != from.Revision || cs.Revision != now.Revision {
			t.Errorf("changes since %d span %d..%d, want %d..%d", from.Revision, cs.Since, cs.Revision, from.Revision, now.Revision)
		}
		last := from.Revision
		for _, ch := range cs.Changes {
			if ch.Revision <= last && ch.Revision != last || ch.Revision <= from.Revision || ch.Revision > now.Revision {
				t.Errorf("change %s %s at revision %d out of order (after %d, since %d)", ch.Kind, ch.ID, ch.Revision, last, from.Revision)
			}
			last = ch.Revision
			if ch.Object != nil && (ch.Object.Kind() != ch.Kind || ch.Object.ObjectMeta().ID != ch.ID) {
				t.Errorf("change %s %s carries %s %s", ch.Kind, ch.ID, ch.Object.Kind(), ch.Object.ObjectMeta().ID)
			}
			if ch.ID == gone.ID && ch.Object != nil {
				t.Errorf("deleted pool %s reported with an object", gone.ID)
			}
		}
		got, err := from.Apply(cs)
		if err != nil {
			t.Fatal(err)
		}
		sameObject(t, "configuration rebuilt from the changes since "+strconv.FormatInt(from.Revision, 10), got, now)
	}

	cs, err := s.Changes(c, now.Revision)
	if err != nil || len(cs.Changes) != 0 {
		t.Errorf("changes since the current revision = %v, %v; want none", cs, err)
	}
	if _, err := s.Changes(c, now.Revision+1); !errors.Is(err, pools.ErrChangeGap) {
		t.Errorf("changes since a revision the store has not reached: err = %v, want ErrChangeGap", err)
	}
}
