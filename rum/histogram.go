package rum

import (
	"math"

	"github.com/glb-dns/glb/pools"
)

// Range of a measurement: a fetch faster than MinMs is not a network
// round trip, one slower than MaxMs is not a fetch anyone waited for.
const (
	MinMs = 0.1
	MaxMs = 60_000
)

// bucketOf is the histogram bucket of a time: bucket i holds
// [2^((i-1)/8), 2^(i/8)) ms, bucket 0 under 1 ms, the last anything above.
func bucketOf(ms float64) int {
	if ms < 1 {
		return 0
	}
	i := int(math.Floor(8*math.Log2(ms))) + 1
	return min(i, pools.RUMHistogramBuckets-1)
}

// bucketValue is the value a bucket stands for: its geometric middle.
func bucketValue(i int) float64 {
	if i == 0 {
		return 0.5
	}
	return math.Exp2((float64(i) - 0.5) / 8)
}

// quantile reads the q-quantile of a weighted histogram (nil total: 0).
func quantile(h []float64, q float64) float64 {
	total := 0.0
	for _, n := range h {
		total += n
	}
	if total <= 0 {
		return 0
	}
	want, acc := q*total, 0.0
	for i, n := range h {
		acc += n
		if acc >= want && n > 0 {
			return math.Round(bucketValue(i)*10) / 10
		}
	}
	return math.Round(bucketValue(len(h)-1)*10) / 10
}
