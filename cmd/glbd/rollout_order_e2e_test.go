package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
)

// orderWorld configures g with pools pa (origin a) and pb (origin b),
// each checked by a monitor of one check a second whose first failure
// counts, and load balancer www answering the first serving pool of
// [pa, pb], locating clients by ECS (the subnet a staged order hashes).
func orderWorld(t *testing.T, g *glbd, a, b *originServer) {
	t.Helper()
	zone := zoneFor(t, g)
	mon := g.must("POST", "/api/v1/monitors", map[string]any{
		"type": "http", "path": "/health", "port": a.port(), "expected_codes": "200",
		"interval": 1, "timeout": 1, "retries": 0, "consecutive_down": 1, "consecutive_up": 1,
	})["id"].(string)
	for id, o := range map[string]*originServer{"pa": a, "pb": b} {
		g.must("POST", "/api/v1/pools", map[string]any{"id": id, "name": id, "monitor": mon,
			"origins": []map[string]any{{"name": id[1:], "address": o.ip(), "weight": 1}}})
	}
	g.must("POST", "/api/v1/load_balancers", map[string]any{"id": "www", "zone": zone, "name": "www.glb.example.com",
		"default_pools": []string{"pa", "pb"}, "fallback_pool": "pa", "answers": 1,
		"location_strategy": map[string]any{"prefer_ecs": "always"}})
}

// startOrder starts a rollout of www's order to list on g in four steps
// of interval.
func startOrder(t *testing.T, g *glbd, interval string, list ...string) pools.Rollout {
	t.Helper()
	var out struct{ Result pools.Rollout }
	if code := g.call("POST", "/api/v1/rollouts", map[string]any{"load_balancer": "www", "default_pools": list,
		"steps": []int{10, 25, 50, 100}, "step_interval": interval, "reason": "move www to " + list[0]}, &out); code != 201 {
		t.Fatalf("start order rollout: %d", code)
	}
	return out.Result
}

// TestRolloutOrderSharesFollowStepsAndRollBack is the acceptance of a
// staged pool order change on two nodes sharing PostgreSQL: from [pa, pb]
// to [pb, pa], the share of 2,000 answers from pb follows each of four
// steps on both nodes (± 3 points) and completion writes the new order;
// then a rollout back to [pa, pb] whose new first pool's origin stops
// during step two rolls back within one check interval plus a second,
// with audit entries for each step and the roll back.
func TestRolloutOrderSharesFollowStepsAndRollBack(t *testing.T) {
	t.Parallel()
	origins := startOrigins(t, "127.0.7.7", "127.0.7.8")
	a, b := startTwoNodes(t)
	orderWorld(t, a, origins[0], origins[1])
	ipB := origins[1].ip()
	eventually(t, 10*time.Second, "both nodes answer pa", func() (bool, string) { return bothAt(a, b, ipB, 0) })

	r := startOrder(t, a, "6s", "pb", "pa")
	if len(r.FromDefaultPools) != 2 || r.FromDefaultPools[0] != "pa" {
		t.Fatalf("started: from_default_pools %v", r.FromDefaultPools)
	}
	followsSteps(t, a, b, r, ipB, "pb", []float64{10, 25, 50, 100})
	if d := b.must("GET", "/api/v1/load_balancers/www", nil)["default_pools"].([]any); len(d) != 2 || d[0] != "pb" || d[1] != "pa" {
		t.Fatalf("completion left www's order at %v", d)
	}

	// Back to [pa, pb]: pa's origin, which the new order moves traffic
	// to, stops during step two.
	r = startOrder(t, b, "6s", "pa", "pb")
	rollsBackOnStop(t, a, b, r, origins[0], "pa", 25)
	eventually(t, 5*time.Second, "the order before the rollout answers on both nodes", func() (bool, string) { return bothAt(a, b, ipB, 100) })
	auditedRollBack(t, a, r.ID)
}

// guardRollsBack starts a rollout of www's order to [pb pa] on g, in 2 s
// steps, under guards, and checks that a guard rolls it back at step two
// with an end reason containing says.
func guardRollsBack(t *testing.T, g *glbd, reason string, guards map[string]any, says string) pools.Rollout {
	t.Helper()
	var out struct{ Result pools.Rollout }
	if code := g.call("POST", "/api/v1/rollouts", map[string]any{"load_balancer": "www", "default_pools": []string{"pb", "pa"},
		"steps": []int{10, 25, 50, 100}, "step_interval": "2s", "reason": reason, "guards": guards}, &out); code != 201 {
		t.Fatalf("start: %d", code)
	}
	r := out.Result
	eventually(t, 10*time.Second, "the guard rolls the rollout back", func() (bool, string) {
		got := rolloutOf(t, g, r.ID)
		return got.State == pools.RolloutRolledBack, got.State + " " + got.EndReason
	})
	got := rolloutOf(t, g, r.ID)
	if got.FailedStep == nil || *got.FailedStep != 1 || !strings.Contains(got.EndReason, says) {
		t.Errorf("rolled back: failed_step %v, end_reason %q, want step 2 (index 1) and %q", got.FailedStep, got.EndReason, says)
	}
	return r
}

