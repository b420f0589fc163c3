package pools

import (
	"iter"
	"maps"
	"time"
)

// OriginKey names an origin: pool id and origin name (origin names are
// unique within a pool).
type OriginKey struct {
	Pool   string
	Origin string
}

// PoolRegion names a pool as seen from one region (for RTT).
type PoolRegion struct {
	Pool   string
	Region string
}

// OriginHealth is the agreed state of one origin.
type OriginHealth struct {
	Healthy bool
	Reason  string // why not healthy
	// Note is what the checks of a healthy origin noted, such as the days
	// a tls monitor's certificate has left: the first healthy voting
	// node's, in node order, so that every node agrees on it.
	Note string
}

// Health is the health view that steering compiles into a snapshot: the
// state every node agrees on, computed from all nodes' published views.
// An origin without an entry counts as healthy (no result yet).
//
// It is kept per pool so that a change to one pool builds a new Health
// sharing every other pool's entries (With): the cost of a flip does not
// grow with the estate. A Health is never modified once built; snapshots
// and the API read it concurrently.
type Health struct {
	pools map[string]*PoolHealth
}

// PoolHealth is the agreed health of one pool. Read only.
type PoolHealth struct {
	// Origins by origin name.
	Origins map[string]OriginHealth
	// RTT by region: the smoothed health-check round trip of the pool from
	// that region, for dynamic_latency steering.
	RTT map[string]time.Duration
	// Load by origin name: the load its feeds report now (the highest of
	// its live words that carry one), for load_shedding.by_load. Every
	// node reads the same words and judges their expiry by its own
	// clock, so it is not voted on.
	Load map[string]float64
}

// Equal reports whether two pools' health are the same (nil is empty).
func (p *PoolHealth) Equal(q *PoolHealth) bool {
	if p == q {
		return true
	}
	var po, qo map[string]OriginHealth
	var pr, qr map[string]time.Duration
	var pl, ql map[string]float64
	if p != nil {
		po, pr, pl = p.Origins, p.RTT, p.Load
	}
	if q != nil {
		qo, qr, ql = q.Origins, q.RTT, q.Load
	}
	return maps.Equal(po, qo) && maps.Equal(pr, qr) && maps.Equal(pl, ql)
}

func (p *PoolHealth) empty() bool {
	return p == nil || len(p.Origins) == 0 && len(p.RTT) == 0 && len(p.Load) == 0
}

// NewHealth builds a Health from flat maps (either may be nil).
func NewHealth(origins map[OriginKey]OriginHealth, rtt map[PoolRegion]time.Duration) *Health {
	h := &Health{pools: map[string]*PoolHealth{}}
	pool := func(id string) *PoolHealth {
		p := h.pools[id]
		if p == nil {
			p = &PoolHealth{Origins: map[string]OriginHealth{}, RTT: map[string]time.Duration{}}
			h.pools[id] = p
		}
		return p
	}
	for k, v := range origins {
		pool(k.Pool).Origins[k.Origin] = v
	}
	for k, v := range rtt {
		pool(k.Pool).RTT[k.Region] = v
	}
	return h
}

// With returns a Health with the given pools' entries replaced (a nil or
// empty PoolHealth removes them), sharing the others with h (nil is
// empty). h is not modified.
func (h *Health) With(changed map[string]*PoolHealth) *Health {
	out := &Health{}
	if h != nil {
		out.pools = maps.Clone(h.pools)
	}
	if out.pools == nil {
		out.pools = make(map[string]*PoolHealth, len(changed))
	}
	for id, p := range changed {
		if p.empty() {
			delete(out.pools, id)
		} else {
			out.pools[id] = p
		}
	}
	return out
}

// WithLoad returns h with the loads fed in (by pool id, then origin
// name) in place of whatever loads h held, sharing every pool that
// carries no load either way. h is not modified.
func (h *Health) WithLoad(load map[string]map[string]float64) *Health {
	changed := map[string]*PoolHealth{}
	set := func(id string, l map[string]float64) {
		q := &PoolHealth{Load: l}
		if p := h.Pool(id); p != nil {
			q.Origins, q.RTT = p.Origins, p.RTT
		}
		changed[id] = q
	}
	for id, p := range h.Pools() {
		if len(p.Load) > 0 && load[id] == nil {
			set(id, nil)
		}
	}
	for id, l := range load {
		set(id, l)
	}
	if len(changed) == 0 {
		return h
	}
	return h.With(changed)
}

// Pool is the health of one pool; nil when nothing is known of it.
func (h *Health) Pool(id string) *PoolHealth {
	if h == nil {
		return nil
	}
	return h.pools[id]
}

// Origin is the agreed state of one origin; ok is false when there is
// none (the origin counts as healthy).
func (h *Health) Origin(k OriginKey) (oh OriginHealth, ok bool) {
	if p := h.Pool(k.Pool); p != nil {
		oh, ok = p.Origins[k.Origin]
	}
	return oh, ok
}

