package pools

import (
	"errors"
	"math"
	"slices"
	"testing"
)

// The feed scope stands aside from the nested ones: a feed token feeds
// and does nothing else, and whoever may write may feed too.
func TestFeedScope(t *testing.T) {
	cases := []struct {
		have Scope
		need Scope
		want bool
	}{
		{ScopeFeed, ScopeFeed, true},
		{ScopeFeed, ScopeRead, false},
		{ScopeFeed, ScopeWrite, false},
		{ScopeFeed, ScopeAdmin, false},
		{ScopeRead, ScopeFeed, false},
		{ScopeWrite, ScopeFeed, true},
		{ScopeIntegrations, ScopeFeed, true},
		{ScopeAdmin, ScopeFeed, true},
		{ScopeRead, ScopeRead, true},
		{ScopeWrite, ScopeRead, true},
		{ScopeAdmin, ScopeIntegrations, true},
		{ScopeWrite, ScopeIntegrations, false},
	}
	for _, c := range cases {
		tok := Token{Scopes: []Scope{c.have}}
		if got := tok.Allows(c.need); got != c.want {
			t.Errorf("a %s token allows %s: %v, want %v", c.have, c.need, got, c.want)
		}
	}
	tok := Token{Name: "prom", Scopes: []Scope{ScopeFeed}}
	if err := tok.Validate(tok.CreatedOn); err != nil {
		t.Errorf("a feed token: %v", err)
	}
}

func TestFeedRequestValidate(t *testing.T) {
	up, ttl, big, load, over := true, 30, MaxFeedTTL+1, 0.8, 1.5
	nan := math.NaN()
	cases := []struct {
		name string
		r    FeedRequest
		want []string
	}{
		{"up", FeedRequest{Up: &up}, nil},
		{"everything", FeedRequest{Up: &up, Reason: "deploy", TTL: &ttl, Load: &load, Monitor: "m"}, nil},
		{"nothing", FeedRequest{}, []string{"up"}},
		{"bad fields", FeedRequest{Up: &up, TTL: &big, Load: &over, Reason: "a\nb"}, []string{"load", "reason", "ttl"}},
		{"NaN load", FeedRequest{Up: &up, Load: &nan}, []string{"load"}},
		{"zero ttl", FeedRequest{Up: &up, TTL: new(int)}, []string{"ttl"}},
	}
	for _, c := range cases {
		err := c.r.Validate()
		if c.want == nil {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if got := paths(t, err); !slices.Equal(got, c.want) {
			t.Errorf("%s: errors at %v, want %v", c.name, got, c.want)
		}
	}
}

func TestByLoad(t *testing.T) {
	b := ByLoad{Low: 0.7, High: 0.9}
	for _, c := range []struct{ load, keep float64 }{{0, 1}, {0.7, 1}, {0.8, 0.5}, {0.85, 0.25}, {0.9, 0}, {0.95, 0}, {1, 0}} {
		if got := b.Keep(c.load); math.Abs(got-c.keep) > 1e-9 {
			t.Errorf("keep at load %v = %v, want %v", c.load, got, c.keep)
		}
	}
	for _, c := range []struct {
		b    ByLoad
		want []string
	}{
		{ByLoad{Low: 0, High: 1}, nil},
		{ByLoad{Low: 0.9, High: 0.9}, []string{"load_shedding.by_load.high"}},
		{ByLoad{Low: -0.1, High: 1.1}, []string{"load_shedding.by_load.high", "load_shedding.by_load.low"}},
		{ByLoad{Low: math.NaN(), High: 0.5}, []string{"load_shedding.by_load.low"}},
	} {
		p := DefaultPool()
		p.Name, p.Origins = "p", []Origin{{Name: "a", Address: "192.0.2.1", Enabled: true, Weight: 1}}
		p.LoadShedding.ByLoad = &c.b
		err := p.Validate(nil)
		if c.want == nil {
			if err != nil {
				t.Errorf("%+v: %v", c.b, err)
			}
			continue
		}
		if got := paths(t, err); !slices.Equal(got, c.want) {
			t.Errorf("%+v: errors at %v, want %v", c.b, got, c.want)
		}
	}
}

// A word goes to the group's feed monitor; without one the error says to
// add one, with several it asks which.
func TestFeedTarget(t *testing.T) {
	ms := map[string]*Monitor{
		"http": {Meta: Meta{ID: "http"}, Type: MonitorHTTP},
		"am":   {Meta: Meta{ID: "am"}, Type: MonitorFeed},
		"gen":  {Meta: Meta{ID: "gen"}, Type: MonitorFeed},
	}
	find := func(id string) *Monitor { return ms[id] }
	p := &Pool{Meta: Meta{ID: "p"}, Origins: []Origin{{Name: "a"}}, Monitor: "http"}
	var se *StateError
	if _, err := p.FeedTarget("a", "", find); !errors.As(err, &se) {
		t.Errorf("no feed monitor: %v, want a StateError", err)
	}
	if _, err := p.FeedTarget("b", "", find); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown origin: %v", err)
	}
	p.Monitors = []PoolMonitor{{Monitor: "http", MustBeHealthy: true}, {Monitor: "am", MustBeHealthy: true}}
	if m, err := p.FeedTarget("a", "", find); err != nil || m.ID != "am" {
		t.Errorf("one feed monitor: %v, %v", m, err)
	}
	if _, err := p.FeedTarget("a", "http", find); err == nil || !slices.Equal(paths(t, err), []string{"monitor"}) {
		t.Errorf("an http monitor named: %v", err)
	}
	p.Monitors = append(p.Monitors, PoolMonitor{Monitor: "gen", MonitoringOnly: true})
	if _, err := p.FeedTarget("a", "", find); err == nil || !slices.Equal(paths(t, err), []string{"monitor"}) {
		t.Errorf("two feed monitors, none named: %v", err)
	}
	if m, err := p.FeedTarget("a", "gen", find); err != nil || m.ID != "gen" {
		t.Errorf("two feed monitors, one named: %v, %v", m, err)
	}
}

// WithLoad puts loads in, takes stale ones out, and shares the rest.
func TestHealthWithLoad(t *testing.T) {
	h := NewHealth(map[OriginKey]OriginHealth{{Pool: "p", Origin: "a"}: {Healthy: true}, {Pool: "q", Origin: "b"}: {Healthy: false}}, nil)
	l := h.WithLoad(map[string]map[string]float64{"p": {"a": 0.8}})
	if got := l.Pool("p"); got.Load["a"] != 0.8 || !got.Origins["a"].Healthy {
		t.Errorf("pool p with its load: %+v", got)
	}
	if l.Pool("q") != h.Pool("q") {
		t.Error("pool q, without load, not shared")
	}
	if changed := ChangedPools(h, l); !changed["p"] || changed["q"] {
		t.Errorf("changed pools %v, want p alone", changed)
	}
	back := l.WithLoad(nil)
	if got := back.Pool("p"); len(got.Load) != 0 || !got.Origins["a"].Healthy {
		t.Errorf("pool p once its load expired: %+v", got)
	}
	if changed := ChangedPools(h, back); len(changed) != 0 {
		t.Errorf("changed pools %v after the load went, want none", changed)
	}
	if h.WithLoad(nil) != h {
		t.Error("no load either way: a new Health")
	}
}
