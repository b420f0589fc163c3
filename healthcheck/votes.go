package healthcheck

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/glb-dns/glb/pools"
)

// poolRule is what the vote needs of a monitored pool.
type poolRule struct {
	window  time.Duration   // 3 × the monitor's check period
	voting  map[string]bool // check_regions; empty: every region votes
	origins []string        // in configuration order
	named   map[string]bool
	// rev and modified identify the pool's version, window the monitor's.
	rev      int64
	modified time.Time
}

// monitoredPools calls fn with every pool whose monitor exists.
func monitoredPools(cfg *pools.Config, fn func(*pools.Pool, *pools.Monitor)) {
	monitors := make(map[string]*pools.Monitor, len(cfg.Monitors))
	for i := range cfg.Monitors {
		monitors[cfg.Monitors[i].ID] = &cfg.Monitors[i]
	}
	for i := range cfg.Pools {
		p := &cfg.Pools[i]
		if m := monitors[p.Monitor]; p.Monitor != "" && m != nil {
			fn(p, m)
		}
	}
}

func newPoolRule(p *pools.Pool, m *pools.Monitor) *poolRule {
	r := &poolRule{window: 3 * checkPeriod(m), voting: map[string]bool{}, origins: make([]string, len(p.Origins)),
		named: make(map[string]bool, len(p.Origins)), rev: p.Revision, modified: p.ModifiedOn}
	for _, region := range p.CheckRegions {
		r.voting[region] = true
	}
	for i, o := range p.Origins {
		r.origins[i] = o.Name
		r.named[o.Name] = true
	}
	return r
}

// rttMean averages per-origin RTTs by region over a pool's healthy
// origins.
type rttMean struct {
	sum map[string]time.Duration
	n   map[string]int
}

func (m *rttMean) add(rtts []regionRTT) {
	for _, r := range rtts {
		if m.sum == nil {
			m.sum, m.n = map[string]time.Duration{}, map[string]int{}
		}
		m.sum[r.region] += r.rtt
		m.n[r.region]++
	}
}

func (m *rttMean) into(out map[string]time.Duration) {
	for region, sum := range m.sum {
		out[region] = sum / time.Duration(m.n[region])
	}
}

// entry is one node's state of one origin.
type entry struct {
	node, region string
	state        pools.OriginState
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

// decide applies the rules of agreed health to one origin's fresh entries;
// ok is false when no voting region reports. Given the same inputs every
// node computes the same result, so that DNS answers do not depend on
// which node a resolver asks. The rules, per origin of a pool whose monitor
// exists:
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
// Pools without a monitor get no entries: they are always healthy. The
// RTT of a pool per region is the mean, over the pool's origins healthy in
// the result, of the smoothed RTTs that region's nodes report for them
// (fresh, healthy entries only, averaged per origin first; originRTT). Every
// reporting region measures, whatever check_regions says: latency from a
// region is useful to dynamic_latency steering even where it does not vote.
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

// regionRTT is one region's RTT of an origin.
type regionRTT struct {
	region string
	rtt    time.Duration
}

// originRTT averages one origin's smoothed RTT per region over the fresh,
// healthy entries that have one. Regions are few: a slice beats a map.
func originRTT(fresh []entry) []regionRTT {
	var out []regionRTT
	var n []int
	for _, e := range fresh {
		if !e.state.Healthy || e.state.RTT <= 0 {
			continue
		}
		i := slices.IndexFunc(out, func(r regionRTT) bool { return r.region == e.region })
		if i < 0 {
			i = len(out)
			out, n = append(out, regionRTT{region: e.region}), append(n, 0)
		}
		out[i].rtt += e.state.RTT
		n[i]++
	}
	for i := range out {
		out[i].rtt /= time.Duration(n[i])
	}
	return out
}
