package steering

import (
	"math"

	"github.com/glb-dns/glb/pools"
)

// candidates writes the candidate pools of SPEC §2 step 3, in order, into
// w.cands and returns them.
func (s *Snapshot) candidates(lb *LB, req *Request, rnd Rand, w *scratch, tr *Trace) []int32 {
	buf, keys := &w.cands, &w.keys // distance or RTT, for sorting and the trace
	if tr != nil {
		clear(keys[:]) // the trace reads a key for every candidate; not every policy sets one
	}
	n, geoLen, geoSrc := 0, 0, ""
	defaults, weights := lb.defaults, lb.randomWeights
	if o := lb.order; o != nil {
		staged := o.draw(req, rnd)
		if staged {
			defaults, weights = o.defaults, o.randomWeights
		}
		if tr != nil {
			tr.order(lb, staged)
		}
	}
	switch lb.policy {
	case pools.SteeringGeo:
		// The geo list first; when none of it is healthy, the default pools.
		var geo []int32
		if lb.countryPools != nil && req.Client.Country != "" {
			if geo = lb.countryPools[req.Client.Country]; geo != nil {
				geoSrc = "country_pools"
			}
		}
		if geo == nil {
			if r := regionIndex(req.Client.Region); r >= 0 && lb.regionPools[r] != nil {
				geo, geoSrc = lb.regionPools[r], "region_pools"
			}
		}
		geoLen = copy(buf[:], geo)
		n = geoLen + copy(buf[geoLen:], defaults)
	case pools.SteeringProximity:
		n = copy(buf[:], defaults)
		if req.Client.HasCoordinates {
			c := unitVector(req.Client.Latitude, req.Client.Longitude)
			for i := range n {
				p := s.pools[buf[i]]
				keys[i] = math.Inf(1) // no coordinates: after the others, in order
				if p.hasCoords {
					// 1 - cos(angle): increases with distance, cheap to compute.
					keys[i] = 1 - (c[0]*p.xyz[0] + c[1]*p.xyz[1] + c[2]*p.xyz[2])
				}
			}
			sortByKey(buf[:n], keys[:n])
		}
	case pools.SteeringDynamicLatency:
		n = copy(buf[:], defaults)
		s.rttOrder(lb, req, buf[:n], keys[:n], tr)
	case pools.SteeringMeasuredLatency:
		n = copy(buf[:], defaults)
		if !s.measuredOrder(lb, req, buf[:n], keys[:n], tr) {
			s.rttOrder(lb, req, buf[:n], keys[:n], tr)
		}
	case pools.SteeringRandom:
		n = copy(buf[:], defaults)
		if first := s.randomPool(defaults, weights, rnd); first > 0 {
			// The drawn pool goes first, the rest keep configured order.
			d := buf[first]
			copy(buf[1:first+1], buf[:first])
			buf[0] = d
		}
	default: // off
		n = copy(buf[:], defaults)
	}
	if tr != nil {
		tr.candidates(s, lb, req, buf[:n], geoLen, geoSrc, keys[:])
	}
	return buf[:n]
}

// rttOrder sorts cands by the smoothed health-check RTT from the client's
// region (dynamic_latency); keys receive the RTTs.
func (s *Snapshot) rttOrder(lb *LB, req *Request, cands []int32, keys []float64, tr *Trace) {
	r := regionIndex(req.Client.Region)
	if r < 0 {
		// Resolvers ask the nameserver that answers them fastest, so a
		// client of unknown location is best guessed near this node.
		r = s.region
	}
	if tr != nil {
		tr.rttRegion(s, lb, req, r)
	}
	if r >= 0 && lb.dynRegion[r] >= 0 {
		eff := lb.dynRegion[r]
		for i := range cands {
			keys[i] = math.Inf(1) // no data: after the others, in order
			if rtt := s.pools[cands[i]].rtt[eff]; rtt > 0 {
				keys[i] = float64(rtt.Microseconds()) / 1000
			}
		}
		sortByKey(cands, keys)
	}
}

// randomPool draws the index (in defaults) of the pool that goes first
// under random steering, by random_steering weights among the enabled and
// healthy pools: an unhealthy pool's share goes to the others rather than
// to whichever pool is first in the configured order.
func (s *Snapshot) randomPool(defaults []int32, weights []float64, rnd Rand) int {
	total := 0.0
	for i, p := range defaults {
		if s.pools[p].ok {
			total += weights[i]
		}
	}
	if total <= 0 {
		return 0
	}
	r := rnd.Float64() * total
	last := 0
	for i, p := range defaults {
		if !s.pools[p].ok || weights[i] <= 0 {
			continue
		}
		r -= weights[i]
		if r < 0 {
			return i
		}
		last = i
	}
	return last
}

// sortByKey sorts list by keys, stably, in place (insertion sort: lists
// are short and this allocates nothing, unlike sort.SliceStable).
func sortByKey(list []int32, keys []float64) {
	for i := 1; i < len(list); i++ {
		k, v := keys[i], list[i]
		j := i - 1
		for j >= 0 && keys[j] > k {
			keys[j+1], list[j+1] = keys[j], list[j]
			j--
		}
		keys[j+1], list[j+1] = k, v
	}
}
