package main

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestConsoleFeeds: the monitor form makes a feed monitor (its ttl and
// alert labels); the pool form takes load_shedding.by_load, refusing a
// high below low beside the field; the pool page shows a word fed in:
// what it says, why, its load and until when it counts.
func TestConsoleFeeds(t *testing.T) {
	g := startParallel(t)
	ui := g.api + "/ui/"
	ctx := browserTab(t)
	drive(t, ctx, "a feed monitor", chromedp.Navigate(ui+"#edit/monitors"), chromedp.WaitVisible(`#f-pool_label`),
		chromedp.SendKeys(`#f-description`, "prometheus"),
		chromedp.SetValue(`#f-type`, "feed"),
		retype(`#f-ttl`, "120"),
		chromedp.SendKeys(`#f-pool_label`, "service"),
		chromedp.Click(`#save`), waitFor(`location.hash === "#config"`, 10*time.Second))
	var mons struct {
		Result []map[string]any `json:"result"`
	}
	g.call("GET", "/api/v1/monitors", nil, &mons)
	if len(mons.Result) != 1 || mons.Result[0]["type"] != "feed" || mons.Result[0]["ttl"] != float64(120) || mons.Result[0]["pool_label"] != "service" {
		t.Fatalf("the feed monitor stored: %v", mons.Result)
	}
	mon := mons.Result[0]["id"].(string)
	pool := g.must("POST", "/api/v1/pools", map[string]any{"name": "web", "monitor": mon,
		"origins": []map[string]any{{"name": "a", "address": "192.0.2.1"}, {"name": "b", "address": "192.0.2.2"}}})["id"].(string)

	ctx = nextTab(t, ctx)
	var highErr string
	drive(t, ctx, "by_load with high below low", chromedp.Navigate(ui+"#edit/pools/"+pool), chromedp.WaitVisible(`#f-load_shedding-by_load`),
		chromedp.Click(`#f-load_shedding-by_load`),
		retype(`#f-load_shedding-by_load-low`, "0.9"), retype(`#f-load_shedding-by_load-high`, "0.7"),
		chromedp.Click(`#save`), waitFor(`document.getElementById("f-load_shedding-by_load-high-error").textContent !== ""`, 10*time.Second),
		chromedp.Text(`#f-load_shedding-by_load-high-error`, &highErr))
	if !strings.Contains(highErr, "must be above low") {
		t.Errorf("high below low: %q beside the field", highErr)
	}
	drive(t, ctx, "by_load 0.7–0.9", retype(`#f-load_shedding-by_load-low`, "0.7"), retype(`#f-load_shedding-by_load-high`, "0.9"),
		chromedp.Click(`#save`), waitFor(`location.hash === "#config"`, 10*time.Second))
	var p struct {
		Result struct {
			LoadShedding struct {
				ByLoad *struct{ Low, High float64 } `json:"by_load"`
			} `json:"load_shedding"`
		} `json:"result"`
	}
	g.call("GET", "/api/v1/pools/"+pool, nil, &p)
	if b := p.Result.LoadShedding.ByLoad; b == nil || b.Low != 0.7 || b.High != 0.9 {
		t.Errorf("by_load stored: %+v", b)
	}

	g.must("PUT", "/api/v1/pools/"+pool+"/origins/a/feed", map[string]any{"up": false, "reason": "HighErrorRate on a", "ttl": 600, "load": 0.95})
	ctx = nextTab(t, ctx)
	var row, matrix string
	drive(t, ctx, "the pool page shows the word", chromedp.Navigate(ui+"#pool/"+pool),
		waitFor(`document.querySelector('#feeds tr[data-origin="a"]') !== null && document.querySelector('#matrix tr[data-origin="a"]').dataset.healthy === "false"`, 15*time.Second),
		chromedp.Text(`#feeds tr[data-origin="a"]`, &row), chromedp.Text(`#matrix tr[data-origin="a"]`, &matrix))
	for _, want := range []string{"DOWN", "HighErrorRate on a", "0.95", "api at", "UTC", mon} {
		if !strings.Contains(row, want) {
			t.Errorf("the word's row lacks %q: %q", want, row)
		}
	}
	if !strings.Contains(matrix, "api: HighErrorRate on a") {
		t.Errorf("the matrix's reason for a: %q", matrix)
	}
	shot(t, ctx, "pool-feeds")
	phoneShot(t, ctx, "pool-feeds")
}
