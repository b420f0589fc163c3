package notify

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/glb-dns/glb/internal/kick"
	"github.com/glb-dns/glb/pools"
)

// Observer turns the agreed health a node serves into state changes:
// each origin's and pool's health, each load balancer's answering pool.
// The node's loop hands it every new view (Observe, no I/O); Run writes
// the changes to the store, which records an event for each that differs
// from the recorded state, once however many nodes report it. Changes
// that cannot be written yet wait, in order, and are written later.
type Observer struct {
	store   pools.NotifyStore
	log     *slog.Logger
	metrics *Metrics
	// recorded is called after events were recorded (the worker's kick).
	recorded func()
	kick     kick.Signal

	// Loop only: the last state observed of every key, and the
	// configuration the index was built for.
	last map[string]string
	// nodes is the last state observed of every node, touched by
	// ObserveFleet alone (its caller's goroutine, not the loop's).
	nodes map[string]string
	cfg   *pools.Config
	// lbsOf maps a pool id to the load balancers that list it.
	lbsOf map[string][]*pools.LoadBalancer

	mu      sync.Mutex
	pending []pools.StateChange
}

// maxPending bounds what waits for an unreachable store: past it the
// oldest changes go (the store's state catches up with the next ones).
const maxPending = 100000

// NewObserver returns an Observer; recorded (may be nil) is called when
// events were recorded.
func NewObserver(store pools.NotifyStore, log *slog.Logger, m *Metrics, recorded func()) *Observer {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Observer{store: store, log: log.With("component", "notify"), metrics: m, recorded: recorded,
		kick: kick.New(), last: map[string]string{}, nodes: map[string]string{}}
}

// Origin, pool and load balancer keys of the recorded states.
func originKey(pool, origin string) string { return "origin/" + pool + "/" + origin }
func poolKey(pool string) string           { return "pool/" + pool }
func lbKey(lb string) string               { return "lb/" + lb }

// Observe compares h with what was last observed, in the pools of
// changed (all when nil or when cfg is another configuration), at now.
func (o *Observer) Observe(cfg *pools.Config, h *pools.Health, changed map[string]bool, now time.Time) {
	if o == nil || cfg == nil || h == nil {
		return
	}
	if cfg != o.cfg {
		o.index(cfg)
		changed = nil
	}
	now = pools.StoreTime(now)
	var out []pools.StateChange
	lbs := map[string]*pools.LoadBalancer{}
	for i := range cfg.Pools {
		p := &cfg.Pools[i]
		if changed != nil && !changed[p.ID] {
			continue
		}
		for _, lb := range o.lbsOf[p.ID] {
			lbs[lb.ID] = lb
		}
		if !p.Checked() {
			continue // never checked: always healthy, nothing to report
		}
		out = o.observePool(out, p, h, now)
	}
	ids := make([]string, 0, len(lbs))
	for id := range lbs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		out = o.observeLB(out, lbs[id], cfg, h, now)
	}
	o.queue(out)
}

// queue hands changes to Run.
func (o *Observer) queue(out []pools.StateChange) {
	if len(out) == 0 {
		return
	}
	o.mu.Lock()
	o.pending = append(o.pending, out...)
	if n := len(o.pending) - maxPending; n > 0 {
		o.pending = slices.Delete(o.pending, 0, n)
	}
	o.mu.Unlock()
	o.kick.Send()
}

// index maps each pool to the load balancers that list it.
func (o *Observer) index(cfg *pools.Config) {
	o.cfg = cfg
	o.lbsOf = map[string][]*pools.LoadBalancer{}
	for i := range cfg.LoadBalancers {
		lb := &cfg.LoadBalancers[i]
		for _, r := range lb.PoolRefs() {
			if list := o.lbsOf[r.Pool]; !slices.Contains(list, lb) {
				o.lbsOf[r.Pool] = append(list, lb)
			}
		}
	}
}

// note appends a change when the state of key differs from the last one
// observed (always on the first observation: the store compares it with
// what it recorded, which covers what changed while this node was away).
func (o *Observer) note(out []pools.StateChange, key, state, assume string, e pools.Event) []pools.StateChange {
	return noteIn(o.last, out, key, state, assume, e)
}

// noteIn is note over the states last.
func noteIn(last map[string]string, out []pools.StateChange, key, state, assume string, e pools.Event) []pools.StateChange {
	if was, seen := last[key]; seen && was == state {
		return out
	}
	last[key] = state
	e.ID = pools.EventID(e.Type, key, state, e.Time.Format(time.RFC3339Nano))
	e.Data.New = state
	return append(out, pools.StateChange{Key: key, State: state, Assume: assume, Event: e})
}

func (o *Observer) lbIDs(pool string) []string {
	var ids []string
	for _, lb := range o.lbsOf[pool] {
		ids = append(ids, lb.ID)
	}
	return ids
}

