package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/pools"
)

// zoneWorld is two zones, each with a load balancer: pool own and
// monitor ownMon serve only zone a's; pool other and monitor otherMon
// only zone b's; pool shared (checked by monitor sharedMon) serves both.
type zoneWorld struct {
	own, other, shared, ownMon, otherMon, sharedMon string
}

func newZoneWorld(e *env) zoneWorld {
	var w zoneWorld
	for _, z := range []string{"a", "b"} {
		e.create(pools.KindZone, map[string]any{"id": "zone-" + z, "name": z + ".example.com", "nameservers": []string{"ns1." + z + ".example.com"}})
	}
	w.ownMon = e.create(pools.KindMonitor, monitorBody())["id"].(string)
	w.otherMon = e.create(pools.KindMonitor, monitorBody())["id"].(string)
	w.sharedMon = e.create(pools.KindMonitor, monitorBody())["id"].(string)
	pool := func(id, mon string) string {
		b := poolBody(mon)
		b["id"] = id
		return e.create(pools.KindPool, b)["id"].(string)
	}
	w.own, w.other, w.shared = pool("own", w.ownMon), pool("other", w.otherMon), pool("shared", w.sharedMon)
	e.create(pools.KindLoadBalancer, map[string]any{"id": "lb-a", "zone": "zone-a", "name": "www.a.example.com",
		"default_pools": []string{w.own, w.shared}, "fallback_pool": w.own})
	e.create(pools.KindLoadBalancer, map[string]any{"id": "lb-b", "zone": "zone-b", "name": "www.b.example.com",
		"default_pools": []string{w.other, w.shared}, "fallback_pool": w.other})
	return w
}

func ids(t *testing.T, r response) []string {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("list: %d %s", r.status, r.body)
	}
	var l listPage[struct {
		ID string `json:"id"`
	}]
	r.json(t, &l)
	var out []string
	for _, o := range l.Result {
		out = append(out, o.ID)
	}
	slices.Sort(out)
	if l.ResultInfo.TotalCount != len(out) {
		t.Errorf("total_count %d for %d items", l.ResultInfo.TotalCount, len(out))
	}
	return out
}

