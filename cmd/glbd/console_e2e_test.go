package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
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
	// Each tab in a window of its own: a tab behind another in the same
	// window is hidden, and a hidden page runs no animation frames and no
	// resize observers, so a test whose tab a parallel test covered waited
	// for a redraw that never came (the traffic charts refitted at a
	// phone's width).
	var id target.ID
	if err := chromedp.Run(browser.ctx, chromedp.ActionFunc(func(ctx context.Context) (err error) {
		id, err = target.CreateTarget("about:blank").WithNewWindow(true).WithWidth(1280).WithHeight(800).Do(cdp.WithExecutor(ctx, chromedp.FromContext(ctx).Browser))
		return err
	})); err != nil {
		t.Fatalf("a window for the test: %v", err)
	}
	ctx, cancel := chromedp.NewContext(browser.ctx, chromedp.WithTargetID(id))
	// An error the page does not catch is a bug, whatever the test checks.
	chromedp.ListenTarget(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *cdpruntime.EventExceptionThrown:
			t.Errorf("uncaught in the page: %s", ev.ExceptionDetails.Error())
		case *cdpruntime.EventConsoleAPICalled:
			if ev.Type == cdpruntime.APITypeError {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				t.Errorf("console.error in the page: %s", strings.Join(args, " "))
			}
		}
	})
	// A tab's whole life: every step of a subtest shares it, and on a
	// loaded machine (a full test run) a long subtest outlasted 60 s.
	ctx, cancel2 := context.WithTimeout(ctx, 180*time.Second)
	t.Cleanup(func() { cancel2(); cancel() })
	return ctx
}

// shot saves the page as docs/console-<name>.png when
// GLB_CONSOLE_SCREENSHOTS names a directory (scripts/console-screenshots.sh):
// the whole page, or with "phone-" in the name what the screen shows.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("GLB_CONSOLE_SCREENSHOTS")
	if dir == "" {
		return
	}
	var png []byte
	take := chromedp.FullScreenshot(&png, 100)
	if strings.HasPrefix(name, "phone-") {
		take = chromedp.CaptureScreenshot(&png)
	}
	if err := chromedp.Run(ctx, take); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "console-"+name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// phoneShot saves the page as a phone shows it (390×844), as shot does,
// and goes back to the desktop's width.
func phoneShot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if os.Getenv("GLB_CONSOLE_SCREENSHOTS") == "" {
		return
	}
	drive(t, ctx, "phone width", chromedp.EmulateViewport(390, 844))
	shot(t, ctx, "phone-"+name)
	drive(t, ctx, "desktop width", chromedp.EmulateViewport(1280, 800))
}

func closeBrowser() {
	if browser.cancel != nil {
		browser.cancel()
	}
}

// drive runs browser actions, failing the test with what was being done.
func drive(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action) {
	t.Helper()
	if err := chromedp.Run(ctx, actions...); err != nil {
		// What the page shows says more than "timeout".
		var shows string
		_ = chromedp.Run(ctx, chromedp.Evaluate(`(document.activeElement?.id ? "focus #" + document.activeElement.id + "; " : "") + document.body.innerText.slice(0, 1500)`, &shows))
		t.Fatalf("%s: %v\nthe page shows:\n%s", what, err, shows)
	}
}

// waitFor polls a JavaScript condition in the page until it holds.
func waitFor(expr string, within time.Duration) chromedp.Action {
	var ok bool
	return chromedp.Poll(expr, &ok, chromedp.WithPollingTimeout(within), chromedp.WithPollingInterval(50*time.Millisecond))
}

// retype empties a text field and types text into it, key by key.
// (chromedp.Clear resets the value attribute, which no longer shows once
// someone has typed.)
func retype(sel, text string) chromedp.Tasks {
	return chromedp.Tasks{chromedp.Evaluate(fmt.Sprintf(`document.querySelector(%q).value = ""`, sel), nil), chromedp.SendKeys(sel, text)}
}

// tabTo presses Tab until the element with id has the focus, as someone
// using the keyboard would, and fails after max presses.
func tabTo(t *testing.T, ctx context.Context, id string, max int) int {
	t.Helper()
	return tabs(t, ctx, id, max)
}

// tabBackTo is tabTo with Shift+Tab.
func tabBackTo(t *testing.T, ctx context.Context, id string, max int) int {
	t.Helper()
	return tabs(t, ctx, id, max, chromedp.KeyModifiers(input.ModifierShift))
}

func tabs(t *testing.T, ctx context.Context, id string, max int, opts ...chromedp.KeyOption) int {
	t.Helper()
	for n := 1; n <= max; n++ {
		var at string
		drive(t, ctx, "Tab", chromedp.KeyEvent(kb.Tab, opts...), chromedp.Evaluate(`document.activeElement.id`, &at))
		if at == id {
			return n
		}
	}
	t.Fatalf("%d presses of Tab never reached #%s", max, id)
	return 0
}

// consoleFixture seeds two load balancers over three pools: web's three
// origins are checked by a tcp monitor and b is stopped; extra is weighted
// 0.4/0.3/0.3; a network is mapped to zone-1.
type consoleFixture struct {
	g                 *glbd
	web, extra, spare string
	www, api          string
	zone              string
}

