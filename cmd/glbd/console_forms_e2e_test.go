package main

import (
	"context"
	"fmt"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// noSideways fails the test when the page at phone width scrolls sideways
// or a control of the form is cut off at the screen's edge.
func noSideways(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	var bad []string
	drive(t, ctx, what+": layout", chromedp.Evaluate(`(() => {
		const de = document.documentElement, out = [];
		if (de.scrollWidth > de.clientWidth) out.push("the page scrolls sideways: " + de.scrollWidth + " > " + de.clientWidth);
		for (const e of document.querySelectorAll("#main input, #main select, #main textarea, #main button")) {
			const r = e.getBoundingClientRect();
			if (r.width > 0 && (r.left < 0 || r.right > de.clientWidth + 0.5)) out.push("#" + e.id + " off screen at " + Math.round(r.left) + ".." + Math.round(r.right));
		}
		return out;
	})()`, &bad))
	for _, b := range bad {
		t.Errorf("%s at 390x844: %s", what, b)
	}
}

// TestConsoleForms: at phone width, the console sets what its first forms
// left to the API: a monitor's headers, redirects and thresholds; a load
// balancer's random steering weights, zonal affinity, all_down policy and
// safety rules (refusing bad values beside their fields); a zone's DNSSEC,
// with its DS records and a rollover step. The overview of a proximity
// load balancer shows each region's pools nearest first, and dig is
// answered from the first pool of this machine's place.
func TestConsoleForms(t *testing.T) {
	g := startParallel(t)
	g.must("POST", "/api/v1/zones", map[string]any{"id": "example", "name": "glb.example.com", "nameservers": []string{"ns1.glb.example.com"},
		"records": []map[string]any{{"name": "ns1.glb.example.com", "type": "A", "content": "127.0.0.1"}}})
	g.must("POST", "/api/v1/monitors", map[string]any{"id": "m", "description": "http check", "interval": 60})
	g.must("POST", "/api/v1/pools", map[string]any{"id": "eu", "name": "eu", "latitude": 50.1, "longitude": 8.7,
		"origins": []map[string]any{{"name": "fra", "address": "192.0.2.1"}}})
	g.must("POST", "/api/v1/pools", map[string]any{"id": "ap", "name": "ap", "latitude": 35.7, "longitude": 139.7,
		"origins": []map[string]any{{"name": "tyo", "address": "192.0.2.2"}}})
	// This machine's clients are in Osaka.
	g.must("POST", "/api/v1/networks", map[string]any{"cidr": "127.0.0.0/8", "region": "NEAS", "latitude": 34.7, "longitude": 135.5})
	ui := g.api + "/ui/"
	ctx := browserTab(t)
	phone := chromedp.EmulateViewport(390, 844)

	drive(t, ctx, "the monitor's new fields", phone, chromedp.Navigate(ui+"#edit/monitors/m"), chromedp.WaitVisible(`#f-header`),
		chromedp.SendKeys(`#f-header`, "Host: www.example.com\nX-Check: 1"),
		chromedp.Click(`#f-follow_redirects`), retype(`#f-consecutive_down`, "3"),
		chromedp.ScrollIntoView(`#f-header`))
	noSideways(t, ctx, "the monitor form")
	shot(t, ctx, "phone-monitor-form")
	drive(t, ctx, "save the monitor", chromedp.Click(`#save`), waitFor(`location.hash === "#config"`, 10*time.Second))
	m := g.must("GET", "/api/v1/monitors/m", nil)
	if h := fmt.Sprint(m["header"]); h != "map[Host:[www.example.com] X-Check:[1]]" || m["follow_redirects"] != true || m["allow_insecure"] != false || m["consecutive_down"] != float64(3) {
		t.Errorf("the monitor stored: header %s, follow_redirects %v, allow_insecure %v, consecutive_down %v", h, m["follow_redirects"], m["allow_insecure"], m["consecutive_down"])
	}

	// A pool: an origin's Host header and load shedding.
	drive(t, ctx, "the pool's new fields", chromedp.Navigate(ui+"#edit/pools/eu"), chromedp.WaitVisible(`#o0-host`),
		chromedp.SendKeys(`#o0-host`, "www.example.com"), retype(`#f-load_shedding-default_percent`, "10"))
	noSideways(t, ctx, "the pool form")
	drive(t, ctx, "save the pool", chromedp.Click(`#save`), waitFor(`location.hash === "#config"`, 10*time.Second))
	var eu struct {
		Result struct {
			Origins []struct {
				Header map[string][]string
			}
			LoadShedding struct {
				DefaultPercent float64 `json:"default_percent"`
			} `json:"load_shedding"`
		}
	}
	g.call("GET", "/api/v1/pools/eu", nil, &eu)
	if o := eu.Result.Origins; len(o) != 1 || fmt.Sprint(o[0].Header) != "map[Host:[www.example.com]]" || eu.Result.LoadShedding.DefaultPercent != 10 {
		t.Errorf("the pool stored: %+v", eu.Result)
	}

	// The load balancer: two bad values refused beside their fields, then
	// corrected.
	ctx = nextTab(t, ctx)
	var ratioErr, weightErr string
	drive(t, ctx, "a load balancer with bad values", phone, chromedp.Navigate(ui+"#edit/load_balancers"), chromedp.WaitVisible(`#f-default_pools`),
		chromedp.SendKeys(`#f-name`, "near.glb.example.com"),
		chromedp.SetValue(`#f-steering_policy`, "proximity"),
		chromedp.SendKeys(`#f-default_pools`, "eu, ap"),
		selectByText(`#f-fallback_pool`, "ap"),
		chromedp.SendKeys(`#f-random_steering-pool_weights`, "eu: 2\nap: 0.5"),
		chromedp.SetValue(`#f-zonal_affinity-spillover`, "ZONAL_AFFINITY_SPILL_CROSS_ZONE"),
		retype(`#f-zonal_affinity-spillover_ratio`, "1.5"),
		chromedp.SetValue(`#f-all_down-action`, "nodata"),
		retype(`#f-safety-min_serving_pools`, "2"),
		chromedp.Click(`#save`), waitFor(`document.getElementById("f-zonal_affinity-spillover_ratio-error").textContent !== ""`, 10*time.Second),
		chromedp.Text(`#f-zonal_affinity-spillover_ratio-error`, &ratioErr), chromedp.Text(`#f-random_steering-pool_weights-error`, &weightErr),
		chromedp.ScrollIntoView(`#f-zonal_affinity-spillover_ratio`))
	noSideways(t, ctx, "the load balancer form")
	shot(t, ctx, "phone-lb-form-errors")
	if !strings.Contains(ratioErr, "[0, 1]") {
		t.Errorf("spillover ratio 1.5: %q beside the field", ratioErr)
	}
	if !strings.HasPrefix(weightErr, "eu: ") || !strings.Contains(weightErr, "[0, 1]") {
		t.Errorf("pool weight 2: %q beside the field", weightErr)
	}
	drive(t, ctx, "correct them", retype(`#f-zonal_affinity-spillover_ratio`, "0.5"), retype(`#f-random_steering-pool_weights`, "eu: 0.75\nap: 0.5"),
		chromedp.Click(`#save`), waitFor(`location.hash === "#config"`, 10*time.Second))
	var lbs struct {
		Result []struct {
			ID             string
			SteeringPolicy string `json:"steering_policy"`
			RandomSteering struct {
				PoolWeights map[string]float64 `json:"pool_weights"`
			} `json:"random_steering"`
			ZonalAffinity struct {
				Spillover      string  `json:"spillover"`
				SpilloverRatio float64 `json:"spillover_ratio"`
			} `json:"zonal_affinity"`
			AllDown struct{ Action string } `json:"all_down"`
			Safety  struct {
				MinServingPools int `json:"min_serving_pools"`
			}
		}
	}
	g.call("GET", "/api/v1/load_balancers", nil, &lbs)
	if len(lbs.Result) != 1 {
		t.Fatalf("%d load balancers stored", len(lbs.Result))
	}
	l := lbs.Result[0]
	if l.SteeringPolicy != "proximity" || !reflect.DeepEqual(l.RandomSteering.PoolWeights, map[string]float64{"eu": 0.75, "ap": 0.5}) ||
		l.ZonalAffinity.Spillover != "ZONAL_AFFINITY_SPILL_CROSS_ZONE" || l.ZonalAffinity.SpilloverRatio != 0.5 ||
		l.AllDown.Action != "nodata" || l.Safety.MinServingPools != 2 {
		t.Errorf("the load balancer stored: %+v", l)
	}

	// The overview: each region's pools nearest first, as the DNS servers
	// order them, and dig from Osaka answered by ap (Tokyo).
	ctx = nextTab(t, ctx)
	var weu, neas, neasText string
	drive(t, ctx, "the proximity overview", phone, chromedp.Navigate(ui+"#overview"),
		waitFor(`!!document.querySelector('tr[data-mapping="NEAS"]')?.dataset.order`, 20*time.Second),
		chromedp.AttributeValue(`tr[data-mapping="WEU"]`, "data-order", &weu, nil),
		chromedp.AttributeValue(`tr[data-mapping="NEAS"]`, "data-order", &neas, nil),
		chromedp.Text(`tr[data-mapping="NEAS"]`, &neasText),
		chromedp.ScrollIntoView(`tr[data-mapping="NEAS"]`))
	noSideways(t, ctx, "the proximity overview")
	shot(t, ctx, "phone-proximity-overview")
	if weu != "eu ap" || neas != "ap eu" || !strings.Contains(neasText, "\u00a0km) → eu (") {
		t.Errorf("proximity order: WEU %q, NEAS %q (%q)", weu, neas, neasText)
	}
	eventually(t, 20*time.Second, "dig answered from ap", func() (bool, string) {
		ans, status := dig(t, g.dns, "near.glb.example.com", "A")
		return status == "NOERROR" && len(ans) == 1 && ans[0] == "192.0.2.2", fmt.Sprint(status, ans)
	})

	// DNSSEC from the zone's form: signed answers, the DS for the parent,
	// and a rollover step refused too early, then forced.
	ctx = nextTab(t, ctx)
	drive(t, ctx, "turn DNSSEC on", phone, chromedp.Navigate(ui+"#edit/zones/example"), chromedp.WaitVisible(`#dnssec`),
		chromedp.Click(`#f-dnssec-enabled`), retype(`#f-soa-minimum`, "60"), chromedp.Click(`#save`), waitFor(`location.hash === "#config"`, 10*time.Second),
		chromedp.Navigate(ui+"#edit/zones/example"), waitFor(`document.getElementById("dnssec")?.dataset.signing === "true"`, 10*time.Second),
		chromedp.ScrollIntoView(`#dnssec`))
	noSideways(t, ctx, "the zone's DNSSEC")
	shot(t, ctx, "phone-dnssec")
	if z := g.must("GET", "/api/v1/zones/example", nil); fmt.Sprint(z["soa"].(map[string]any)["minimum"]) != "60" {
		t.Errorf("the zone's SOA stored: %v", z["soa"])
	}
	var ds string
	drive(t, ctx, "read the DS", chromedp.Text(`#dnssec-ds`, &ds))
	if !strings.HasPrefix(ds, "glb.example.com.") || !strings.Contains(ds, "DS") {
		t.Errorf("the DS records read %q", ds)
	}
	eventually(t, 20*time.Second, "a signed answer", func() (bool, string) {
		out, _ := exec.Command("dig", "@"+strings.Split(g.dns, ":")[0], "-p", strings.Split(g.dns, ":")[1], "+norec", "+dnssec", "near.glb.example.com", "A").CombinedOutput()
		return strings.Contains(string(out), "RRSIG\tA "), string(out)
	})
	var early, forced string
	drive(t, ctx, "a rollover step too early", chromedp.Click(`#dnssec-rollover`),
		waitFor(`document.getElementById("dnssec-status").textContent.startsWith("Not taken")`, 10*time.Second), chromedp.Text(`#dnssec-status`, &early),
		chromedp.Click(`#dnssec-force`), chromedp.Click(`#dnssec-rollover`),
		waitFor(`document.getElementById("dnssec-status").textContent.startsWith("Done")`, 10*time.Second), chromedp.Text(`#dnssec-status`, &forced))
	var rows int
	drive(t, ctx, "the keys shown", chromedp.Evaluate(`document.querySelectorAll("#dnssec-keys tbody tr").length`, &rows))
	if !strings.Contains(early, "force") || !strings.Contains(forced, "published") || rows != 2 {
		t.Errorf("rollover: too early %q, forced %q, %d keys shown", early, forced, rows)
	}
	var keys struct {
		Result struct{ Keys []struct{ State string } }
	}
	g.call("GET", "/api/v1/zones/example/dnssec", nil, &keys)
	if k := keys.Result.Keys; len(k) != 2 || k[0].State != "active" || k[1].State != "published" {
		t.Errorf("keys after one step: %+v", k)
	}
}