// TestZoneScopedToken: a token scoped to zone a reads and writes zone a,
// its load balancer and the pools and monitors only it uses; reads but
// does not write what zone b's load balancer uses too; sees nothing of
// zone b's own; makes, uses and removes pools of its own as ExternalDNS
// does; and is refused everything else, tokens included.
func TestZoneScopedToken(t *testing.T) {
	e := parallelEnv(t, func(o *api.Options) { o.Token = "bootstrap-secret" })
	w := newZoneWorld(e)
	r := e.do("POST", "/api/v1/tokens", map[string]any{"name": "edns", "scopes": []string{"write"}, "zones": []string{"zone-a"}})
	if r.status != http.StatusCreated {
		t.Fatalf("token: %d %s", r.status, r.body)
	}
	var made struct{ Result api.NewToken }
	r.json(t, &made)
	if !slices.Equal(made.Result.Zones, []string{"zone-a"}) {
		t.Fatalf("token zones %v", made.Result.Zones)
	}
	tok := bearer(made.Result.Secret)
	e.actor(made.Result.Secret, "edns")
	as := func(method, path string, body any) response { return e.do(method, path, body, tok...) }
	outside := func(r response, what, detail string) {
		t.Helper()
		p := r.problem(t, http.StatusForbidden)
		if p.Type != "urn:glb:problem:outside-zones" || !strings.Contains(p.Detail, "zone-a") || !strings.Contains(p.Detail, detail) {
			t.Errorf("%s: %+v, want outside-zones naming %q", what, p, detail)
		}
	}

	// Lists hold what the token may read, no more.
	for kind, want := range map[string][]string{
		"zones": {"zone-a"}, "load_balancers": {"lb-a"}, "pools": {"own", "shared"}, "monitors": {w.ownMon, w.sharedMon},
	} {
		slices.Sort(want)
		if got := ids(t, as("GET", "/api/v1/"+kind+"?per_page=100", nil)); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", kind, got, want)
		}
	}
	// Another zone's objects: 403, read or write.
	for _, path := range []string{"/api/v1/zones/zone-b", "/api/v1/load_balancers/lb-b", "/api/v1/pools/other",
		"/api/v1/monitors/" + w.otherMon, "/api/v1/pools/other/health", "/api/v1/load_balancers/lb-b/versions"} {
		outside(as("GET", path, nil), "GET "+path, "not one of theirs")
	}
	outside(as("PATCH", "/api/v1/load_balancers/lb-b", map[string]any{"ttl": 60}), "patch lb-b", "lb-b")
	outside(as("DELETE", "/api/v1/pools/other", nil), "delete pool other", "other")
	// Shared: read-only.
	if r := as("GET", "/api/v1/pools/shared", nil); r.status != http.StatusOK {
		t.Errorf("read the shared pool: %d %s", r.status, r.body)
	}
	outside(as("PATCH", "/api/v1/pools/shared", map[string]any{"description": "mine"}), "patch shared", "zone-b")
	outside(as("PATCH", "/api/v1/monitors/"+w.sharedMon, map[string]any{"interval": 60}), "patch shared monitor", "read-only")
	// Its own: read and write.
	for _, c := range []struct {
		path string
		body map[string]any
	}{
		{"/api/v1/zones/zone-a", map[string]any{"records": []map[string]any{{"name": "txt.a.example.com", "type": "TXT", "content": "x"}}}},
		{"/api/v1/load_balancers/lb-a", map[string]any{"ttl": 60}},
		{"/api/v1/pools/own", map[string]any{"description": "mine"}},
		{"/api/v1/monitors/" + w.ownMon, map[string]any{"interval": 60}},
	} {
		if r := as("PATCH", c.path, c.body); r.status != http.StatusOK {
			t.Errorf("PATCH %s: %d %s", c.path, r.status, r.body)
		}
	}
	// A load balancer stays in its zones and uses no other zone's pool.
	outside(as("PATCH", "/api/v1/load_balancers/lb-a", map[string]any{"zone": "zone-b", "name": "x.b.example.com"}), "move lb-a", "zone-b")
	outside(as("PATCH", "/api/v1/load_balancers/lb-a", map[string]any{"default_pools": []string{"own", "other"}}), "use pool other", "other")
	outside(as("POST", "/api/v1/load_balancers", map[string]any{"zone": "zone-b", "name": "new.b.example.com", "default_pools": []string{"own"}, "fallback_pool": "own"}), "create in zone-b", "zone-b")
	outside(as("POST", "/api/v1/zones", map[string]any{"id": "zone-c", "name": "c.example.com", "nameservers": []string{"ns1.c.example.com"}}), "create zone-c", "zone-c")
	// A preview stores nothing but shows every pool it would use.
	outside(as("POST", "/api/v1/load_balancers/lb-a/preview", map[string]any{"edits": map[string]any{
		"load_balancer": map[string]any{"default_pools": []string{"own", "other"}}}}), "preview with pool other", "other")
	outside(as("POST", "/api/v1/load_balancers/lb-a/preview", map[string]any{"edits": map[string]any{
		"pools": map[string]any{"other": map[string]any{"enabled": false}}}}), "preview an edit of pool other", "other")
	b := poolBody(w.otherMon)
	b["id"] = "sneaky"
	outside(as("POST", "/api/v1/pools", b), "a pool checked by zone b's monitor", w.otherMon)

	// ExternalDNS's life cycle: a pool, a load balancer using it, and
	// both removed again.
	b = poolBody(w.ownMon)
	b["id"] = "edns-pool"
	if r := as("POST", "/api/v1/pools", b); r.status != http.StatusCreated {
		t.Fatalf("create a pool: %d %s", r.status, r.body)
	}
	if r := as("POST", "/api/v1/load_balancers", map[string]any{"id": "edns-lb", "zone": "zone-a", "name": "app.a.example.com",
		"default_pools": []string{"edns-pool"}, "fallback_pool": "edns-pool"}); r.status != http.StatusCreated {
		t.Fatalf("create a load balancer: %d %s", r.status, r.body)
	}
	if got := ids(t, as("GET", "/api/v1/load_balancers", nil)); !slices.Equal(got, []string{"edns-lb", "lb-a"}) {
		t.Errorf("load balancers now %v", got)
	}
	for _, path := range []string{"/api/v1/load_balancers/edns-lb", "/api/v1/pools/edns-pool"} {
		if r := as("DELETE", path, nil); r.status != http.StatusNoContent {
			t.Errorf("DELETE %s: %d %s", path, r.status, r.body)
		}
	}
	if r := as("GET", "/api/v1/pools/edns-pool", nil); r.status != http.StatusNotFound {
		t.Errorf("a missing pool: %d, want 404", r.status)
	}

	// Everything else.
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/v1/tokens"}, {"GET", "/api/v1/audit"}, {"GET", "/api/v1/networks"}, {"GET", "/api/v1/rollouts"},
		{"GET", "/api/v1/regions"}, {"GET", "/api/v1/shifts"}, {"POST", "/api/v1/load_balancers/lb-a/versions/1/rollback"},
	} {
		if r := as(c.method, c.path, nil); r.status != http.StatusForbidden {
			t.Errorf("%s %s: %d, want 403", c.method, c.path, r.status)
		}
	}
	if r := as("POST", "/api/v1/tokens", map[string]any{"name": "more", "scopes": []string{"admin"}}); r.status != http.StatusForbidden {
		t.Errorf("create a token: %d", r.status)
	}
}

