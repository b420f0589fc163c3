package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// selectByText picks the option of a select whose text is text, as a
// person reading the list would.
func selectByText(sel, text string) chromedp.Action {
	var ok bool
	return chromedp.Evaluate(fmt.Sprintf(`(() => { const s = document.querySelector(%q);
		const o = [...s.options].find((o) => o.text === %q); if (!o) return false; s.value = o.value; return true; })()`, sel, text), &ok)
}

// nextTab leaves the page of the tab in use, closing its event stream
// (the browser keeps six connections per server, and every console page
// holds one), and opens a new tab with a deadline of its own.
func nextTab(t *testing.T, ctx context.Context) context.Context {
	t.Helper()
	drive(t, ctx, "leave the page", chromedp.Navigate("about:blank"))
	return browserTab(t)
}

// TestConsoleFromEmpty: on a node with nothing configured, the console
// alone walks a newcomer from the empty state to a geo load balancer
// (zone, monitor, two pools, a network, the load balancer), refusing the
// typos on the way, and dig is answered by what was built.
func TestConsoleFromEmpty(t *testing.T) {
	t.Parallel()
	origins := startOrigins(t, "127.0.23.1", "127.0.23.2")
	g := startGlbd(t, "")
	ui := g.api + "/ui/"
	ctx := browserTab(t)

	// The empty state: three steps, each a link to its form, and the way
	// to do the same with glbctl and the API.
	var empty string
	drive(t, ctx, "the empty overview", chromedp.Navigate(ui+"#overview"), chromedp.WaitVisible(`#first-steps`), chromedp.Text(`#main`, &empty))
	shot(t, ctx, "empty")
	for _, want := range []string{"Create a zone", "Create a pool", "Create a load balancer", "Create a monitor first", "glbctl apply", "/api/v1"} {
		if !strings.Contains(empty, want) {
			t.Errorf("the empty state does not show %q:\n%s", want, empty)
		}
	}
	stepDone := func(step string) chromedp.Action {
		return waitFor(fmt.Sprintf(`location.hash === "#overview" && !!document.querySelector('#first-steps li[data-step=%q].done')`, step), 10*time.Second)
	}

	drive(t, ctx, "create the zone",
		chromedp.Click(`#first-steps a[href^="#edit/zones"]`), chromedp.WaitVisible(`#f-name`),
		chromedp.SendKeys(`#f-id`, "example"),
		chromedp.SendKeys(`#f-name`, "glb.example.com"),
		chromedp.SendKeys(`#f-nameservers`, "ns1.glb.example.com"),
		chromedp.SendKeys(`#f-records`, "ns1.glb.example.com A 127.0.0.1\nwww-static.glb.example.com 60 TXT hello world"),
		chromedp.Click(`#save`), stepDone("Zone"))

	drive(t, ctx, "create the monitor",
		chromedp.Click(`#first-steps a[href^="#edit/monitors"]`), chromedp.WaitVisible(`#f-type`),
		chromedp.SendKeys(`#f-description`, "tcp check"),
		chromedp.SetValue(`#f-type`, "tcp"),
		retype(`#f-port`, fmt.Sprint(origins[0].port())), retype(`#f-interval`, "1"), retype(`#f-timeout`, "1"), retype(`#f-retries`, "0"),
		chromedp.Click(`#save`), waitFor(`location.hash === "#overview"`, 10*time.Second))

	// The pool: a typo in the second origin's address is refused beside
	// that address, then corrected. (A tab per part: each has its own
	// deadline.)
	ctx = nextTab(t, ctx)
	var addrErr string
	drive(t, ctx, "create the pool with a typo",
		chromedp.Navigate(ui+"#overview"), chromedp.WaitVisible(`#first-steps`),
		chromedp.Click(`#first-steps a[href^="#edit/pools"]`), chromedp.WaitVisible(`#o0-name`),
		chromedp.SendKeys(`#f-name`, "web-eu"),
		selectByText(`#f-monitor`, "tcp check"),
		chromedp.SendKeys(`#o0-name`, "eu-1"), chromedp.SendKeys(`#o0-address`, origins[0].ip()),
		chromedp.Click(`#add-origin`), chromedp.WaitVisible(`#o1-name`),
		chromedp.SendKeys(`#o1-name`, "eu-2"), chromedp.SendKeys(`#o1-address`, "999.1.1.1"),
		chromedp.Click(`#save`), waitFor(`document.getElementById("o1-address-error").textContent !== ""`, 10*time.Second),
		chromedp.Text(`#o1-address-error`, &addrErr))
	if !strings.Contains(addrErr, `"999.1.1.1" is not an IPv4 address`) {
		t.Errorf("the typo's error beside the address reads %q", addrErr)
	}
	drive(t, ctx, "correct the typo", retype(`#o1-address`, origins[1].ip()), chromedp.Click(`#save`), stepDone("Pool"))

	// A second pool without a monitor, from the configuration page.
	drive(t, ctx, "create an unchecked pool",
		chromedp.Click(`#nav-config`), chromedp.WaitVisible(`#new-pools`), chromedp.Click(`#new-pools`), chromedp.WaitVisible(`#o0-name`),
		chromedp.SendKeys(`#f-name`, "web-us"),
		// The form defaults to the monitor; this pool is left unchecked.
		chromedp.SetValue(`#f-monitor`, ""),
		chromedp.SendKeys(`#o0-name`, "us-1"), chromedp.SendKeys(`#o0-address`, "192.0.2.50"),
		chromedp.Click(`#save`), waitFor(`location.hash === "#config" && !!document.querySelector('section[data-kind=pools]')?.innerText.includes("web-us")`, 10*time.Second))

	// The network that places this machine's clients in Great Britain:
	// UK is refused with the code meant.
	ctx = nextTab(t, ctx)
	var countryErr string
	drive(t, ctx, "create the network with UK",
		chromedp.Navigate(ui+"#config"), chromedp.WaitVisible(`#new-networks`),
		chromedp.Click(`#new-networks`), chromedp.WaitVisible(`#f-cidr`),
		chromedp.SendKeys(`#f-cidr`, "127.0.0.0/8"), chromedp.SendKeys(`#f-country`, "UK"), chromedp.SetValue(`#f-region`, "WEU"),
		chromedp.Click(`#save`), waitFor(`document.getElementById("f-country-error").textContent !== ""`, 10*time.Second),
		chromedp.Text(`#f-country-error`, &countryErr))
	if !strings.Contains(countryErr, `did you mean "GB"?`) {
		t.Errorf("the country's error reads %q", countryErr)
	}
	drive(t, ctx, "correct the country", retype(`#f-country`, "GB"), chromedp.Click(`#save`), waitFor(`location.hash === "#config"`, 10*time.Second))

	drive(t, ctx, "create the geo load balancer",
		chromedp.Click(`#nav-overview`), chromedp.WaitVisible(`#first-steps`),
		chromedp.Click(`#first-steps a[href^="#edit/load_balancers"]`), chromedp.WaitVisible(`#f-default_pools`),
		chromedp.SendKeys(`#f-name`, "www.glb.example.com"),
		chromedp.SetValue(`#f-steering_policy`, "geo"),
		chromedp.SendKeys(`#f-default_pools`, "web-us"),
		selectByText(`#f-fallback_pool`, "web-us"),
		chromedp.SendKeys(`#f-country_pools`, "GB: web-eu"),
		chromedp.SendKeys(`#f-region_pools`, "WEU: web-eu, web-us"),
		chromedp.Click(`#save`), waitFor(`location.hash === "#overview" && !!document.querySelector('section[data-lb="www.glb.example.com"]')`, 10*time.Second))

	// dig is answered from web-eu: this machine is in GB by the network.
	eu := []string{origins[0].ip(), origins[1].ip()}
	eventually(t, 20*time.Second, "dig answered from web-eu", func() (bool, string) {
		ans, status := dig(t, g.dns, "www.glb.example.com", "A")
		return status == "NOERROR" && len(ans) == 1 && slices.Contains(eu, ans[0]), fmt.Sprint(status, ans)
	})
	if ans, status := dig(t, g.dns, "www-static.glb.example.com", "TXT"); status != "NOERROR" || len(ans) != 1 {
		t.Errorf("the static TXT record: %s %v", status, ans)
	}

	// The overview tells where each mapping is answered from now, and the
	// origin no monitor checks reads "not checked".
	ctx = nextTab(t, ctx)
	var gbNow, weuNow, usState, usText string
	drive(t, ctx, "the geo overview", chromedp.Navigate(ui+"#overview"),
		waitFor(`!!document.querySelector('tr[data-mapping="GB"]') && document.querySelector('tr[data-pool="web-eu"] li[data-origin="eu-2"]')?.dataset.state === "up"`, 20*time.Second),
		chromedp.AttributeValue(`tr[data-mapping="GB"]`, "data-now", &gbNow, nil),
		chromedp.AttributeValue(`tr[data-mapping="WEU"]`, "data-now", &weuNow, nil),
		chromedp.AttributeValue(`li[data-origin="us-1"]`, "data-state", &usState, nil),
		chromedp.Text(`li[data-origin="us-1"]`, &usText))
	shot(t, ctx, "geo-overview")
	if gbNow != "web-eu" || weuNow != "web-eu" {
		t.Errorf("mappings answered now: GB %q, WEU %q; want web-eu for both", gbNow, weuNow)
	}
	if usState != "not_checked" || !strings.Contains(usText, "not checked") {
		t.Errorf("the unchecked origin reads %q (state %q)", usText, usState)
	}

	// A deep link to explain fills the form and explains at once; an
	// ECS subnet that prefer_ecs never sets aside is named, in the ignored
	// list and in the scope line (not as "no ECS subnet"), and the sets
	// have their legend.
	g.must("PATCH", "/api/v1/load_balancers/"+lbID(t, g, "www.glb.example.com"), map[string]any{"location_strategy": map[string]any{"prefer_ecs": "never"}})
	ctx = nextTab(t, ctx)
	var ign, legend, scope string
	drive(t, ctx, "explain by deep link",
		chromedp.Navigate(ui+"#explain?lb=www.glb.example.com&client=198.51.100.7&ecs=127.0.0.0/24"),
		chromedp.WaitVisible(`#x-ignored li[data-what="ecs"]`),
		chromedp.Text(`#x-ignored`, &ign), chromedp.Text(`dl.legend`, &legend), chromedp.Text(`#x-scope-why`, &scope))
	if !strings.Contains(ign, "127.0.0.0/24 was not used") || !strings.Contains(ign, "prefer_ecs is never") {
		t.Errorf("explain's ignored list reads %q", ign)
	}
	if !strings.Contains(scope, "the query's ECS subnet 127.0.0.0/24 was not used") || strings.Contains(scope, "carried no ECS") {
		t.Errorf("explain's scope line reads %q", scope)
	}
	if !strings.Contains(legend, "original eligible") || !strings.Contains(legend, "modified eligible") {
		t.Errorf("the sets' legend reads %q", legend)
	}

	// Stopping eu-1 and eu-2 moves the GB mapping to the next pool in
	// its order (the default pool web-us), and the overview says so.
	origins[0].stop()
	origins[1].stop()
	drive(t, ctx, "the GB mapping fails over", chromedp.Navigate(ui+"#overview"),
		waitFor(`document.querySelector('tr[data-mapping="GB"]')?.dataset.now === "web-us"`, 30*time.Second))

	drive(t, ctx, "the unchecked pool's page",
		chromedp.Click(`tr[data-pool="web-us"] a`), chromedp.WaitVisible(`#matrix tr[data-origin="us-1"]`))
	var matrix string
	drive(t, ctx, "read the matrix", chromedp.Text(`#matrix tr[data-origin="us-1"]`, &matrix))
	shot(t, ctx, "not-checked")
	if !strings.Contains(matrix, "not checked") {
		t.Errorf("the matrix row of us-1 reads %q", matrix)
	}

	// Edit and delete: the network is removed from its edit page with
	// If-Match, and a pool still in use refuses with who uses it.
	ctx = nextTab(t, ctx)
	var used string
	drive(t, ctx, "delete a pool in use", chromedp.Navigate(ui+"#overview"), chromedp.WaitVisible(`#nav-config`),
		chromedp.Click(`#nav-config`), chromedp.WaitVisible(`section[data-kind=pools] a`),
		chromedp.Click(`section[data-kind=pools] li:last-child a`), chromedp.WaitVisible(`#delete`),
		chromedp.Click(`#delete`), chromedp.Click(`#delete-confirm`),
		waitFor(`document.getElementById("delete-status").textContent.startsWith("Not deleted")`, 10*time.Second),
		chromedp.Text(`#delete-status`, &used))
	if !strings.Contains(used, "load balancer") {
		t.Errorf("deleting a pool in use reads %q", used)
	}
	// The refusal disarms the confirmation and links to the user.
	var armed bool
	var link string
	drive(t, ctx, "the refusal", chromedp.Evaluate(`!document.getElementById("delete-confirm").hidden`, &armed),
		chromedp.AttributeValue(`#delete-status a[data-referrer]`, "href", &link, nil))
	if armed || !strings.HasPrefix(link, "#edit/load_balancers/") {
		t.Errorf("after the refusal: confirmation armed %v, link to the user %q", armed, link)
	}
	drive(t, ctx, "delete the network",
		chromedp.Click(`#nav-config`), chromedp.WaitVisible(`section[data-kind=networks] a`),
		chromedp.Click(`section[data-kind=networks] a`), chromedp.WaitVisible(`#delete`),
		chromedp.Click(`#delete`), chromedp.Click(`#delete-confirm`),
		waitFor(`location.hash === "#config" && !!document.querySelector('section[data-kind=networks]')?.innerText.includes("No networks yet")`, 10*time.Second))
}
