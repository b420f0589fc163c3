package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/glb-dns/glb/pools"
)

// total returns how many objects of kind the store holds.
func total(t *testing.T, e *env, k pools.Kind) int {
	t.Helper()
	res, err := e.store.List(t.Context(), k, pools.Page{})
	if err != nil {
		t.Fatal(err)
	}
	return res.TotalCount
}

func TestValidationNamesEveryFieldAndStoresNothing(t *testing.T) {
	e := parallelEnv(t, nil)
	body := poolBody("no-such-monitor")
	body["name"] = ""
	body["minimum_origins"] = 0
	body["origins"] = []map[string]any{
		{"name": "a", "address": "192.0.2.10", "weight": 1.5},
		{"name": "a", "address": "not an address!"},
	}
	p := e.do("POST", "/api/v1/pools", body).problem(t, http.StatusBadRequest)
	got := fieldPaths(p)
	for _, want := range []string{"name", "minimum_origins", "monitor", "origins[0].weight", "origins[1].name", "origins[1].address"} {
		if !got[want] {
			t.Errorf("errors %v do not name %s", p.Errors, want)
		}
	}
	if p.Type != "urn:glb:problem:validation" {
		t.Errorf("type %q", p.Type)
	}
	if n := total(t, e, pools.KindPool); n != 0 {
		t.Fatalf("%d pools stored after a rejected create", n)
	}

	// A bad replace leaves the stored object as it was.
	id := e.create(pools.KindPool, poolBody(""))["id"].(string)
	body = poolBody("")
	body["origins"] = []map[string]any{}
	e.do("PUT", "/api/v1/pools/"+id, body).problem(t, http.StatusBadRequest)
	o, err := e.store.Get(t.Context(), pools.KindPool, id)
	if err != nil {
		t.Fatal(err)
	}
	if p := o.(*pools.Pool); len(p.Origins) != 3 || p.Revision != 1 {
		t.Fatalf("stored pool changed by a rejected PUT: %+v", p)
	}
}

func TestUnknownAndMistypedFieldsNamedWithTheirPath(t *testing.T) {
	e := parallelEnv(t, nil)
	body := `{"name": "p", "colour": "blue",
		"origin_steering": {"policy": "hash", "sticky": true},
		"origins": [
			{"name": "a", "address": "192.0.2.1", "weight": "heavy"},
			{"name": "b", "address": "192.0.2.2", "bogus": 1, "enabled": "yes"}
		],
		"minimum_origins": 1.5}`
	p := e.do("POST", "/api/v1/pools", body).problem(t, http.StatusBadRequest)
	want := map[string]string{
		"colour":                 "unknown field",
		"origin_steering.sticky": "unknown field",
		"origins[1].bogus":       "unknown field",
		"origins[0].weight":      "must be a number",
		"origins[1].enabled":     "must be true or false",
		"minimum_origins":        "must be an integer",
	}
	got := map[string]string{}
	for _, fe := range p.Errors {
		got[fe.Path] = fe.Message
	}
	for path, msg := range want {
		if !strings.HasPrefix(got[path], msg) {
			t.Errorf("%s: got %q, want %q (all: %v)", path, got[path], msg, p.Errors)
		}
	}
	if len(p.Errors) != len(want) {
		t.Errorf("%d errors, want %d: %v", len(p.Errors), len(want), p.Errors)
	}
	// Nested maps too: a load balancer's region_pools values are lists.
	p = e.do("POST", "/api/v1/load_balancers", `{"region_pools": {"WEU": "p1"}, "zonal_affinity": {"ratio": 1}}`).problem(t, http.StatusBadRequest)
	if got := fieldPaths(p); !got["region_pools.WEU"] || !got["zonal_affinity.ratio"] {
		t.Errorf("errors %v", p.Errors)
	}
	if n := total(t, e, pools.KindPool); n != 0 {
		t.Fatalf("%d pools stored", n)
	}
}

