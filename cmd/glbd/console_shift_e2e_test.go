package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestConsoleShifts: the overview starts a shift with a reason and a
// duration, shows it with a countdown and the pool shifted away, drops it
// at its expiry with nothing written, ends one early, and shows the
// safety rule that refuses one.
func TestConsoleShifts(t *testing.T) {
	g := startParallel(t)
	shiftWorld(t, g)
	g.must("POST", "/api/v1/load_balancers", map[string]any{"id": "solo", "zone": "example", "name": "solo.glb.example.com",
		"default_pools": []string{"fb"}, "fallback_pool": "fb"})
	// A pool whose id is not its name, and a load balancer the form names.
	g.must("POST", "/api/v1/pools", map[string]any{"id": "p-4e1b", "name": "web-eu", "origins": []map[string]any{{"name": "w1", "address": "192.0.2.50"}}})
	g.must("POST", "/api/v1/load_balancers", map[string]any{"id": "duo", "zone": "example", "name": "duo.glb.example.com",
		"default_pools": []string{"p-4e1b", "fb"}, "fallback_pool": "fb"})
	ui := g.api + "/ui/"
	ctx := browserTab(t)
	start := func(what, target, reason, duration string) chromedp.Action {
		return chromedp.Tasks{
			chromedp.SetValue(`#s-kind`, what), chromedp.SetValue(`#s-target`, target),
			chromedp.SetValue(`#s-reason`, reason), chromedp.SetValue(`#s-duration`, duration),
			chromedp.Click(`#s-submit`),
		}
	}
	var text string
	drive(t, ctx, "start a shift", chromedp.Navigate(ui+"#overview"), chromedp.WaitVisible(`#s-form`),
		start("pool", "primary", "bad deploy", "4s"),
		waitFor(`document.querySelector('#s-table tr[data-shift] .countdown')?.textContent.startsWith('ends in')`, 5*time.Second),
		waitFor(`document.querySelector('section[data-lb="www.glb.example.com"] tr[data-pool="primary"] .shifted') !== null`, 5*time.Second),
		chromedp.Text(`#shifts`, &text))
	shot(t, ctx, "shifts")
	if !strings.Contains(text, "pool primary") || !strings.Contains(text, "bad deploy") || !strings.Contains(text, "all") {
		t.Errorf("shifts card:\n%s", text)
	}
	// At the expiry the page redraws by itself: no event comes, since
	// nothing is written.
	drive(t, ctx, "expiry", chromedp.Click(`#main h2`), waitFor(`document.querySelector('#s-table') === null`, 8*time.Second),
		waitFor(`document.querySelector('section[data-lb="www.glb.example.com"] .shifted') === null`, time.Second))

	drive(t, ctx, "end early", start("zone", "zone-1", "network trouble", "2h"),
		waitFor(`document.querySelector('#s-table tr[data-shift] .end-shift') !== null`, 5*time.Second),
		chromedp.Click(`#s-table .end-shift`),
		waitFor(`document.querySelector('#s-table') === null`, 5*time.Second))
	var list struct {
		Result []map[string]any `json:"result"`
	}
	g.call("GET", "/api/v1/shifts?status=ended", nil, &list)
	if len(list.Result) != 1 || list.Result[0]["reason"] != "network trouble" {
		t.Errorf("ended shifts: %v", list.Result)
	}

	// Names are taken where ids are: the pool by its name, the load
	// balancer by its DNS name; the list shows the names back.
	drive(t, ctx, "by name", chromedp.WaitVisible(`#s-form`), chromedp.SetValue(`#s-lbs`, "duo.glb.example.com"),
		start("pool", "web-eu", "by name", "2h"),
		waitFor(`document.querySelector('#s-table tr[data-shift]') !== null`, 5*time.Second),
		chromedp.Text(`#shifts`, &text))
	g.call("GET", "/api/v1/shifts?status=active", nil, &list)
	if len(list.Result) != 1 || list.Result[0]["target"].(map[string]any)["pool"] != "p-4e1b" ||
		fmt.Sprint(list.Result[0]["load_balancers"]) != "[duo]" {
		t.Errorf("a shift started by names: %v", list.Result)
	}
	if !strings.Contains(text, "pool web-eu (p-4e1b)") || !strings.Contains(text, "duo.glb.example.com") {
		t.Errorf("shifts card after a shift by names:\n%s", text)
	}
	drive(t, ctx, "end it", chromedp.Click(`#s-table .end-shift`), waitFor(`document.querySelector('#s-table') === null`, 5*time.Second))

	var status, errText string
	drive(t, ctx, "refused", chromedp.WaitVisible(`#s-form`), start("pool", "fb", "oops", "1h"),
		waitFor(`document.querySelector('#s-status').textContent.includes('min_serving_pools')`, 5*time.Second),
		chromedp.Text(`#s-status`, &status))
	drive(t, ctx, "no reason", chromedp.WaitVisible(`#s-form`), start("pool", "fb", "  ", "1h"),
		waitFor(`document.querySelector('#s-reason-error').textContent !== ''`, 5*time.Second),
		chromedp.Text(`#s-reason-error`, &errText))
	if !strings.Contains(status, "solo.glb.example.com") {
		t.Errorf("refusal shows %q", status)
	}
	if !strings.Contains(errText, "reason") {
		t.Errorf("reason error %q", errText)
	}
}
