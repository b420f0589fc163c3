package steering

import (
	"math"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
)

// rolloutWorld is a pool of two origins at 0.5/0.5 and a rollout moving
// them to 0.9/0.1 in four steps of a minute from start.
func rolloutWorld(start time.Time) *world {
	w := newWorld()
	w.pool("p", origin{"a", "192.0.2.1", "", 0.5}, origin{"b", "192.0.2.2", "", 0.5})
	w.lb("www", []string{"p"}, "p")
	r := pools.Rollout{Meta: pools.Meta{ID: "r1"}, Pool: "p", Weights: map[string]float64{"a": 0.9, "b": 0.1},
		From: map[string]float64{"a": 0.5, "b": 0.5}, Steps: []float64{10, 25, 50, 100}, StepInterval: "1m",
		StartsAt: start, State: pools.RolloutRunning}
	w.cfg.Rollouts = append(w.cfg.Rollouts, r)
	return w
}

func weights(s *Snapshot) [2]float64 {
	first, _ := s.PoolOrigins(s.poolByID["p"])
	return [2]float64{s.Origin(first).Weight, s.Origin(first + 1).Weight}
}

// TestRolloutStepsByClock: the snapshot holds the weights of the step in
// force at the time it is compiled, whatever node compiles it; Update
// recompiles the pool when the step moves though no object changed, and
// the next boundary is the next step's start.
func TestRolloutStepsByClock(t *testing.T) {
	start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	w := rolloutWorld(start)
	at := start.Add(-time.Second)
	s := w.compileAt(t, func() time.Time { return at })
	if got := weights(s); got != [2]float64{0.5, 0.5} {
		t.Fatalf("before the start: %v", got)
	}
	if next := s.NextShiftBoundary(); !next.Equal(start) {
		t.Fatalf("next boundary %v, want the start %v", next, start)
	}
	for i, want := range [][2]float64{{0.54, 0.46}, {0.6, 0.4}, {0.7, 0.3}, {0.9, 0.1}} {
		at = start.Add(time.Duration(i)*time.Minute + 30*time.Second)
		prev := s
		s = w.update(t, prev)
		if got := weights(s); got != want {
			t.Fatalf("step %d: weights %v, want %v", i+1, got, want)
		}
		if len(s.Rebuilt()) != 1 {
			t.Fatalf("step %d: %d pools rebuilt, want the one under the rollout", i+1, len(s.Rebuilt()))
		}
		if next, want := s.NextShiftBoundary(), start.Add(time.Duration(i+1)*time.Minute); !next.Equal(want) {
			t.Fatalf("step %d: next boundary %v, want %v", i+1, next, want)
		}
		// A full compile at the same moment holds the same weights.
		c := w.compileAt(t, func() time.Time { return at })
		if weights(c) != want {
			t.Fatalf("step %d: a full compile holds %v", i+1, weights(c))
		}
	}
	// The same moment again: nothing to rebuild.
	same, err := Update(s, &w.cfg, w.health.h(), map[string]bool{})
	if err != nil {
		t.Fatal(err)
	}
	if len(same.Rebuilt()) != 0 {
		t.Fatalf("%d pools rebuilt with nothing moved", len(same.Rebuilt()))
	}
	// Rolled back: the original weights, whatever the clock.
	w.cfg.Rollouts[0].State = pools.RolloutRolledBack
	if s, err = Update(s, &w.cfg, w.health.h(), map[string]bool{}); err != nil {
		t.Fatal(err)
	}
	if got := weights(s); got != [2]float64{0.5, 0.5} {
		t.Fatalf("rolled back: %v", got)
	}
}

// TestRolloutPausedHolds: a paused rollout holds the step it paused at;
// resumed, its steps run later by the time it was held.
func TestRolloutPausedHolds(t *testing.T) {
	start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	w := rolloutWorld(start)
	r := &w.cfg.Rollouts[0]
	paused := start.Add(90 * time.Second)
	r.State, r.PausedAt = pools.RolloutPaused, &paused
	at := start.Add(time.Hour)
	s := w.compileAt(t, func() time.Time { return at })
	if got := weights(s); got != [2]float64{0.6, 0.4} {
		t.Fatalf("paused in step 2: %v", got)
	}
	if !s.NextShiftBoundary().IsZero() {
		t.Fatalf("a paused rollout has no next step: %v", s.NextShiftBoundary())
	}
	r.State, r.PausedAt, r.HeldMS = pools.RolloutRunning, nil, (time.Hour - 90*time.Second).Milliseconds()
	if got := r.Step(at); got != 1 {
		t.Fatalf("resumed at once: step %d, want 1 (still step 2)", got)
	}
	if got := r.Step(at.Add(31 * time.Second)); got != 2 {
		t.Fatalf("half a minute later: step %d, want 2", got)
	}
}

