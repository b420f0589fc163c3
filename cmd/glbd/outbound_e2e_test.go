package main

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/glb-dns/glb/internal/tabledns"
	"github.com/glb-dns/glb/internal/webhooktest"
	"github.com/glb-dns/glb/pools"
)

// TestOutboundPolicy is the acceptance of where glbd may send requests,
// on a real glbd whose outbound lookups go to a DNS server the test
// controls (--outbound-resolver). With only 127.0.0.2 allowed: a
// subscription to another loopback address, a private address, the
// metadata address and an IPv6 ULA is each a 400 naming url and the rule;
// one to a name resolving to 127.0.0.2 is stored and its test event
// arrives; once the name resolves to 127.0.0.3 the next event is refused
// at delivery, recorded so, and no request reaches 127.0.0.3.
func TestOutboundPolicy(t *testing.T) {
	t.Parallel()
	ns := tabledns.Start(t)
	good := webhooktest.NewReceiverOn(t, "127.0.0.2:0")
	port := mustPort(t, good.URL)
	bad := webhooktest.NewReceiverOn(t, "127.0.0.3:"+port)
	ns.Set("hooks.rebind.test", "127.0.0.2")
	g := startGlbd(t, "", "--notify-poll", "200ms", "--outbound-allow", "127.0.0.2", "--outbound-resolver", ns.Addr)

	for _, c := range []struct{ url, rule string }{
		{"http://127.0.0.1:" + port + "/x", "loopback 127.0.0.0/8"},
		{"http://10.1.2.3/x", "private 10.0.0.0/8"},
		{"http://169.254.169.254/latest/meta-data/", "link-local 169.254.0.0/16"},
		{"http://[fd00::1]/x", "private fc00::/7"},
	} {
		var p struct {
			Errors []pools.FieldError `json:"errors"`
		}
		if st := g.call("POST", "/api/v1/notifications", map[string]any{"name": "x", "url": c.url, "events": []string{"config"}}, &p); st != http.StatusBadRequest ||
			len(p.Errors) != 1 || p.Errors[0].Path != "url" || !strings.Contains(p.Errors[0].Message, c.rule) {
			t.Errorf("%s: %d %+v, want a 400 at url naming %s", c.url, st, p.Errors, c.rule)
		}
	}

	res := g.must("POST", "/api/v1/notifications", map[string]any{"name": "rebind", "url": "http://hooks.rebind.test:" + port + "/in",
		"events": []string{"config"}})
	id, secret := res["id"].(string), res["secret"].(string)
	good.SetSecret("/in", secret)
	g.must("POST", "/api/v1/notifications/"+id+"/test", nil)
	eventually(t, 10*time.Second, "the test event arrives at the allowed address", func() (bool, string) {
		rs := good.Requests("/in")
		return len(rs) == 1 && rs[0].Bad == "", describeRequests(rs)
	})

	ns.Set("hooks.rebind.test", "127.0.0.3")
	g.must("POST", "/api/v1/notifications/"+id+"/test", nil)
	var last pools.Delivery
	eventually(t, 10*time.Second, "the second test event attempted", func() (bool, string) {
		var l struct{ Result []pools.Delivery }
		g.call("GET", "/api/v1/notifications/"+id+"/deliveries", nil, &l)
		if len(l.Result) == 2 && l.Result[0].Attempts >= 1 {
			last = l.Result[0]
			return true, ""
		}
		return false, ""
	})
	if last.Status != pools.DeliveryPending || last.LastStatus != 0 || !strings.HasPrefix(last.LastError, "refused: ") ||
		!strings.Contains(last.LastError, "hooks.rebind.test (127.0.0.3)") || !strings.Contains(last.LastError, "loopback") {
		t.Fatalf("the rebound delivery %+v: want refused at 127.0.0.3", last)
	}
	if rs := bad.Requests(""); len(rs) != 0 {
		t.Fatalf("the refused address got %d requests", len(rs))
	}
	if rs := good.Requests(""); len(rs) != 1 {
		t.Fatalf("the allowed address got %d requests, want the first test event only", len(rs))
	}
}

func mustPort(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil || u.Port() == "" {
		t.Fatalf("no port in %q", raw)
	}
	return u.Port()
}

func describeRequests(rs []webhooktest.Request) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(" " + r.Path + " " + r.Bad)
	}
	return b.String()
}

// TestRolloutGuardRebindingRefused: a webhook guard whose name resolves
// to the allowed 127.0.0.2 when the rollout is started is asked there at
// the first step; the name then resolves to 127.0.0.3, and the next step's
// request is refused on the address connected to: the rollout rolls back
// naming the refusal, and 127.0.0.3 sees no request.
func TestRolloutGuardRebindingRefused(t *testing.T) {
	t.Parallel()
	origins := startOrigins(t, "127.0.7.15", "127.0.7.16")
	ns := tabledns.Start(t)
	good := webhooktest.NewReceiverOn(t, "127.0.0.2:0")
	port := mustPort(t, good.URL)
	bad := webhooktest.NewReceiverOn(t, "127.0.0.3:"+port)
	ns.Set("gate.rebind.test", "127.0.0.2")
	g := startGlbd(t, "", "--outbound-allow", "127.0.0.2", "--outbound-resolver", ns.Addr)
	orderWorld(t, g, origins[0], origins[1])
	var out struct{ Result pools.Rollout }
	if code := g.call("POST", "/api/v1/rollouts", map[string]any{"load_balancer": "www", "default_pools": []string{"pb", "pa"},
		"steps": []int{10, 25, 50, 100}, "step_interval": "3s", "reason": "gated by a name",
		"guards": map[string]any{"webhook": "http://gate.rebind.test:" + port + "/gate"}}, &out); code != http.StatusCreated {
		t.Fatalf("start: %d", code)
	}
	eventually(t, 10*time.Second, "the first step asks the allowed address", func() (bool, string) {
		n := len(good.Requests("/gate"))
		return n >= 1, fmt.Sprint(n, " requests")
	})
	ns.Set("gate.rebind.test", "127.0.0.3")
	eventually(t, 15*time.Second, "the guard rolls the rollout back", func() (bool, string) {
		got := rolloutOf(t, g, out.Result.ID)
		return got.State == pools.RolloutRolledBack, got.State + " " + got.EndReason
	})
	got := rolloutOf(t, g, out.Result.ID)
	if !strings.Contains(got.EndReason, "webhook guard refused") || !strings.Contains(got.EndReason, "gate.rebind.test (127.0.0.3)") {
		t.Errorf("end_reason %q, want the refusal at 127.0.0.3", got.EndReason)
	}
	if n := len(bad.Requests("")); n != 0 {
		t.Fatalf("the refused address got %d requests", n)
	}
}
