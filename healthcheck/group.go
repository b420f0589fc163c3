package healthcheck

import (
	"slices"
	"time"

	"github.com/glb-dns/glb/pools"
)

// role is what one monitor's view counts for in its pool's monitor group
// (pools.Pool.Group; groupDecide states the rule).
type role uint8

const (
	// roleAny: one of the group's other deciding monitors, of which at
	// least one must see the origin up.
	roleAny role = iota
	// roleMust: must see the origin up (a pool's single monitor).
	roleMust
	// roleOnly: checked and shown, never counted.
	roleOnly
)

func roleOf(m pools.PoolMonitor) role {
	switch {
	case m.MonitoringOnly:
		return roleOnly
	case m.MustBeHealthy:
		return roleMust
	}
	return roleAny
}

// member is one monitor of a pool's group, resolved to its spec.
type member struct {
	id   string
	s    *spec
	role role
}

// groupOf appends to buf the group pool p is checked with, in group
// order; empty when p is not checked: disabled, or without a monitor that
// exists. Disabled pools are not probed since steering never answers with
// them; enabling one makes its origins new watches, checked at once. The
// same holds for disabled origins (Update skips them).
func groupOf(p *pools.Pool, specs map[string]*spec, buf []member) []member {
	buf = buf[:0]
	if !p.Enabled {
		return buf
	}
	if len(p.Monitors) == 0 {
		if s := specs[p.Monitor]; p.Monitor != "" && s != nil {
			buf = append(buf, member{id: p.Monitor, s: s, role: roleMust})
		}
		return buf
	}
	for _, m := range p.Monitors {
		if s := specs[m.Monitor]; s != nil {
			buf = append(buf, member{id: m.Monitor, s: s, role: roleOf(m)})
		}
	}
	return buf
}

// watch is one origin of a checked pool: one pair per monitor of the
// pool's group, in group order. Its fields below the line are guarded by
// Checker.mu.
type watch struct {
	key   pools.OriginKey
	pairs []*pair
	// group: the pool gives a monitors list, so the origin's state
	// carries each monitor's view (pools.OriginState.Monitors).
	group bool

	gen     uint64 // of the last Update that wanted it
	healthy bool   // the group's decision as last made
}

// matches reports whether w checks origin o of pool p with the group ms
// as it would be built afresh; nearly always it does.
func (w *watch) matches(p *pools.Pool, ms []member, o *pools.Origin, group bool) bool {
	if len(w.pairs) != len(ms) || w.group != group {
		return false
	}
	for i, m := range ms {
		q := w.pairs[i]
		if q.monitor != m.id || q.role != m.role || !q.t.is(p, m.s, o) {
			return false
		}
	}
	return true
}

// pair is w's check under monitor id, nil when there is none.
func (w *watch) pair(id string) *pair {
	if w == nil {
		return nil
	}
	for _, p := range w.pairs {
		if p.monitor == id {
			return p
		}
	}
	return nil
}

// decide applies the group's rule to w's pairs as they stand.
func (w *watch) decide() (bool, string) {
	var buf [pools.MaxMonitorsPerPool]monitorVote
	vs := buf[:0]
	for _, p := range w.pairs {
		vs = append(vs, monitorVote{monitor: p.monitor, role: p.role, known: p.th.known, healthy: p.th.Healthy(), reason: p.reason})
	}
	up, reason := groupDecide(vs)
	if up {
		// An up origin shows what its checks noted, such as the days
		// a certificate has left: the first deciding monitor's note.
		for _, p := range w.pairs {
			if p.role != roleOnly && p.th.Healthy() && p.note != "" {
				return true, p.note
			}
		}
	}
	return up, reason
}

// state is w's state as a view holds it. With unit set (Follower; one
// monitor second), it is the state the node vouches for at now: false
// when a deciding monitor's latest check is older than 3 of its check
// periods (Checker.staleAfter), and monitoring-only views that old are
// left out. With unit 0 (View), every known view counts. False too until
// the group can decide: a deciding monitor checked, or when the group has
// none, any monitor.
func (w *watch) state(now time.Time, unit time.Duration) (pools.OriginState, bool) {
	stale := func(p *pair) bool { return unit > 0 && now.Sub(p.checkedAt) >= staleAfter(p.t, unit) }
	deciding, known := false, false
	var oldest time.Time
	rtt := time.Duration(0)
	for _, p := range w.pairs {
		if p.role != roleOnly {
			deciding = true
		}
		if !p.th.known {
			continue
		}
		if stale(p) {
			if p.role != roleOnly {
				return pools.OriginState{}, false
			}
			continue
		}
		if p.role == roleOnly {
			continue
		}
		known = true
		if oldest.IsZero() || p.checkedAt.Before(oldest) {
			oldest = p.checkedAt
		}
		if rtt == 0 {
			rtt = p.rtt
		}
	}
	if !deciding {
		// Only monitoring_only monitors: the origin is up once any of
		// them has looked, and its state shows what they see.
		for _, p := range w.pairs {
			if p.th.known && !stale(p) && (!known || p.checkedAt.Before(oldest)) {
				known, oldest = true, p.checkedAt
			}
		}
	}
	if !known {
		return pools.OriginState{}, false
	}
	healthy, reason := w.decide()
	s := pools.OriginState{Pool: w.key.Pool, Origin: w.key.Origin, Healthy: healthy, Reason: reason, RTT: rtt, CheckedAt: oldest}
	if w.group {
		s.Monitors = make([]pools.MonitorState, 0, len(w.pairs))
		for _, p := range w.pairs {
			if !p.th.known || stale(p) {
				continue
			}
			ms := pools.MonitorState{Monitor: p.monitor, Healthy: p.th.Healthy(), RTT: p.rtt}
			if ms.Healthy {
				ms.Reason = p.note
			} else {
				ms.Reason = p.reason
			}
			s.Monitors = append(s.Monitors, ms)
		}
	}
	return s, true
}

// sameMonitors reports whether two lists of monitor views say the same,
// an RTT counting as changed only past rttMoved.
func sameMonitors(a, b []pools.MonitorState) bool {
	return slices.EqualFunc(a, b, func(x, y pools.MonitorState) bool {
		return x.Monitor == y.Monitor && x.Healthy == y.Healthy && x.Reason == y.Reason && !rttMoved(x.RTT, y.RTT)
	})
}
