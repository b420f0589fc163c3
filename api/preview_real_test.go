package api_test

import (
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/glb-dns/glb/analytics"
	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/pools"
)

// TestPreviewReal: the real-traffic preview replays the last hour of the
// load balancer's sampled A queries, merged across nodes, each subnet
// weighted by its queries, and says which share of them an edit moves
// from pool to pool; asking it with clients, or for a sample nobody
// knows, is a 400, and with nothing sampled a 409.
func TestPreviewReal(t *testing.T) {
	t.Parallel()
	e := previewEnv(t, nil)
	f := e.fixture()
	us := poolBody(f.monitor)
	us["name"] = "web-us"
	usID := e.create(pools.KindPool, us)["id"].(string)
	body := lbBody(f.zone, f.pool)
	body["name"], body["country_pools"] = "shop.glb.example.com", map[string]any{"DE": []string{usID}}
	lb := e.create(pools.KindLoadBalancer, body)["id"].(string)
	path := "/api/v1/load_balancers/" + lb + "/preview"

	e.do("POST", path, map[string]any{"sample": "real"}).problem(t, http.StatusConflict)
	minute := time.Now().Truncate(time.Minute)
	de, unknown := netip.MustParsePrefix("10.1.2.0/24"), netip.MustParsePrefix("198.51.100.0/24")
	key := analytics.LBKey(lb)
	for node, rows := range map[string][]pools.QuerySample{
		"node-a": {{Minute: minute, LB: key, Subnet: de, Type: 1, Count: 20}, {Minute: minute, LB: key, Subnet: unknown, Type: 1, Count: 10},
			{Minute: minute, LB: key, Subnet: unknown, Type: 28, Count: 500}},
		"node-b": {{Minute: minute, LB: key, Subnet: de, Type: 1, Count: 10}, {Minute: minute.Add(-2 * time.Hour), LB: key, Subnet: unknown, Type: 1, Count: 900},
			{Minute: minute, LB: analytics.LBKey(f.lb), Subnet: unknown, Type: 1, Count: 900}},
	} {
		if err := e.store.AddQuerySamples(t.Context(), node, rows); err != nil {
			t.Fatal(err)
		}
	}
	var got struct{ Result api.Preview }
	r := e.do("POST", path, map[string]any{"sample": "real", "edits": map[string]any{"pools": map[string]any{usID: map[string]any{"enabled": false}}}})
	if r.status != http.StatusOK {
		t.Fatalf("real preview: %d %s", r.status, r.body)
	}
	r.json(t, &got)
	p := got.Result
	// 30 queries from DE (web-us), 10 from nowhere (web-eu, the default).
	if s := p.Sample; s == nil || s.Queries != 40 || s.Subnets != 2 || s.Left != 0 || s.Source != "real" {
		t.Fatalf("sample %+v", p.Sample)
	}
	if now := p.Now.ByName(); !near(map[string]float64{"web-us": now["web-us"], "web-eu": now["web-eu"]}, map[string]float64{"web-us": 0.75, "web-eu": 0.25}) {
		t.Errorf("now %v, want web-us 0.75, web-eu 0.25", now)
	}
	if len(p.Moves) != 1 || p.Moves[0].From != usID || p.Moves[0].To != f.pool || p.Moves[0].Share < 0.7499 || p.Moves[0].Share > 0.7501 ||
		p.Summary != "this edit moves 75 % of real answers from pool web-us to pool web-eu" {
		t.Errorf("moves %+v, summary %q", p.Moves, p.Summary)
	}
	for _, c := range []struct {
		body map[string]any
		path string
	}{
		{map[string]any{"sample": "real", "clients": []map[string]any{{"region": "WEU"}}}, "clients"},
		{map[string]any{"sample": "everyone"}, "sample"},
	} {
		if p := e.do("POST", path, c.body).problem(t, http.StatusBadRequest); !fieldPaths(p)[c.path] {
			t.Errorf("%v: %+v, want an error at %s", c.body, p.Errors, c.path)
		}
	}
}
