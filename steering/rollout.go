package steering

import (
	"fmt"
	"time"

	"github.com/glb-dns/glb/pools"
)

// staging is the rollout step a pool was compiled at: Update recompiles
// the pool when it moves, though its configuration did not change.
type staging struct {
	rollout string
	percent float64
}

// rolloutsInForce are the rollouts setting weights at now, by pool id;
// nil when none.
func rolloutsInForce(cfg *pools.Config, now time.Time) map[string]*pools.Rollout {
	var out map[string]*pools.Rollout
	for i := range cfg.Rollouts {
		if r := &cfg.Rollouts[i]; r.InForce(now) {
			if out == nil {
				out = map[string]*pools.Rollout{}
			}
			out[r.Pool] = r
		}
	}
	return out
}

// stage returns p with the weights of the rollout in force on it at now,
// and the step it is at. The weights are folded into the compiled pool,
// so the answer path is the one it is without rollouts.
func stage(p *pools.Pool, active map[string]*pools.Rollout, now time.Time) (*pools.Pool, staging) {
	r := active[p.ID]
	if r == nil {
		return p, staging{}
	}
	pct := r.PercentAt(now)
	return r.Apply(p, pct), staging{rollout: r.ID, percent: pct}
}

// earliest is the earlier of two times, zero meaning none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// RolloutGuard says why rollout r must roll back by the health this
// snapshot holds ("" when its guards hold): its pool stopped serving, or
// an origin it gives weight to is down.
func (s *Snapshot) RolloutGuard(r *pools.Rollout) string {
	pi, ok := s.poolByID[r.Pool]
	if !ok {
		return fmt.Sprintf("pool %s no longer exists", r.Pool)
	}
	p := s.pools[pi]
	if !p.ok {
		return fmt.Sprintf("pool %s stopped serving: %d origin(s) healthy, at least %d needed", p.id, p.healthyCount, p.minimum)
	}
	for _, name := range r.Gaining() {
		for j := range p.origins {
			if o := &p.origins[j]; o.Name == name && !o.Healthy {
				return fmt.Sprintf("origin %s of pool %s, which the rollout gives weight to, is down: %s", name, p.id, o.Reason)
			}
		}
	}
	return ""
}

// RolloutHarm says which load balancers' min_serving_pools rule the pool
// would break with its new weights (final), by the health and shifts of
// this snapshot. A rule already broken is not laid at the rollout's door.
func (s *Snapshot) RolloutHarm(final *pools.Pool) ([]pools.ShiftHarm, error) {
	after, err := s.With(final)
	if err != nil {
		return nil, err
	}
	var harms []pools.ShiftHarm
	for _, lb := range after.lbs {
		i := s.lbConfig(lb.id)
		before := s.LoadBalancerByID(lb.id)
		if i < 0 || before == nil {
			continue
		}
		min := s.cfg.LoadBalancers[i].Safety.MinServingPools
		if min <= 0 {
			continue
		}
		n, was := after.servingCount(lb, lb.shift), s.servingCount(before, before.shift)
		if n < min && n < was {
			harms = append(harms, pools.ShiftHarm{Rule: pools.RuleMinServingPools, LoadBalancer: lb.id, Name: lb.name,
				Serving: n, Minimum: min,
				Message: plural(n, "steering pool") + " would serve with the new weights, fewer than safety.min_serving_pools"})
		}
	}
	return harms, nil
}
