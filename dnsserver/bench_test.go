package dnsserver

import (
	"context"
	"log/slog"
	"net"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/glb-dns/glb/analytics"
	"github.com/glb-dns/glb/dnsserver/tap"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/rum"
)

func benchQuery(t testing.TB, name string, ecs string) []byte {
	return benchQueryType(t, name, dns.TypeA, ecs)
}

func benchQueryType(t testing.TB, name string, qtype uint16, ecs string) []byte {
	c := tcase{qname: name, qtype: qtype, ecs: ecs, edns: true}
	wire, err := c.msg().Pack()
	if err != nil {
		t.Fatal(err)
	}
	return wire
}

// TestHandlerAllocatesNothing: the whole answer path, parse to packed
// reply, for a static name and a geo + zonal affinity + ECS load balancer.
func TestHandlerAllocatesNothing(t *testing.T) {
	s := newTestServer(t, prometheus.NewRegistry())
	w := newWorker()
	src := netip.MustParseAddr("127.0.0.1")
	for _, q := range [][]byte{
		benchQuery(t, "ns1.glb.example.com.", ""),
		benchQuery(t, "lb-geo.glb.example.com.", "198.51.100.0/24"),
		benchQuery(t, "www.glb.example.com.", "203.0.113.0/24"),
		benchQuery(t, "www.sub.glb.example.com.", ""), // referral with glue
		benchQuery(t, "nope.sub.glb.example.com.", ""),
		benchQueryType(t, "lb-https.glb.example.com.", dns.TypeHTTPS, "198.51.100.0/24"),
		// prefer_ecs auto, the default, deciding on the ECS subnet.
		benchQuery(t, "lb-off.glb.example.com.", "203.0.113.0/24"),
		// A DNAME's synthesis, into another zone and on.
		benchQuery(t, "x.old.glb.example.com.", ""),
	} {
		if n := testing.AllocsPerRun(1000, func() { w.handle(s, q, src, false) }); n != 0 {
			t.Errorf("%.1f allocations per query, want 0", n)
		}
	}
	// With the answers counted and every query sampled.
	counted := newCountedServer(t, analytics.NewCounts(0), analytics.NewSample(0, 1))
	for _, q := range [][]byte{
		benchQuery(t, "lb-geo.glb.example.com.", "198.51.100.0/24"),
		benchQueryType(t, "lb-https.glb.example.com.", dns.TypeHTTPS, "198.51.100.0/24"),
	} {
		if n := testing.AllocsPerRun(1000, func() { w.handle(counted, q, src, false) }); n != 0 {
			t.Errorf("%.1f allocations per counted query, want 0", n)
		}
	}
	// With a pool order rollout half way on lb-off.
	staged := newTestServer(t, prometheus.NewRegistry())
	staged.Publish(compileTest(t, stagedConfig()))
	q := benchQuery(t, "lb-off.glb.example.com.", "")
	if n := testing.AllocsPerRun(1000, func() { w.handle(staged, q, src, false) }); n != 0 {
		t.Errorf("%.1f allocations per query under an order rollout, want 0", n)
	}
	// With NSID, a cookie and RRL (limiting and slipping) on the path.
	e := newEdgeServer(t, prometheus.NewRegistry(), func(c *Config) { c.NSID = "node-a"; c.RRL.Rate = 5 })
	q = rawQuery(t, 1, append([]byte{0, optionNSID, 0, 0}, cookieOption([]byte{1, 2, 3, 4, 5, 6, 7, 8})...))
	if n := testing.AllocsPerRun(1000, func() { w.handle(e, q, src, false) }); n != 0 {
		t.Errorf("%.1f allocations per query with cookie, NSID and RRL, want 0", n)
	}
}

// controlledConfig is testConfig with the traffic controls in force on
// lb-geo's answering pool eu: an origin shift (eu2, not the one answered)
// and 1 % load shedding by subnet hash, which the benchmark's subnet
// does not fall into. The answer is the same; the cost is that of
// checking the controls.
func controlledConfig() *pools.Config {
	cfg := testConfig()
	now := time.Now()
	for i := range cfg.Pools {
		if cfg.Pools[i].ID == "eu" {
			cfg.Pools[i].LoadShedding = pools.LoadShedding{DefaultPercent: 1, DefaultPolicy: pools.ShedHash}
		}
	}
	cfg.Shifts = []pools.Shift{{Meta: pools.Meta{ID: "s1"}, Target: pools.ShiftTarget{Origin: "eu/eu2"},
		Reason: "benchmark", StartsAt: now.Add(-time.Minute), ExpiresAt: now.Add(time.Hour)}}
	return cfg
}

