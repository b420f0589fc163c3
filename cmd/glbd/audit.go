package main

import (
	"cmp"
	"context"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/glb-dns/glb/internal/kick"
	"github.com/glb-dns/glb/pools"
)

// healthAudit records the health transitions this node agreed on. The
// node's loop hands it each new agreed view (observe, no I/O); run writes
// the transitions to the store, which keeps one entry per transition
// however many nodes report it. A transition that cannot be written yet
// stays pending, replaced by any newer state of its origin.
type healthAudit struct {
	store pools.AuditLog
	node  string
	log   *slog.Logger
	kick  kick.Signal

	// last is each origin's agreed state as last observed, by pool and
	// origin (loop only).
	last map[string]map[string]bool

	mu      sync.Mutex
	pending map[pools.OriginKey]pools.HealthTransition
}

func newHealthAudit(store pools.AuditLog, node string, log *slog.Logger) *healthAudit {
	return &healthAudit{
		store: store, node: node, log: log.With("component", "audit"),
		kick: kick.New(), last: map[string]map[string]bool{},
		pending: map[pools.OriginKey]pools.HealthTransition{},
	}
}

// reasonUp and reasonNoResults explain transitions to healthy.
const (
	reasonUp        = "checks pass in a majority of regions"
	reasonNoResults = "no fresh results; counted healthy"
)

// observe compares the agreed view h with the last one, in the pools of
// changed (every pool when nil: the first view, or one compiled in full).
// Every origin is reported the first time it is seen, so that a node that
// restarts records what changed while it was away; the store drops what
// it has. votes lists every node's state of an origin (Tally.Votes), for
// what each region saw.
func (a *healthAudit) observe(h *pools.Health, changed map[string]bool, votes func(pools.OriginKey, func(node, region string, s pools.OriginState))) {
	if a == nil || h == nil {
		return
	}
	if changed == nil {
		changed = map[string]bool{}
		for id := range h.Pools() {
			changed[id] = true
		}
		for id := range a.last {
			changed[id] = true
		}
	}
	var ts []pools.HealthTransition
	for id := range changed {
		ph, last := h.Pool(id), a.last[id]
		if ph != nil {
			for name, oh := range ph.Origins {
				if was, seen := last[name]; seen && was == oh.Healthy {
					continue
				}
				if last == nil {
					last = map[string]bool{}
					a.last[id] = last
				}
				last[name] = oh.Healthy
				ts = append(ts, pools.HealthTransition{Pool: id, Origin: name, Healthy: oh.Healthy, Reason: cmp.Or(oh.Reason, reasonUp)})
			}
		}
		for name, was := range last {
			if ph != nil {
				if _, ok := ph.Origins[name]; ok {
					continue
				}
			}
			delete(last, name)
			if !was {
				ts = append(ts, pools.HealthTransition{Pool: id, Origin: name, Healthy: true, Reason: reasonNoResults})
			}
		}
		if len(last) == 0 {
			delete(a.last, id)
		}
	}
	if len(ts) == 0 {
		return
	}
	a.mu.Lock()
	for _, t := range ts {
		key := pools.OriginKey{Pool: t.Pool, Origin: t.Origin}
		t.Regions = regionsOf(key, votes)
		t.Node = a.node
		a.pending[key] = t
	}
	a.mu.Unlock()
	a.kick.Send()
}

// regionsOf sums what each region's nodes say of an origin.
func regionsOf(key pools.OriginKey, votes func(pools.OriginKey, func(node, region string, s pools.OriginState))) map[string]pools.RegionHealth {
	out := map[string]pools.RegionHealth{}
	votes(key, func(_, region string, s pools.OriginState) {
		rh := out[region]
		rh.Nodes++
		if s.Healthy {
			rh.Healthy++
		} else if rh.Reason == "" {
			rh.Reason = s.Reason
		}
		out[region] = rh
	})
	return out
}

// run writes pending transitions until ctx ends, retrying every few
// seconds while the store is unreachable.
func (a *healthAudit) run(ctx context.Context) {
	if a == nil {
		return
	}
	a.kick.Retrying(ctx, 5*time.Second, a.flush)
}

// flush writes the pending transitions once; those still pending as
// written leave the queue.
func (a *healthAudit) flush(ctx context.Context) {
	a.mu.Lock()
	batch := maps.Clone(a.pending)
	a.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	ts := make([]pools.HealthTransition, 0, len(batch))
	for _, t := range batch {
		ts = append(ts, t)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err := a.store.RecordHealth(wctx, time.Now(), ts)
	cancel()
	if err != nil {
		a.log.Warn("recording health transitions; will retry", "transitions", len(ts), "err", err)
		return
	}
	a.mu.Lock()
	for key, t := range batch {
		if cur, ok := a.pending[key]; ok && cur.Healthy == t.Healthy && cur.Reason == t.Reason {
			delete(a.pending, key)
		}
	}
	a.mu.Unlock()
}
