package steering

import (
	"math"
	"math/rand/v2"
	"net/netip"
	"testing"

	"github.com/glb-dns/glb/pools"
)

// loadWorld is pool "p" of origins A, B (and C when three), weight 1
// each, shedding by load between low 0.7 and high 0.9, with the loads
// given (by origin name); load balancer www answers one record from p.
func loadWorld(loads map[string]float64, three bool) *world {
	w := newWorld()
	os := []origin{{"A", "192.0.2.1", "", 1}, {"B", "192.0.2.2", "", 1}}
	if three {
		os = append(os, origin{"C", "192.0.2.3", "", 1})
	}
	p := w.pool("p", os...)
	p.LoadShedding.ByLoad = &pools.ByLoad{Low: 0.7, High: 0.9}
	w.pool("fb", origin{"F", "192.0.2.10", "", 1})
	w.lb("www", []string{"p"}, "fb")
	w.health.Load = map[string]map[string]float64{"p": loads}
	return w
}

// within3 is the acceptance's bound: within 3 points of want over 10,000
// answers.
func within3(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 0.03 {
		t.Errorf("%s: %.4f of the answers, want %.2f ±0.03", what, got, want)
	}
}

// By load: between low and high an origin keeps a share falling linearly
// (0.8 of 0.7–0.9: half), which goes to the idle origins; at or above high
// it takes none; all above: fail open. Over 10,000 answers each.
func TestShedByLoadShares(t *testing.T) {
	t.Parallel()
	const n = 10_000
	for _, c := range []struct {
		name  string
		loads map[string]float64
		three bool
		want  map[string]float64
	}{
		{"no load", nil, false, map[string]float64{"A": 0.5, "B": 0.5}},
		{"below low", map[string]float64{"A": 0.7, "B": 0.1}, false, map[string]float64{"A": 0.5, "B": 0.5}},
		{"0.8: half its share", map[string]float64{"A": 0.8}, false, map[string]float64{"A": 0.25, "B": 0.75}},
		{"0.85: a quarter", map[string]float64{"A": 0.85}, false, map[string]float64{"A": 0.125, "B": 0.875}},
		{"0.95: none", map[string]float64{"A": 0.95}, false, map[string]float64{"B": 1}},
		{"at high: none", map[string]float64{"A": 0.9}, false, map[string]float64{"B": 1}},
		{"all above high: fail open", map[string]float64{"A": 0.95, "B": 1}, false, map[string]float64{"A": 0.5, "B": 0.5}},
		{"both at 0.8: as they were", map[string]float64{"A": 0.8, "B": 0.8}, false, map[string]float64{"A": 0.5, "B": 0.5}},
		{"one overloaded, one at 0.8, one idle", map[string]float64{"A": 0.95, "B": 0.8}, true, map[string]float64{"B": 0.25, "C": 0.75}},
		{"three, one at 0.8", map[string]float64{"A": 0.8}, true, map[string]float64{"A": 1.0 / 6, "B": 5.0 / 12, "C": 5.0 / 12}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, _ := share(t, loadWorld(c.loads, c.three).compile(t), n)
			for name, want := range c.want {
				within3(t, name, got[name], want)
			}
			for name, g := range got {
				if _, ok := c.want[name]; !ok {
					t.Errorf("%s answered %.4f but should take no answer", name, g)
				}
			}
		})
	}
}

// Without by_load a fed load is shown and changes nothing; a down origin's
// load does not count either.
func TestLoadWithoutByLoad(t *testing.T) {
	t.Parallel()
	w := loadWorld(map[string]float64{"A": 0.95}, false)
	w.cfg.Pools[0].LoadShedding.ByLoad = nil
	got, _ := share(t, w.compile(t), 10_000)
	within3(t, "A without by_load", got["A"], 0.5)

	w = loadWorld(map[string]float64{"A": 0.95}, false)
	w.down("p", "B")
	got, _ = share(t, w.compile(t), 1000)
	if got["A"] != 1 {
		t.Errorf("B down, A at 0.95: A took %.3f, want every answer (the only healthy origin)", got["A"])
	}
}

