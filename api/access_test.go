package api_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/internal/testnode"
	"github.com/glb-dns/glb/pools"
)

// newToken creates a token with the bootstrap token and returns its secret.
func (e *env) newToken(name string, scopes ...string) string {
	e.t.Helper()
	r := e.do("POST", "/api/v1/tokens", map[string]any{"name": name, "scopes": scopes})
	if r.status != http.StatusCreated {
		e.t.Fatalf("create token %s: %d %s", name, r.status, r.body)
	}
	var out struct{ Result api.NewToken }
	r.json(e.t, &out)
	if !strings.HasPrefix(out.Result.Secret, "glb_") || len(out.Result.Secret) < 40 {
		e.t.Fatalf("secret %q", out.Result.Secret)
	}
	e.actor(out.Result.Secret, name)
	return out.Result.Secret
}

func bearer(secret string) []string { return []string{"Authorization", "Bearer " + secret} }

func TestScopes(t *testing.T) {
	e := parallelEnv(t, func(o *api.Options) { o.Token = "bootstrap-secret" })
	f := e.fixture()
	read := e.newToken("dashboard", "read")
	write := e.newToken("ci", "write")
	admin := e.newToken("security", "admin")

	type call struct{ method, path string }
	reads := []call{
		{"GET", "/api/v1/pools"}, {"GET", "/api/v1/pools/" + f.pool}, {"GET", "/api/v1/pools/" + f.pool + "/health"},
		{"GET", "/api/v1/load_balancers/" + f.lb + "/explain?client=192.0.2.1"}, {"GET", "/api/v1/audit"},
		{"GET", "/api/v1/openapi.json"},
	}
	for _, c := range reads {
		for _, s := range []string{read, write, admin} {
			if r := e.do(c.method, c.path, nil, bearer(s)...); r.status != http.StatusOK {
				t.Errorf("%s %s: %d %s", c.method, c.path, r.status, r.body)
			}
		}
	}
	forbidden := func(secret string, method, path string, body any, scope string) {
		t.Helper()
		p := e.do(method, path, body, bearer(secret)...).problem(t, http.StatusForbidden)
		if p.MissingScope != scope || !strings.Contains(p.Detail, scope) {
			t.Errorf("%s %s: problem %+v does not name the %s scope", method, path, p, scope)
		}
	}
	forbidden(read, "POST", "/api/v1/networks", networkBody("10.9.0.0/16"), "write")
	forbidden(read, "PATCH", "/api/v1/pools/"+f.pool, map[string]any{"minimum_origins": 2}, "write")
	forbidden(read, "PUT", "/api/v1/networks/"+f.network, networkBody("10.1.0.0/16"), "write")
	forbidden(read, "DELETE", "/api/v1/networks/"+f.network, nil, "write")
	for _, s := range []string{read, write} {
		forbidden(s, "GET", "/api/v1/tokens", nil, "admin")
		forbidden(s, "GET", "/api/v1/tokens/ci", nil, "admin")
		forbidden(s, "POST", "/api/v1/tokens", map[string]any{"name": "x", "scopes": []string{"admin"}}, "admin")
		forbidden(s, "DELETE", "/api/v1/tokens/ci", nil, "admin")
	}
	// Forbidden writes stored nothing (the audit check also holds).
	if n := total(t, e, pools.KindNetwork); n != 1 {
		t.Errorf("%d networks after refused writes", n)
	}
	r := e.do("PATCH", "/api/v1/pools/"+f.pool, map[string]any{"minimum_origins": 2}, bearer(write)...)
	if r.status != http.StatusOK {
		t.Fatalf("write token PATCH: %d %s", r.status, r.body)
	}
	if r := e.do("DELETE", "/api/v1/networks/"+f.network, nil, bearer(admin)...); r.status != http.StatusNoContent {
		t.Fatalf("admin token DELETE: %d %s", r.status, r.body)
	}

	// Listing shows names and scopes, never a secret or its hash.
	r = e.do("GET", "/api/v1/tokens", nil, bearer(admin)...)
	var list struct{ Result []map[string]any }
	r.json(t, &list)
	if r.status != http.StatusOK || len(list.Result) != 3 || list.Result[0]["name"] != "ci" {
		t.Fatalf("token list: %d %s", r.status, r.body)
	}
	for _, s := range []string{read, write, admin} {
		if strings.Contains(string(r.body), s) {
			t.Fatal("a token list shows a secret")
		}
	}
	for _, k := range []string{"secret", "hash"} {
		if _, ok := list.Result[0][k]; ok {
			t.Errorf("token list shows %q: %s", k, r.body)
		}
	}
	// The last use is written behind the request, so it shows soon after.
	testnode.Eventually(t, 5*time.Second, "ci's last use recorded", func() (bool, string) {
		if list.Result[0]["last_used_on"] != nil {
			return true, ""
		}
		r = e.do("GET", "/api/v1/tokens", nil, bearer(admin)...)
		r.json(t, &list)
		return false, string(r.body)
	})
	audit := e.do("GET", "/api/v1/audit?per_page=1000", nil, bearer(admin)...)
	for _, s := range []string{read, write, admin} {
		if strings.Contains(string(audit.body), s) {
			t.Fatal("the audit log shows a secret")
		}
	}
}

