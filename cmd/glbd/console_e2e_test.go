package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// One browser per test binary: each console test opens a tab in it.
var browser struct {
	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	err    error
}

// browserTab returns a new tab of the shared headless chromium, or fails
// the test when the browser is missing: the console's acceptance needs it.
func browserTab(t *testing.T) context.Context {
	t.Helper()
	browser.once.Do(func() {
		path := ""
		for _, name := range []string{"chromium", "chromium-browser"} {
			if p, err := exec.LookPath(name); err == nil {
				path = p
				break
			}
		}
		if path == "" {
			browser.err = fmt.Errorf("the console's browser tests need chromium (Debian: apt-get install chromium; see scripts/install-deps.sh)")
			return
		}
		dir, err := os.MkdirTemp("", "glb-chromium")
		if err != nil {
			browser.err = err
			return
		}
		opts := []chromedp.ExecAllocatorOption{
			chromedp.ExecPath(path), chromedp.UserDataDir(dir),
			chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU,
			chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true), chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
			chromedp.WindowSize(1280, 800),
			// Chromium writes scratch files of its own to TMPDIR; keep them in
			// dir so that closing the browser leaves nothing behind.
			chromedp.Env("TMPDIR=" + dir),
		}
		actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
		bctx, bcancel := chromedp.NewContext(actx)
		if err := chromedp.Run(bctx); err != nil {
			browser.err = fmt.Errorf("start chromium %s: %w", path, err)
		}
		browser.ctx = bctx
		browser.cancel = func() {
			bcancel()
			acancel()
			// Chromium's last writers may still be exiting after the
			// allocator returns; retry the removal for a bounded while.
			for i := 0; i < 50; i++ {
				if os.RemoveAll(dir) == nil {
					if _, err := os.Stat(dir); os.IsNotExist(err) {
						return
					}
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
	})
	if browser.err != nil {
		t.Fatal(browser.err)
	}
	ctx, cancel := chromedp.NewContext(browser.ctx)
	ctx, cancel2 := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() { cancel2(); cancel() })
	return ctx
}

// shot saves the page as docs/console-<name>.png when
// GLB_CONSOLE_SCREENSHOTS names a directory (scripts/console-screenshots.sh).
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("GLB_CONSOLE_SCREENSHOTS")
	if dir == "" {
		return
	}
	var png []byte
	if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "console-"+name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

func closeBrowser() {
	if browser.cancel != nil {
		browser.cancel()
	}
}

// consoleFixture seeds two load balancers over three pools: web's three
// origins are checked by a tcp monitor and b is stopped; extra is weighted
// 0.4/0.3/0.3; a network is mapped to zone-1.
type consoleFixture struct {
	g                 *glbd
	web, extra, spare string
	www, api          string
}

func seedConsole(t *testing.T) consoleFixture {
	t.Helper()
	origins := startOrigins(t, "127.0.3.1", "127.0.3.2", "127.0.3.3")
	g := startGlbd(t, "")
	zone := zoneFor(t, g)
	mon := g.must("POST", "/api/v1/monitors", map[string]any{
		"type": "tcp", "port": origins[0].port(), "interval": 1, "timeout": 1, "retries": 0, "consecutive_down": 1, "consecutive_up": 1,
	})["id"].(string)
	f := consoleFixture{g: g}
	f.web = g.must("POST", "/api/v1/pools", map[string]any{"name": "web", "monitor": mon, "origins": []map[string]any{
		{"name": "web-a", "address": origins[0].ip(), "zone": "zone-1"},
		{"name": "web-b", "address": origins[1].ip(), "zone": "zone-1"},
		{"name": "web-c", "address": origins[2].ip(), "zone": "zone-2"},
	}})["id"].(string)
	f.extra = g.must("POST", "/api/v1/pools", map[string]any{"name": "extra", "origins": []map[string]any{
		{"name": "x1", "address": "192.0.2.11", "weight": 0.4}, {"name": "x2", "address": "192.0.2.12", "weight": 0.3},
		{"name": "x3", "address": "192.0.2.13", "weight": 0.3},
	}})["id"].(string)
	f.spare = g.must("POST", "/api/v1/pools", map[string]any{"name": "spare", "origins": []map[string]any{
		{"name": "s1", "address": "192.0.2.21"},
	}})["id"].(string)
	f.www = g.must("POST", "/api/v1/load_balancers", map[string]any{
		"zone": zone, "name": "www.glb.example.com", "default_pools": []any{f.web, f.extra}, "fallback_pool": f.spare,
		"zonal_affinity": map[string]any{"spillover": "ZONAL_AFFINITY_SPILL_CROSS_ZONE"},
	})["id"].(string)
	f.api = g.must("POST", "/api/v1/load_balancers", map[string]any{
		"zone": zone, "name": "api.glb.example.com", "default_pools": []any{f.extra}, "fallback_pool": f.spare,
	})["id"].(string)
	g.must("POST", "/api/v1/networks", map[string]any{"cidr": "198.51.100.0/24", "zone": "zone-1", "region": "WEU", "country": "FR"})
	origins[1].stop()
	eventually(t, 10*time.Second, "the tcp monitor sees web-b down", func() (bool, string) {
		ph := poolHealth(t, g, f.web)
		b := originOf(ph, "web-b")
		return b.Healthy != nil && !*b.Healthy, describeHealth(ph)
	})
	return f
}

// TestConsole drives the console in chromium against a real glbd: one
// glbd and one browser for every page.
func TestConsole(t *testing.T) {
	t.Parallel()
	f := seedConsole(t)
	ui := f.g.api + "/ui/"

	t.Run("overview lists everything and marks the down origin", func(t *testing.T) {
		ctx := browserTab(t)
		var text, bHealthy, aHealthy string
		var lbs int
		err := chromedp.Run(ctx, chromedp.Navigate(ui+"#overview"),
			chromedp.WaitVisible(`section[data-lb="api.glb.example.com"]`),
			chromedp.Text("#main", &text),
			chromedp.Evaluate(`document.querySelectorAll("section[data-lb]").length`, &lbs),
			chromedp.AttributeValue(`tr[data-pool="web"] li[data-origin="web-b"]`, "data-healthy", &bHealthy, nil),
			chromedp.AttributeValue(`tr[data-pool="web"] li[data-origin="web-a"]`, "data-healthy", &aHealthy, nil))
		if err != nil {
			t.Fatal(err)
		}
		shot(t, ctx, "overview")
		if lbs != 2 {
			t.Errorf("%d load balancers shown, want 2", lbs)
		}
		for _, want := range []string{"www.glb.example.com", "api.glb.example.com", "web", "extra", "spare",
			"web-a", "web-b", "web-c", "x1", "x2", "x3", "s1"} {
			if !strings.Contains(text, want) {
				t.Errorf("overview does not show %q:\n%s", want, text)
			}
		}
		if bHealthy != "false" || aHealthy != "true" {
			t.Errorf("web-b shown healthy=%s, web-a healthy=%s; want false, true", bHealthy, aHealthy)
		}
		// Problems first: www has a down origin, api none.
		var first string
		if err := chromedp.Run(ctx, chromedp.AttributeValue(`section[data-lb]`, "data-lb", &first, nil)); err != nil {
			t.Fatal(err)
		}
		if first != "www.glb.example.com" {
			t.Errorf("first card %s, want www (it has a problem)", first)
		}
	})

	t.Run("explain shows the API's pool and M", func(t *testing.T) {
		var api struct {
			Result struct {
				Decision struct {
					Pool struct {
						Name string `json:"name"`
					} `json:"pool"`
					Affinity struct {
						M []string `json:"m"`
					} `json:"zonal_affinity"`
					Client struct {
						Zone string `json:"zone"`
					} `json:"client"`
				} `json:"decision"`
			} `json:"result"`
		}
		eventually(t, 5*time.Second, "explain sees zone-1", func() (bool, string) {
			f.g.call("GET", "/api/v1/load_balancers/"+f.www+"/explain?client=198.51.100.7", nil, &api)
			return api.Result.Decision.Client.Zone == "zone-1", api.Result.Decision.Client.Zone
		})
		ctx := browserTab(t)
		var pool, m, location string
		err := chromedp.Run(ctx, chromedp.Navigate(ui+"#explain"),
			chromedp.WaitVisible(`#x-client`),
			chromedp.SetValue(`#x-lb`, f.www),
			chromedp.SetValue(`#x-client`, "198.51.100.7"),
			chromedp.Click(`#main button[type=submit]`),
			chromedp.WaitVisible(`#x-pool`),
			chromedp.Text(`#x-pool`, &pool), chromedp.Text(`#x-set-M`, &m), chromedp.Text(`#x-location`, &location))
		if err != nil {
			t.Fatal(err)
		}
		shot(t, ctx, "explain")
		d := api.Result.Decision
		if pool != d.Pool.Name || m != strings.Join(d.Affinity.M, ", ") || !strings.Contains(location, "zone-1") {
			t.Errorf("console: pool %q, M %q, location %q; API: pool %q, M %v", pool, m, location, d.Pool.Name, d.Affinity.M)
		}
		if len(d.Affinity.M) == 0 || slices.Contains(d.Affinity.M, "web-b") {
			t.Errorf("API's M %v: want the healthy zone-1 origins", d.Affinity.M)
		}
	})

	t.Run("a weight edit with a stale ETag shows the conflict", func(t *testing.T) {
		ctx := browserTab(t)
		if err := chromedp.Run(ctx, chromedp.Navigate(ui+"#pool/"+f.extra), chromedp.WaitVisible(`#w0`)); err != nil {
			t.Fatal(err)
		}
		// Someone else saves in between: the page's ETag is now stale.
		f.g.must("PATCH", "/api/v1/pools/"+f.extra, map[string]any{"description": "changed elsewhere"})
		var status string
		err := chromedp.Run(ctx, chromedp.SetValue(`#w0`, "0.5"),
			chromedp.Click(`#edit button[type=submit]`),
			chromedp.WaitVisible(`#pool-status[data-conflict]`),
			chromedp.Text(`#pool-status`, &status))
		if err != nil {
			t.Fatal(err)
		}
		shot(t, ctx, "pool")
		if !strings.Contains(status, "Conflict") {
			t.Errorf("status %q, want the conflict", status)
		}
		var got map[string]any
		f.g.call("GET", "/api/v1/pools/"+f.extra, nil, &got)
		if w := got["result"].(map[string]any)["origins"].([]any)[0].(map[string]any)["weight"]; w != 0.4 {
			t.Errorf("weight %v after a refused edit, want 0.4", w)
		}
	})

	t.Run("preview shares of a 0.4/0.3/0.3 pool", func(t *testing.T) {
		ctx := browserTab(t)
		var cells []string
		err := chromedp.Run(ctx, chromedp.Navigate(ui+"#preview"),
			chromedp.WaitVisible(`#p-sample`),
			chromedp.SetValue(`#p-lb`, f.api),
			chromedp.Click(`#main button[type=submit]`),
			chromedp.WaitVisible(`#p-table`),
			chromedp.Evaluate(`["x1","x2","x3"].map(o => document.querySelector('tr[data-origin="extra/'+o+'"] td.now').textContent)`, &cells))
		if err != nil {
			t.Fatal(err)
		}
		// An unsaved edit: x1's weight to 0.1.
		if err := chromedp.Run(ctx, chromedp.SetValue(`tr[data-origin="extra/x1"] input`, "0.1"),
			chromedp.Evaluate(`document.querySelector('tr[data-origin="extra/x1"] input').dispatchEvent(new Event("change"))`, nil)); err != nil {
			t.Fatal(err)
		}
		shot(t, ctx, "preview")
		for i, want := range []float64{40, 30, 30} {
			got, err := strconv.ParseFloat(strings.TrimSuffix(cells[i], "%"), 64)
			if err != nil || got < want-3 || got > want+3 {
				t.Errorf("share of x%d %q, want %v ± 3", i+1, cells[i], want)
			}
		}
	})

	t.Run("labelled controls and phone width", func(t *testing.T) {
		ctx := browserTab(t)
		// Every input, select and textarea of every page has a label.
		const unlabelled = `[...document.querySelectorAll("input,select,textarea")].filter(e => !e.closest("[hidden]") && !(e.id && document.querySelector('label[for="'+e.id+'"]'))).map(e => e.outerHTML)`
		for _, page := range []string{"#overview", "#pool/" + f.web, "#explain", "#preview"} {
			var bad []string
			err := chromedp.Run(ctx, chromedp.EmulateViewport(375, 740), chromedp.Navigate(ui+page),
				chromedp.WaitVisible(`#main > *`), chromedp.Evaluate(unlabelled, &bad))
			if err != nil {
				t.Fatalf("%s: %v", page, err)
			}
			if len(bad) > 0 {
				t.Errorf("%s: controls without a label: %v", page, bad)
			}
			// At phone width nothing makes the page scroll sideways.
			var wide bool
			if err := chromedp.Run(ctx, chromedp.Evaluate(`document.documentElement.scrollWidth > window.innerWidth`, &wide)); err != nil {
				t.Fatal(err)
			}
			if wide {
				t.Errorf("%s is wider than a 375 px phone", page)
			}
		}
		// By keyboard: Tab from the top reaches the page links.
		var focused string
		err := chromedp.Run(ctx, chromedp.Navigate(ui+"#overview"), chromedp.WaitVisible(`#main > *`),
			chromedp.KeyEvent("\t"), chromedp.KeyEvent("\t"),
			chromedp.Evaluate(`document.activeElement.textContent`, &focused))
		if err != nil {
			t.Fatal(err)
		}
		if focused != "Explain" {
			t.Errorf("second Tab focuses %q, want the Explain link", focused)
		}
	})
}
