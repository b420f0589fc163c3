package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/steering"
)

// TestConsoleRUM: the pool and load balancer forms set measured_latency
// and the rum settings the API stores; after real reports from two
// networks (placed in France and the US by operator networks, in two
// autonomous systems by an ASN database), the load balancer's page draws
// per region, country and autonomous system the pool users measure
// fastest with every pool's median, p75 and samples, the API's figures;
// the overview's per-region mapping answers with the region's fastest.
func TestConsoleRUM(t *testing.T) {
	asnDB := filepath.Join(t.TempDir(), "asn.mmdb")
	writeASNDB(t, asnDB, map[string]uint32{"203.0.113.0/24": 64500, "198.18.4.0/24": 64501})
	g := startParallel(t, "--rum-every", "200ms", "--rum-rate", "6000", "--rum-trusted-proxies", "127.0.0.1/32", "--geoip-asn-db", asnDB)
	zone := zoneFor(t, g)
	eu := g.must("POST", "/api/v1/pools", map[string]any{"name": "eu", "origins": []map[string]any{{"name": "fra", "address": "192.0.2.1"}}})["id"].(string)
	us := g.must("POST", "/api/v1/pools", map[string]any{"name": "us", "origins": []map[string]any{{"name": "iad", "address": "192.0.2.2"}},
		"rum": map[string]any{"probe_url": "https://us.example.net/rum.gif"}})["id"].(string)
	lb := g.must("POST", "/api/v1/load_balancers", map[string]any{"zone": zone, "name": "shop.glb.example.com",
		"default_pools": []string{eu, us}, "fallback_pool": eu})["id"].(string)
	g.must("POST", "/api/v1/networks", map[string]any{"cidr": "203.0.113.0/24", "region": "WEU", "country": "FR"})
	g.must("POST", "/api/v1/networks", map[string]any{"cidr": "198.18.4.0/24", "region": "ENAM", "country": "US"})
	ui := g.api + "/ui/"
	ctx := browserTab(t)

	// The pool form: eu gets its probe URL.
	drive(t, ctx, "the pool's probe URL", chromedp.Navigate(ui+"#edit/pools/"+eu), chromedp.WaitVisible(`#f-rum`),
		waitFor(`document.querySelector("#f-rum-probe_url").closest(".form-row").hidden`, 5*time.Second),
		chromedp.Click(`#f-rum`), chromedp.SendKeys(`#f-rum-probe_url`, "https://eu.example.net/rum.gif"),
		chromedp.Click(`#save`), waitFor(`location.hash === "#config"`, 10*time.Second))
	if p := g.must("GET", "/api/v1/pools/"+eu, nil); fmt.Sprint(p["rum"]) != "map[probe_url:https://eu.example.net/rum.gif]" {
		t.Errorf("the pool stored rum %v", p["rum"])
	}

	// The load balancer form: a bad site key is refused beside its field,
	// then measured_latency with the rum settings is saved.
	drive(t, ctx, "the load balancer's rum settings", chromedp.Navigate(ui+"#edit/load_balancers/"+lb), chromedp.WaitVisible(`#f-rum`),
		waitFor(`document.querySelector("#rum-none") !== null`, 10*time.Second),
		chromedp.SetValue(`#f-steering_policy`, "measured_latency"), chromedp.Click(`#f-rum`),
		chromedp.SendKeys(`#f-rum-site_keys`, "shop-site-key, bad"), chromedp.SendKeys(`#f-rum-allowed_origins`, "https://shop.example.com"),
		chromedp.SendKeys(`#f-rum-min_samples`, "5"))
	drive(t, ctx, "save with a bad site key", chromedp.Click(`#save`), waitFor(`document.querySelector("#f-rum-site_keys-error").textContent.includes("site key 2")`, 10*time.Second))
	drive(t, ctx, "the site keys corrected", retype(`#f-rum-site_keys`, "shop-site-key"),
		chromedp.Click(`#save`), waitFor(`location.hash === "#config"`, 10*time.Second))
	got := g.must("GET", "/api/v1/load_balancers/"+lb, nil)
	if got["steering_policy"] != "measured_latency" || fmt.Sprint(got["rum"]) != "map[allowed_origins:[https://shop.example.com] min_samples:5 site_keys:[shop-site-key]]" {
		t.Errorf("the load balancer stored steering %v rum %v", got["steering_policy"], got["rum"])
	}

	// Reports: France finds eu fast, the US us; each network from its
	// own address, as a reverse proxy in front of glbd names it.
	report := func(client string, euMs, usMs float64) {
		body := fmt.Sprintf(`{"key":"shop-site-key","m":[{"p":%q,"ms":%g},{"p":%q,"ms":%g}]}`, eu, euMs, us, usMs)
		req, _ := http.NewRequest("POST", g.api+"/rum/v1/report", strings.NewReader(body))
		req.Header.Set("X-Forwarded-For", client)
		req.Header.Set("Origin", "https://shop.example.com")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("report from %s: %d", client, resp.StatusCode)
		}
	}
	for i := range 10 {
		report("203.0.113.9", 20+float64(i), 120+float64(i))
		report("198.18.4.9", 150+float64(i), 25+float64(i))
	}
	var view api.RUMView
	eventually(t, 20*time.Second, "the API's table with both regions", func() (bool, string) {
		var out struct{ Result api.RUMView }
		g.call("GET", "/api/v1/load_balancers/"+lb+"/rum", nil, &out)
		view = out.Result
		b, _ := json.Marshal(view.Table.Regions)
		return len(view.Table.Regions) == 2 && view.Table.Regions[0].Samples == 20 && view.Table.Regions[1].Samples == 20, string(b)
	})

	drive(t, ctx, "the load balancer page's table", chromedp.Navigate("about:blank"), chromedp.Navigate(ui+"#edit/load_balancers/"+lb),
		waitFor(`document.querySelectorAll("#rum table[data-level=region] tbody tr").length === 2`, 10*time.Second))
	type shown struct {
		Level, Group, Fastest string
		Pools                 []struct{ Pool, Median, P75, Samples string }
	}
	var rows []shown
	drive(t, ctx, "read the table", chromedp.Evaluate(`[...document.querySelectorAll("#rum tbody tr")].map((tr) => ({
		Level: tr.dataset.level, Group: tr.dataset.group, Fastest: tr.querySelector(".rum-fastest").textContent,
		Pools: [...tr.querySelectorAll("li")].map((li) => ({Pool: li.dataset.pool, Median: li.dataset.median, P75: li.dataset.p75, Samples: li.dataset.samples}))}))`, &rows))
	names := map[string]string{eu: "eu", us: "us"}
	var want []shown
	add := func(level string, gs []steering.RUMTableGroup) {
		for _, g := range gs {
			s := shown{Level: level, Group: g.Group, Fastest: names[g.Fastest]}
			for _, p := range g.Pools {
				s.Pools = append(s.Pools, struct{ Pool, Median, P75, Samples string }{p.Pool, fmt.Sprint(p.MedianMs), fmt.Sprint(p.P75Ms), fmt.Sprint(p.Samples)})
			}
			want = append(want, s)
		}
	}
	add("region", view.Table.Regions)
	add("country", view.Table.Countries)
	add("asn", view.Table.ASNs)
	add("network", view.Table.Networks)
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("the page's table:\n%v\nwant the API's:\n%v", rows, want)
	}
	fastest := map[string]string{}
	for _, r := range rows {
		fastest[r.Group] = r.Fastest
	}
	if fastest["WEU"] != "eu" || fastest["FR"] != "eu" || fastest["ENAM"] != "us" || fastest["US"] != "us" || fastest["AS64500"] != "eu" || fastest["AS64501"] != "us" {
		t.Errorf("fastest per group %v, want eu for WEU, FR and AS64500, us for ENAM, US and AS64501", fastest)
	}
	var summary string
	drive(t, ctx, "the summary", chromedp.Text(`#rum-summary`, &summary))
	if !strings.Contains(summary, "ranks the pools by these figures") || !strings.Contains(summary, "needs 5 samples") {
		t.Errorf("summary %q", summary)
	}
	drive(t, ctx, "the table in view", chromedp.ScrollIntoView(`#rum`))
	shot(t, ctx, "rum")
	phoneShot(t, ctx, "rum")

	// The overview: per region, the preview's answer is the region's
	// fastest, with the medians that ranked it.
	drive(t, ctx, "the overview's mappings", chromedp.Navigate(ui+"#overview"),
		waitFor(`document.querySelector("[data-mapping=WEU]")?.dataset.now === "eu" && document.querySelector("[data-mapping=ENAM]")?.dataset.now === "us"`, 15*time.Second))
	var weu string
	drive(t, ctx, "WEU's order", chromedp.Text(`[data-mapping=WEU] td:nth-child(2)`, &weu))
	if want := fmt.Sprintf("eu (%.0f\u00a0ms measured) → us (%.0f\u00a0ms measured)", view.Table.Regions[1].Pools[0].MedianMs, view.Table.Regions[1].Pools[1].MedianMs); view.Table.Regions[1].Group != "WEU" || weu != want {
		t.Errorf("WEU's order %q, want %q", weu, want)
	}

	// Explain: the client's AS beside its place, and the level that
	// ranked the pools with the figures.
	var location, measured string
	drive(t, ctx, "explain", chromedp.Navigate(ui+"#explain"), chromedp.WaitVisible(`#x-client`),
		chromedp.SetValue(`#x-lb`, lb), chromedp.SetValue(`#x-client`, "203.0.113.9"), chromedp.Click(`#x-submit`),
		chromedp.WaitVisible(`#x-measured`), chromedp.Text(`#x-location`, &location), chromedp.Text(`#x-measured`, &measured))
	if !strings.Contains(location, "FR") || !strings.Contains(location, "AS64500") ||
		!strings.Contains(measured, "Level network 203.0.113.0/24") || !strings.Contains(measured, "10 samples") {
		t.Errorf("explain: location %q, measured %q", location, measured)
	}
	shot(t, ctx, "explain-rum")
	phoneShot(t, ctx, "explain-rum")
}
