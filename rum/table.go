package rum

import (
	"cmp"
	"maps"
	"net/netip"
	"slices"
	"time"

	"github.com/glb-dns/glb/geodata"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
)

// NetworkCap is the most samples one client network counts for in its
// autonomous system, its country, its region and behind a resolver: a network that reports a
// thousand times weighs as much there as one that reported NetworkCap
// times, so that one network (or a flood from it) cannot outvote the
// others of its country. Its own network-level figures are its own.
const NetworkCap = 100

// Build aggregates the histograms every node wrote (summed over the
// window, one per network and pool) into steering's table: medians and
// p75 per network, per resolver (the networks behind it weighted by
// their reports), per autonomous system, per country and per region
// (networks placed by locate, each capped at NetworkCap samples; a
// network of AS 0, unknown, in no autonomous system).
func Build(samples []pools.RUMSamples, links []pools.RUMResolverLink, locate func(netip.Prefix) geodata.Location, window time.Duration, now time.Time) *steering.Measurements {
	m := &steering.Measurements{Built: now.UTC(), Window: window}
	type agg = map[string][]float64 // pool → weighted histogram
	byNet := map[netip.Prefix]agg{}
	var nets []netip.Prefix
	for _, s := range samples {
		a := byNet[s.Network]
		if a == nil {
			a = agg{}
			byNet[s.Network] = a
			nets = append(nets, s.Network)
		}
		h := a[s.Pool]
		if h == nil {
			h = make([]float64, pools.RUMHistogramBuckets)
			a[s.Pool] = h
		}
		for i, n := range s.Counts {
			if i < len(h) && n > 0 {
				h[i] += float64(n)
			}
		}
	}
	slices.SortFunc(nets, func(a, b netip.Prefix) int { return a.Addr().Compare(b.Addr()) })

	countries, regions, asns := map[string]agg{}, map[string]agg{}, map[uint32]agg{}
	addCapped := func(dst agg, a agg, weight float64) {
		for pool, h := range a {
			total := sum(h)
			if total <= 0 {
				continue
			}
			f := min(1, NetworkCap/total) * weight
			d := dst[pool]
			if d == nil {
				d = make([]float64, len(h))
				dst[pool] = d
			}
			for i, n := range h {
				d[i] += n * f
			}
		}
	}
	for _, n := range nets {
		a := byNet[n]
		m.Networks = append(m.Networks, steering.MeasuredGroup{Prefix: n, Pools: figures(a)})
		if locate == nil {
			continue
		}
		loc := locate(n)
		if loc.ASN != 0 {
			addCapped(groupOf(asns, loc.ASN), a, 1)
		}
		if loc.Country != "" {
			addCapped(groupOf(countries, loc.Country), a, 1)
		}
		if loc.Region != "" {
			addCapped(groupOf(regions, loc.Region), a, 1)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(asns)) {
		m.ASNs = append(m.ASNs, steering.MeasuredGroup{ASN: k, Pools: figures(asns[k])})
	}
	for _, k := range sortedKeys(countries) {
		m.Countries = append(m.Countries, steering.MeasuredGroup{Key: k, Pools: figures(countries[k])})
	}
	for _, k := range sortedKeys(regions) {
		m.Regions = append(m.Regions, steering.MeasuredGroup{Key: k, Pools: figures(regions[k])})
	}

	// Resolvers: each network behind one weighs by its share of the
	// resolver's reports (capped like the country's).
	behind := map[netip.Prefix][]steering.MeasuredLink{}
	var resolvers []netip.Prefix
	for _, l := range links {
		if _, ok := byNet[l.Network]; !ok || l.Reports <= 0 {
			continue
		}
		if behind[l.Resolver] == nil {
			resolvers = append(resolvers, l.Resolver)
		}
		behind[l.Resolver] = append(behind[l.Resolver], steering.MeasuredLink{Network: l.Network, Reports: l.Reports})
	}
	slices.SortFunc(resolvers, func(a, b netip.Prefix) int { return a.Addr().Compare(b.Addr()) })
	for _, r := range resolvers {
		ls := behind[r]
		var total int64
		for _, l := range ls {
			total += l.Reports
		}
		into := agg{}
		for _, l := range ls {
			addCapped(into, byNet[l.Network], float64(len(ls))*float64(l.Reports)/float64(total))
		}
		slices.SortFunc(ls, func(a, b steering.MeasuredLink) int { return cmp.Compare(b.Reports, a.Reports) })
		m.Resolvers = append(m.Resolvers, steering.MeasuredGroup{Prefix: r, Pools: figures(into), Behind: ls})
	}
	return m
}

// groupOf returns the histograms of key in groups, made if need be.
func groupOf[K comparable](groups map[K]map[string][]float64, key K) map[string][]float64 {
	g := groups[key]
	if g == nil {
		g = map[string][]float64{}
		groups[key] = g
	}
	return g
}

func sum(h []float64) float64 {
	t := 0.0
	for _, n := range h {
		t += n
	}
	return t
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// figures are a group's median, p75 and samples per pool, by pool id.
func figures(a map[string][]float64) []steering.MeasuredPool {
	out := make([]steering.MeasuredPool, 0, len(a))
	for pool, h := range a {
		n := sum(h)
		if n < 0.5 {
			continue
		}
		out = append(out, steering.MeasuredPool{Pool: pool, MedianMs: quantile(h, 0.5), P75Ms: quantile(h, 0.75), Samples: int(n + 0.5)})
	}
	slices.SortFunc(out, func(a, b steering.MeasuredPool) int { return cmp.Compare(a.Pool, b.Pool) })
	return out
}
