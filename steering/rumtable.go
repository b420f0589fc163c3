package steering

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/glb-dns/glb/geodata"
)

// RUMTable is what real users measured of one load balancer's candidate
// pools, per client group, as measured_latency reads it: for the API's
// /load_balancers/{id}/rum, the console and glbctl. Nothing on the DNS
// path builds it.
type RUMTable struct {
	// MinSamples is the load balancer's rum.min_samples.
	MinSamples int `json:"min_samples"`
	// Built is when the table was aggregated (nil: no table on this node
	// yet), Window the span of reports it covers.
	Built  *time.Time `json:"built"`
	Window string     `json:"window"`
	// Pools are the load balancer's candidate pools, in configured order.
	Pools []RUMTablePool `json:"pools"`
	// Regions, Countries, ASNs, Networks and Resolvers are the groups
	// measured at each level that have figures for one of the pools.
	// ASNs, Networks and Resolvers hold the groups with the most samples,
	// at most the limit given; ASNsTotal, NetworksTotal and
	// ResolversTotal count them all.
	Regions        []RUMTableGroup `json:"regions"`
	Countries      []RUMTableGroup `json:"countries"`
	ASNs           []RUMTableGroup `json:"asns"`
	ASNsTotal      int             `json:"asns_total"`
	Networks       []RUMTableGroup `json:"networks"`
	NetworksTotal  int             `json:"networks_total"`
	Resolvers      []RUMTableGroup `json:"resolvers"`
	ResolversTotal int             `json:"resolvers_total"`
}

// RUMTablePool names a candidate pool.
type RUMTablePool struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// RUMTableGroup is one client group's figures for the candidate pools,
// fastest median first (pools short of min_samples after the others).
type RUMTableGroup struct {
	// Group is the region code, country code, autonomous system
	// ("AS64500"), network or resolver network.
	Group string `json:"group"`
	// ASN is an autonomous system's number.
	ASN uint32 `json:"asn,omitempty"`
	// Region is the region of a country.
	Region string `json:"region,omitempty"`
	// Fastest is the pool measured fastest, when at least two pools have
	// min_samples here (as measured_latency needs to rank by this group);
	// "" otherwise.
	Fastest string              `json:"fastest"`
	Samples int                 `json:"samples"`
	Pools   []TraceMeasuredPool `json:"pools"`
	// Behind: for a resolver, the client networks behind it.
	Behind []TraceMeasuredLink `json:"behind,omitempty"`
}

// RUMTable returns lb's view of the RUM table: the figures of its
// candidate pools at every level, networks and resolvers cut to the limit
// with the most samples (limit <= 0: all).
func (s *Snapshot) RUMTable(lb *LB, limit int) RUMTable {
	out := RUMTable{MinSamples: int(lb.rumMin), Pools: []RUMTablePool{},
		Regions: []RUMTableGroup{}, Countries: []RUMTableGroup{}, ASNs: []RUMTableGroup{}, Networks: []RUMTableGroup{}, Resolvers: []RUMTableGroup{}}
	cands := slices.Clone(lb.defaults)
	if lb.order != nil {
		for _, p := range lb.order.defaults {
			if !slices.Contains(cands, p) {
				cands = append(cands, p)
			}
		}
	}
	ids := map[string]int{} // pool id → configured position
	for i, p := range cands {
		out.Pools = append(out.Pools, RUMTablePool{ID: s.pools[p].id, Name: s.pools[p].name})
		ids[s.pools[p].id] = i
	}
	if s.measured == nil {
		return out
	}
	m := s.measured.src
	built := m.Built
	out.Built, out.Window = &built, m.Window.String()
	group := func(name string, g *MeasuredGroup) (RUMTableGroup, bool) {
		tg := RUMTableGroup{Group: name, Pools: []TraceMeasuredPool{}}
		counted := 0
		for _, p := range g.Pools {
			if _, ok := ids[p.Pool]; !ok {
				continue
			}
			idx := s.poolByID[p.Pool]
			c := int32(min(p.Samples, 1<<30)) >= lb.rumMin
			if c {
				counted++
			}
			tg.Samples += p.Samples
			tg.Pools = append(tg.Pools, TraceMeasuredPool{Pool: p.Pool, Name: s.pools[idx].name, MedianMs: p.MedianMs, P75Ms: p.P75Ms, Samples: p.Samples, Counted: c})
		}
		if len(tg.Pools) == 0 {
			return tg, false
		}
		// As measured_latency ranks: by median, ties in configured order.
		slices.SortFunc(tg.Pools, func(a, b TraceMeasuredPool) int {
			return cmp.Or(cmp.Compare(rankKey(a), rankKey(b)), cmp.Compare(ids[a.Pool], ids[b.Pool]))
		})
		if counted >= 2 {
			tg.Fastest = tg.Pools[0].Pool
		}
		for _, l := range g.Behind {
			tg.Behind = append(tg.Behind, TraceMeasuredLink{Network: l.Network.String(), Reports: l.Reports})
		}
		return tg, true
	}
	for i := range m.Regions {
		if g, ok := group(m.Regions[i].Key, &m.Regions[i]); ok {
			out.Regions = append(out.Regions, g)
		}
	}
	for i := range m.Countries {
		if g, ok := group(m.Countries[i].Key, &m.Countries[i]); ok {
			g.Region = geodata.RegionOf(g.Group, "")
			out.Countries = append(out.Countries, g)
		}
	}
	top := func(groups []MeasuredGroup, name func(*MeasuredGroup) string) ([]RUMTableGroup, int) {
		all := []RUMTableGroup{}
		for i := range groups {
			if g, ok := group(name(&groups[i]), &groups[i]); ok {
				g.ASN = groups[i].ASN
				all = append(all, g)
			}
		}
		n := len(all)
		if limit > 0 && n > limit {
			// The most samples first; the rest keep address order.
			slices.SortStableFunc(all, func(a, b RUMTableGroup) int { return cmp.Compare(b.Samples, a.Samples) })
			all = all[:limit]
		}
		return all, n
	}
	prefix := func(g *MeasuredGroup) string { return g.Prefix.String() }
	out.ASNs, out.ASNsTotal = top(m.ASNs, func(g *MeasuredGroup) string { return ASName(g.ASN) })
	out.Networks, out.NetworksTotal = top(m.Networks, prefix)
	out.Resolvers, out.ResolversTotal = top(m.Resolvers, prefix)
	return out
}

// rankKey orders a group's pools as measured_latency does: counted pools
// by median, the others after them.
func rankKey(p TraceMeasuredPool) float64 {
	if !p.Counted {
		return math.Inf(1)
	}
	return p.MedianMs
}
