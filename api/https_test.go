package api_test

import (
	"net/http"
	"strings"
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

// TestZoneServiceRecordsRFC9460: a zone's SVCB or HTTPS record that RFC
// 9460 makes one clients must ignore (a mandatory key the record lacks,
// mandatory listing itself or a key twice, no-default-alpn without alpn)
// is a 400 naming the record's content, and nothing is written.
func TestZoneServiceRecordsRFC9460(t *testing.T) {
	e, f := parallelFixture(t)
	path := "/api/v1/zones/" + f.zone
	var before struct {
		Result struct {
			Revision int64 `json:"revision"`
		}
	}
	e.do("GET", path, nil).json(t, &before)
	for _, c := range []struct{ typ, content, want string }{
		{"HTTPS", "1 . mandatory=alpn port=1", "alpn, which the record does not have"},
		{"HTTPS", "1 . mandatory=mandatory alpn=h2", "must not list itself"},
		{"HTTPS", "1 . mandatory=alpn,alpn alpn=h2", "lists alpn twice"},
		{"HTTPS", "1 . no-default-alpn", "no-default-alpn needs alpn"},
		{"SVCB", "1 svc.glb.example.com. no-default-alpn port=53", "no-default-alpn needs alpn"},
		{"HTTPS", "1 . alpn=h2 key1=h3", "write it by its name"},
	} {
		body := zoneBody()
		body["records"] = []map[string]any{
			{"name": "ns1.glb.example.com", "type": "A", "content": "192.0.2.53"},
			{"name": "svc.glb.example.com", "type": c.typ, "content": c.content},
		}
		p := e.do("PUT", path, body, "If-Match", "").problem(t, http.StatusBadRequest)
		var msg string
		for _, fe := range p.Errors {
			if fe.Path == "records[1].content" {
				msg = fe.Message
			}
		}
		if !strings.Contains(msg, c.want) {
			t.Errorf("%s %q: problem %+v, want records[1].content saying %q", c.typ, c.content, p, c.want)
		}
	}
	var after struct {
		Result struct {
			Revision int64 `json:"revision"`
		}
	}
	e.do("GET", path, nil).json(t, &after)
	if after.Result.Revision != before.Result.Revision {
		t.Fatalf("a refused record changed the zone: revision %d, was %d", after.Result.Revision, before.Result.Revision)
	}
}