func TestTokenAuthFailures(t *testing.T) {
	t.Parallel()
	var skew atomic.Int64
	e := newEnv(t, func(o *api.Options) {
		o.Token = "bootstrap-secret"
		o.Now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	})
	exp := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	r := e.do("POST", "/api/v1/tokens", map[string]any{"name": "temp", "scopes": []string{"read"}, "expires_on": exp})
	var out struct{ Result api.NewToken }
	r.json(t, &out)
	e.actor(out.Result.Secret, "temp")
	if r := e.do("GET", "/api/v1/zones", nil, bearer(out.Result.Secret)...); r.status != http.StatusOK {
		t.Fatalf("fresh token: %d", r.status)
	}
	skew.Store(int64(2 * time.Hour))
	if p := e.do("GET", "/api/v1/zones", nil, bearer(out.Result.Secret)...).problem(t, http.StatusUnauthorized); !strings.Contains(p.Detail, "expired") {
		t.Errorf("expired token: %+v", p)
	}
	skew.Store(0)
	e.do("GET", "/api/v1/zones", nil, bearer(out.Result.Secret+"x")...).problem(t, http.StatusUnauthorized)
	e.do("GET", "/api/v1/zones", nil, bearer("glb_unknown")...).problem(t, http.StatusUnauthorized)

	// Bad requests store nothing and are not audited.
	for _, body := range []any{
		map[string]any{"name": "temp", "scopes": []string{"read"}},             // taken
		map[string]any{"name": "bootstrap", "scopes": []string{"read"}},        // reserved
		map[string]any{"name": "x", "scopes": []string{"root"}},                // unknown scope
		map[string]any{"name": "x", "scopes": []string{}},                      // none
		map[string]any{"name": "x", "scopes": []string{"read"}, "secret": "s"}, // unknown field
		map[string]any{"name": "x", "scopes": []string{"read"}, "expires_on": "2001-01-01T00:00:00Z"},
	} {
		e.do("POST", "/api/v1/tokens", body).problem(t, http.StatusBadRequest)
	}
	// Revoked: refused at once on this node.
	if r := e.do("DELETE", "/api/v1/tokens/temp", nil); r.status != http.StatusNoContent {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	e.do("GET", "/api/v1/zones", nil, bearer(out.Result.Secret)...).problem(t, http.StatusUnauthorized)
	e.do("DELETE", "/api/v1/tokens/temp", nil).problem(t, http.StatusNotFound)
}

// Two API servers over one store, as two nodes over one database: a token
// revoked on one is refused by the other within a second, although the
// other had it cached.
func TestRevocationReachesOtherServers(t *testing.T) {
	a := parallelEnv(t, func(o *api.Options) { o.Token = "bootstrap-secret" })
	b := &env{t: t, store: a.store, token: a.token}
	b.srv = newServer(t, api.Options{Store: a.store, Token: a.token})
	secret := a.newToken("dash", "read")
	b.actor(secret, "dash")
	if r := b.do("GET", "/api/v1/zones", nil, bearer(secret)...); r.status != http.StatusOK {
		t.Fatalf("other server: %d", r.status)
	}
	if r := a.do("DELETE", "/api/v1/tokens/dash", nil); r.status != http.StatusNoContent {
		t.Fatalf("revoke: %d", r.status)
	}
	start := time.Now()
	for {
		r := b.do("GET", "/api/v1/zones", nil, bearer(secret)...)
		if r.status == http.StatusUnauthorized {
			break
		}
		if time.Since(start) > time.Second {
			t.Fatalf("revoked token still accepted after %v: %d", time.Since(start), r.status)
		}
	}
	t.Logf("revocation seen by the other server after %v", time.Since(start))
}

func TestAuditAPI(t *testing.T) {
	e := parallelEnv(t, func(o *api.Options) { o.Token = "bootstrap-secret" })
	f := e.fixture()
	ci := e.newToken("ci", "write")
	e.do("PATCH", "/api/v1/pools/"+f.pool, map[string]any{"minimum_origins": 2}, bearer(ci)...)
	e.do("POST", "/api/v1/pools", map[string]any{"name": ""}, bearer(ci)...).problem(t, http.StatusBadRequest)

	var out listPage[pools.AuditEntry]
	e.do("GET", "/api/v1/audit?actor=ci", nil).json(t, &out)
	if len(out.Result) != 1 || out.Result[0].Kind != pools.KindPool || out.Result[0].Method != "PATCH" || out.Result[0].Action != "update" {
		t.Fatalf("by actor: %+v", out.Result)
	}
	e.do("GET", "/api/v1/audit?kind=pools&id="+f.pool, nil).json(t, &out)
	if len(out.Result) != 2 || out.Result[0].Action != "update" || out.Result[1].Action != "create" {
		t.Fatalf("by object, newest first: %+v", out.Result)
	}
	e.do("GET", "/api/v1/audit?per_page=2&page=2", nil).json(t, &out)
	if out.ResultInfo.TotalCount != 7 || len(out.Result) != 2 {
		t.Fatalf("page 2: %d of %d", len(out.Result), out.ResultInfo.TotalCount)
	}
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	e.do("GET", "/api/v1/audit?since="+future, nil).json(t, &out)
	if len(out.Result) != 0 {
		t.Errorf("since the future: %d entries", len(out.Result))
	}
	e.do("GET", "/api/v1/audit?until="+future, nil).json(t, &out)
	if len(out.Result) != 7 {
		t.Errorf("until the future: %d entries", len(out.Result))
	}
	p := e.do("GET", "/api/v1/audit?since=yesterday&page=0", nil).problem(t, http.StatusBadRequest)
	if paths := fieldPaths(p); !paths["since"] || !paths["page"] {
		t.Errorf("bad parameters: %+v", p.Errors)
	}
}

func newServer(t *testing.T, o api.Options) *httptest.Server {
	srv := httptest.NewServer(api.New(o))
	t.Cleanup(srv.Close)
	return srv
}
