package main

import (
	"cmp"
	"context"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/glb-dns/glb/pools"
)

// pruneEvery is how often old audit entries are deleted.
const pruneEvery = time.Hour

// pruneAudit deletes audit entries older than retention now and every
// pruneEvery until ctx ends. Every node prunes; deleting what another
// node already deleted costs nothing.
func pruneAudit(ctx context.Context, store pools.AuditLog, retention time.Duration, log *slog.Logger) {
	log = log.With("component", "audit")
	t := time.NewTicker(pruneEvery)
	defer t.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Minute)
		n, err := store.PruneAudit(pctx, time.Now().Add(-retention))
		cancel()
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("pruning the audit log", "err", err)
		case n > 0:
			log.Info("audit log pruned", "entries", n, "retention", retention)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// healthAudit records the health transitions this node agreed on. The
// node's loop hands it each new agreed view (observe, no I/O); run writes
// the transitions to the store, which keeps one entry per transition
// however many nodes report it. A transition that cannot be written yet
// stays pending, replaced by any newer state of its origin.
type healthAudit struct {
	store pools.AuditLog
	node  string
	log   *slog.Logger
	kick  chan struct{}

	// last is each origin's agreed state as last observed (loop only).
	last map[pools.OriginKey]bool

	mu      sync.Mutex
	pending map[pools.OriginKey]pools.HealthTransition
}

func newHealthAudit(store pools.AuditLog, node string, log *slog.Logger) *healthAudit {
	return &healthAudit{
		store: store, node: node, log: log.With("component", "audit"),
		kick: make(chan struct{}, 1), last: map[pools.OriginKey]bool{},
		pending: map[pools.OriginKey]pools.HealthTransition{},
	}
}

// reasonUp and reasonNoResults explain transitions to healthy.
const (
	reasonUp        = "checks pass in a majority of regions"
	reasonNoResults = "no fresh results; counted healthy"
)

// observe compares the agreed view h with the last one. Every origin is
// reported the first time it is seen, so that a node that restarts
// records what changed while it was away; the store drops what it has.
func (a *healthAudit) observe(h *pools.Health, views []pools.NodeHealth, own pools.NodeHealth) {
	if a == nil || h == nil {
		return
	}
	var changed []pools.HealthTransition
	for key, oh := range h.Origins {
		if was, seen := a.last[key]; seen && was == oh.Healthy {
			continue
		}
		a.last[key] = oh.Healthy
		changed = append(changed, pools.HealthTransition{Pool: key.Pool, Origin: key.Origin, Healthy: oh.Healthy,
			Reason: cmp.Or(oh.Reason, reasonUp)})
	}
	for key, was := range a.last {
		if _, ok := h.Origins[key]; ok {
			continue
		}
		delete(a.last, key)
		if !was {
			changed = append(changed, pools.HealthTransition{Pool: key.Pool, Origin: key.Origin, Healthy: true, Reason: reasonNoResults})
		}
	}
	if len(changed) == 0 {
		return
	}
	regions := regionViews(append(views, own), own.Node)
	a.mu.Lock()
	for _, t := range changed {
		key := pools.OriginKey{Pool: t.Pool, Origin: t.Origin}
		t.Regions = regions[key]
		if t.Regions == nil {
			t.Regions = map[string]pools.RegionHealth{}
		}
		t.Node = a.node
		a.pending[key] = t
	}
	a.mu.Unlock()
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// regionViews sums, per origin and region, what each node's latest view
// says; own replaces the stored copy of this node's view.
func regionViews(views []pools.NodeHealth, own string) map[pools.OriginKey]map[string]pools.RegionHealth {
	out := map[pools.OriginKey]map[string]pools.RegionHealth{}
	for i, v := range views {
		if v.Node == own && i != len(views)-1 {
			continue // the stored copy of our own view; the live one is last
		}
		for _, s := range v.Origins {
			key := pools.OriginKey{Pool: s.Pool, Origin: s.Origin}
			if out[key] == nil {
				out[key] = map[string]pools.RegionHealth{}
			}
			rh := out[key][v.Region]
			rh.Nodes++
			if s.Healthy {
				rh.Healthy++
			} else if rh.Reason == "" {
				rh.Reason = s.Reason
			}
			out[key][v.Region] = rh
		}
	}
	return out
}

// run writes pending transitions until ctx ends, retrying every few
// seconds while the store is unreachable.
func (a *healthAudit) run(ctx context.Context) {
	if a == nil {
		return
	}
	retry := time.NewTicker(5 * time.Second)
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.kick:
		case <-retry.C:
		}
		a.mu.Lock()
		batch := maps.Clone(a.pending)
		a.mu.Unlock()
		if len(batch) == 0 {
			continue
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
			continue
		}
		a.mu.Lock()
		for key, t := range batch {
			if cur, ok := a.pending[key]; ok && cur.Healthy == t.Healthy && cur.Reason == t.Reason {
				delete(a.pending, key)
			}
		}
		a.mu.Unlock()
	}
}