// stagedConfig is testConfig with a rollout half way through moving
// lb-off's default pools from [us] to [eu, us]: each query draws which
// order answers it.
func stagedConfig() *pools.Config {
	cfg := testConfig()
	cfg.Rollouts = []pools.Rollout{{Meta: pools.Meta{ID: "r"}, LoadBalancer: "lb-off", DefaultPools: []string{"eu", "us"},
		FromDefaultPools: []string{"us"}, Steps: []float64{50, 100}, StepInterval: "24h",
		StartsAt: time.Now().Add(-time.Minute), State: pools.RolloutRunning}}
	return cfg
}

// stuckTap is a dnstap output of every exchange to a reader that accepts
// and never reads: once its ring is full, each query pays for a drop.
func stuckTap(b *testing.B) *tap.Tap {
	sock := filepath.Join(b.TempDir(), "stuck.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			b.Cleanup(func() { c.Close() })
		}
	}()
	t, err := tap.New(tap.Config{Address: "unix:" + sock, Sample: 1, Slots: 64})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		t.Close(ctx)
	})
	return t
}

func BenchmarkHandler(b *testing.B) {
	s := newTestServer(b, prometheus.NewRegistry())
	controlled := newTestServer(b, prometheus.NewRegistry())
	controlled.Publish(compileTest(b, controlledConfig()))
	staged := newTestServer(b, prometheus.NewRegistry())
	staged.Publish(compileTest(b, stagedConfig()))
	tapped, err := New(Config{Addr: "127.0.0.1:0", Registerer: prometheus.NewRegistry(), Logger: slog.New(slog.DiscardHandler), Tap: stuckTap(b)})
	if err != nil {
		b.Fatal(err)
	}
	tapped.Publish(compileTest(b, testConfig()))
	counted := newCountedServer(b, analytics.NewCounts(0), analytics.NewSample(0, 0))
	ringed, err := New(Config{Addr: "127.0.0.1:0", Registerer: prometheus.NewRegistry(), Logger: slog.New(slog.DiscardHandler), RUMTokens: rum.NewTokens(1024)})
	if err != nil {
		b.Fatal(err)
	}
	ringed.Publish(compileTest(b, testConfig()))
	src := netip.MustParseAddr("127.0.0.1")
	for _, bc := range []struct {
		name, qname string
		qtype       uint16
		ecs         string
		s           *Server
	}{
		{"static", "ns1.glb.example.com.", dns.TypeA, "", s},
		{"lb-geo-zonal-ecs", "lb-geo.glb.example.com.", dns.TypeA, "198.51.100.0/24", s},
		// Shifts and shedding configured on the pool that answers.
		{"lb-geo-zonal-ecs-controlled", "lb-geo.glb.example.com.", dns.TypeA, "198.51.100.0/24", controlled},
		// A rollout half way through a pool order change: a draw per query.
		{"lb-off", "lb-off.glb.example.com.", dns.TypeA, "", s},
		{"lb-off-ecs-auto", "lb-off.glb.example.com.", dns.TypeA, "203.0.113.0/24", s},
		{"lb-off-staged-order", "lb-off.glb.example.com.", dns.TypeA, "", staged},
		{"lb-https-geo-zonal-ecs", "lb-https.glb.example.com.", dns.TypeHTTPS, "198.51.100.0/24", s},
		// Every exchange offered to dnstap, whose reader never reads.
		{"lb-geo-zonal-ecs-tap-stuck", "lb-geo.glb.example.com.", dns.TypeA, "198.51.100.0/24", tapped},
		// Answers counted for the analytics API, one query in 100 sampled.
		{"lb-geo-zonal-ecs-counted", "lb-geo.glb.example.com.", dns.TypeA, "198.51.100.0/24", counted},
		// A RUM beacon's unique name: NODATA, the token handed to the ring.
		{"rum-token", "abcdefgh12.rum.glb.example.com.", dns.TypeA, "", ringed},
	} {
		q := benchQueryType(b, bc.qname, bc.qtype, bc.ecs)
		s := bc.s
		b.Run(bc.name, func(b *testing.B) { benchHandle(b, s, q, src) })
	}
}

// benchHandle measures s answering q from src, over and over, with the
// allocations (the answer path makes none).
func benchHandle(b *testing.B, s *Server, q []byte, src netip.Addr) {
	w := newWorker()
	b.ReportAllocs()
	for b.Loop() {
		if w.handle(s, q, src, false) == nil {
			b.Fatal("no reply")
		}
	}
}
