package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
)

// firstHourCountries are the GeoIP fixture's countries: an ECS subnet of
// each, and the pool the geo load balancer maps it to.
var firstHourCountries = []struct{ country, continent, subnet, pool string }{
	{"GB", "EU", "198.51.100.0/24", "eu"},
	{"DE", "EU", "192.0.2.0/24", "eu"},
	{"US", "NA", "203.0.113.0/24", "us"},
}

// writeCountryDB writes a GeoLite2-Country database placing each of
// firstHourCountries' subnets in its country.
func writeCountryDB(t *testing.T) string {
	t.Helper()
	tree, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: "GeoLite2-Country", RecordSize: 28, IncludeReservedNetworks: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range firstHourCountries {
		_, n, err := net.ParseCIDR(c.subnet)
		if err != nil {
			t.Fatal(err)
		}
		rec := mmdbtype.Map{
			"country":   mmdbtype.Map{"iso_code": mmdbtype.String(c.country), "names": mmdbtype.Map{"en": mmdbtype.String(c.country)}},
			"continent": mmdbtype.Map{"code": mmdbtype.String(c.continent)},
		}
		if err := tree.Insert(n, rec); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "country.mmdb")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tree.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestConsoleFirstHour walks the first hour from an empty node, in the
// console alone, at a desktop's and a phone's size: the guide comes
// first; a zone; a monitor, which the pool form then defaults to; the
// addresses that look like IPs but are not refused beside the address,
// and one pasted with spaces trimmed; two pools; a geo load balancer
// made with the form's defaults. For three countries' ECS subnets the
// overview's answer is dig's. A shift reads amber, "deliberate", with its
// reason, on the overview and in the traffic preview; the versions say
// what changed, and a rollback shows the diff it would apply.
func TestConsoleFirstHour(t *testing.T) {
	t.Parallel()
	for i, vp := range []struct {
		name string
		w, h int64
	}{{"desktop", 1280, 800}, {"phone", 390, 844}} {
		t.Run(vp.name, func(t *testing.T) {
			t.Parallel()
			firstHour(t, vp.name, vp.w, vp.h, fmt.Sprintf("127.0.%d.", 38+i))
		})
	}
}

func firstHour(t *testing.T, name string, w, h int64, net3 string) {
	origins := startOrigins(t, net3+"1", net3+"2")
	pool := map[string]string{origins[0].ip(): "eu", origins[1].ip(): "us"}
	g := startGlbd(t, "", "--geoip-db", writeCountryDB(t))
	ui := g.api + "/ui/"
	prefix := ""
	if name == "phone" {
		prefix = "phone-"
	}
	ctx := browserTab(t)
	size := chromedp.EmulateViewport(w, h)

	// The guide first: above the shifts, and on a phone within the screen.
	var guideTop, shiftsTop float64
	drive(t, ctx, "the empty overview", size, chromedp.Navigate(ui+"#overview"), chromedp.WaitVisible(`#first-steps`),
		chromedp.Evaluate(`document.getElementById("first-steps").getBoundingClientRect().top`, &guideTop),
		chromedp.Evaluate(`document.getElementById("shifts").getBoundingClientRect().top`, &shiftsTop))
	shot(t, ctx, prefix+"first-hour-empty")
	if guideTop > shiftsTop || guideTop > float64(h)/2 {
		t.Errorf("the guide starts at %.0f px, the shifts at %.0f px: want the guide first, in the upper half of the %d px screen", guideTop, shiftsTop, h)
	}
	stepDone := func(step string) chromedp.Action {
		return waitFor(fmt.Sprintf(`location.hash === "#overview" && !!document.querySelector('#first-steps li[data-step=%q].done')`, step), 15*time.Second)
	}
	drive(t, ctx, "create the zone",
		chromedp.Click(`#first-steps a[href^="#edit/zones"]`), chromedp.WaitVisible(`#f-name`),
		chromedp.SendKeys(`#f-name`, "glb.example.com"),
		chromedp.SendKeys(`#f-nameservers`, "ns1.glb.example.com"),
		chromedp.SendKeys(`#f-records`, "ns1.glb.example.com A 127.0.0.1"),
		chromedp.Click(`#save`), stepDone("Zone"))
	drive(t, ctx, "create the monitor",
		chromedp.Click(`#first-steps a[href^="#edit/monitors"]`), chromedp.WaitVisible(`#f-type`),
		chromedp.SendKeys(`#f-description`, "tcp check"),
		chromedp.SetValue(`#f-type`, "tcp"),
		retype(`#f-port`, fmt.Sprint(origins[0].port())), retype(`#f-interval`, "1"), retype(`#f-timeout`, "1"), retype(`#f-retries`, "0"),
		chromedp.Click(`#save`), waitFor(`location.hash === "#overview"`, 15*time.Second))

	// The pool form defaults to the monitor just made; each address that
	// looks like an IP but is not one is refused beside it, saying what
	// is wrong; one pasted with spaces is trimmed.
	ctx = nextTab(t, ctx)
	var monitor, hint string
	drive(t, ctx, "the pool form", size, chromedp.Navigate(ui+"#overview"), chromedp.WaitVisible(`#first-steps`),
		chromedp.Click(`#first-steps a[href^="#edit/pools"]`), chromedp.WaitVisible(`#o0-name`),
		chromedp.Evaluate(`document.getElementById("f-monitor").selectedOptions[0].text`, &monitor),
		chromedp.Text(`#f-origins-hint`, &hint))
	if monitor != "tcp check" {
		t.Errorf("the new pool's monitor is %q, want the monitor just made", monitor)
	}
	if !strings.Contains(hint, "Weight: a share in [0, 1]") || !strings.Contains(hint, "hostname (answered as a CNAME)") {
		t.Errorf("the origins' hint reads %q", hint)
	}
	drive(t, ctx, "name the pool", chromedp.SendKeys(`#f-id`, "eu"), chromedp.SendKeys(`#f-name`, "eu"), chromedp.SendKeys(`#o0-name`, "eu-1"))
	for addr, want := range map[string]string{
		"127.0.0.1O":       `"127.0.0.1O" is not an IPv4 address: it has a letter among its numbers`,
		"127.0.0.2:18001":  `"127.0.0.2:18001" has a port (:18001); give the address alone ("127.0.0.2")`,
		"http://127.0.0.2": `"http://127.0.0.2" is a URL; give the address alone ("127.0.0.2")`,
	} {
		var msg string
		drive(t, ctx, "address "+addr, chromedp.Evaluate(`document.getElementById("o0-address-error").textContent = ""`, nil),
			retype(`#o0-address`, addr), chromedp.Click(`#save`),
			waitFor(`document.getElementById("o0-address-error").textContent !== ""`, 15*time.Second),
			chromedp.Text(`#o0-address-error`, &msg))
		if !strings.Contains(msg, want) {
			t.Errorf("address %q: beside it %q, want %q", addr, msg, want)
		}
	}
	shot(t, ctx, prefix+"first-hour-pool-form")
	var none struct{ Result []any }
	if st := g.call("GET", "/api/v1/pools", nil, &none); st != 200 || len(none.Result) != 0 {
		t.Errorf("after the refusals: %d, %d pools stored", st, len(none.Result))
	}
	drive(t, ctx, "an address pasted with spaces", retype(`#o0-address`, "  "+origins[0].ip()+" "), chromedp.Click(`#save`), stepDone("Pool"))
	drive(t, ctx, "the second pool",
		chromedp.Click(`#nav-config`), chromedp.WaitVisible(`#new-pools`), chromedp.Click(`#new-pools`), chromedp.WaitVisible(`#o0-name`),
		chromedp.SendKeys(`#f-id`, "us"), chromedp.SendKeys(`#f-name`, "us"),
		chromedp.SendKeys(`#o0-name`, "us-1"), chromedp.SendKeys(`#o0-address`, origins[1].ip()),
		chromedp.Click(`#save`), waitFor(`location.hash === "#config"`, 15*time.Second))
	var stored struct {
		Result struct {
			Monitor string
			Origins []struct{ Address string }
		}
	}
	if st := g.call("GET", "/api/v1/pools/us", nil, nil); st != 200 {
		t.Fatalf("pool us: %d", st)
	}
	g.call("GET", "/api/v1/pools/eu", nil, &stored)
	if stored.Result.Monitor == "" || len(stored.Result.Origins) != 1 || stored.Result.Origins[0].Address != origins[0].ip() {
		t.Errorf("pool eu stored as %+v: want the monitor and the trimmed address", stored.Result)
	}

	// A geo load balancer with the form's defaults: its ECS choice follows
	// the policy.
	ctx = nextTab(t, ctx)
	var prefer string
	drive(t, ctx, "the geo load balancer", size, chromedp.Navigate(ui+"#overview"), chromedp.WaitVisible(`#first-steps`),
		chromedp.Click(`#first-steps a[href^="#edit/load_balancers"]`), chromedp.WaitVisible(`#f-default_pools`),
		chromedp.Evaluate(`document.getElementById("f-location_strategy-prefer_ecs").selectedOptions[0].text`, &prefer),
		chromedp.SendKeys(`#f-id`, "www"),
		chromedp.SendKeys(`#f-name`, "www.glb.example.com"),
		chromedp.SetValue(`#f-steering_policy`, "geo"),
		chromedp.SendKeys(`#f-default_pools`, "us"),
		selectByText(`#f-fallback_pool`, "us"),
		chromedp.SendKeys(`#f-country_pools`, "GB: eu\nDE: eu\nUS: us"),
		chromedp.ScrollIntoView(`#f-location_strategy-prefer_ecs`))
	shot(t, ctx, prefix+"first-hour-lb-form")
	drive(t, ctx, "save the geo load balancer",
		chromedp.Click(`#save`), waitFor(`location.hash === "#overview" && !!document.querySelector('section[data-lb="www.glb.example.com"]')`, 15*time.Second))
	if !strings.Contains(prefer, "when the steering uses the client's location (default)") {
		t.Errorf("the form's ECS choice reads %q", prefer)
	}

	// For each country's ECS subnet, the overview's answer is dig's.
	drive(t, ctx, "the mappings", waitFor(`["GB", "DE", "US"].every((c) => document.querySelector('tr[data-mapping="' + c + '"]')?.dataset.now) &&
		document.querySelector('tr[data-pool="eu"] li[data-origin="eu-1"]')?.dataset.state === "up" &&
		document.querySelector('tr[data-pool="us"] li[data-origin="us-1"]')?.dataset.state === "up"`, 30*time.Second))
	shot(t, ctx, prefix+"first-hour-overview")
	for _, c := range firstHourCountries {
		var now, ecs, clients string
		drive(t, ctx, "the "+c.country+" row",
			chromedp.AttributeValue(`tr[data-mapping="`+c.country+`"]`, "data-now", &now, nil),
			chromedp.AttributeValue(`tr[data-mapping="`+c.country+`"]`, "data-ecs", &ecs, nil),
			chromedp.Text(`tr[data-mapping="`+c.country+`"] .clients`, &clients))
		if ecs != "true" || !strings.Contains(clients, "with ECS: subnets in "+c.country) || !strings.Contains(clients, "without ECS: resolvers in "+c.country) {
			t.Errorf("%s: the row is about %q (data-ecs %s)", c.country, clients, ecs)
		}
		eventually(t, 20*time.Second, "dig +subnet="+c.subnet+" agrees with the overview", func() (bool, string) {
			ans, status := dig(t, g.dns, "www.glb.example.com", "A", "+subnet="+c.subnet)
			return status == "NOERROR" && len(ans) == 1 && pool[ans[0]] == now && now == c.pool,
				fmt.Sprintf("dig %s %v (pool %s), overview %s, mapped to %s", status, ans, pool[slices.Concat(ans, []string{""})[0]], now, c.pool)
		})
	}

	// A shift is deliberate: amber, with its reason, not a red problem.
	const reason = "maintenance window 42"
	var lbClass, shiftText, color string
	drive(t, ctx, "start the shift",
		chromedp.SetValue(`#s-kind`, "pool"), chromedp.SendKeys(`#s-target`, "eu"), chromedp.SendKeys(`#s-reason`, reason),
		chromedp.Click(`#s-submit`),
		waitFor(`!!document.querySelector('section[data-lb="www.glb.example.com"] .shift-text')`, 15*time.Second),
		chromedp.AttributeValue(`section[data-lb="www.glb.example.com"]`, "class", &lbClass, nil),
		chromedp.Text(`section[data-lb="www.glb.example.com"] .shift-text`, &shiftText),
		chromedp.Evaluate(`getComputedStyle(document.querySelector('section[data-lb="www.glb.example.com"] .shift-text')).color`, &color),
		chromedp.ScrollIntoView(`section[data-lb="www.glb.example.com"]`))
	shot(t, ctx, prefix+"first-hour-shift")
	if !strings.Contains(lbClass, "deliberate") || strings.Contains(lbClass, "problem") ||
		!strings.Contains(shiftText, "Shifted (deliberate): pool eu") || !strings.Contains(shiftText, reason) || color != "rgb(138, 90, 0)" {
		t.Errorf("the shifted load balancer: class %q, %q in %s; want deliberate, amber rgb(138, 90, 0), with the reason", lbClass, shiftText, color)
	}
	ctx = nextTab(t, ctx)
	var why string
	drive(t, ctx, "the traffic preview says a shift is why", size, chromedp.Navigate(ui+"#preview"), chromedp.WaitVisible(`#p-submit`),
		chromedp.SetValue(`#p-lb`, "www"), chromedp.Click(`#p-submit`),
		chromedp.WaitVisible(`#p-table tr[data-pool="eu"] [data-shifted]`),
		chromedp.Text(`#p-table tr[data-pool="eu"]`, &why), chromedp.ScrollIntoView(`#p-table tr[data-pool="eu"]`))
	shot(t, ctx, prefix+"first-hour-preview")
	if !strings.Contains(why, "shifted away (deliberate: “"+reason+"”)") || !strings.Contains(why, "0.0") {
		t.Errorf("the preview's eu row reads %q", why)
	}

	// The versions say what changed; a rollback shows the diff it would
	// apply (here: the ECS setting back).
	g.must("PATCH", "/api/v1/load_balancers/www", map[string]any{"location_strategy": map[string]any{"prefer_ecs": "proximity"}})
	var last, diff string
	drive(t, ctx, "the versions", chromedp.Navigate(ui+"#edit/load_balancers/www"), chromedp.WaitVisible(`#versions-table`),
		chromedp.Text(`#versions-table tbody tr:first-child`, &last),
		chromedp.Click(`#versions-table tbody tr:nth-child(2) .rollback`),
		chromedp.WaitVisible(`#versions-table tbody tr:nth-child(2) .rollback-confirm`),
		chromedp.Text(`#versions-status`, &diff))
	shot(t, ctx, prefix+"first-hour-rollback")
	if !strings.Contains(last, "location_strategy.prefer_ecs: auto → proximity") {
		t.Errorf("the newest version reads %q", last)
	}
	if !strings.Contains(diff, "It would change:") || !strings.Contains(diff, "location_strategy.prefer_ecs: proximity → auto") {
		t.Errorf("the rollback's question reads %q", diff)
	}
}

// lbID returns the id of the load balancer named name.
func lbID(t *testing.T, g *glbd, name string) string {
	t.Helper()
	var out struct{ Result []struct{ ID, Name string } }
	g.call("GET", "/api/v1/load_balancers?per_page=1000", nil, &out)
	for _, l := range out.Result {
		if l.Name == name {
			return l.ID
		}
	}
	t.Fatalf("no load balancer named %s", name)
	return ""
}
