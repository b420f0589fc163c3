package healthcheck

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/glb-dns/glb/pools"
)

// Tally keeps the agreed health of a configuration up to date from the
// nodes' health updates (pools.HealthUpdate), doing work in proportion to
// what changed: an update recombines the origins it touches, a heartbeat
// that goes stale the origins its node votes on, a configuration change
// the pools it changes. Health shares every other pool with the previous
// result.
//
// The rules are decide's (votes.go), with one difference that publishing changes
// brings: an entry is fresh while its node's heartbeat is (younger than 3
// check periods of the pool's monitor), not by a time of its own. A node
// withdraws an origin it has not checked for that long (Follower), so the
// result equals the rules applied to the whole views the updates add up
// to, each entry checked at its node's heartbeat (Combine, in the tests).
//
// A Tally is not safe for concurrent use.
type Tally struct {
	rules map[string]*poolRule
	// windows counts the monitored pools of each freshness window.
	windows map[time.Duration]int
	voters  map[string]*voter
	votes   map[pools.OriginKey][]ballot
	// dirty origins, and pools to recombine whole (a new rule).
	dirty      map[pools.OriginKey]struct{}
	dirtyPools map[string]struct{}
	// rtt is each origin's RTT by region while agreed healthy.
	rtt    map[pools.OriginKey][]regionRTT
	health *pools.Health
}

// voter is one node as the tally knows it.
type voter struct {
	name, region string
	beat         time.Time
	// fresh says, for each window, whether the node's entries were fresh
	// when last recombined.
	fresh map[time.Duration]bool
	// n counts the node's entries. Which they are is found by a scan of
	// every origin's votes, on the rare events that need them (a restart,
	// a move to another region, a heartbeat going stale or fresh): a set
	// per node would cost more memory than the votes themselves.
	n int
}

// ballot is one node's state of one origin: what counts, without the names
// the key holds (a hundred thousand origins on ten nodes are a million).
type ballot struct {
	v       *voter
	healthy bool
	reason  string
	rtt     time.Duration
}

func (e *ballot) state(k pools.OriginKey) pools.OriginState {
	return pools.OriginState{Pool: k.Pool, Origin: k.Origin, Healthy: e.healthy, Reason: e.reason, RTT: e.rtt, CheckedAt: e.v.beat}
}

func byVoter(e ballot, name string) int { return cmp.Compare(e.v.name, name) }

// NewTally returns an empty Tally; Configure it before Health means
// anything.
func NewTally() *Tally {
	return &Tally{
		rules: map[string]*poolRule{}, windows: map[time.Duration]int{},
		voters: map[string]*voter{}, votes: map[pools.OriginKey][]ballot{},
		dirty: map[pools.OriginKey]struct{}{}, dirtyPools: map[string]struct{}{},
		rtt: map[pools.OriginKey][]regionRTT{}, health: pools.NewHealth(nil, nil),
	}
}

// Configure follows a new configuration. A pool keeps its rule while its
// revision and its group's freshness window stay the same; a new rule
// recombines the whole pool.
func (t *Tally) Configure(cfg *pools.Config) {
	rules := make(map[string]*poolRule, len(t.rules))
	clear(t.windows)
	if cfg != nil {
		monitoredPools(cfg, func(p *pools.Pool, window time.Duration) {
			r := t.rules[p.ID]
			if r == nil || r.rev != p.Revision || !r.modified.Equal(p.ModifiedOn) || r.window != window {
				// A rule is built only for a pool that changed: a write
				// to one pool costs one rule, not the estate's origins.
				r = newPoolRule(p, window)
				t.dirtyPools[p.ID] = struct{}{}
			}
			rules[p.ID] = r
			t.windows[r.window]++
		})
	}
	for id := range t.rules {
		if rules[id] == nil {
			t.dirtyPools[id] = struct{}{}
		}
	}
	t.rules = rules
}

// Apply takes one node's update: a new heartbeat, region, entries.
func (t *Tally) Apply(u pools.HealthUpdate) {
	v := t.voters[u.Node]
	if v == nil {
		v = &voter{name: u.Node, region: u.Region, fresh: map[time.Duration]bool{}}
		t.voters[u.Node] = v
	}
	if v.region != u.Region {
		v.region = u.Region
		t.markVoter(v, nil)
	}
	// Freshness under the new heartbeat is looked at by Health.
	v.beat = u.Published
	if u.Full && v.n > 0 {
		for k := range t.votes {
			t.drop(v, k)
		}
	}
	for _, s := range u.Origins {
		t.set(v, s)
	}
	for _, k := range u.Removed {
		t.drop(v, k)
	}
}

// set records v's state of an origin, marking it dirty when it changes
// anything a vote counts.
func (t *Tally) set(v *voter, s pools.OriginState) {
	k := s.Key()
	list := t.votes[k]
	e := ballot{v: v, healthy: s.Healthy, reason: s.Reason, rtt: s.RTT}
	i, found := slices.BinarySearchFunc(list, v.name, byVoter)
	if found {
		if list[i] == e {
			return
		}
		list[i] = e
	} else {
		t.votes[k] = slices.Insert(list, i, e)
		v.n++
	}
	t.dirty[k] = struct{}{}
}

func (t *Tally) drop(v *voter, k pools.OriginKey) {
	list := t.votes[k]
	i, found := slices.BinarySearchFunc(list, v.name, byVoter)
	if !found {
		return
	}
	if list = slices.Delete(list, i, i+1); len(list) == 0 {
		delete(t.votes, k)
	} else {
		t.votes[k] = list
	}
	v.n--
	t.dirty[k] = struct{}{}
}

