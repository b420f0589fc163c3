package healthcheck

import (
	"slices"
	"time"

	"github.com/glb-dns/glb/pools"
)

// This file holds the reference the Tally is tested against: the agreed
// health computed afresh from whole views, by the rules of decide.

// Combine folds every node's published view into the agreed health by the
// rules of decide, afresh from whole views, each entry fresh by its own
// CheckedAt. views should hold the latest view of each node (when a node
// appears twice, the most recently published view counts). A node follows
// the stores' changes with a Tally instead, which recombines only what
// changed; the tests hold the two to the same result.
func Combine(cfg *pools.Config, views []pools.NodeHealth, now time.Time) *pools.Health {
	out := map[string]*pools.PoolHealth{}
	if cfg == nil {
		return pools.NewHealth(nil, nil)
	}
	entries := indexViews(views)
	for id, r := range poolRules(cfg) {
		var fresh []entry
		ph := &pools.PoolHealth{Origins: map[string]pools.OriginHealth{}, RTT: map[string]time.Duration{}}
		var rtt rttMean
		for _, name := range r.origins {
			fresh = fresh[:0]
			for _, e := range entries[pools.OriginKey{Pool: id, Origin: name}] {
				if now.Sub(e.state.CheckedAt) < r.window {
					fresh = append(fresh, e)
				}
			}
			oh, ok := decide(fresh, r.voting)
			if !ok {
				continue
			}
			ph.Origins[name] = oh
			if oh.Healthy {
				rtt.add(originRTT(fresh))
			}
		}
		rtt.into(ph.RTT)
		out[id] = ph
	}
	return (*pools.Health)(nil).With(out)
}

// poolRules lists the rules of every pool whose monitor exists.
func poolRules(cfg *pools.Config) map[string]*poolRule {
	out := map[string]*poolRule{}
	monitoredPools(cfg, func(p *pools.Pool, window time.Duration) { out[p.ID] = newPoolRule(p, window) })
	return out
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