// Hash origin steering draws with the same weights: a client keeps its
// origin, and the shares over many subnets follow the loads.
func TestShedByLoadHash(t *testing.T) {
	t.Parallel()
	w := loadWorld(map[string]float64{"A": 0.8}, false)
	w.cfg.Pools[0].OriginSteering.Policy = pools.OriginHash
	s := w.compile(t)
	lb := s.LoadBalancer("www.glb.example.com")
	var ans Answer
	counts := map[string]int{}
	rnd := rand.New(rand.NewPCG(3, 4))
	const n = 10_000
	for i := range n {
		req := subnetRequest(i)
		s.Decide(lb, &req, rnd, &ans, nil)
		counts[s.Origin(ans.Origins[0]).Name]++
	}
	within3(t, "A under hash steering", float64(counts["A"])/n, 0.25)
}

// The trace says which origins load left out, the loads, and the weights
// load set beside the configured ones.
func TestShedByLoadTrace(t *testing.T) {
	t.Parallel()
	_, tr, picked := decide(t, loadWorld(map[string]float64{"A": 0.95, "B": 0.8}, true).compile(t), "www.glb.example.com",
		Request{SourcePrefix: -1}, nil)
	if len(tr.Origins.Overloaded) != 1 || tr.Origins.Overloaded[0].Name != "A" || tr.Origins.Overloaded[0].Load != 0.95 {
		t.Errorf("overloaded %+v, want A at 0.95", tr.Origins.Overloaded)
	}
	if len(tr.Origins.Eligible) != 2 {
		t.Fatalf("eligible %+v", tr.Origins.Eligible)
	}
	b, c := tr.Origins.Eligible[0], tr.Origins.Eligible[1]
	if b.Name != "B" || b.Load == nil || *b.Load != 0.8 || b.ConfiguredWeight == nil || *b.ConfiguredWeight != 1 || math.Abs(b.Share-0.25) > 1e-9 {
		t.Errorf("B in the trace %+v", b)
	}
	if c.Name != "C" || c.Load != nil || math.Abs(c.Share-0.75) > 1e-9 {
		t.Errorf("C in the trace %+v", c)
	}
	if len(picked) != 1 || picked[0] == "A" {
		t.Errorf("picked %v", picked)
	}
}

// A load that changes recompiles the pool through Update, like health.
func TestShedByLoadUpdate(t *testing.T) {
	t.Parallel()
	w := loadWorld(nil, false)
	s := w.compile(t)
	before := w.health.h()
	w.health.Load = map[string]map[string]float64{"p": {"A": 0.95}}
	after := w.health.h()
	changed := pools.ChangedPools(before, after)
	if !changed["p"] {
		t.Fatalf("a new load changes no pool: %v", changed)
	}
	s, err := Update(s, &w.cfg, after, changed)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := share(t, s, 1000)
	if got["A"] != 0 {
		t.Errorf("A at 0.95 after Update took %.3f of the answers", got["A"])
	}
}

// The answer path stays free of allocations with load shedding.
func TestShedByLoadAllocs(t *testing.T) {
	w := loadWorld(map[string]float64{"A": 0.95, "B": 0.8}, true)
	s := w.compile(t)
	lb := s.LoadBalancer("www.glb.example.com")
	req := Request{Type: QTypeA, SourcePrefix: -1}
	rnd := rand.New(rand.NewPCG(1, 2))
	var ans Answer
	if n := testing.AllocsPerRun(1000, func() { s.Decide(lb, &req, rnd, &ans, nil) }); n != 0 {
		t.Errorf("Decide with load shedding allocates %v times per query", n)
	}
}

// subnetRequest is an A query from the i-th /24 of 10.0.0.0/8.
func subnetRequest(i int) Request {
	a := netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), 0})
	return Request{Type: QTypeA, SourcePrefix: -1, Subnet: netip.PrefixFrom(a, 24)}
}