// markVoter marks dirty the origins v votes on, in the pools whose rule
// matches (every origin when match is nil).
func (t *Tally) markVoter(v *voter, match func(*poolRule) bool) {
	if v.n == 0 {
		return
	}
	for k, list := range t.votes {
		if _, found := slices.BinarySearchFunc(list, v.name, byVoter); !found {
			continue
		}
		if match != nil {
			if r := t.rules[k.Pool]; r == nil || !match(r) {
				continue
			}
		}
		t.dirty[k] = struct{}{}
	}
}

// Health recombines what changed since the last call, and what the
// passing of time changed (heartbeats going stale or fresh), and returns
// the agreed health at now. Nothing changed: the same *pools.Health.
func (t *Tally) Health(now time.Time) *pools.Health {
	t.age(now)
	if len(t.dirty) == 0 && len(t.dirtyPools) == 0 {
		return t.health
	}
	rc := recombination{t: t, now: now, work: map[string]*pools.PoolHealth{}}
	rc.wholePools()
	rc.dirtyOrigins()
	clear(t.dirty)
	clear(t.dirtyPools)
	t.health = rc.result()
	return t.health
}

// age marks dirty the origins of every node whose heartbeat went stale
// or fresh, for each freshness window in use, since the last look.
func (t *Tally) age(now time.Time) {
	for _, v := range t.voters {
		for w := range t.windows {
			fresh := now.Sub(v.beat) < w
			if was, ok := v.fresh[w]; ok && was == fresh {
				continue
			}
			v.fresh[w] = fresh
			t.markVoter(v, func(r *poolRule) bool { return r.window == w })
		}
		maps.DeleteFunc(v.fresh, func(w time.Duration, _ bool) bool { return t.windows[w] == 0 })
	}
}

// recombination is one Health call's work: the pools it rebuilds, each
// from its previous entries, and the fresh entries of one origin.
type recombination struct {
	t     *Tally
	now   time.Time
	work  map[string]*pools.PoolHealth
	fresh []entry
}

// pool is the pool's health being rebuilt: a copy of its previous
// entries, or nothing when the whole pool is recombined.
func (rc *recombination) pool(id string) *pools.PoolHealth {
	ph := rc.work[id]
	if ph == nil {
		ph = &pools.PoolHealth{Origins: map[string]pools.OriginHealth{}, RTT: map[string]time.Duration{}}
		if _, whole := rc.t.dirtyPools[id]; !whole {
			if old := rc.t.health.Pool(id); old != nil {
				ph.Origins = maps.Clone(old.Origins)
			}
		}
		rc.work[id] = ph
	}
	return ph
}

// origin decides one origin afresh from its fresh votes.
func (rc *recombination) origin(k pools.OriginKey, r *poolRule) {
	t := rc.t
	ph := rc.pool(k.Pool)
	delete(ph.Origins, k.Origin)
	delete(t.rtt, k)
	rc.fresh = rc.fresh[:0]
	for _, e := range t.votes[k] {
		if rc.now.Sub(e.v.beat) < r.window {
			rc.fresh = append(rc.fresh, entry{node: e.v.name, region: e.v.region, state: e.state(k)})
		}
	}
	oh, ok := decide(rc.fresh, r.voting)
	if !ok {
		return
	}
	ph.Origins[k.Origin] = oh
	if oh.Healthy {
		if rtt := originRTT(rc.fresh); len(rtt) > 0 {
			t.rtt[k] = rtt
		}
	}
}

// wholePools recombines every origin of the pools whose rule is new or
// gone.
func (rc *recombination) wholePools() {
	t := rc.t
	for id := range t.dirtyPools {
		rc.pool(id)
		if old := t.health.Pool(id); old != nil {
			for name := range old.Origins {
				delete(t.rtt, pools.OriginKey{Pool: id, Origin: name})
			}
		}
		if r := t.rules[id]; r != nil {
			for _, name := range r.origins {
				rc.origin(pools.OriginKey{Pool: id, Origin: name}, r)
			}
		}
	}
}

// dirtyOrigins recombines the origins whose votes changed, outside the
// pools already recombined whole.
func (rc *recombination) dirtyOrigins() {
	t := rc.t
	for k := range t.dirty {
		if _, whole := t.dirtyPools[k.Pool]; whole {
			continue
		}
		r := t.rules[k.Pool]
		if r == nil || !r.named[k.Origin] {
			continue // not an origin of a monitored pool: no entry
		}
		rc.origin(k, r)
	}
}

// result averages the rebuilt pools' RTTs and shares every pool that did
// not change with the previous Health.
func (rc *recombination) result() *pools.Health {
	t := rc.t
	changed := map[string]*pools.PoolHealth{}
	for id, ph := range rc.work {
		if r := t.rules[id]; r != nil {
			var mean rttMean
			for _, name := range r.origins {
				mean.add(t.rtt[pools.OriginKey{Pool: id, Origin: name}])
			}
			mean.into(ph.RTT)
		}
		if !ph.Equal(t.health.Pool(id)) {
			changed[id] = ph
		}
	}
	if len(changed) == 0 {
		return t.health
	}
	return t.health.With(changed)
}

// Votes calls fn with every node's state of an origin, in node order,
// fresh or not.
func (t *Tally) Votes(k pools.OriginKey, fn func(node, region string, s pools.OriginState)) {
	for _, e := range t.votes[k] {
		fn(e.v.name, e.v.region, e.state(k))
	}
}
