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
	window  time.Duration   // 3 × the longest check period of the group
	voting  map[string]bool // check_regions; empty: every region votes
	origins []string        // in configuration order
	named   map[string]bool
	// rev and modified identify the pool's version, window the monitor's.
	rev      int64
	modified time.Time
}

// monitoredPools calls fn with every pool that has a monitor that exists,
// and the freshness window of its entries: 3 check periods of the slowest
// monitor of its group, so that no node's view goes stale between two
// results of a check it rests on.
func monitoredPools(cfg *pools.Config, fn func(p *pools.Pool, window time.Duration)) {
	monitors := make(map[string]*pools.Monitor, len(cfg.Monitors))
	for i := range cfg.Monitors {
		monitors[cfg.Monitors[i].ID] = &cfg.Monitors[i]
	}
	for i := range cfg.Pools {
		p := &cfg.Pools[i]
		var period time.Duration
		for _, g := range p.Group() {
			if m := monitors[g.Monitor]; m != nil {
				period = max(period, checkPeriod(m))
			}
		}
		if period > 0 {
			fn(p, 3*period)
		}
	}
}

func newPoolRule(p *pools.Pool, window time.Duration) *poolRule {
	r := &poolRule{window: window, voting: map[string]bool{}, origins: make([]string, len(p.Origins)),
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

// monitorVote is one node's view of an origin under one monitor of its
// pool's group.
type monitorVote struct {
	monitor string
	role    role
	known   bool // checked at least once
	healthy bool
	reason  string
}

// groupDecide applies a pool's monitor group to one node's views of one
// origin, given in group order. This is the first step of agreed health:
// each node decides each origin from its own checks, and the nodes then
// vote as decide says. The rule (Cloudflare's monitor groups):
//
//   - The origin is up when every must_be_healthy monitor sees it up and,
//     when the group has other deciding monitors (neither must_be_healthy
//     nor monitoring_only), at least one of them sees it up.
//   - monitoring_only monitors never count.
//   - A monitor that has not checked the origin yet sees it up, as an
//     unchecked origin is healthy (SPEC §3).
//   - A pool's single monitor is a group of one that must be healthy.
//
// The reason of a down origin names the monitor that decided it: the
// first must_be_healthy monitor that sees it down, else the first of the
// others.
func groupDecide(vs []monitorVote) (bool, string) {
	others, othersUp := 0, 0
	firstOther := -1
	for i, v := range vs {
		up := !v.known || v.healthy
		switch v.role {
		case roleMust:
			if !up {
				return false, downBecause(vs, v)
			}
		case roleAny:
			others++
			if up {
				othersUp++
			} else if firstOther < 0 {
				firstOther = i
			}
		}
	}
	if others > 0 && othersUp == 0 {
		return false, downBecause(vs, vs[firstOther])
	}
	return true, ""
}

// downBecause is the reason of an origin v's monitor took down: the
// monitor's own reason, named after the monitor in a group of several.
func downBecause(vs []monitorVote, v monitorVote) string {
	if len(vs) == 1 {
		return v.reason
	}
	return "monitor " + v.monitor + ": " + cmp.Or(v.reason, "reported down")
}

type regionVote struct {
	healthy, nodes int
	reason         string // first unhealthy node's, in node order
}

// healthyNote is the note of the first healthy voting entry that has one,
// in node order (a tls monitor's days left).
func healthyNote(fresh []entry, voting map[string]bool) string {
	for _, e := range fresh {
		if e.state.Healthy && e.state.Reason != "" && (len(voting) == 0 || voting[e.region]) {
			return e.state.Reason
		}
	}
	return ""
}

// decide applies the rules of agreed health to one origin's fresh entries;
// ok is false when no voting region reports. Given the same inputs every
// node computes the same result, so that DNS answers do not depend on
// which node a resolver asks. The rules, per origin of a pool whose monitor
// exists, each entry being a node's decision for its pool's monitor group
// (groupDecide):
//
//   - Only fresh entries vote: checked within 3 × the monitor's check
//     period (of a group, its slowest monitor's), the period being the
//     interval or, when longer, the time one check can take (timeout ×
//     (retries + 1)); without that allowance an origin that hangs every
//     attempt would go stale and so count as healthy.
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
		return pools.OriginHealth{Healthy: true, Note: healthyNote(fresh, voting)}, true
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
