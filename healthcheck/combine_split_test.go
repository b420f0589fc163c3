package healthcheck

import (
	"testing"

	"github.com/glb-dns/glb/pools"
)

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
