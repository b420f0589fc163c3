package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/internal/testnode"
)

// The client networks of the RUM test. A browser here always connects
// from 127.0.0.1, so a network is what the tab says in X-Forwarded-For
// (Network.setExtraHTTPHeaders): glbd trusts that header from 127.0.0.1
// (--rum-trusted-proxies), as it would from a reverse proxy in front of
// it, and the probe origins read it to play a network's path to them.
const (
	rumNet1 = "127.0.1.7" // finds pool b fastest
	rumNet2 = "127.0.2.7" // finds pool c fastest
)

// probeOrigin serves a pool's health check at once from 127.0.0.1 (so
// that health-check RTT alone ranks pool a first, its check the fastest)
// and its RUM probe object after the delay of the client network.
type probeOrigin struct {
	check time.Duration
	probe map[string]time.Duration // X-Forwarded-For → delay
}

func (o probeOrigin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d := o.check
	if r.URL.Path == "/rum.gif" {
		d = o.probe[r.Header.Get("X-Forwarded-For")]
		w.Header().Set("Timing-Allow-Origin", "*")
		w.Header().Set("Cache-Control", "no-store")
	}
	select {
	case <-time.After(d):
	case <-r.Context().Done():
	}
	w.Header().Set("Content-Type", "image/gif")
	_, _ = w.Write([]byte("GIF89a"))
}

