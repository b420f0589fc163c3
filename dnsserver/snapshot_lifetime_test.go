package dnsserver

import (
	"maps"
	"net/netip"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"weak"

	"github.com/glb-dns/glb/analytics"
	"github.com/glb-dns/glb/geodata"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
)

// TestSnapshotDiesWithItsSuccessor: a server counting its answers
// publishes snapshots as a node does (steering.Update, then Update from
// the last one), each answering a query; once the next is published,
// nothing keeps the one before alive, neither the DNS snapshot nor its
// steering snapshot, though the counts of its epoch are not drained yet
// (a node drains a bucket 5 s after it ends: holding snapshots until then
// kept every one of the last 15 s, tens of megabytes each at 100,000
// origins). The counts drained afterwards still name what each answered.
// Names unchanged by a write (an address, a TTL) keep the epoch, and a
// write makes again the names of the load balancers it renamed something
// in, no others.
func TestSnapshotDiesWithItsSuccessor(t *testing.T) {
	c := analytics.NewCounts(0)
	s := newCountedServer(t, c, analytics.NewSample(64, 1))
	w := newWorker()
	q := benchQuery(t, "lb-geo.glb.example.com.", "198.51.100.0/24") // DE, zone-a: eu1
	src := netip.MustParseAddr("192.0.2.200")
	first := analytics.Bucket(time.Now())

	type gone struct {
		what string
		dns  weak.Pointer[Snapshot]
		st   weak.Pointer[steering.Snapshot]
	}
	var published []gone
	cfg := testConfig()
	var st *steering.Snapshot
	var last *Snapshot // the node's last (dnsService.last)
	var prevEpoch uint16
	prevNames := map[string]*lbNames{}
	steps := []struct {
		what       string
		change     func(*pools.Config)
		sameEpoch  bool
		wantOrigin string
		// remade are the load balancers whose names are made again; every
		// other one keeps the names it had.
		remade []string
	}{
		{"first", func(c *pools.Config) {
			// A pool whose origin is named as us's, with a load balancer.
			tw := pools.DefaultPool()
			tw.ID, tw.Name = "twin", "twin"
			tw.Origins = []pools.Origin{{Name: "us1", Address: "192.0.2.21", Enabled: true, Weight: 1}}
			c.Pools = append(slices.Clone(c.Pools), tw)
			l := pools.DefaultLoadBalancer()
			l.ID, l.Zone, l.Name, l.DefaultPools, l.FallbackPool = "lb-twin", "z1", "lb-twin.glb.example.com", []string{"twin"}, "twin"
			c.LoadBalancers = append(slices.Clone(c.LoadBalancers), l)
		}, false, "eu1", nil},
		{"an origin's address", func(c *pools.Config) { pool(c, "eu").Origins[0].Address = "192.0.2.12" }, true, "eu1", nil},
		{"an origin renamed", func(c *pools.Config) { pool(c, "eu").Origins[0].Name = "eu1b" }, false, "eu1b", []string{"lb-geo", "lb-https"}},
		{"the last load balancer's origin renamed", func(c *pools.Config) { pool(c, "many").Origins[0].Name = "m0b" }, false, "eu1b", []string{"lb-all"}},
		{"a load balancer added", func(c *pools.Config) {
			l := pools.DefaultLoadBalancer()
			l.ID, l.Zone, l.Name, l.DefaultPools, l.FallbackPool = "lb-new", "z2", "lb.other.test", []string{"v6"}, "v6"
			c.LoadBalancers = append([]pools.LoadBalancer{l}, c.LoadBalancers...) // every index moves
		}, false, "eu1b", nil},
		{"a load balancer's ttl", func(c *pools.Config) {
			c.LoadBalancers = slices.Clone(c.LoadBalancers)
			c.LoadBalancers[2].TTL = 99
			c.LoadBalancers[2].Revision++
		}, true, "eu1b", nil},
		// A node compiling afresh (at start, or past the change log) with
		// us and twin at each other's index: names are found by pool id.
		{"a fresh compile, two pools swapped", func(c *pools.Config) {
			c.Pools = slices.Clone(c.Pools)
			i := slices.IndexFunc(c.Pools, func(p pools.Pool) bool { return p.ID == "us" })
			j := slices.IndexFunc(c.Pools, func(p pools.Pool) bool { return p.ID == "twin" })
			c.Pools[i], c.Pools[j] = c.Pools[j], c.Pools[i]
		}, true, "eu1b", nil},
	}
	for i, step := range steps {
		next := *cfg
		next.Revision++
		step.change(&next)
		var err error
		if st == nil || strings.HasPrefix(step.what, "a fresh compile") {
			st, err = steering.Compile(&next, nil)
		} else {
			st, err = steering.Update(st, &next, nil, nil)
		}
		if err != nil {
			t.Fatalf("%s: steering: %v", step.what, err)
		}
		nets, err := geodata.NewNetworks(next.Networks)
		if err != nil {
			t.Fatal(err)
		}
		snap, err := Update(last, st, geodata.Locator{Networks: nets})
		if err != nil {
			t.Fatalf("%s: %v", step.what, err)
		}
		published = append(published, gone{step.what, weak.Make(snap), weak.Make(st)})
		s.Publish(snap)
		cfg, last = &next, snap
		snap = nil
		if reply := w.handle(s, q, src, false); reply == nil {
			t.Fatalf("%s: no reply", step.what)
		}
		epoch := s.live.Load().epoch
		if i > 0 && (epoch == prevEpoch) != step.sameEpoch {
			t.Errorf("%s: epoch %d after %d; the same: %v, want %v", step.what, epoch, prevEpoch, epoch == prevEpoch, step.sameEpoch)
		}
		prevEpoch = epoch
		names := map[string]*lbNames{}
		for _, n := range s.live.Load().snap.names.lbs {
			names[n.id] = n
		}
		for id, n := range prevNames {
			if remade := slices.Contains(step.remade, id); (names[id] != n) != remade {
				t.Errorf("%s: the names of %s made again: %v, want %v", step.what, id, names[id] != n, remade)
			}
		}
		prevNames = names
		sameNames(t, step.what, s.live.Load().snap)

		runtime.GC()
		for _, p := range published[:len(published)-1] {
			if p.dns.Value() != nil || p.st.Value() != nil {
				t.Errorf("after %q was published, the snapshot of %q is still alive (DNS %v, steering %v)",
					step.what, p.what, p.dns.Value() != nil, p.st.Value() != nil)
			}
		}
		if published[i].dns.Value() == nil {
			t.Fatalf("%s: the snapshot being served was collected", step.what)
		}
	}

	var rows []pools.AnswerCount
	for b := first; b <= analytics.Bucket(time.Now()); b++ {
		rows = append(rows, c.Drain(b)...)
	}
	got := map[string]int64{}
	for _, r := range rows {
		got[r.LoadBalancer+" "+r.Pool+"/"+r.Origin] += r.Answers
	}
	want := map[string]int64{}
	for _, step := range steps {
		want["lb-geo eu/"+step.wantOrigin]++
	}
	if !maps.Equal(got, want) {
		t.Errorf("drained %v, want %v", got, want)
	}
}

