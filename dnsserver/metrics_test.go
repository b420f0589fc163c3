package dnsserver

import (
	"log/slog"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/glb-dns/glb/pools"
)

func TestMetricsLint(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	s := newTestServer(t, reg)
	// Count a bit of everything so that every family has a sample.
	for _, c := range cases {
		exchangeProc(t, s, &c)
	}
	s.metrics.panics.Add(0)
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Fatalf("promlint: %v %v", err, problems)
	}
	nx := 0
	for _, c := range cases {
		if c.qtype == dns.TypeA && c.rcode == dns.RcodeNameError {
			nx++
		}
	}
	if got := testutil.ToFloat64(s.metrics.queries[typeIndex(typeA)][rcodeIndex(rcodeNXDomain)]); got != float64(nx) || nx == 0 {
		t.Errorf("A NXDOMAIN queries %v, want %d, the cases answered so", got, nx)
	}
	if got := testutil.ToFloat64(s.metrics.answers.WithLabelValues("lb-geo.glb.example.com", "eu")); got < 1 {
		t.Errorf("lb-geo answers from eu %v", got)
	}
	if got := testutil.ToFloat64(s.metrics.truncated); got != 3 {
		t.Errorf("truncated %v, want 3", got)
	}
}

// TestPublishRebindsFallbackOnlyPool: renaming a pool that a load balancer
// uses only as its fallback moves that load balancer's per-pool answer
// counter to the new name, through the incremental path a node takes
// (steering.Update, Update, Publish), so that its labels never name a pool
// that no longer exists.
func TestPublishRebindsFallbackOnlyPool(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	s, err := New(Config{Addr: "127.0.0.1:0", Registerer: reg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	spare := pools.DefaultPool()
	spare.ID, spare.Name, spare.Revision = "spare", "spare", 1
	spare.Origins = []pools.Origin{pools.DefaultOrigin()}
	spare.Origins[0].Name, spare.Origins[0].Address = "s1", "192.0.2.77"
	cfg.Pools = append(cfg.Pools, spare)
	for i := range cfg.LoadBalancers {
		if cfg.LoadBalancers[i].ID == "lb-off" {
			cfg.LoadBalancers[i].FallbackPool = "spare"
		}
	}
	st, snap := compileBoth(t, cfg)
	s.Publish(snap)

	renamed := spare
	renamed.Name, renamed.Revision, renamed.ModifiedOn = "spare-renamed", 2, time.Now()
	next, err := cfg.Apply(&pools.ChangeSet{Since: 1, Revision: 2, Changes: []pools.ObjectChange{
		{Kind: pools.KindPool, ID: "spare", Revision: 2, Object: &renamed},
	}})
	if err != nil {
		t.Fatal(err)
	}
	_, snap2, _ := updateAndCompile(t, st, snap, next)
	s.Publish(snap2)

	got := map[string]bool{}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "glb_dns_lb_answers_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			var lb, pool string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "load_balancer":
					lb = l.GetValue()
				case "pool":
					pool = l.GetValue()
				}
			}
			if lb == "lb-off.glb.example.com" {
				got[pool] = true
			}
		}
	}
	if !got["spare-renamed"] || got["spare"] || !got["us"] {
		t.Errorf("lb-off's pool labels after renaming its fallback: %v; want us and spare-renamed, not spare", got)
	}
}
