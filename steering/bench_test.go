package steering

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/glb-dns/glb/geodata"
	"github.com/glb-dns/glb/pools"
)

// benchWorld: four pools of eight origins over two zones, and one load
// balancer per benchmarked policy.
func benchWorld(t testing.TB) *Snapshot { return benchWorldWith(t, nil) }

// loadBench is benchWorld with every pool shedding by load (0.7–0.9) and
// loads fed in: in each pool one origin overloaded, one at 0.8.
func loadBench(t testing.TB) *Snapshot {
	return benchWorldWith(t, func(w *world) {
		w.health.Load = map[string]map[string]float64{}
		for i := range w.cfg.Pools {
			p := &w.cfg.Pools[i]
			p.LoadShedding.ByLoad = &pools.ByLoad{Low: 0.7, High: 0.9}
			w.health.Load[p.ID] = map[string]float64{"o1": 0.95, "o2": 0.8}
		}
	})
}

// benchWorldWith is benchWorld, changed by edit (when not nil) before
// it is compiled.
func benchWorldWith(t testing.TB, edit func(*world)) *Snapshot {
	w := newWorld()
	coords := [][2]float64{{38.9, -77.0}, {50.1, 8.7}, {35.7, 139.7}, {-33.9, 151.2}}
	var ids []string
	for i, c := range coords {
		var os []origin
		for j := range 8 {
			os = append(os, origin{fmt.Sprintf("o%d", j), fmt.Sprintf("192.0.%d.%d", i, j+1), fmt.Sprintf("zone-%d", j%2), 1})
		}
		id := fmt.Sprintf("p%d", i)
		p := w.pool(id, os...)
		p.Latitude, p.Longitude = ptr(c[0]), ptr(c[1])
		ids = append(ids, id)
	}
	w.down("p0", "o0") // some unhealthy origin, so affinity computes a real ratio
	w.lb("off", ids, "p3").SteeringPolicy = pools.SteeringOff
	g := w.lb("geo", ids, "p3")
	g.SteeringPolicy = pools.SteeringGeo
	g.CountryPools = map[string][]string{"DE": {"p1"}, "JP": {"p2"}}
	g.RegionPools = map[string][]string{"WEU": {"p1", "p0"}, "ENAM": {"p0"}}
	w.lb("proximity", ids, "p3").SteeringPolicy = pools.SteeringProximity
	za := w.lb("zonal", ids, "p3")
	za.SteeringPolicy = pools.SteeringOff
	za.ZonalAffinity = pools.ZonalAffinity{Spillover: pools.AffinitySpillCrossZone, SpilloverRatio: 0.5}
	gz := w.lb("geozonal", ids, "p3")
	gz.RegionPools = map[string][]string{"WEU": {"p1", "p0"}}
	gz.ZonalAffinity = pools.ZonalAffinity{Spillover: pools.AffinitySpillCrossZone, SpilloverRatio: 0.5}
	// staged: a rollout half way to the reversed order, so that each
	// query draws between the two.
	w.lb("staged", ids, "p3").SteeringPolicy = pools.SteeringOff
	w.cfg.Rollouts = append(w.cfg.Rollouts, pools.Rollout{Meta: pools.Meta{ID: "bench"}, LoadBalancer: "lb-staged",
		DefaultPools: []string{"p3", "p2", "p1", "p0"}, FromDefaultPools: ids, Steps: []float64{50, 100},
		StepInterval: "24h", StartsAt: time.Now().Add(-time.Minute), State: pools.RolloutRunning})
	// measured: the RUM table's network level ranks the pools.
	w.lb("measured", ids, "p3").SteeringPolicy = pools.SteeringMeasuredLatency
	m := &Measurements{Networks: []MeasuredGroup{{Prefix: netip.MustParsePrefix("198.51.100.0/24"),
		Pools: []MeasuredPool{{"p0", 90, 100, 50}, {"p1", 80, 90, 50}, {"p2", 20, 30, 50}, {"p3", 40, 50, 50}}}}}
	if edit != nil {
		edit(w)
	}
	return Remeasure(w.compile(t), m)
}

var benchClient = geodata.Location{Zone: "zone-0", Region: "WEU", Country: "FR", Latitude: 48.85, Longitude: 2.35, HasCoordinates: true, Prefix: 16}

func benchRequest() *Request {
	return &Request{Client: benchClient, Subnet: netip.MustParsePrefix("198.51.100.0/24"), SourcePrefix: 24, Type: QTypeA}
}

var benchPolicies = []string{"off", "geo", "proximity", "zonal", "geozonal", "staged", "measured"}

// TestDecideAllocatesNothing proves the answer path's decision is
// allocation-free for every benchmarked policy with answers = 1, and so
// with a shift in force.
func TestDecideAllocatesNothing(t *testing.T) {
	for _, w := range []struct {
		name    string
		world   func(testing.TB) *Snapshot
		shifted bool
	}{{"plain", benchWorld, false}, {"shifted", shiftBench, true}, {"by load", loadBench, false}} {
		s := w.world(t)
		req := benchRequest()
		var ans Answer
		for _, name := range benchPolicies {
			lb := s.LoadBalancer(name + ".glb.example.com")
			if w.shifted && lb.shift == nil {
				t.Fatalf("%s: no shift in force", name)
			}
			if n := testing.AllocsPerRun(1000, func() { s.Decide(lb, req, FastRand{}, &ans, nil) }); n != 0 {
				t.Errorf("%s %s: %.1f allocations per decision, want 0", w.name, name, n)
			}
			if !w.shifted && ans.N != 1 {
				t.Errorf("%s: %d records, want 1", name, ans.N)
			}
		}
	}
}

func BenchmarkDecide(b *testing.B) { benchDecide(b, benchWorld(b)) }

// BenchmarkDecideByLoad: the same with load_shedding.by_load on every
// pool and loads fed in (load_test.go).
func BenchmarkDecideByLoad(b *testing.B) { benchDecide(b, loadBench(b)) }

// benchDecide times one decision of each policy's load balancer in s.
func benchDecide(b *testing.B, s *Snapshot) {
	req := benchRequest()
	for _, name := range benchPolicies {
		lb := s.LoadBalancer(name + ".glb.example.com")
		b.Run(name, func(b *testing.B) {
			var ans Answer
			b.ReportAllocs()
			for b.Loop() {
				s.Decide(lb, req, FastRand{}, &ans, nil)
			}
		})
	}
}

func BenchmarkCompile(b *testing.B) {
	w := newWorld()
	var ids []string
	for i := range 200 {
		var os []origin
		for j := range 8 {
			os = append(os, origin{fmt.Sprintf("o%d", j), fmt.Sprintf("10.%d.%d.%d", i/256, i%256, j), "", 1})
		}
		id := fmt.Sprintf("p%d", i)
		w.pool(id, os...)
		ids = append(ids, id)
	}
	for i := range 500 {
		w.lb(fmt.Sprintf("lb%d", i), ids[i%197:i%197+3], ids[0])
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(&w.cfg, w.health.h()); err != nil {
			b.Fatal(err)
		}
	}
}
