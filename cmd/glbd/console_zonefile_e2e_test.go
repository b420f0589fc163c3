package main

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestConsoleZoneImport: on a zone's page the console reads a pasted
// file, shows the dry run's diff with nothing stored, imports that file
// on request, names the line of each error of a bad file, and shows who
// may transfer the zone.
func TestConsoleZoneImport(t *testing.T) {
	t.Parallel()
	const admin = "zonefile-console-admin"
	g := startGlbd(t, "", "--api-token", admin)
	g.token = admin
	zoneID := zoneFor(t, g)
	ctx := browserTab(t)
	drive(t, ctx, "sign in", chromedp.Navigate(g.api+"/ui/#edit/zones/"+zoneID), chromedp.WaitVisible(`#token`),
		chromedp.SendKeys(`#token`, admin+kb.Enter), chromedp.WaitVisible(`#zonefile-text`), chromedp.WaitVisible(`#transfer-settings`))

	var settings string
	drive(t, ctx, "transfer card", chromedp.Text(`#transfer-settings`, &settings))
	if !strings.Contains(settings, "No secondary may transfer") {
		t.Errorf("transfer card: %q", settings)
	}

	records := func() int {
		z := g.must("GET", "/api/v1/zones/"+zoneID, nil)
		return len(z["records"].([]any))
	}
	before := records()
	file := "$ORIGIN glb.example.com.\nptr 600 IN PTR web.glb.example.com.\n"
	var summary, status string
	drive(t, ctx, "dry run", chromedp.SetValue(`#zonefile-text`, file), chromedp.Click(`#zonefile-preview`),
		waitFor(`document.getElementById("zonefile-summary") !== null`, 10*time.Second),
		chromedp.Text(`#zonefile-summary`, &summary), chromedp.Text(`#zonefile-status`, &status))
	if !strings.HasPrefix(summary, "1 to add, 0 to remove") || !strings.Contains(status, "nothing stored") {
		t.Errorf("dry run: %q, %q", summary, status)
	}
	if n := records(); n != before {
		t.Fatalf("a dry run stored records: %d, was %d", n, before)
	}
	drive(t, ctx, "import", chromedp.Click(`#zonefile-apply`),
		waitFor(`document.getElementById("zonefile-status").textContent.startsWith("Imported")`, 10*time.Second))
	if n := records(); n != before+1 {
		t.Errorf("after the import the zone has %d records, want %d", n, before+1)
	}

	var errs string
	drive(t, ctx, "bad file", chromedp.SetValue(`#zonefile-text`, "$ORIGIN glb.example.com.\nx.other.example. IN A 192.0.2.1\n"),
		chromedp.Click(`#zonefile-preview`), waitFor(`document.querySelector("#zonefile-errors li") !== null`, 10*time.Second),
		chromedp.Text(`#zonefile-errors`, &errs))
	if !strings.Contains(errs, "line 2: ") {
		t.Errorf("errors shown: %q", errs)
	}
	var disabled bool
	drive(t, ctx, "nothing to apply", chromedp.Evaluate(`document.getElementById("zonefile-apply").disabled`, &disabled))
	if !disabled {
		t.Error("a refused file can still be imported")
	}
}
