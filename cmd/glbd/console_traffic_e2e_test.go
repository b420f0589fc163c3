package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/miekg/dns"

	"github.com/glb-dns/glb/api"
)

// TestConsoleTraffic: clients of two regions (operator networks, sent as
// ECS) ask for a geo load balancer; its WEU pool's only origin goes down
// mid-run. The analytics API counts every answer under the pool, origin
// and region that gave it, and the failover shows at its bucket: WEU's
// answers from eu all end before the failover was seen, those from us all
// begin after the origin stopped. The console's traffic page draws both
// pools' areas with the failover marked, and its map colours WEU's
// countries with the pool that answers WEU now (us, as ENAM's).
func TestConsoleTraffic(t *testing.T) {
	t.Parallel()
	// The two origins answer health checks on one port at two addresses.
	var port int
	servers := map[string]*http.Server{}
	for _, ip := range []string{"127.0.6.1", "127.0.6.2"} {
		ln, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
		if err != nil {
			t.Fatalf("origin %s: %v", ip, err)
		}
		port = ln.Addr().(*net.TCPAddr).Port
		srv := &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
		servers[ip] = srv
	}
	g := startGlbd(t, "", "--sample-every", "1")
	zone := zoneFor(t, g)
	mon := fastMonitor(t, g, port)
	for id, ip := range map[string]string{"eu": "127.0.6.1", "us": "127.0.6.2"} {
		g.must("POST", "/api/v1/pools", map[string]any{"id": id, "name": id, "monitor": mon,
			"origins": []map[string]any{{"name": id + "-a", "address": ip}}})
	}
	g.must("POST", "/api/v1/networks", map[string]any{"cidr": "10.10.0.0/16", "region": "WEU", "country": "DE"})
	g.must("POST", "/api/v1/networks", map[string]any{"cidr": "10.20.0.0/16", "region": "ENAM", "country": "US"})
	g.must("POST", "/api/v1/load_balancers", map[string]any{"id": "www", "zone": zone, "name": "www.glb.example.com",
		"steering_policy": "geo", "region_pools": map[string]any{"WEU": []string{"eu"}, "ENAM": []string{"us"}},
		"default_pools": []string{"eu", "us"}, "fallback_pool": "us", "location_strategy": map[string]any{"prefer_ecs": "always"}})

	// sent counts the answers by pool and region, as the API should.
	sent := map[string]int{}
	c := &dns.Client{Timeout: 2 * time.Second}
	ask := func(region string, i int) string {
		m := new(dns.Msg)
		m.SetQuestion("www.glb.example.com.", dns.TypeA)
		o := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
		o.SetUDPSize(1232)
		second := map[string]byte{"WEU": 10, "ENAM": 20}[region]
		o.Option = append(o.Option, &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1, SourceNetmask: 24, Address: net.IPv4(10, second, byte(i), 0).To4()})
		m.Extra = append(m.Extra, o)
		r, _, err := c.Exchange(m, g.dns)
		if err != nil || len(r.Answer) != 1 {
			// Before the load balancer is served: counted, but under no pool.
			return fmt.Sprint(err, r)
		}
		pool := map[string]string{"127.0.6.1": "eu", "127.0.6.2": "us"}[r.Answer[0].(*dns.A).A.String()]
		sent[pool+"/"+region]++
		return pool
	}
	mustAsk := func(region string, i int) {
		if p := ask(region, i); p != "eu" && p != "us" {
			t.Fatalf("query from %s: %s", region, p)
		}
	}
	start := time.Now().Truncate(10 * time.Second)
	eventually(t, 10*time.Second, "WEU answered by eu, healthy", func() (bool, string) {
		p := ask("WEU", 0)
		return p == "eu", p
	})
	for i := range 100 {
		mustAsk("WEU", i)
		if i%2 == 0 {
			mustAsk("ENAM", i)
		}
	}
	stopped := time.Now()
	servers["127.0.6.1"].Close()
	eventually(t, 10*time.Second, "WEU fails over to us", func() (bool, string) {
		p := ask("WEU", 200)
		return p == "us", p
	})
	seen := time.Now()
	for i := range 100 {
		mustAsk("WEU", i)
	}
	end := time.Now()

	// The counts, merged, once every node has written the last bucket.
	type series struct {
		Group  map[string]string `json:"group"`
		Points []struct {
			Time    time.Time `json:"time"`
			Answers int       `json:"answers"`
		} `json:"points"`
	}
	var res struct {
		Result struct {
			CompleteUntil time.Time `json:"complete_until"`
			Totals        []struct {
				Pool, Region string
				Answers      int
			} `json:"totals"`
			Series []series `json:"series"`
		} `json:"result"`
	}
	q := url.Values{"load_balancer": {"www"}, "since": {start.UTC().Format(time.RFC3339)}, "until": {end.Add(20 * time.Second).UTC().Format(time.RFC3339)},
		"step": {"10s"}, "group_by": {"pool,region"}}
	eventually(t, 40*time.Second, "counts written up to the last query", func() (bool, string) {
		g.call("GET", "/api/v1/analytics?"+q.Encode(), nil, &res)
		return res.Result.CompleteUntil.After(end), res.Result.CompleteUntil.String()
	})
	got := map[string]int{}
	for _, tot := range res.Result.Totals {
		if tot.Region == "WEU" || tot.Region == "ENAM" {
			got[tot.Pool+"/"+tot.Region] = tot.Answers
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(sent) {
		t.Errorf("analytics counted %v, the client was answered %v", got, sent)
	}
	for _, s := range res.Result.Series {
		for _, p := range s.Points {
			if p.Answers == 0 || s.Group["region"] != "WEU" {
				continue
			}
			if s.Group["pool"] == "eu" && p.Time.After(seen) {
				t.Errorf("eu answered WEU in the bucket of %v, after the failover was seen at %v", p.Time, seen)
			}
			if s.Group["pool"] == "us" && p.Time.Add(10*time.Second).Before(stopped) {
				t.Errorf("us answered WEU in the bucket of %v, before eu's origin stopped at %v", p.Time, stopped)
			}
		}
	}

	// The real-traffic sample is written a minute at a time; the
	// preview's summary of an edit is what the console must show.
	edits := map[string]any{"pools": map[string]any{"us": map[string]any{"enabled": false}}}
	var real api.Preview
	eventually(t, 90*time.Second, "the sampled queries written", func() (bool, string) {
		p, status := previewReal(t, g, "www", edits)
		real = p
		return status == 200, strconv.Itoa(status)
	})
	if real.Summary == "" || real.Sample == nil || real.Sample.Queries == 0 {
		t.Fatalf("real-traffic preview of disabling us: %+v", real)
	}

	ctx := browserTab(t)
	var weuPool, frPool, frFill, enamFill, usColour, weuAnswers string
	drive(t, ctx, "traffic page", chromedp.Navigate(g.api+"/ui/#traffic/www?range=10m"),
		chromedp.WaitVisible(`#t-map`),
		waitFor(`document.querySelector('#t-pools path[data-key="eu"]') !== null && document.querySelector('#t-pools path[data-key="us"]') !== null`, 10*time.Second),
		waitFor(`document.querySelector('#t-pools .mark[data-kind="down"]') !== null`, 10*time.Second),
		chromedp.Text(`#t-regions tr[data-region="WEU"] .region-pool`, &weuPool),
		chromedp.AttributeValue(`#t-map path[data-country="FR"]`, "fill", &frFill, nil),
		chromedp.AttributeValue(`#t-map path[data-country="FR"]`, "data-pool", &frPool, nil),
		chromedp.AttributeValue(`#t-map .region-dot[data-region="ENAM"] circle`, "fill", &enamFill, nil),
		chromedp.AttributeValue(`#t-map-legend li[data-key="us"]`, "data-colour", &usColour, nil),
		chromedp.AttributeValue(`#t-map .region-dot[data-region="WEU"]`, "data-answers", &weuAnswers, nil))
	shot(t, ctx, "traffic")

	// At phone width the charts are drawn again at the width they are
	// shown, not scaled down: every label stays readable and on screen;
	// back at the desktop's width they are drawn again.
	drive(t, ctx, "the traffic page at 390x844", chromedp.EmulateViewport(390, 844), waitFor(chartsFitted, 10*time.Second))
	readableLabels(t, ctx, "the traffic page at 390x844")
	noSideways(t, ctx, "the traffic page")
	// The screen's worth from the first chart down.
	drive(t, ctx, "scroll to the charts", chromedp.Evaluate(`document.getElementById('t-total').scrollIntoView({block: 'start'})`, nil))
	shot(t, ctx, "phone-traffic")
	drive(t, ctx, "the traffic page at 1280x800 again", emulation.ClearDeviceMetricsOverride(), waitFor(chartsFitted, 10*time.Second))
	readableLabels(t, ctx, "the traffic page at 1280x800")

	var summary, status string
	drive(t, ctx, "real-traffic preview", chromedp.Navigate(g.api+"/ui/#preview"), chromedp.WaitVisible(`#p-real`),
		chromedp.SetValue(`#p-lb`, "www"), chromedp.Click(`#p-real`), chromedp.Click(`#p-submit`),
		chromedp.WaitVisible(`#p-table`), chromedp.Text(`#p-summary`, &summary),
		chromedp.Click(`tr[data-pool="us"] input[type=checkbox]`),
		waitFor(`document.getElementById('p-edit-status').textContent.includes('after column')`, 10*time.Second),
		chromedp.Text(`#p-edit-status`, &status))
	shot(t, ctx, "preview-real")
	if !strings.Contains(summary, "real A queries sampled") {
		t.Errorf("the preview's summary %q does not say it replays real queries", summary)
	}
	if !strings.HasPrefix(status, real.Summary) {
		t.Errorf("the edit's status %q, want the API's summary %q first", status, real.Summary)
	}
	if weuPool != "us" {
		t.Errorf("WEU shown answered from %q, want us", weuPool)
	}
	if frPool != "us" || frFill != usColour || enamFill != usColour {
		t.Errorf("France drawn for pool %q in %q, ENAM's circle in %q; us is %q in the legend: want us, in its colour", frPool, frFill, enamFill, usColour)
	}
	if want := strconv.Itoa(sent["eu/WEU"] + sent["us/WEU"]); weuAnswers != want {
		t.Errorf("WEU's circle stands for %s answers, want %s", weuAnswers, want)
	}
}

// chartsFitted holds when the traffic page's charts are drawn at the
// width they are shown (one SVG unit is one CSS pixel).
const chartsFitted = `(() => {
	const cs = [...document.querySelectorAll('#t-pools, #t-origins')];
	return cs.length === 2 && cs.every((s) => Math.abs(s.viewBox.baseVal.width - s.getBoundingClientRect().width) <= 1);
})()`

// readableLabels fails the test when a label of the traffic page's charts
// or map is shown smaller than 11 CSS pixels (its font size times its
// SVG's scale), less than 10 pixels high, beyond the screen's edges, or
// over another label of its map; the regions with answers (WEU, ENAM)
// must be labelled.
func readableLabels(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	var bad []string
	var n int
	drive(t, ctx, what+": labels", chromedp.Evaluate(`(() => {
		const de = document.documentElement, out = [];
		let n = 0;
		for (const s of document.querySelectorAll('#t-pools, #t-origins, #t-map')) {
			const k = s.getScreenCTM().a, shown = [];
			for (const e of s.querySelectorAll('text')) {
				const r = e.getBoundingClientRect();
				if (!r.width || getComputedStyle(e).visibility === 'hidden') continue;
				n++;
				for (const [t, o] of shown) {
					if (r.left < o.right && o.left < r.right && r.top < o.bottom && o.top < r.bottom) out.push('#' + s.id + ' label "' + e.textContent + '" over "' + t + '"');
				}
				shown.push([e.textContent, r]);
				const px = parseFloat(getComputedStyle(e).fontSize) * k;
				if (px < 11 || r.height < 10) out.push('#' + s.id + ' label "' + e.textContent + '" shown at ' + px.toFixed(1) + ' px, ' + r.height.toFixed(1) + ' px high');
				if (r.left < 0 || r.right > de.clientWidth + 0.5) out.push('#' + s.id + ' label "' + e.textContent + '" off screen at ' + Math.round(r.left) + '..' + Math.round(r.right));
			}
		}
		for (const code of ['WEU', 'ENAM']) {
			const e = document.querySelector('#t-map .region-dot[data-region="' + code + '"] text');
			if (!e || getComputedStyle(e).visibility === 'hidden') out.push(code + ', a region with answers, has no label on the map');
		}
		return [String(n), ...out];
	})()`, &bad))
	fmt.Sscan(bad[0], &n)
	// Three amounts and at least two times per chart, two regions.
	if n < 2*5+2 {
		t.Errorf("%s: %d labels shown, want at least %d", what, n, 2*5+2)
	}
	for _, b := range bad[1:] {
		t.Errorf("%s: %s", what, b)
	}
}
