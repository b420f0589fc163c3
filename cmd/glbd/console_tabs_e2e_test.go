package main

import (
	"testing"

	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// TestBrowserTabsKeepDrawing checks the console tests' harness: a tab
// opened by one test still draws (its animation frames run) once a
// parallel test has opened another. Tabs sharing a window hid each other,
// and a test waiting for a redraw in a covered tab timed out.
func TestBrowserTabsKeepDrawing(t *testing.T) {
	t.Parallel()
	first := browserTab(t)
	drive(t, first, "the first tab", chromedp.Navigate("about:blank"))
	drive(t, browserTab(t), "a second tab", chromedp.Navigate("about:blank"))
	var shown string
	var drew bool
	drive(t, first, "the first tab again", chromedp.Evaluate(`document.visibilityState`, &shown),
		chromedp.Evaluate(`new Promise((res) => { requestAnimationFrame(() => res(true)); setTimeout(() => res(false), 2000); })`, &drew,
			func(p *cdpruntime.EvaluateParams) *cdpruntime.EvaluateParams { return p.WithAwaitPromise(true) }))
	if shown != "visible" || !drew {
		t.Fatalf("after a second tab opened, the first is %s and ran an animation frame: %v", shown, drew)
	}
}
