package steering

import (
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
	s, err := CompileFor(&w.cfg, w.health.h(), Options{Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	if got := weights(s); got != [2]float64{0.5, 0.5} {
		t.Fatalf("before the start: %v", got)
	}
	if next := s.NextShiftBoundary(); !next.Equal(start) {
		t.Fatalf("next boundary %v, want the start %v", next, start)
	}
	for i, want := range [][2]float64{{0.54, 0.46}, {0.6, 0.4}, {0.7, 0.3}, {0.9, 0.1}} {
		at = start.Add(time.Duration(i)*time.Minute + 30*time.Second)
		prev := s
		if s, err = Update(prev, &w.cfg, w.health.h(), map[string]bool{}); err != nil {
			t.Fatal(err)
		}
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
		c, err := CompileFor(&w.cfg, w.health.h(), Options{Now: func() time.Time { return at }})
		if err != nil {
			t.Fatal(err)
		}
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
	s, err := CompileFor(&w.cfg, w.health.h(), Options{Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
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
	r := &w.cfg.Rollouts[0]
	if why := w.compile(t).RolloutGuard(r); why != "" {
		t.Fatalf("healthy: %s", why)
	}
	w.down("p", "b")
	if why := w.compile(t).RolloutGuard(r); why != "" {
		t.Fatalf("the origin losing weight is down: %s", why)
	}
	w.health.Origins = map[pools.OriginKey]pools.OriginHealth{}
	w.down("p", "a")
	if why := w.compile(t).RolloutGuard(r); !strings.Contains(why, "origin a of pool p") {
		t.Fatalf("the origin gaining weight is down: %q", why)
	}
	w.down("p", "b")
	if why := w.compile(t).RolloutGuard(r); !strings.Contains(why, "stopped serving") {
		t.Fatalf("the pool is down: %q", why)
	}
}

// TestDecideUnderRolloutAllocatesNothing: a rollout in force costs the
// answer path nothing: its step's weights are compiled into the pool, and
// a decision allocates nothing.
func TestDecideUnderRolloutAllocatesNothing(t *testing.T) {
	start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	w := rolloutWorld(start)
	s, err := CompileFor(&w.cfg, w.health.h(), Options{Now: func() time.Time { return start.Add(90 * time.Second) }})
	if err != nil {
		t.Fatal(err)
	}
	if got := weights(s); got != [2]float64{0.6, 0.4} {
		t.Fatalf("step 2 weights %v", got)
	}
	lb, req := s.LoadBalancer("www.glb.example.com"), benchRequest()
	var ans Answer
	if n := testing.AllocsPerRun(1000, func() { s.Decide(lb, req, FastRand{}, &ans, nil) }); n != 0 || ans.N != 1 {
		t.Fatalf("%.1f allocations per decision and %d records, want 0 and 1", n, ans.N)
	}
}
