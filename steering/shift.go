package steering

import (
	"math/bits"
	"slices"
	"strconv"
	"time"

	"github.com/glb-dns/glb/pools"
)

// shiftOverlay is what the shifts in force take away from one load
// balancer: whole pools, and origins of pools (origin and zone shifts).
// A load balancer no shift touches has none, and its decision costs what
// it did before shifts existed.
type shiftOverlay struct {
	pools []shiftedPool // by pool index, ascending
}

type shiftedPool struct {
	pool    int32
	whole   bool   // the pool is shifted: not serving for this load balancer
	origins uint64 // origins shifted, left out like down origins
	ids     []string
}

// of returns what the overlay takes from pool i.
func (o *shiftOverlay) of(i int32) (whole bool, origins uint64) {
	for k := range o.pools {
		if o.pools[k].pool == i {
			return o.pools[k].whole, o.pools[k].origins
		}
	}
	return false, 0
}

func (o *shiftOverlay) entry(i int32) *shiftedPool {
	if o == nil {
		return nil
	}
	for k := range o.pools {
		if o.pools[k].pool == i {
			return &o.pools[k]
		}
	}
	return nil
}

func (o *shiftOverlay) equal(p *shiftOverlay) bool {
	if o == nil || p == nil {
		return o == p
	}
	return slices.EqualFunc(o.pools, p.pools, func(a, b shiftedPool) bool {
		return a.pool == b.pool && a.whole == b.whole && a.origins == b.origins && slices.Equal(a.ids, b.ids)
	})
}

// serving reports whether pool i serves for lb: enabled, healthy with
// the origins that lb's shifts leave it, and not shifted itself.
func (s *Snapshot) serving(lb *LB, i int32) bool {
	p := s.pools[i]
	if lb.shift == nil {
		return p.ok
	}
	whole, out := lb.shift.of(i)
	if whole {
		return false
	}
	if out == 0 {
		return p.ok
	}
	n := bits.OnesCount64(p.healthy &^ out)
	return p.enabled && n >= p.minimum && n > 0
}

// shiftedOrigins is what lb's shifts take from pool i's origins.
func (lb *LB) shiftedOrigins(i int32) uint64 {
	if lb.shift == nil {
		return 0
	}
	_, out := lb.shift.of(i)
	return out
}

// activeShifts returns the shifts in force at now.
func activeShifts(cfg *pools.Config, now time.Time) []*pools.Shift {
	var out []*pools.Shift
	for i := range cfg.Shifts {
		if cfg.Shifts[i].ActiveAt(now) {
			out = append(out, &cfg.Shifts[i])
		}
	}
	return out
}

// overlay computes what shifts take from lb; nil when nothing.
func (s *Snapshot) overlay(lb *LB, shifts []*pools.Shift) *shiftOverlay {
	var o *shiftOverlay
	add := func(pi int32, whole bool, origins uint64, id string) {
		if o == nil {
			o = &shiftOverlay{}
		}
		e := o.entry(pi)
		if e == nil {
			o.pools = append(o.pools, shiftedPool{pool: pi})
			e = &o.pools[len(o.pools)-1]
		}
		e.whole = e.whole || whole
		e.origins |= origins
		if !slices.Contains(e.ids, id) {
			e.ids = append(e.ids, id)
		}
	}
	for _, sh := range shifts {
		if !sh.AppliesTo(lb.id) {
			continue
		}
		switch t := sh.Target; {
		case t.Pool != "":
			if pi, ok := s.poolByID[t.Pool]; ok && slices.Contains(lb.all, pi) {
				add(pi, true, 0, sh.ID)
			}
		case t.Origin != "":
			pid, name, _ := t.OriginParts()
			if pi, ok := s.poolByID[pid]; ok && slices.Contains(lb.all, pi) {
				for j := range s.pools[pi].origins {
					if s.pools[pi].origins[j].Name == name {
						add(pi, false, 1<<j, sh.ID)
					}
				}
			}
		case t.Zone != "":
			for _, pi := range lb.all {
				for _, z := range s.pools[pi].zones {
					if z.zone == t.Zone {
						add(pi, false, z.mask, sh.ID)
					}
				}
			}
		}
	}
	if o != nil {
		slices.SortFunc(o.pools, func(a, b shiftedPool) int { return int(a.pool - b.pool) })
	}
	return o
}