// TestRolloutGuard: the guard fails when an origin that gains weight is
// down, or the pool stops serving; an origin that loses weight may fail.
func TestRolloutGuard(t *testing.T) {
	start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	w := rolloutWorld(start)
	guardSays(t, w, &w.cfg.Rollouts[0], []guardStep{
		{what: "healthy"},
		{what: "the origin losing weight is down", down: [2]string{"p", "b"}},
		{what: "the origin gaining weight is down", fresh: true, down: [2]string{"p", "a"}, says: "origin a of pool p"},
		{what: "the pool is down", down: [2]string{"p", "b"}, says: "stopped serving"},
	})
}

// guardStep marks one more origin down (pool, origin; none when empty),
// on all origins up again when fresh, and names what a rollout's guard
// says then: a part of its reason to roll back, or "" to go on.
type guardStep struct {
	what  string
	fresh bool
	down  [2]string
	says  string
}

// guardSays takes the steps in order over w's health and checks what
// the guard of r says after each.
func guardSays(t *testing.T, w *world, r *pools.Rollout, steps []guardStep) {
	t.Helper()
	for _, st := range steps {
		if st.fresh {
			w.health.Origins = map[pools.OriginKey]pools.OriginHealth{}
		}
		if st.down[0] != "" {
			w.down(st.down[0], st.down[1])
		}
		why := w.compile(t).RolloutGuard(r)
		if st.says == "" && why != "" || !strings.Contains(why, st.says) {
			t.Fatalf("%s: the guard says %q, want %q", st.what, why, st.says)
		}
	}
}

// TestDecideUnderRolloutAllocatesNothing: a rollout in force costs the
// answer path nothing: its step's weights are compiled into the pool, and
// a decision allocates nothing.
func TestDecideUnderRolloutAllocatesNothing(t *testing.T) {
	start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	w := rolloutWorld(start)
	s := w.compileAt(t, func() time.Time { return start.Add(90 * time.Second) })
	if got := weights(s); got != [2]float64{0.6, 0.4} {
		t.Fatalf("step 2 weights %v", got)
	}
	lb, req := s.LoadBalancer("www.glb.example.com"), benchRequest()
	var ans Answer
	if n := testing.AllocsPerRun(1000, func() { s.Decide(lb, req, FastRand{}, &ans, nil) }); n != 0 || ans.N != 1 {
		t.Fatalf("%.1f allocations per decision and %d records, want 0 and 1", n, ans.N)
	}
}

// orderWorld is pools pa and pb (one origin each) under load balancer
// www ordered [pa, pb], and a rollout moving the order to [pb, pa] in
// four steps of a minute from start.
func orderWorld(start time.Time) *world {
	w := newWorld()
	w.pool("pa", origin{"a", "192.0.2.1", "", 1})
	w.pool("pb", origin{"b", "192.0.2.2", "", 1})
	w.lb("www", []string{"pa", "pb"}, "pa")
	w.cfg.Rollouts = append(w.cfg.Rollouts, pools.Rollout{Meta: pools.Meta{ID: "r2"}, LoadBalancer: "lb-www",
		DefaultPools: []string{"pb", "pa"}, FromDefaultPools: []string{"pa", "pb"}, Steps: []float64{10, 25, 50, 100},
		StepInterval: "1m", StartsAt: start, State: pools.RolloutRunning})
	return w
}

// newOrderShare is the share of n clients, each its own /24, answered
// on www by pool pb (first in the new order).
func newOrderShare(t *testing.T, s *Snapshot, n int) float64 {
	t.Helper()
	hits := 0
	for _, moved := range newOrderClients(t, s, n) {
		if moved {
			hits++
		}
	}
	return float64(hits) * 100 / float64(n)
}

// newOrderClients says for each of n clients, each its own /24, whether
// www answered it by pool pb, asked twice: a client must get the same
// order both times.
func newOrderClients(t *testing.T, s *Snapshot, n int) []bool {
	t.Helper()
	lb, req := s.LoadBalancer("www.glb.example.com"), benchRequest()
	rnd := rand.New(rand.NewPCG(7, 8))
	var ans Answer
	out := make([]bool, n)
	for i := range n {
		req.Subnet = netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(i >> 16), byte(i >> 8), byte(i), 0}), 24)
		s.Decide(lb, req, rnd, &ans, nil)
		out[i] = s.PoolID(ans.Pool) == "pb"
		// The answer holds for the subnet that drew it, and a resolver
		// must be told so.
		if lb.order != nil && (!ans.LocationDependent || ans.Scope != 24) {
			t.Fatalf("client %v: location dependent %v, ECS scope %d, want the /24", req.Subnet, ans.LocationDependent, ans.Scope)
		}
		s.Decide(lb, req, rnd, &ans, nil)
		if again := s.PoolID(ans.Pool) == "pb"; again != out[i] {
			t.Fatalf("client %v: new order %v, then %v on the next query", req.Subnet, out[i], again)
		}
	}
	return out
}

