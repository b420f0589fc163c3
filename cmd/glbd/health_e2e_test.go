package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/internal/testnode"
)

// originServer is a real HTTP origin on its own loopback address. The test
// stops it (connections refused), starts it again, slows it down, or makes
// it fail the check for chosen source addresses: a script of what a real
// origin does, checked by real glbd processes.
type originServer struct {
	t    *testing.T
	addr string // ip:port, the same after a restart

	mu       sync.Mutex
	srv      *http.Server
	delay    time.Duration
	failFrom map[string]bool
	hits     map[string]int // checks seen by source address
}

// startOrigins starts one origin per ip, all on one port number, since a
// monitor names a single port for every origin of its pools.
func startOrigins(t *testing.T, ips ...string) []*originServer {
	t.Helper()
	out := make([]*originServer, len(ips))
	for i, ln := range testnode.SharedPort(t, ips...) {
		o := &originServer{t: t, addr: ln.Addr().String(), failFrom: map[string]bool{}, hits: map[string]int{}}
		o.serve(ln)
		t.Cleanup(o.stop)
		out[i] = o
	}
	return out
}

func (o *originServer) serve(ln net.Listener) {
	srv := &http.Server{Handler: o, ReadHeaderTimeout: 5 * time.Second}
	o.mu.Lock()
	o.srv = srv
	o.mu.Unlock()
	go srv.Serve(ln)
}

// stop closes the listener and every connection: the origin refuses
// connections from now on.
func (o *originServer) stop() {
	o.mu.Lock()
	srv := o.srv
	o.srv = nil
	o.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
}

// start listens again on the same address.
func (o *originServer) start() {
	o.t.Helper()
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		o.t.Fatalf("restart origin %s: %v", o.addr, err)
	}
	o.serve(ln)
}

func (o *originServer) ip() string { h, _, _ := net.SplitHostPort(o.addr); return h }

func (o *originServer) port() int {
	_, p, _ := net.SplitHostPort(o.addr)
	n, _ := strconv.Atoi(p)
	return n
}

func (o *originServer) setDelay(d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.delay = d
}

// failFor makes the check fail (503) for requests from these source
// addresses only, and pass for everyone else.
func (o *originServer) failFor(sources ...string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.failFrom = map[string]bool{}
	for _, s := range sources {
		o.failFrom[s] = true
	}
}

func (o *originServer) hitsFrom(source string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.hits[source]
}

