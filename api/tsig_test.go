package api_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/pools"
)

// TestTSIGKeys: a key is created with a secret shown once, read back
// without it, refused with every bad field named, kept from every scope
// but admin, and deleted.
func TestTSIGKeys(t *testing.T) {
	e := parallelEnv(t, func(o *api.Options) { o.Token = "bootstrap-secret" })
	f := e.fixture()
	body := map[string]any{"name": "acme", "algorithm": "hmac-sha256", "grants": []map[string]any{
		{"zone": f.zone, "name": "www.glb.example.com", "match": "acme-challenge", "types": []string{"TXT"}},
	}}
	r := e.do("POST", "/api/v1/tsig_keys", body)
	if r.status != http.StatusCreated || r.header.Get("Location") != "/api/v1/tsig_keys/acme" || r.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("create: %d %v %s", r.status, r.header, r.body)
	}
	var created struct{ Result api.NewTSIGKey }
	r.json(t, &created)
	if raw, err := base64.StdEncoding.DecodeString(created.Result.Secret); err != nil || len(raw) != 32 {
		t.Fatalf("secret %q: %d bytes, %v", created.Result.Secret, len(raw), err)
	}
	r = e.do("GET", "/api/v1/tsig_keys/acme", nil)
	if r.status != http.StatusOK || strings.Contains(string(r.body), created.Result.Secret) || !strings.Contains(string(r.body), `"acme-challenge"`) {
		t.Fatalf("get: %d %s", r.status, r.body)
	}
	r = e.do("GET", "/api/v1/tsig_keys", nil)
	if r.status != http.StatusOK || strings.Contains(string(r.body), created.Result.Secret) || !strings.Contains(string(r.body), `"total_count":1`) {
		t.Fatalf("list: %d %s", r.status, r.body)
	}
	bad := map[string]any{"name": "bad key", "algorithm": "hmac-md5", "grants": []map[string]any{
		{"zone": "nope", "name": "www.glb.example.com", "match": "any", "types": []string{"SOA"}},
	}}
	p := e.do("POST", "/api/v1/tsig_keys", bad).problem(t, http.StatusBadRequest)
	fp := fieldPaths(p)
	for _, want := range []string{"name", "algorithm", "grants[0].match", "grants[0].types[0]"} {
		if !fp[want] {
			t.Errorf("problem does not name %s: %+v", want, p.Errors)
		}
	}
	e.do("POST", "/api/v1/tsig_keys", map[string]any{"name": "x", "grants": []map[string]any{
		{"zone": "nope", "name": "www.glb.example.com", "match": "exact", "types": []string{"TXT"}},
	}}).problem(t, http.StatusBadRequest)
	write := e.newToken("ci", "write")
	if p := e.do("GET", "/api/v1/tsig_keys", nil, bearer(write)...).problem(t, http.StatusForbidden); p.MissingScope != "admin" {
		t.Errorf("write token: %+v", p)
	}
	if r := e.do("DELETE", "/api/v1/tsig_keys/acme", nil); r.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	e.do("GET", "/api/v1/tsig_keys/acme", nil).problem(t, http.StatusNotFound)
	if n := total(t, e, pools.KindNetwork); n != 1 {
		t.Errorf("networks: %d", n)
	}
}

// TestTokensAndTSIGKeysPaged: the lists the store returns whole (tokens,
// TSIG keys) are cut into the page asked for, by name, with the total.
func TestTokensAndTSIGKeysPaged(t *testing.T) {
	e := parallelEnv(t, func(o *api.Options) { o.Token = "bootstrap-secret" })
	f := e.fixture()
	for _, name := range []string{"a", "b", "c"} {
		if r := e.do("POST", "/api/v1/tokens", map[string]any{"name": name, "scopes": []string{"read"}}); r.status != http.StatusCreated {
			t.Fatalf("token %s: %d %s", name, r.status, r.body)
		}
		grants := []map[string]any{{"zone": f.zone, "name": "www.glb.example.com", "match": "acme-challenge", "types": []string{"TXT"}}}
		if r := e.do("POST", "/api/v1/tsig_keys", map[string]any{"name": name, "algorithm": "hmac-sha256", "grants": grants}); r.status != http.StatusCreated {
			t.Fatalf("TSIG key %s: %d %s", name, r.status, r.body)
		}
	}
	for _, path := range []string{"/api/v1/tokens", "/api/v1/tsig_keys"} {
		r := e.do("GET", path+"?per_page=1&page=2", nil)
		var page listPage[struct{ Name string }]
		r.json(t, &page)
		if r.status != http.StatusOK || len(page.Result) != 1 || page.Result[0].Name != "b" || page.ResultInfo.TotalCount != 3 {
			t.Errorf("%s page 2 of 1: %d %s", path, r.status, r.body)
		}
	}
}
