package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestExplainSaysWhatItIgnored: a geo load balancer made with the
// defaults uses the ECS subnet (prefer_ecs auto follows the policy) and
// ignores nothing; set to proximity, explain says the subnet was not used
// and which setting decided, and that the resolver's address is placed by
// nothing.
func TestExplainSaysWhatItIgnored(t *testing.T) {
	g := startParallel(t)
	zone := zoneFor(t, g)
	eu := g.must("POST", "/api/v1/pools", map[string]any{"name": "eu", "origins": []map[string]any{{"name": "a", "address": "192.0.2.1"}}})["id"].(string)
	us := g.must("POST", "/api/v1/pools", map[string]any{"name": "us", "origins": []map[string]any{{"name": "b", "address": "192.0.2.2"}}})["id"].(string)
	g.must("POST", "/api/v1/networks", map[string]any{"cidr": "203.0.113.0/24", "country": "GB", "region": "WEU"})
	created := g.must("POST", "/api/v1/load_balancers", map[string]any{"zone": zone, "name": "geo.glb.example.com",
		"country_pools": map[string]any{"GB": []string{eu}}, "default_pools": []string{us}, "fallback_pool": us})
	lb := created["id"].(string)
	if got := created["location_strategy"].(map[string]any)["prefer_ecs"]; got != "auto" {
		t.Errorf("a new load balancer's prefer_ecs is %v, want auto", got)
	}
	type ignored struct{ What, Setting, Reason string }
	var out struct {
		Result struct {
			LocatedBy string    `json:"located_by"`
			Ignored   []ignored `json:"ignored"`
			Decision  struct {
				Pool struct{ Name string } `json:"pool"`
			} `json:"decision"`
		} `json:"result"`
	}
	explain := func() (bool, string) {
		out.Result.Ignored = nil
		status := g.call("GET", "/api/v1/load_balancers/"+lb+"/explain?client=198.51.100.7&ecs=203.0.113.0/24", nil, &out)
		return status == 200, fmt.Sprintf("%d %+v", status, out.Result)
	}
	eventually(t, 5*time.Second, "the ECS subnet locates the client", func() (bool, string) {
		ok, state := explain()
		return ok && out.Result.LocatedBy == "203.0.113.0/24", state
	})
	if r := out.Result; r.Decision.Pool.Name != "eu" || len(r.Ignored) != 0 {
		t.Errorf("under the default prefer_ecs: %+v; want pool eu and nothing ignored", r)
	}

	g.must("PATCH", "/api/v1/load_balancers/"+lb, map[string]any{"location_strategy": map[string]any{"prefer_ecs": "proximity"}})
	eventually(t, 5*time.Second, "the resolver locates the client", func() (bool, string) {
		ok, state := explain()
		return ok && out.Result.LocatedBy == "198.51.100.7/32", state
	})
	r := out.Result
	if r.Decision.Pool.Name != "us" || len(r.Ignored) != 2 {
		t.Fatalf("with prefer_ecs proximity: %+v; want pool us, two things ignored", r)
	}
	if e := r.Ignored[0]; e.What != "ecs" || e.Setting != "location_strategy.prefer_ecs" ||
		!strings.Contains(e.Reason, "203.0.113.0/24 was not used") || !strings.Contains(e.Reason, "proximity, which uses ECS only with proximity steering") {
		t.Errorf("the ignored ECS reads %+v", e)
	}
	if e := r.Ignored[1]; e.What != "location" || !strings.Contains(e.Reason, "198.51.100.7/32") || !strings.Contains(e.Reason, "no GeoIP database") {
		t.Errorf("the location miss reads %+v", e)
	}
}
