package main

import (
	"context"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/glb-dns/glb/healthcheck"
	"github.com/glb-dns/glb/internal/testnode"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/pools/embedded/embeddedtest"
	"github.com/glb-dns/glb/pools/storetest"
)

// TestOwnChecksCountAfterAStalledLoop: a node whose loop was held up for
// longer than the freshness window (as it is when every store read times
// out while PostgreSQL is unreachable) still counts its own checks in the
// next snapshot it compiles, here for a write that arrives after the
// wait. Its own origin stays agreed, with this region's RTT: without it,
// a dynamic_latency client of this region was answered, for one
// snapshot, from another region's measurements.
func TestOwnChecksCountAfterAStalledLoop(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	port := testnode.AcceptingPort(t, "127.0.0.1")
	store := embeddedtest.Open(t)
	mon := storetest.Monitor()
	// A window of 3 s: interval 1 s, timeout 1 s, no retry.
	mon.Type, mon.Port, mon.Interval, mon.Timeout, mon.Retries = pools.MonitorTCP, port, 1, 1, 0
	m := create(t, store, mon)
	p := storetest.Pool("web", m.ID)
	p.Origins = p.Origins[:1]
	p.Origins[0].Address = "127.0.0.1"
	pool := create(t, store, p)
	zone := create(t, store, storetest.Zone("glb.example.com"))
	create(t, store, storetest.LoadBalancer("www.glb.example.com", zone.ID, pool.ID))

	checker := healthcheck.New(healthcheck.Options{Node: "n", Region: "WEU", SourceAddr: netip.MustParseAddr("127.0.0.1")})
	go checker.Run(ctx)
	n := newNode(slog.New(slog.DiscardHandler), store, t.TempDir(), checker, prometheus.NewRegistry(),
		func(*current) bool { return true })
	n.region = "WEU"
	n.start(ctx)
	own := func() (bool, time.Duration) {
		ph := n.health.Pool(pool.ID)
		if ph == nil {
			return false, 0
		}
		o, ok := ph.Origins["a"]
		return ok && o.Healthy, ph.RTT["WEU"]
	}
	// The loop's tick, until the first check is in.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(20 * time.Second)
	for healthy, rtt := own(); !healthy || rtt == 0; healthy, rtt = own() {
		select {
		case <-tick.C:
			n.readHealth(ctx)
			n.rebuildHealth()
		case <-deadline:
			ph := n.health.Pool(pool.ID)
			t.Fatalf("the node's own check of a never agreed healthy with an RTT: %+v; own view %+v", ph, checker.PoolView(pool.ID))
		}
	}
	// The loop stalls past the window (3 s) while the checker goes on
	// checking; then a write arrives and is compiled.
	stalled := time.Now().Add(3*time.Second + 500*time.Millisecond)
	for time.Now().Before(stalled) {
		time.Sleep(time.Until(stalled))
	}
	zone.Records = append(zone.Records, pools.Record{Name: "rev.glb.example.com", Type: "A", Content: "192.0.2.7"})
	if _, err := store.Replace(ctx, zone, zone.Revision); err != nil {
		t.Fatal(err)
	}
	before := n.cfg.Revision
	if err := n.reloadConfig(ctx); err != nil {
		t.Fatal(err)
	}
	if n.cfg.Revision == before {
		t.Fatal("the write was not compiled")
	}
	if healthy, rtt := own(); !healthy || rtt == 0 {
		t.Fatalf("after a stalled loop, the write's snapshot lost the node's own check of a: healthy %v, WEU RTT %v", healthy, rtt)
	}
}

func create[T pools.Object](t *testing.T, s pools.Store, o T) T {
	t.Helper()
	out, err := s.Create(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	return out.(T)
}
