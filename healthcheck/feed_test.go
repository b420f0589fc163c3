package healthcheck

import (
	"strings"
	"testing"
	"time"

	"github.com/glb-dns/glb/feeds"
	"github.com/glb-dns/glb/pools"
)

// feedSite is pool "f" of one origin, o1, checked by feed monitor "feed"
// (its thresholds up and down) alone, or in a group with group.
func feedSite(up, down int, group ...pools.PoolMonitor) *pools.Config {
	m := monitor(pools.MonitorFeed)
	m.ID, m.Interval, m.ConsecutiveUp, m.ConsecutiveDown = "feed", 100, up, down
	p := pools.DefaultPool()
	p.ID, p.Name, p.Monitor, p.Monitors = "f", "f", "feed", group
	o := pools.DefaultOrigin()
	o.Name, o.Address = "o1", "192.0.2.1"
	p.Origins = []pools.Origin{o}
	return &pools.Config{Monitors: []pools.Monitor{m}, Pools: []pools.Pool{p}}
}

// word is a word of o1 under "feed", received now, lasting ttl.
func word(up bool, reason string, ttl time.Duration) pools.FeedWord {
	now := time.Now()
	return pools.FeedWord{Pool: "f", Origin: "o1", Monitor: "feed", Up: up, Reason: reason, Source: pools.FeedSourceAPI,
		At: now, Expires: now.Add(ttl)}
}

// feed installs words in tb and tells c.
func feed(c *Checker, tb *feeds.Table, ws ...pools.FeedWord) {
	tb.Replace(ws)
	c.Refeed()
}

// originState waits for o1's state to satisfy ok and returns it.
func originState(t *testing.T, c *Checker, what string, ok func(pools.OriginState) bool) pools.OriginState {
	t.Helper()
	var st pools.OriginState
	eventuallyWithin(t, 5*time.Second, what, func() bool {
		var found bool
		st, found = stateOf(c.View(), "f")
		return found && ok(st)
	})
	return st
}

func isUp(st pools.OriginState) bool   { return st.Healthy }
func isDown(st pools.OriginState) bool { return !st.Healthy }

// A word fed in is a check: down takes the origin down at once with the
// word's reason, up brings it back; until the words are read the origin is
// not judged, and a feed never fed sees it up.
func TestFeedWordsAreChecks(t *testing.T) {
	t.Parallel()
	var tb feeds.Table
	c := start(t, Options{Node: "n1", Region: "WEU", Feeds: &tb})
	c.Update(feedSite(0, 0))
	time.Sleep(50 * time.Millisecond)
	if _, ok := stateOf(c.View(), "f"); ok {
		t.Fatal("origin judged before the words were read")
	}
	feed(c, &tb)
	originState(t, c, "never fed: up", isUp)

	start := time.Now()
	feed(c, &tb, word(false, "maintenance", time.Hour))
	st := originState(t, c, "fed down", isDown)
	if st.Reason != "api: maintenance" {
		t.Errorf("reason %q, want the word's, after its source", st.Reason)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("fed down after %v: the feed pair waited for something", took)
	}
	feed(c, &tb, word(true, "done", time.Hour))
	st = originState(t, c, "fed up", isUp)
	if st.Reason != "api: done" {
		t.Errorf("note of the up word %q, want %q", st.Reason, "api: done")
	}
}

// A word past its expiry is silent, and the origin comes back on its own,
// on the clock, whatever consecutive_up asks; consecutive_down counts
// words.
func TestFeedSilentExpiresFailOpen(t *testing.T) {
	t.Parallel()
	var tb feeds.Table
	c := start(t, Options{Node: "n1", Region: "WEU", Feeds: &tb})
	c.Update(feedSite(3, 2))
	feed(c, &tb)
	originState(t, c, "never fed: up", isUp)

	feed(c, &tb, word(false, "first", time.Hour))
	eventually(t, "the first down word taken", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		p := c.pairOf(pools.OriginKey{Pool: "f", Origin: "o1"})
		return p.th.failures == 1
	})
	if st, _ := stateOf(c.View(), "f"); !st.Healthy {
		t.Fatal("one down word took the origin down; consecutive_down is 2")
	}
	ttl := 700 * time.Millisecond
	second := word(false, "second", ttl)
	feed(c, &tb, second)
	originState(t, c, "down after the second down word", isDown)

	// No Refeed from here: the word expires by the clock.
	st := originState(t, c, "up once the word expired", isUp)
	if late := time.Since(second.Expires); late < 0 || late > time.Second {
		t.Errorf("came back %v after the expiry", late)
	}
	if !strings.HasPrefix(st.Reason, "feed silent: its word expired at ") {
		t.Errorf("note %q, want the expiry told", st.Reason)
	}
}

// In a group a feed counts as any monitor: must_be_healthy takes the
// origin down, monitoring_only is only shown.
func TestFeedInMonitorGroup(t *testing.T) {
	t.Parallel()
	var tb feeds.Table
	c := start(t, Options{Node: "n1", Region: "WEU", Feeds: &tb})
	cfg := feedSite(0, 0, pools.PoolMonitor{Monitor: "feed", MustBeHealthy: true})
	c.Update(cfg)
	feed(c, &tb, word(false, "HighErrorRate", time.Hour))
	st := originState(t, c, "down by the must feed", isDown)
	if st.Reason != "api: HighErrorRate" || len(st.Monitors) != 1 {
		t.Errorf("state %+v", st)
	}

	cfg.Pools[0].Monitors[0] = pools.PoolMonitor{Monitor: "feed", MonitoringOnly: true}
	c.Update(cfg)
	st = originState(t, c, "up with the feed monitoring_only", func(st pools.OriginState) bool {
		return st.Healthy && len(st.Monitors) == 1
	})
	if m := st.Monitors[0]; m.Healthy || m.Reason != "api: HighErrorRate" {
		t.Errorf("the monitoring_only feed's view %+v, want it shown down", m)
	}
}
