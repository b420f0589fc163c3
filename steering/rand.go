package steering

import "math/rand/v2"

// FastRand draws from math/rand/v2's global generator, which is per-thread
// and lock-free: the source the DNS path uses.
type FastRand struct{}

func (FastRand) Float64() float64 { return rand.Float64() }
