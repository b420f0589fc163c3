package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/pools"
)

// TestNotifications: a subscription is created with a signing secret
// shown once (a routing key for pagerduty), read back without it, refused
// with a clear problem for a URL that is not http(s) or is this API, an
// unknown event or filter, and it has a delivery log and a test call.
func TestNotifications(t *testing.T) {
	e, f := parallelFixture(t)
	body := map[string]any{"name": "oncall", "url": "https://hooks.example.com/glb", "events": []string{"origin_health", "pool_health", "failover"},
		"format": "standard", "load_balancers": []string{f.lb}}
	r := e.do("POST", "/api/v1/notifications", body)
	if r.status != http.StatusCreated || r.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	var created struct{ Result api.NewNotification }
	r.json(t, &created)
	id, secret := created.Result.ID, created.Result.Secret
	if !strings.HasPrefix(secret, "whsec_") || len(secret) < 30 || r.header.Get("Location") != "/api/v1/notifications/"+id {
		t.Fatalf("secret %q, location %q", secret, r.header.Get("Location"))
	}
	for _, path := range []string{"/api/v1/notifications/" + id, "/api/v1/notifications", "/api/v1/audit?kind=notifications"} {
		r := e.do("GET", path, nil)
		if r.status != http.StatusOK || strings.Contains(string(r.body), secret[6:]) || !strings.Contains(string(r.body), "oncall") {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
	}
	// PUT keeps the secret: the stored one signs on.
	body["name"] = "oncall-2"
	if r := e.do("PUT", "/api/v1/notifications/"+id, body); r.status != http.StatusOK || strings.Contains(string(r.body), "secret") {
		t.Fatalf("put: %d %s", r.status, r.body)
	}

	cases := []struct {
		name string
		body map[string]any
		path string
		msg  string
	}{
		{"not http", map[string]any{"name": "x", "url": "ftp://hooks.example.com/", "events": []string{"config"}}, "url", "http or https"},
		{"no scheme", map[string]any{"name": "x", "url": "hooks.example.com/x", "events": []string{"config"}}, "url", "http or https"},
		{"this API", map[string]any{"name": "x", "url": e.srv.URL + "/hook", "events": []string{"config"}}, "url", "this API"},
		{"this API on loopback", map[string]any{"name": "x", "url": "http://127.0.0.1:1/api/v1/notifications", "events": []string{"config"}}, "url", "this API"},
		{"unknown event", map[string]any{"name": "x", "url": "https://h.example.com/", "events": []string{"pool_down"}}, "events[0]", "not one of"},
		{"unknown format", map[string]any{"name": "x", "url": "https://h.example.com/", "events": []string{"config"}, "format": "email"}, "format", "not one of"},
		{"unknown load balancer", map[string]any{"name": "x", "url": "https://h.example.com/", "events": []string{"config"}, "load_balancers": []string{"nope"}}, "load_balancers[0]", "no load balancer"},
		{"pagerduty without key", map[string]any{"name": "x", "url": "https://h.example.com/", "events": []string{"failover"}, "format": "pagerduty"}, "routing_key", "required"},
		{"pagerduty config", map[string]any{"name": "x", "url": "https://h.example.com/", "events": []string{"config"}, "format": "pagerduty", "routing_key": "k"}, "events[0]", "nothing to resolve"},
		{"routing key on standard", map[string]any{"name": "x", "url": "https://h.example.com/", "events": []string{"config"}, "routing_key": "k"}, "routing_key", "only a pagerduty"},
		{"unknown field", map[string]any{"name": "x", "url": "https://h.example.com/", "events": []string{"config"}, "secret": "mine"}, "secret", ""},
	}
	for _, tc := range cases {
		p := e.do("POST", "/api/v1/notifications", tc.body).problem(t, http.StatusBadRequest)
		found := false
		for _, fe := range p.Errors {
			if fe.Path == tc.path && strings.Contains(fe.Message, tc.msg) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: problem %+v does not name %s (%q)", tc.name, p.Errors, tc.path, tc.msg)
		}
	}
	if r := e.do("GET", "/api/v1/notifications", nil); !strings.Contains(string(r.body), `"total_count":1`) {
		t.Fatalf("a refused subscription was stored: %s", r.body)
	}

	pd := e.do("POST", "/api/v1/notifications", map[string]any{"name": "pager", "url": "https://events.example.com/v2/enqueue",
		"events": []string{"failover"}, "format": "pagerduty", "routing_key": "R0UTINGKEY0123456789"})
	if pd.status != http.StatusCreated || strings.Contains(string(pd.body), "R0UTINGKEY") || strings.Contains(string(pd.body), `"secret"`) {
		t.Fatalf("pagerduty create: %d %s", pd.status, pd.body)
	}

	var pdc struct{ Result api.NewNotification }
	pd.json(t, &pdc)
	// PUT without routing_key keeps the stored one.
	if r := e.do("PUT", "/api/v1/notifications/"+pdc.Result.ID, map[string]any{"name": "pager-2", "url": "https://events.example.com/v2/enqueue",
		"events": []string{"failover", "pool_health"}, "format": "pagerduty"}); r.status != http.StatusOK {
		t.Fatalf("pagerduty put: %d %s", r.status, r.body)
	}
	if got, err := e.store.Subscription(t.Context(), pdc.Result.ID); err != nil || got.Secret != "R0UTINGKEY0123456789" || got.Name != "pager-2" {
		t.Fatalf("after put: %+v %v", got, err)
	}

	// The test call queues an event for this subscription alone.
	r = e.do("POST", "/api/v1/notifications/"+id+"/test", nil)
	if r.status != http.StatusAccepted || !strings.Contains(string(r.body), `"type":"test"`) {
		t.Fatalf("test: %d %s", r.status, r.body)
	}
	var deliveries struct{ Result []pools.Delivery }
	e.do("GET", "/api/v1/notifications/"+id+"/deliveries", nil).json(t, &deliveries)
	if len(deliveries.Result) != 1 || deliveries.Result[0].Event.Type != pools.EventTest || deliveries.Result[0].Status != pools.DeliveryPending {
		t.Fatalf("deliveries: %+v", deliveries.Result)
	}
	e.do("POST", "/api/v1/notifications/nope/test", nil).problem(t, http.StatusNotFound)
	e.do("GET", "/api/v1/notifications/nope/deliveries", nil).problem(t, http.StatusNotFound)
	if r := e.do("DELETE", "/api/v1/notifications/"+id, nil); r.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	e.do("GET", "/api/v1/notifications/"+id, nil).problem(t, http.StatusNotFound)
}
