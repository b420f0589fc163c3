package healthcheck

import (
	"strings"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
)

var now = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// combineConfig: pool "p" with origins a and b under a monitor checking
// every 10 s (freshness window 30 s), and pool "free" without a monitor.
func combineConfig(checkRegions ...string) *pools.Config {
	m := pools.DefaultMonitor()
	m.ID, m.Interval, m.Timeout, m.Retries = "m", 10, 2, 1
	p := pools.DefaultPool()
	p.ID, p.Monitor, p.CheckRegions = "p", "m", checkRegions
	a, b := pools.DefaultOrigin(), pools.DefaultOrigin()
	a.Name, a.Address = "a", "192.0.2.1"
	b.Name, b.Address = "b", "192.0.2.2"
	p.Origins = []pools.Origin{a, b}
	free := pools.DefaultPool()
	free.ID = "free"
	free.Origins = []pools.Origin{a}
	return &pools.Config{Monitors: []pools.Monitor{m}, Pools: []pools.Pool{p, free}}
}

// vote is one node's view of origin a of pool p (and b, healthy).
func vote(node, region string, healthy bool, age time.Duration, rtt time.Duration) pools.NodeHealth {
	reason := ""
	if !healthy {
		reason = "HTTP 503 not in expected codes 200"
	}
	return pools.NodeHealth{Node: node, Region: region, Published: now, Origins: []pools.OriginState{
		{Pool: "p", Origin: "a", Healthy: healthy, Reason: reason, RTT: rtt, CheckedAt: now.Add(-age)},
		{Pool: "p", Origin: "b", Healthy: true, RTT: rtt, CheckedAt: now.Add(-age)},
	}}
}

const fresh = time.Second

func TestCombineMajorities(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		regions []string // check_regions
		views   []pools.NodeHealth
		healthy bool
		absent  bool
	}{
		{"one node healthy", nil, []pools.NodeHealth{vote("n1", "WEU", true, fresh, 0)}, true, false},
		{"one node down", nil, []pools.NodeHealth{vote("n1", "WEU", false, fresh, 0)}, false, false},
		{"2 of 3 regions healthy", nil, []pools.NodeHealth{
			vote("n1", "WEU", true, fresh, 0), vote("n2", "ENAM", true, fresh, 0), vote("n3", "SAS", false, fresh, 0),
		}, true, false},
		{"1 of 3 regions healthy", nil, []pools.NodeHealth{
			vote("n1", "WEU", true, fresh, 0), vote("n2", "ENAM", false, fresh, 0), vote("n3", "SAS", false, fresh, 0),
		}, false, false},
		{"1 of 2 regions healthy is a tie: unhealthy", nil, []pools.NodeHealth{
			vote("n1", "WEU", true, fresh, 0), vote("n2", "ENAM", false, fresh, 0),
		}, false, false},
		{"within a region, the majority of its nodes", nil, []pools.NodeHealth{
			// WEU: 2 of 3 nodes say down, so WEU says down; ENAM and SAS up.
			vote("w1", "WEU", false, fresh, 0), vote("w2", "WEU", false, fresh, 0), vote("w3", "WEU", true, fresh, 0),
			vote("e1", "ENAM", true, fresh, 0), vote("s1", "SAS", true, fresh, 0),
		}, true, false},
		{"many nodes in one region do not outvote two regions", nil, []pools.NodeHealth{
			vote("w1", "WEU", true, fresh, 0), vote("w2", "WEU", true, fresh, 0), vote("w3", "WEU", true, fresh, 0),
			vote("e1", "ENAM", false, fresh, 0), vote("s1", "SAS", false, fresh, 0),
		}, false, false},
		{"stale views are ignored", nil, []pools.NodeHealth{
			vote("n1", "WEU", true, fresh, 0),
			vote("n2", "ENAM", false, 31*time.Second, 0), vote("n3", "SAS", false, 31*time.Second, 0),
		}, true, false},
		{"all stale: no entry", nil, []pools.NodeHealth{vote("n1", "WEU", false, time.Hour, 0)}, false, true},
		{"no views: no entry", nil, nil, false, true},
		{"check_regions restricts the vote", []string{"WEU"}, []pools.NodeHealth{
			vote("n1", "WEU", true, fresh, 0), vote("n2", "ENAM", false, fresh, 0), vote("n3", "SAS", false, fresh, 0),
		}, true, false},
		{"check_regions majority counts reporting regions only", []string{"WEU", "ENAM", "SAS"}, []pools.NodeHealth{
			vote("n1", "WEU", true, fresh, 0), vote("n4", "OC", false, fresh, 0),
		}, true, false},
		{"no check region reports: no entry", []string{"SAS"}, []pools.NodeHealth{vote("n1", "WEU", false, fresh, 0)}, false, true},
		{"a node's latest view wins", nil, []pools.NodeHealth{
			vote("n1", "WEU", true, fresh, 0),
			func() pools.NodeHealth {
				v := vote("n1", "WEU", false, fresh, 0)
				v.Published = now.Add(-time.Minute)
				return v
			}(),
		}, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := Combine(combineConfig(tc.regions...), tc.views, now)
			got, ok := h.Origin(pools.OriginKey{Pool: "p", Origin: "a"})
			if tc.absent {
				if ok {
					t.Fatalf("want no entry (healthy by default), got %+v", got)
				}
				return
			}
			if !ok {
				t.Fatal("no entry")
			}
			if got.Healthy != tc.healthy {
				t.Errorf("healthy=%v (%s), want %v", got.Healthy, got.Reason, tc.healthy)
			}
			if !got.Healthy && !strings.Contains(got.Reason, "HTTP 503") {
				t.Errorf("reason %q does not say why", got.Reason)
			}
		})
	}
}