func seedConsole(t *testing.T) consoleFixture {
	t.Helper()
	origins := startOrigins(t, "127.0.3.1", "127.0.3.2", "127.0.3.3")
	g := startGlbd(t, "")
	zone := zoneFor(t, g)
	mon := g.must("POST", "/api/v1/monitors", map[string]any{
		"type": "tcp", "port": origins[0].port(), "interval": 1, "timeout": 1, "retries": 0, "consecutive_down": 1, "consecutive_up": 1,
	})["id"].(string)
	f := consoleFixture{g: g, zone: zone}
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

// poolWeights reads a pool's origins from the API as name → weight.
func poolWeights(t *testing.T, g *glbd, id string) map[string]float64 {
	t.Helper()
	var got struct {
		Result struct {
			Origins []struct {
				Name   string  `json:"name"`
				Weight float64 `json:"weight"`
			} `json:"origins"`
		} `json:"result"`
	}
	g.call("GET", "/api/v1/pools/"+id, nil, &got)
	out := map[string]float64{}
	for _, o := range got.Result.Origins {
		out[o.Name] = o.Weight
	}
	return out
}

// percent reads "40.0%" as 40.
func percent(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%")), 64)
	if err != nil {
		t.Fatalf("share %q: %v", s, err)
	}
	return v
}

// TestConsole drives the console in chromium against a real glbd: one
// glbd and one browser for every page, the subtests in order.
func TestConsole(t *testing.T) {
	t.Parallel()
	f := seedConsole(t)
	ui := f.g.api + "/ui/"

	t.Run("overview lists everything and marks the down origin", func(t *testing.T) {
		ctx := browserTab(t)
		var text, bHealthy, aHealthy, first string
		var lbs int
		drive(t, ctx, "overview", chromedp.Navigate(ui+"#overview"),
			chromedp.WaitVisible(`section[data-lb="api.glb.example.com"]`),
			chromedp.Text("#main", &text),
			chromedp.Evaluate(`document.querySelectorAll("section[data-lb]").length`, &lbs),
			chromedp.AttributeValue(`tr[data-pool="web"] li[data-origin="web-b"]`, "data-healthy", &bHealthy, nil),
			chromedp.AttributeValue(`tr[data-pool="web"] li[data-origin="web-a"]`, "data-healthy", &aHealthy, nil),
			chromedp.AttributeValue(`section[data-lb]`, "data-lb", &first, nil))
		shot(t, ctx, "overview")
		if lbs != 2 {
			t.Errorf("%d load balancers shown, want 2", lbs)
		}
		for _, want := range []string{"www.glb.example.com", "api.glb.example.com", "web", "extra", "spare",
			"web-a", "web-b", "web-c", "x1", "x2", "x3", "s1", "web-b down in pool web"} {
			if !strings.Contains(text, want) {
				t.Errorf("overview does not show %q:\n%s", want, text)
			}
		}
		if bHealthy != "false" || aHealthy != "true" {
			t.Errorf("web-b shown healthy=%s, web-a healthy=%s; want false, true", bHealthy, aHealthy)
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
		drive(t, ctx, "explain", chromedp.Navigate(ui+"#explain"),
			chromedp.WaitVisible(`#x-client`),
			chromedp.SetValue(`#x-lb`, f.www),
			chromedp.SetValue(`#x-client`, "198.51.100.7"),
			chromedp.Click(`#x-submit`),
			chromedp.WaitVisible(`#x-pool`),
			chromedp.Text(`#x-pool`, &pool), chromedp.Text(`#x-set-M`, &m), chromedp.Text(`#x-location`, &location))
		shot(t, ctx, "explain")
		d := api.Result.Decision
		if pool != d.Pool.Name || m != strings.Join(d.Affinity.M, ", ") || !strings.Contains(location, "zone-1") {
			t.Errorf("console: pool %q, M %q, location %q; API: pool %q, M %v", pool, m, location, d.Pool.Name, d.Affinity.M)
		}
		if len(d.Affinity.M) == 0 || slices.Contains(d.Affinity.M, "web-b") {
			t.Errorf("API's M %v: want the healthy zone-1 origins", d.Affinity.M)
		}
		// A bad address is named beside its field.
		var msg, invalid string
		drive(t, ctx, "bad client", chromedp.SetValue(`#x-client`, "300.1.1.1"), chromedp.Click(`#x-submit`),
			chromedp.WaitVisible(`#x-client-error`), chromedp.Text(`#x-client-error`, &msg),
			chromedp.AttributeValue(`#x-client`, "aria-invalid", &invalid, nil))
		if !strings.Contains(msg, "not an IPv4 or IPv6 address") || invalid != "true" {
			t.Errorf("bad client: error %q beside the field, aria-invalid %q", msg, invalid)
		}
	})

	t.Run("a weight edit with a stale ETag shows the conflict", func(t *testing.T) {
		ctx := browserTab(t)
		drive(t, ctx, "pool page", chromedp.Navigate(ui+"#pool/"+f.extra), chromedp.WaitVisible(`#o0-weight`),
			waitFor(`document.getElementById("live").dataset.state === "live"`, 10*time.Second),
			retype(`#o0-weight`, "0.5"))
		// Someone else saves while the edit is being made: the page's ETag
		// is now stale, and the page says so before the save.
		f.g.must("PATCH", "/api/v1/pools/"+f.extra, map[string]any{"description": "changed elsewhere"})
		var notice, status string
		drive(t, ctx, "save", waitFor(`!document.getElementById("pool-changed").hidden`, 10*time.Second),
			chromedp.Text(`#pool-changed`, &notice),
			chromedp.Click(`#save`),
			waitFor(`document.getElementById("pool-status").dataset.conflict === "true"`, 10*time.Second),
			chromedp.Text(`#pool-status`, &status))
		if !strings.Contains(notice, "changed on the server") {
			t.Errorf("notice %q", notice)
		}
		if !strings.Contains(status, "Conflict") || !strings.Contains(status, "stale") {
			t.Errorf("status %q, want the conflict", status)
		}
		if w := poolWeights(t, f.g, f.extra)["x1"]; w != 0.4 {
			t.Errorf("weight %v after a refused edit, want 0.4", w)
		}
	})

	t.Run("origins added and removed, errors beside the fields", func(t *testing.T) {
		ctx := browserTab(t)
		// errorsShown reads the error beside each of s2's fields once the
		// save has been answered.
		errorsShown := func(what string) map[string]string {
			t.Helper()
			got := map[string]string{}
			drive(t, ctx, what, chromedp.Click(`#save`),
				waitFor(`document.getElementById("pool-status")?.textContent.startsWith("Not saved")`, 10*time.Second),
				chromedp.Evaluate(`Object.fromEntries(["name","address","zone","weight"].map(f => [f,
					document.getElementById("o1-"+f+"-error").textContent + (document.getElementById("o1-"+f).getAttribute("aria-invalid") === "true" ? " [invalid]" : "")]))`, &got))
			if w := poolWeights(t, f.g, f.spare); len(w) != 1 {
				t.Fatalf("a refused edit stored %v", w)
			}
			return got
		}
		drive(t, ctx, "add an origin", chromedp.Navigate(ui+"#pool/"+f.spare), chromedp.WaitVisible(`#o0-weight`),
			chromedp.Click(`#add-origin`), chromedp.WaitVisible(`#o1-name`),
			chromedp.SendKeys(`#o1-name`, "s2"), chromedp.SendKeys(`#o1-address`, "not an address!"),
			retype(`#o1-weight`, "heavy"))
		// The shape of the body is checked first: the weight is not a number.
		if got := errorsShown("save with a word for a weight"); !strings.Contains(got["weight"], "must be a number [invalid]") || got["address"] != "" {
			t.Errorf("errors beside the fields: %q", got)
		}
		drive(t, ctx, "a number", retype(`#o1-weight`, "0.5"))
		got := errorsShown("save with a bad address")
		shot(t, ctx, "pool-errors")
		if !strings.Contains(got["address"], "not an IPv4 or IPv6 address or hostname") || !strings.HasSuffix(got["address"], "[invalid]") || got["weight"] != "" {
			t.Errorf("errors beside the fields: %q", got)
		}
		// Corrected, it is saved; then s1 is removed.
		drive(t, ctx, "fix and save", retype(`#o1-address`, "192.0.2.22"),
			chromedp.Click(`#save`), waitFor(`document.getElementById("pool-status")?.textContent.startsWith("Saved")`, 10*time.Second))
		if w := poolWeights(t, f.g, f.spare); len(w) != 2 || w["s2"] != 0.5 || w["s1"] != 1 {
			t.Fatalf("after adding s2: %v", w)
		}
		drive(t, ctx, "remove s1", chromedp.WaitVisible(`#o1-name`), chromedp.Click(`tr[data-origin="s1"] button.remove`),
			chromedp.Click(`#save`), waitFor(`document.getElementById("pool-status")?.textContent.startsWith("Saved") && !document.getElementById("o1-name")`, 10*time.Second))
		if w := poolWeights(t, f.g, f.spare); len(w) != 1 || w["s2"] != 0.5 {
			t.Fatalf("after removing s1: %v", w)
		}
	})

	t.Run("preview shares of a 0.4/0.3/0.3 pool, now and after an unsaved edit", func(t *testing.T) {
		ctx := browserTab(t)
		var now []string
		const cells = `["x1","x2","x3"].map(o => document.querySelector('tr[data-origin="extra/'+o+'"] td.%s .num')?.textContent || "")`
		drive(t, ctx, "preview", chromedp.Navigate(ui+"#preview"),
			chromedp.WaitVisible(`#p-sample`),
			chromedp.SetValue(`#p-lb`, f.api),
			chromedp.Click(`#p-submit`),
			chromedp.WaitVisible(`#p-table`),
			chromedp.Evaluate(fmt.Sprintf(cells, "now"), &now))
		for i, want := range []float64{40, 30, 30} {
			if got := percent(t, now[i]); got < want-3 || got > want+3 {
				t.Errorf("share of x%d now %q, want %v ± 3", i+1, now[i], want)
			}
		}
		// An unsaved edit, typed: x1's weight to 0.1, then Enter.
		var after, again []string
		drive(t, ctx, "edit", retype(`tr[data-origin="extra/x1"] input[type=text]`, "0.1"+kb.Enter),
			waitFor(`document.querySelector('tr[data-origin="extra/x1"] td.after .num') !== null`, 10*time.Second),
			chromedp.Evaluate(fmt.Sprintf(cells, "after"), &after), chromedp.Evaluate(fmt.Sprintf(cells, "now"), &again))
		shot(t, ctx, "preview")
		for i, want := range []float64{100.0 / 7, 300.0 / 7, 300.0 / 7} {
			if got := percent(t, after[i]); got < want-0.1 || got > want+0.1 {
				t.Errorf("share of x%d after the edit %q, want %.1f", i+1, after[i], want)
			}
			if again[i] != now[i] {
				t.Errorf("share of x%d now moved with an unsaved edit: %q, was %q", i+1, again[i], now[i])
			}
		}
		if w := poolWeights(t, f.g, f.extra)["x1"]; w != 0.4 {
			t.Errorf("the preview saved x1's weight: %v", w)
		}
		// A sample of regions: all thirteen.
		var summary string
		drive(t, ctx, "regions", chromedp.Click(`#p-regions`), chromedp.Click(`#p-submit`),
			waitFor(`document.getElementById("p-summary")?.textContent.startsWith("13 ")`, 10*time.Second),
			chromedp.Text(`#p-summary`, &summary))
		if !strings.Contains(summary, "0 subnets, 13 regions") {
			t.Errorf("summary %q", summary)
		}
	})

	t.Run("the preview endpoint agrees with explain, client by client", func(t *testing.T) {
		type share struct {
			Name  string  `json:"name"`
			Share float64 `json:"share"`
		}
		for _, c := range []struct{ subnet, typ string }{
			{"198.51.100.0/24", "A"}, {"203.0.113.0/24", "A"}, {"192.0.2.0/24", "A"}, {"2001:db8::/48", "AAAA"},
		} {
			var pv struct {
				Result struct {
					Now struct {
						Pools []struct {
							Name    string  `json:"name"`
							Share   float64 `json:"share"`
							Origins []share `json:"origins"`
						} `json:"pools"`
					} `json:"now"`
				} `json:"result"`
			}
			if st := f.g.call("POST", "/api/v1/load_balancers/"+f.www+"/preview", map[string]any{
				"clients": []map[string]any{{"subnet": c.subnet}}, "type": c.typ}, &pv); st != http.StatusOK {
				t.Fatalf("preview %s: %d", c.subnet, st)
			}
			var x struct {
				Result struct {
					Decision struct {
						Pool struct {
							Name string `json:"name"`
						} `json:"pool"`
						Origins struct {
							Eligible []share `json:"eligible"`
						} `json:"origin_steering"`
					} `json:"decision"`
				} `json:"result"`
			}
			addr, _, _ := strings.Cut(c.subnet, "/")
			f.g.call("GET", "/api/v1/load_balancers/"+f.www+"/explain?client="+addr+"&ecs="+neturl.QueryEscape(c.subnet)+"&type="+c.typ, nil, &x)
			d := x.Result.Decision
			p := pv.Result.Now.Pools
			if len(p) != 1 || p[0].Name != d.Pool.Name || p[0].Share != 1 {
				t.Errorf("%s: preview %+v, explain's pool %s", c.subnet, p, d.Pool.Name)
				continue
			}
			want := map[string]float64{}
			for _, e := range d.Origins.Eligible {
				want[e.Name] = e.Share
			}
			got := map[string]float64{}
			for _, o := range p[0].Origins {
				got[o.Name] = o.Share
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: preview's origin shares %v, explain's %v", c.subnet, got, want)
			}
		}
	})

	t.Run("by keyboard only: a weight saved, an explanation asked", func(t *testing.T) {
		ctx := browserTab(t)
		// From the overview: Tab to the web pool's link, Enter, Tab to
		// web-c's weight (focus selects what it holds), type, Enter.
		drive(t, ctx, "overview", chromedp.Navigate(ui+"#overview"), chromedp.WaitVisible(`section[data-lb="www.glb.example.com"]`),
			chromedp.Evaluate(`document.querySelector('section[data-lb="www.glb.example.com"] tr[data-pool="web"] a').id = "web-link"`, nil))
		tabTo(t, ctx, "web-link", 30)
		drive(t, ctx, "follow the link", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(`#o2-weight`))
		tabTo(t, ctx, "o2-weight", 30)
		drive(t, ctx, "type and save", chromedp.KeyEvent("0.5"), chromedp.KeyEvent(kb.Enter),
			waitFor(`document.getElementById("pool-status")?.textContent.startsWith("Saved")`, 10*time.Second))
		shot(t, ctx, "pool")
		if w := poolWeights(t, f.g, f.web); w["web-c"] != 0.5 || w["web-a"] != 1 {
			t.Errorf("weights after the keyboard edit: %v, want web-c 0.5", w)
		}
		// Explain: back to the page links, Enter, Tab to the client
		// field, type, Enter.
		tabBackTo(t, ctx, "nav-explain", 40)
		drive(t, ctx, "open explain", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(`#x-client`))
		tabTo(t, ctx, "x-lb", 5)
		drive(t, ctx, "pick www", chromedp.KeyEvent("w")) // a select takes its option by the first letter
		tabTo(t, ctx, "x-client", 5)
		var pool string
		drive(t, ctx, "ask", chromedp.KeyEvent("198.51.100.9"), chromedp.KeyEvent(kb.Enter),
			chromedp.WaitVisible(`#x-pool`), chromedp.Text(`#x-pool`, &pool))
		var api struct {
			Result struct {
				Decision struct {
					Pool struct{ Name string } `json:"pool"`
				} `json:"decision"`
			} `json:"result"`
		}
		f.g.call("GET", "/api/v1/load_balancers/"+f.www+"/explain?client=198.51.100.9", nil, &api)
		if pool == "" || pool != api.Result.Decision.Pool.Name {
			t.Errorf("explained by keyboard: pool %q, API %q", pool, api.Result.Decision.Pool.Name)
		}
	})

	t.Run("every control has an accessible name", func(t *testing.T) {
		ctx := browserTab(t)
		interactive := map[string]bool{"textbox": true, "spinbutton": true, "checkbox": true, "combobox": true,
			"listbox": true, "button": true, "link": true, "radio": true, "slider": true, "searchbox": true}
		for _, page := range []struct {
			hash  string
			ready []chromedp.Action
			roles []string // at least one of each
		}{
			{"#overview", []chromedp.Action{chromedp.WaitVisible(`section[data-lb]`)}, []string{"link"}},
			{"#pool/" + f.web, []chromedp.Action{chromedp.WaitVisible(`#o0-weight`)}, []string{"textbox", "checkbox", "button"}},
			{"#explain", []chromedp.Action{chromedp.WaitVisible(`#x-client`), chromedp.Click(`#x-submit`), chromedp.WaitVisible(`#x-pool`)}, []string{"combobox", "textbox", "button"}},
			{"#preview", []chromedp.Action{chromedp.WaitVisible(`#p-sample`), chromedp.Click(`#p-submit`), chromedp.WaitVisible(`#p-table`)}, []string{"combobox", "textbox", "checkbox", "button"}},
			{"#audit", []chromedp.Action{chromedp.WaitVisible(`#a-table`)}, []string{"combobox", "textbox", "button"}},
		} {
			drive(t, ctx, page.hash, append([]chromedp.Action{chromedp.Navigate(ui + page.hash)}, page.ready...)...)
			// Decoded by hand: chromium names more ignored reasons than
			// cdproto's enumeration knows.
			type axValue struct {
				Value any `json:"value"`
			}
			var tree struct {
				Nodes []struct {
					Ignored          bool     `json:"ignored"`
					Role             *axValue `json:"role"`
					Name             *axValue `json:"name"`
					BackendDOMNodeID int64    `json:"backendDOMNodeId"`
				} `json:"nodes"`
			}
			drive(t, ctx, "accessibility tree", chromedp.ActionFunc(func(ctx context.Context) error {
				return cdp.Execute(ctx, accessibility.CommandGetFullAXTree, nil, &tree)
			}))
			seen := map[string]int{}
			for _, n := range tree.Nodes {
				if n.Ignored || n.Role == nil {
					continue
				}
				role, _ := n.Role.Value.(string)
				name := ""
				if n.Name != nil {
					name, _ = n.Name.Value.(string)
				}
				if !interactive[role] {
					continue
				}
				seen[role]++
				if strings.TrimSpace(name) == "" {
					t.Errorf("%s: a %s without an accessible name (DOM node %d)", page.hash, role, n.BackendDOMNodeID)
				}
			}
			for _, r := range page.roles {
				if seen[r] == 0 {
					t.Errorf("%s: no %s found (%v): the check looked at nothing", page.hash, r, seen)
				}
			}
		}
	})

	t.Run("1280x800 and phone width: no sideways scrolling, key controls on screen", func(t *testing.T) {
		ctx := browserTab(t)
		pages := []struct {
			hash  string
			ready []chromedp.Action
			keys  []string
		}{
			{"#overview", []chromedp.Action{chromedp.WaitVisible(`section[data-lb]`)},
				[]string{`nav a[href="#preview"]`, `nav a[href="#audit"]`, `#live`, `section[data-lb] tr[data-pool] a`}},
			{"#pool/" + f.web, []chromedp.Action{chromedp.WaitVisible(`#o0-weight`)},
				[]string{`#o0-name`, `#o0-weight`, `#o0-enabled`, `#o2-weight`, `tr[data-origin="web-c"] button.remove`, `#add-origin`, `#save`, `#matrix`}},
			{"#explain", []chromedp.Action{chromedp.WaitVisible(`#x-client`), chromedp.Click(`#x-submit`), chromedp.WaitVisible(`#x-pool`)},
				[]string{`#x-lb`, `#x-client`, `#x-ecs`, `#x-submit`, `#x-pool`, `#x-set-M`}},
			{"#preview", []chromedp.Action{chromedp.WaitVisible(`#p-sample`), chromedp.Click(`#p-submit`), chromedp.WaitVisible(`#p-table`)},
				[]string{`#p-lb`, `#p-sample`, `#p-regions`, `#p-submit`, `tr[data-origin="web/web-c"] td.now`, `tr[data-origin="web/web-c"] input[type=text]`, `tr[data-origin="web/web-c"] input[type=checkbox]`, `#p-apply`}},
			{"#audit", []chromedp.Action{chromedp.WaitVisible(`#a-table`)},
				[]string{`#a-kind`, `#a-actor`, `#a-submit`, `#a-table tbody tr`, `#a-older`}},
		}
		const check = `((sels) => {
			const out = [];
			const de = document.documentElement;
			if (de.scrollWidth > de.clientWidth) out.push("the page scrolls sideways: " + de.scrollWidth + " > " + de.clientWidth);
			for (const s of sels) {
				const e = document.querySelector(s);
				if (!e) { out.push(s + ": missing"); continue; }
				const r = e.getBoundingClientRect(), cs = getComputedStyle(e);
				if (r.width < 1 || r.height < 1 || cs.visibility === "hidden" || cs.display === "none") out.push(s + ": not displayed");
				else if (r.left < 0 || r.right > de.clientWidth + 0.5) out.push(s + ": off screen at " + Math.round(r.left) + ".." + Math.round(r.right));
			}
			return out;
		})(%s)`
		for _, vp := range []struct {
			name string
			w, h int64
		}{{"desktop", 1280, 800}, {"phone", 390, 844}} {
			for _, p := range pages {
				sels, _ := json.Marshal(p.keys)
				var bad []string
				drive(t, ctx, vp.name+" "+p.hash, append(append([]chromedp.Action{chromedp.EmulateViewport(vp.w, vp.h), chromedp.Navigate(ui + p.hash)}, p.ready...),
					chromedp.Evaluate(fmt.Sprintf(check, sels), &bad))...)
				for _, b := range bad {
					t.Errorf("%s %dx%d %s: %s", vp.name, vp.w, vp.h, p.hash, b)
				}
				if vp.name == "phone" && p.hash == "#preview" {
					shot(t, ctx, "phone-preview")
				}
				if p.hash == "#overview" {
					// The problem line comes before the shift form, which is
					// taller than a phone's screen.
					var above bool
					drive(t, ctx, vp.name+" problem first", chromedp.Evaluate(`document.querySelector("section.problem .problem-text").getBoundingClientRect().top < document.getElementById("s-form").getBoundingClientRect().top`, &above))
					if !above {
						t.Errorf("%s: the shift form comes before the problem line", vp.name)
					}
				}
			}
		}
	})

	t.Run("the audit log lists who changed what, and when", func(t *testing.T) {
		ctx := browserTab(t)
		var rows []map[string]string
		const read = `[...document.querySelectorAll("#a-table tbody tr")].map(r => ({kind: r.dataset.kind, action: r.dataset.action,
			who: r.querySelector(".actor").textContent, object: r.querySelector(".object").textContent,
			what: r.querySelector(".what").textContent, when: r.querySelector("time").getAttribute("datetime")}))`
		drive(t, ctx, "audit", chromedp.Navigate(ui+"#audit"), chromedp.WaitVisible(`#a-table`), chromedp.Evaluate(read, &rows))
		shot(t, ctx, "audit")
		has := func(rows []map[string]string, pred func(map[string]string) bool) bool {
			return slices.ContainsFunc(rows, pred)
		}
		for what, pred := range map[string]func(map[string]string) bool{
			"extra's description, changed elsewhere": func(r map[string]string) bool {
				return r["object"] == "extra" && r["action"] == "update" && strings.Contains(r["what"], "description:") && strings.Contains(r["what"], "→ changed elsewhere")
			},
			"s2 added to spare": func(r map[string]string) bool {
				return r["object"] == "spare" && strings.Contains(r["what"], "origins + s2 (192.0.2.22)")
			},
			"s1 removed from spare": func(r map[string]string) bool {
				return r["object"] == "spare" && strings.Contains(r["what"], "origins − s1")
			},
			"web-c's weight by keyboard": func(r map[string]string) bool {
				return r["object"] == "web" && strings.Contains(r["what"], "origins[web-c].weight: 1 → 0.5")
			},
			"web-b going down": func(r map[string]string) bool {
				return r["kind"] == "health" && r["object"] == "web / web-b" && strings.HasPrefix(r["what"], "down")
			},
			"the networks' creation, by anonymous": func(r map[string]string) bool {
				return r["kind"] == "networks" && r["action"] == "create" && strings.HasPrefix(r["who"], "anonymous (POST)")
			},
		} {
			if !has(rows, pred) {
				t.Errorf("the audit page does not show %s:\n%v", what, rows)
			}
		}
		var ordered bool
		drive(t, ctx, "order", chromedp.Evaluate(`[...document.querySelectorAll("#a-table time")].map(e => Date.parse(e.getAttribute("datetime"))).every((v, i, a) => i === 0 || v <= a[i-1])`, &ordered))
		if !ordered || len(rows) < 10 {
			t.Errorf("%d rows, newest first: %v", len(rows), ordered)
		}
		// A change made now appears at the top without a reload.
		drive(t, ctx, "mark the page", chromedp.Evaluate(`window.glbMarker = 1`, nil))
		f.g.must("PATCH", "/api/v1/load_balancers/"+f.api, map[string]any{"description": "seen live"})
		var top string
		drive(t, ctx, "live row", waitFor(`document.querySelector("#a-table tbody tr .what")?.textContent.includes("seen live")`, 10*time.Second),
			chromedp.Evaluate(`String(window.glbMarker)`, &top))
		if top != "1" {
			t.Errorf("the page was reloaded to show the change")
		}
		// Filtered to health transitions.
		var kinds []string
		drive(t, ctx, "filter", chromedp.SetValue(`#a-kind`, "health"), chromedp.Click(`#a-submit`),
			waitFor(`location.hash === "#audit/kind=health" && document.querySelectorAll("#a-table tbody tr").length > 0 && [...document.querySelectorAll("#a-table tbody tr")].every(r => r.dataset.kind === "health")`, 10*time.Second),
			chromedp.Evaluate(`[...document.querySelectorAll("#a-table tbody tr")].map(r => r.dataset.kind)`, &kinds))
		if len(kinds) == 0 {
			t.Errorf("no health rows")
		}
	})

	t.Run("live: a configuration and a health change redraw the overview", func(t *testing.T) {
		ctx := browserTab(t)
		drive(t, ctx, "overview", chromedp.Navigate(ui+"#overview"), chromedp.WaitVisible(`section[data-lb]`),
			waitFor(`document.getElementById("live").dataset.state === "live"`, 10*time.Second),
			chromedp.Evaluate(`window.glbMarker = 1`, nil))
		origin := startOrigins(t, "127.0.3.9")[0]
		mon := f.g.must("POST", "/api/v1/monitors", map[string]any{
			"type": "tcp", "port": origin.port(), "interval": 1, "timeout": 1, "retries": 0, "consecutive_down": 1, "consecutive_up": 1,
		})["id"].(string)
		pool := f.g.must("POST", "/api/v1/pools", map[string]any{"name": "live", "monitor": mon, "origins": []map[string]any{
			{"name": "live-1", "address": origin.ip()}}})["id"].(string)
		f.g.must("POST", "/api/v1/load_balancers", map[string]any{"zone": f.zone, "name": "live.glb.example.com", "default_pools": []any{pool}, "fallback_pool": pool})
		drive(t, ctx, "the new load balancer appears", waitFor(`document.querySelector('section[data-lb="live.glb.example.com"] li[data-origin="live-1"]')?.dataset.healthy === "true"`, 15*time.Second))
		// The pool's page, in another tab, once its node has checked.
		poolTab := browserTab(t)
		drive(t, poolTab, "pool page", chromedp.Navigate(ui+"#pool/"+pool),
			waitFor(`document.querySelector('#matrix tr[data-origin="live-1"] td[data-healthy="true"]') !== null`, 15*time.Second),
			chromedp.Evaluate(`window.glbMarker = 1`, nil))
		origin.stop()
		var marker, cell, poolMarker string
		drive(t, ctx, "its origin goes down", waitFor(`document.querySelector('section[data-lb="live.glb.example.com"] li[data-origin="live-1"]')?.dataset.healthy === "false"`, 15*time.Second),
			chromedp.Evaluate(`String(window.glbMarker)`, &marker))
		drive(t, poolTab, "the matrix shows it", waitFor(`document.querySelector('#matrix tr[data-origin="live-1"] td[data-healthy="false"]') !== null`, 15*time.Second),
			chromedp.Text(`#matrix tr[data-origin="live-1"] td[data-healthy="false"]`, &cell), chromedp.Evaluate(`String(window.glbMarker)`, &poolMarker))
		if marker != "1" || poolMarker != "1" {
			t.Errorf("a page reloaded instead of redrawing")
		}
		if !strings.Contains(cell, "DOWN") || !strings.Contains(cell, "refused") {
			t.Errorf("the node's cell for live-1 reads %q, want DOWN and the reason", cell)
		}
		var cls string
		drive(t, ctx, "problem", chromedp.AttributeValue(`section[data-lb="live.glb.example.com"]`, "class", &cls, nil))
		if !strings.Contains(cls, "problem") {
			t.Errorf("the card of a load balancer whose only origin is down has class %q", cls)
		}
	})

	t.Run("polling when the event stream drops", func(t *testing.T) {
		cut := newStreamCutter(t, f.g.api)
		ctx := browserTab(t)
		drive(t, ctx, "overview through the proxy", chromedp.Navigate(cut.srv.URL+"/ui/#overview"), chromedp.WaitVisible(`section[data-lb]`),
			waitFor(`document.getElementById("live").dataset.state === "live"`, 10*time.Second),
			chromedp.Evaluate(`window.glbMarker = 1`, nil))
		cut.cut()
		drive(t, ctx, "the console notices", waitFor(`document.getElementById("live").dataset.state === "polling"`, 10*time.Second))
		f.g.must("POST", "/api/v1/load_balancers", map[string]any{"zone": f.zone, "name": "polled.glb.example.com", "default_pools": []any{f.extra}, "fallback_pool": f.spare})
		var marker, state string
		drive(t, ctx, "a poll shows the change", waitFor(`document.querySelector('section[data-lb="polled.glb.example.com"]') !== null`, 15*time.Second),
			chromedp.Evaluate(`String(window.glbMarker)`, &marker), chromedp.Evaluate(`document.getElementById("live").dataset.state`, &state))
		if marker != "1" || state != "polling" {
			t.Errorf("marker %q, state %q: want the page polled, not reloaded, while the stream is down", marker, state)
		}
		if n := cut.refused(); n == 0 {
			t.Errorf("the console never tried the stream again while it was down")
		}
		cut.restore()
		drive(t, ctx, "live again", waitFor(`document.getElementById("live").dataset.state === "live"`, 10*time.Second))
	})
}

// TestConsoleToken: with a token, the console asks for it, keeps it in
// the tab's session storage and never puts it in an address.
func TestConsoleToken(t *testing.T) {
	t.Parallel()
	const token = "console-secret-token"
	g := startGlbd(t, "", "--api-token", token)
	g.token = token
	zone := zoneFor(t, g)
	pool := g.must("POST", "/api/v1/pools", map[string]any{"name": "p", "origins": []map[string]any{{"name": "o", "address": "192.0.2.1"}}})["id"].(string)
	g.must("POST", "/api/v1/load_balancers", map[string]any{"zone": zone, "name": "tok.glb.example.com", "default_pools": []any{pool}, "fallback_pool": pool})

	ctx := browserTab(t)
	var refused string
	drive(t, ctx, "wrong token", chromedp.Navigate(g.api+"/ui/#overview"), chromedp.WaitVisible(`#token`),
		chromedp.SendKeys(`#token`, "wrong"+kb.Enter),
		waitFor(`!document.getElementById("login").hidden && document.getElementById("login-error").textContent !== ""`, 10*time.Second),
		chromedp.Text(`#login-error`, &refused))
	if !strings.Contains(refused, "refused") {
		t.Errorf("after a wrong token: %q", refused)
	}
	var stored, href string
	drive(t, ctx, "right token", chromedp.SendKeys(`#token`, token+kb.Enter),
		chromedp.WaitVisible(`section[data-lb="tok.glb.example.com"]`),
		waitFor(`document.getElementById("live").dataset.state === "live"`, 10*time.Second),
		chromedp.Evaluate(`sessionStorage.getItem("glb-token")`, &stored), chromedp.Evaluate(`location.href`, &href))
	if stored != token {
		t.Errorf("session storage holds %q", stored)
	}
	var local, cookies string
	drive(t, ctx, "other storage", chromedp.Evaluate(`JSON.stringify(localStorage)`, &local), chromedp.Evaluate(`document.cookie`, &cookies))
	for what, v := range map[string]string{"the address": href, "local storage": local, "cookies": cookies} {
		if strings.Contains(v, token) {
			t.Errorf("the token is in %s: %q", what, v)
		}
	}
	// A new tab starts signed out: session storage is per tab.
	other := browserTab(t)
	drive(t, other, "another tab", chromedp.Navigate(g.api+"/ui/#overview"), chromedp.WaitVisible(`#token`))
}

// streamCutter is a reverse proxy in front of glbd's API that can drop the
// event streams passing through it and refuse new ones, as a flaky
// network or proxy would.
type streamCutter struct {
	srv     *httptest.Server
	mu      sync.Mutex
	down    bool
	refuses int
	next    int
	cancels map[int]context.CancelFunc
}

func newStreamCutter(t *testing.T, target string) *streamCutter {
	u, err := neturl.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1 // pass each event on at once
	c := &streamCutter{cancels: map[int]context.CancelFunc{}}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/events" {
			c.mu.Lock()
			if c.down {
				c.refuses++
				c.mu.Unlock()
				http.Error(w, "stream cut", http.StatusServiceUnavailable)
				return
			}
			ctx, cancel := context.WithCancel(r.Context())
			id := c.next
			c.next++
			c.cancels[id] = cancel
			c.mu.Unlock()
			defer func() {
				c.mu.Lock()
				delete(c.cancels, id)
				c.mu.Unlock()
				cancel()
			}()
			r = r.WithContext(ctx)
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

// cut drops the streams open now and refuses new ones.
func (c *streamCutter) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.down = true
	for _, cancel := range c.cancels {
		cancel()
	}
}

func (c *streamCutter) restore() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.down = false
}

func (c *streamCutter) refused() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refuses
}

