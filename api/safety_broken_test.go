package api_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/glb-dns/glb/pools"
)

// TestSafetyRulesAlreadyBroken: a global rule already broken (here by an
// admin's override) refuses only a shift that adds to the breach
// (docs/api.md, "Global safety rules"): a shift that adds nothing to it,
// though it changes a load balancer's answers, is accepted, and one that
// makes it worse is refused naming the rule. One case per rule.
func TestSafetyRulesAlreadyBroken(t *testing.T) {
	t.Parallel()
	shift := func(target, id string, lbs ...string) map[string]any {
		return map[string]any{"target": map[string]any{target: id}, "load_balancers": lbs, "reason": "drain", "duration": "1h"}
	}
	overridden := func(body map[string]any) map[string]any { body["override"] = true; return body }
	// setup makes www over pools a and b (a in zone-1 and zone-2, b in
	// zone-3 and zone-4) and api over pools a and c (c like a), neither
	// held by min_serving_pools, and sets rules; it returns the pool and
	// load balancer ids.
	setup := func(e *env, rules map[string]any) (a, b, c, www, apiLB string) {
		f := e.fixture()
		a = f.pool
		body := poolBody(f.monitor)
		body["name"] = "web-us"
		body["origins"] = []map[string]any{{"name": "d", "address": "192.0.2.20", "zone": "zone-3"}, {"name": "e", "address": "192.0.2.21", "zone": "zone-4"}}
		b = e.create(pools.KindPool, body)["id"].(string)
		c = e.anotherPool(f, "web-ap")
		www = f.lb
		e.setDefaultPools(www, a, b)
		if r := e.do("PATCH", "/api/v1/load_balancers/"+www, map[string]any{"safety": map[string]any{"min_serving_pools": 0}}); r.status != http.StatusOK {
			t.Fatalf("www safety: %d %s", r.status, r.body)
		}
		lb := lbBody(f.zone, a)
		lb["name"] = "api.glb.example.com"
		lb["default_pools"] = []string{a, c}
		lb["safety"] = map[string]any{"min_serving_pools": 0}
		apiLB = e.create(pools.KindLoadBalancer, lb)["id"].(string)
		if r := e.do("PUT", "/api/v1/safety/rules", rules); r.status != http.StatusOK {
			t.Fatalf("rules: %d %s", r.status, r.body)
		}
		return a, b, c, www, apiLB
	}
	accepted := func(t *testing.T, e *env, what string, body map[string]any) {
		t.Helper()
		if r := e.do("POST", "/api/v1/shifts", body); r.status != http.StatusCreated {
			t.Fatalf("%s: %d %s, want 201", what, r.status, r.body)
		}
	}
	refused := func(t *testing.T, e *env, what, rule string, body map[string]any) {
		t.Helper()
		p := e.do("POST", "/api/v1/shifts", body).problem(t, http.StatusConflict)
		var rules []string
		for _, h := range p.Safety {
			rules = append(rules, h.Rule)
		}
		if !slices.Contains(rules, rule) {
			t.Fatalf("%s: refused by %v, want %s among them", what, rules, rule)
		}
	}
	// broken checks that GET /safety lists rule as broken now.
	broken := func(t *testing.T, e *env, rule string) {
		t.Helper()
		var now struct{ Result []pools.ShiftHarm }
		e.do("GET", "/api/v1/safety", nil).json(t, &now)
		if !slices.ContainsFunc(now.Result, func(h pools.ShiftHarm) bool { return h.Rule == rule }) {
			t.Fatalf("%s does not show as broken: %+v", rule, now.Result)
		}
	}

	t.Run("max_shifted_zones", func(t *testing.T) {
		bothStores(t, func(t *testing.T, e *env) {
			_, _, c, www, apiLB := setup(e, map[string]any{"max_shifted_zones": 1})
			accepted(t, e, "zone-1 on api", shift("zone", "zone-1", apiLB))
			refused(t, e, "zone-2", pools.RuleGlobalMaxShiftedZones, shift("zone", "zone-2"))
			accepted(t, e, "zone-2 overridden", overridden(shift("zone", "zone-2", apiLB)))
			broken(t, e, pools.RuleGlobalMaxShiftedZones)
			// zone-1 on www changes www's answers but shifts no zone not
			// shifted already: the breach stays at two zones.
			accepted(t, e, "zone-1 on www, no zone more", shift("zone", "zone-1", www))
			// A pool shift adds no zone either.
			accepted(t, e, "a pool shift", shift("pool", c, apiLB))
			refused(t, e, "zone-4, a third zone", pools.RuleGlobalMaxShiftedZones, shift("zone", "zone-4", www))
		})
	})
	t.Run("max_shifted_pools", func(t *testing.T) {
		bothStores(t, func(t *testing.T, e *env) {
			a, b, c, www, apiLB := setup(e, map[string]any{"max_shifted_pools": 1})
			accepted(t, e, "pool a on api", shift("pool", a, apiLB))
			refused(t, e, "pool b", pools.RuleGlobalMaxShiftedPools, shift("pool", b, www))
			accepted(t, e, "pool b overridden", overridden(shift("pool", b, www)))
			broken(t, e, pools.RuleGlobalMaxShiftedPools)
			// Pool a on www changes www's answers but shifts no pool not
			// shifted already.
			accepted(t, e, "pool a on www, no pool more", shift("pool", a, www))
			// A zone shift adds no pool either.
			accepted(t, e, "a zone shift", shift("zone", "zone-2", apiLB))
			refused(t, e, "pool c, a third pool", pools.RuleGlobalMaxShiftedPools, shift("pool", c, apiLB))
		})
	})
	t.Run("min_serving_load_balancers_percent", func(t *testing.T) {
		bothStores(t, func(t *testing.T, e *env) {
			a, b, c, www, apiLB := setup(e, map[string]any{"min_serving_load_balancers_percent": 60})
			accepted(t, e, "pool a on www, www still serving", shift("pool", a, www))
			refused(t, e, "pool b on www, www without a serving pool", pools.RuleGlobalMinServingLoadBalancersPercent, shift("pool", b, www))
			accepted(t, e, "pool b on www overridden", overridden(shift("pool", b, www)))
			broken(t, e, pools.RuleGlobalMinServingLoadBalancersPercent)
			// Pool a on api changes api's answers, but api keeps c
			// serving: one of two load balancers serves, as before.
			accepted(t, e, "pool a on api, api still serving", shift("pool", a, apiLB))
			refused(t, e, "pool c on api, none serving", pools.RuleGlobalMinServingLoadBalancersPercent, shift("pool", c, apiLB))
		})
	})
}
