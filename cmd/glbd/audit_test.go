package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/glb-dns/glb/healthcheck"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/pools/embedded/embeddedtest"
)

// TestHealthAuditObserve: the node reports each origin when first seen
// and on every change of its agreed state, with what each region saw; an
// origin that loses its results after being down is reported healthy
// again, since steering counts it so.
func TestHealthAuditObserve(t *testing.T) {
	t.Parallel()
	store := embeddedtest.Open(t)
	a := newHealthAudit(store, "n1", slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { a.run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	key := pools.OriginKey{Pool: "p", Origin: "o"}
	at := time.Now()
	// What every node says, as the node's tally holds it: n2's view from
	// the store, and our own live one (the node never takes the store's
	// copy of its own view).
	tally := healthcheck.NewTally()
	for _, v := range []pools.NodeHealth{
		{Node: "n2", Region: "ENAM", Published: at, Origins: []pools.OriginState{{Pool: "p", Origin: "o", Healthy: false, Reason: "timeout", CheckedAt: at}}},
		{Node: "n1", Region: "WEU", Published: at, Origins: []pools.OriginState{{Pool: "p", Origin: "o", Healthy: false, Reason: "refused", CheckedAt: at}}},
	} {
		tally.Apply(pools.FullUpdate(v))
	}
	health := func(m map[pools.OriginKey]pools.OriginHealth) *pools.Health { return pools.NewHealth(m, nil) }

	entries := func(want int) []pools.HealthTransition {
		t.Helper()
		var out []pools.HealthTransition
		deadline := time.Now().Add(5 * time.Second)
		for {
			res, err := store.Audit(context.Background(), pools.AuditFilter{Kind: pools.KindHealth}, pools.Page{PerPage: 100})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Items) == want {
				out = out[:0]
				for i := len(res.Items) - 1; i >= 0; i-- {
					var h pools.HealthTransition
					if err := json.Unmarshal(res.Items[i].After, &h); err != nil {
						t.Fatal(err)
					}
					out = append(out, h)
				}
				return out
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d health entries, want %d", len(res.Items), want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	a.observe(health(map[pools.OriginKey]pools.OriginHealth{key: {Healthy: true}}), nil, tally.Votes)
	a.observe(health(map[pools.OriginKey]pools.OriginHealth{key: {Healthy: false, Reason: "WEU: refused"}}), map[string]bool{"p": true}, tally.Votes)
	es := entries(1)
	if es[0].Healthy || es[0].Reason != "WEU: refused" || es[0].Node != "n1" {
		t.Fatalf("down entry %+v", es[0])
	}
	want := map[string]pools.RegionHealth{"ENAM": {Nodes: 1, Reason: "timeout"}, "WEU": {Nodes: 1, Reason: "refused"}}
	if len(es[0].Regions) != 2 || es[0].Regions["ENAM"] != want["ENAM"] || es[0].Regions["WEU"] != want["WEU"] {
		t.Errorf("regions %+v, want %+v", es[0].Regions, want)
	}
	// The same state again: nothing new.
	a.observe(health(map[pools.OriginKey]pools.OriginHealth{key: {Healthy: false, Reason: "WEU: refused"}}), nil, tally.Votes)
	// A change in another pool does not report p again.
	a.observe(health(map[pools.OriginKey]pools.OriginHealth{key: {Healthy: false, Reason: "WEU: refused"}}), map[string]bool{"q": true}, tally.Votes)
	// Results go stale: counted healthy, and said so.
	a.observe(health(map[pools.OriginKey]pools.OriginHealth{}), map[string]bool{"p": true}, tally.Votes)
	es = entries(2)
	if !es[1].Healthy || es[1].Reason != reasonNoResults {
		t.Errorf("stale entry %+v", es[1])
	}
}
