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

// TestUpdateRecompilesOnlyChangedRecords: after a change to some of a
// zone's static records (content at a name kept, a TTL, a record added,
// one removed, a CNAME's target, the zone's TTL), Update builds every
// name's records and CNAME target byte for byte as Compile does, and
// takes the compiled records it can from the zone it replaces.
func TestUpdateRecompilesOnlyChangedRecords(t *testing.T) {
	cfg := testConfig()
	cfg.Zones = slices.Clone(cfg.Zones)
	z := &cfg.Zones[0]
	z.Records = append(slices.Clone(z.Records),
		pools.Record{Name: "keep.glb.example.com", Type: "TXT", Content: `"kept"`},
		pools.Record{Name: "txt.glb.example.com", Type: "TXT", Content: `"one"`},
		pools.Record{Name: "ttl.glb.example.com", Type: "A", Content: "192.0.2.9"},
		pools.Record{Name: "gone.glb.example.com", Type: "A", Content: "192.0.2.10"},
		pools.Record{Name: "alias.glb.example.com", Type: "CNAME", Content: "a.example.net"})
	st, prev := compileBoth(t, cfg)
	apex, _ := wireName(z.Name)
	tailOf := func(s *Snapshot, name string, typ uint16) []byte {
		w, _ := wireName(name)
		if n := s.zones[string(apex)].nodes[string(w)]; n != nil {
			if set := n.rrset(typ); set != nil && len(set.rrs) == 1 {
				return set.rrs[0]
			}
		}
		return nil
	}
	steps := []struct {
		name   string
		change func(z *pools.Zone)
		// kept is a record whose compiled form must be shared.
		kept string
	}{
		{"content at a name", func(z *pools.Zone) { setContent(z, "txt.glb.example.com", `"two"`) }, "keep.glb.example.com"},
		{"a record's ttl", func(z *pools.Zone) { setTTL(z, "ttl.glb.example.com", 42) }, "keep.glb.example.com"},
		{"added and removed", func(z *pools.Zone) {
			z.Records = slices.DeleteFunc(z.Records, func(r pools.Record) bool { return r.Name == "gone.glb.example.com" })
			z.Records = append(z.Records, pools.Record{Name: "added.glb.example.com", Type: "A", Content: "192.0.2.11"})
		}, "keep.glb.example.com"},
		{"a cname's target", func(z *pools.Zone) { setContent(z, "alias.glb.example.com", "b.example.net") }, "keep.glb.example.com"},
		{"the zone's ttl", func(z *pools.Zone) { z.TTL += 10 }, ""},
	}
	for _, step := range steps {
		next := *cfg
		next.Revision++
		next.Zones = slices.Clone(next.Zones)
		nz := &next.Zones[0]
		nz.Records = slices.Clone(nz.Records)
		step.change(nz)
		nz.Revision++
		nz.Serial++
		ust, got, want := updateAndCompile(t, st, prev, &next)
		sameSnapshot(t, step.name, got, want)
		gz, wz := got.zones[string(apex)], want.zones[string(apex)]
		for name, wn := range wz.nodes {
			gn := gz.nodes[name]
			if !bytes.Equal(gn.target, wn.target) {
				t.Errorf("%s: %s has CNAME target %q, a full compile %q", step.name, wireString([]byte(name)), gn.target, wn.target)
			}
			for i := range wn.rrsets {
				if gn.rrsets[i].typ != wn.rrsets[i].typ || !slices.EqualFunc(gn.rrsets[i].rrs, wn.rrsets[i].rrs, bytes.Equal) {
					t.Errorf("%s: %s type %d differs from a full compile", step.name, wireString([]byte(name)), wn.rrsets[i].typ)
				}
			}
		}
		if step.kept != "" {
			a, b := tailOf(got, step.kept, 16), tailOf(prev, step.kept, 16)
			if a == nil || b == nil || &a[0] != &b[0] {
				t.Errorf("%s: the unchanged %s was compiled again", step.name, step.kept)
			}
		}
		cfg, st, prev = &next, ust, got
	}
}

func setContent(z *pools.Zone, name, content string) {
	for i := range z.Records {
		if z.Records[i].Name == name {
			z.Records[i].Content = content
		}
	}
}

func setTTL(z *pools.Zone, name string, ttl uint32) {
	for i := range z.Records {
		if z.Records[i].Name == name {
			z.Records[i].TTL = ttl
		}
	}
}
