package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/glb-dns/glb/pools"
)

// TestRolloutStartPauseResumeAbort: a rollout starts with the pool's
// weights as from and the default steps, shows its step, is paused,
// resumed and aborted by the API, conditionally on If-Match, and each
// state refuses what it does not allow with 409.
func TestRolloutStartPauseResumeAbort(t *testing.T) {
	t.Parallel()
	e := previewEnv(t, nil)
	f := e.fixture()
	r := e.do("POST", "/api/v1/rollouts", map[string]any{"pool": f.pool, "weights": map[string]any{"a": 0.9, "b": 0.05},
		"reason": "canary", "step_interval": "1h"})
	if r.status != http.StatusCreated {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	var got struct{ Result pools.Rollout }
	r.json(t, &got)
	ro := got.Result
	if ro.Status != pools.RolloutRunning || ro.From["a"] != 0.4 || ro.From["b"] != 0.3 || len(ro.Steps) != 4 || ro.Steps[0] != 10 ||
		ro.StepInterval != "1h" || ro.CurrentStep == nil || *ro.CurrentStep != 0 || ro.Percent == nil || *ro.Percent != 10 ||
		ro.NextStepAt == nil || r.header.Get("Location") != "/api/v1/rollouts/"+ro.ID {
		t.Fatalf("started %+v", ro)
	}
	e.do("POST", "/api/v1/rollouts", map[string]any{"pool": f.pool, "weights": map[string]any{"c": 0.9}, "reason": "second"}).
		problem(t, http.StatusConflict)
	e.do("POST", "/api/v1/rollouts/"+ro.ID+"/pause", nil, "If-Match", `"9"`).problem(t, http.StatusPreconditionFailed)
	r = e.do("POST", "/api/v1/rollouts/"+ro.ID+"/pause", map[string]any{"reason": "looking"}, "If-Match", `"1"`)
	r.json(t, &got)
	if r.status != http.StatusOK || got.Result.Status != pools.RolloutPaused || got.Result.NextStepAt != nil {
		t.Fatalf("pause: %d %s", r.status, r.body)
	}
	if p := e.do("POST", "/api/v1/rollouts/"+ro.ID+"/pause", nil).problem(t, http.StatusConflict); !strings.Contains(p.Detail, "already paused") {
		t.Errorf("pause twice: %+v", p)
	}
	r = e.do("POST", "/api/v1/rollouts/"+ro.ID+"/resume", nil)
	if r.status != http.StatusOK {
		t.Fatalf("resume: %d %s", r.status, r.body)
	}
	r = e.do("POST", "/api/v1/rollouts/"+ro.ID+"/abort", map[string]any{"reason": "changed my mind"})
	r.json(t, &got)
	if r.status != http.StatusOK || got.Result.Status != pools.RolloutAborted || got.Result.EndReason != "changed my mind" || got.Result.CurrentStep != nil {
		t.Fatalf("abort: %d %s", r.status, r.body)
	}
	e.do("POST", "/api/v1/rollouts/"+ro.ID+"/resume", nil).problem(t, http.StatusConflict)
	e.do("POST", "/api/v1/rollouts/nope/abort", nil).problem(t, http.StatusNotFound)
	var list struct{ Result []pools.Rollout }
	for status, n := range map[string]int{"aborted": 1, "running,paused": 0, "": 1} {
		e.do("GET", "/api/v1/rollouts?status="+status, nil).json(t, &list)
		if len(list.Result) != n || n > 0 && list.Result[0].ID != ro.ID {
			t.Fatalf("status %q: %+v", status, list)
		}
	}
	if p := e.do("GET", "/api/v1/rollouts?status=done", nil).problem(t, http.StatusBadRequest); !strings.Contains(p.Errors[0].Message, "scheduled, running, paused, completed, rolled_back, aborted") {
		t.Errorf("unknown status: %+v", p)
	}
	// The abort left the pool's weights as they were.
	var pool struct{ Result pools.Pool }
	e.do("GET", "/api/v1/pools/"+f.pool, nil).json(t, &pool)
	if w := pool.Result.Origins; w[0].Weight != 0.4 || w[1].Weight != 0.3 {
		t.Fatalf("weights after the abort: %+v", w)
	}
	var audit struct{ Result []pools.AuditEntry }
	e.do("GET", "/api/v1/audit?kind=rollouts&id="+ro.ID, nil).json(t, &audit)
	if len(audit.Result) != 4 {
		t.Fatalf("%d audit entries (start, pause, resume, abort): %+v", len(audit.Result), audit.Result)
	}
}

// TestRolloutValidation: every field at fault is named at once, with a
// 400; read-only fields are refused.
func TestRolloutValidation(t *testing.T) {
	t.Parallel()
	e := previewEnv(t, nil)
	f := e.fixture()
	p := e.do("POST", "/api/v1/rollouts", map[string]any{"weights": map[string]any{"a": 1.5}, "steps": []float64{50, 20},
		"step_interval": "1ms", "state": "completed", "guards": map[string]any{"webhook": "ftp://x", "query": "up"}}).problem(t, http.StatusBadRequest)
	paths := fieldPaths(p)
	for _, want := range []string{"pool", "weights.a", "steps[1]", "step_interval", "reason", "state", "guards.webhook", "guards.prometheus"} {
		if !paths[want] {
			t.Errorf("no error at %s: %+v", want, p.Errors)
		}
	}
	p = e.do("POST", "/api/v1/rollouts", map[string]any{"pool": f.pool, "weights": map[string]any{"zz": 0.5}, "reason": "x"}).
		problem(t, http.StatusBadRequest)
	if !fieldPaths(p)["weights.zz"] {
		t.Errorf("unknown origin: %+v", p.Errors)
	}
	p = e.do("POST", "/api/v1/rollouts", map[string]any{"pool": "nope", "weights": map[string]any{"a": 0.5}, "reason": "x"}).
		problem(t, http.StatusBadRequest)
	if !fieldPaths(p)["pool"] {
		t.Errorf("unknown pool: %+v", p.Errors)
	}
	p = e.do("POST", "/api/v1/rollouts", map[string]any{"pool": f.pool, "weights": map[string]any{"a": 0.5}, "reason": "x", "stpes": []int{1}}).
		problem(t, http.StatusBadRequest)
	if !fieldPaths(p)["stpes"] {
		t.Errorf("unknown field: %+v", p.Errors)
	}
}

// TestRolloutSafety: new weights that leave a load balancer fewer serving
// pools than safety.min_serving_pools are refused with 409; an admin may
// override.
func TestRolloutSafety(t *testing.T) {
	t.Parallel()
	e := previewEnv(t, nil)
	f := e.fixture()
	zero := map[string]any{"pool": f.pool, "weights": map[string]any{"a": 0, "b": 0, "c": 0}, "reason": "drain", "step_interval": "1h"}
	p := e.do("POST", "/api/v1/rollouts", zero).problem(t, http.StatusConflict)
	if len(p.Safety) != 1 || p.Safety[0].Rule != pools.RuleMinServingPools || p.Safety[0].LoadBalancer != f.lb {
		t.Fatalf("safety: %+v", p)
	}
	zero["override"] = true
	if r := e.do("POST", "/api/v1/rollouts", zero); r.status != http.StatusCreated {
		t.Fatalf("override by the bootstrap admin: %d %s", r.status, r.body)
	}
}

// TestRolloutOrder: a rollout of a load balancer's default pool order
// reads the order into from_default_pools and is alone on the load
// balancer; pool and load_balancer together, weights with an order, a
// repeated pool and an unknown pool are 400s naming the field.
func TestRolloutOrder(t *testing.T) {
	t.Parallel()
	e := previewEnv(t, nil)
	f := e.fixture()
	us := e.anotherPool(f, "web-us")
	e.setDefaultPools(f.lb, f.pool, us)
	p := e.do("POST", "/api/v1/rollouts", map[string]any{"pool": f.pool, "load_balancer": f.lb, "default_pools": []string{us},
		"reason": "x"}).problem(t, http.StatusBadRequest)
	if !fieldPaths(p)["load_balancer"] {
		t.Errorf("pool and load_balancer: %+v", p.Errors)
	}
	p = e.do("POST", "/api/v1/rollouts", map[string]any{"load_balancer": f.lb, "default_pools": []string{us, us},
		"weights": map[string]any{"a": 1}, "reason": "x"}).problem(t, http.StatusBadRequest)
	if !fieldPaths(p)["weights"] || !fieldPaths(p)["default_pools[1]"] {
		t.Errorf("weights with an order, a pool twice: %+v", p.Errors)
	}
	p = e.do("POST", "/api/v1/rollouts", map[string]any{"load_balancer": f.lb, "default_pools": []string{us, "nope"}, "reason": "x"}).
		problem(t, http.StatusBadRequest)
	if len(p.Errors) == 0 || !strings.Contains(p.Errors[0].Message, "nope") {
		t.Errorf("an unknown pool: %+v", p.Errors)
	}
	r := e.do("POST", "/api/v1/rollouts", map[string]any{"load_balancer": f.lb, "default_pools": []string{us, f.pool},
		"reason": "us first", "step_interval": "1h"})
	if r.status != http.StatusCreated {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	var got struct{ Result pools.Rollout }
	r.json(t, &got)
	if ro := got.Result; len(ro.FromDefaultPools) != 2 || ro.FromDefaultPools[0] != f.pool || ro.Pool != "" || ro.Percent == nil || *ro.Percent != 10 {
		t.Fatalf("started %+v", ro)
	}
	e.do("POST", "/api/v1/rollouts", map[string]any{"load_balancer": f.lb, "default_pools": []string{us}, "reason": "again"}).
		problem(t, http.StatusConflict)
	// Writing what the rollout moves is a 409 naming it, PUT or PATCH;
	// once aborted, the write goes through.
	if p := e.do("PATCH", "/api/v1/load_balancers/"+f.lb, map[string]any{"ttl": 45}).problem(t, http.StatusConflict); !strings.Contains(p.Detail, "rollout "+got.Result.ID) ||
		p.Type != "urn:glb:problem:state" {
		t.Errorf("PATCH under a rollout: %+v", p)
	}
	var lb struct{ Result map[string]any }
	e.do("GET", "/api/v1/load_balancers/"+f.lb, nil).json(t, &lb)
	if p := e.do("PUT", "/api/v1/load_balancers/"+f.lb, lb.Result).problem(t, http.StatusConflict); !strings.Contains(p.Detail, "abort it") {
		t.Errorf("PUT under a rollout: %+v", p)
	}
	e.do("POST", "/api/v1/rollouts/"+got.Result.ID+"/abort", nil)
	if r := e.do("PATCH", "/api/v1/load_balancers/"+f.lb, map[string]any{"ttl": 45}); r.status != http.StatusOK {
		t.Fatalf("PATCH after the abort: %d %s", r.status, r.body)
	}
}
