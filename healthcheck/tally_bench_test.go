package healthcheck

import (
	"fmt"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
)

// estateViews is 1,600 monitored pools of 64 origins (102,400) and the
// whole views of ten nodes in three regions, every origin healthy.
func estateViews() (*pools.Config, []pools.NodeHealth) {
	m := pools.DefaultMonitor()
	m.ID, m.Interval = "m", 10
	cfg := &pools.Config{Monitors: []pools.Monitor{m}}
	var states []pools.OriginState
	for i := range 1600 {
		p := pools.DefaultPool()
		p.ID, p.Monitor, p.Revision = fmt.Sprintf("p%d", i), "m", 1
		for j := range 64 {
			o := pools.DefaultOrigin()
			o.Name = fmt.Sprintf("o%d", j)
			p.Origins = append(p.Origins, o)
			states = append(states, pools.OriginState{Pool: p.ID, Origin: o.Name, Healthy: true, RTT: 20 * time.Millisecond, CheckedAt: now})
		}
		cfg.Pools = append(cfg.Pools, p)
	}
	var views []pools.NodeHealth
	for n := range 10 {
		views = append(views, pools.NodeHealth{Node: fmt.Sprintf("n%d", n), Region: tallyRegions[n%3], Published: now, Origins: states})
	}
	return cfg, views
}

// BenchmarkTallyOneFlip is what a node does when one origin of 102,400,
// checked by ten nodes in three regions, goes down (or up) in two
// regions: apply the four nodes' updates that say so, recombine.
func BenchmarkTallyOneFlip(b *testing.B) {
	cfg, views := estateViews()
	tally := NewTally()
	tally.Configure(cfg)
	for _, v := range views {
		tally.Apply(pools.FullUpdate(v))
	}
	tally.Health(now)
	b.ReportAllocs()
	b.ResetTimer()
	flipped := 0
	for i := range b.N {
		at := now.Add(time.Duration(i) * time.Millisecond)
		k := pools.OriginKey{Pool: fmt.Sprintf("p%d", i%1600), Origin: "o1"}
		healthy := (i/1600)%2 == 1
		for _, n := range []int{0, 3, 1, 4} { // two of WEU's four, two of ENAM's three
			tally.Apply(pools.HealthUpdate{Node: fmt.Sprintf("n%d", n), Region: tallyRegions[n%3], Published: at,
				Origins: []pools.OriginState{{Pool: k.Pool, Origin: k.Origin, Healthy: healthy, Reason: "refused"}}})
		}
		if oh, _ := tally.Health(at).Origin(k); oh.Healthy == healthy {
			flipped++
		}
	}
	if flipped != b.N {
		b.Fatalf("%d of %d flips agreed", flipped, b.N)
	}
}

// BenchmarkCombineWhole is the same flip recombined from the ten whole
// views, as before the Tally: the cost grows with the estate.
func BenchmarkCombineWhole(b *testing.B) {
	cfg, views := estateViews()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		Combine(cfg, views, now)
	}
}
