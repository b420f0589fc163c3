package steering

import (
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/glb-dns/glb/geodata"
	"github.com/glb-dns/glb/pools"
)

// measuredWorld: three pools; health-check RTT from WEU puts us first,
// so that a RUM ranking shows by moving another pool ahead of it.
func measuredWorld() *world {
	w := threePools()
	l := w.lb("www", []string{"us", "eu", "ap"}, "fb")
	l.SteeringPolicy = pools.SteeringMeasuredLatency
	l.RUM = &pools.LoadBalancerRUM{SiteKeys: []string{"site-key-1"}, MinSamples: 10}
	w.health.RTT = map[pools.PoolRegion]time.Duration{
		{Pool: "us", Region: "WEU"}: 5 * time.Millisecond,
		{Pool: "eu", Region: "WEU"}: 50 * time.Millisecond,
		{Pool: "ap", Region: "WEU"}: 90 * time.Millisecond,
	}
	return w
}

func fig(pool string, median float64, samples int) MeasuredPool {
	return MeasuredPool{Pool: pool, MedianMs: median, P75Ms: median * 1.2, Samples: samples}
}

// measurements: the network 198.51.100.0/24 finds ap fastest, France eu,
// WEU ap again but with fewer samples than min_samples for eu; the
// resolver 192.0.2.0/24 has the networks behind it that find eu fastest.
func measurements() *Measurements {
	return &Measurements{
		Networks: []MeasuredGroup{
			{Prefix: netip.MustParsePrefix("198.51.100.0/24"), Pools: []MeasuredPool{fig("us", 80, 30), fig("eu", 60, 30), fig("ap", 20, 30)}},
			// The first /24 of a /16 an ECS subnet names: not its network.
			{Prefix: netip.MustParsePrefix("198.51.0.0/24"), Pools: []MeasuredPool{fig("us", 10, 30), fig("ap", 20, 30)}},
			// Too few samples: the network level passes.
			{Prefix: netip.MustParsePrefix("203.0.113.0/24"), Pools: []MeasuredPool{fig("us", 80, 9), fig("ap", 20, 9)}},
		},
		Resolvers: []MeasuredGroup{{Prefix: netip.MustParsePrefix("192.0.2.0/24"),
			Pools: []MeasuredPool{fig("us", 70, 40), fig("eu", 15, 40)}, Behind: []MeasuredLink{{netip.MustParsePrefix("198.18.7.0/24"), 12}}}},
		Countries: []MeasuredGroup{{Key: "FR", Pools: []MeasuredPool{fig("us", 90, 50), fig("eu", 30, 50), fig("ap", 200, 50)}}},
		Regions:   []MeasuredGroup{{Key: "WEU", Pools: []MeasuredPool{fig("us", 90, 100), fig("eu", 40, 9), fig("ap", 60, 100)}}},
		Built:     time.Unix(1_800_000_000, 0).UTC(),
		Window:    15 * time.Minute,
	}
}

func ecsReq(cidr string, loc geodata.Location) Request {
	p := netip.MustParsePrefix(cidr)
	return Request{Client: loc, Subnet: p, SourcePrefix: p.Bits()}
}