func TestCombineFreshnessAllowsSlowChecks(t *testing.T) {
	t.Parallel()
	cfg := combineConfig()
	// interval 10 s, but a check may take timeout 2 s × 2 attempts = 4 s:
	// the period is 10 s, the window 30 s. Widen the budget past it.
	cfg.Monitors[0].Timeout, cfg.Monitors[0].Retries = 10, 2 // 30 s per check
	h := Combine(cfg, []pools.NodeHealth{vote("n1", "WEU", false, 60*time.Second, 0)}, now)
	if got, ok := h.Origin(pools.OriginKey{Pool: "p", Origin: "a"}); !ok || got.Healthy {
		t.Errorf("a result 60 s old from a check that can take 30 s was dropped: %+v %v", got, ok)
	}
	h = Combine(cfg, []pools.NodeHealth{vote("n1", "WEU", false, 91*time.Second, 0)}, now)
	if _, ok := h.Origin(pools.OriginKey{Pool: "p", Origin: "a"}); ok {
		t.Error("a result older than 3 check periods still votes")
	}
}

func TestCombineUnmonitoredPoolsHaveNoEntries(t *testing.T) {
	t.Parallel()
	v := vote("n1", "WEU", true, fresh, 0)
	v.Origins = append(v.Origins, pools.OriginState{Pool: "free", Origin: "a", Healthy: false, CheckedAt: now})
	h := Combine(combineConfig(), []pools.NodeHealth{v}, now)
	for k := range h.Origins() {
		if k.Pool == "free" {
			t.Errorf("entry for %v of a pool without a monitor", k)
		}
	}
	if _, ok := h.Origin(pools.OriginKey{Pool: "p", Origin: "a"}); !ok {
		t.Error("monitored pool has no entry")
	}
}

func TestCombineRTT(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	views := []pools.NodeHealth{
		vote("w1", "WEU", true, fresh, 10*ms),
		vote("w2", "WEU", true, fresh, 30*ms),
		vote("e1", "ENAM", true, fresh, 100*ms),
	}
	// b is slow everywhere and down in ENAM: up in 1 of 2 regions, so
	// down, and out of every region's mean.
	for i := range views {
		views[i].Origins[1].RTT = 500 * ms
	}
	views[2].Origins[1].Healthy = false
	h := Combine(combineConfig(), views, now)
	// WEU: a is the mean of its two nodes, 20 ms.
	if got, want := h.RTT(pools.PoolRegion{Pool: "p", Region: "WEU"}), 20*ms; got != want {
		t.Errorf("WEU RTT %v, want %v (mean over healthy origins only)", got, want)
	}
	if got, want := h.RTT(pools.PoolRegion{Pool: "p", Region: "ENAM"}), 100*ms; got != want {
		t.Errorf("ENAM RTT %v, want %v", got, want)
	}

	// With b healthy everywhere, it joins the mean.
	views[2].Origins[1].Healthy = true
	h = Combine(combineConfig(), views, now)
	if got, want := h.RTT(pools.PoolRegion{Pool: "p", Region: "WEU"}), (20*ms+500*ms)/2; got != want {
		t.Errorf("WEU RTT %v, want %v", got, want)
	}
}

func TestCombineIsDeterministic(t *testing.T) {
	t.Parallel()
	views := []pools.NodeHealth{
		vote("n3", "SAS", false, fresh, 0), vote("n1", "WEU", false, fresh, 0), vote("n2", "ENAM", true, fresh, 0),
	}
	views[0].Origins[0].Reason = "connection refused"
	first, _ := Combine(combineConfig(), views, now).Origin(pools.OriginKey{Pool: "p", Origin: "a"})
	// Every node may list the views in another order.
	reversed := []pools.NodeHealth{views[2], views[1], views[0]}
	second, _ := Combine(combineConfig(), reversed, now).Origin(pools.OriginKey{Pool: "p", Origin: "a"})
	if first != second {
		t.Errorf("order changed the result: %+v vs %+v", first, second)
	}
	if first.Healthy || !strings.HasPrefix(first.Reason, "SAS: connection refused") {
		t.Errorf("got %+v, want down with the first down region's reason", first)
	}
}

// A healthy origin's agreed state carries the note of the first healthy
// voting node, in node order (a certificate's days left); a down node's
// reason or a node outside check_regions does not make it.
func TestDecideHealthyNote(t *testing.T) {
	t.Parallel()
	st := func(healthy bool, reason string) pools.OriginState {
		return pools.OriginState{Healthy: healthy, Reason: reason}
	}
	fresh := []entry{
		{node: "n1", region: "SAS", state: st(true, "certificate valid for 80 more days")},
		{node: "n2", region: "WEU", state: st(false, "certificate expires in 2 days, under min_days_valid 7")},
		{node: "n3", region: "WEU", state: st(true, "")},
		{node: "n4", region: "WEU", state: st(true, "certificate valid for 81 more days")},
	}
	if oh, ok := decide(fresh, nil); !ok || !oh.Healthy || oh.Note != "certificate valid for 80 more days" {
		t.Errorf("every region votes: %+v", oh)
	}
	if oh, ok := decide(fresh, map[string]bool{"WEU": true}); !ok || !oh.Healthy || oh.Note != "certificate valid for 81 more days" {
		t.Errorf("only WEU votes: %+v", oh)
	}
	if oh, _ := decide(fresh[1:2], nil); oh.Healthy || oh.Note != "" {
		t.Errorf("down: %+v", oh)
	}
}