func TestMalformedBodies(t *testing.T) {
	e := parallelEnv(t, nil)
	cases := []struct {
		name, body string
		offset     int64 // -1: no offset expected
	}{
		// offset is the byte at fault, whatever the cause.
		{"syntax", `{"name": "p",, }`, 13},
		{"bad literal", `{"name": tru}`, 12},
		{"control character", "{\"name\": \"\x01\"}", 10},
		{"truncated", `{"name": "p"`, 12},
		{"trailing", `{"name": "p"} {"name": "q"}`, 14},
		{"trailing garbage", `{"name": "p"}x`, 13},
		{"trailing after newline", "{\"name\": \"p\"}\n\t]", 15},
		{"empty", ``, -1},
		{"array", `[{"name": "p"}]`, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := e.do("POST", "/api/v1/networks", c.body).problem(t, http.StatusBadRequest)
			if c.offset < 0 {
				if p.Offset != nil {
					t.Fatalf("offset %d on a non-syntax problem", *p.Offset)
				}
				return
			}
			if p.Offset == nil || *p.Offset != c.offset || p.Type != "urn:glb:problem:invalid-json" {
				t.Fatalf("problem %+v, want offset %d", p, c.offset)
			}
		})
	}
	if n := total(t, e, pools.KindNetwork); n != 0 {
		t.Fatalf("%d networks stored", n)
	}
}

func TestBodyOver1MiBIs413(t *testing.T) {
	e := parallelEnv(t, nil)
	big := `{"cidr": "10.0.0.0/8", "description": "` + strings.Repeat("x", 1<<20) + `"}`
	p := e.do("POST", "/api/v1/networks", big).problem(t, http.StatusRequestEntityTooLarge)
	if p.Type != "urn:glb:problem:body-too-large" {
		t.Errorf("type %q", p.Type)
	}
	// Just under the limit is accepted (and then validated).
	fits := `{"cidr": "10.0.0.0/8", "description": "` + strings.Repeat("x", 1<<20-64) + `"}`
	if r := e.do("POST", "/api/v1/networks", fits); r.status != http.StatusCreated {
		t.Fatalf("body under the limit: %d %s", r.status, r.body[:min(len(r.body), 200)])
	}
}

func TestWrongContentTypeIs415(t *testing.T) {
	e := parallelEnv(t, nil)
	e.do("POST", "/api/v1/networks", "cidr=10.0.0.0/8", "Content-Type", "application/x-www-form-urlencoded").problem(t, http.StatusUnsupportedMediaType)
	// merge-patch+json is for PATCH only.
	e.do("POST", "/api/v1/networks", `{"cidr": "10.0.0.0/8"}`, "Content-Type", "application/merge-patch+json").problem(t, http.StatusUnsupportedMediaType)
	if r := e.do("POST", "/api/v1/networks", `{"cidr": "10.0.0.0/8"}`, "Content-Type", "application/json; charset=utf-8"); r.status != http.StatusCreated {
		t.Fatalf("charset parameter refused: %d %s", r.status, r.body)
	}
}

func TestNotFound(t *testing.T) {
	e := parallelEnv(t, nil)
	for _, k := range pools.Kinds {
		path := "/api/v1/" + string(k) + "/nope"
		e.do("GET", path, nil).problem(t, http.StatusNotFound)
		e.do("DELETE", path, nil).problem(t, http.StatusNotFound)
		e.do("PATCH", path, `{}`).problem(t, http.StatusNotFound)
	}
	e.do("PUT", "/api/v1/networks/nope", networkBody("10.0.0.0/8")).problem(t, http.StatusNotFound)
	e.do("GET", "/api/v1/pools/nope/health", nil).problem(t, http.StatusNotFound)
	e.do("GET", "/api/v1/widgets", nil).problem(t, http.StatusNotFound)
	r := e.do("POST", "/api/v1/zones/x", `{}`)
	r.problem(t, http.StatusMethodNotAllowed)
	if allow := r.header.Get("Allow"); allow != "GET, HEAD, PUT, PATCH, DELETE" {
		t.Errorf("Allow %q", allow)
	}
}

func TestDeleteReferencedIs409WithReferrers(t *testing.T) {
	e, f := parallelFixture(t)
	for _, c := range []struct {
		path, referrer string
	}{
		{"/api/v1/pools/" + f.pool, f.lb},
		{"/api/v1/zones/" + f.zone, f.lb},
		{"/api/v1/monitors/" + f.monitor, f.pool},
	} {
		p := e.do("DELETE", c.path, nil).problem(t, http.StatusConflict)
		if p.Type != "urn:glb:problem:conflict" || len(p.Referrers) != 1 || p.Referrers[0].ID != c.referrer {
			t.Errorf("DELETE %s: %+v, want referrer %s", c.path, p, c.referrer)
		}
	}
	if n := total(t, e, pools.KindPool); n != 1 {
		t.Fatalf("%d pools after a refused delete", n)
	}
}

