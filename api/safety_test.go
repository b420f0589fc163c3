package api_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
)

// TestSafetyNow: a shift away from one of two pools is allowed; once the
// other pool's origins go down, the rule that one steering pool keeps
// serving no longer holds, and GET /safety names it; without a snapshot
// the endpoint says it cannot judge.
func TestSafetyNow(t *testing.T) {
	t.Parallel()
	var health atomic.Pointer[pools.Health]
	var e *env
	e = newEnv(t, func(o *api.Options) {
		o.Snapshot = func() (*steering.Snapshot, steering.Locator) {
			cfg, err := e.store.Config(context.Background())
			if err != nil {
				t.Errorf("config: %v", err)
				return nil, nil
			}
			snap, err := steering.Compile(cfg, health.Load())
			if err != nil {
				t.Errorf("compile: %v", err)
				return nil, nil
			}
			return snap, nil
		}
	})
	f := e.fixture()
	p2 := e.anotherPool(f, "web-us")
	e.setDefaultPools(f.lb, f.pool, p2)
	if r := e.do("POST", "/api/v1/shifts", map[string]any{"target": map[string]any{"pool": p2}, "reason": "bad deploy", "duration": "1h"}); r.status != http.StatusCreated {
		t.Fatalf("shift of one of two pools: %d %s", r.status, r.body)
	}
	var got struct{ Result []pools.ShiftHarm }
	e.do("GET", "/api/v1/safety", nil).json(t, &got)
	if got.Result == nil || len(got.Result) != 0 {
		t.Fatalf("safety with the other pool serving: %+v, want []", got.Result)
	}

	down := map[pools.OriginKey]pools.OriginHealth{}
	for _, o := range []string{"a", "b", "c"} {
		down[pools.OriginKey{Pool: f.pool, Origin: o}] = pools.OriginHealth{Reason: "HTTP 503"}
	}
	health.Store(pools.NewHealth(down, nil))
	e.do("GET", "/api/v1/safety", nil).json(t, &got)
	if len(got.Result) != 1 || got.Result[0].Rule != pools.RuleMinServingPools || got.Result[0].LoadBalancer != f.lb ||
		got.Result[0].Serving != 0 || got.Result[0].Minimum != 1 {
		t.Fatalf("safety after the serving pool went down: %+v", got.Result)
	}

	bare := newEnv(t, nil)
	bare.do("GET", "/api/v1/safety", nil).problem(t, http.StatusNotImplemented)
}
