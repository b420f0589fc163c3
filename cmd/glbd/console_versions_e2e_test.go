package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/glb-dns/glb/pools"
)

// TestConsoleVersions: the load balancer's page lists its versions, and
// rolling back to one takes a second click and then stands the load
// balancer and its pool as they were at that version.
func TestConsoleVersions(t *testing.T) {
	g := startParallel(t)
	ctx := browserTab(t)
	zone := zoneFor(t, g)
	g.must("POST", "/api/v1/pools", map[string]any{"id": "web", "name": "web", "origins": []map[string]any{
		{"name": "a", "address": "192.0.2.1"}, {"name": "b", "address": "192.0.2.2"}}})
	g.must("POST", "/api/v1/load_balancers", map[string]any{"id": "www", "zone": zone, "name": "www.glb.example.com",
		"default_pools": []string{"web"}, "fallback_pool": "web"})
	g.must("PATCH", "/api/v1/pools/web", map[string]any{"minimum_origins": 2})
	g.must("PATCH", "/api/v1/load_balancers/www", map[string]any{"ttl": 90})
	var v1 struct{ Result pools.VersionObjects }
	g.call("GET", "/api/v1/load_balancers/www/versions/1", nil, &v1)

	var table string
	drive(t, ctx, "the versions of www", chromedp.Navigate(g.api+"/ui/#edit/load_balancers/www"),
		chromedp.WaitVisible(`#versions-table`), chromedp.Text(`#versions-table`, &table))
	shot(t, ctx, "versions")
	for _, want := range []string{"update pool web", "update load balancer www", "create load balancer www"} {
		if !strings.Contains(table, want) {
			t.Errorf("versions table lacks %q:\n%s", want, table)
		}
	}
	var rows int
	drive(t, ctx, "count", chromedp.Evaluate(`document.querySelectorAll('#versions-table tr[data-version]').length`, &rows))
	if rows != 3 {
		t.Errorf("%d versions shown, want 3", rows)
	}

	// The first click only asks; nothing is written until the second.
	drive(t, ctx, "ask", chromedp.Click(`tr[data-version="1"] .rollback`),
		chromedp.WaitVisible(`tr[data-version="1"] .rollback-confirm`))
	var status string
	drive(t, ctx, "the question", chromedp.Text(`#versions-status`, &status))
	if !strings.Contains(status, "as they were at version 1") {
		t.Errorf("the question says %q", status)
	}
	// The confirmation's handler disables it as it sends: still enabled,
	// nothing was sent.
	var sent bool
	drive(t, ctx, "nothing sent", chromedp.Evaluate(`document.querySelector('tr[data-version="1"] .rollback-confirm').disabled`, &sent))
	if n := len(versionsOf(t, g)); n != 3 || sent {
		t.Fatalf("after the first click: %d versions (want 3), the rollback sent: %v", n, sent)
	}
	drive(t, ctx, "confirm", chromedp.Click(`tr[data-version="1"] .rollback-confirm`),
		waitFor(`document.querySelector('#versions-status')?.textContent.startsWith('Rolled back to version 1')`, 10*time.Second),
		waitFor(`document.querySelector('#versions-table tr[data-version="4"]')?.textContent.includes('rollback to version 1')`, 5*time.Second),
		chromedp.Text(`#versions-status`, &status))
	if !strings.Contains(status, "version 4 wrote load_balancers/www, pools/web") {
		t.Errorf("after the rollback: %q", status)
	}
	for _, o := range []pools.Object{v1.Result.LoadBalancer, &v1.Result.Pools[0]} {
		got := pools.New(o.Kind())
		g.call("GET", "/api/v1/"+string(o.Kind())+"/"+o.ObjectMeta().ID, nil, &struct{ Result pools.Object }{got})
		if same, err := pools.SameContent(got, o); err != nil || !same {
			b, _ := json.Marshal(got)
			t.Errorf("%s %s after the rollback: %s (%v)", o.Kind(), o.ObjectMeta().ID, b, err)
		}
	}
	// The form shows the restored object, with its new ETag.
	var ttl string
	drive(t, ctx, "the form", chromedp.Value(`#f-ttl`, &ttl))
	if ttl != "30" {
		t.Errorf("the form's TTL after the rollback: %q, want 30", ttl)
	}
}

func versionsOf(t *testing.T, g *glbd) []pools.Version {
	t.Helper()
	var out struct{ Result []pools.Version }
	g.call("GET", "/api/v1/load_balancers/www/versions", nil, &out)
	return out.Result
}
