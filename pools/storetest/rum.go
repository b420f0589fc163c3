package storetest

import (
	"context"
	"encoding/json"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
)

func hist(pairs ...int) []int32 {
	h := make([]int32, pools.RUMHistogramBuckets)
	for i := 0; i+1 < len(pairs); i += 2 {
		h[pairs[i]] = int32(pairs[i+1])
	}
	return h
}

// testRUM: a measured_latency load balancer and a pool with a probe URL
// round-trip; histograms are summed across nodes and minutes in the
// window, a node's retried write replaces its row; tokens join whichever
// side came first; pruning drops what is older.
func testRUM(t *testing.T, c context.Context, s pools.Store) {
	z, err := s.Create(c, decodeObj(t, pools.KindZone, `{"name":"rum.example.com","nameservers":["ns1.rum.example.com"]}`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Create(c, decodeObj(t, pools.KindPool, `{"name":"p","origins":[{"name":"a","address":"192.0.2.1"}],"rum":{"probe_url":"https://p.example.net/rum.gif"}}`))
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.Create(c, decodeObj(t, pools.KindLoadBalancer, `{"name":"www.rum.example.com","zone":"`+z.ObjectMeta().ID+`","default_pools":["`+
		p.ObjectMeta().ID+`"],"fallback_pool":"`+p.ObjectMeta().ID+`","steering_policy":"measured_latency",
		"rum":{"site_keys":["site-key-1"],"allowed_origins":["https://www.example.com"],"min_samples":5}}`))
	if err != nil {
		t.Fatalf("measured_latency load balancer: %v", err)
	}
	got, err := s.Get(c, pools.KindLoadBalancer, l.ObjectMeta().ID)
	if err != nil {
		t.Fatal(err)
	}
	if lb := got.(*pools.LoadBalancer); lb.SteeringPolicy != pools.SteeringMeasuredLatency || lb.RUM == nil || lb.RUM.MinSamples != 5 || lb.RUM.SiteKeys[0] != "site-key-1" {
		t.Errorf("load balancer read back: policy %q rum %+v", lb.SteeringPolicy, lb.RUM)
	}
	gp, _ := s.Get(c, pools.KindPool, p.ObjectMeta().ID)
	if gp.(*pools.Pool).RUM == nil || gp.(*pools.Pool).RUM.ProbeURL != "https://p.example.net/rum.gif" {
		t.Errorf("pool rum read back: %+v", gp.(*pools.Pool).RUM)
	}

	t0 := time.Unix(1_800_000_000, 0).UTC().Truncate(time.Minute)
	n1, n2 := netip.MustParsePrefix("198.51.100.0/24"), netip.MustParsePrefix("2001:db8:1::/48")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.AddRUMSamples(c, "a", []pools.RUMSamples{{Minute: t0, Network: n1, Pool: "p", Counts: hist(3, 1)}}))
	// A retried write replaces the row.
	must(s.AddRUMSamples(c, "a", []pools.RUMSamples{{Minute: t0, Network: n1, Pool: "p", Counts: hist(3, 2, 40, 1)}}))
	must(s.AddRUMSamples(c, "b", []pools.RUMSamples{{Minute: t0, Network: n1, Pool: "p", Counts: hist(3, 5)},
		{Minute: t0.Add(time.Minute), Network: n1, Pool: "p", Counts: hist(40, 1)}, {Minute: t0, Network: n2, Pool: "q", Counts: hist(9, 7)}}))
	// Before the window: not read.
	must(s.AddRUMSamples(c, "a", []pools.RUMSamples{{Minute: t0.Add(-time.Minute), Network: n1, Pool: "p", Counts: hist(100, 50)}}))
	rows, err := s.RUMSamples(c, t0)
	must(err)
	sums := map[string][]int32{}
	for _, r := range rows {
		sums[r.Network.String()+" "+r.Pool] = r.Counts
	}
	if len(sums) != 2 || !slices.Equal(sums["198.51.100.0/24 p"], hist(3, 7, 40, 2)) || !slices.Equal(sums["2001:db8:1::/48 q"], hist(9, 7)) {
		t.Errorf("summed histograms %v", sums)
	}

	r1 := netip.MustParsePrefix("192.0.2.0/24")
	must(s.AddRUMTokens(c, []pools.RUMToken{{Token: "aaaaaaaa1", Resolver: r1, Seen: t0}, {Token: "aaaaaaaa2", Network: n1, Seen: t0}}))
	must(s.AddRUMTokens(c, []pools.RUMToken{{Token: "aaaaaaaa1", Network: n1, Seen: t0.Add(time.Second)}, {Token: "aaaaaaaa2", Resolver: r1, Seen: t0},
		{Token: "aaaaaaaa3", Resolver: r1, Seen: t0}, {Token: "aaaaaaaa4", Resolver: r1, Network: n2, Seen: t0.Add(-time.Hour)}}))
	links, err := s.RUMResolverLinks(c, t0)
	must(err)
	if len(links) != 1 || links[0] != (pools.RUMResolverLink{Resolver: r1, Network: n1, Reports: 2}) {
		t.Errorf("resolver links %+v, want 192.0.2.0/24 → 198.51.100.0/24 twice", links)
	}

	must(s.PruneRUM(c, t0.Add(time.Minute)))
	rows, err = s.RUMSamples(c, time.Unix(0, 0))
	must(err)
	if len(rows) != 1 || !slices.Equal(rows[0].Counts, hist(40, 1)) {
		t.Errorf("after pruning: %+v", rows)
	}
	if links, _ := s.RUMResolverLinks(c, time.Unix(0, 0)); len(links) != 0 {
		t.Errorf("tokens after pruning: %+v", links)
	}
}

func decodeObj(t *testing.T, k pools.Kind, doc string) pools.Object {
	t.Helper()
	o := pools.New(k)
	if err := json.Unmarshal([]byte(doc), o); err != nil {
		t.Fatalf("decode %s: %v", k, err)
	}
	return o
}