// TestRolloutOrderStepsByClock: at each step, that step's share of the
// decisions takes the new order; Update recompiles the load balancer when
// the step moves, a full compile at the same moment answers alike, and
// a rolled back rollout leaves the old order whatever the clock.
func TestRolloutOrderStepsByClock(t *testing.T) {
	start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	w := orderWorld(start)
	at := start.Add(-time.Second)
	s := w.compileAt(t, func() time.Time { return at })
	if got := newOrderShare(t, s, 1000); got != 0 {
		t.Fatalf("before the start: %.1f %% new order", got)
	}
	moved := make([]bool, 20000)
	for i, want := range []float64{10, 25, 50, 100} {
		at = start.Add(time.Duration(i)*time.Minute + 30*time.Second)
		prev := s
		s = w.update(t, prev)
		if s.LoadBalancer("www.glb.example.com") == prev.LoadBalancer("www.glb.example.com") {
			t.Fatalf("step %d: Update kept the load balancer compiled at the step before", i+1)
		}
		now := newOrderClients(t, s, 20000)
		if got := newOrderShare(t, s, 20000); math.Abs(got-want) > 1 {
			t.Fatalf("step %d: %.1f %% new order, want %v ± 1", i+1, got, want)
		}
		for c := range moved {
			if moved[c] && !now[c] {
				t.Fatalf("step %d: client %d, moved to the new order at the step before, went back", i+1, c)
			}
		}
		moved = now
		c := w.compileAt(t, func() time.Time { return at })
		if got := newOrderShare(t, c, 20000); math.Abs(got-want) > 1 {
			t.Fatalf("step %d: a full compile answers %.1f %% new order", i+1, got)
		}
	}
	same, err := Update(s, &w.cfg, w.health.h(), map[string]bool{})
	if err != nil {
		t.Fatal(err)
	}
	if same.LoadBalancer("www.glb.example.com") != s.LoadBalancer("www.glb.example.com") {
		t.Fatal("the load balancer was recompiled with nothing moved")
	}
	w.cfg.Rollouts[0].State = pools.RolloutRolledBack
	if s, err = Update(s, &w.cfg, w.health.h(), map[string]bool{}); err != nil {
		t.Fatal(err)
	}
	if got := newOrderShare(t, s, 1000); got != 0 {
		t.Fatalf("rolled back: %.1f %% new order", got)
	}
}

// TestRolloutOrderTraceAndPreview: explain says which order answered,
// and the preview counts both orders by their odds.
func TestRolloutOrderTraceAndPreview(t *testing.T) {
	start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	w := orderWorld(start)
	s := w.compileAt(t, func() time.Time { return start.Add(150 * time.Second) })
	_, tr, _ := decide(t, s, "www.glb.example.com", Request{}, fixedRand(0.2))
	if tr.Rollout == nil || tr.Rollout.ID != "r2" || tr.Rollout.Percent != 50 || tr.Rollout.Order != "new" || tr.Pool.ID != "pb" {
		t.Fatalf("a draw under the share: rollout %+v, pool %s", tr.Rollout, tr.Pool.ID)
	}
	_, tr, _ = decide(t, s, "www.glb.example.com", Request{}, fixedRand(0.7))
	if tr.Rollout == nil || tr.Rollout.Order != "old" || tr.Pool.ID != "pa" {
		t.Fatalf("a draw over the share: rollout %+v, pool %s", tr.Rollout, tr.Pool.ID)
	}
	sh := s.Preview(s.LoadBalancer("www.glb.example.com"), []Sample{{Country: "DE"}}, QTypeA, nil)
	if got := sh.ByName(); math.Abs(got["pa"]-0.5) > 1e-9 || math.Abs(got["pb"]-0.5) > 1e-9 {
		t.Fatalf("preview at 50 %%: %v", got)
	}
}

// TestRolloutOrderGuard: the guard fails when a pool the new order moves
// traffic to stops serving, not when the pool losing its place does.
func TestRolloutOrderGuard(t *testing.T) {
	start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	w := orderWorld(start)
	r := &w.cfg.Rollouts[0]
	if got := r.GainingPools(); len(got) != 1 || got[0] != "pb" {
		t.Fatalf("gaining pools %v, want [pb]", got)
	}
	guardSays(t, w, r, []guardStep{
		{what: "healthy"},
		{what: "the pool losing its place is down", down: [2]string{"pa", "a"}},
		{what: "the pool gaining traffic is down", fresh: true, down: [2]string{"pb", "b"}, says: "pool pb, which the new order moves traffic to, stopped serving"},
	})
}

// TestDecideUnderOrderRolloutAllocatesNothing: the per-query draw between
// the two compiled orders allocates nothing.
func TestDecideUnderOrderRolloutAllocatesNothing(t *testing.T) {
	start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	w := orderWorld(start)
	s := w.compileAt(t, func() time.Time { return start.Add(150 * time.Second) })
	lb, req := s.LoadBalancer("www.glb.example.com"), benchRequest()
	if lb.order == nil {
		t.Fatal("no staged order compiled at step 3")
	}
	var ans Answer
	if n := testing.AllocsPerRun(1000, func() { s.Decide(lb, req, FastRand{}, &ans, nil) }); n != 0 || ans.N != 1 {
		t.Fatalf("%.1f allocations per decision and %d records, want 0 and 1", n, ans.N)
	}
}
