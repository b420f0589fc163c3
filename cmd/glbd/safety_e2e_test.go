package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/glb-dns/glb/pools"
)

// TestSafetyBrokenByHealth: a shift away from web is allowed while spare
// still serves www; when spare's origin then stops, the rule that one
// steering pool keeps serving no longer holds. Nothing refuses a health
// change, but GET /safety, explain and the console's overview say so.
func TestSafetyBrokenByHealth(t *testing.T) {
	t.Parallel()
	origins := startOrigins(t, "127.0.25.1", "127.0.25.2")
	g := startGlbd(t, "")
	zone := zoneFor(t, g)
	mon := fastMonitor(t, g, origins[0].port())
	web := g.must("POST", "/api/v1/pools", map[string]any{"name": "web", "monitor": mon,
		"origins": []map[string]any{{"name": "w", "address": origins[0].ip()}}})["id"].(string)
	spare := g.must("POST", "/api/v1/pools", map[string]any{"name": "spare", "monitor": mon,
		"origins": []map[string]any{{"name": "s", "address": origins[1].ip()}}})["id"].(string)
	lb := g.must("POST", "/api/v1/load_balancers", map[string]any{
		"zone": zone, "name": "www.glb.example.com", "default_pools": []any{web, spare}, "fallback_pool": web,
	})["id"].(string)
	eventually(t, 5*time.Second, "both pools checked healthy", func() (bool, string) {
		a, b := poolHealth(t, g, web), poolHealth(t, g, spare)
		return len(a.Origins[0].Checks) > 0 && len(b.Origins[0].Checks) > 0 && *a.Healthy && *b.Healthy, describeHealth(a) + describeHealth(b)
	})
	g.must("POST", "/api/v1/shifts", map[string]any{"target": map[string]any{"pool": web}, "reason": "bad deploy", "duration": "1h"})
	safety := func() []pools.ShiftHarm {
		var out struct{ Result []pools.ShiftHarm }
		if status := g.call("GET", "/api/v1/safety", nil, &out); status != http.StatusOK {
			t.Fatalf("GET /safety: %d", status)
		}
		return out.Result
	}
	if h := safety(); len(h) != 0 {
		t.Fatalf("safety with spare serving: %+v", h)
	}

	origins[1].stop()
	eventually(t, 10*time.Second, "the rule shown broken", func() (bool, string) {
		h := safety()
		return len(h) == 1 && h[0].Rule == pools.RuleMinServingPools && h[0].LoadBalancer == lb && h[0].Serving == 0, describeHealth(poolHealth(t, g, spare))
	})
	if ex := explain(t, g, lb, "192.0.2.1"); len(ex.Decision.Safety) != 1 || ex.Decision.Safety[0].Rule != pools.RuleMinServingPools {
		t.Errorf("explain's safety %+v", ex.Decision.Safety)
	}

	// A global rule that every load balancer keep a serving pool is
	// broken too, by the same health, and shown above the cards.
	if status := g.call("PUT", "/api/v1/safety/rules", map[string]any{"min_serving_load_balancers_percent": 100}, nil); status != http.StatusOK {
		t.Fatalf("PUT /safety/rules: %d", status)
	}
	if h := safety(); len(h) != 2 || h[1].Rule != pools.RuleGlobalMinServingLoadBalancersPercent || h[1].Serving != 0 || len(h[1].LoadBalancers) != 1 || h[1].LoadBalancers[0] != lb {
		t.Fatalf("safety with the global rule: %+v", h)
	}

	ctx := browserTab(t)
	var text, global string
	drive(t, ctx, "overview", chromedp.Navigate(g.api+"/ui/#overview"),
		waitFor(`document.querySelector('section[data-lb="www.glb.example.com"] [data-safety="min_serving_pools"]') !== null`, 15*time.Second),
		chromedp.Text(`section[data-lb="www.glb.example.com"] [data-safety="min_serving_pools"]`, &text),
		chromedp.Text(`[data-safety="global.min_serving_load_balancers_percent"]`, &global))
	if !strings.Contains(text, "no longer holds") || !strings.Contains(text, "0 steering pools serve") {
		t.Errorf("overview says %q", text)
	}
	if !strings.Contains(global, "Global safety rule global.min_serving_load_balancers_percent no longer holds: 0 of 1 load balancer keep") {
		t.Errorf("overview's global rule says %q", global)
	}
	drive(t, ctx, "explain", chromedp.Navigate(g.api+"/ui/#explain?lb="+lb+"&client=192.0.2.1"),
		waitFor(`document.getElementById('x-safety') !== null`, 15*time.Second),
		chromedp.Text(`#x-safety`, &text))
	if !strings.Contains(text, "min_serving_pools") {
		t.Errorf("explain page says %q", text)
	}
}
