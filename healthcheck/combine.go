package healthcheck

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/glb-dns/glb/pools"
)

// Combine folds every node's published view into the health that all nodes
// agree on. Given the same inputs every node computes the same result, so
// that DNS answers do not depend on which node a resolver asks. views
// should hold the latest view of each node, this node's own included
// (when a node appears twice, the most recently published view counts).
//
// The rules, per origin of a pool whose monitor exists:
//
//   - Only fresh entries vote: checked within 3 × the monitor's check
//     period, the period being the interval or, when longer, the time one
//     check can take (timeout × (retries + 1)); without that allowance an
//     origin that hangs every attempt would go stale and so count as
//     healthy.
//   - Within a region, the region says healthy when a strict majority of
//     its fresh nodes do.
//   - Across regions, only the pool's check_regions vote (every region
//     that reports, when the list is empty); of those that report, a
//     strict majority must say healthy. A tie is unhealthy: SPEC §3 asks
//     for a majority saying so, and 1 of 2 is not one.
//   - No fresh entry from a voting region: no entry in the result, which
//     steering reads as healthy (no result yet).
//
// Pools without a monitor get no entries: they are always healthy.
//
// RTT[{pool, region}] is the mean, over the pool's origins that are
// healthy in the result, of the smoothed RTTs that region's nodes report
// for them (fresh, healthy entries only, averaged per origin first). Every
// reporting region measures, whatever check_regions says: latency from a
// region is useful to dynamic_latency steering even where it does not vote.
func Combine(cfg *pools.Config, views []pools.NodeHealth, now time.Time) *pools.Health {
	h := &pools.Health{
		Origins: map[pools.OriginKey]pools.OriginHealth{},
		RTT:     map[pools.PoolRegion]time.Duration{},
	}
	if cfg == nil {
		return h
	}
	monitors := make(map[string]*pools.Monitor, len(cfg.Monitors))
	for i := range cfg.Monitors {
		monitors[cfg.Monitors[i].ID] = &cfg.Monitors[i]
	}
	entries := indexViews(views)

	for i := range cfg.Pools {
		p := &cfg.Pools[i]
		m := monitors[p.Monitor]
		if p.Monitor == "" || m == nil {
			continue
		}
		window := 3 * checkPeriod(m)
		voting := map[string]bool{}
		for _, r := range p.CheckRegions {
			voting[r] = true
		}
		rttSum := map[string]time.Duration{}
		rttN := map[string]int{}
		for _, o := range p.Origins {
			key := pools.OriginKey{Pool: p.ID, Origin: o.Name}
			var fresh []entry
			for _, e := range entries[key] {
				if now.Sub(e.state.CheckedAt) < window {
					fresh = append(fresh, e)
				}
			}
			oh, ok := decide(fresh, voting)
			if !ok {
				continue
			}
			h.Origins[key] = oh
			if !oh.Healthy {
				continue
			}
			for region, rtt := range originRTT(fresh) {
				rttSum[region] += rtt
				rttN[region]++
			}
		}
		for region, sum := range rttSum {
			h.RTT[pools.PoolRegion{Pool: p.ID, Region: region}] = sum / time.Duration(rttN[region])
		}
	}
	return h
}

// entry is one node's state of one origin.
type entry struct {
	node, region string
	state        pools.OriginState
}

// indexViews groups entries by origin, one view per node (the latest
// published), in node order so that reasons are chosen the same way on
// every node.
func indexViews(views []pools.NodeHealth) map[pools.OriginKey][]entry {
	latest := map[string]*pools.NodeHealth{}
	for i := range views {
		v := &views[i]
		if cur, ok := latest[v.Node]; !ok || v.Published.After(cur.Published) {
			latest[v.Node] = v
		}
	}
	nodes := make([]string, 0, len(latest))
	for n := range latest {
		nodes = append(nodes, n)
	}
	slices.Sort(nodes)
	out := map[pools.OriginKey][]entry{}
	for _, n := range nodes {
		v := latest[n]
		for _, s := range v.Origins {
			k := pools.OriginKey{Pool: s.Pool, Origin: s.Origin}
			out[k] = append(out[k], entry{node: v.Node, region: v.Region, state: s})
		}
	}
	return out
}

// checkPeriod is how often a pair's result is renewed at the slowest: the
// interval, or a check that times out on every attempt when that is longer.
func checkPeriod(m *pools.Monitor) time.Duration {
	interval := time.Duration(max(m.Interval, 1)) * time.Second
	budget := time.Duration(max(m.Timeout, 1)*(max(m.Retries, 0)+1)) * time.Second
	return max(interval, budget)
}

type regionVote struct {
	healthy, nodes int
	reason         string // first unhealthy node's, in node order
}

// decide applies the two majorities to one origin's fresh entries; ok is
// false when no voting region reports.
func decide(fresh []entry, voting map[string]bool) (pools.OriginHealth, bool) {
	regions := map[string]*regionVote{}
	for _, e := range fresh {
		if len(voting) > 0 && !voting[e.region] {
			continue
		}
		rv := regions[e.region]
		if rv == nil {
			rv = &regionVote{}
			regions[e.region] = rv
		}
		rv.nodes++
		if e.state.Healthy {
			rv.healthy++
		} else if rv.reason == "" {
			rv.reason = cmp.Or(e.state.Reason, "reported down")
		}
	}
	if len(regions) == 0 {
		return pools.OriginHealth{}, false
	}
	names := make([]string, 0, len(regions))
	for r := range regions {
		names = append(names, r)
	}
	slices.Sort(names)
	up, firstDown := 0, ""
	for _, r := range names {
		rv := regions[r]
		if 2*rv.healthy > rv.nodes {
			up++
		} else if firstDown == "" {
			firstDown = r
		}
	}
	if 2*up > len(regions) {
		return pools.OriginHealth{Healthy: true}, true
	}
	rv := regions[firstDown]
	reason := cmp.Or(rv.reason, "no majority of nodes healthy")
	if len(regions) > 1 {
		reason = fmt.Sprintf("%s: %s (healthy in %d of %d regions)", firstDown, reason, up, len(regions))
	}
	return pools.OriginHealth{Healthy: false, Reason: reason}, true
}

// originRTT averages one origin's smoothed RTT per region over the fresh,
// healthy entries that have one.
func originRTT(fresh []entry) map[string]time.Duration {
	sum := map[string]time.Duration{}
	n := map[string]int{}
	for _, e := range fresh {
		if !e.state.Healthy || e.state.RTT <= 0 {
			continue
		}
		sum[e.region] += e.state.RTT
		n[e.region]++
	}
	for r := range sum {
		sum[r] /= time.Duration(n[r])
	}
	return sum
}