// TestRolloutWebhookGuard: a real HTTP receiver is POSTed the rollout at
// each step and answers 500 at step two: the rollout rolls back by
// itself, naming the webhook, and the receiver saw the rollout's body at
// steps one and two.
func TestRolloutWebhookGuard(t *testing.T) {
	origins := startOrigins(t, "127.0.7.11", "127.0.7.12")
	var mu sync.Mutex
	var seen []map[string]any
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		err := json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		seen = append(seen, body)
		mu.Unlock()
		if err != nil || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if body["step"] == 1.0 {
			http.Error(w, "error rate up", http.StatusInternalServerError)
		}
	}))
	t.Cleanup(hook.Close)
	// The receiver is on loopback, refused unless allowed.
	g := startParallel(t, "--outbound-allow", "127.0.0.1")
	orderWorld(t, g, origins[0], origins[1])
	r := guardRollsBack(t, g, "pb first, gated", map[string]any{"webhook": hook.URL + "/gate"}, "webhook guard said no at step 2: 500")
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 {
		t.Fatalf("the receiver got %d POSTs, want one at each of steps 1 and 2: %v", len(seen), seen)
	}
	for k, b := range seen {
		if b["rollout"] != r.ID || b["step"] != float64(k) || b["percent"] != r.Steps[k] || b["load_balancer"] != "www" ||
			fmt.Sprint(b["default_pools"]) != "[pb pa]" || fmt.Sprint(b["from_default_pools"]) != "[pa pb]" || b["reason"] != "pb first, gated" {
			t.Errorf("POST %d: %v", k+1, b)
		}
	}
	var log struct{ Result []pools.AuditEntry }
	g.call("GET", "/api/v1/audit?kind=rollouts&id="+r.ID+"&actor=guard", nil, &log)
	if len(log.Result) != 1 {
		t.Errorf("%d guard entries in the audit log, want the roll back: %+v", len(log.Result), log.Result)
	}
}

// TestRolloutQueryGuard: a tiny server speaking Prometheus's
// /api/v1/query is asked the instant query at each step; a vector above 0
// lets step one go on, an empty result at step two rolls the rollout back.
func TestRolloutQueryGuard(t *testing.T) {
	origins := startOrigins(t, "127.0.7.13", "127.0.7.14")
	const query = `sum(rate(http_requests_total{code="200"}[1m])) > 0`
	var mu sync.Mutex
	var asked []string
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Path+"?"+r.URL.Query().Get("query"))
		n := len(asked)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		result := `[{"metric":{},"value":[1764650000.123,"12.5"]}]`
		if n > 1 {
			result = `[]`
		}
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":%s}}`, result)
	}))
	t.Cleanup(prom.Close)
	g := startParallel(t, "--outbound-allow", "127.0.0.1")
	orderWorld(t, g, origins[0], origins[1])
	guardRollsBack(t, g, "pb first, watched", map[string]any{"query": query, "prometheus": prom.URL}, "query guard said no at step 2")
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 || asked[0] != "/api/v1/query?"+query || asked[1] != asked[0] {
		t.Errorf("Prometheus was asked %q, want the query once at each of steps 1 and 2", asked)
	}
}

// TestQueryValues: the values an instant query's answer holds, by its
// result type; what a guard cannot judge is an error.
func TestQueryValues(t *testing.T) {
	for _, c := range []struct {
		kind, raw string
		want      []float64
		err       bool
	}{
		{"vector", `[{"metric":{"a":"b"},"value":[1,"2"]},{"metric":{},"value":[1,"0"]}]`, []float64{2, 0}, false},
		{"vector", `[]`, []float64{}, false},
		{"scalar", `[1,"0.5"]`, []float64{0.5}, false},
		{"vector", `[{"value":[1,"NaN"]}]`, nil, false},
		{"matrix", `[]`, nil, true},
		{"vector", `[{"value":[1,2]}]`, nil, true},
	} {
		got, err := queryValues(c.kind, json.RawMessage(c.raw))
		if (err != nil) != c.err {
			t.Errorf("%s %s: error %v", c.kind, c.raw, err)
			continue
		}
		if c.want != nil && fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s %s: %v, want %v", c.kind, c.raw, got, c.want)
		}
		if strings.Contains(c.raw, "NaN") && (len(got) != 1 || got[0] > 0 || got[0] <= 0) {
			t.Errorf("NaN read as %v; the guard must see it neither above nor at 0", got)
		}
	}
}
