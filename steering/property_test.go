package steering

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/glb-dns/glb/pools"
)

// randomWorld builds a random configuration: pools with random zones,
// weights, enabled flags, health and minimum_origins, and one load
// balancer over them with off steering.
func randomWorld(r *rand.Rand) (*world, []string) {
	w := newWorld()
	zones := []string{"z1", "z2", "z3", ""}
	weights := []float64{0, 0.1, 0.25, 0.5, 1}
	np := 1 + r.IntN(4)
	var ids []string
	for i := range np {
		id := fmt.Sprintf("p%d", i)
		ids = append(ids, id)
		var os []origin
		for j := range 1 + r.IntN(10) {
			os = append(os, origin{fmt.Sprintf("o%d", j), fmt.Sprintf("192.0.2.%d", j+1), zones[r.IntN(len(zones))], weights[r.IntN(len(weights))]})
		}
		p := w.pool(id, os...)
		p.Enabled = r.IntN(5) != 0
		p.MinimumOrigins = 1 + r.IntN(3)
		for j := range p.Origins {
			p.Origins[j].Enabled = r.IntN(6) != 0
			if r.IntN(3) == 0 {
				w.down(id, p.Origins[j].Name)
			}
		}
	}
	l := w.lb("www", ids[:1+r.IntN(np)], ids[r.IntN(np)])
	l.Answers = 0
	l.SteeringPolicy = pools.SteeringOff
	return w, ids
}

func sub(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// poolHealthy recomputes the pool health rule from the configuration.
func poolHealthy(w *world, id string) bool {
	for _, p := range w.cfg.Pools {
		if p.ID != id {
			continue
		}
		n := 0
		for _, o := range p.Origins {
			h, ok := w.health.Origins[pools.OriginKey{Pool: id, Origin: o.Name}]
			if o.Enabled && o.Weight > 0 && (!ok || h.Healthy) {
				n++
			}
		}
		return p.Enabled && n > 0 && n >= p.MinimumOrigins
	}
	panic("no pool " + id)
}

// inZoneShare is the share of answers (by weight) that M keeps in C.
func inZoneShare(s *Snapshot, tr Trace) float64 {
	weight := func(pool, name string) float64 {
		for _, p := range s.cfg.Pools {
			if p.ID == pool {
				for _, o := range p.Origins {
					if o.Name == name {
						return o.Weight
					}
				}
			}
		}
		return 0
	}
	in, all := 0.0, 0.0
	for _, o := range tr.Affinity.M {
		w := weight(tr.Pool.ID, o)
		all += w
		if slices.Contains(tr.Affinity.C, o) {
			in += w
		}
	}
	if all == 0 {
		return 0
	}
	return in / all
}

func TestAffinityProperties(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(2026, 11))
	spills := []pools.Spillover{pools.AffinityDisabled, pools.AffinityStayWithinZone, pools.AffinitySpillCrossZone}
	clientZones := []string{"z1", "z2", "z3", "", "z9"}
	const cases = 10_000
	for i := range cases {
		w, _ := randomWorld(r)
		l := &w.cfg.LoadBalancers[0]
		l.ZonalAffinity = pools.ZonalAffinity{Spillover: spills[r.IntN(3)], SpilloverRatio: float64(r.IntN(11)) / 10}
		s := w.compile(t)
		zone := clientZones[r.IntN(len(clientZones))]
		_, tr, got := decide(t, s, "www.glb.example.com", Request{Client: client(zone), SourcePrefix: -1}, nil)
		aff := tr.Affinity
		fail := func(format string, args ...any) {
			t.Fatalf("case %d (%s ratio %.1f, zone %q): %s\nconfig %+v\ntrace %+v", i, aff.Spillover, aff.SpilloverRatio, zone,
				fmt.Sprintf(format, args...), w.cfg.Pools, aff)
		}
		// M ⊆ A ∪ C.
		if !sub(aff.M, append(slices.Clone(aff.A), aff.C...)) {
			fail("M %v not within A ∪ C", aff.M)
		}
		// The records are M (answers = 0, family A, all origins IPv4).
		if !slices.Equal(got, sorted(aff.M)) {
			fail("records %v differ from M %v", got, aff.M)
		}
		// DISABLED or unknown client zone: M = A.
		if (aff.Spillover == string(pools.AffinityDisabled) || zone == "") && !slices.Equal(sorted(aff.M), sorted(aff.A)) {
			fail("M %v, want A %v", aff.M, aff.A)
		}
		// STAY_WITHIN_ZONE never leaves the client's zone when C is not empty.
		if aff.Spillover == string(pools.AffinityStayWithinZone) && len(aff.C) > 0 && !sub(aff.M, aff.C) {
			fail("M %v leaves C %v", aff.M, aff.C)
		}
		// SPILL_CROSS_ZONE: raising the ratio never keeps more traffic in zone.
		if aff.Spillover == string(pools.AffinitySpillCrossZone) && len(aff.C) > 0 {
			prev := 2.0
			for ratio := 0.0; ratio <= 1.0001; ratio += 0.1 {
				l.ZonalAffinity.SpilloverRatio = ratio
				_, tr2, _ := decide(t, w.compile(t), "www.glb.example.com", Request{Client: client(zone), SourcePrefix: -1}, nil)
				share := inZoneShare(s, tr2)
				if share > prev+1e-9 {
					fail("ratio %.1f keeps %.3f in zone, more than %.3f at a lower ratio", ratio, share, prev)
				}
				prev = share
			}
		}
		// The chosen pool is the first healthy candidate, else the fallback.
		want := l.FallbackPool
		for _, id := range l.DefaultPools {
			if poolHealthy(w, id) {
				want = id
				break
			}
		}
		if tr.Pool.ID != want {
			fail("chose pool %s, want %s", tr.Pool.ID, want)
		}
	}
}