func (o *originServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	src, _, _ := net.SplitHostPort(r.RemoteAddr)
	o.mu.Lock()
	o.hits[src]++
	delay, fail := o.delay, o.failFrom[src]
	o.mu.Unlock()
	if delay > 0 {
		// The origin's own latency, which dynamic_latency must see.
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	switch {
	case r.URL.Path != "/health":
		http.NotFound(w, r) // proves the monitor's path is the one requested
	case fail:
		http.Error(w, "failing for "+src, http.StatusServiceUnavailable)
	default:
		io.WriteString(w, "ok\n")
	}
}

// zoneFor creates the zone glb.example.com on g and returns its id.
func zoneFor(t *testing.T, g *glbd) string {
	t.Helper()
	z := g.must("POST", "/api/v1/zones", map[string]any{
		"name": "glb.example.com", "nameservers": []string{"ns1.glb.example.com"},
		"records": []map[string]any{{"name": "ns1.glb.example.com", "type": "A", "content": "127.0.0.1"}},
	})
	return z["id"].(string)
}

// fastMonitor is the monitor of the acceptance criteria: one check a
// second, a refused or failed check counts at once (no retries), and two
// in a row change the state.
func fastMonitor(t *testing.T, g *glbd, port int) string {
	t.Helper()
	m := g.must("POST", "/api/v1/monitors", map[string]any{
		"type": "http", "path": "/health", "port": port, "expected_codes": "200",
		"interval": 1, "timeout": 1, "retries": 0, "consecutive_down": 2, "consecutive_up": 2,
	})
	return m["id"].(string)
}

// answerWithin asserts that name's A answer on g becomes want within the
// bound and returns how long it took.
func answerWithin(t *testing.T, g *glbd, within time.Duration, what string, want ...string) time.Duration {
	t.Helper()
	slices.Sort(want)
	return eventually(t, within, what, func() (bool, string) {
		got, status := dig(t, g.dns, "www.glb.example.com", "A")
		return status == "NOERROR" && slices.Equal(got, want), status + " " + strings.Join(got, ",")
	})
}

// consistently asserts that cond holds on every poll for the whole of d:
// the proof that something does not happen once its cause is in place.
func consistently(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if ok, state := cond(); !ok {
			t.Fatalf("%s: stopped holding; state: %s", what, state)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func poolHealth(t *testing.T, g *glbd, pool string) api.PoolHealth {
	t.Helper()
	var out struct {
		Result api.PoolHealth `json:"result"`
	}
	if status := g.call("GET", "/api/v1/pools/"+pool+"/health", nil, &out); status != http.StatusOK {
		t.Fatalf("GET pool %s health: status %d", pool, status)
	}
	return out.Result
}

func explain(t *testing.T, g *glbd, lb, client string) api.Explanation {
	t.Helper()
	var out struct {
		Result api.Explanation `json:"result"`
	}
	if status := g.call("GET", "/api/v1/load_balancers/"+lb+"/explain?client="+client, nil, &out); status != http.StatusOK {
		t.Fatalf("explain %s for %s: status %d", lb, client, status)
	}
	return out.Result
}

func originOf(ph api.PoolHealth, name string) api.OriginHealth {
	for _, o := range ph.Origins {
		if o.Name == name {
			return o
		}
	}
	return api.OriginHealth{Name: name + " (missing)"}
}

func checkBy(o api.OriginHealth, node string) (api.NodeCheck, bool) {
	for _, c := range o.Checks {
		if c.Node == node {
			return c, true
		}
	}
	return api.NodeCheck{}, false
}

func describeHealth(ph api.PoolHealth) string {
	var b strings.Builder
	for _, o := range ph.Origins {
		agreed := "?"
		if o.Healthy != nil {
			agreed = strconv.FormatBool(*o.Healthy)
		}
		fmt.Fprintf(&b, "[%s agreed=%s %q", o.Name, agreed, o.Reason)
		for _, c := range o.Checks {
			fmt.Fprintf(&b, " %s/%s=%t %q age=%.1fs", c.Node, c.Region, c.Healthy, c.Reason, c.AgeSeconds)
		}
		b.WriteString("] ")
	}
	return b.String()
}

// TestHealthDownAndUpWithinBounds: an origin whose server stops leaves the
// DNS answer within interval × consecutive_down + timeout + 1 s, and comes
// back within interval × consecutive_up + 1 s of starting again.
func TestHealthDownAndUpWithinBounds(t *testing.T) {
	t.Parallel()
	origins := startOrigins(t, "127.0.1.1", "127.0.1.2", "127.0.1.3")
	g := startGlbd(t, "")
	zone := zoneFor(t, g)
	mon := fastMonitor(t, g, origins[0].port())
	pool := g.must("POST", "/api/v1/pools", map[string]any{"name": "web", "monitor": mon, "origins": []map[string]any{
		{"name": "a", "address": origins[0].ip()}, {"name": "b", "address": origins[1].ip()}, {"name": "c", "address": origins[2].ip()},
	}})["id"].(string)
	g.must("POST", "/api/v1/load_balancers", map[string]any{
		"zone": zone, "name": "www.glb.example.com", "default_pools": []any{pool}, "fallback_pool": pool, "answers": 0,
	})
	all := []string{origins[0].ip(), origins[1].ip(), origins[2].ip()}
	// Start from a state the checks have confirmed, not the healthy-until-
	// checked default: every origin checked and healthy. The setup's
	// deadlines are a loaded machine's; the bounds below are the test's.
	eventually(t, 15*time.Second, "every origin checked healthy", func() (bool, string) {
		ph := poolHealth(t, g, pool)
		for _, o := range ph.Origins {
			if len(o.Checks) == 0 || !o.Checks[0].Healthy || o.Healthy == nil || !*o.Healthy {
				return false, describeHealth(ph)
			}
		}
		return true, ""
	})
	answerWithin(t, g, 10*time.Second, "all three answered", all...)

	const interval, timeout, down, up = time.Second, time.Second, 2, 2
	downBound := interval*down + timeout + time.Second
	origins[1].stop()
	tookDown := answerWithin(t, g, downBound, "stopped origin b leaves the answer", all[0], all[2])
	t.Logf("origin stopped → out of DNS in %v (bound %v)", tookDown.Round(time.Millisecond), downBound)
	ph := poolHealth(t, g, pool)
	if b := originOf(ph, "b"); b.Healthy == nil || *b.Healthy || !strings.Contains(b.Reason, "refused") {
		t.Errorf("health of stopped origin b: %s; want agreed unhealthy with a connection refused reason", describeHealth(ph))
	}

	upBound := interval*up + time.Second
	origins[1].start()
	tookUp := answerWithin(t, g, upBound, "restarted origin b is answered again", all...)
	t.Logf("origin restarted → back in DNS in %v (bound %v)", tookUp.Round(time.Millisecond), upBound)
}

// TestHealthThreeRegionsMajority: three nodes in three regions on one
// database. An origin failing the checks of one region stays in every
// node's answer (2 of 3 regions say healthy); failing two regions' checks
// takes it out of every node's answer; every node answers alike.
func TestHealthThreeRegionsMajority(t *testing.T) {
	t.Parallel()
	origins := startOrigins(t, "127.0.2.1", "127.0.2.2")
	a, b := origins[0], origins[1]
	url := freshDatabase(t)
	type member struct{ node, region, source string }
	members := []member{{"n1", "WEU", "127.0.0.2"}, {"n2", "ENAM", "127.0.0.3"}, {"n3", "NEAS", "127.0.0.4"}}
	nodes := make([]*glbd, len(members))
	for i, m := range members {
		args := []string{"--database-url", url, "--node", m.node, "--region", m.region, "--check-source", m.source}
		if i > 0 {
			args = append(args, "--migrate=false")
		}
		nodes[i] = startGlbd(t, "", args...)
	}
	g := nodes[0]
	zone := zoneFor(t, g)
	mon := fastMonitor(t, g, a.port())
	pool := g.must("POST", "/api/v1/pools", map[string]any{"name": "web", "monitor": mon, "origins": []map[string]any{
		{"name": "a", "address": a.ip()}, {"name": "b", "address": b.ip()},
	}})["id"].(string)
	g.must("POST", "/api/v1/load_balancers", map[string]any{
		"zone": zone, "name": "www.glb.example.com", "default_pools": []any{pool}, "fallback_pool": pool, "answers": 0,
	})

	// allReport: every node's API shows every node's check of every
	// origin, with the given state for a.
	allReport := func(aHealthy map[string]bool) func() (bool, string) {
		return func() (bool, string) {
			for _, n := range nodes {
				ph := poolHealth(t, n, pool)
				for _, m := range members {
					ca, okA := checkBy(originOf(ph, "a"), m.node)
					cb, okB := checkBy(originOf(ph, "b"), m.node)
					if !okA || !okB || ca.Region != m.region || ca.Healthy != aHealthy[m.node] || !cb.Healthy {
						return false, "as seen by " + n.api + ": " + describeHealth(ph)
					}
				}
			}
			return true, ""
		}
	}
	everyNodeAnswers := func(want ...string) func() (bool, string) {
		slices.Sort(want)
		return func() (bool, string) {
			for i, n := range nodes {
				got, status := dig(t, n.dns, "www.glb.example.com", "A")
				if status != "NOERROR" || !slices.Equal(got, want) {
					return false, fmt.Sprintf("%s answered %s %v", members[i].node, status, got)
				}
			}
			return true, ""
		}
	}
	both := []string{a.ip(), b.ip()}

	eventually(t, 8*time.Second, "every node reports both origins healthy", allReport(map[string]bool{"n1": true, "n2": true, "n3": true}))
	for _, m := range members {
		if a.hitsFrom(m.source) == 0 {
			t.Errorf("origin a saw no check from %s (%s): --check-source not used", m.source, m.node)
		}
	}
	// Each node reads the others' views every second and then compiles a
	// snapshot: 2 s left a loaded machine one try.
	eventually(t, 10*time.Second, "every node answers both origins", everyNodeAnswers(both...))

	// One region of three fails the origin: no majority for down.
	a.failFor("127.0.0.2")
	took := eventually(t, 6*time.Second, "n1's published view has a down", allReport(map[string]bool{"n1": false, "n2": true, "n3": true}))
	t.Logf("failing from n1's address → n1's view published down in %v", took.Round(time.Millisecond))
	// Every node reloads views at least every second and at once on a
	// notification, so this window covers each one combining n1's down.
	consistently(t, 2500*time.Millisecond, "origin a stays in every node's answer with 1 of 3 regions down", everyNodeAnswers(both...))
	for i, n := range nodes {
		ph := poolHealth(t, n, pool)
		oa := originOf(ph, "a")
		if oa.Healthy == nil || !*oa.Healthy {
			t.Errorf("%s: agreed health of a with only WEU down: %s; want healthy", members[i].node, describeHealth(ph))
		}
		if c, _ := checkBy(oa, "n1"); c.Healthy || !strings.Contains(c.Reason, "503") {
			t.Errorf("%s: n1's check of a = %+v; want unhealthy with the HTTP 503 reason", members[i].node, c)
		}
	}

	// Two regions of three fail it: down on every node.
	a.failFor("127.0.0.2", "127.0.0.3")
	took = eventually(t, 6*time.Second, "origin a leaves every node's answer with 2 of 3 regions down", everyNodeAnswers(b.ip()))
	t.Logf("failing from n1's and n2's addresses → out of every node's DNS in %v", took.Round(time.Millisecond))
	for i, n := range nodes {
		ph := poolHealth(t, n, pool)
		oa := originOf(ph, "a")
		if oa.Healthy == nil || *oa.Healthy || !strings.Contains(oa.Reason, "503") || !strings.Contains(oa.Reason, "1 of 3 regions") {
			t.Errorf("%s: agreed health of a: %s; want unhealthy, the HTTP 503 reason, healthy in 1 of 3 regions", members[i].node, describeHealth(ph))
		}
		if ph.Healthy == nil || !*ph.Healthy {
			t.Errorf("%s: pool health %v with b healthy and minimum_origins 1; want healthy", members[i].node, ph.Healthy)
		}
		want := map[string]bool{"n1": false, "n2": false, "n3": true}
		for _, m := range members {
			c, ok := checkBy(oa, m.node)
			switch {
			case !ok || c.Region != m.region || c.Healthy != want[m.node]:
				t.Errorf("%s: %s's check of a = %+v; want region %s healthy=%t", members[i].node, m.node, c, m.region, want[m.node])
			case !c.Healthy && !strings.Contains(c.Reason, "503"):
				t.Errorf("%s: %s's check of a has reason %q; want the HTTP 503", members[i].node, m.node, c.Reason)
			}
		}
	}

	// Recovery is agreed the same way.
	a.failFor()
	took = eventually(t, 6*time.Second, "origin a back in every node's answer", everyNodeAnswers(both...))
	t.Logf("checks pass again → back in every node's DNS in %v", took.Round(time.Millisecond))
}

// TestHealthDynamicLatency: with no RTT data a dynamic_latency load
// balancer answers its pools in configured order; once checks have
// measured them, the faster pool answers, for clients of the measuring
// region and, by the nearest-region fallback, of a region without data.
func TestHealthDynamicLatency(t *testing.T) {
	t.Parallel()
	origins := startOrigins(t, "127.0.3.1", "127.0.3.2")
	slowO, fastO := origins[0], origins[1]
	slowO.setDelay(150 * time.Millisecond)
	g := startGlbd(t, "", "--region", "WEU")
	// Locate the dig client (127.0.0.1) in the node's region, and a second
	// prefix in a region no node measures from.
	g.must("POST", "/api/v1/networks", map[string]any{"cidr": "127.0.0.0/8", "region": "WEU"})
	g.must("POST", "/api/v1/networks", map[string]any{"cidr": "198.51.100.0/24", "region": "NEAS"})
	zone := zoneFor(t, g)
	slow := g.must("POST", "/api/v1/pools", map[string]any{"name": "slow", "origins": []map[string]any{{"name": "s", "address": slowO.ip()}}})["id"].(string)
	fast := g.must("POST", "/api/v1/pools", map[string]any{"name": "fast", "origins": []map[string]any{{"name": "f", "address": fastO.ip()}}})["id"].(string)
	lb := g.must("POST", "/api/v1/load_balancers", map[string]any{
		"zone": zone, "name": "www.glb.example.com", "steering_policy": "dynamic_latency",
		"default_pools": []any{slow, fast}, "fallback_pool": slow, "answers": 0,
	})["id"].(string)

	// No monitor yet, so no RTT: the configured order, slow first. Without
	// a monitor nothing can make fast answer, so the deadline only bounds
	// the snapshot's publication, which a loaded machine can delay past
	// the 1 s this had.
	answerWithin(t, g, 10*time.Second, "no RTT data: the first configured pool answers", slowO.ip())
	e := explain(t, g, lb, "127.0.0.1")
	if e.Decision.Client.Region != "WEU" {
		t.Fatalf("explain: client 127.0.0.1 located in %q, want WEU from the operator network", e.Decision.Client.Region)
	}
	if c := e.Decision.Candidates; len(c) != 2 || c[0].ID != slow || !c[0].Chosen || c[0].RTTMs != nil || c[1].RTTMs != nil {
		t.Fatalf("explain without RTT data: candidates %+v; want [slow (chosen), fast] without rtt_ms", c)
	}

	mon := g.must("POST", "/api/v1/monitors", map[string]any{
		"type": "http", "path": "/health", "port": slowO.port(), "expected_codes": "200",
		"interval": 1, "timeout": 1, "retries": 0, "consecutive_down": 2, "consecutive_up": 2,
	})["id"].(string)
	for _, p := range []string{slow, fast} {
		g.must("PATCH", "/api/v1/pools/"+p, map[string]any{"monitor": mon})
	}

	// Two checks a second apart (consecutive_up), a publication and a
	// snapshot stand between the monitor and the answer; the deadline is
	// for a loaded machine, the order is what the test is about.
	took := answerWithin(t, g, 20*time.Second, "RTT measured: the faster pool answers", fastO.ip())
	t.Logf("monitor attached → faster pool answered in %v", took.Round(time.Millisecond))

	rtts := func(e api.Explanation) (map[string]float64, string) {
		out := map[string]float64{}
		var desc []string
		for _, c := range e.Decision.Candidates {
			if c.RTTMs != nil {
				out[c.ID] = *c.RTTMs
				desc = append(desc, fmt.Sprintf("%s rtt=%.1fms chosen=%t", c.Name, *c.RTTMs, c.Chosen))
			} else {
				desc = append(desc, fmt.Sprintf("%s rtt=none chosen=%t", c.Name, c.Chosen))
			}
		}
		return out, strings.Join(desc, "; ")
	}
	// Both pools measured, in either order of arrival.
	eventually(t, 10*time.Second, "explain ranks both pools by RTT", func() (bool, string) {
		r, desc := rtts(explain(t, g, lb, "127.0.0.1"))
		return len(r) == 2, desc
	})
	for _, client := range []string{"127.0.0.1", "198.51.100.7"} {
		e := explain(t, g, lb, client)
		r, desc := rtts(e)
		c := e.Decision.Candidates
		if len(c) != 2 || c[0].ID != fast || !c[0].Chosen || len(r) != 2 {
			t.Errorf("explain for %s (region %s): %s; want fast chosen first, both with rtt_ms", client, e.Decision.Client.Region, desc)
			continue
		}
		// The slow origin holds every answer 150 ms, a floor no load can
		// lower: an RTT below it is not the check's. Load only adds to an
		// RTT, to fast's as to slow's: on a loaded machine a check of fast
		// waits for a CPU longer than the 50 ms a "100 ms quicker" bound
		// left it, so fast is asked to be quicker, as its being chosen says.
		if r[slow] < 150 || r[fast] >= r[slow] {
			t.Errorf("explain for %s: %s; want slow ≥ 150 ms and fast quicker", client, desc)
		}
		t.Logf("explain for %s (region %s): %s", client, e.Decision.Client.Region, desc)
	}
	if got := explain(t, g, lb, "198.51.100.7").Decision.Client.Region; got != "NEAS" {
		t.Errorf("client 198.51.100.7 located in %q, want NEAS (no RTT data there: nearest-region fallback)", got)
	}
	ph := poolHealth(t, g, fast)
	if _, ok := ph.RTTMs["WEU"]; !ok {
		t.Errorf("fast pool health rtt_ms = %v; want a WEU entry", ph.RTTMs)
	}
}
