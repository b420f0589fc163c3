package storetest

import (
	"context"
	"testing"

	"github.com/glb-dns/glb/pools"
)

// testZoneCuts: the store resolves a load balancer's zone cuts, and a
// zone's load balancers, inside the write's transaction.
func testZoneCuts(t *testing.T, c context.Context, s pools.Store) {
	f := newFixture(t, s)
	z := f.zone
	z.Records = append(z.Records,
		pools.Record{Name: "sub.glb.example.com", Type: "NS", Content: "ns.sub.glb.example.com"},
		pools.Record{Name: "ns.sub.glb.example.com", Type: "A", Content: "192.0.2.80"},
		pools.Record{Name: "sub.glb.example.com", Type: "DS", Content: "1 13 2 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"})
	if _, err := s.Replace(c, z, 0); err != nil {
		t.Fatalf("a cut with glue and DS refused: %v", err)
	}
	_, err := s.Create(c, LoadBalancer("app.sub.glb.example.com", f.zone.ID, f.pool.ID))
	wantPaths(t, err, "name")

	// A cut over the fixture's www load balancer would hide it.
	z2, err := s.Get(c, pools.KindZone, f.zone.ID)
	if err != nil {
		t.Fatal(err)
	}
	zz := z2.(*pools.Zone)
	zz.Records = append(zz.Records, pools.Record{Name: "www.glb.example.com", Type: "NS", Content: "ns.other.net"})
	_, err = s.Replace(c, zz, 0)
	wantPaths(t, err, "records[4].name")
}
