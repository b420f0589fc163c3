package healthcheck

import (
	"time"

	"github.com/glb-dns/glb/pools"
)

// Follower turns this node's view into health updates: each says what
// changed since the last update delivered (committed), so that what is
// published and recombined is the news, not the whole view again. The
// publisher and the node's own Tally each follow the checker with their
// own Follower. A Follower is not safe for concurrent use.
type Follower struct {
	c *Checker
	// sent is each origin's state as last committed.
	sent map[pools.OriginKey]sentState
	// full: nothing committed yet; the next update is the whole view.
	full bool
}

type sentState struct {
	healthy  bool
	reason   string
	rtt      time.Duration
	monitors []pools.MonitorState
}

// Follow returns a new Follower, whose first update is the whole view.
func (c *Checker) Follow() *Follower {
	return &Follower{c: c, sent: map[pools.OriginKey]sentState{}, full: true}
}

// Next returns the update from the last committed one to the view at now,
// and the commit to call once the update is delivered; an update that is
// not committed is sent again, with what changed since, by the next Next.
//
// An origin is left out (withdrawn, once sent) when its latest check is
// older than 3 check periods: the update's heartbeat vouches for every
// origin it keeps, and the node does not vouch for a result it has not
// renewed. A changed RTT is news only past rttStep, or the smoothed
// value, which moves a little with every check, would put every origin in
// every update (rttMoved).
func (f *Follower) Next(now time.Time) (pools.HealthUpdate, func()) {
	c := f.c
	u := pools.HealthUpdate{Node: c.opts.Node, Region: c.opts.Region, Published: now, Full: f.full}
	c.mu.Lock()
	kept := 0
	for k, w := range c.watches {
		st, ok := c.vouched(w, now)
		if !ok {
			continue
		}
		old, had := f.sent[k]
		if had {
			kept++
		}
		if f.full || !had || old.healthy != st.Healthy || old.reason != st.Reason || rttMoved(old.rtt, st.RTT) ||
			!sameMonitors(old.monitors, st.Monitors) {
			u.Origins = append(u.Origins, st)
		}
	}
	if !f.full && kept < len(f.sent) {
		for k := range f.sent {
			if w := c.watches[k]; w == nil {
				u.Removed = append(u.Removed, k)
			} else if _, ok := c.vouched(w, now); !ok {
				u.Removed = append(u.Removed, k)
			}
		}
	}
	c.mu.Unlock()
	return u, func() { f.commit(&u) }
}

func (f *Follower) commit(u *pools.HealthUpdate) {
	if u.Full {
		clear(f.sent)
		f.full = false
	}
	for _, s := range u.Origins {
		f.sent[s.Key()] = sentState{healthy: s.Healthy, reason: s.Reason, rtt: s.RTT, monitors: s.Monitors}
	}
	for _, k := range u.Removed {
		delete(f.sent, k)
	}
}

// vouched is w's state when the node vouches for it at now: checked at
// least once, and every deciding check within 3 of its check periods
// (watch.state). c.mu is held.
func (c *Checker) vouched(w *watch, now time.Time) (pools.OriginState, bool) {
	return w.state(now, c.unit)
}

// staleAfter is the freshness window of Combine and Tally for t's monitor
// (3 check periods), in monitor seconds whatever unit tests run at.
func (c *Checker) staleAfter(t *target) time.Duration { return staleAfter(t, c.unit) }

func staleAfter(t *target, unit time.Duration) time.Duration {
	period := max(t.interval, t.timeout*time.Duration(t.retries+1))
	return time.Duration(float64(3*period) * float64(time.Second) / float64(unit))
}

// rttMoved says whether a smoothed RTT moved far enough to be news: by
// more than 5 % and more than a millisecond, well below what tells pools
// apart for dynamic_latency.
func rttMoved(was, is time.Duration) bool {
	d := is - was
	if d < 0 {
		d = -d
	}
	return d > max(was/20, time.Millisecond)
}
