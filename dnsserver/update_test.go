package dnsserver

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
)

// sameSnapshot fails unless a and b hold the same zones, names, load
// balancers (by id and metrics index) and origin records.
func sameSnapshot(t *testing.T, what string, a, b *Snapshot) {
	t.Helper()
	if len(a.zones) != len(b.zones) {
		t.Fatalf("%s: %d zones, want %d", what, len(a.zones), len(b.zones))
	}
	for apex, za := range a.zones {
		zb := b.zones[apex]
		if zb == nil || !bytes.Equal(za.soa, zb.soa) || len(za.nodes) != len(zb.nodes) {
			t.Fatalf("%s: zone %s differs", what, wireString([]byte(apex)))
		}
		for name, na := range za.nodes {
			nb := zb.nodes[name]
			if nb == nil || (na.lb == nil) != (nb.lb == nil) || len(na.rrsets) != len(nb.rrsets) {
				t.Fatalf("%s: name %s differs", what, wireString([]byte(name)))
			}
			if na.lb != nil && (na.lb.ID() != nb.lb.ID() || na.lbIdx != nb.lbIdx || a.lbs[na.lbIdx] != na.lb ||
				na.lb.TTL() != nb.lb.TTL() || na.lb.Policy() != nb.lb.Policy()) {
				t.Fatalf("%s: load balancer at %s differs", what, wireString([]byte(name)))
			}
		}
	}
	// Origin slots may differ where a pool was deleted; the records of
	// every pool by id must match.
	for p := range int32(a.steer.NumPools()) {
		id := a.steer.PoolID(p)
		if id == "" {
			continue
		}
		q := int32(-1)
		for i := range int32(b.steer.NumPools()) {
			if b.steer.PoolID(i) == id {
				q = i
			}
		}
		fa, n := a.steer.PoolOrigins(p)
		fb, m := b.steer.PoolOrigins(q)
		if q < 0 || n != m {
			t.Fatalf("%s: pool %s differs", what, id)
		}
		for j := range int32(n) {
			if !bytes.Equal(a.originTail(fa+j), b.originTail(fb+j)) || !bytes.Equal(a.hostTail(fa+j), b.hostTail(fb+j)) {
				t.Fatalf("%s: origin %d of pool %s differs", what, j, id)
			}
		}
	}
}

// TestUpdateBuildsWhatCompileBuilds: for a series of changes (a pool's
// origins, a load balancer, a zone's records and serial, a new load
// balancer, a deleted one), Update from the previous DNS snapshot builds
// what Compile builds, and shares the origins of unchanged pools.
func TestUpdateBuildsWhatCompileBuilds(t *testing.T) {
	cfg := testConfig()
	st, prev := compileBoth(t, cfg)
	steps := []struct {
		name   string
		change func(c *pools.Config)
	}{
		{"pool origins", func(c *pools.Config) {
			c.Pools = slices.Clone(c.Pools)
			p := &c.Pools[0]
			p.Origins = slices.Clone(p.Origins)
			p.Origins[0].Address = "192.0.2.77"
			p.Origins = append(p.Origins, pools.Origin{Name: "host", Address: "eu.example.net", Enabled: true, Weight: 1})
			p.Revision++
		}},
		{"load balancer ttl", func(c *pools.Config) {
			c.LoadBalancers = slices.Clone(c.LoadBalancers)
			c.LoadBalancers[1].TTL = 99
			c.LoadBalancers[1].Revision++
		}},
		{"zone records and serial", func(c *pools.Config) {
			c.Zones = slices.Clone(c.Zones)
			z := &c.Zones[0]
			z.Records = append(slices.Clone(z.Records), pools.Record{Name: "new.glb.example.com", Type: "A", Content: "192.0.2.200"})
			z.Serial++
			z.Revision++
		}},
		{"new load balancer", func(c *pools.Config) {
			l := pools.DefaultLoadBalancer()
			l.ID, l.Zone, l.Name, l.DefaultPools, l.FallbackPool = "lb-new", "z2", "lb.other.test", []string{"v6"}, "v6"
			c.LoadBalancers = append(slices.Clone(c.LoadBalancers), l)
		}},
		{"deleted pool and load balancer", func(c *pools.Config) {
			c.LoadBalancers = slices.DeleteFunc(slices.Clone(c.LoadBalancers), func(l pools.LoadBalancer) bool { return l.ID == "lb-v6" || l.ID == "lb-new" })
			c.Pools = slices.DeleteFunc(slices.Clone(c.Pools), func(p pools.Pool) bool { return p.ID == "v6" })
		}},
	}
	for i, step := range steps {
		next := *cfg
		next.Revision++
		step.change(&next)
		ust, got, want := updateAndCompile(t, st, prev, &next)
		sameSnapshot(t, fmt.Sprintf("step %d (%s)", i, step.name), got, want)
		if i == 0 {
			first, _ := ust.PoolOrigins(1) // "us": unchanged, shared
			if &got.originTail(first)[0] != &prev.originTail(first)[0] {
				t.Errorf("%s: the records of an unchanged pool were built again", step.name)
			}
		}
		cfg, st, prev = &next, ust, got
	}
}

