package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/glb-dns/glb/internal/birdtest"
)

// TestConsoleNodes: the console's Nodes page lists the node serving with
// its region, listener, BGP session (to a real BIRD) and the prefix it
// announces, drains it with a reason (the row turns draining, nothing
// announced, then drained after the grace, without a reload), refuses a
// drain without a reason, and undrains it.
func TestConsoleNodes(t *testing.T) {
	t.Parallel()
	const admin = "nodes-console-admin"
	bird := birdtest.Start(t, birdtest.Config{Local: "127.0.0.2", ASN: 65000,
		Neighbors: []birdtest.Neighbor{{Name: "edge7", Addr: "127.0.0.1", ASN: 65001}}})
	g := startGlbd(t, "", "--api-token", admin, "--node", "edge-7", "--region", "WEU", "--drain-grace", "5s",
		"--bgp-asn", "65001", "--bgp-router-id", "192.0.2.1", "--bgp-peer", "127.0.0.2:"+strconv.Itoa(bird.Port)+",65000",
		"--anycast", "192.0.2.58/32", "--bgp-hold-time", "3s")
	ctx := browserTab(t)
	row := `document.querySelector('tr[data-node="edge-7"]')`
	drive(t, ctx, "sign in, the node listed serving", chromedp.Navigate(g.api+"/ui/#nodes"), chromedp.WaitVisible(`#token`),
		chromedp.SendKeys(`#token`, admin+kb.Enter), chromedp.WaitVisible(`#n-table`),
		waitFor(row+`?.dataset.state === "serving"`, 10*time.Second))
	bgpCell := `document.querySelector('tr[data-node="edge-7"] td[data-label="BGP"]')?.textContent`
	drive(t, ctx, "the session up and the prefix announced", waitFor(bgpCell+` === "1/1 established; 192.0.2.58/32"`, 20*time.Second))
	var text string
	drive(t, ctx, "read the row", chromedp.Text(`tr[data-node="edge-7"]`, &text))
	if !strings.Contains(text, "WEU") || !strings.Contains(text, g.dns) {
		t.Fatalf("the row shows %q, want the region and %s", text, g.dns)
	}
	// At a desktop's width the drain controls are on screen, not behind
	// the table's sideways scroll.
	var hidden bool
	drive(t, ctx, "desktop width", chromedp.EmulateViewport(1280, 800),
		chromedp.Evaluate(`(() => { const w = document.getElementById("n-table").closest(".table-wrap"); return w.scrollWidth > w.clientWidth; })()`, &hidden))
	if hidden {
		t.Errorf("at 1280 px the nodes table scrolls sideways: its drain controls are off screen")
	}
	shot(t, ctx, "nodes")
	phoneShot(t, ctx, "nodes")
	var said string
	drive(t, ctx, "drain without a reason", chromedp.Click(`#n-edge-7-drain`),
		waitFor(`document.getElementById("n-edge-7-status").textContent !== ""`, 5*time.Second), chromedp.Text(`#n-edge-7-status`, &said))
	if !strings.Contains(said, "why") {
		t.Fatalf("no reason: %q", said)
	}
	drive(t, ctx, "drain", chromedp.SendKeys(`#n-edge-7-reason`, "kernel upgrade"), chromedp.Click(`#n-edge-7-drain`),
		chromedp.WaitVisible(`#n-flash`), waitFor(row+`?.dataset.state === "draining"`, 10*time.Second),
		waitFor(bgpCell+` === "1/1 established; nothing announced"`, 10*time.Second),
		waitFor(row+`?.dataset.state === "drained"`, 15*time.Second))
	drive(t, ctx, "undrain", chromedp.Click(`#n-edge-7-undrain`), waitFor(row+`?.dataset.state === "serving"`, 10*time.Second))
	var audit struct {
		Result []struct {
			Action string `json:"action"`
			Actor  string `json:"actor"`
		} `json:"result"`
	}
	g.token = admin
	g.call("GET", "/api/v1/audit?kind=nodes", nil, &audit)
	if len(audit.Result) != 2 || audit.Result[0].Action != "undrain" || audit.Result[1].Action != "drain" || audit.Result[1].Actor != "bootstrap" {
		t.Fatalf("audit: %+v", audit.Result)
	}
}
