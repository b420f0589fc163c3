package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/pools"
)

type versionList struct {
	Result     []pools.Version
	ResultInfo struct {
		TotalCount int `json:"total_count"`
		TotalPages int `json:"total_pages"`
	} `json:"result_info"`
}

func (e *env) versions(lb, query string) versionList {
	e.t.Helper()
	r := e.do("GET", "/api/v1/load_balancers/"+lb+"/versions"+query, nil)
	if r.status != http.StatusOK {
		e.t.Fatalf("versions%s: %d %s", query, r.status, r.body)
	}
	var out versionList
	r.json(e.t, &out)
	return out
}

// numbers are the versions' numbers, in the order listed.
func numbers(vs []pools.Version) []int {
	out := make([]int, len(vs))
	for i := range vs {
		out[i] = vs[i].Version
	}
	return out
}

func TestVersionsListGetAndRollback(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	// Version 1 is the load balancer's creation; then the pool (2), the
	// monitor (3), the load balancer (4); the zone and a network make no
	// version; the pool again (5).
	f := e.fixture()
	for _, w := range []struct {
		path  string
		patch map[string]any
	}{
		{"/pools/" + f.pool, map[string]any{"minimum_origins": 2}},
		{"/monitors/" + f.monitor, map[string]any{"path": "/v3"}},
		{"/load_balancers/" + f.lb, map[string]any{"ttl": 60}},
		{"/zones/" + f.zone, map[string]any{"ttl": 600}},
		{"/networks/" + f.network, map[string]any{"region": "EEU"}},
		{"/pools/" + f.pool, map[string]any{"origins": []map[string]any{{"name": "a", "address": "192.0.2.10"}, {"name": "b", "address": "192.0.2.11"}}}},
	} {
		if r := e.do("PATCH", "/api/v1"+w.path, w.patch); r.status != http.StatusOK {
			t.Fatalf("PATCH %s: %d %s", w.path, r.status, r.body)
		}
	}

	all := e.versions(f.lb, "")
	if got := numbers(all.Result); !slices.Equal(got, []int{5, 4, 3, 2, 1}) || all.ResultInfo.TotalCount != 5 {
		t.Fatalf("versions %v (total %d), want 5 to 1", got, all.ResultInfo.TotalCount)
	}
	if c := all.Result[2].Changes; len(c) != 1 || c[0].Kind != pools.KindMonitor || c[0].ID != f.monitor || c[0].Action != "update" {
		t.Errorf("version 3 changes %+v, want the monitor's update", c)
	}
	// Filters and pages, like the audit log's; the numbers stay.
	if got := numbers(e.versions(f.lb, "?kind=pools").Result); !slices.Equal(got, []int{5, 2}) {
		t.Errorf("kind=pools: %v, want [5 2]", got)
	}
	if got := numbers(e.versions(f.lb, "?id="+f.monitor).Result); !slices.Equal(got, []int{3}) {
		t.Errorf("id=monitor: %v, want [3]", got)
	}
	page := e.versions(f.lb, "?per_page=2&page=2")
	if got := numbers(page.Result); !slices.Equal(got, []int{3, 2}) || page.ResultInfo.TotalPages != 3 {
		t.Errorf("page 2 of 2: %v, %+v", got, page.ResultInfo)
	}
	if got := e.versions(f.lb, "?actor=someone-else").Result; len(got) != 0 {
		t.Errorf("actor=someone-else: %v", numbers(got))
	}
	p := e.do("GET", "/api/v1/load_balancers/"+f.lb+"/versions?kind=zones&since=yesterday&per_page=0", nil).problem(t, http.StatusBadRequest)
	if msg := message(t, p, "kind"); !strings.Contains(msg, `"zones"`) || !strings.Contains(msg, "load_balancers, pools, monitors") {
		t.Errorf("kind=zones: %q", msg)
	}
	message(t, p, "since")
	message(t, p, "per_page")
	e.do("GET", "/api/v1/load_balancers/no-such-lb/versions", nil).problem(t, http.StatusNotFound)
	e.do("GET", "/api/v1/load_balancers/"+f.lb+"/versions/6", nil).problem(t, http.StatusNotFound)
	message(t, e.do("GET", "/api/v1/load_balancers/"+f.lb+"/versions/0", nil).problem(t, http.StatusBadRequest), "n")

	// Version 1: the objects as first made.
	r := e.do("GET", "/api/v1/load_balancers/"+f.lb+"/versions/1", nil)
	var v1 struct{ Result pools.VersionObjects }
	r.json(t, &v1)
	if r.status != http.StatusOK || v1.Result.LoadBalancer == nil || len(v1.Result.Pools) != 1 || len(v1.Result.Monitors) != 1 {
		t.Fatalf("version 1: %d %s", r.status, r.body)
	}
	if v1.Result.Pools[0].MinimumOrigins != 1 || len(v1.Result.Pools[0].Origins) != 3 || v1.Result.Monitors[0].Path != "/healthz" || v1.Result.LoadBalancer.TTL != 30 {
		t.Errorf("version 1 objects differ from the first ones: %s", r.body)
	}
	tag := r.header.Get("ETag")
	if tag != `"`+itoa(v1.Result.Revision)+`"` {
		t.Errorf("ETag %q, want the revision %d", tag, v1.Result.Revision)
	}
	if r := e.do("GET", "/api/v1/load_balancers/"+f.lb+"/versions/1", nil, "If-None-Match", tag); r.status != http.StatusNotModified {
		t.Errorf("If-None-Match: %d", r.status)
	}

	// A rollback naming another revision than version 1's is refused.
	e.do("POST", "/api/v1/load_balancers/"+f.lb+"/versions/1/rollback", nil, "If-Match", `"999"`).problem(t, http.StatusPreconditionFailed)
	r = e.do("POST", "/api/v1/load_balancers/"+f.lb+"/versions/1/rollback", nil, "If-Match", tag)
	var rb struct{ Result api.RollbackResult }
	r.json(t, &rb)
	if r.status != http.StatusOK || rb.Result.RollbackTo != 1 || rb.Result.Version != 6 || len(rb.Result.Changes) != 3 {
		t.Fatalf("rollback: %d %s", r.status, r.body)
	}
	for _, o := range []pools.Object{v1.Result.LoadBalancer, &v1.Result.Pools[0], &v1.Result.Monitors[0]} {
		path := "/api/v1/" + string(o.Kind()) + "/" + o.ObjectMeta().ID
		got := pools.New(o.Kind())
		e.do("GET", path, nil).json(t, &struct{ Result pools.Object }{got})
		if same, err := pools.SameContent(got, o); err != nil || !same {
			t.Errorf("%s after the rollback: %+v, want %+v (%v)", path, got, o, err)
		}
	}
	newest := e.versions(f.lb, "?per_page=1").Result[0]
	if newest.Version != 6 || newest.RollbackTo != 1 || newest.Actor != pools.ActorAnonymous || newest.Method != "POST" {
		t.Errorf("version 6: %+v, want a rollback to 1 by anonymous", newest)
	}
	// Everything stands as at version 1 again: nothing to write.
	r = e.do("POST", "/api/v1/load_balancers/"+f.lb+"/versions/1/rollback", nil)
	r.json(t, &rb)
	if r.status != http.StatusOK || len(rb.Result.Changes) != 0 || rb.Result.Version != 6 {
		t.Errorf("second rollback: %d %s", r.status, r.body)
	}
}

// A rollback is refused as any write would be, and writes nothing.
func TestRollbackValidatesAndNeedsWrite(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *api.Options) { o.Token = "bootstrap-secret" })
	f := e.fixture()
	read := e.newToken("dashboard", "read")
	e.do("PATCH", "/api/v1/load_balancers/"+f.lb, map[string]any{"name": "web.glb.example.com"})
	lb := lbBody(f.zone, f.pool)
	e.create(pools.KindLoadBalancer, lb) // takes the first one's old name
	path := "/api/v1/load_balancers/" + f.lb + "/versions/1/rollback"
	if p := e.do("POST", path, nil, bearer(read)...).problem(t, http.StatusForbidden); p.MissingScope != "write" {
		t.Errorf("read token: %+v", p)
	}
	p := e.do("POST", path, nil).problem(t, http.StatusBadRequest)
	if msg := message(t, p, "load_balancers/"+f.lb+".name"); !strings.Contains(msg, "already used") {
		t.Errorf("name taken: %q", msg)
	}
	if got := e.versions(f.lb, "").ResultInfo.TotalCount; got != 2 {
		t.Errorf("%d versions after a refused rollback, want 2", got)
	}
}
