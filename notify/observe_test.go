package notify_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/glb-dns/glb/notify"
	"github.com/glb-dns/glb/pools"
)

func observedConfig() *pools.Config {
	pool := func(id string, origins ...string) pools.Pool {
		p := pools.DefaultPool()
		p.ID, p.Name, p.Monitor = id, id, "m"
		for _, o := range origins {
			org := pools.DefaultOrigin()
			org.Name, org.Address = o, "192.0.2.1"
			p.Origins = append(p.Origins, org)
		}
		return p
	}
	lb := pools.DefaultLoadBalancer()
	lb.ID, lb.Name, lb.DefaultPools, lb.FallbackPool = "www", "www.example.com", []string{"primary", "backup"}, "backup"
	return &pools.Config{Pools: []pools.Pool{pool("primary", "a", "b"), pool("backup", "c")}, LoadBalancers: []pools.LoadBalancer{lb}}
}

func down(origins ...string) *pools.Health {
	m := map[pools.OriginKey]pools.OriginHealth{}
	for _, o := range origins {
		m[pools.OriginKey{Pool: "primary", Origin: o}] = pools.OriginHealth{Healthy: false, Reason: "connection refused"}
	}
	return pools.NewHealth(m, nil)
}

// TestObserversRecordEachTransitionOnce: two nodes observe the same
// agreed health; an origin down that leaves its pool up is one origin
// event; both origins down is a pool event and a failover to the next
// pool; back up, the up events and the failover back. Each once.
func TestObserversRecordEachTransitionOnce(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var nodes []*notify.Observer
	for range 2 {
		o := notify.NewObserver(s, nil, nil, nil)
		go o.Run(ctx)
		nodes = append(nodes, o)
	}
	if _, err := s.CreateSubscription(ctx, pools.Subscription{Name: "all", URL: "https://h.example.com/", Format: pools.FormatSlack,
		Events: []string{pools.EventOriginHealth, pools.EventPoolHealth, pools.EventFailover}}); err != nil {
		t.Fatal(err)
	}
	cfg := observedConfig()
	steps := []*pools.Health{pools.NewHealth(nil, nil), down("a"), down("a", "b"), pools.NewHealth(nil, nil)}
	var seen []pools.Delivery
	want := [][]string{
		nil,
		{"origin_health a down"},
		{"origin_health b down", "pool_health primary down", "failover backup"},
		{"origin_health a up", "origin_health b up", "pool_health primary up", "failover primary"},
	}
	for i, h := range steps {
		for _, o := range nodes {
			o.Observe(cfg, h, nil, time.Now())
		}
		var got []string
		waitFor(t, "step recorded", func() bool {
			l, _ := s.Deliveries(ctx, subID(t, s), pools.Page{PerPage: 100})
			got = got[:0]
			for _, d := range l.Items[:len(l.Items)-len(seen)] {
				got = append(got, describe(d.Event))
			}
			return len(got) >= len(want[i])
		})
		slices.Reverse(got)
		if !slices.Equal(got, want[i]) {
			t.Fatalf("step %d: events %q, want %q", i, got, want[i])
		}
		l, _ := s.Deliveries(ctx, subID(t, s), pools.Page{PerPage: 100})
		seen = l.Items
	}
	// Nothing more comes of observing the same view again.
	for _, o := range nodes {
		o.Observe(cfg, steps[3], nil, time.Now())
	}
	for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if l, _ := s.Deliveries(ctx, subID(t, s), pools.Page{PerPage: 100}); len(l.Items) != len(seen) {
			t.Fatalf("%d events after observing the same view, want %d", len(l.Items), len(seen))
		}
	}
}

func describe(e pools.Event) string {
	switch e.Type {
	case pools.EventOriginHealth:
		return e.Type + " " + e.Data.Origin + " " + e.Data.New
	case pools.EventPoolHealth:
		return e.Type + " " + e.Data.Pool + " " + e.Data.New
	}
	return e.Type + " " + e.Data.New
}

func subID(t *testing.T, s pools.Store) string {
	l, err := s.Subscriptions(context.Background())
	if err != nil || len(l) != 1 {
		t.Fatalf("subscriptions %v %v", l, err)
	}
	return l[0].ID
}

// TestObserveFleet: a new serving node is no news; a node that turns
// stale, gone or drained, or serves again, is one event however many
// nodes notice; draining is a passage, not an event.
func TestObserveFleet(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub, err := s.CreateSubscription(ctx, pools.Subscription{Name: "nodes", URL: "https://h.example.com/", Format: pools.FormatSlack,
		Events: []string{pools.EventNode}})
	if err != nil {
		t.Fatal(err)
	}
	a, b := notify.NewObserver(s, nil, nil, nil), notify.NewObserver(s, nil, nil, nil)
	go a.Run(ctx)
	go b.Run(ctx)
	now := time.Now()
	var got []string
	events := func(want int) []string {
		t.Helper()
		waitFor(t, "node events", func() bool {
			l, _ := s.Deliveries(ctx, sub.ID, pools.Page{PerPage: 100})
			got = got[:0]
			for _, d := range l.Items {
				got = append(got, d.Event.Data.Node+" "+d.Event.Data.New)
			}
			return len(got) >= want
		})
		slices.Reverse(got)
		return got
	}
	steps := [][]pools.NodeView{
		{{Name: "n1", State: pools.NodeServing}, {Name: "n2", State: pools.NodeStale, Why: "behind"}},
		{{Name: "n1", State: pools.NodeDraining}, {Name: "n2", State: pools.NodeStale, Why: "behind"}},
		{{Name: "n1", State: pools.NodeDrained}, {Name: "n2", State: pools.NodeGone}},
		{{Name: "n1", State: pools.NodeServing}, {Name: "n2", State: pools.NodeGone}},
	}
	for i, views := range steps {
		for _, o := range []*notify.Observer{a, b} {
			o.ObserveFleet(views, now.Add(time.Duration(i)*time.Second))
		}
	}
	want := []string{"n2 stale", "n1 drained", "n2 gone", "n1 serving"}
	if got := events(len(want)); !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}
