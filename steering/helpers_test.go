package steering

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/glb-dns/glb/geodata"
	"github.com/glb-dns/glb/pools"
)

// world builds configurations for tests: every pool has the monitor "mon"
// so that health entries apply.
type world struct {
	cfg    pools.Config
	health flatHealth
}

// flatHealth is a health view as tests write it, one map per kind of entry.
type flatHealth struct {
	Origins map[pools.OriginKey]pools.OriginHealth
	RTT     map[pools.PoolRegion]time.Duration
	// Load by pool and origin, as feeds report it.
	Load map[string]map[string]float64
}

func (f *flatHealth) h() *pools.Health { return pools.NewHealth(f.Origins, f.RTT).WithLoad(f.Load) }

func newWorld() *world {
	w := &world{health: flatHealth{Origins: map[pools.OriginKey]pools.OriginHealth{}}}
	w.cfg.Zones = []pools.Zone{{Meta: pools.Meta{ID: "z"}, Name: "glb.example.com"}}
	w.cfg.Monitors = []pools.Monitor{{Meta: pools.Meta{ID: "mon"}}}
	return w
}

// origin is a compact origin description: name, address, zone, weight.
type origin struct {
	name, addr, zone string
	weight           float64
}

func (w *world) pool(id string, origins ...origin) *pools.Pool {
	p := pools.DefaultPool()
	p.ID, p.Name, p.Monitor = id, id, "mon"
	for _, o := range origins {
		po := pools.DefaultOrigin()
		po.Name, po.Address, po.Zone, po.Weight = o.name, o.addr, o.zone, o.weight
		p.Origins = append(p.Origins, po)
	}
	w.cfg.Pools = append(w.cfg.Pools, p)
	return &w.cfg.Pools[len(w.cfg.Pools)-1]
}

func (w *world) lb(name string, defaults []string, fallback string) *pools.LoadBalancer {
	l := pools.DefaultLoadBalancer()
	l.ID, l.Zone, l.Name, l.DefaultPools, l.FallbackPool = "lb-"+name, "z", name+".glb.example.com", defaults, fallback
	w.cfg.LoadBalancers = append(w.cfg.LoadBalancers, l)
	return &w.cfg.LoadBalancers[len(w.cfg.LoadBalancers)-1]
}

func (w *world) down(pool string, origins ...string) {
	for _, o := range origins {
		w.health.Origins[pools.OriginKey{Pool: pool, Origin: o}] = pools.OriginHealth{Healthy: false, Reason: "test"}
	}
}

// compileAt compiles w with now as the clock, which the snapshots Update
// derives from it keep: a test moves the time by changing what now reads.
func (w *world) compileAt(t testing.TB, now func() time.Time) *Snapshot {
	t.Helper()
	s, err := CompileFor(&w.cfg, w.health.h(), Options{Now: now})
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return s
}

// update derives a snapshot of w, as it is now, from prev, with no
// object marked changed: what moves is the clock or the health.
func (w *world) update(t testing.TB, prev *Snapshot) *Snapshot {
	t.Helper()
	s, err := Update(prev, &w.cfg, w.health.h(), map[string]bool{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	return s
}

func (w *world) compile(t testing.TB) *Snapshot {
	t.Helper()
	s, err := Compile(&w.cfg, w.health.h())
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return s
}

func client(zone string) geodata.Location {
	return geodata.Location{Zone: zone, Prefix: 24}
}

// decideN decides n times for req at the load balancer named lbName, drawing
// from rnd, and calls each with every answer: the loop of the tests that
// measure shares.
func decideN(s *Snapshot, lbName string, req Request, rnd Rand, n int, each func(*Answer)) {
	lb := s.LoadBalancer(lbName)
	var ans Answer
	for range n {
		s.Decide(lb, &req, rnd, &ans, nil)
		each(&ans)
	}
}

// decide runs one decision with a trace and returns the answer, the
// trace, and the names of the answering origins (sorted).
func decide(t testing.TB, s *Snapshot, lbName string, req Request, rnd Rand) (Answer, Trace, []string) {
	t.Helper()
	lb := s.LoadBalancer(lbName)
	if lb == nil {
		t.Fatalf("no load balancer %s", lbName)
	}
	if rnd == nil {
		rnd = rand.New(rand.NewPCG(1, 2))
	}
	if req.Type == 0 {
		req.Type = QTypeA
	}
	var ans Answer
	var tr Trace
	s.Decide(lb, &req, rnd, &ans, &tr)
	names := []string{}
	for _, oi := range ans.Records() {
		names = append(names, s.Origin(oi).Name)
	}
	sort.Strings(names)
	return ans, tr, names
}

func sorted(s []string) []string {
	c := slices.Clone(s)
	sort.Strings(c)
	return c
}

func names(prefix string, idx ...int) []string {
	out := []string{}
	for _, i := range idx {
		out = append(out, fmt.Sprintf("%s%d", prefix, i))
	}
	sort.Strings(out)
	return out
}
