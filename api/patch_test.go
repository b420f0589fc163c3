package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/glb-dns/glb/pools"
)

func TestMergePatch(t *testing.T) {
	e, f := parallelFixture(t)
	path := "/api/v1/pools/" + f.pool
	mp := []string{"Content-Type", "application/merge-patch+json"}

	// null removes a member, so the field takes its default: no
	// coordinates, no monitor. Nested objects merge; arrays replace.
	r := e.do("PATCH", path, `{"latitude": null, "longitude": null, "monitor": null,
		"description": "frankfurt", "origin_steering": {"policy": "hash"},
		"origins": [{"name": "only", "address": "origin.example.net"}]}`, mp...)
	if r.status != http.StatusOK {
		t.Fatalf("PATCH: %d %s", r.status, r.body)
	}
	o, err := e.store.Get(t.Context(), pools.KindPool, f.pool)
	if err != nil {
		t.Fatal(err)
	}
	p := o.(*pools.Pool)
	if p.Latitude != nil || p.Longitude != nil || p.Monitor != "" || p.Description != "frankfurt" ||
		p.OriginSteering.Policy != pools.OriginHash || p.Name != "web-eu" || p.MinimumOrigins != 1 {
		t.Fatalf("patched pool %+v", p)
	}
	if len(p.Origins) != 1 || p.Origins[0].Weight != 1 || !p.Origins[0].Enabled {
		t.Fatalf("origins not replaced with defaults applied: %+v", p.Origins)
	}

	// null on a field with a default resets it to the default.
	lb := "/api/v1/load_balancers/" + f.lb
	e.do("PATCH", lb, `{"ttl": 300}`, mp...)
	if r := e.do("PATCH", lb, `{"ttl": null}`, mp...); r.status != http.StatusOK {
		t.Fatalf("PATCH ttl null: %d %s", r.status, r.body)
	}
	o, _ = e.store.Get(t.Context(), pools.KindLoadBalancer, f.lb)
	if ttl := o.(*pools.LoadBalancer).TTL; ttl != 30 {
		t.Fatalf("ttl %d after null, want the default 30", ttl)
	}

	// application/json is accepted as a merge patch too.
	if r := e.do("PATCH", lb, `{"zonal_affinity": {"spillover": "ZONAL_AFFINITY_SPILL_CROSS_ZONE", "spillover_ratio": 0.8}}`); r.status != http.StatusOK {
		t.Fatalf("PATCH as application/json: %d %s", r.status, r.body)
	}

	// A patch whose result is invalid is refused with the merged
	// document's field errors, and nothing changes.
	before, _ := e.store.Get(t.Context(), pools.KindLoadBalancer, f.lb)
	pr := e.do("PATCH", lb, `{"ttl": 0, "zonal_affinity": {"spillover_ratio": 2}, "extra": 1}`, mp...).problem(t, http.StatusBadRequest)
	if !fieldPaths(pr)["extra"] {
		t.Fatalf("unknown field in a patch not named: %v", pr.Errors)
	}
	pr = e.do("PATCH", lb, `{"ttl": 0, "zonal_affinity": {"spillover_ratio": 2}}`, mp...).problem(t, http.StatusBadRequest)
	if got := fieldPaths(pr); !got["ttl"] || !got["zonal_affinity.spillover_ratio"] {
		t.Fatalf("errors %v", pr.Errors)
	}
	after, _ := e.store.Get(t.Context(), pools.KindLoadBalancer, f.lb)
	if after.ObjectMeta().Revision != before.ObjectMeta().Revision {
		t.Fatalf("revision moved from %d to %d on a refused patch", before.ObjectMeta().Revision, after.ObjectMeta().Revision)
	}
	e.do("PATCH", lb, `[1, 2]`, mp...).problem(t, http.StatusBadRequest)
}

func TestPagination(t *testing.T) {
	e := parallelEnv(t, nil)
	var ids []string
	for i := range 5 {
		ids = append(ids, e.create(pools.KindNetwork, networkBody(fmt.Sprintf("10.0.%d.0/24", i)))["id"].(string))
	}
	var seen []string
	for n, want := range []int{2, 2, 1, 0} {
		var p listPage[map[string]any]
		r := e.do("GET", fmt.Sprintf("/api/v1/networks?per_page=2&page=%d", n+1), nil)
		r.json(t, &p)
		ri := p.ResultInfo
		if r.status != http.StatusOK || len(p.Result) != want || ri.Count != want || ri.Page != n+1 ||
			ri.PerPage != 2 || ri.TotalCount != 5 || ri.TotalPages != 3 || p.Result == nil {
			t.Fatalf("page %d: %d %s", n+1, r.status, r.body)
		}
		for _, o := range p.Result {
			seen = append(seen, o["id"].(string))
		}
	}
	// Pages are in creation order and together hold every object once.
	if len(seen) != len(ids) {
		t.Fatalf("pages hold %v, want %v", seen, ids)
	}
	for i := range ids {
		if seen[i] != ids[i] {
			t.Fatalf("pages hold %v, want %v", seen, ids)
		}
	}
	var p listPage[map[string]any]
	e.do("GET", "/api/v1/networks", nil).json(t, &p)
	if p.ResultInfo.Page != 1 || p.ResultInfo.PerPage != 20 || len(p.Result) != 5 {
		t.Fatalf("defaults: %+v", p.ResultInfo)
	}
	pr := e.do("GET", "/api/v1/networks?page=0&per_page=1001", nil).problem(t, http.StatusBadRequest)
	if got := fieldPaths(pr); !got["page"] || !got["per_page"] {
		t.Fatalf("errors %v", pr.Errors)
	}
	e.do("GET", "/api/v1/networks?page=x", nil).problem(t, http.StatusBadRequest)
	// An empty collection is an empty array, never null.
	r := e.do("GET", "/api/v1/zones", nil)
	if r.status != http.StatusOK || !strings.Contains(string(r.body), `"result":[]`) {
		t.Fatalf("empty list: %s", r.body)
	}
}
