package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
)

func rollout(pool string, weights map[string]float64, steps []float64, interval string) *pools.Rollout {
	return &pools.Rollout{Pool: pool, Weights: weights, Steps: steps, StepInterval: interval, Reason: "move traffic to b"}
}

func startRollout(t *testing.T, c context.Context, s pools.Store, r *pools.Rollout) (*pools.Rollout, error) {
	t.Helper()
	if err := r.Prepare(time.Now()); err != nil {
		t.Fatal(err)
	}
	return s.StartRollout(c, r, nil)
}

// completeByClock waits until every step of r has passed by the clock and
// completes it as the clock does: the end every rollout that is not rolled
// back comes to.
func completeByClock(t *testing.T, c context.Context, s pools.Store, r *pools.Rollout) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); r.Step(time.Now()) < len(r.Steps); {
		if time.Now().After(deadline) {
			t.Fatal("the rollout's steps did not pass by the clock")
		}
		time.Sleep(50 * time.Millisecond)
	}
	done, err := s.ChangeRollout(pools.WithCaller(c, pools.Caller{Actor: pools.ActorClock}), r.ID, r.Revision, pools.RolloutComplete, "")
	if err != nil || done.State != pools.RolloutCompleted {
		t.Fatalf("complete: %+v, %v", done, err)
	}
}

