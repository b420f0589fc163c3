package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/outbound"
	"github.com/glb-dns/glb/pools"
)

// TestIntegrationsScope: what makes glbd send requests to a URL needs
// the integrations scope: a write token gets 403 naming it on creating,
// listing and reading subscriptions and their deliveries and on a
// rollout with a webhook or Prometheus guard; an integrations token gets
// 201; a write token still starts a rollout without such a guard.
func TestIntegrationsScope(t *testing.T) {
	t.Parallel()
	e := previewEnv(t, func(o *api.Options) { o.Token = "bootstrap-secret" })
	f := e.fixture()
	write := e.newToken("ci", "write")
	integ := e.newToken("hooks", "integrations")
	sub := map[string]any{"name": "oncall", "url": "https://hooks.example.com/glb", "events": []string{"config"}}
	missing := func(r response, what string) {
		t.Helper()
		p := r.problem(t, http.StatusForbidden)
		if p.MissingScope != string(pools.ScopeIntegrations) || !strings.Contains(p.Detail, "integrations") {
			t.Errorf("%s: %+v does not name the integrations scope", what, p)
		}
	}
	missing(e.do("POST", "/api/v1/notifications", sub, bearer(write)...), "create a subscription")
	r := e.do("POST", "/api/v1/notifications", sub, bearer(integ)...)
	if r.status != http.StatusCreated {
		t.Fatalf("integrations token: %d %s", r.status, r.body)
	}
	var made struct{ Result api.NewNotification }
	r.json(t, &made)
	for _, path := range []string{"/api/v1/notifications", "/api/v1/notifications/" + made.Result.ID,
		"/api/v1/notifications/" + made.Result.ID + "/deliveries"} {
		missing(e.do("GET", path, nil, bearer(write)...), "GET "+path)
		if r := e.do("GET", path, nil, bearer(integ)...); r.status != http.StatusOK {
			t.Errorf("GET %s with integrations: %d %s", path, r.status, r.body)
		}
	}
	missing(e.do("POST", "/api/v1/notifications/"+made.Result.ID+"/test", nil, bearer(write)...), "test call")

	guarded := func(guards map[string]any) map[string]any {
		return map[string]any{"pool": f.pool, "weights": map[string]any{"a": 0.5}, "reason": "canary", "step_interval": "1h", "guards": guards}
	}
	missing(e.do("POST", "/api/v1/rollouts", guarded(map[string]any{"webhook": "https://hooks.example.com/ok"}), bearer(write)...), "webhook guard")
	missing(e.do("POST", "/api/v1/rollouts", guarded(map[string]any{"query": "up", "prometheus": "http://prom.example.com:9090"}), bearer(write)...), "query guard")
	r = e.do("POST", "/api/v1/rollouts", guarded(map[string]any{"webhook": "https://hooks.example.com/ok"}), bearer(integ)...)
	if r.status != http.StatusCreated {
		t.Fatalf("webhook guard with integrations: %d %s", r.status, r.body)
	}
	var ro struct{ Result pools.Rollout }
	r.json(t, &ro)
	e.do("POST", "/api/v1/rollouts/"+ro.Result.ID+"/abort", nil, bearer(integ)...)
	r = e.do("POST", "/api/v1/rollouts", guarded(map[string]any{}), bearer(write)...)
	if r.status != http.StatusCreated {
		t.Fatalf("health guard only, write token: %d %s", r.status, r.body)
	}
}

// TestOutboundRefusedWhenWritten: under the default policy a receiver or
// guard URL leading to each refused class is a 400 naming the field and
// the rule, whether the URL names the address or a name resolving to it;
// the same URL passes when the policy allows it.
func TestOutboundRefusedWhenWritten(t *testing.T) {
	t.Parallel()
	e := previewEnv(t, nil)
	f := e.fixture()
	for _, c := range []struct{ url, rule string }{
		{"http://127.0.0.9:8080/internal/admin/reset", "loopback 127.0.0.0/8"},
		{"http://[::1]:8080/x", "loopback ::1/128"},
		{"http://localhost:8080/x", "loopback"},
		{"http://10.0.0.8/x", "private 10.0.0.0/8"},
		{"http://192.168.1.1/x", "private 192.168.0.0/16"},
		{"http://169.254.169.254/latest/meta-data/", "link-local 169.254.0.0/16"},
		{"http://[fd00:ec2::254]/latest/meta-data/", "link-local fd00:ec2::254/128"},
		{"http://[fd12:3456::1]/x", "private fc00::/7"},
		{"http://100.64.0.1/x", "shared 100.64.0.0/10"},
		{"http://[ff02::1]/x", "multicast ff00::/8"},
		{"http://0.0.0.0:9/x", "unspecified 0.0.0.0/8"},
		{"https://nowhere.invalid/x", "does not resolve"},
	} {
		p := e.do("POST", "/api/v1/notifications", map[string]any{"name": "x", "url": c.url, "events": []string{"config"}}).
			problem(t, http.StatusBadRequest)
		if len(p.Errors) != 1 || p.Errors[0].Path != "url" || !strings.Contains(p.Errors[0].Message, c.rule) {
			t.Errorf("%s: %+v, want url refused by %s", c.url, p.Errors, c.rule)
		}
	}
	p := e.do("POST", "/api/v1/rollouts", map[string]any{"pool": f.pool, "weights": map[string]any{"a": 0.5}, "reason": "x",
		"guards": map[string]any{"webhook": "http://169.254.169.254/", "query": "up", "prometheus": "http://10.1.1.1:9090"}}).
		problem(t, http.StatusBadRequest)
	if paths := fieldPaths(p); !paths["guards.webhook"] || !paths["guards.prometheus"] {
		t.Errorf("guards: %+v", p.Errors)
	}

	allowed, err := outbound.New([]string{"127.0.0.0/8", "169.254.169.254"}, []string{"hooks.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	a := previewEnv(t, func(o *api.Options) { o.Outbound = allowed })
	if r := a.do("POST", "/api/v1/notifications", map[string]any{"name": "x", "url": "http://127.0.0.9:8080/hook", "events": []string{"config"}}); r.status != http.StatusCreated {
		t.Errorf("allowed loopback: %d %s", r.status, r.body)
	}
	if r := a.do("POST", "/api/v1/notifications", map[string]any{"name": "y", "url": "http://10.0.0.8/x", "events": []string{"config"}}); r.status != http.StatusBadRequest {
		t.Errorf("a private address beside an allowed loopback: %d %s", r.status, r.body)
	}
	p = a.do("POST", "/api/v1/notifications", map[string]any{"name": "z", "url": "https://hooks.example.com/x", "events": []string{"config"}}).
		problem(t, http.StatusBadRequest)
	if len(p.Errors) != 1 || !strings.Contains(p.Errors[0].Message, "--outbound-deny hooks.example.com") {
		t.Errorf("denied name: %+v", p.Errors)
	}
}