func TestPolicyMeasuredLatencyLevels(t *testing.T) {
	t.Parallel()
	w := measuredWorld()
	s, err := CompileFor(&w.cfg, w.health.h(), Options{Measured: measurements()})
	if err != nil {
		t.Fatal(err)
	}
	fr := geodata.Location{Country: "FR", Region: "WEU", Prefix: 16}
	de := geodata.Location{Country: "DE", Region: "WEU", Prefix: 16}
	for _, c := range []struct {
		name   string
		req    Request
		level  string
		group  string
		order  []string
		answer string
	}{
		{"network", ecsReq("198.51.100.0/24", fr), "network", "198.51.100.0/24", []string{"ap", "eu", "us"}, "ap1"},
		// A /16 ECS subnet is wider than a network: the country decides.
		{"wide ECS", ecsReq("198.51.0.0/16", fr), "country", "FR", []string{"eu", "us", "ap"}, "eu1"},
		// The network's samples are under min_samples: the country.
		{"thin network", ecsReq("203.0.113.0/24", fr), "country", "FR", []string{"eu", "us", "ap"}, "eu1"},
		// No country figures: the region, where eu has too few samples
		// and so follows the pools that have them.
		{"region", ecsReq("198.18.9.0/24", de), "region", "WEU", []string{"ap", "us", "eu"}, "ap1"},
		// Nothing anywhere: health-check RTT, as dynamic_latency.
		{"rtt", ecsReq("198.18.9.0/24", geodata.Location{Region: "EEU", Prefix: 16}), "rtt", "", []string{"us", "eu", "ap"}, "us1"},
		// No ECS, from a resolver whose clients reported: steered for them.
		{"resolver", Request{Client: de, Subnet: netip.MustParsePrefix("192.0.2.0/24"), SourcePrefix: -1}, "resolver", "192.0.2.0/24", []string{"eu", "us", "ap"}, "eu1"},
		// The same resolver's subnet sent as ECS is a client network, not
		// a resolver: no network figures there, the region decides.
		{"resolver as ECS", ecsReq("192.0.2.0/24", de), "region", "WEU", []string{"ap", "us", "eu"}, "ap1"},
	} {
		_, tr, got := decide(t, s, "www.glb.example.com", c.req, nil)
		if tr.Measured == nil {
			t.Fatalf("%s: no measured trace", c.name)
		}
		if tr.Measured.Level != c.level || tr.Measured.Group != c.group {
			t.Errorf("%s: level %s group %q, want %s %q (%s)", c.name, tr.Measured.Level, tr.Measured.Group, c.level, c.group, tr.Measured.Reason)
		}
		if !slices.Equal(candidateIDs(tr), c.order) || !slices.Equal(got, []string{c.answer}) {
			t.Errorf("%s: order %v answer %v, want %v %s", c.name, candidateIDs(tr), got, c.order, c.answer)
		}
	}

	// Explain shows the figures of the deciding level and whether each
	// counted.
	_, tr, _ := decide(t, s, "www.glb.example.com", ecsReq("198.18.9.0/24", de), nil)
	want := map[string]TraceMeasuredPool{
		"us": {Pool: "us", Name: "us", MedianMs: 90, P75Ms: 108, Samples: 100, Counted: true},
		"eu": {Pool: "eu", Name: "eu", MedianMs: 40, P75Ms: 48, Samples: 9, Counted: false},
		"ap": {Pool: "ap", Name: "ap", MedianMs: 60, P75Ms: 72, Samples: 100, Counted: true},
	}
	if len(tr.Measured.Pools) != 3 || tr.Measured.MinSamples != 10 || tr.Measured.Window != "15m0s" {
		t.Fatalf("region trace %+v", tr.Measured)
	}
	for _, p := range tr.Measured.Pools {
		if p != want[p.Pool] {
			t.Errorf("region figures of %s: %+v, want %+v", p.Pool, p, want[p.Pool])
		}
	}
	if m := tr.Candidates[0].MeasuredMs; m == nil || *m != 60 {
		t.Errorf("first candidate's measured_ms %v, want 60", m)
	}
	_, tr, _ = decide(t, s, "www.glb.example.com", Request{Client: de, Subnet: netip.MustParsePrefix("192.0.2.0/24"), SourcePrefix: -1}, nil)
	if len(tr.Measured.Behind) != 1 || tr.Measured.Behind[0] != (TraceMeasuredLink{"198.18.7.0/24", 12}) {
		t.Errorf("resolver trace behind %+v", tr.Measured.Behind)
	}
}

