package steering

import (
	"math/bits"

	"github.com/glb-dns/glb/pools"
)

// shedByLoad applies the pool's load_shedding.by_load to its healthy
// origins, once, at compile: the answer path draws with the weights it
// leaves and skips the overloaded mask, and does nothing else per query.
//
// The rules, over the pool's healthy origins (enabled, weight > 0,
// healthy), each with the load its feeds report (none: 0):
//
//   - At or above high an origin is overloaded: it takes no answer while
//     an eligible origin that is not can (Decide leaves it out of the
//     draw), and its share goes to the others as a down origin's does.
//   - Every healthy origin overloaded: loads are ignored (fail open).
//   - Between low and high an origin keeps keep = (high − load) / (high −
//     low) of the share of answers it would have without load (among the
//     origins not overloaded): at 0.8 of 0.7–0.9, half.
//   - The share it sheds goes to the origins at or below low, in
//     proportion to their weights. With none of those, every origin
//     sheds in proportion (weights times keep), which leaves the shares
//     as they were when all are equally loaded.
//
// Weights are set so that a draw among all those origins gives exactly
// these shares; a query that can use fewer of them (an address family,
// a client zone, a shift) draws among those with the same weights.
func (cp *pool) shedByLoad(b *pools.ByLoad) {
	healthy := cp.healthy
	var over uint64
	for m := healthy; m != 0; m &= m - 1 {
		j := bits.TrailingZeros64(m)
		if o := &cp.origins[j]; o.Loaded && b.Keep(o.Load) == 0 {
			over |= 1 << j
		}
	}
	if over == healthy {
		return // none, or all: fail open
	}
	cp.overloaded = over
	rest := healthy &^ over
	var shed, idle float64 // the weight shed, the weight of those at or below low
	for m := rest; m != 0; m &= m - 1 {
		o := &cp.origins[bits.TrailingZeros64(m)]
		k := keep(b, o)
		shed += o.Weight * (1 - k)
		if k == 1 {
			idle += o.Weight
		}
	}
	if shed == 0 {
		return
	}
	for m := rest; m != 0; m &= m - 1 {
		o := &cp.origins[bits.TrailingZeros64(m)]
		switch k := keep(b, o); {
		case k < 1:
			o.Weight *= k
		case idle > 0:
			o.Weight *= 1 + shed/idle
		}
	}
}

func keep(b *pools.ByLoad, o *Origin) float64 {
	if !o.Loaded {
		return 1
	}
	return b.Keep(o.Load)
}
