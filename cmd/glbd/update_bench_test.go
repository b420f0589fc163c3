package main

import (
	"fmt"
	"log/slog"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/glb-dns/glb/dnsserver"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
)

// estate is n pools of 64 origins with one load balancer each.
func estate(n int) *pools.Config {
	cfg := &pools.Config{Revision: 1}
	z := pools.DefaultZone()
	z.ID, z.Name, z.Nameservers = "z", "scale.example.com", []string{"ns1.scale.example.com"}
	cfg.Zones = []pools.Zone{z}
	for i := range n {
		p := pools.DefaultPool()
		p.ID, p.Name, p.Revision = fmt.Sprintf("p%d", i), fmt.Sprintf("pool %d", i), 1
		for j := range 64 {
			o := pools.DefaultOrigin()
			o.Name, o.Address = fmt.Sprintf("o%d", j), fmt.Sprintf("10.%d.%d.%d", i/250, i%250, j+1)
			p.Origins = append(p.Origins, o)
		}
		cfg.Pools = append(cfg.Pools, p)
		l := pools.DefaultLoadBalancer()
		l.ID, l.Zone, l.Name, l.Revision = fmt.Sprintf("lb%d", i), "z", fmt.Sprintf("lb%d.scale.example.com", i), 1
		l.DefaultPools, l.FallbackPool = []string{p.ID, fmt.Sprintf("p%d", (i+1)%n)}, p.ID
		cfg.LoadBalancers = append(cfg.LoadBalancers, l)
	}
	return cfg
}

// BenchmarkOnePoolChange is what a node does to serve a change to one pool
// of 1,600 (102,400 origins) or 16,000 (1,024,000): apply the change set,
// update the steering and DNS snapshots, publish.
func BenchmarkOnePoolChange(b *testing.B) {
	for _, n := range []int{1600, 16000} {
		b.Run(fmt.Sprintf("pools=%d", n), func(b *testing.B) { benchmarkOnePoolChange(b, n) })
	}
}

func benchmarkOnePoolChange(b *testing.B, n int) {
	cfg := estate(n)
	st, err := steering.Compile(cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	ds, err := dnsserver.Compile(st, nil)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := dnsserver.New(dnsserver.Config{Addr: "127.0.0.1:0", Registerer: prometheus.NewRegistry(),
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	srv.Publish(ds)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		p := cfg.Pools[i%len(cfg.Pools)]
		p.Origins = slices.Clone(p.Origins)
		p.Origins[0].Weight = float64(i%10) / 10
		p.Revision++
		cs := &pools.ChangeSet{Since: cfg.Revision, Revision: cfg.Revision + 1,
			Changes: []pools.ObjectChange{{Kind: pools.KindPool, ID: p.ID, Revision: cfg.Revision + 1, Object: &p}}}
		next, err := cfg.Apply(cs)
		if err != nil {
			b.Fatal(err)
		}
		nst, err := steering.Update(st, next, nil, map[string]bool{})
		if err != nil {
			b.Fatal(err)
		}
		nds, err := dnsserver.Update(ds, nst, nil)
		if err != nil {
			b.Fatal(err)
		}
		srv.Publish(nds)
		cfg, st, ds = next, nst, nds
	}
}

// BenchmarkLastGoodAfterOneChange is the last good file written after a
// change to one pool of 1,600 (102,400 origins): off the path to DNS, but
// on the CPU and the heap the next change needs.
func BenchmarkLastGoodAfterOneChange(b *testing.B) {
	cfg := estate(1600)
	dir := b.TempDir()
	enc := &configEncoder{}
	if err := saveLastGood(dir, cfg, enc); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		next := *cfg
		next.Revision++
		next.Pools = slices.Clone(cfg.Pools)
		p := &next.Pools[i%len(next.Pools)]
		p.Origins = slices.Clone(p.Origins)
		p.Origins[0].Weight = float64(i%10) / 10
		p.Revision++
		if err := saveLastGood(dir, &next, enc); err != nil {
			b.Fatal(err)
		}
		cfg = &next
	}
}
