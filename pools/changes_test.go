package pools

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestApplyKeepsOrderAndSharesUnchanged: whatever the size of the change
// set (a few changes are found by a scan, many by an index), Apply
// replaces changed objects in place, drops deleted ones, appends new ones
// in change order, leaves the input alone and shares untouched lists.
func TestApplyKeepsOrderAndSharesUnchanged(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 5))
	for round := range 200 {
		cfg := &Config{Revision: 10}
		for i := range 1 + rng.IntN(30) {
			p := DefaultPool()
			p.ID, p.Name = fmt.Sprintf("p%d", i), "old"
			cfg.Pools = append(cfg.Pools, p)
		}
		cfg.Zones = []Zone{DefaultZone()}
		before := slices.Clone(cfg.Pools)

		// The expected list, built the plain way.
		want := slices.Clone(cfg.Pools)
		cs := &ChangeSet{Since: 10, Revision: 11}
		seen := map[string]bool{}
		for range rng.IntN(20) {
			id := fmt.Sprintf("p%d", rng.IntN(40))
			if seen[id] {
				continue // a change set names each object once
			}
			seen[id] = true
			i := slices.IndexFunc(want, func(p Pool) bool { return p.ID == id })
			if rng.IntN(3) == 0 {
				cs.Changes = append(cs.Changes, ObjectChange{Kind: KindPool, ID: id})
				if i >= 0 {
					want = slices.Delete(want, i, i+1)
				}
				continue
			}
			p := DefaultPool()
			p.ID, p.Name = id, fmt.Sprintf("new %d", round)
			cs.Changes = append(cs.Changes, ObjectChange{Kind: KindPool, ID: id, Object: &p})
			if i >= 0 {
				want[i] = p
			} else {
				want = append(want, p)
			}
		}
		got, err := cfg.Apply(cs)
		if err != nil {
			t.Fatal(err)
		}
		names := func(ps []Pool) []string {
			var out []string
			for _, p := range ps {
				out = append(out, p.ID+"="+p.Name)
			}
			return out
		}
		if !slices.Equal(names(got.Pools), names(want)) {
			t.Fatalf("round %d, %d changes:\n got %v\nwant %v", round, len(cs.Changes), names(got.Pools), names(want))
		}
		if !slices.Equal(names(cfg.Pools), names(before)) {
			t.Fatalf("round %d: Apply modified its input", round)
		}
		if &got.Zones[0] != &cfg.Zones[0] || got.Revision != 11 {
			t.Fatalf("round %d: zones not shared or revision %d", round, got.Revision)
		}
	}
}
