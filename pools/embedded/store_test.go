package embedded_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/pools/embedded"
	"github.com/glb-dns/glb/pools/storetest"
)

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) pools.Store {
		s, err := embedded.Open(filepath.Join(t.TempDir(), "glb.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestReopenKeepsEverything(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", "glb.db")
	s, err := embedded.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	z, err := s.Create(ctx, storetest.Zone("glb.example.com"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PublishHealth(ctx, pools.FullUpdate(pools.NodeHealth{Node: "n1", Region: "WEU"})); err != nil {
		t.Fatal(err)
	}
	// The file is locked while open: a second glbd on the same data
	// directory fails instead of corrupting it or waiting forever.
	if s2, err := embedded.Open(path); err == nil {
		s2.Close()
		t.Fatal("second open of a store in use succeeded")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = embedded.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Get(ctx, pools.KindZone, z.ObjectMeta().ID)
	if err != nil {
		t.Fatalf("zone after reopen: %v", err)
	}
	if got.(*pools.Zone).Serial != z.(*pools.Zone).Serial {
		t.Errorf("serial after reopen = %d, want %d", got.(*pools.Zone).Serial, z.(*pools.Zone).Serial)
	}
	if rev, err := s.Revision(ctx); err != nil || rev != 1 {
		t.Errorf("revision after reopen = %d, %v; want 1", rev, err)
	}
	if views, err := s.HealthViews(ctx, ""); err != nil || len(views) != 1 {
		t.Errorf("health views after reopen = %v, %v; want one", views, err)
	}
}

func TestWatchCoalescesWithoutBlockingWriters(t *testing.T) {
	s, err := embedded.Open(filepath.Join(t.TempDir(), "glb.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	ch := s.Watch(ctx) // never read until every write is done
	var last int64
	for i := range 50 {
		n := storetest.Network(netCIDR(i))
		if _, err := s.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
		last = int64(i + 1)
	}
	if err := s.PublishHealth(ctx, pools.FullUpdate(pools.NodeHealth{Node: "n1"})); err != nil {
		t.Fatal(err)
	}
	c := <-ch
	if c.Revision != last || !c.Health {
		t.Errorf("coalesced change = %+v, want revision %d with health", c, last)
	}
	select {
	case c := <-ch:
		t.Errorf("second change %+v pending after coalescing", c)
	default:
	}
}

func TestClosedStoreIsUnavailable(t *testing.T) {
	s, err := embedded.Open(filepath.Join(t.TempDir(), "glb.db"))
	if err != nil {
		t.Fatal(err)
	}
	ch := s.Watch(t.Context())
	s.Close()
	if _, open := <-ch; open {
		t.Error("watch channel open after Close")
	}
	if _, err := s.Revision(t.Context()); !errors.Is(err, pools.ErrUnavailable) {
		t.Errorf("revision on a closed store: %v, want ErrUnavailable", err)
	}
	if _, err := s.Create(t.Context(), storetest.Zone("glb.example.com")); !errors.Is(err, pools.ErrUnavailable) {
		t.Errorf("create on a closed store: %v, want ErrUnavailable", err)
	}
}

func netCIDR(i int) string { return fmt.Sprintf("10.%d.0.0/16", i) }

// A store written before the reference index has it made when it opens:
// the zone, pool and monitor in use still refuse deletion, naming who
// uses them.
func TestReferenceIndexIsBuiltForAnOlderStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "glb.db")
	s, err := embedded.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	mustCreate := func(o pools.Object) pools.Object {
		t.Helper()
		out, err := s.Create(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	z := mustCreate(storetest.Zone("glb.example.com")).ObjectMeta().ID
	m := mustCreate(storetest.Monitor()).ObjectMeta().ID
	p := mustCreate(storetest.Pool("web", m)).ObjectMeta().ID
	lb := mustCreate(storetest.LoadBalancer("www.glb.example.com", z, p)).ObjectMeta().ID
	s.Close()

	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bbolt.Tx) error { return tx.DeleteBucket([]byte("refs")) }); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err = embedded.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct {
		kind     pools.Kind
		id, want string
	}{{pools.KindZone, z, lb}, {pools.KindPool, p, lb}, {pools.KindMonitor, m, p}} {
		err := s.Delete(ctx, c.kind, c.id, 0)
		var ce *pools.ConflictError
		if !errors.As(err, &ce) || len(ce.Referrers) != 1 || ce.Referrers[0].ID != c.want {
			t.Errorf("delete %s %s: %v, want a conflict naming %s", c.kind.Singular(), c.id, err, c.want)
		}
	}
}
