package pools

import (
	"maps"
	"slices"
	"sort"
)

// PoolRole is where a load balancer refers to a pool.
type PoolRole string

const (
	RoleDefault  PoolRole = "default"
	RoleFallback PoolRole = "fallback"
	RoleRegion   PoolRole = "region"
	RoleCountry  PoolRole = "country"
	RoleRandom   PoolRole = "random_weight"
)

// PoolRef is one reference from a load balancer to a pool: what the
// PostgreSQL store keeps as a row with a real foreign key, and what the
// embedded store scans to find referrers.
type PoolRef struct {
	Role PoolRole
	// Key is the region or country code of region and country pools.
	Key      string
	Position int
	Pool     string
	// Weight is the random steering weight of a RoleRandom reference.
	Weight float64
}

// PoolRefs lists every pool reference of l in a stable order.
func (l *LoadBalancer) PoolRefs() []PoolRef {
	var refs []PoolRef
	for i, id := range l.DefaultPools {
		refs = append(refs, PoolRef{Role: RoleDefault, Position: i, Pool: id})
	}
	if l.FallbackPool != "" {
		refs = append(refs, PoolRef{Role: RoleFallback, Pool: l.FallbackPool})
	}
	for _, r := range slices.Sorted(maps.Keys(l.RegionPools)) {
		for i, id := range l.RegionPools[r] {
			refs = append(refs, PoolRef{Role: RoleRegion, Key: r, Position: i, Pool: id})
		}
	}
	for _, c := range slices.Sorted(maps.Keys(l.CountryPools)) {
		for i, id := range l.CountryPools[c] {
			refs = append(refs, PoolRef{Role: RoleCountry, Key: c, Position: i, Pool: id})
		}
	}
	for i, id := range slices.Sorted(maps.Keys(l.RandomSteering.PoolWeights)) {
		refs = append(refs, PoolRef{Role: RoleRandom, Position: i, Pool: id, Weight: l.RandomSteering.PoolWeights[id]})
	}
	return refs
}

// ReferrersIn lists the objects among pools and lbs that refer to (k, id):
// the load balancers in a zone, the load balancers using a pool in any
// role, the pools checked by a monitor. Each referrer appears once, sorted
// by kind, name and id.
func ReferrersIn(k Kind, id string, pools []Pool, lbs []LoadBalancer) []Referrer {
	var out []Referrer
	switch k {
	case KindZone:
		for _, l := range lbs {
			if l.Zone == id {
				out = append(out, Referrer{Kind: KindLoadBalancer.Singular(), ID: l.ID, Name: l.Name})
			}
		}
	case KindPool:
		for _, l := range lbs {
			for _, r := range l.PoolRefs() {
				if r.Pool == id {
					out = append(out, Referrer{Kind: KindLoadBalancer.Singular(), ID: l.ID, Name: l.Name})
					break
				}
			}
		}
	case KindMonitor:
		for _, p := range pools {
			if p.Uses(id) {
				out = append(out, Referrer{Kind: KindPool.Singular(), ID: p.ID, Name: p.Name})
			}
		}
	}
	SortReferrers(out)
	return out
}

// SortReferrers puts referrers in the order both stores report them.
func SortReferrers(rs []Referrer) {
	sort.Slice(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.ID < b.ID
	})
}