// observePool notes the pool's origins and its own health. A pool is up
// when it has at least minimum_origins (and one) eligible origins healthy,
// as steering counts them; whether it is enabled is configuration, not
// health (a config event tells that).
func (o *Observer) observePool(out []pools.StateChange, p *pools.Pool, h *pools.Health, now time.Time) []pools.StateChange {
	lbs := o.lbIDs(p.ID)
	healthy, why := 0, ""
	for _, org := range p.Origins {
		oh, known := h.Origin(pools.OriginKey{Pool: p.ID, Origin: org.Name})
		up := !known || oh.Healthy
		if org.Enabled && org.Weight > 0 && up {
			healthy++
		}
		state, reason := pools.StateUp, "checks pass"
		if !up {
			state, reason = pools.StateDown, oh.Reason
			if why == "" {
				why = org.Name + ": " + oh.Reason
			}
		}
		out = o.note(out, originKey(p.ID, org.Name), state, pools.StateUp, pools.Event{
			Type: pools.EventOriginHealth, Time: now, Data: pools.EventData{
				Summary: fmt.Sprintf("origin %s of pool %s is %s: %s", org.Name, p.Name, state, reason),
				Pool:    p.ID, PoolName: p.Name, Origin: org.Name, Reason: reason, Pools: []string{p.ID}, LoadBalancers: lbs,
			}})
	}
	minimum := max(p.MinimumOrigins, 1)
	state, reason := pools.StateUp, fmt.Sprintf("%d of %d origins healthy (minimum %d)", healthy, len(p.Origins), minimum)
	if healthy < minimum {
		state = pools.StateDown
		if why != "" {
			reason += "; " + why
		}
	}
	return o.note(out, poolKey(p.ID), state, pools.StateUp, pools.Event{
		Type: pools.EventPoolHealth, Time: now, Data: pools.EventData{
			Summary: fmt.Sprintf("pool %s is %s: %s", p.Name, state, reason),
			Pool:    p.ID, PoolName: p.Name, Reason: reason, Pools: []string{p.ID}, LoadBalancers: lbs,
		}})
}

// serves reports whether pool p answers: enabled and healthy as steering
// counts it.
func serves(p *pools.Pool, h *pools.Health) bool {
	if !p.Enabled {
		return false
	}
	healthy := 0
	for _, org := range p.Origins {
		if !org.Enabled || org.Weight <= 0 {
			continue
		}
		oh, known := h.Origin(pools.OriginKey{Pool: p.ID, Origin: org.Name})
		if !p.Checked() || !known || oh.Healthy {
			healthy++
		}
	}
	return healthy > 0 && healthy >= max(p.MinimumOrigins, 1)
}

// observeLB notes the pool a load balancer answers with in its default
// order: the first of default_pools that serves, else the fallback. The
// first state is recorded without an event (nothing failed over yet).
func (o *Observer) observeLB(out []pools.StateChange, lb *pools.LoadBalancer, cfg *pools.Config, h *pools.Health, now time.Time) []pools.StateChange {
	if !lb.Enabled || len(lb.DefaultPools) == 0 {
		return out
	}
	byID := func(id string) *pools.Pool {
		for i := range cfg.Pools {
			if cfg.Pools[i].ID == id {
				return &cfg.Pools[i]
			}
		}
		return nil
	}
	answer, reason := lb.FallbackPool, "no pool of default_pools serves: the fallback answers"
	var skipped []string
	for _, id := range lb.DefaultPools {
		p := byID(id)
		if p != nil && serves(p, h) {
			answer, reason = id, ""
			break
		}
		skipped = append(skipped, id)
	}
	switch {
	case answer == lb.DefaultPools[0]:
		reason = pools.ReasonPrimaryBack
	case reason == "":
		reason = fmt.Sprintf("pool %s does not serve", skipped[0])
	}
	name := func(id string) string {
		if p := byID(id); p != nil {
			return p.Name
		}
		return id
	}
	return o.note(out, lbKey(lb.ID), answer, "", pools.Event{
		Type: pools.EventFailover, Time: now, Data: pools.EventData{
			Summary:      fmt.Sprintf("load balancer %s answers with pool %s: %s", lb.Name, name(answer), reason),
			LoadBalancer: lb.ID, LoadBalancerName: lb.Name, Pool: answer, PoolName: name(answer), Reason: reason,
			LoadBalancers: []string{lb.ID}, Pools: append([]string{answer}, skipped...),
		}})
}

// Run writes pending changes until ctx ends, retrying every few seconds
// while the store is unreachable.
func (o *Observer) Run(ctx context.Context) {
	if o == nil {
		return
	}
	o.kick.Retrying(ctx, 3*time.Second, o.flush)
}

// flush records the pending changes once; a refused batch goes back to
// the front of the queue.
func (o *Observer) flush(ctx context.Context) {
	o.mu.Lock()
	batch := o.pending
	o.pending = nil
	o.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	evs, err := o.store.RecordStates(wctx, batch)
	cancel()
	if err != nil {
		o.log.Warn("recording state changes; will retry", "changes", len(batch), "err", err)
		o.mu.Lock()
		o.pending = append(batch, o.pending...)
		o.mu.Unlock()
		return
	}
	for _, e := range evs {
		o.metrics.queued(e.Type)
		o.log.Info("event recorded", "event", e.ID, "type", e.Type, "summary", e.Data.Summary)
	}
	if len(evs) > 0 && o.recorded != nil {
		o.recorded()
	}
}

// ObserveFleet notes each node's state (views, as GET /nodes shows them
// at now): a node that turns stale, gone or drained, or serves again, is
// an event, once however many nodes notice. Draining is a passage, not an
// event; a node never recorded counts as serving, so that a new node is
// no news but one first seen stale is. One goroutine calls it, which need
// not be the loop's.
func (o *Observer) ObserveFleet(views []pools.NodeView, now time.Time) {
	if o == nil {
		return
	}
	now = pools.StoreTime(now)
	var out []pools.StateChange
	for _, v := range views {
		if v.State == pools.NodeDraining {
			continue
		}
		why := v.Why
		if why == "" {
			why = "answers from revision " + strconv.FormatInt(v.Revision, 10)
		}
		out = noteIn(o.nodes, out, "node/"+v.Name, v.State, pools.NodeServing, pools.Event{
			Type: pools.EventNode, Time: now, Data: pools.EventData{
				Summary: fmt.Sprintf("node %s is %s: %s", v.Name, v.State, why), Node: v.Name, Reason: why,
			}})
	}
	o.queue(out)
}
