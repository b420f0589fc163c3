package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/internal/testnode"
)

// monitorView is the pool health's view of one monitor of an origin.
func monitorView(o api.OriginHealth, monitor string) api.MonitorView {
	for _, m := range o.Monitors {
		if m.Monitor == monitor {
			return m
		}
	}
	return api.MonitorView{Monitor: monitor, State: "(missing)"}
}

// TestMonitorGroupEndToEnd: origins a and b both pass an HTTP check; a
// TCP port is open on b only. With the TCP monitor must_be_healthy, a
// leaves the DNS answer (dig); made monitoring_only, a comes back while
// the pool's health and its console page still show what TCP sees.
func TestMonitorGroupEndToEnd(t *testing.T) {
	t.Parallel()
	origins := startOrigins(t, "127.0.24.1", "127.0.24.2")
	a, b := origins[0], origins[1]
	port := testnode.AcceptingPort(t, b.ip())

	g := startGlbd(t, "")
	zone := zoneFor(t, g)
	httpMon := fastMonitor(t, g, a.port())
	tcpMon := g.must("POST", "/api/v1/monitors", map[string]any{
		"type": "tcp", "port": port, "description": "tls port",
		"interval": 1, "timeout": 1, "retries": 0, "consecutive_down": 1, "consecutive_up": 1,
	})["id"].(string)
	pool := g.must("POST", "/api/v1/pools", map[string]any{"name": "web",
		"monitors": []map[string]any{{"monitor": httpMon}, {"monitor": tcpMon, "must_be_healthy": true}},
		"origins":  []map[string]any{{"name": "a", "address": a.ip()}, {"name": "b", "address": b.ip()}},
	})["id"].(string)
	g.must("POST", "/api/v1/load_balancers", map[string]any{
		"zone": zone, "name": "www.glb.example.com", "default_pools": []any{pool}, "fallback_pool": pool, "answers": 0,
	})

	took := answerWithin(t, g, 10*time.Second, "a, down for its must-be-healthy tcp monitor, leaves the answer", b.ip())
	t.Logf("must_be_healthy tcp down → a out of DNS in %v", took.Round(time.Millisecond))
	ph := poolHealth(t, g, pool)
	oa := originOf(ph, "a")
	if oa.Healthy == nil || *oa.Healthy || !strings.Contains(oa.Reason, "monitor "+tcpMon) {
		t.Errorf("a agreed %v (%q); want down naming monitor %s", oa.Healthy, oa.Reason, tcpMon)
	}
	if h, tc := monitorView(oa, httpMon), monitorView(oa, tcpMon); h.State != api.StateUp || tc.State != api.StateDown || !tc.MustBeHealthy || tc.Reason == "" {
		t.Errorf("a's monitors: http %+v, tcp %+v; want http up, tcp down (must be healthy) with a reason", h, tc)
	}
	if tc := monitorView(originOf(ph, "b"), tcpMon); tc.State != api.StateUp {
		t.Errorf("b's tcp view %+v, want up", tc)
	}

	g.must("PATCH", "/api/v1/pools/"+pool, map[string]any{
		"monitors": []map[string]any{{"monitor": httpMon}, {"monitor": tcpMon, "monitoring_only": true}},
	})
	took = answerWithin(t, g, 10*time.Second, "with tcp monitoring_only, a is answered again", a.ip(), b.ip())
	t.Logf("tcp made monitoring_only → a back in DNS in %v", took.Round(time.Millisecond))
	ph = poolHealth(t, g, pool)
	oa = originOf(ph, "a")
	if tc := monitorView(oa, tcpMon); oa.Healthy == nil || !*oa.Healthy || tc.State != api.StateDown || !tc.MonitoringOnly {
		t.Errorf("a agreed %v, tcp view %+v; want up, with tcp still shown down as monitoring only", oa.Healthy, tc)
	}

	// The pool page shows each monitor's view per origin.
	ctx := browserTab(t)
	var text string
	drive(t, ctx, "pool page", chromedp.Navigate(g.api+"/ui/#pool/"+pool),
		waitFor(`document.querySelector('#monitors tr[data-origin="a"] td[data-monitor="`+tcpMon+`"]')?.dataset.state === "down"`, 15*time.Second),
		waitFor(`document.querySelector('#monitors tr[data-origin="a"] td[data-monitor="`+httpMon+`"]')?.dataset.state === "up"`, 15*time.Second),
		waitFor(`document.querySelector('#monitors tr[data-origin="b"] td[data-monitor="`+tcpMon+`"]')?.dataset.state === "up"`, 15*time.Second),
		chromedp.Text("#monitors", &text))
	shot(t, ctx, "pool-monitors")
	for _, want := range []string{"tls port (tcp :" + strconv.Itoa(port) + ")", "monitoring only, never counts", "http GET /health", "one of the others", "DOWN on 1 of 1 node"} {
		if !strings.Contains(text, want) {
			t.Errorf("the monitors' table does not show %q:\n%s", want, text)
		}
	}
}