// applyShifts gives each load balancer in lbs the overlay of the shifts in
// force at the snapshot's time, copying those whose overlay changes (a
// load balancer may be shared with the previous snapshot). It notes when
// the shifts must be looked at again.
func (s *Snapshot) applyShifts(lbs []*LB) {
	now := s.built
	active := activeShifts(s.cfg, now)
	s.nextShift = earliest(pools.NextShiftBoundary(s.cfg.Shifts, now), pools.NextRolloutBoundary(s.cfg.Rollouts, now))
	for i, lb := range lbs {
		if len(active) == 0 && lb.shift == nil {
			continue
		}
		o := s.overlay(lb, active)
		if o.equal(lb.shift) {
			continue
		}
		c := *lb
		c.shift = o
		lbs[i] = &c
	}
}

// NextShiftBoundary is when a shift starts or ends, or a rollout moves to
// its next step, next after the snapshot was built (zero: none): the node
// compiles again then, so that every node starts and ends a shift and
// steps a rollout at the same moment by its clock.
func (s *Snapshot) NextShiftBoundary() time.Time { return s.nextShift }

// steeringPools are lb's pools that the safety rules count: default,
// region and country pools, each once; not the fallback unless it is one
// of them.
func (lb *LB) steeringPools() []int32 {
	out := slices.Clone(lb.defaults)
	if lb.order != nil {
		out = append(out, lb.order.defaults...)
	}
	for _, l := range lb.regionPools {
		out = append(out, l...)
	}
	for _, l := range lb.countryPools {
		out = append(out, l...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// servingCount counts lb's steering pools serving with overlay o.
func (s *Snapshot) servingCount(lb *LB, o *shiftOverlay) int {
	c := *lb
	c.shift = o
	n := 0
	for _, pi := range lb.steeringPools() {
		if s.serving(&c, pi) {
			n++
		}
	}
	return n
}

// shiftedZones counts the distinct zones that shifts name for lb.
func shiftedZones(lb *LB, shifts []*pools.Shift) int {
	seen := map[string]bool{}
	for _, sh := range shifts {
		if sh.Target.Zone != "" && sh.AppliesTo(lb.id) {
			seen[sh.Target.Zone] = true
		}
	}
	return len(seen)
}

// ShiftHarm says which safety rules the proposed shift would break, given
// the stored shifts (those that overlap its time count) and the health
// this snapshot holds. A load balancer the shift does not touch is never
// harmed by it, even when its health already breaks a rule.
func (s *Snapshot) ShiftHarm(stored []pools.Shift, proposed *pools.Shift) []pools.ShiftHarm {
	others := s.overlapping(stored, proposed)
	with := append(slices.Clone(others), proposed)
	var harms []pools.ShiftHarm
	for _, lb := range s.lbs {
		before, after := s.overlay(lb, others), s.overlay(lb, with)
		if before.equal(after) {
			continue
		}
		l := s.cfg.LoadBalancers[s.lbConfig(lb.id)]
		if min := l.Safety.MinServingPools; min > 0 {
			if n := s.servingCount(lb, after); n < min {
				harms = append(harms, pools.ShiftHarm{Rule: pools.RuleMinServingPools, LoadBalancer: lb.id, Name: lb.name,
					Serving: n, Minimum: min,
					Message: plural(n, "steering pool") + " would serve, fewer than safety.min_serving_pools"})
			}
		}
		if max := l.Safety.MaxShiftedZones; max > 0 && proposed.Target.Zone != "" {
			if n := shiftedZones(lb, with); n > max {
				harms = append(harms, pools.ShiftHarm{Rule: pools.RuleMaxShiftedZones, LoadBalancer: lb.id, Name: lb.name,
					Serving: s.servingCount(lb, after), Minimum: max,
					Message: plural(n, "zone") + " would be shifted at once, more than safety.max_shifted_zones"})
			}
		}
	}
	return harms
}

// SafetyNow says which safety rules no longer hold for lb with the
// shifts in force and the health of now (health that changed after a
// shift started is not refused, but shown).
func (s *Snapshot) SafetyNow(lb *LB) []pools.ShiftHarm {
	i := s.lbConfig(lb.id)
	if i < 0 {
		return nil
	}
	min := s.cfg.LoadBalancers[i].Safety.MinServingPools
	if min <= 0 || lb.shift == nil {
		return nil
	}
	if n := s.servingCount(lb, lb.shift); n < min {
		return []pools.ShiftHarm{{Rule: pools.RuleMinServingPools, LoadBalancer: lb.id, Name: lb.name, Serving: n, Minimum: min,
			Message: plural(n, "steering pool") + " serve, fewer than safety.min_serving_pools"}}
	}
	return nil
}

func (s *Snapshot) lbConfig(id string) int {
	for i := range s.cfg.LoadBalancers {
		if s.cfg.LoadBalancers[i].ID == id {
			return i
		}
	}
	return -1
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// shed reports whether pool p sheds this query on to the next candidate.
func (p *pool) shed(req *Request, rnd Rand) bool {
	if p.shedHash && req.Subnet.IsValid() {
		u := float64(mix64(subnetHash(req.Subnet)^p.idHash)>>11) / (1 << 53) // [0, 1)
		return u < p.shedShare
	}
	if b, ok := rnd.(brancher); ok {
		return b.branch(p.shedShare)
	}
	return rnd.Float64() < p.shedShare
}

// brancher is a Rand that decides the odds-p events itself: the preview
// follows each way a decision can go instead of drawing.
type brancher interface {
	branch(p float64) bool
}

// overlapping are the stored shifts, other than proposed, that may be in
// force at some moment while it is: they count with it.
func (s *Snapshot) overlapping(stored []pools.Shift, proposed *pools.Shift) []*pools.Shift {
	var others []*pools.Shift
	for i := range stored {
		o := &stored[i]
		if o.ID != proposed.ID && o.StartsAt.Before(proposed.ExpiresAt) && proposed.StartsAt.Before(o.End()) &&
			o.State(s.built) != pools.ShiftEnded && o.State(s.built) != pools.ShiftExpired {
			others = append(others, o)
		}
	}
	return others
}

// shiftedTargets are the distinct zones and pools that shifts name.
func shiftedTargets(shifts []*pools.Shift) (zones, pls []string) {
	for _, sh := range shifts {
		if z := sh.Target.Zone; z != "" && !slices.Contains(zones, z) {
			zones = append(zones, z)
		}
		if p := sh.Target.Pool; p != "" && !slices.Contains(pls, p) {
			pls = append(pls, p)
		}
	}
	return zones, pls
}

// servingLBs counts the load balancers with steering pools, and those of
// them with one serving under the shifts given (each load balancer's
// overlay of them; nil: the shifts in force).
func (s *Snapshot) servingLBs(shifts []*pools.Shift, inForce bool) (serving, total int, down []string) {
	for _, lb := range s.lbs {
		if len(lb.steeringPools()) == 0 {
			continue
		}
		total++
		o := lb.shift
		if !inForce {
			o = s.overlay(lb, shifts)
		}
		if s.servingCount(lb, o) > 0 {
			serving++
		} else {
			down = append(down, lb.id)
		}
	}
	return serving, total, down
}

// GlobalShiftHarm says which global safety rules the proposed shift would
// break, given the stored shifts that overlap its time. Like ShiftHarm, a
// shift that changes no load balancer's answers harms nothing; a rule
// already broken (an override, health) refuses only a shift that adds to
// it. Each harm names the load balancers the shift changes.
func (s *Snapshot) GlobalShiftHarm(stored []pools.Shift, rules pools.SafetyRules, proposed *pools.Shift) []pools.ShiftHarm {
	others := s.overlapping(stored, proposed)
	with := append(slices.Clone(others), proposed)
	var touched []string
	for _, lb := range s.lbs {
		if !s.overlay(lb, others).equal(s.overlay(lb, with)) {
			touched = append(touched, lb.id)
		}
	}
	if len(touched) == 0 {
		return nil
	}
	var harms []pools.ShiftHarm
	zones, pls := shiftedTargets(others)
	if max := rules.MaxShiftedZones; max > 0 && proposed.Target.Zone != "" && !slices.Contains(zones, proposed.Target.Zone) && len(zones)+1 > max {
		harms = append(harms, pools.ShiftHarm{Rule: pools.RuleGlobalMaxShiftedZones, LoadBalancers: touched,
			Serving: len(zones) + 1, Minimum: max,
			Message: plural(len(zones)+1, "zone") + " would be shifted at once across every load balancer, more than the global max_shifted_zones"})
	}
	if max := rules.MaxShiftedPools; max > 0 && proposed.Target.Pool != "" && !slices.Contains(pls, proposed.Target.Pool) && len(pls)+1 > max {
		harms = append(harms, pools.ShiftHarm{Rule: pools.RuleGlobalMaxShiftedPools, LoadBalancers: touched,
			Serving: len(pls) + 1, Minimum: max,
			Message: plural(len(pls)+1, "pool") + " would be shifted at once, more than the global max_shifted_pools"})
	}
	if pct := rules.MinServingLoadBalancersPercent; pct > 0 {
		before, total, _ := s.servingLBs(others, false)
		after, _, _ := s.servingLBs(with, false)
		if after < before && after*100 < pct*total {
			harms = append(harms, pools.ShiftHarm{Rule: pools.RuleGlobalMinServingLoadBalancersPercent, LoadBalancers: touched,
				Serving: after, Minimum: pct,
				Message: strconv.Itoa(after) + " of " + plural(total, "load balancer") + " would keep a steering pool serving, fewer than the global min_serving_load_balancers_percent " + strconv.Itoa(pct) + "%"})
		}
	}
	return harms
}

// GlobalSafetyNow says which global safety rules no longer hold with the
// shifts in force and the health of now (an override, or health that
// changed after the shifts started). Nothing is reported while no shift
// is in force: the rules are about shifts.
func (s *Snapshot) GlobalSafetyNow(rules pools.SafetyRules) []pools.ShiftHarm {
	active := activeShifts(s.cfg, s.built)
	if len(active) == 0 {
		return nil
	}
	var shifted []string
	for _, lb := range s.lbs {
		if lb.shift != nil {
			shifted = append(shifted, lb.id)
		}
	}
	var harms []pools.ShiftHarm
	zones, pls := shiftedTargets(active)
	if max := rules.MaxShiftedZones; max > 0 && len(zones) > max {
		harms = append(harms, pools.ShiftHarm{Rule: pools.RuleGlobalMaxShiftedZones, LoadBalancers: shifted, Serving: len(zones), Minimum: max,
			Message: plural(len(zones), "zone") + " are shifted at once, more than the global max_shifted_zones"})
	}
	if max := rules.MaxShiftedPools; max > 0 && len(pls) > max {
		harms = append(harms, pools.ShiftHarm{Rule: pools.RuleGlobalMaxShiftedPools, LoadBalancers: shifted, Serving: len(pls), Minimum: max,
			Message: plural(len(pls), "pool") + " are shifted at once, more than the global max_shifted_pools"})
	}
	if pct := rules.MinServingLoadBalancersPercent; pct > 0 {
		n, total, down := s.servingLBs(nil, true)
		if n*100 < pct*total {
			harms = append(harms, pools.ShiftHarm{Rule: pools.RuleGlobalMinServingLoadBalancersPercent, LoadBalancers: down, Serving: n, Minimum: pct,
				Message: strconv.Itoa(n) + " of " + plural(total, "load balancer") + " keep a steering pool serving, fewer than the global min_serving_load_balancers_percent " + strconv.Itoa(pct) + "%"})
		}
	}
	return harms
}