// TestZoneScopedTokenValidation: the zones must exist, and only a read
// or write token may be scoped; a read token scoped to a zone reads it
// and writes nothing.
func TestZoneScopedTokenValidation(t *testing.T) {
	e := parallelEnv(t, func(o *api.Options) { o.Token = "bootstrap-secret" })
	newZoneWorld(e)
	p := e.do("POST", "/api/v1/tokens", map[string]any{"name": "x", "scopes": []string{"write"}, "zones": []string{"zone-a", "nope"}}).
		problem(t, http.StatusBadRequest)
	if len(p.Errors) != 1 || p.Errors[0].Path != "zones[1]" {
		t.Errorf("unknown zone: %+v", p.Errors)
	}
	for _, s := range []string{"integrations", "admin"} {
		p := e.do("POST", "/api/v1/tokens", map[string]any{"name": "x", "scopes": []string{s}, "zones": []string{"zone-a"}}).
			problem(t, http.StatusBadRequest)
		if !fieldPaths(p)["scopes"] {
			t.Errorf("%s scoped to a zone: %+v", s, p.Errors)
		}
	}
	r := e.do("POST", "/api/v1/tokens", map[string]any{"name": "viewer", "scopes": []string{"read"}, "zones": []string{"zone-a"}})
	var made struct{ Result api.NewToken }
	r.json(t, &made)
	e.actor(made.Result.Secret, "viewer")
	if r := e.do("GET", "/api/v1/load_balancers/lb-a", nil, bearer(made.Result.Secret)...); r.status != http.StatusOK {
		t.Errorf("read: %d", r.status)
	}
	if p := e.do("PATCH", "/api/v1/load_balancers/lb-a", map[string]any{"ttl": 60}, bearer(made.Result.Secret)...).problem(t, http.StatusForbidden); p.MissingScope != "write" {
		t.Errorf("write with a read token: %+v", p)
	}
	var tok struct{ Result pools.Token }
	e.do("GET", "/api/v1/tokens/viewer", nil).json(t, &tok)
	if !slices.Equal(tok.Result.Zones, []string{"zone-a"}) {
		t.Errorf("stored zones %v", tok.Result.Zones)
	}
}
