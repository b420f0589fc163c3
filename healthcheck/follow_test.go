package healthcheck

import (
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
)

// followed is a Checker, not running, over sites "a" and "b", each
// checked once and healthy.
func followed(t *testing.T) (*Checker, map[string]*pair, []*site) {
	t.Helper()
	h := &sequence{codes: []int{200}}
	sites := []*site{newSite(t, "a", h, 10), newSite(t, "b", h, 10)}
	c := New(Options{Node: "n1", Region: "WEU", unit: testUnit})
	c.Update(configOf(sites...))
	ps := map[string]*pair{}
	for _, id := range []string{"a", "b"} {
		p := c.pairOf(pools.OriginKey{Pool: id, Origin: "o1"})
		c.record(p, result{healthy: true, rtt: 20 * time.Millisecond}, 0)
		ps[id] = p
	}
	return c, ps, sites
}

func keysOf(ss []pools.OriginState) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Pool)
	}
	return out
}

// TestFollowerSendsChangesOnly: the first update is the whole view; then
// a heartbeat carries only what changed, an RTT that moved a little is no
// news, and an update that was not delivered is sent again.
func TestFollowerSendsChangesOnly(t *testing.T) {
	t.Parallel()
	c, ps, _ := followed(t)
	f := c.Follow()
	u, commit := f.Next(time.Now())
	if !u.Full || len(u.Origins) != 2 || u.Node != "n1" || u.Region != "WEU" {
		t.Fatalf("first update %+v; want the whole view of n1 in WEU", u)
	}
	commit()
	if u, commit = f.Next(time.Now()); u.Full || len(u.Origins) != 0 || len(u.Removed) != 0 {
		t.Errorf("nothing changed, yet %+v", u)
	}
	commit()

	// a goes down; b's RTT moves by 0.3 ms (no news), then by far more.
	c.record(ps["a"], result{reason: "refused"}, 0)
	c.record(ps["b"], result{healthy: true, rtt: 21 * time.Millisecond}, 0)
	u, _ = f.Next(time.Now())
	if got := keysOf(u.Origins); len(got) != 1 || got[0] != "a" || u.Origins[0].Healthy || u.Origins[0].Reason != "refused" {
		t.Errorf("after a went down: %+v; want a alone, down, refused", u.Origins)
	}
	// Not delivered: the next update still has it, with b's big move.
	c.record(ps["b"], result{healthy: true, rtt: 200 * time.Millisecond}, 0)
	u, commit = f.Next(time.Now())
	if got := keysOf(u.Origins); len(got) != 2 {
		t.Errorf("after an update that was not delivered and b's RTT tripled: %v; want a and b", got)
	}
	commit()
	if u, _ = f.Next(time.Now()); len(u.Origins) != 0 {
		t.Errorf("delivered, and sent again: %+v", u.Origins)
	}
}

// TestFollowerWithdraws: an origin whose latest check is 3 check periods
// old is withdrawn (the heartbeat does not vouch for it), and so is one no
// longer checked; a whole view leaves both out.
func TestFollowerWithdraws(t *testing.T) {
	t.Parallel()
	c, ps, sites := followed(t)
	// The monitor's check period is its timeout × attempts when longer
	// than the interval; Combine's window is 3 of them, in monitor seconds.
	m := sites[0].mon
	window := 3 * time.Duration(max(m.Interval, m.Timeout*(m.Retries+1))) * time.Second
	if got := c.staleAfter(ps["a"].t); got != window {
		t.Fatalf("window %v, want %v", got, window)
	}
	f := c.Follow()
	u, commit := f.Next(time.Now())
	commit()
	checked := u.Origins[0].CheckedAt
	if u, _ := f.Next(checked.Add(window - time.Millisecond)); len(u.Removed) != 0 {
		t.Errorf("withdrawn inside the window: %+v", u.Removed)
	}
	u, _ = f.Next(checked.Add(window + time.Second))
	if len(u.Removed) != 2 || len(u.Origins) != 0 {
		t.Errorf("3 check periods without a check: %+v; want both withdrawn", u)
	}
	if u, _ := c.Follow().Next(checked.Add(window + time.Second)); !u.Full || len(u.Origins) != 0 {
		t.Errorf("whole view with every result too old: %+v; want it empty", u)
	}

	c.Update(configOf(sites[0])) // b is no longer checked
	if u, _ = f.Next(time.Now()); len(u.Removed) != 1 || u.Removed[0].Pool != "b" || len(u.Origins) != 0 {
		t.Errorf("after b left the configuration: %+v; want b withdrawn", u)
	}
}

// TestPublishesChangesNotTheWholeView: after the first, whole, update the
// publications are heartbeats that carry only what changed: each origin
// they name differs from what was last published of it, in health,
// reason or an RTT that moved (RTT jitter on a loaded machine is news,
// so the test judges each origin sent rather than counting them).
func TestPublishesChangesNotTheWholeView(t *testing.T) {
	t.Parallel()
	var sites []*site
	for _, id := range []string{"a", "b", "c", "d"} {
		sites = append(sites, newSite(t, id, &sequence{codes: []int{200}}, 1))
	}
	rec := &recorder{}
	c := start(t, Options{Node: "n1", Publisher: rec, PublishInterval: 150 * time.Millisecond})
	c.Update(configOf(sites...))
	// whole is the first publication after which the view holds all 4.
	whole := func() int {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		for i, v := range rec.views {
			if len(v.Origins) == 4 {
				return i
			}
		}
		return -1
	}
	eventually(t, "the view of 4 published, and six heartbeats after it", func() bool {
		i := whole()
		return i >= 0 && len(rec.published())-i > 6
	})
	ups := rec.published()
	if !ups[0].Full {
		t.Errorf("first publication %+v; want the whole view", ups[0])
	}
	last := map[pools.OriginKey]pools.OriginState{}
	for _, o := range ups[0].Origins {
		last[o.Key()] = o
	}
	for _, u := range ups[1:] {
		if u.Full {
			t.Fatalf("a second whole view: %+v", u)
		}
		for _, o := range u.Origins {
			if was, ok := last[o.Key()]; ok && was.Healthy == o.Healthy && was.Reason == o.Reason && !rttMoved(was.RTT, o.RTT) {
				t.Errorf("%v sent again unchanged (%v, rtt %v → %v)", o.Key(), o.Healthy, was.RTT, o.RTT)
			}
			last[o.Key()] = o
		}
	}
}