// clickCopy clicks a copy button and answers what the page handed to
// the clipboard, whether the browser took it, and what the page then
// said (the text of statusID). The page's writeText is watched rather
// than the clipboard read back: reading needs a permission and focus
// that a window among parallel tests' windows may not have, and the
// read then failed while the copy had worked.
func clickCopy(t *testing.T, ctx context.Context, buttonID, statusID string) (text string, took bool, said string) {
	t.Helper()
	var got struct {
		Text string `json:"text"`
		Took bool   `json:"took"`
	}
	drive(t, ctx, "copy with "+buttonID,
		chromedp.Evaluate(`(() => {
			const real = navigator.clipboard.writeText.bind(navigator.clipboard);
			window.glbCopied = null;
			navigator.clipboard.writeText = async (s) => {
				try { await real(s); window.glbCopied = { text: s, took: true }; }
				catch (e) { window.glbCopied = { text: s, took: false }; throw e; }
			};
		})()`, nil),
		chromedp.Click(`#`+buttonID),
		waitFor(`window.glbCopied !== null && document.getElementById(`+strconv.Quote(statusID)+`).textContent !== ""`, 5*time.Second),
		chromedp.Evaluate(`window.glbCopied`, &got),
		chromedp.Text(`#`+statusID, &said))
	return got.Text, got.Took, said
}