// Unhealthy pools are passed over whatever users measured; min_samples
// raised past every figure makes health-check RTT decide.
func TestPolicyMeasuredLatencyHealthAndMinSamples(t *testing.T) {
	t.Parallel()
	w := measuredWorld()
	w.down("ap", "ap1")
	s, err := CompileFor(&w.cfg, w.health.h(), Options{Measured: measurements()})
	if err != nil {
		t.Fatal(err)
	}
	fr := geodata.Location{Country: "FR", Region: "WEU", Prefix: 16}
	if _, tr, got := decide(t, s, "www.glb.example.com", ecsReq("198.51.100.0/24", fr), nil); !slices.Equal(got, []string{"eu1"}) || tr.Measured.Level != "network" {
		t.Errorf("ap down: got %v at level %s, want eu1 (next by the network's medians)", got, tr.Measured.Level)
	}
	w.cfg.LoadBalancers[0].RUM.MinSamples = 1000
	s, err = CompileFor(&w.cfg, w.health.h(), Options{Measured: measurements()})
	if err != nil {
		t.Fatal(err)
	}
	if _, tr, got := decide(t, s, "www.glb.example.com", ecsReq("198.51.100.0/24", fr), nil); !slices.Equal(got, []string{"us1"}) || tr.Measured.Level != "rtt" {
		t.Errorf("min_samples 1000: got %v at level %s, want us1 by RTT", got, tr.Measured.Level)
	}
}