// RTT is the smoothed RTT of a pool from a region; 0 when unknown.
func (h *Health) RTT(k PoolRegion) time.Duration {
	if p := h.Pool(k.Pool); p != nil {
		return p.RTT[k.Region]
	}
	return 0
}

// Pools yields every pool with entries, in no particular order.
func (h *Health) Pools() iter.Seq2[string, *PoolHealth] {
	return func(yield func(string, *PoolHealth) bool) {
		if h == nil {
			return
		}
		for id, p := range h.pools {
			if !yield(id, p) {
				return
			}
		}
	}
}

// Origins yields every origin entry, in no particular order.
func (h *Health) Origins() iter.Seq2[OriginKey, OriginHealth] {
	return func(yield func(OriginKey, OriginHealth) bool) {
		for id, p := range h.Pools() {
			for name, oh := range p.Origins {
				if !yield(OriginKey{Pool: id, Origin: name}, oh) {
					return
				}
			}
		}
	}
}

// ChangedPools returns the ids of the pools whose health differs between
// two views (nil views are empty). Pools shared by With are skipped
// without looking at their entries.
func ChangedPools(old, cur *Health) map[string]bool {
	out := map[string]bool{}
	for id, p := range cur.Pools() {
		if !p.Equal(old.Pool(id)) {
			out[id] = true
		}
	}
	for id, p := range old.Pools() {
		if cur.Pool(id) == nil && !p.empty() {
			out[id] = true
		}
	}
	return out
}

// OriginState is one node's latest knowledge of one origin.
type OriginState struct {
	Pool    string `json:"pool"`
	Origin  string `json:"origin"`
	Healthy bool   `json:"healthy"`
	Reason  string `json:"reason,omitempty"`
	// RTT of the last successful check, smoothed (EWMA), in nanoseconds.
	RTT time.Duration `json:"rtt"`
	// CheckedAt is when the state was last confirmed: for a view read from
	// a store, the node's heartbeat (HealthUpdate.Published).
	CheckedAt time.Time `json:"checked_at"`
	// Monitors, for a pool with a monitor group (Pool.Monitors), is what
	// each monitor of the group sees, in group order; Healthy is the
	// group's rule applied to them. Empty for a pool with one monitor.
	Monitors []MonitorState `json:"monitors,omitempty"`
}

// MonitorState is one node's view of an origin under one monitor of its
// pool's group.
type MonitorState struct {
	Monitor string `json:"monitor"`
	Healthy bool   `json:"healthy"`
	Reason  string `json:"reason,omitempty"`
	// RTT of the monitor's last successful check, smoothed, in nanoseconds.
	RTT time.Duration `json:"rtt"`
}

// Key names the origin of s.
func (s *OriginState) Key() OriginKey { return OriginKey{Pool: s.Pool, Origin: s.Origin} }

// NodeHealth is one node's whole health view.
type NodeHealth struct {
	Node      string        `json:"node"`
	Region    string        `json:"region"`
	Published time.Time     `json:"published"`
	Origins   []OriginState `json:"origins"`
}

// HealthUpdate is what a node publishes: a heartbeat, and the origins
// whose state changed since its previous publication. Publishing changes
// rather than the whole view keeps a hundred thousand origins on ten
// nodes cheap for the store and for every node that reads it.
//
// The heartbeat is the freshness of everything the node has published:
// at Published, the node vouches for every origin it still lists. An
// origin it has not checked for too long is withdrawn (Removed), and when
// the heartbeats stop, all of its entries go stale together.
type HealthUpdate struct {
	Node   string
	Region string
	// Published is the heartbeat, on the publishing node's clock.
	Published time.Time
	// Full: Origins is the node's whole view and replaces whatever was
	// known of the node (its first publication after a start; a reader
	// that cannot follow the changes).
	Full bool
	// Origins are the new or changed states (all of them when Full).
	Origins []OriginState
	// Removed are origins the node no longer vouches for.
	Removed []OriginKey
	// Cursor, on an update read from a store, is where the next read of
	// the node's changes starts. Ignored on publication.
	Cursor HealthCursor
}

// Changed reports whether u carries more than a heartbeat.
func (u *HealthUpdate) Changed() bool { return u.Full || len(u.Origins) > 0 || len(u.Removed) > 0 }

// HealthCursor is how far a reader has followed one node's changes:
// Epoch changes with every full publication of the node (the reader then
// starts over), Seq with every publication that changes an origin.
type HealthCursor struct {
	Epoch, Seq int64
}

// FullUpdate is the full publication of a whole view.
func FullUpdate(v NodeHealth) HealthUpdate {
	return HealthUpdate{Node: v.Node, Region: v.Region, Published: v.Published, Full: true, Origins: v.Origins}
}
