package main

import (
	"strings"
	"testing"
	"time"
)

// TestFeed: a feed-scoped token sets a word (pool by id, since it may not
// list pools); get, health and explain show it, its load and what the
// load did; set without --up or --down is a usage error.
func TestFeed(t *testing.T) {
	t.Parallel()
	n := startNode(t, "--api-token", "bootstrap-secret")
	_, zone := n.call("POST", apiPrefix+"/zones", map[string]any{"name": "glb.example.com", "nameservers": []string{"ns1.glb.example.com"}}, "")
	_, mon := n.call("POST", apiPrefix+"/monitors", map[string]any{"type": "feed", "ttl": 600}, "")
	_, pool := n.call("POST", apiPrefix+"/pools", map[string]any{"name": "web",
		"monitors":      []map[string]any{{"monitor": mon["id"], "must_be_healthy": true}},
		"load_shedding": map[string]any{"by_load": map[string]any{"low": 0.7, "high": 0.9}},
		"origins":       []map[string]any{{"name": "a", "address": "192.0.2.1"}, {"name": "b", "address": "192.0.2.2"}}}, "")
	n.call("POST", apiPrefix+"/load_balancers", map[string]any{"zone": zone["id"], "name": "www.glb.example.com",
		"default_pools": []any{pool["id"]}, "fallback_pool": pool["id"]}, "")
	feeder := n.withToken("prometheus", "feed")
	id := pool["id"].(string)

	feeder.mustCtl(exitUsage, "feed", "set", id, "a")
	out := feeder.mustCtl(exitOK, "feed", "set", id, "a", "--up", "--load", "0.8", "--reason", "busy", "--ttl", "120")
	if !strings.Contains(out, "fed up (busy), load 0.8 through monitor "+mon["id"].(string)) {
		t.Errorf("set:\n%s", out)
	}
	out = n.mustCtl(exitOK, "feed", "get", "web", "a")
	for _, want := range []string{"api", "up", "0.8", "yes", "busy"} {
		if !strings.Contains(out, want) {
			t.Errorf("get lacks %q:\n%s", want, out)
		}
	}
	eventually(t, 10*time.Second, "health and explain show the load", func() (bool, string) {
		h := n.mustCtl(exitOK, "health", "web")
		ex := n.mustCtl(exitOK, "explain", "www.glb.example.com", "--client", "192.0.2.99")
		return strings.Contains(h, "load fed in, as steering counts it: a 0.8") && strings.Contains(ex, "(of 1, by load)"), h + ex
	})
	feeder.mustCtl(exitOK, "feed", "set", id, "b", "--down", "--reason", "maintenance")
	if code, _, errOut := feeder.ctl("feed", "get", id, "a"); code != exitFailed || !strings.Contains(errOut, `lacks the scope "read"`) {
		t.Errorf("get with a feed token: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := feeder.ctl("feed", "set", id, "zz", "--down"); code != exitFailed || !strings.Contains(errOut, "404") {
		t.Errorf("set of an unknown origin: exit %d\n%s", code, errOut)
	}
}
