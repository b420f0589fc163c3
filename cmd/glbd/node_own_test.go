package main

import (
	"context"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
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
	w := newOwnWorld(t, nil)
	n, pool, zone, checker, store := w.n, w.pool, w.zone, w.checker, w.store
	ctx := t.Context()
	n.start(ctx)
	own := func() (bool, time.Duration) {
		ph := n.health.Pool(pool)
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
			ph := n.health.Pool(pool)
			t.Fatalf("the node's own check of a never agreed healthy with an RTT: %+v; own view %+v", ph, checker.PoolView(pool))
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

// TestNodeLoopDoesNotWaitOnTheStore: while the store's reads hang (a
// PostgreSQL whose packets are dropped), the node still follows its own
// checks at once: an origin it sees fail leaves its snapshot while the
// health, revision and configuration reads it started are still waiting.
func TestNodeLoopDoesNotWaitOnTheStore(t *testing.T) {
	t.Parallel()
	var hang hangingReads
	hang.entered = make(chan string, 16)
	hang.release = make(chan struct{})
	w := newOwnWorld(t, func(s pools.Store) pools.Store { hang.Store = s; return &hang })
	down := make(chan struct{})
	var once sync.Once
	w.published = func(c *current) {
		if o, ok := c.snap.Health().Origin(pools.OriginKey{Pool: w.pool, Origin: "a"}); ok && !o.Healthy {
			once.Do(func() { close(down) })
		}
	}
	ctx := t.Context()
	w.n.start(ctx)
	go w.n.run(ctx)
	defer close(hang.release)

	hang.hanging.Store(true)
	// A write's notification starts a configuration read.
	w.zone.Records = append(w.zone.Records, pools.Record{Name: "rev.glb.example.com", Type: "A", Content: "192.0.2.7"})
	if _, err := w.store.Replace(ctx, w.zone, w.zone.Revision); err != nil {
		t.Fatal(err)
	}
	// Every read of the loop is waiting on the store.
	waiting := map[string]bool{}
	for timeout := time.After(10 * time.Second); !waiting["HealthSince"] || !waiting["Revision"] || !waiting["Changes"]; {
		select {
		case what := <-hang.entered:
			waiting[what] = true
		case <-timeout:
			t.Fatalf("the loop did not start all of its store reads (one held it up?): %v", waiting)
		}
	}
	w.origin.Close() // a's checks are refused from now on
	select {
	case <-down:
	case <-time.After(15 * time.Second):
		t.Fatal("a's failure never reached the snapshot while the store's reads hung")
	}
	if n := hang.returned.Load(); n != 0 {
		t.Fatalf("a's failure reached the snapshot only after %d store reads returned", n)
	}
}

// hangingReads is a store whose health, revision and configuration reads,
// once hanging is set, wait until release, whatever their deadline.
type hangingReads struct {
	pools.Store
	hanging  atomic.Bool
	entered  chan string
	release  chan struct{}
	returned atomic.Int32
}

func (h *hangingReads) wait(what string) bool {
	if !h.hanging.Load() {
		return false
	}
	select {
	case h.entered <- what:
	default:
	}
	<-h.release
	h.returned.Add(1)
	return true
}

func (h *hangingReads) HealthSince(ctx context.Context, c map[string]pools.HealthCursor) ([]pools.HealthUpdate, error) {
	if h.wait("HealthSince") {
		return nil, pools.ErrUnavailable
	}
	return h.Store.HealthSince(ctx, c)
}

func (h *hangingReads) Changes(ctx context.Context, since int64) (*pools.ChangeSet, error) {
	if h.wait("Changes") {
		return nil, pools.ErrUnavailable
	}
	return h.Store.Changes(ctx, since)
}

func (h *hangingReads) Config(ctx context.Context) (*pools.Config, error) {
	if h.wait("Config") {
		return nil, pools.ErrUnavailable
	}
	return h.Store.Config(ctx)
}

func (h *hangingReads) Revision(ctx context.Context) (int64, error) {
	if h.wait("Revision") {
		return 0, pools.ErrUnavailable
	}
	return h.Store.Revision(ctx)
}

func create[T pools.Object](t *testing.T, s pools.Store, o T) T {
	t.Helper()
	out, err := s.Create(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	return out.(T)
}

// ownWorld is one node on an embedded store, in WEU, checking one origin
// (a, a TCP listener on 127.0.0.1) of pool web every second.
type ownWorld struct {
	n       *node
	checker *healthcheck.Checker
	store   pools.Store
	pool    string
	zone    *pools.Zone
	origin  net.Listener
	// published, when set before the node runs, sees each snapshot.
	published func(*current)
}

// newOwnWorld builds the world; wrap, when not nil, wraps the store the
// node reads (its writes go to the store itself).
func newOwnWorld(t *testing.T, wrap func(pools.Store) pools.Store) *ownWorld {
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	ln := testnode.Accepting(t, "127.0.0.1")
	store := embeddedtest.Open(t)
	mon := storetest.Monitor()
	// A window of 3 s: interval 1 s, timeout 1 s, no retry.
	mon.Type, mon.Port, mon.Interval, mon.Timeout, mon.Retries = pools.MonitorTCP, ln.Addr().(*net.TCPAddr).Port, 1, 1, 0
	m := create(t, store, mon)
	p := storetest.Pool("web", m.ID)
	p.Origins = p.Origins[:1]
	p.Origins[0].Address = "127.0.0.1"
	pool := create(t, store, p)
	zone := create(t, store, storetest.Zone("glb.example.com"))
	create(t, store, storetest.LoadBalancer("www.glb.example.com", zone.ID, pool.ID))

	checker := healthcheck.New(healthcheck.Options{Node: "n", Region: "WEU", SourceAddr: netip.MustParseAddr("127.0.0.1")})
	go checker.Run(ctx)
	var read pools.Store = store
	if wrap != nil {
		read = wrap(store)
	}
	w := &ownWorld{checker: checker, store: store, pool: pool.ID, zone: zone, origin: ln}
	w.n = newNode(slog.New(slog.DiscardHandler), read, t.TempDir(), checker, prometheus.NewRegistry(),
		func(c *current) bool {
			if w.published != nil {
				w.published(c)
			}
			return true
		})
	w.n.region = "WEU"
	return w
}