// The table is replaced without recompiling, carried by Update, and
// follows pools that come after it was compiled; the ECS scope of a
// measured answer is the client's subnet.
func TestMeasuredRemeasureAndUpdate(t *testing.T) {
	t.Parallel()
	w := measuredWorld()
	s := w.compile(t)
	fr := geodata.Location{Country: "FR", Region: "WEU", Prefix: 8}
	req := ecsReq("198.51.100.0/24", fr)
	if _, tr, got := decide(t, s, "www.glb.example.com", req, nil); !slices.Equal(got, []string{"us1"}) || tr.Measured.Level != "rtt" {
		t.Fatalf("no table: got %v level %s", got, tr.Measured.Level)
	}
	r := Remeasure(s, measurements())
	if r.Parent() != s.Generation() || len(r.Rebuilt()) != 0 || r.Rebuilt() == nil {
		t.Errorf("remeasured: parent %d rebuilt %v, want parent %d and nothing rebuilt", r.Parent(), r.Rebuilt(), s.Generation())
	}
	ans, _, got := decide(t, r, "www.glb.example.com", req, nil)
	if !slices.Equal(got, []string{"ap1"}) {
		t.Errorf("remeasured: got %v, want ap1", got)
	}
	if ans.Scope != 24 {
		t.Errorf("scope %d, want 24 (the network that decided, though the location is a /8)", ans.Scope)
	}
	// The old snapshot is unchanged.
	if _, _, got := decide(t, s, "www.glb.example.com", req, nil); !slices.Equal(got, []string{"us1"}) {
		t.Errorf("the remeasured snapshot changed its parent: %v", got)
	}
	// A new pool, measured faster than all, joins the default pools.
	w.pool("new", origin{"new1", "192.0.2.99", "", 1})
	w.cfg.Pools[len(w.cfg.Pools)-1].Monitor = "mon"
	w.cfg.LoadBalancers[0].DefaultPools = []string{"us", "eu", "ap", "new"}
	w.cfg.LoadBalancers[0].Revision++
	m := measurements()
	m.Networks[0].Pools = append(m.Networks[0].Pools, fig("new", 1, 30))
	r = Remeasure(r, m)
	u, err := Update(r, &w.cfg, w.health.h(), map[string]bool{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, got := decide(t, u, "www.glb.example.com", req, nil); !slices.Equal(got, []string{"new1"}) {
		t.Errorf("after update with a new pool: got %v, want new1", got)
	}
}

// The traffic preview ranks a measured_latency load balancer by the RUM
// table, as DNS does: a subnet by its network's medians, a country by
// the country's; each order carries the medians that ranked it, and an
// unsaved edit is previewed against the same table.
func TestPreviewMeasuredLatency(t *testing.T) {
	t.Parallel()
	w := measuredWorld()
	s, err := CompileFor(&w.cfg, w.health.h(), Options{Measured: measurements()})
	if err != nil {
		t.Fatal(err)
	}
	lb := s.LoadBalancer("www.glb.example.com")
	sample := []Sample{{Subnet: netip.MustParsePrefix("198.51.100.0/24")}, {Country: "FR"}, {Country: "FR"}}
	got := s.Preview(lb, sample, QTypeA, locator(t, w))
	if sh := got.ByName(); math.Abs(sh["ap"]-1.0/3) > 1e-9 || math.Abs(sh["eu"]-2.0/3) > 1e-9 {
		t.Errorf("shares %v, want ap 1/3 (the network's fastest), eu 2/3 (France's)", sh)
	}
	medians := func(o CandidateOrder) []float64 {
		var out []float64
		for _, p := range o.Pools {
			if p.MeasuredMs == nil {
				out = append(out, -1)
				continue
			}
			out = append(out, *p.MeasuredMs)
		}
		return out
	}
	if len(got.Orders) != 2 || orderNames(got.Orders[0]) != "eu us ap" || !slices.Equal(medians(got.Orders[0]), []float64{30, 90, 200}) ||
		orderNames(got.Orders[1]) != "ap eu us" || !slices.Equal(medians(got.Orders[1]), []float64{20, 60, 80}) {
		t.Errorf("orders %+v, want eu us ap (30 90 200 ms) and ap eu us (20 60 80 ms)", got.Orders)
	}
	// The WEU region's eu has too few samples: it follows, without a median.
	got = s.Preview(lb, []Sample{{Region: "WEU"}}, QTypeA, locator(t, w))
	if len(got.Orders) != 1 || orderNames(got.Orders[0]) != "ap us eu" || !slices.Equal(medians(got.Orders[0]), []float64{60, 90, -1}) {
		t.Errorf("WEU orders %+v, want ap us eu (60 90 -)", got.Orders)
	}
	// An edit raising min_samples past every figure: RTT ranks, us first.
	edited := w.cfg.LoadBalancers[0]
	edited.RUM = &pools.LoadBalancerRUM{SiteKeys: []string{"site-key-1"}, MinSamples: 1000}
	e, err := s.With(&edited)
	if err != nil {
		t.Fatal(err)
	}
	after := e.Preview(e.LoadBalancer("www.glb.example.com"), sample, QTypeA, locator(t, w))
	if sh := after.ByName(); sh["us"] != 1 {
		t.Errorf("after min_samples 1000: shares %v, want all us (health-check RTT)", sh)
	}
	// With the edit's min_samples at 30, the table still ranks.
	edited.RUM = &pools.LoadBalancerRUM{SiteKeys: []string{"site-key-1"}, MinSamples: 30}
	if e, err = s.With(&edited); err != nil {
		t.Fatal(err)
	}
	after = e.Preview(e.LoadBalancer("www.glb.example.com"), sample, QTypeA, locator(t, w))
	if sh := after.ByName(); math.Abs(sh["ap"]-1.0/3) > 1e-9 {
		t.Errorf("edited snapshot lost the RUM table: shares %v", sh)
	}
}

// RUMTable shows a load balancer's pools per level: fastest first by
// median among the pools with min_samples, the thin ones after; a group
// with fewer than two counted pools names no fastest; networks cut to
// the limit keep those with the most samples.
func TestRUMTable(t *testing.T) {
	t.Parallel()
	w := measuredWorld()
	s := w.compile(t)
	lb := s.LoadBalancer("www.glb.example.com")
	empty := s.RUMTable(lb, 0)
	if empty.Built != nil || len(empty.Regions) != 0 || len(empty.Pools) != 3 || empty.MinSamples != 10 {
		t.Fatalf("no table: %+v", empty)
	}
	s = Remeasure(s, measurements())
	tab := s.RUMTable(lb, 0)
	if tab.Built == nil || !tab.Built.Equal(measurements().Built) || tab.Window != "15m0s" {
		t.Errorf("built %v window %q", tab.Built, tab.Window)
	}
	order := func(g RUMTableGroup) string {
		var out []string
		for _, p := range g.Pools {
			out = append(out, fmt.Sprintf("%s:%g/%g/%d/%t", p.Pool, p.MedianMs, p.P75Ms, p.Samples, p.Counted))
		}
		return strings.Join(out, " ")
	}
	if len(tab.Regions) != 1 || tab.Regions[0].Group != "WEU" || tab.Regions[0].Fastest != "ap" || tab.Regions[0].Samples != 209 ||
		order(tab.Regions[0]) != "ap:60/72/100/true us:90/108/100/true eu:40/48/9/false" {
		t.Errorf("regions %+v", tab.Regions)
	}
	if len(tab.Countries) != 1 || tab.Countries[0].Group != "FR" || tab.Countries[0].Region != "WEU" || tab.Countries[0].Fastest != "eu" {
		t.Errorf("countries %+v", tab.Countries)
	}
	if tab.NetworksTotal != 3 || len(tab.Networks) != 3 || tab.Networks[2].Group != "203.0.113.0/24" || tab.Networks[2].Fastest != "" {
		t.Errorf("networks %+v", tab.Networks)
	}
	if len(tab.Resolvers) != 1 || tab.Resolvers[0].Fastest != "eu" || len(tab.Resolvers[0].Behind) != 1 {
		t.Errorf("resolvers %+v", tab.Resolvers)
	}
	cut := s.RUMTable(lb, 1)
	if cut.NetworksTotal != 3 || len(cut.Networks) != 1 || cut.Networks[0].Group != "198.51.100.0/24" {
		t.Errorf("limit 1: %d of %d, first %+v, want 198.51.100.0/24 (90 samples)", len(cut.Networks), cut.NetworksTotal, cut.Networks)
	}
}

// asnMeasurements: measurements() with AS64500, whose networks find ap
// fastest, and AS64501, where only one pool has min_samples.
func asnMeasurements() *Measurements {
	m := measurements()
	m.ASNs = []MeasuredGroup{
		{ASN: 64500, Pools: []MeasuredPool{fig("us", 50, 40), fig("eu", 70, 40), fig("ap", 15, 40)}},
		{ASN: 64501, Pools: []MeasuredPool{fig("us", 50, 40), fig("eu", 10, 9)}},
	}
	return m
}

// The ASN level sits between the network and the country: of two
// networks of one AS, the one with min_samples is ranked by its own
// figures, the thin one by its AS's; a network of AS 0 (unknown), of an
// AS without figures, or of an AS where fewer than two pools have
// min_samples falls to its country.
func TestPolicyMeasuredLatencyASN(t *testing.T) {
	t.Parallel()
	w := measuredWorld()
	s, err := CompileFor(&w.cfg, w.health.h(), Options{Measured: asnMeasurements()})
	if err != nil {
		t.Fatal(err)
	}
	in := func(asn uint32) geodata.Location {
		return geodata.Location{Country: "FR", Region: "WEU", Prefix: 16, ASN: asn}
	}
	for _, c := range []struct {
		name   string
		req    Request
		level  string
		group  string
		order  []string
		answer string
	}{
		// 198.51.100.0/24 has its own figures: they decide (ap eu us),
		// not its AS's (ap us eu).
		{"network of the AS", ecsReq("198.51.100.0/24", in(64500)), "network", "198.51.100.0/24", []string{"ap", "eu", "us"}, "ap1"},
		// 203.0.113.0/24 has too few samples: its AS decides.
		{"thin network of the AS", ecsReq("203.0.113.0/24", in(64500)), "asn", "AS64500", []string{"ap", "us", "eu"}, "ap1"},
		// A network nothing measured, in the AS.
		{"unmeasured network of the AS", ecsReq("198.18.9.0/24", in(64500)), "asn", "AS64500", []string{"ap", "us", "eu"}, "ap1"},
		// A wide ECS subnet skips the network level, not the AS's.
		{"wide ECS in the AS", ecsReq("198.51.0.0/16", in(64500)), "asn", "AS64500", []string{"ap", "us", "eu"}, "ap1"},
		{"AS unknown", ecsReq("203.0.113.0/24", in(0)), "country", "FR", []string{"eu", "us", "ap"}, "eu1"},
		{"AS without figures", ecsReq("203.0.113.0/24", in(64999)), "country", "FR", []string{"eu", "us", "ap"}, "eu1"},
		{"AS with one pool counted", ecsReq("203.0.113.0/24", in(64501)), "country", "FR", []string{"eu", "us", "ap"}, "eu1"},
	} {
		_, tr, got := decide(t, s, "www.glb.example.com", c.req, nil)
		if tr.Measured.Level != c.level || tr.Measured.Group != c.group {
			t.Errorf("%s: level %s group %q, want %s %q (%s)", c.name, tr.Measured.Level, tr.Measured.Group, c.level, c.group, tr.Measured.Reason)
		}
		if !slices.Equal(candidateIDs(tr), c.order) || !slices.Equal(got, []string{c.answer}) {
			t.Errorf("%s: order %v answer %v, want %v %s", c.name, candidateIDs(tr), got, c.order, c.answer)
		}
	}

	// Explain: the level, the AS number, its figures and samples, and
	// the client's AS.
	_, tr, _ := decide(t, s, "www.glb.example.com", ecsReq("203.0.113.0/24", in(64500)), nil)
	if tr.Measured.ASN != 64500 || tr.Client.ASN != 64500 || !strings.Contains(tr.Measured.Reason, "autonomous system") {
		t.Errorf("trace: measured %+v client %+v", tr.Measured, tr.Client)
	}
	want := []TraceMeasuredPool{
		{Pool: "us", Name: "us", MedianMs: 50, P75Ms: 60, Samples: 40, Counted: true},
		{Pool: "eu", Name: "eu", MedianMs: 70, P75Ms: 84, Samples: 40, Counted: true},
		{Pool: "ap", Name: "ap", MedianMs: 15, P75Ms: 18, Samples: 40, Counted: true},
	}
	if !slices.Equal(tr.Measured.Pools, want) {
		t.Errorf("AS figures %+v, want %+v", tr.Measured.Pools, want)
	}
	if m := tr.Candidates[0].MeasuredMs; m == nil || *m != 15 {
		t.Errorf("first candidate's measured_ms %v, want 15", m)
	}
}

// The ASN level allocates nothing either.
func TestMeasuredASNAllocatesNothing(t *testing.T) {
	w := measuredWorld()
	s, err := CompileFor(&w.cfg, w.health.h(), Options{Measured: asnMeasurements()})
	if err != nil {
		t.Fatal(err)
	}
	req := ecsReq("203.0.113.0/24", geodata.Location{Country: "FR", Region: "WEU", Prefix: 16, ASN: 64500})
	lb := s.LoadBalancer("www.glb.example.com")
	var ans Answer
	if n := testing.AllocsPerRun(1000, func() { s.Decide(lb, &req, FastRand{}, &ans, nil) }); n != 0 {
		t.Errorf("ASN-level decision: %.1f allocations", n)
	}
}

// RUMTable lists the autonomous systems as it lists networks: named
// "AS<n>", with their number, cut to the limit.
func TestRUMTableASN(t *testing.T) {
	t.Parallel()
	w := measuredWorld()
	s := Remeasure(w.compile(t), asnMeasurements())
	lb := s.LoadBalancer("www.glb.example.com")
	tab := s.RUMTable(lb, 0)
	if tab.ASNsTotal != 2 || len(tab.ASNs) != 2 || tab.ASNs[0].Group != "AS64500" || tab.ASNs[0].ASN != 64500 ||
		tab.ASNs[0].Fastest != "ap" || tab.ASNs[0].Samples != 120 || tab.ASNs[1].Fastest != "" {
		t.Errorf("ASNs %+v", tab.ASNs)
	}
	if cut := s.RUMTable(lb, 1); cut.ASNsTotal != 2 || len(cut.ASNs) != 1 || cut.ASNs[0].ASN != 64500 {
		t.Errorf("limit 1: %+v", cut.ASNs)
	}
	if empty := Remeasure(s, measurements()).RUMTable(lb, 0); empty.ASNs == nil || len(empty.ASNs) != 0 {
		t.Errorf("no ASNs: %#v, want an empty list", empty.ASNs)
	}
}