// testRollouts: a rollout reads the pool's weights into From, is alone on
// its pool, follows the change feed into Config, and its events are
// conditional on its revision: two writers at one revision, one wins.
func testRollouts(t *testing.T, c context.Context, s pools.Store) {
	f := newFixture(t, s)
	if _, err := startRollout(t, c, s, rollout(f.pool.ID, map[string]float64{"zz": 0.5}, nil, "1h")); !isValidation(err, "weights.zz") {
		t.Fatalf("an origin the pool lacks: %v", err)
	}
	if _, err := startRollout(t, c, s, rollout(f.pool.ID, map[string]float64{"a": 0.4}, nil, "1h")); !isValidation(err, "weights") {
		t.Fatalf("weights the pool already has: %v", err)
	}
	refused := errors.New("refused")
	r := rollout(f.pool.ID, map[string]float64{"a": 0.9, "b": 0.1}, nil, "1h")
	if err := r.Prepare(time.Now()); err != nil {
		t.Fatal(err)
	}
	var final *pools.Pool
	if _, err := s.StartRollout(c, r, func(o pools.Object) error { final = o.(*pools.Pool); return refused }); !errors.Is(err, refused) {
		t.Fatalf("guard refused, got %v", err)
	}
	if final == nil || final.Origins[0].Weight != 0.9 || final.Origins[1].Weight != 0.1 {
		t.Fatalf("the guard saw the pool %+v, want the new weights", final)
	}
	if res, _ := s.List(c, pools.KindRollout, pools.Page{}); res.TotalCount != 0 {
		t.Fatalf("a refused rollout was stored: %d", res.TotalCount)
	}
	got, err := s.StartRollout(c, r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Revision != 1 || got.State != pools.RolloutRunning || got.From["a"] != 0.4 || got.From["b"] != 0.6 {
		t.Fatalf("stored %+v", got)
	}
	var se *pools.StateError
	if _, err := startRollout(t, c, s, rollout(f.pool.ID, map[string]float64{"a": 1}, nil, "1h")); !errors.As(err, &se) {
		t.Fatalf("a second rollout on the pool: %v, want a StateError", err)
	}
	cfg, err := s.Config(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Rollouts) != 1 || cfg.Rollouts[0].ID != got.ID {
		t.Fatalf("Config holds rollouts %+v", cfg.Rollouts)
	}
	if _, err := s.ChangeRollout(c, got.ID, 7, pools.RolloutPause, ""); !errors.Is(err, pools.ErrStale) {
		t.Fatalf("pause at a stale revision: %v", err)
	}
	paused, err := s.ChangeRollout(c, got.ID, got.Revision, pools.RolloutPause, "")
	if err != nil || paused.State != pools.RolloutPaused || paused.PausedAt == nil {
		t.Fatalf("pause: %+v, %v", paused, err)
	}
	if _, err := s.ChangeRollout(c, got.ID, 0, pools.RolloutPause, ""); !errors.As(err, &se) {
		t.Fatalf("pausing a paused rollout: %v", err)
	}
	if _, err := s.ChangeRollout(c, got.ID, 0, pools.RolloutComplete, ""); !errors.As(err, &se) {
		t.Fatalf("completing a rollout whose steps have not run: %v", err)
	}
	resumed, err := s.ChangeRollout(c, got.ID, 0, pools.RolloutResume, "")
	if err != nil || resumed.State != pools.RolloutRunning || resumed.PausedAt != nil || resumed.HeldMS < 0 {
		t.Fatalf("resume: %+v, %v", resumed, err)
	}
	// Nodes see the same guard fail: one roll back is written, the others
	// find the revision moved.
	errs := make([]error, 6)
	atOnce(len(errs), func(i int) {
		_, errs[i] = s.ChangeRollout(c, got.ID, resumed.Revision, pools.RolloutRollBack, "origin b is down")
	})
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
		} else if !errors.Is(err, pools.ErrStale) {
			t.Fatalf("a losing roll back: %v, want stale", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d of %d roll backs at one revision were written, want 1: %v", won, len(errs), errs)
	}
	o, err := s.Get(c, pools.KindRollout, got.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rb := o.(*pools.Rollout); rb.State != pools.RolloutRolledBack || rb.EndReason != "origin b is down" || rb.EndedAt == nil {
		t.Fatalf("rolled back: %+v", rb)
	}
	if _, err := s.ChangeRollout(c, got.ID, 0, pools.RolloutResume, ""); !errors.As(err, &se) {
		t.Fatalf("resuming a rolled back rollout: %v", err)
	}
	p, err := s.Get(c, pools.KindPool, f.pool.ID)
	if err != nil {
		t.Fatal(err)
	}
	if w := p.(*pools.Pool).Origins; w[0].Weight != 0.4 || w[1].Weight != 0.6 {
		t.Fatalf("a roll back changed the pool's weights: %+v", w)
	}
}

// testRolloutCompletion: once the last step held its interval, completion
// writes the new weights into the pool; each step is audited once however
// many nodes report it.
func testRolloutCompletion(t *testing.T, c context.Context, s pools.Store) {
	f := newFixture(t, s)
	got, err := startRollout(t, c, s, rollout(f.pool.ID, map[string]float64{"a": 0.9, "b": 0.1}, []float64{50, 100}, "1s"))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := s.RecordRolloutStep(c, got, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RecordRolloutStep(c, got, 1); err != nil {
		t.Fatal(err)
	}
	steps := audit(t, s, pools.AuditFilter{Kind: pools.KindRollout, ObjectID: got.ID, Actor: pools.ActorClock})
	if len(steps) != 2 {
		t.Fatalf("%d step entries, want one per step: %+v", len(steps), steps)
	}
	before := history(t, s, f.lb.ID)
	completeByClock(t, c, s, got)
	p, err := s.Get(c, pools.KindPool, f.pool.ID)
	if err != nil {
		t.Fatal(err)
	}
	if w := p.(*pools.Pool).Origins; w[0].Weight != 0.9 || w[1].Weight != 0.1 {
		t.Fatalf("completion left the pool's weights at %+v", w)
	}
	completionWritten(t, s, before, f.lb.ID, pools.KindPool, p)
	if _, err := startRollout(t, c, s, rollout(f.pool.ID, map[string]float64{"a": 0.5}, nil, "1h")); err != nil {
		t.Fatalf("a new rollout after one completed: %v", err)
	}
}

func isValidation(err error, path string) bool {
	var ve *pools.ValidationError
	if !errors.As(err, &ve) {
		return false
	}
	for _, fe := range ve.Errors {
		if fe.Path == path {
			return true
		}
	}
	return false
}

// testRolloutOrder: a rollout of a load balancer's pool order reads the
// order into FromDefaultPools, is alone on its load balancer (a pool's
// rollout beside it is not), refuses an order naming a missing pool, and
// completion writes the new order into the load balancer.
func testRolloutOrder(t *testing.T, c context.Context, s pools.Store) {
	f := newFixture(t, s)
	us := mustCreate(t, s, Pool("us", f.monitor.ID))
	lb := *f.lb
	lb.DefaultPools = []string{f.pool.ID, us.ID}
	if _, err := s.Replace(c, &lb, 0); err != nil {
		t.Fatal(err)
	}
	order := func(list ...string) *pools.Rollout {
		return &pools.Rollout{LoadBalancer: f.lb.ID, DefaultPools: list, Steps: []float64{50, 100}, StepInterval: "1s", Reason: "us first"}
	}
	if _, err := startRollout(t, c, s, order(f.pool.ID, us.ID)); !isValidation(err, "default_pools") {
		t.Fatalf("the order the load balancer has: %v", err)
	}
	var ve *pools.ValidationError
	if _, err := startRollout(t, c, s, order(us.ID, "nope")); !errors.As(err, &ve) {
		t.Fatalf("an order naming a missing pool: %v", err)
	}
	got, err := startRollout(t, c, s, order(us.ID, f.pool.ID))
	if err != nil {
		t.Fatal(err)
	}
	if got.State != pools.RolloutRunning || len(got.FromDefaultPools) != 2 || got.FromDefaultPools[0] != f.pool.ID || got.Pool != "" {
		t.Fatalf("stored %+v", got)
	}
	var se *pools.StateError
	if _, err := startRollout(t, c, s, order(us.ID)); !errors.As(err, &se) {
		t.Fatalf("a second rollout on the load balancer: %v, want a StateError", err)
	}
	pr, err := startRollout(t, c, s, rollout(f.pool.ID, map[string]float64{"a": 0.9, "b": 0.1}, nil, "1h"))
	if err != nil {
		t.Fatalf("a pool's rollout beside the order's: %v", err)
	}
	// A direct write of what a rollout moves is refused, naming it;
	// another pool of the load balancer is not.
	lb.TTL = 45
	if _, err := s.Replace(c, &lb, 0); !errors.As(err, &se) || !strings.Contains(err.Error(), got.ID) {
		t.Fatalf("writing the load balancer under an order rollout: %v, want a StateError naming %s", err, got.ID)
	}
	pool := *f.pool
	pool.Description = "edited"
	if _, err := s.Replace(c, &pool, 0); !errors.As(err, &se) || !strings.Contains(err.Error(), pr.ID) {
		t.Fatalf("writing the pool under a weight rollout: %v, want a StateError naming %s", err, pr.ID)
	}
	other := *us
	other.Description = "edited"
	if _, err := s.Replace(c, &other, 0); err != nil {
		t.Fatalf("writing a pool no rollout moves: %v", err)
	}
	// A rollback to a version writes what the rollout moves too.
	cur, err := s.Get(c, pools.KindLoadBalancer, lb.ID)
	if err != nil {
		t.Fatal(err)
	}
	restore := &pools.Restore{Rollback: pools.Rollback{LoadBalancer: lb.ID, Version: 1, Revision: 1},
		Writes: []pools.RestoreWrite{{Object: &lb, IfRevision: cur.ObjectMeta().Revision}}}
	if _, err := s.Restore(c, restore); !errors.As(err, &se) || !strings.Contains(err.Error(), got.ID) {
		t.Fatalf("a rollback writing the load balancer under an order rollout: %v, want a StateError naming %s", err, got.ID)
	}
	before := history(t, s, f.lb.ID)
	completeByClock(t, c, s, got)
	o, err := s.Get(c, pools.KindLoadBalancer, f.lb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d := o.(*pools.LoadBalancer).DefaultPools; len(d) != 2 || d[0] != us.ID || d[1] != f.pool.ID {
		t.Fatalf("completion left the order at %v", d)
	}
	completionWritten(t, s, before, f.lb.ID, pools.KindLoadBalancer, o)
	written := *o.(*pools.LoadBalancer)
	written.TTL = 45
	if _, err := s.Replace(c, &written, 0); err != nil {
		t.Fatalf("writing the load balancer once its rollout ended: %v", err)
	}
	if _, err := startRollout(t, c, s, order(f.pool.ID, us.ID)); err != nil {
		t.Fatalf("a new order rollout after one completed: %v", err)
	}
}

// completionWritten checks that a rollout's completion, which wrote o (the
// pool or the load balancer lb), is a write like any other: o has an
// audit entry by the clock at the completion's revision, whose after is
// o as stored, and load balancer lb has one version more than before,
// made by that write, with o as it now stands.
func completionWritten(t *testing.T, s pools.Store, before *pools.History, lb string, k pools.Kind, o pools.Object) {
	t.Helper()
	id := o.ObjectMeta().ID
	es := audit(t, s, pools.AuditFilter{Kind: k, ObjectID: id, Actor: pools.ActorClock})
	if len(es) != 1 || es[0].Action != pools.ActionUpdate {
		t.Fatalf("the completion's write of %s %s: %d audit entries by the clock, want one update", k.Singular(), id, len(es))
	}
	after := pools.New(k)
	if err := json.Unmarshal(es[0].After, after); err != nil {
		t.Fatal(err)
	}
	if got, want := content(t, after), content(t, o); got != want {
		t.Errorf("the completion's audit entry has after %s, want the %s as stored %s", got, k.Singular(), want)
	}
	h := history(t, s, lb)
	if len(h.Versions) != len(before.Versions)+1 {
		t.Fatalf("load balancer %s has %d versions after the completion, %d before: the completion made no version", lb, len(h.Versions), len(before.Versions))
	}
	v := h.Versions[len(h.Versions)-1]
	if v.Revision != es[0].Revision || v.Actor != pools.ActorClock {
		t.Errorf("the last version %+v is not the completion's write at revision %d", v, es[0].Revision)
	}
	objs := versionObjects(t, h, lb, v.Version)
	var got pools.Object = objs.LoadBalancer
	if k == pools.KindPool {
		for i := range objs.Pools {
			if objs.Pools[i].ID == id {
				got = &objs.Pools[i]
			}
		}
	}
	if content(t, got) != content(t, o) {
		t.Errorf("version %d holds %s %s as %s, want %s", v.Version, k.Singular(), id, content(t, got), content(t, o))
	}
}
