package api_test

import (
	"net/http"
	"testing"

	"github.com/glb-dns/glb/pools"
)

// TestLoadBalancerHTTPS: a load balancer's https object is stored, read
// back, patched away with null; a bad alpn, port or ech, or an unknown
// field in it, is a 400 naming the field, and nothing is written.
func TestLoadBalancerHTTPS(t *testing.T) {
	e, f := parallelFixture(t)
	path := "/api/v1/load_balancers/" + f.lb
	https := map[string]any{"alpn": []string{"h2", "h3"}, "port": 8443, "no_default_alpn": true, "ech": "AEX+DQBB"}
	r := e.do("PATCH", path, map[string]any{"https": https}, "Content-Type", "application/merge-patch+json")
	if r.status != http.StatusOK {
		t.Fatalf("patch https: %d %s", r.status, r.body)
	}
	var got struct {
		Result struct {
			Revision int64              `json:"revision"`
			HTTPS    *pools.HTTPSRecord `json:"https"`
		}
	}
	e.do("GET", path, nil).json(t, &got)
	if h := got.Result.HTTPS; h == nil || len(h.ALPN) != 2 || h.ALPN[1] != "h3" || h.Port != 8443 || !h.NoDefaultALPN || h.ECH != "AEX+DQBB" {
		t.Fatalf("https read back as %+v", got.Result.HTTPS)
	}
	rev := got.Result.Revision

	for _, c := range []struct {
		name  string
		https any
		field string
	}{
		{"port too large", map[string]any{"port": 65536}, "https.port"},
		{"negative port", map[string]any{"port": -1}, "https.port"},
		{"empty alpn id", map[string]any{"alpn": []string{"h2", ""}}, "https.alpn[1]"},
		{"alpn with a comma", map[string]any{"alpn": []string{"h2,h3"}}, "https.alpn[0]"},
		{"alpn twice", map[string]any{"alpn": []string{"h3", "h3"}}, "https.alpn[1]"},
		{"ech not base64", map[string]any{"ech": "%%%"}, "https.ech"},
	} {
		body := lbBody(f.zone, f.pool)
		body["https"] = c.https
		p := e.do("PUT", path, body, "If-Match", "").problem(t, http.StatusBadRequest)
		if !fieldPaths(p)[c.field] {
			t.Errorf("%s: problem %+v does not name %s", c.name, p, c.field)
		}
	}
	for _, c := range []struct{ name, body string }{
		{"unknown field", `{"https": {"alpn": ["h2"], "prot": 443}}`},
		{"alpn as a string", `{"https": {"alpn": "h2"}}`},
		{"port as a string", `{"https": {"port": "443"}}`},
	} {
		e.do("PATCH", path, c.body, "Content-Type", "application/merge-patch+json").problem(t, http.StatusBadRequest)
	}
	e.do("GET", path, nil).json(t, &got)
	if got.Result.Revision != rev || got.Result.HTTPS == nil || got.Result.HTTPS.Port != 8443 {
		t.Fatalf("a refused write changed the load balancer: revision %d (was %d), https %+v", got.Result.Revision, rev, got.Result.HTTPS)
	}

	r = e.do("PATCH", path, `{"https": null}`, "Content-Type", "application/merge-patch+json")
	if r.status != http.StatusOK {
		t.Fatalf("patch https null: %d %s", r.status, r.body)
	}
	got.Result.HTTPS = nil
	e.do("GET", path, nil).json(t, &got)
	if got.Result.HTTPS != nil {
		t.Fatalf("https still %+v after a merge patch with null", got.Result.HTTPS)
	}
}
