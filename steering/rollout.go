package steering

import (
	"fmt"
	"hash/fnv"
	"time"

	"github.com/glb-dns/glb/pools"
)

// staging is the rollout step a pool was compiled at: Update recompiles
// the pool when it moves, though its configuration did not change.
type staging struct {
	rollout string
	percent float64
}

// rolloutsInForce are the rollouts in force at now: those setting
// weights by pool id, those setting a pool order by load balancer id;
// nil when none.
func rolloutsInForce(cfg *pools.Config, now time.Time) (weights, orders map[string]*pools.Rollout) {
	for i := range cfg.Rollouts {
		r := &cfg.Rollouts[i]
		if !r.InForce(now) {
			continue
		}
		m := &weights
		if r.LoadBalancer != "" {
			m = &orders
		}
		if *m == nil {
			*m = map[string]*pools.Rollout{}
		}
		_, id := r.Target()
		(*m)[id] = r
	}
	return weights, orders
}

// stagedOrder is a load balancer's pool order under a rollout: share of
// the clients take defaults (the new order) instead of the load
// balancer's own. Compiled like the own order, so that the draw is all a
// query pays.
type stagedOrder struct {
	share         float64
	defaults      []int32
	randomWeights []float64
	salt          uint64 // the load balancer's id hashed, as a pool's is for shedding
}

// draw says whether this query takes the new order. The client's subnet
// decides, as in hash shedding: a client keeps its order for a whole step
// (a resolver's cache agrees with the next answer), and as the share grows
// the clients already moved stay moved, so a step only adds clients to
// the new order. Without a subnet it is drawn; the preview follows both
// ways with their odds.
func (o *stagedOrder) draw(req *Request, rnd Rand) bool {
	if req.Subnet.IsValid() {
		return float64(mix64(subnetHash(req.Subnet)^o.salt)>>11)/(1<<53) < o.share
	}
	if b, ok := rnd.(brancher); ok {
		return b.branch(o.share)
	}
	return rnd.Float64() < o.share
}

// orderStaging is the step of the pool order rollout in force on load
// balancer id (zero: none), which its compiled form must match.
func (s *Snapshot) orderStaging(id string) staging {
	r := s.orders[id]
	if r == nil {
		return staging{}
	}
	return staging{rollout: r.ID, percent: r.PercentAt(s.built)}
}

// stageOrder sets lb's staged order by the rollout in force on it, if
// any. At 100 % the new order is simply its order. A new order naming a
// pool that no longer exists is left out (the old order answers): the
// guard rolls such a rollout back, and one bad rollout must not stop
// the snapshot from compiling.
func (s *Snapshot) stageOrder(lb *LB, l *pools.LoadBalancer) {
	r := s.orders[l.ID]
	if r == nil {
		return
	}
	pct := r.PercentAt(s.built)
	lb.staged = staging{rollout: r.ID, percent: pct}
	list, err := s.poolList(r.DefaultPools)
	if err != nil || len(list) > pools.MaxPoolsPerList {
		return
	}
	weights := s.randomWeights(l, list)
	if pct >= 100 {
		lb.defaults, lb.randomWeights = list, weights
		return
	}
	salt := fnv.New64a()
	salt.Write([]byte(l.ID))
	lb.order = &stagedOrder{share: pct / 100, defaults: list, randomWeights: weights, salt: salt.Sum64()}
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
// an origin it gives weight to is down; for a pool order, a pool the new
// order moves traffic to stopped serving.
func (s *Snapshot) RolloutGuard(r *pools.Rollout) string {
	if r.LoadBalancer != "" {
		return s.orderGuard(r)
	}
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

// orderGuard is RolloutGuard for a load balancer's pool order.
func (s *Snapshot) orderGuard(r *pools.Rollout) string {
	if s.lbConfig(r.LoadBalancer) < 0 {
		return fmt.Sprintf("load balancer %s no longer exists", r.LoadBalancer)
	}
	for _, id := range r.GainingPools() {
		pi, ok := s.poolByID[id]
		if !ok {
			return fmt.Sprintf("pool %s, which the new order moves traffic to, no longer exists", id)
		}
		if p := s.pools[pi]; !p.ok {
			return fmt.Sprintf("pool %s, which the new order moves traffic to, stopped serving: %d origin(s) healthy, at least %d needed", id, p.healthyCount, p.minimum)
		}
	}
	return ""
}

// RolloutHarm says which load balancers' min_serving_pools rule the pool
// or load balancer would break as the rollout leaves it (final), by the
// health and shifts of this snapshot. A rule already broken is not laid
// at the rollout's door.
func (s *Snapshot) RolloutHarm(final pools.Object) ([]pools.ShiftHarm, error) {
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
				Message: plural(n, "steering pool") + " would serve after the rollout, fewer than safety.min_serving_pools"})
		}
	}
	return harms, nil
}
