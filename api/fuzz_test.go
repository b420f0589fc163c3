package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/pools/embedded/embeddedtest"
)

// FuzzAPIWrite sends arbitrary bodies to every write route of every kind
// (create, replace and merge-patch of a stored object of that kind) and
// holds the API to its contract whatever the bytes:
//
//   - never a 5xx, never a panic;
//   - a refusal is problem+json whose status matches the HTTP status, and
//     a 400 stores nothing (the object count is unchanged);
//   - an accepted object reads back as it was answered, and the stored
//     document, sent again as a replace, is accepted (what the API
//     writes, it accepts).
//
// The handler is called in process: decoding and validation are what is
// fuzzed, and the loopback round trip would only slow the search.
// The seed corpus is in testdata/fuzz/FuzzAPIWrite; go test runs it.
func FuzzAPIWrite(f *testing.F) {
	store := embeddedtest.Open(f)
	h := api.New(api.Options{Store: store, Explainer: echoExplainer{}, Registry: prometheus.NewRegistry()})

	call := func(method, path string, body []byte, ct string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, bytes.NewReader(body))
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	mustCreate := func(k pools.Kind, body any) string {
		b, _ := json.Marshal(body)
		rec := call("POST", "/api/v1/"+string(k), b, "application/json")
		if rec.Code != http.StatusCreated {
			f.Fatalf("fixture %s: %d %s", k, rec.Code, rec.Body)
		}
		var out struct{ Result map[string]any }
		_ = json.Unmarshal(rec.Body.Bytes(), &out)
		return out.Result["id"].(string)
	}
	fx := fixture{}
	fx.zone = mustCreate(pools.KindZone, zoneBody())
	fx.monitor = mustCreate(pools.KindMonitor, monitorBody())
	fx.pool = mustCreate(pools.KindPool, poolBody(fx.monitor))
	fx.lb = mustCreate(pools.KindLoadBalancer, lbBody(fx.zone, fx.pool))
	fx.network = mustCreate(pools.KindNetwork, networkBody("10.1.0.0/16"))
	ids := map[pools.Kind]string{
		pools.KindZone: fx.zone, pools.KindMonitor: fx.monitor, pools.KindPool: fx.pool,
		pools.KindLoadBalancer: fx.lb, pools.KindNetwork: fx.network,
	}

	for _, seed := range []struct {
		route uint8
		body  any
	}{
		{0, zoneBody()}, {1, monitorBody()}, {2, poolBody(fx.monitor)},
		{3, lbBody(fx.zone, fx.pool)}, {4, networkBody("10.2.0.0/16")},
		{5, zoneBody()}, {13, map[string]any{"ttl": 60}},
	} {
		b, _ := json.Marshal(seed.body)
		f.Add(seed.route, b)
	}

	count := func(k pools.Kind) int {
		rec := call("GET", "/api/v1/"+string(k)+"?per_page=1", nil, "")
		var out listPage[any]
		_ = json.Unmarshal(rec.Body.Bytes(), &out)
		return out.ResultInfo.TotalCount
	}

	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		k := pools.Kinds[int(route)%len(pools.Kinds)]
		coll := "/api/v1/" + string(k)
		item := coll + "/" + ids[k]
		var method, path, ct string
		switch (route / uint8(len(pools.Kinds))) % 3 {
		case 0:
			method, path, ct = "POST", coll, "application/json"
		case 1:
			method, path, ct = "PUT", item, "application/json"
		default:
			method, path, ct = "PATCH", item, "application/merge-patch+json"
		}
		before := count(k)
		rec := call(method, path, body, ct)
		if rec.Code >= 500 {
			t.Fatalf("%s %s %q: %d %s", method, path, body, rec.Code, rec.Body)
		}
		if rec.Code >= 400 {
			if got := rec.Header().Get("Content-Type"); got != "application/problem+json" {
				t.Fatalf("%s %s %q: %d with Content-Type %q", method, path, body, rec.Code, got)
			}
			var p api.Problem
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p.Status != rec.Code || p.Title == "" {
				t.Fatalf("%s %s %q: %d, problem %s (%v)", method, path, body, rec.Code, rec.Body, err)
			}
			if after := count(k); rec.Code == http.StatusBadRequest && after != before {
				t.Fatalf("%s %s %q: 400 but %s went from %d to %d", method, path, body, k, before, after)
			}
			return
		}
		var out struct{ Result map[string]any }
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Result == nil {
			t.Fatalf("%s %s %q: %d, body %s is not a result (%v)", method, path, body, rec.Code, rec.Body, err)
		}
		id, _ := out.Result["id"].(string)
		self := coll + "/" + id
		got := call("GET", self, nil, "")
		var back struct{ Result map[string]any }
		_ = json.Unmarshal(got.Body.Bytes(), &back)
		if got.Code != http.StatusOK || !jsonEqual(back.Result, out.Result) {
			t.Fatalf("%s %s %q: answered %s, reads back %d %s", method, path, body, rec.Body, got.Code, got.Body)
		}
		again, _ := json.Marshal(back.Result)
		if re := call("PUT", self, again, "application/json"); re.Code != http.StatusOK {
			t.Fatalf("%s %s %q: the stored document %s is refused on replace: %d %s", method, path, body, again, re.Code, re.Body)
		}
		if method == "POST" {
			// Keep the store small: what was created goes again.
			if d := call("DELETE", self, nil, ""); d.Code != http.StatusNoContent {
				t.Fatalf("delete %s: %d %s", self, d.Code, d.Body)
			}
		}
	})
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
