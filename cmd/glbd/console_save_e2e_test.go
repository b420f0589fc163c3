package main

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"
)

// TestConsoleSaveOutlivesItsEvent holds the pool page's answers in the
// browser and lets them through in the one order that once left a saved
// pool showing "Saving…" for good: the save's own redraw finishing before
// the redraw that the save's revision event asked for. The event's redraw
// carried whatever the status line said when its check was answered, and
// that was still "Saving…".
func TestConsoleSaveOutlivesItsEvent(t *testing.T) {
	t.Parallel()
	g := startGlbd(t, "")
	// No monitor: no health events, so every answer held below is one
	// this test expects.
	id := g.must("POST", "/api/v1/pools", map[string]any{"name": "held", "origins": []map[string]any{
		{"name": "h1", "address": "192.0.2.31"}, {"name": "h2", "address": "192.0.2.32"},
	}})["id"].(string)
	ctx := browserTab(t)
	drive(t, ctx, "open the pool", chromedp.Navigate(g.api+"/ui/#pool/"+id), chromedp.WaitVisible(`#o1-name`),
		waitFor(`document.querySelector('[data-state]')?.dataset.state === "live"`, 10*time.Second))

	// Every answer about this pool is held once the server has given it.
	held := make(chan *fetch.EventRequestPaused, 16)
	chromedp.ListenTarget(ctx, func(ev any) {
		if ev, ok := ev.(*fetch.EventRequestPaused); ok {
			held <- ev
		}
	})
	drive(t, ctx, "hold the pool's answers", fetch.Enable().WithPatterns([]*fetch.RequestPattern{
		{URLPattern: "*/api/v1/pools/" + id + "*", RequestStage: fetch.RequestStageResponse},
	}))
	pool := g.api + "/api/v1/pools/" + id
	// next returns the next answer held, which must be to method.
	next := func(method string) *fetch.EventRequestPaused {
		t.Helper()
		select {
		case ev := <-held:
			if ev.Request.Method != method || !strings.HasPrefix(ev.Request.URL, pool) {
				t.Fatalf("held %s %s, want %s %s…", ev.Request.Method, ev.Request.URL, method, pool)
			}
			return ev
		case <-time.After(20 * time.Second):
			t.Fatalf("nothing held, want %s %s…", method, pool)
			return nil
		}
	}
	release := func(evs ...*fetch.EventRequestPaused) {
		t.Helper()
		for _, ev := range evs {
			drive(t, ctx, "release "+ev.Request.URL, fetch.ContinueRequest(ev.RequestID))
		}
	}

	drive(t, ctx, "remove h1 and save", chromedp.Click(`tr[data-origin="h1"] button.remove`), chromedp.Click(`#save`))
	patch := next("PATCH")
	// The write is stored: its revision event reaches the page, which
	// asks whether the pool changed.
	check := next("GET")
	release(patch) // the save is answered and loads the page again
	saveRedraw := []*fetch.EventRequestPaused{next("GET"), next("GET")}
	release(check)                                                       // the pool did change, and nothing is being edited:
	eventRedraw := []*fetch.EventRequestPaused{next("GET"), next("GET")} // so the event loads it again too
	release(saveRedraw...)
	drive(t, ctx, "the save's page", waitFor(`document.getElementById("pool-status")?.textContent.startsWith("Saved") && !document.getElementById("o1-name")`, 10*time.Second),
		// Marked, to tell when the event's page replaces it.
		chromedp.Evaluate(`document.getElementById("pool-status").dataset.drawnBy = "save"`, nil))
	release(eventRedraw...)
	var status string
	drive(t, ctx, "the event's page", waitFor(`!document.getElementById("pool-status")?.dataset.drawnBy && !!document.getElementById("pool-status")`, 10*time.Second),
		chromedp.Text(`#pool-status`, &status, chromedp.ByID), fetch.Disable())
	if !strings.HasPrefix(status, "Saved") {
		t.Fatalf("after the save and its event, the pool page says %q", status)
	}
	if w := poolWeights(t, g, id); len(w) != 1 || w["h2"] != 1 {
		t.Fatalf("stored origins %v", w)
	}
}