// pool is the pool id of c, its list and its origins copied so that the
// configuration c was copied from is left as it was.
func pool(c *pools.Config, id string) *pools.Pool {
	c.Pools = slices.Clone(c.Pools)
	i := slices.IndexFunc(c.Pools, func(p pools.Pool) bool { return p.ID == id })
	p := &c.Pools[i]
	p.Origins = slices.Clone(p.Origins)
	p.Revision++
	return p
}

// sameNames fails unless the answer counts' names of snap name what its
// steering snapshot holds at each index.
func sameNames(t *testing.T, what string, snap *Snapshot) {
	t.Helper()
	if len(snap.names.lbs) != len(snap.lbs) {
		t.Fatalf("%s: names of %d load balancers, want %d", what, len(snap.names.lbs), len(snap.lbs))
	}
	for i, lb := range snap.lbs {
		n := snap.names.lbs[i]
		if n.id != lb.ID() || len(n.pools) != len(lb.Pools()) {
			t.Fatalf("%s: load balancer %d named %s with %d pools, want %s with %d", what, i, n.id, len(n.pools), lb.ID(), len(lb.Pools()))
		}
		for k, p := range lb.Pools() {
			var origins []string
			first, count := snap.steer.PoolOrigins(p)
			for j := range int32(count) {
				origins = append(origins, snap.steer.Origin(first+j).Name)
			}
			if pn := n.pools[k]; pn.id != snap.steer.PoolID(p) || !slices.Equal(pn.origins, origins) {
				t.Errorf("%s: %s's pool %d named %s %v, want %s %v", what, lb.ID(), k, pn.id, pn.origins, snap.steer.PoolID(p), origins)
			}
		}
	}
}