func TestETagAndIfMatch(t *testing.T) {
	e := parallelEnv(t, nil)
	id := e.create(pools.KindNetwork, networkBody("10.2.0.0/16"))["id"].(string)
	path := "/api/v1/networks/" + id

	if r := e.do("GET", path, nil, "If-None-Match", `"1"`); r.status != http.StatusNotModified || r.header.Get("ETag") != `"1"` {
		t.Fatalf("If-None-Match current: %d %q", r.status, r.header.Get("ETag"))
	}
	r := e.do("PUT", path, networkBody("10.2.0.0/16"), "If-Match", `"1"`)
	if r.status != http.StatusOK || r.header.Get("ETag") != `"2"` {
		t.Fatalf("PUT If-Match current: %d %q %s", r.status, r.header.Get("ETag"), r.body)
	}
	for _, c := range []struct{ method, tag string }{
		{"PUT", `"1"`}, {"PATCH", `"1"`}, {"DELETE", `"1"`}, {"PUT", `W/"2"`}, {"DELETE", `"abc"`}, {"PATCH", `"0"`},
	} {
		var body any
		if c.method != "DELETE" {
			body = networkBody("10.2.0.0/16")
		}
		p := e.do(c.method, path, body, "If-Match", c.tag).problem(t, http.StatusPreconditionFailed)
		if p.Type != "urn:glb:problem:stale-revision" {
			t.Errorf("%s If-Match %s: type %q", c.method, c.tag, p.Type)
		}
	}
	e.do("PUT", path, networkBody("10.2.0.0/16"), "If-Match", "2").problem(t, http.StatusBadRequest)
	if r := e.do("PATCH", path, `{"description": "x"}`, "If-Match", `"2"`); r.status != http.StatusOK || r.header.Get("ETag") != `"3"` {
		t.Fatalf("PATCH If-Match current: %d %s", r.status, r.body)
	}
	if r := e.do("DELETE", path, nil, "If-Match", `"3"`); r.status != http.StatusNoContent {
		t.Fatalf("DELETE If-Match current: %d %s", r.status, r.body)
	}
}

func TestReadOnlyFieldsIgnoredAndIDChecked(t *testing.T) {
	e := parallelEnv(t, nil)
	body := networkBody("10.3.0.0/16")
	body["id"] = "office-net"
	body["revision"] = 42
	body["created_on"] = "2001-01-01T00:00:00Z"
	r := e.do("POST", "/api/v1/networks", body)
	var got struct{ Result map[string]any }
	r.json(t, &got)
	if r.status != http.StatusCreated || got.Result["id"] != "office-net" || got.Result["revision"] != float64(1) ||
		got.Result["created_on"] == "2001-01-01T00:00:00Z" {
		t.Fatalf("create with read-only fields: %d %v", r.status, got.Result)
	}
	body["id"] = "other"
	p := e.do("PUT", "/api/v1/networks/office-net", body).problem(t, http.StatusBadRequest)
	if !fieldPaths(p)["id"] {
		t.Fatalf("id mismatch not named: %v", p.Errors)
	}
	e.do("PATCH", "/api/v1/networks/office-net", `{"id": "other"}`).problem(t, http.StatusBadRequest)
	delete(body, "id")
	if r := e.do("PUT", "/api/v1/networks/office-net", body); r.status != http.StatusOK {
		t.Fatalf("PUT without id: %d %s", r.status, r.body)
	}
}

func TestStoreUnavailableIs503(t *testing.T) {
	e := parallelEnv(t, nil)
	// A closed store fails every call: the real thing, failing for real.
	if err := e.store.Close(); err != nil {
		t.Fatal(err)
	}
	e.do("GET", "/api/v1/zones", nil).problem(t, http.StatusServiceUnavailable)
	e.do("POST", "/api/v1/networks", networkBody("10.0.0.0/8")).problem(t, http.StatusServiceUnavailable)
}
