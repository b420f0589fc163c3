package main

import (
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
