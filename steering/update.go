package steering

import (
	"fmt"
	"maps"
	"sync/atomic"

	"github.com/glb-dns/glb/internal/follow"
	"github.com/glb-dns/glb/pools"
)

// generation numbers snapshots (see Snapshot.gen).
var generation atomic.Uint64

// Generation identifies the snapshot.
func (s *Snapshot) Generation() uint64 { return s.gen }

// monitorsOK: see monitorsExist.
func monitorsOK(p *pools.Pool, monitors map[string]bool) bool {
	_, ok := monitorsExist(p, monitors)
	return ok
}

// Parent is the Generation of the snapshot Update built this one from (0
// after a full Compile).
func (s *Snapshot) Parent() uint64 { return s.parent }

// Rebuilt lists the indices of the pools compiled afresh since Parent
// (new, changed, or emptied by a deletion). Read only.
func (s *Snapshot) Rebuilt() []int32 { return s.rebuilt }

// Update compiles cfg and h into a new snapshot, recompiling only what
// changed since prev: the pools whose configuration changed or that are
// in healthChanged (pool ids whose origins' health or RTT changed, as
// pools.ChangedPools finds them), and the load balancers that changed or
// use such a pool (the reuse rules of every step: docs/architecture.md,
// "What an update shares"). Everything else is shared with prev, which stays
// valid. The result answers exactly as Compile(cfg, h) would, with the
// options of prev.
func Update(prev *Snapshot, cfg *pools.Config, h *pools.Health, healthChanged map[string]bool) (*Snapshot, error) {
	if h == nil {
		h = &pools.Health{}
	}
	s := &Snapshot{
		revision: cfg.Revision,
		cfg:      cfg,
		health:   h,
		built:    prev.now(),
		now:      prev.now,
		region:   prev.region,
		gen:      generation.Add(1),
		parent:   prev.gen,
		pools:    make([]*pool, len(prev.pools), len(prev.pools)+1),
		poolByID: prev.poolByID,
	}
	copy(s.pools, prev.pools)
	dirty, err := s.updatePools(prev, cfg, h, healthChanged)
	if err != nil {
		return nil, err
	}
	lbs, err := s.updateLBs(prev, cfg, dirty)
	if err != nil {
		return nil, err
	}
	s.applyShifts(lbs)
	if err := s.indexLBs(prev, lbs); err != nil {
		return nil, err
	}
	// The RUM table holds pool indices: a deleted pool's slot answers for
	// no load balancer, a new pool is ranked once compiled in.
	s.measured = prev.measured
	if s.measured != nil && len(s.pools) != len(prev.pools) {
		s.measured = s.compileMeasured(prev.measured.src)
	}
	return s, nil
}

// updatePools recompiles into s (which starts as a copy of prev's pools)
// the pools that are new, changed or in healthChanged, and empties those
// gone. dirty[i] says pool i was recompiled or emptied.
func (s *Snapshot) updatePools(prev *Snapshot, cfg *pools.Config, h *pools.Health, healthChanged map[string]bool) (dirty []bool, err error) {
	monitors := monitorSet(cfg)
	staged, orders := rolloutsInForce(cfg, s.built)
	s.orders = orders
	dirty = make([]bool, len(prev.pools), len(prev.pools)+1)
	// prev's index of pools is shared until a pool comes or goes.
	cloned := false
	own := func() {
		if !cloned {
			s.poolByID, cloned = maps.Clone(prev.poolByID), true
		}
	}
	for i := range cfg.Pools {
		p, st := stage(&cfg.Pools[i], staged, s.built)
		idx, ok := prev.poolByID[p.ID]
		if ok {
			old := prev.pools[idx]
			if old.rev == p.Revision && old.modified.Equal(p.ModifiedOn) && !healthChanged[p.ID] &&
				old.staged == st && monitorsOK(p, monitors) {
				continue
			}
		} else {
			own()
			idx = int32(len(s.pools))
			s.pools = append(s.pools, nil)
			dirty = append(dirty, false)
			s.poolByID[p.ID] = idx
		}
		cp, err := compilePool(p, idx, monitors, h)
		if err != nil {
			return nil, err
		}
		cp.staged = st
		s.pools[idx], dirty[idx] = cp, true
		s.rebuilt = append(s.rebuilt, idx)
	}
	// Pool ids are unique, so a configuration with fewer pools than the
	// index knows has lost some: only then is it worth finding which.
	if len(cfg.Pools) != len(s.poolByID) {
		present := make(map[string]bool, len(cfg.Pools))
		for i := range cfg.Pools {
			present[cfg.Pools[i].ID] = true
		}
		for id, idx := range s.poolByID {
			if present[id] {
				continue
			}
			own()
			delete(s.poolByID, id)
			s.pools[idx], dirty[idx] = &pool{first: idx * originStride}, true
			s.rebuilt = append(s.rebuilt, idx)
		}
	}
	return dirty, nil
}

// updateLBs returns the enabled load balancers of cfg: prev's where
// neither it, its zone's name nor any pool it uses (dirty) changed, else
// compiled afresh.
func (s *Snapshot) updateLBs(prev *Snapshot, cfg *pools.Config, dirty []bool) ([]*LB, error) {
	zones := zoneNames(cfg)
	prevZones := zoneNames(prev.cfg)
	previous := follow.New(prev.lbs, func(l *LB) string { return l.id })
	lbs := make([]*LB, 0, len(cfg.LoadBalancers))
	for i := range cfg.LoadBalancers {
		l := &cfg.LoadBalancers[i]
		if !l.Enabled {
			continue
		}
		var lb *LB
		if j := previous.Find(len(lbs), l.ID); j >= 0 {
			lb = prev.lbs[j]
		}
		if lb == nil || lb.rev != l.Revision || !lb.modified.Equal(l.ModifiedOn) ||
			zones[l.Zone] != prevZones[l.Zone] || lb.uses(dirty) || lb.staged != s.orderStaging(l.ID) {
			var err error
			if lb, err = s.compileLB(l, zones); err != nil {
				return nil, fmt.Errorf("load balancer %s (%s): %w", l.ID, l.Name, err)
			}
		}
		lbs = append(lbs, lb)
	}
	return lbs, nil
}

// indexLBs makes lbs answerable by name, sharing prev's index of names
// when every name is where it was.
func (s *Snapshot) indexLBs(prev *Snapshot, lbs []*LB) error {
	if samePlaces(prev.lbs, lbs) {
		s.lbs, s.lbIndex = lbs, prev.lbIndex
		return nil
	}
	s.lbIndex = make(map[string]int32, len(lbs))
	for _, lb := range lbs {
		if err := s.addLB(lb); err != nil {
			return err
		}
	}
	return nil
}

// samePlaces reports whether every name is where it was: the index of
// names then holds as it is.
func samePlaces(a, b []*LB) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].name != b[i].name {
			return false
		}
	}
	return true
}

// uses reports whether any pool the load balancer refers to is dirty.
func (l *LB) uses(dirty []bool) bool {
	in := func(list []int32) bool {
		for _, p := range list {
			if dirty[p] {
				return true
			}
		}
		return false
	}
	if dirty[l.fallback] || in(l.defaults) || l.order != nil && in(l.order.defaults) {
		return true
	}
	for _, list := range l.regionPools {
		if in(list) {
			return true
		}
	}
	for _, list := range l.countryPools {
		if in(list) {
			return true
		}
	}
	return false
}
