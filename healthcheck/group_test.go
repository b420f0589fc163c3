package healthcheck

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/glb-dns/glb/pools"
)

func TestGroupDecide(t *testing.T) {
	t.Parallel()
	up := func(id string, r role) monitorVote {
		return monitorVote{monitor: id, role: r, known: true, healthy: true}
	}
	down := func(id string, r role) monitorVote {
		return monitorVote{monitor: id, role: r, known: true, reason: id + " failed"}
	}
	unchecked := func(id string, r role) monitorVote { return monitorVote{monitor: id, role: r} }
	for _, tc := range []struct {
		name   string
		vs     []monitorVote
		up     bool
		reason string
	}{
		{"single must up", []monitorVote{up("h", roleMust)}, true, ""},
		{"single must down keeps its own reason", []monitorVote{down("h", roleMust)}, false, "h failed"},
		{"http up, must tcp down", []monitorVote{up("h", roleAny), down("t", roleMust)}, false, "monitor t: t failed"},
		{"http up, tcp monitoring only down", []monitorVote{up("h", roleAny), down("t", roleOnly)}, true, ""},
		{"must up, every other down", []monitorVote{up("t", roleMust), down("h", roleAny), down("g", roleAny)}, false, "monitor h: h failed"},
		{"must up, one other of two up", []monitorVote{up("t", roleMust), down("h", roleAny), up("g", roleAny)}, true, ""},
		{"two musts, the second down", []monitorVote{up("a", roleMust), down("b", roleMust), up("h", roleAny)}, false, "monitor b: b failed"},
		{"musts only, all up", []monitorVote{up("a", roleMust), up("b", roleMust)}, true, ""},
		{"others only, one up", []monitorVote{down("a", roleAny), up("b", roleAny)}, true, ""},
		{"monitoring only alone, down", []monitorVote{down("t", roleOnly)}, true, ""},
		{"an unchecked must counts up", []monitorVote{up("h", roleAny), unchecked("t", roleMust)}, true, ""},
		{"an unchecked other counts up", []monitorVote{down("h", roleAny), unchecked("g", roleAny)}, true, ""},
	} {
		gotUp, reason := groupDecide(tc.vs)
		if gotUp != tc.up || reason != tc.reason {
			t.Errorf("%s: up %v %q, want %v %q", tc.name, gotUp, reason, tc.up, tc.reason)
		}
	}
}

// groupSite is one origin on loopback with an HTTP server that answers
// 200 and a TCP port that refuses: monitor "http" sees it up, "tcp" down.
func groupSite(t *testing.T, group ...pools.PoolMonitor) *pools.Config {
	t.Helper()
	host, httpPort := addrOf(t, serve(t, &sequence{codes: []int{http.StatusOK}}).URL)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, closed := addrOf(t, ln.Addr().String())
	ln.Close() // nothing listens there: connection refused
	hm, tm := monitor(pools.MonitorHTTP), monitor(pools.MonitorTCP)
	hm.ID, hm.Port, hm.Interval = "http", httpPort, 100
	tm.ID, tm.Port, tm.Interval = "tcp", closed, 100
	p := pools.DefaultPool()
	p.ID, p.Name, p.Monitors = "g", "g", group
	o := pools.DefaultOrigin()
	o.Name, o.Address = "o1", host
	p.Origins = []pools.Origin{o}
	return &pools.Config{Monitors: []pools.Monitor{hm, tm}, Pools: []pools.Pool{p}}
}

// viewsOf waits until the origin's state shows n monitors' views.
func viewsOf(t *testing.T, c *Checker, n int) pools.OriginState {
	t.Helper()
	var st pools.OriginState
	eventually(t, "every monitor's view", func() bool {
		var ok bool
		st, ok = stateOf(c.View(), "g")
		return ok && len(st.Monitors) == n
	})
	return st
}

// TestMonitorGroupMustBeHealthy: HTTP sees the origin up, a must-be-healthy
// TCP monitor sees it down: the origin is down, and the view shows both.
// With TCP monitoring_only the origin stays up, both views still shown.
func TestMonitorGroupMustBeHealthy(t *testing.T) {
	t.Parallel()
	cfg := groupSite(t, pools.PoolMonitor{Monitor: "http"}, pools.PoolMonitor{Monitor: "tcp", MustBeHealthy: true})
	c := start(t, Options{Node: "n1", Region: "WEU"})
	c.Update(cfg)
	st := viewsOf(t, c, 2)
	if st.Healthy || !strings.HasPrefix(st.Reason, "monitor tcp: ") {
		t.Errorf("origin healthy %v (%q); want down because of monitor tcp", st.Healthy, st.Reason)
	}
	if m := st.Monitors; m[0].Monitor != "http" || !m[0].Healthy || m[1].Monitor != "tcp" || m[1].Healthy || m[1].Reason == "" {
		t.Errorf("monitors' views %+v; want http up, tcp down with a reason", m)
	}

	cfg.Pools[0].Monitors[1] = pools.PoolMonitor{Monitor: "tcp", MonitoringOnly: true}
	before := c.pairOf(pools.OriginKey{Pool: "g", Origin: "o1"})
	c.Update(cfg)
	st = viewsOf(t, c, 2)
	if !st.Healthy || st.Reason != "" {
		t.Errorf("with tcp monitoring_only: healthy %v (%q), want up", st.Healthy, st.Reason)
	}
	if st.Monitors[1].Healthy {
		t.Errorf("monitoring_only tcp view %+v, want it still shown down", st.Monitors[1])
	}
	if after := c.pairOf(pools.OriginKey{Pool: "g", Origin: "o1"}); after != before {
		t.Error("a change of roles in the group restarted the http check")
	}
	if got := healthyGauge(t, c, "g"); got != 1 {
		t.Errorf("origins_healthy{pool=g} = %v, want 1", got)
	}
}