// TestRUMMeasuredLatency is issue 44's acceptance: headless Chromium loads
// a page with the beacon as two client networks; each network's dig
// +subnet gets the pool it measured fastest while health-check RTT alone
// picks another, explain shows the medians and counts; a browser that
// resolves through a real Unbound (no ECS) teaches glbd the network behind
// it, so that Unbound's own queries are steered for that network; a flood
// of fake reports from one network leaves the other's answer as it was.
func TestRUMMeasuredLatency(t *testing.T) {
	unboundPath, err := exec.LookPath("unbound")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/unbound"); serr != nil {
			t.Fatal("the RUM acceptance needs unbound (Debian: apt-get install unbound; scripts/install-deps.sh)")
		}
		unboundPath = "/usr/sbin/unbound"
	}
	ips := []string{"127.0.6.1", "127.0.6.2", "127.0.6.3"}
	origins := []probeOrigin{
		{check: 0, probe: map[string]time.Duration{rumNet1: 250 * time.Millisecond, rumNet2: 250 * time.Millisecond}},
		{check: 40 * time.Millisecond, probe: map[string]time.Duration{rumNet1: 5 * time.Millisecond, rumNet2: 150 * time.Millisecond}},
		{check: 40 * time.Millisecond, probe: map[string]time.Duration{rumNet1: 150 * time.Millisecond, rumNet2: 5 * time.Millisecond}},
	}
	lns := testnode.SharedPort(t, ips...)
	for i, ln := range lns {
		srv := &http.Server{Handler: origins[i], ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
	}
	port := lns[0].Addr().(*net.TCPAddr).Port

	// The operator's page, on its own origin.
	pageLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pageOrigin := "http://" + pageLn.Addr().String()
	var beaconURL string
	page := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><title>loading</title><script>window.glbRumDone = function (m) { document.title = "done " + m.length; };</script>
<script src="%s" async></script><p>shop</p>`, beaconURL)
	})}
	go page.Serve(pageLn)
	t.Cleanup(func() { page.Close() })

	g := startParallel(t, "--region", "WEU", "--rum-every", "200ms", "--rum-window", "2m", "--rum-rate", "120",
		"--rum-trusted-proxies", "127.0.0.1/32")
	beaconURL = g.api + "/rum/v1/beacon.js?key=shop-site-key"
	zone := zoneFor(t, g)
	mon := g.must("POST", "/api/v1/monitors", map[string]any{"type": "http", "path": "/health", "port": port,
		"expected_codes": "200", "interval": 1, "timeout": 2, "retries": 0})["id"].(string)
	pool := func(name, ip string) string {
		return g.must("POST", "/api/v1/pools", map[string]any{"name": name, "monitor": mon,
			"origins": []map[string]any{{"name": name, "address": ip}},
			"rum":     map[string]any{"probe_url": fmt.Sprintf("http://%s:%d/rum.gif", ip, port)}})["id"].(string)
	}
	a, b, c := pool("a", ips[0]), pool("b", ips[1]), pool("c", ips[2])
	lb := g.must("POST", "/api/v1/load_balancers", map[string]any{"zone": zone, "name": "www.glb.example.com",
		"steering_policy": "measured_latency", "default_pools": []string{a, b, c}, "fallback_pool": a,
		"rum": map[string]any{"site_keys": []string{"shop-site-key"}, "allowed_origins": []string{pageOrigin}, "min_samples": 3}})["id"].(string)

	answer := func(subnet string) string {
		got, status := dig(t, g.dns, "www.glb.example.com", "A", "+subnet="+subnet)
		return status + " " + strings.Join(got, ",")
	}
	// Before any report, health-check RTT ranks: a's check is fastest.
	eventually(t, 15*time.Second, "health-check RTT puts pool a first", func() (bool, string) {
		got := answer("127.0.1.0/24")
		if got != "NOERROR 127.0.6.1" {
			return false, got
		}
		e := explainECS(t, g, lb, "127.0.1.0/24")
		return got == "NOERROR 127.0.6.1" && e.Decision.RTT != nil && e.Decision.RTT.Region == "WEU" && len(e.Decision.Candidates) == 3 &&
			e.Decision.Candidates[0].RTTMs != nil && e.Decision.Candidates[1].RTTMs != nil, got
	})

	// Two networks load the page four times each.
	tab := browserTab(t)
	load := func(ctx context.Context, xff string) {
		t.Helper()
		// The first Run on a tab attaches it for the context it is given:
		// attach with the tab's own, not the load's timeout.
		if err := chromedp.Run(ctx); err != nil {
			t.Fatal(err)
		}
		lctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		var title string
		for i, a := range []chromedp.Action{network.Enable(), network.SetExtraHTTPHeaders(network.Headers{"X-Forwarded-For": xff}),
			chromedp.Navigate(pageOrigin + "/"), chromedp.Poll(`document.title.startsWith("done")`, nil)} {
			if err := chromedp.Run(lctx, a); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
		}
		if err := chromedp.Run(lctx, chromedp.Title(&title)); err != nil {
			var state string
			sctx, scancel := context.WithTimeout(ctx, 3*time.Second)
			_ = chromedp.Run(sctx, chromedp.Evaluate(`document.title + " | " + document.readyState + " | " + performance.getEntries().map(e => e.name + " " + Math.round(e.duration)).join(", ")`, &state))
			scancel()
			t.Fatalf("page load as %s: %v (page: %s)", xff, err, state)
		}
		if title != "done 3" {
			t.Fatalf("the beacon measured %q, want 3 pools", title)
		}
	}
	start := time.Now()
	for range 4 {
		load(tab, rumNet1)
		load(tab, rumNet2)
	}
	t.Logf("8 page loads took %v", time.Since(start).Round(time.Millisecond))
	for _, tc := range []struct{ subnet, want string }{{"127.0.1.0/24", "NOERROR 127.0.6.2"}, {"127.0.2.0/24", "NOERROR 127.0.6.3"}} {
		eventually(t, 10*time.Second, tc.subnet+" gets the pool it measured fastest", func() (bool, string) {
			got := answer(tc.subnet)
			return got == tc.want, got
		})
	}
	e := explainECS(t, g, lb, "127.0.1.0/24")
	m := e.Decision.Measured
	if m == nil || m.Level != "network" || m.Group != "127.0.1.0/24" || len(m.Pools) != 3 {
		t.Fatalf("explain measured %+v", m)
	}
	for _, p := range m.Pools {
		if p.Samples != 4 || !p.Counted {
			t.Errorf("explain: pool %s has %d samples (counted %t), want the 4 page loads", p.Name, p.Samples, p.Counted)
		}
		if p.Name == "b" && !(p.MedianMs >= 1 && p.MedianMs < 120) || p.Name == "a" && p.MedianMs < 200 {
			t.Errorf("explain: pool %s median %.1f ms", p.Name, p.MedianMs)
		}
	}
	if e.Decision.Candidates[0].Name != "b" || e.Decision.Candidates[0].MeasuredMs == nil {
		t.Errorf("explain: first candidate %+v, want b with its median", e.Decision.Candidates[0])
	}

	// The resolver map: a browser context whose names resolve through a
	// SOCKS proxy that asks a real Unbound, which asks glbd without ECS
	// from 127.0.3.1.
	ub := startUnbound(t, unboundPath, "127.0.3.1", g.dns)
	proxy := startSOCKS(t, ub)
	var bctx cdp.BrowserContextID
	if err := chromedp.Run(browser.ctx, chromedp.ActionFunc(func(ctx context.Context) (err error) {
		bctx, err = target.CreateBrowserContext().WithProxyServer("socks5://" + proxy).Do(cdp.WithExecutor(ctx, chromedp.FromContext(ctx).Browser))
		return err
	})); err != nil {
		t.Fatalf("a browser context with the proxy: %v", err)
	}
	var id target.ID
	if err := chromedp.Run(browser.ctx, chromedp.ActionFunc(func(ctx context.Context) (err error) {
		id, err = target.CreateTarget("about:blank").WithBrowserContextID(bctx).WithNewWindow(true).Do(cdp.WithExecutor(ctx, chromedp.FromContext(ctx).Browser))
		return err
	})); err != nil {
		t.Fatal(err)
	}
	ptab, cancel := chromedp.NewContext(browser.ctx, chromedp.WithTargetID(id))
	t.Cleanup(func() {
		cancel()
		_ = chromedp.Run(browser.ctx, chromedp.ActionFunc(func(ctx context.Context) error {
			return target.DisposeBrowserContext(bctx).Do(cdp.WithExecutor(ctx, chromedp.FromContext(ctx).Browser))
		}))
	})
	for range 3 {
		load(ptab, rumNet1)
	}
	eventually(t, 15*time.Second, "queries from Unbound are steered for the network behind it", func() (bool, string) {
		got, status := dig(t, ub, "www.glb.example.com", "A", "+rec")
		if status == "NOERROR" && len(got) == 1 && got[0] == "127.0.6.2" {
			return true, ""
		}
		// Unbound caches the answer for the TTL (30 s); ask glbd as
		// Unbound does meanwhile: from its address, without ECS.
		out := digRaw(t, g.dns, "-b", "127.0.3.1", "+short", "www.glb.example.com", "A")
		return strings.TrimSpace(out) == "127.0.6.2", status + " " + strings.Join(got, ",") + " / direct: " + strings.TrimSpace(out)
	})
	ex := explainFrom(t, g, lb, "127.0.3.1")
	if ex.Decision.Measured == nil || ex.Decision.Measured.Level != "resolver" || len(ex.Decision.Measured.Behind) == 0 ||
		ex.Decision.Measured.Behind[0].Network != "127.0.1.0/24" {
		t.Errorf("explain for Unbound's address: %+v", ex.Decision.Measured)
	}

	// A flood of fake reports from network 2, saying pool a is fastest:
	// its own rate limit refuses most, and network 1's answer holds.
	refused := 0
	for range 300 {
		body := fmt.Sprintf(`{"key":"shop-site-key","m":[{"p":%q,"ms":1},{"p":%q,"ms":900},{"p":%q,"ms":900}]}`, a, b, c)
		req, _ := http.NewRequest("POST", g.api+"/rum/v1/report", strings.NewReader(body))
		req.Header.Set("X-Forwarded-For", "127.0.2.99")
		req.Header.Set("Origin", pageOrigin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests {
			refused++
		}
	}
	if refused < 250 {
		t.Errorf("the flood: %d of 300 refused, want all but a burst", refused)
	}
	eventually(t, 10*time.Second, "a table with the flood's accepted reports", func() (bool, string) {
		m := explainECS(t, g, lb, "127.0.2.0/24").Decision.Measured
		if m == nil {
			return false, "no figures"
		}
		for _, p := range m.Pools {
			if p.Name == "a" {
				return p.Samples > 20, fmt.Sprintf("network 2 has %d samples of a", p.Samples)
			}
		}
		return false, fmt.Sprintf("%+v", m)
	})
	if got := answer("127.0.1.0/24"); got != "NOERROR 127.0.6.2" {
		t.Errorf("after network 2's flood, network 1 gets %s, want 127.0.6.2 still", got)
	}
}

func explainECS(t *testing.T, g *glbd, lb, ecs string) api.Explanation {
	t.Helper()
	var out struct {
		Result api.Explanation `json:"result"`
	}
	if status := g.call("GET", "/api/v1/load_balancers/"+lb+"/explain?client=127.0.0.1&ecs="+ecs, nil, &out); status != http.StatusOK {
		t.Fatalf("explain: status %d", status)
	}
	return out.Result
}

func explainFrom(t *testing.T, g *glbd, lb, client string) api.Explanation {
	return explain(t, g, lb, client)
}

// startUnbound runs a real Unbound on addr (a free port) that resolves
// glb.example.com from glbd at dns, from addr itself, without ECS, and
// refuses every other name so that it never asks the internet.
func startUnbound(t *testing.T, path, addr, dns string) string {
	t.Helper()
	dir := t.TempDir()
	ln, err := net.ListenPacket("udp", addr+":0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.LocalAddr().(*net.UDPAddr).Port
	ln.Close()
	host, dport, _ := net.SplitHostPort(dns)
	conf := fmt.Sprintf(`server:
	interface: %[1]s
	port: %[2]d
	outgoing-interface: %[1]s
	do-daemonize: no
	username: ""
	chroot: ""
	directory: %[3]q
	pidfile: ""
	use-syslog: no
	logfile: ""
	verbosity: 2
	do-ip6: no
	access-control: 127.0.0.0/8 allow
	do-not-query-localhost: no
	qname-minimisation: yes
	module-config: "iterator"
	local-zone: "." refuse
	local-zone: "glb.example.com." transparent
stub-zone:
	name: "glb.example.com."
	stub-addr: %[4]s@%[5]s
remote-control:
	control-enable: no
`, addr, port, dir, host, dport)
	cf := filepath.Join(dir, "unbound.conf")
	if err := os.WriteFile(cf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, "-d", "-c", cf)
	var logs strings.Builder
	var mu sync.Mutex
	cmd.Stderr = lockedWriter{&mu, &logs}
	cmd.Stdout = cmd.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			mu.Lock()
			t.Logf("unbound's log:\n%s", logs.String())
			mu.Unlock()
		}
	})
	server := fmt.Sprintf("%s:%d", addr, port)
	eventually(t, 10*time.Second, "unbound answers", func() (bool, string) {
		_, status := dig(t, server, "glb.example.com", "SOA", "+rec")
		return status == "NOERROR", status
	})
	return server
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// startSOCKS is the smallest SOCKS5 proxy a browser needs to resolve
// names remotely: it resolves each CONNECT's host name through the
// resolver at dns and then refuses the connection (the lookup is all the
// beacon's unique name is for).
func startSOCKS(t *testing.T, dns string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	res := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, dns)
	}}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				r := bufio.NewReader(c)
				var hdr [2]byte
				if _, err := io.ReadFull(r, hdr[:]); err != nil || hdr[0] != 5 {
					return
				}
				if _, err := io.ReadFull(r, make([]byte, hdr[1])); err != nil {
					return
				}
				c.Write([]byte{5, 0})
				var req [4]byte
				if _, err := io.ReadFull(r, req[:]); err != nil || req[1] != 1 || req[3] != 3 {
					c.Write([]byte{5, 8, 0, 1, 0, 0, 0, 0, 0, 0})
					return
				}
				n, _ := r.ReadByte()
				name := make([]byte, int(n)+2)
				if _, err := io.ReadFull(r, name); err != nil {
					return
				}
				host := string(name[:n])
				_ = binary.BigEndian.Uint16(name[n:])
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				_, _ = res.LookupHost(ctx, host)
				cancel()
				c.Write([]byte{5, 4, 0, 1, 0, 0, 0, 0, 0, 0}) // host unreachable
			}()
		}
	}()
	return ln.Addr().String()
}
