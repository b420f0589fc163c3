package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/glb-dns/glb/dnsserver"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/pools/embedded"
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

// BenchmarkUpdateConcurrent is eight clients sending signed UPDATEs over
// UDP, each waiting for its answer before the next, to one zone of 10,000
// records in the embedded store: TSIG, the zone's committer and its
// shared writes, as a node serves them (the node's rebuild of the
// snapshot after each write, which shares the CPU, is not part of it).
// It reports updates/s and updates per store write.
func BenchmarkUpdateConcurrent(b *testing.B) {
	st, err := embedded.Open(filepath.Join(b.TempDir(), "glb.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ctx := b.Context()
	z := pools.DefaultZone()
	z.Name, z.Nameservers = "glb.example.com", []string{"ns1.glb.example.com"}
	z.Records = []pools.Record{{Name: "ns1.glb.example.com", Type: "A", Content: "127.0.0.1"}}
	for i := range 10000 {
		z.Records = append(z.Records, pools.Record{Name: fmt.Sprintf("r%d.glb.example.com", i), Type: "TXT", Content: fmt.Sprintf(`"static %d"`, i)})
	}
	o, err := st.Create(ctx, &z)
	if err != nil {
		b.Fatal(err)
	}
	secret := pools.NewTSIGSecret(pools.TSIGHMACSHA256)
	if _, err := st.CreateTSIGKey(ctx, pools.TSIGKey{Name: "load", Algorithm: pools.TSIGHMACSHA256, Secret: secret,
		Grants: []pools.TSIGGrant{{Zone: o.ObjectMeta().ID, Name: "glb.example.com", Match: pools.MatchSubtree, Types: []string{"TXT"}}}}); err != nil {
		b.Fatal(err)
	}
	cfg, err := st.Config(ctx)
	if err != nil {
		b.Fatal(err)
	}
	sst, err := steering.Compile(cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	ds, err := dnsserver.Compile(sst, nil)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := dnsserver.New(dnsserver.Config{Addr: "127.0.0.1:0", Registerer: prometheus.NewRegistry(),
		Logger: slog.New(slog.DiscardHandler), Updates: st})
	if err != nil {
		b.Fatal(err)
	}
	if err := srv.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	srv.Publish(ds)
	addr := srv.Addr().String()

	const clients = 8
	var next atomic.Int64
	var failed atomic.Int64
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := &dns.Client{Net: "udp", Timeout: 30 * time.Second, TsigSecret: map[string]string{"load.": secret}}
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				m := new(dns.Msg)
				m.SetUpdate("glb.example.com.")
				rr, _ := dns.NewRR(fmt.Sprintf("c%d-%d.glb.example.com. 60 IN TXT \"x\"", c, i))
				m.Insert([]dns.RR{rr})
				m.SetTsig("load.", dns.HmacSHA256, 300, time.Now().Unix())
				if r, _, err := cl.Exchange(m, addr); err != nil || r.Rcode != dns.RcodeSuccess {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	b.StopTimer()
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d of %d updates failed", n, b.N)
	}
	audit, err := st.Audit(ctx, pools.AuditFilter{Actor: "tsig:load"}, pools.Page{PerPage: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/took.Seconds(), "updates/s")
	b.ReportMetric(float64(b.N)/float64(max(audit.TotalCount, 1)), "updates/write")
}