// TestUpdateHTTPSInKeptZone: an https object given to or taken from a load
// balancer, with its signed zone otherwise unchanged (the zone is kept),
// changes what the name answers and its NSEC type bitmap as a full
// compile would.
func TestUpdateHTTPSInKeptZone(t *testing.T) {
	cfg := signedConfig(t, nil)
	st, prev := compileBoth(t, cfg)
	apex, _ := wireName("glb.example.com")
	for _, step := range []struct {
		lb    string
		https *pools.HTTPSRecord
	}{{"lb-geo", &pools.HTTPSRecord{ALPN: []string{"h3"}}}, {"lb-https", nil}} {
		next := *cfg
		next.Revision++
		next.LoadBalancers = slices.Clone(next.LoadBalancers)
		i := slices.IndexFunc(next.LoadBalancers, func(l pools.LoadBalancer) bool { return l.ID == step.lb })
		next.LoadBalancers[i].HTTPS = step.https
		next.LoadBalancers[i].Revision++
		ust, got, want := updateAndCompile(t, st, prev, &next)
		name, _ := wireName(step.lb + ".glb.example.com")
		g, w := got.zones[string(apex)].nodes[string(name)], want.zones[string(apex)].nodes[string(name)]
		if (g.https == nil) != (step.https == nil) || !slices.Equal(g.types, w.types) || slices.Contains(g.types, typeHTTPS) != (step.https != nil) {
			t.Fatalf("%s with https %v: https %v, types %v; a full compile has types %v", step.lb, step.https, g.https, g.types, w.types)
		}
		cfg, st, prev = &next, ust, got
	}
}

// compileBoth compiles cfg for steering, then for DNS (no locator).
func compileBoth(t testing.TB, cfg *pools.Config) (*steering.Snapshot, *Snapshot) {
	t.Helper()
	st, err := steering.Compile(cfg, nil)
	if err != nil {
		t.Fatalf("steering compile: %v", err)
	}
	snap, err := Compile(st, nil)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return st, snap
}

// updateAndCompile brings st and prev to next as a running node does
// (got, by Update) and as a node starting afresh would (want, by Compile).
func updateAndCompile(t testing.TB, st *steering.Snapshot, prev *Snapshot, next *pools.Config) (ust *steering.Snapshot, got, want *Snapshot) {
	t.Helper()
	ust, err := steering.Update(st, next, nil, nil)
	if err != nil {
		t.Fatalf("steering update to revision %d: %v", next.Revision, err)
	}
	if got, err = Update(prev, ust, nil); err != nil {
		t.Fatalf("update to revision %d: %v", next.Revision, err)
	}
	if want, err = Compile(ust, nil); err != nil {
		t.Fatalf("compile revision %d: %v", next.Revision, err)
	}
	return ust, got, want
}
