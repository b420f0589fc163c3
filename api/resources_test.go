package api_test

import (
	"net/http"
	"testing"

	"github.com/glb-dns/glb/pools"
)

// TestCRUDEveryKind walks every kind through create, get, list, replace,
// patch and delete, checking statuses, ETags and what was stored.
func TestCRUDEveryKind(t *testing.T) {
	e, f := parallelFixture(t)
	cases := []struct {
		kind  pools.Kind
		id    string
		field string // a field to change
	}{
		{pools.KindZone, f.zone, "ttl"},
		{pools.KindMonitor, f.monitor, "description"},
		{pools.KindPool, f.pool, "description"},
		{pools.KindLoadBalancer, f.lb, "description"},
		{pools.KindNetwork, f.network, "description"},
	}
	for _, c := range cases {
		path := "/api/v1/" + string(c.kind) + "/" + c.id
		r := e.do("GET", path, nil)
		if r.status != http.StatusOK || r.header.Get("ETag") != `"1"` {
			t.Fatalf("GET %s: %d ETag %q: %s", path, r.status, r.header.Get("ETag"), r.body)
		}
		var got struct{ Result map[string]any }
		r.json(t, &got)
		if got.Result["id"] != c.id || got.Result["revision"] != float64(1) {
			t.Fatalf("GET %s: %v", path, got.Result)
		}

		var l listPage[map[string]any]
		e.do("GET", "/api/v1/"+string(c.kind), nil).json(t, &l)
		if len(l.Result) != 1 || l.Result[0]["id"] != c.id || l.ResultInfo.Count != 1 || l.ResultInfo.TotalCount != 1 {
			t.Fatalf("list %s: %+v", c.kind, l)
		}

		// PUT the object read back, changed: the read-only fields it
		// carries (revision, created_on...) are ignored.
		obj := got.Result
		var val any = "changed"
		if c.kind == pools.KindZone {
			val = float64(120)
		}
		obj[c.field] = val
		r = e.do("PUT", path, obj)
		if r.status != http.StatusOK || r.header.Get("ETag") != `"2"` {
			t.Fatalf("PUT %s: %d ETag %q: %s", path, r.status, r.header.Get("ETag"), r.body)
		}
		var put struct{ Result map[string]any }
		r.json(t, &put)
		if put.Result[c.field] != val || put.Result["created_on"] != got.Result["created_on"] {
			t.Fatalf("PUT %s stored %v", path, put.Result)
		}

		patch := `{"description": "patched"}`
		if c.kind == pools.KindZone {
			patch = `{"ttl": 600}`
		}
		r = e.do("PATCH", path, patch, "Content-Type", "application/merge-patch+json")
		if r.status != http.StatusOK || r.header.Get("ETag") != `"3"` {
			t.Fatalf("PATCH %s: %d ETag %q: %s", path, r.status, r.header.Get("ETag"), r.body)
		}
		o, err := e.store.Get(t.Context(), c.kind, c.id)
		if err != nil {
			t.Fatal(err)
		}
		if rev := o.ObjectMeta().Revision; rev != 3 {
			t.Fatalf("%s stored at revision %d, want 3", c.kind, rev)
		}
	}

	// Delete in reverse dependency order; every object is gone after.
	for i := len(cases) - 1; i >= 0; i-- {
		path := "/api/v1/" + string(cases[i].kind) + "/" + cases[i].id
		if r := e.do("DELETE", path, nil); r.status != http.StatusNoContent || len(r.body) != 0 {
			t.Fatalf("DELETE %s: %d %s", path, r.status, r.body)
		}
		e.do("GET", path, nil).problem(t, http.StatusNotFound)
	}
}
