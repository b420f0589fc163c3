package main

import (
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// TestConsoleNotifications: the console adds a subscription and shows
// its signing secret once, refuses a URL that is not http(s) with the
// API's message beside the field, lists the subscription without its
// secret, and its test button sends an event that a receiver verifies
// with that secret and that the delivery log shows delivered.
func TestConsoleNotifications(t *testing.T) {
	t.Parallel()
	rcv := newHookReceiver(t)
	g := startGlbd(t, "", "--notify-poll", "200ms", "--outbound-allow", "127.0.0.1")
	ui := g.api + "/ui/"
	ctx := browserTab(t)
	if err := chromedp.Run(ctx, cdpbrowser.GrantPermissions([]cdpbrowser.PermissionType{cdpbrowser.PermissionTypeClipboardSanitizedWrite})); err != nil {
		t.Fatal(err)
	}
	// With no subscription the page says so; the first one added hides it.
	drive(t, ctx, "empty", chromedp.Navigate(ui+"#notifications"), chromedp.WaitVisible(`#n-empty`))
	// The events in words, which are sent said in full; the PagerDuty
	// key only for that format.
	var events, chosen string
	var keyShown, keyForPD, keyBack bool
	drive(t, ctx, "the form", chromedp.Text(`#n-events`, &events), chromedp.Text(`#n-chosen`, &chosen),
		chromedp.Evaluate(`document.getElementById("n-routing-key").offsetParent !== null`, &keyShown),
		chromedp.SetValue(`#n-format`, "pagerduty"), chromedp.Evaluate(`document.getElementById("n-format").dispatchEvent(new Event("change"))`, nil),
		chromedp.Evaluate(`document.getElementById("n-routing-key").offsetParent !== null`, &keyForPD),
		chromedp.SetValue(`#n-format`, "standard"), chromedp.Evaluate(`document.getElementById("n-format").dispatchEvent(new Event("change"))`, nil),
		chromedp.Evaluate(`document.getElementById("n-routing-key").offsetParent !== null`, &keyBack),
		chromedp.Click(`#n-ev-failover`), chromedp.Text(`#n-chosen`, &chosen),
		chromedp.Click(`#n-ev-failover`))
	if !strings.Contains(events, "a load balancer answers from another pool") || !strings.Contains(events, "a rollout steps") {
		t.Errorf("the events read %q", events)
	}
	if keyShown || !keyForPD || keyBack {
		t.Errorf("the routing key shows for standard %v, for pagerduty %v, back to standard %v; want only for pagerduty", keyShown, keyForPD, keyBack)
	}
	if chosen != "Sent: 2 events (origin_health, pool_health)." {
		t.Errorf("with failover unticked the form says %q", chosen)
	}
	drive(t, ctx, "refuse a URL that is not http(s)", chromedp.WaitVisible(`#n-form`),
		retype(`#n-name`, "oncall"), retype(`#n-url`, "ftp://hooks.example.com/glb"), chromedp.Click(`#n-submit`),
		waitFor(`document.querySelector('#n-url-error').textContent.includes('http or https')`, 5*time.Second))
	drive(t, ctx, "refuse a private receiver, naming the rule", retype(`#n-url`, "http://10.1.2.3/glb"), chromedp.Click(`#n-submit`),
		waitFor(`document.querySelector('#n-url-error').textContent.includes('private 10.0.0.0/8')`, 5*time.Second))
	var secret string
	drive(t, ctx, "add a subscription", retype(`#n-url`, rcv.URL+"/console"), chromedp.Click(`#n-submit`),
		waitFor(`document.querySelector('#n-secret-value') !== null`, 5*time.Second),
		chromedp.Text(`#n-secret-value`, &secret))
	shot(t, ctx, "notifications")
	phoneShot(t, ctx, "notifications")
	// The form starts again; the secret has a copy button.
	var left string
	drive(t, ctx, "after adding", chromedp.Value(`#n-name`, &left))
	copied, took, said := clickCopy(t, ctx, "n-copy-secret", "n-copy-status")
	if left != "" || copied != secret {
		t.Errorf("after adding: the name field keeps %q; %q copied", left, copied)
	}
	if took != strings.Contains(said, "Copied.") || (!took && !strings.Contains(said, "refused")) {
		t.Errorf("the browser took the copy %v, and the page says %q", took, said)
	}
	drive(t, ctx, "no longer empty", waitFor(`document.getElementById('n-empty').hidden`, 5*time.Second))
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("secret shown %q", secret)
	}
	rcv.SetSecret("/console", secret)
	// A fresh page lists it, without the secret. A reload, not two hash
	// changes: those re-render in the same document, and the row waited
	// for could be the old view's, secret and all.
	var body string
	drive(t, ctx, "list", chromedp.Reload(),
		waitFor(`document.querySelector('#n-table tr[data-name="oncall"]') !== null`, 5*time.Second),
		chromedp.Text(`body`, &body))
	if strings.Contains(body, secret[6:]) {
		t.Fatal("the list shows the secret")
	}
	drive(t, ctx, "send a test event", chromedp.Click(`#n-table tr[data-name="oncall"] button.test`),
		waitFor(`document.querySelector('#d-table tr[data-type="test"][data-status="delivered"]') !== null`, 10*time.Second))
	shot(t, ctx, "notification-deliveries")
	var count string
	drive(t, ctx, "the count", chromedp.Text(`#d-count`, &count))
	if count != "1 delivery, newest first." {
		t.Errorf("the deliveries count reads %q", count)
	}
	hs := rcv.hooks("/console")
	if len(hs) != 1 || hs[0].bad != "" || hs[0].event.Type != "test" {
		t.Fatalf("the receiver got %s", describeHooks(hs))
	}
}