// TestMonitorGroupOthers: without a must-be-healthy monitor, one other
// monitor seeing the origin up is enough; a pool's single monitor gives
// views without the per-monitor list.
func TestMonitorGroupOthers(t *testing.T) {
	t.Parallel()
	cfg := groupSite(t, pools.PoolMonitor{Monitor: "http"}, pools.PoolMonitor{Monitor: "tcp"})
	c := start(t, Options{Node: "n1", Region: "WEU"})
	c.Update(cfg)
	if st := viewsOf(t, c, 2); !st.Healthy {
		t.Errorf("http up, tcp down, neither required: down (%q), want up", st.Reason)
	}
	cfg.Pools[0].Monitors = []pools.PoolMonitor{{Monitor: "tcp"}}
	c.Update(cfg)
	eventually(t, "tcp alone decides", func() bool {
		st, ok := stateOf(c.View(), "g")
		return ok && !st.Healthy && len(st.Monitors) == 1
	})
	cfg.Pools[0].Monitors, cfg.Pools[0].Monitor = nil, "http"
	c.Update(cfg)
	eventually(t, "a single monitor's plain view", func() bool {
		st, ok := stateOf(c.View(), "g")
		return ok && st.Healthy && st.Monitors == nil
	})
}

// TestFollowerPublishesMonitorViews: a monitoring-only monitor's change
// leaves the origin's state alone but is news, so that every node's page
// shows it; stale monitoring-only views are left out.
func TestFollowerPublishesMonitorViews(t *testing.T) {
	t.Parallel()
	cfg := groupSite(t, pools.PoolMonitor{Monitor: "http", MustBeHealthy: true}, pools.PoolMonitor{Monitor: "tcp", MonitoringOnly: true})
	c := New(Options{Node: "n1", Region: "WEU", unit: testUnit})
	c.Update(cfg)
	k := pools.OriginKey{Pool: "g", Origin: "o1"}
	w := c.watches[k]
	hp, tp := w.pairs[0], w.pairs[1]
	c.record(hp, result{healthy: true, rtt: 5 * time.Millisecond}, 0)
	c.record(tp, result{healthy: true, rtt: 7 * time.Millisecond}, 0)
	f := c.Follow()
	u, commit := f.Next(time.Now())
	commit()
	if len(u.Origins) != 1 || len(u.Origins[0].Monitors) != 2 || u.Origins[0].RTT != 5*time.Millisecond {
		t.Fatalf("first update %+v; want the origin with both views and the deciding monitor's RTT", u.Origins)
	}
	c.record(tp, result{reason: "connection refused"}, 0)
	u, commit = f.Next(time.Now())
	commit()
	if len(u.Origins) != 1 || !u.Origins[0].Healthy || u.Origins[0].Monitors[1].Healthy {
		t.Errorf("after tcp went down: %+v; want the origin, still up, with tcp's view down", u.Origins)
	}
	if u, _ = f.Next(time.Now()); len(u.Origins) != 0 {
		t.Errorf("nothing changed, yet %+v", u.Origins)
	}
	// tcp's result grows stale while http's is renewed: its view goes.
	tp.checkedAt = time.Now().Add(-2 * c.staleAfter(tp.t))
	u, _ = f.Next(time.Now())
	if len(u.Origins) != 1 || len(u.Origins[0].Monitors) != 1 || u.Origins[0].Monitors[0].Monitor != "http" {
		t.Errorf("with tcp stale: %+v; want http's view only", u.Origins)
	}
	// A deciding monitor stale: the node no longer vouches for the origin.
	hp.checkedAt = tp.checkedAt
	if u, _ = f.Next(time.Now()); len(u.Removed) != 1 || u.Removed[0] != k {
		t.Errorf("with http stale: removed %v, want %v", u.Removed, k)
	}
}

// TestTallyWindowOfGroup: a pool's entries stay fresh for 3 check periods
// of the slowest monitor of its group.
func TestTallyWindowOfGroup(t *testing.T) {
	t.Parallel()
	fast, slow := monitor(pools.MonitorHTTP), monitor(pools.MonitorTCP)
	fast.ID, fast.Interval, fast.Timeout = "fast", 10, 1
	slow.ID, slow.Interval, slow.Timeout = "slow", 60, 1
	p := pools.DefaultPool()
	p.ID, p.Name = "g", "g"
	p.Monitors = []pools.PoolMonitor{{Monitor: "fast", MustBeHealthy: true}, {Monitor: "slow", MonitoringOnly: true}}
	p.Origins = []pools.Origin{{Name: "o1", Address: "192.0.2.1", Enabled: true, Weight: 1}}
	cfg := &pools.Config{Monitors: []pools.Monitor{fast, slow}, Pools: []pools.Pool{p}}
	tl := NewTally()
	tl.Configure(cfg)
	t0 := time.Now()
	tl.Apply(pools.HealthUpdate{Node: "n1", Region: "WEU", Published: t0, Full: true,
		Origins: []pools.OriginState{{Pool: "g", Origin: "o1", Healthy: false, Reason: "down"}}})
	for _, tc := range []struct {
		after time.Duration
		known bool
	}{{179 * time.Second, true}, {180 * time.Second, false}} {
		_, ok := tl.Health(t0.Add(tc.after)).Origin(pools.OriginKey{Pool: "g", Origin: "o1"})
		if ok != tc.known {
			t.Errorf("%v after the heartbeat: entry %v, want %v", tc.after, ok, tc.known)
		}
	}
}

func healthyGauge(t *testing.T, c *Checker, pool string) float64 {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	return testutil.ToFloat64(c.m.healthy.WithLabelValues(pool))
}
