package feeds

import (
	"maps"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
)

func load(v float64) *float64 { return &v }

func TestTableReplaceAndExpiry(t *testing.T) {
	var tb Table
	if tb.Ready() {
		t.Fatal("ready before any read")
	}
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	a := pools.FeedWord{Pool: "p", Origin: "a", Monitor: "m", Up: false, Reason: "down", At: now, Expires: now.Add(time.Minute)}
	b := pools.FeedWord{Pool: "p", Origin: "b", Monitor: "m", Up: true, At: now, Expires: now.Add(10 * time.Second)}
	if !tb.Replace([]pools.FeedWord{a, b}) || !tb.Ready() || tb.Gen() != 1 {
		t.Fatalf("first read: ready %v gen %d", tb.Ready(), tb.Gen())
	}
	if tb.Replace([]pools.FeedWord{b, a}) || tb.Gen() != 1 {
		t.Error("the same words again counted as a change")
	}
	renewed := a
	renewed.At, renewed.Expires = now.Add(time.Second), now.Add(2*time.Minute)
	if !tb.Replace([]pools.FeedWord{renewed, b}) || tb.Gen() != 2 {
		t.Error("a renewal (new expiry) not counted as a change")
	}
	if w, ok := tb.Word(pools.OriginKey{Pool: "p", Origin: "a"}, "m"); !ok || !w.Expires.Equal(renewed.Expires) {
		t.Errorf("word of a: %+v %v", w, ok)
	}
	if _, ok := tb.Word(pools.OriginKey{Pool: "p", Origin: "a"}, "other"); ok {
		t.Error("a word under a monitor never fed")
	}
	for _, c := range []struct {
		at, want time.Time
	}{
		{now, b.Expires},
		{b.Expires, renewed.Expires}, // strictly after
		{renewed.Expires, time.Time{}},
	} {
		if got := tb.NextExpiry(c.at); !got.Equal(c.want) {
			t.Errorf("next expiry after %v: %v, want %v", c.at, got, c.want)
		}
	}
}

// Loads count the live words of deciding feed monitors, the highest of an
// origin's; monitoring_only feeds, disabled origins, origins the
// configuration lacks and expired words do not.
func TestTableLoads(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	cfg := &pools.Config{Pools: []pools.Pool{{
		Meta: pools.Meta{ID: "p"}, Enabled: true,
		Monitors: []pools.PoolMonitor{{Monitor: "m", MustBeHealthy: true}, {Monitor: "n"}, {Monitor: "shown", MonitoringOnly: true}},
		Origins:  []pools.Origin{{Name: "a", Enabled: true}, {Name: "b", Enabled: true}, {Name: "off"}, {Name: "c", Enabled: true}},
	}, {
		Meta: pools.Meta{ID: "q"}, Enabled: true, Monitor: "m",
		Origins: []pools.Origin{{Name: "a", Enabled: true}},
	}}}
	word := func(pool, origin, monitor string, l float64, ttl time.Duration) pools.FeedWord {
		return pools.FeedWord{Pool: pool, Origin: origin, Monitor: monitor, Up: true, Load: load(l), At: now, Expires: now.Add(ttl)}
	}
	var tb Table
	tb.Replace([]pools.FeedWord{
		word("p", "a", "m", 0.5, time.Minute),
		word("p", "a", "n", 0.8, 30*time.Second), // the higher of a's
		word("p", "b", "shown", 0.99, time.Minute),
		word("p", "off", "m", 0.99, time.Minute),
		word("p", "gone", "m", 0.99, time.Minute),
		word("p", "c", "m", 0.95, -time.Second), // expired
		word("q", "a", "m", 0.3, 2*time.Minute),
		{Pool: "q", Origin: "a", Monitor: "x", Up: false, At: now, Expires: now.Add(time.Second)}, // no load
	})
	got, until := tb.Loads(cfg, now)
	want := map[string]map[string]float64{"p": {"a": 0.8}, "q": {"a": 0.3}}
	if !maps.EqualFunc(got, want, maps.Equal) {
		t.Errorf("loads %v, want %v", got, want)
	}
	if !until.Equal(now.Add(30 * time.Second)) {
		t.Errorf("until %v, want the expiry of the 0.8", until)
	}
	got, _ = tb.Loads(cfg, now.Add(30*time.Second))
	want = map[string]map[string]float64{"p": {"a": 0.5}, "q": {"a": 0.3}}
	if !maps.EqualFunc(got, want, maps.Equal) {
		t.Errorf("loads once the 0.8 expired %v, want %v", got, want)
	}
}
