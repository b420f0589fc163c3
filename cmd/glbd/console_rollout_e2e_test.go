package main

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestConsoleRollouts: the rollouts page shows a rollout's step, percent
// and state, pauses and resumes it; the load balancer's page shows the
// rollout of its pool and aborts it, after which the pool keeps its
// original weights.
func TestConsoleRollouts(t *testing.T) {
	origins := startOrigins(t, "127.0.7.5", "127.0.7.6")
	g := startParallel(t)
	rolloutWorld(t, g, origins[0], origins[1])
	r := startRollout(t, g, "1h")
	ui := g.api + "/ui/"
	ctx := browserTab(t)
	row := `#rollouts-table tr[data-rollout="` + r.ID + `"]`
	var text string
	drive(t, ctx, "the rollouts page", chromedp.Navigate(ui+"#rollouts"), chromedp.WaitVisible(row),
		chromedp.Text(row, &text))
	shot(t, ctx, "rollouts")
	if !strings.Contains(text, "running") || !strings.Contains(text, "step 1 of 4, 10 %") || !strings.Contains(text, "a 0.5 → 0.9") ||
		!strings.Contains(text, "next step in") {
		t.Errorf("rollout row: %q", text)
	}
	drive(t, ctx, "pause", chromedp.Click(row+` .rollout-pause`),
		waitFor(`document.querySelector('`+row+`')?.dataset.status === 'paused'`, 5*time.Second),
		chromedp.Click(row+` .rollout-resume`),
		waitFor(`document.querySelector('`+row+`')?.dataset.status === 'running'`, 5*time.Second))
	if got := rolloutOf(t, g, r.ID); got.State != "running" || got.HeldMS <= 0 {
		t.Errorf("after pause and resume: state %s, held %d ms", got.State, got.HeldMS)
	}
	lbRow := `#lb-rollouts-table tr[data-rollout="` + r.ID + `"]`
	drive(t, ctx, "the load balancer's page", chromedp.Navigate(ui+"#edit/load_balancers/www"), chromedp.WaitVisible(lbRow),
		chromedp.Click(lbRow+` .rollout-abort`),
		waitFor(`document.querySelector('#lb-rollouts') === null`, 5*time.Second))
	if got := rolloutOf(t, g, r.ID); got.State != "aborted" {
		t.Errorf("after abort: %s", got.State)
	}
	web := g.must("GET", "/api/v1/pools/web", nil)
	if o := web["origins"].([]any); o[0].(map[string]any)["weight"] != 0.5 {
		t.Errorf("after the abort web's origins are %v", o)
	}
}

// TestConsoleOrderRollout: the rollouts page shows a rollout of a load
// balancer's default pool order, old → new, with its step; the load
// balancer's page shows it too.
func TestConsoleOrderRollout(t *testing.T) {
	origins := startOrigins(t, "127.0.7.9", "127.0.7.10")
	g := startParallel(t)
	orderWorld(t, g, origins[0], origins[1])
	r := startOrder(t, g, "1h", "pb", "pa")
	ui := g.api + "/ui/"
	ctx := browserTab(t)
	row := `#rollouts-table tr[data-rollout="` + r.ID + `"]`
	var text, lbText string
	drive(t, ctx, "the rollouts page", chromedp.Navigate(ui+"#rollouts"), chromedp.WaitVisible(row),
		chromedp.Text(row, &text))
	shot(t, ctx, "rollouts-order")
	if !strings.Contains(text, "load balancer www") || !strings.Contains(text, "default_pools pa, pb → pb, pa") ||
		!strings.Contains(text, "step 1 of 4, 10 %") {
		t.Errorf("order rollout row: %q", text)
	}
	lbRow := `#lb-rollouts-table tr[data-rollout="` + r.ID + `"]`
	drive(t, ctx, "the load balancer's page", chromedp.Navigate(ui+"#edit/load_balancers/www"), chromedp.WaitVisible(lbRow),
		chromedp.Text(lbRow, &lbText))
	if !strings.Contains(lbText, "pb, pa") {
		t.Errorf("the load balancer's rollout row: %q", lbText)
	}
}
