package api_test

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/pools/postgres/pgtest"
	"github.com/glb-dns/glb/steering"
)

type rulesResult struct{ Result pools.SafetyRules }

// bothStores runs fn against an API with a steering snapshot and the
// bootstrap token "boot", over the embedded store and over PostgreSQL.
func bothStores(t *testing.T, fn func(t *testing.T, e *env)) {
	for _, name := range []string{"embedded", "postgres"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var e *env
			var pg pools.Store
			if name == "postgres" {
				pg, _ = pgtest.NewStore(t)
			}
			e = newEnv(t, func(o *api.Options) {
				o.Token = "boot"
				if pg != nil {
					o.Store = pg
				}
				o.Snapshot = func() (*steering.Snapshot, steering.Locator) { return compiled(t, e.store)() }
			})
			if pg != nil {
				e.store = pg
			}
			fn(t, e)
		})
	}
}

// The global rules read as zero with ETag "0" until written; a PUT needs
// admin, names every bad field, honours If-Match and is audited (the
// env's audit check holds each accepted write against the log).
func TestSafetyRulesReadWrite(t *testing.T) {
	t.Parallel()
	bothStores(t, func(t *testing.T, e *env) {
		var got rulesResult
		r := e.do("GET", "/api/v1/safety/rules", nil)
		r.json(t, &got)
		if r.status != http.StatusOK || r.header.Get("ETag") != `"0"` || got.Result != (pools.SafetyRules{}) {
			t.Fatalf("never written: %d %q %s", r.status, r.header.Get("ETag"), r.body)
		}
		writer := e.newToken("ops", "read", "write")
		body := map[string]any{"max_shifted_zones": 1, "max_shifted_pools": 2, "min_serving_load_balancers_percent": 50}
		e.do("PUT", "/api/v1/safety/rules", body, "Authorization", "Bearer "+writer).problem(t, http.StatusForbidden)
		p := e.do("PUT", "/api/v1/safety/rules", map[string]any{"max_shifted_zones": -1, "max_shifted_pools": "two",
			"min_serving_load_balancers_percent": 101, "max_zones": 1}).problem(t, http.StatusBadRequest)
		if paths := fieldPaths(p); !paths["max_shifted_pools"] || !paths["max_zones"] {
			t.Fatalf("shape errors %+v", p.Errors)
		}
		p = e.do("PUT", "/api/v1/safety/rules", map[string]any{"max_shifted_zones": -1, "min_serving_load_balancers_percent": 101}).
			problem(t, http.StatusBadRequest)
		if paths := fieldPaths(p); len(paths) != 2 || !paths["max_shifted_zones"] || !paths["min_serving_load_balancers_percent"] {
			t.Fatalf("value errors %+v", p.Errors)
		}
		e.do("PUT", "/api/v1/safety/rules", body, "If-Match", `"7"`).problem(t, http.StatusPreconditionFailed)
		r = e.do("PUT", "/api/v1/safety/rules", body, "If-Match", `"0"`)
		r.json(t, &got)
		if r.status != http.StatusOK || got.Result.MaxShiftedZones != 1 || got.Result.MaxShiftedPools != 2 ||
			got.Result.MinServingLoadBalancersPercent != 50 || r.header.Get("ETag") != `"`+itoa(got.Result.Revision)+`"` || got.Result.Revision < 1 {
			t.Fatalf("put: %d %q %s", r.status, r.header.Get("ETag"), r.body)
		}
		etag := r.header.Get("ETag")
		e.do("PUT", "/api/v1/safety/rules", body, "If-Match", `"0"`).problem(t, http.StatusPreconditionFailed)
		// What GET answered may be sent back as it is.
		var read map[string]any
		r = e.do("GET", "/api/v1/safety/rules", nil)
		r.json(t, &struct{ Result *map[string]any }{&read})
		if r.header.Get("ETag") != etag {
			t.Fatalf("GET ETag %q after PUT %q", r.header.Get("ETag"), etag)
		}
		read["max_shifted_pools"] = 0
		if r = e.do("PUT", "/api/v1/safety/rules", read, "If-Match", etag); r.status != http.StatusOK {
			t.Fatalf("put back: %d %s", r.status, r.body)
		}
		var audit struct{ Result []pools.AuditEntry }
		e.do("GET", "/api/v1/audit?kind=safety_rules", nil).json(t, &audit)
		if len(audit.Result) != 2 || audit.Result[0].Actor != pools.ActorBootstrap || audit.Result[0].ObjectID != pools.SafetyRulesID ||
			!strings.Contains(string(audit.Result[0].Before), `"max_shifted_pools":2`) {
			t.Fatalf("audit %+v", audit.Result)
		}
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// A global rule refuses a shift that breaks it with the safety problem
// naming the rule and the load balancers it concerns; nothing is stored;
// an admin overrides, the shift and its audit entry list the rule, and
// GET /safety shows it broken while the shifts are in force.
func TestSafetyRulesGlobalMaxShiftedZones(t *testing.T) {
	t.Parallel()
	bothStores(t, func(t *testing.T, e *env) {
		f := e.fixture()
		// A second pool in zone-3 keeps the load balancer serving with
		// zone-1 and zone-2 shifted: only the global rule can refuse.
		body := poolBody(f.monitor)
		body["name"] = "web-us"
		body["origins"] = []map[string]any{{"name": "d", "address": "192.0.2.20", "zone": "zone-3"}}
		second := e.create(pools.KindPool, body)["id"].(string)
		e.setDefaultPools(f.lb, f.pool, second)
		if r := e.do("PUT", "/api/v1/safety/rules", map[string]any{"max_shifted_zones": 1}); r.status != http.StatusOK {
			t.Fatalf("rules: %d %s", r.status, r.body)
		}
		zone := func(z string) map[string]any {
			return map[string]any{"target": map[string]any{"zone": z}, "reason": "bad deploy", "duration": "1h"}
		}
		if r := e.do("POST", "/api/v1/shifts", zone("zone-1")); r.status != http.StatusCreated {
			t.Fatalf("first zone: %d %s", r.status, r.body)
		}
		// The same zone again adds no zone: not refused.
		if r := e.do("POST", "/api/v1/shifts", zone("zone-1")); r.status != http.StatusCreated {
			t.Fatalf("first zone again: %d %s", r.status, r.body)
		}
		p := e.do("POST", "/api/v1/shifts", zone("zone-2")).problem(t, http.StatusConflict)
		if p.Type != "urn:glb:problem:safety-rule" || len(p.Safety) != 1 || p.Safety[0].Rule != pools.RuleGlobalMaxShiftedZones ||
			!slices.Equal(p.Safety[0].LoadBalancers, []string{f.lb}) || p.Safety[0].Serving != 2 || p.Safety[0].Minimum != 1 ||
			!strings.Contains(p.Detail, "global.max_shifted_zones") || !strings.Contains(p.Detail, f.lb) {
			t.Fatalf("refusal %+v", p)
		}
		var list struct{ Result []pools.Shift }
		e.do("GET", "/api/v1/shifts", nil).json(t, &list)
		if len(list.Result) != 2 {
			t.Fatalf("a refused shift was stored: %+v", list.Result)
		}
		var now struct{ Result []pools.ShiftHarm }
		e.do("GET", "/api/v1/safety", nil).json(t, &now)
		if len(now.Result) != 0 {
			t.Fatalf("rules broken before the override: %+v", now.Result)
		}
		over := zone("zone-2")
		over["override"] = true
		r := e.do("POST", "/api/v1/shifts", over)
		var got shiftResult
		r.json(t, &got)
		if r.status != http.StatusCreated || len(got.Result.Overridden) != 1 || got.Result.Overridden[0].Rule != pools.RuleGlobalMaxShiftedZones {
			t.Fatalf("override: %d %s", r.status, r.body)
		}
		var audit struct{ Result []pools.AuditEntry }
		e.do("GET", "/api/v1/audit?kind=shifts&id="+got.Result.ID, nil).json(t, &audit)
		if len(audit.Result) != 1 || !strings.Contains(string(audit.Result[0].After), `"override":true`) ||
			!strings.Contains(string(audit.Result[0].After), `"rule":"global.max_shifted_zones"`) {
			t.Fatalf("audit %+v", audit.Result)
		}
		e.do("GET", "/api/v1/safety", nil).json(t, &now)
		if len(now.Result) != 1 || now.Result[0].Rule != pools.RuleGlobalMaxShiftedZones || now.Result[0].Serving != 2 {
			t.Fatalf("broken now: %+v", now.Result)
		}
	})
}

// max_shifted_pools counts distinct pools across every load balancer;
// min_serving_load_balancers_percent counts the load balancers that keep
// a steering pool serving.
func TestSafetyRulesGlobalPoolsAndServingShare(t *testing.T) {
	t.Parallel()
	bothStores(t, func(t *testing.T, e *env) {
		f := e.fixture()
		second := e.anotherPool(f, "web-us")
		third := e.anotherPool(f, "web-ap")
		e.setDefaultPools(f.lb, f.pool, second, third)
		lb := lbBody(f.zone, third)
		lb["name"] = "api.glb.example.com"
		lb["safety"] = map[string]any{"min_serving_pools": 0}
		other := e.create(pools.KindLoadBalancer, lb)["id"].(string)
		if r := e.do("PUT", "/api/v1/safety/rules", map[string]any{"max_shifted_pools": 1, "min_serving_load_balancers_percent": 60}); r.status != http.StatusOK {
			t.Fatalf("rules: %d %s", r.status, r.body)
		}
		pool := func(id string, lbs ...string) map[string]any {
			return map[string]any{"target": map[string]any{"pool": id}, "load_balancers": lbs, "reason": "drain", "duration": "1h"}
		}
		if r := e.do("POST", "/api/v1/shifts", pool(f.pool, f.lb)); r.status != http.StatusCreated {
			t.Fatalf("first pool: %d %s", r.status, r.body)
		}
		p := e.do("POST", "/api/v1/shifts", pool(second, f.lb)).problem(t, http.StatusConflict)
		if len(p.Safety) != 1 || p.Safety[0].Rule != pools.RuleGlobalMaxShiftedPools || !strings.Contains(p.Detail, f.lb) {
			t.Fatalf("second pool: %+v", p)
		}
		// Taking the other load balancer's only pool leaves 1 of 2
		// serving, 50 % < 60 %: both global rules refuse it.
		p = e.do("POST", "/api/v1/shifts", pool(third, other)).problem(t, http.StatusConflict)
		var rules []string
		for _, h := range p.Safety {
			rules = append(rules, h.Rule)
		}
		slices.Sort(rules)
		if !slices.Equal(rules, []string{pools.RuleGlobalMaxShiftedPools, pools.RuleGlobalMinServingLoadBalancersPercent}) ||
			!strings.Contains(p.Detail, other) || strings.Contains(p.Detail, f.lb) {
			t.Fatalf("third pool: %+v", p)
		}
		if r := e.do("PUT", "/api/v1/safety/rules", map[string]any{"min_serving_load_balancers_percent": 50}); r.status != http.StatusOK {
			t.Fatalf("rules: %d %s", r.status, r.body)
		}
		if r := e.do("POST", "/api/v1/shifts", pool(third, other)); r.status != http.StatusCreated {
			t.Fatalf("third pool at 50 %%: %d %s", r.status, r.body)
		}
	})
}
