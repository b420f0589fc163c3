package healthcheck

import (
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
)

// TestCombineFreshnessWindowEdge: a result exactly 3 check periods old
// (30 s here) is stale; one just younger votes.
func TestCombineFreshnessWindowEdge(t *testing.T) {
	t.Parallel()
	key := pools.OriginKey{Pool: "p", Origin: "a"}
	if _, ok := Combine(combineConfig(), []pools.NodeHealth{vote("n1", "WEU", false, 30*time.Second, 0)}, now).Origin(key); ok {
		t.Error("a result exactly 30 s old voted")
	}
	if _, ok := Combine(combineConfig(), []pools.NodeHealth{vote("n1", "WEU", false, 30*time.Second-time.Millisecond, 0)}, now).Origin(key); !ok {
		t.Error("a result just under 30 s old did not vote")
	}
}

// TestCombineRTTOnlyFromHealthyEntries: a node that sees an origin down
// reports no latency for it, even when the origin is healthy overall.
func TestCombineRTTOnlyFromHealthyEntries(t *testing.T) {
	t.Parallel()
	at := now.Add(-fresh)
	view := func(node, region string, aUp bool, aRTT, bRTT time.Duration) pools.NodeHealth {
		return pools.NodeHealth{Node: node, Region: region, Published: now, Origins: []pools.OriginState{
			{Pool: "p", Origin: "a", Healthy: aUp, RTT: aRTT, CheckedAt: at},
			{Pool: "p", Origin: "b", Healthy: true, RTT: bRTT, CheckedAt: at},
		}}
	}
	h := Combine(combineConfig(), []pools.NodeHealth{
		view("w1", "WEU", true, 10*time.Millisecond, 10*time.Millisecond),
		view("e1", "ENAM", true, 20*time.Millisecond, 20*time.Millisecond),
		view("s1", "SAS", false, 500*time.Millisecond, 50*time.Millisecond),
	}, now)
	if a, _ := h.Origin(pools.OriginKey{Pool: "p", Origin: "a"}); !a.Healthy {
		t.Fatal("a should be healthy in 2 of 3 regions")
	}
	if got := h.RTT(pools.PoolRegion{Pool: "p", Region: "SAS"}); got != 50*time.Millisecond {
		t.Errorf("SAS RTT %v, want 50ms: only b is healthy from there", got)
	}
}

// TestCombineOneOneSplitInARegionIsDown: within a region a strict
// majority of its nodes must say healthy; 1 of 2 is a tie and the region
// says down, whether it votes alone or beside others.
func TestCombineOneOneSplitInARegionIsDown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		views   []pools.NodeHealth
		healthy bool
	}{
		{"alone", []pools.NodeHealth{vote("w1", "WEU", true, fresh, 0), vote("w2", "WEU", false, fresh, 0)}, false},
		{"beside one region up and one down", []pools.NodeHealth{
			vote("w1", "WEU", true, fresh, 0), vote("w2", "WEU", false, fresh, 0),
			vote("e1", "ENAM", false, fresh, 0), vote("s1", "SAS", true, fresh, 0),
		}, false},
		{"2 of 3 nodes is a majority", []pools.NodeHealth{
			vote("w1", "WEU", true, fresh, 0), vote("w2", "WEU", false, fresh, 0), vote("w3", "WEU", true, fresh, 0),
		}, true},
	} {
		h := Combine(combineConfig(), tc.views, now)
		got, ok := h.Origin(pools.OriginKey{Pool: "p", Origin: "a"})
		if !ok || got.Healthy != tc.healthy {
			t.Errorf("%s: %+v (entry %v), want healthy=%v", tc.name, got, ok, tc.healthy)
		}
	}
}
