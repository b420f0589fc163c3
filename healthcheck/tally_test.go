package healthcheck

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
)

// model is what the updates applied to a Tally add up to: each node's
// region, heartbeat and states.
type model map[string]*modelNode

type modelNode struct {
	region string
	beat   time.Time
	states map[pools.OriginKey]pools.OriginState
}

func (m model) apply(u pools.HealthUpdate) {
	n := m[u.Node]
	if n == nil || u.Full {
		n = &modelNode{states: map[pools.OriginKey]pools.OriginState{}}
		m[u.Node] = n
	}
	n.region, n.beat = u.Region, u.Published
	for _, s := range u.Origins {
		n.states[s.Key()] = s
	}
	for _, k := range u.Removed {
		delete(n.states, k)
	}
}

// views are the whole views, each entry checked at its node's heartbeat:
// what Combine must agree with the Tally on.
func (m model) views() []pools.NodeHealth {
	var out []pools.NodeHealth
	for name, n := range m {
		v := pools.NodeHealth{Node: name, Region: n.region, Published: n.beat}
		for _, s := range n.states {
			s.CheckedAt = n.beat
			v.Origins = append(v.Origins, s)
		}
		out = append(out, v)
	}
	return out
}

// sameHealth fails t with the pools where got and want differ.
func sameHealth(t *testing.T, what string, got, want *pools.Health) {
	t.Helper()
	for _, id := range slices.Sorted(maps.Keys(pools.ChangedPools(want, got))) {
		t.Errorf("%s: pool %s is %+v, recombined from scratch %+v", what, id, got.Pool(id), want.Pool(id))
	}
}

// randomConfig: pools p0..p4 of up to five origins under one of two
// monitors (freshness windows of 3 s and 36 s) or none, with random
// check_regions. rev distinguishes versions of a pool.
type randomConfig struct {
	rng *rand.Rand
	cfg *pools.Config
	rev int64
}

var tallyRegions = []string{"WEU", "ENAM", "SAS"}

func newRandomConfig(rng *rand.Rand) *randomConfig {
	r := &randomConfig{rng: rng, cfg: &pools.Config{}}
	fast, slow := pools.DefaultMonitor(), pools.DefaultMonitor()
	fast.ID, fast.Interval, fast.Timeout, fast.Retries = "fast", 1, 1, 0
	slow.ID, slow.Interval, slow.Timeout, slow.Retries = "slow", 10, 4, 2
	r.cfg.Monitors = []pools.Monitor{fast, slow}
	for i := range 5 {
		r.cfg.Pools = append(r.cfg.Pools, r.pool(fmt.Sprintf("p%d", i)))
	}
	return r
}

func (r *randomConfig) pool(id string) pools.Pool {
	r.rev++
	p := pools.DefaultPool()
	p.ID, p.Revision = id, r.rev
	p.Monitor = []string{"", "fast", "slow", "slow", "fast"}[r.rng.IntN(5)]
	for _, region := range tallyRegions {
		if r.rng.IntN(3) == 0 {
			p.CheckRegions = append(p.CheckRegions, region)
		}
	}
	for j := range 5 {
		if r.rng.IntN(5) != 0 {
			o := pools.DefaultOrigin()
			o.Name = fmt.Sprintf("o%d", j)
			p.Origins = append(p.Origins, o)
		}
	}
	return p
}

// change edits the configuration the way the store would hand a new one
// over: a new version of a pool, a pool gone or back, a monitor's
// interval changed (a new freshness window without a pool revision).
func (r *randomConfig) change() {
	cfg := *r.cfg
	cfg.Pools = slices.Clone(cfg.Pools)
	cfg.Monitors = slices.Clone(cfg.Monitors)
	switch r.rng.IntN(4) {
	case 0, 1:
		i := r.rng.IntN(len(cfg.Pools))
		cfg.Pools[i] = r.pool(cfg.Pools[i].ID)
	case 2:
		if len(cfg.Pools) > 3 {
			i := r.rng.IntN(len(cfg.Pools))
			cfg.Pools = slices.Delete(cfg.Pools, i, i+1)
		} else {
			for i := range 5 {
				id := fmt.Sprintf("p%d", i)
				if !slices.ContainsFunc(cfg.Pools, func(p pools.Pool) bool { return p.ID == id }) {
					cfg.Pools = append(cfg.Pools, r.pool(id))
					break
				}
			}
		}
	case 3:
		m := &cfg.Monitors[r.rng.IntN(len(cfg.Monitors))]
		m.Interval = 1 + r.rng.IntN(12)
	}
	r.cfg = &cfg
}

// randomUpdate is a node's next publication: whole, changes, or a
// heartbeat alone.
func randomUpdate(rng *rand.Rand, m model, node string, at time.Time) pools.HealthUpdate {
	region := tallyRegions[int(node[1]-'0')%len(tallyRegions)]
	if rng.IntN(15) == 0 {
		region = tallyRegions[rng.IntN(len(tallyRegions))] // the node moved
	}
	if n := m[node]; n != nil && rng.IntN(15) != 0 {
		region = n.region
	}
	u := pools.HealthUpdate{Node: node, Region: region, Published: at, Full: m[node] == nil || rng.IntN(12) == 0}
	changes := rng.IntN(5)
	if u.Full {
		changes = 3 + rng.IntN(20)
	}
	for range changes {
		k := pools.OriginKey{Pool: fmt.Sprintf("p%d", rng.IntN(6)), Origin: fmt.Sprintf("o%d", rng.IntN(6))}
		if n := m[node]; !u.Full && n != nil && rng.IntN(4) == 0 {
			if _, ok := n.states[k]; ok {
				u.Removed = append(u.Removed, k)
				continue
			}
		}
		s := pools.OriginState{Pool: k.Pool, Origin: k.Origin, Healthy: rng.IntN(3) != 0,
			RTT: time.Duration(rng.IntN(4)) * 10 * time.Millisecond}
		if !s.Healthy {
			s.Reason = []string{"timeout", "HTTP 503", "refused"}[rng.IntN(3)]
		}
		u.Origins = append(u.Origins, s)
	}
	return u
}

// TestTallyEqualsCombineFromScratch: whatever the sequence of updates,
// heartbeats that stop and resume, configuration changes and passing
// time, the Tally's health equals Combine over the views the updates add
// up to; and a call with nothing new returns the same Health.
func TestTallyEqualsCombineFromScratch(t *testing.T) {
	t.Parallel()
	for seed := range uint64(60) {
		rng := rand.New(rand.NewPCG(seed, 42))
		rc := newRandomConfig(rng)
		tally := NewTally()
		tally.Configure(rc.cfg)
		m := model{}
		at := now
		// Some nodes stop publishing for a while: their votes go stale.
		quiet := map[string]time.Time{}
		for step := range 300 {
			switch k := rng.IntN(10); {
			case k < 5:
				node := fmt.Sprintf("n%d", rng.IntN(5))
				if at.Before(quiet[node]) {
					break
				}
				u := randomUpdate(rng, m, node, at)
				m.apply(u)
				tally.Apply(u)
			case k == 5:
				rc.change()
				tally.Configure(rc.cfg)
			case k == 6:
				quiet[fmt.Sprintf("n%d", rng.IntN(5))] = at.Add(time.Duration(rng.IntN(60)) * time.Second)
			default:
				// Time passes: within a window, or across one.
				at = at.Add(time.Duration(rng.IntN(8000)) * time.Millisecond)
				if rng.IntN(6) == 0 {
					at = at.Add(time.Duration(rng.IntN(40)) * time.Second)
				}
			}
			if rng.IntN(3) != 0 {
				continue
			}
			got := tally.Health(at)
			sameHealth(t, fmt.Sprintf("seed %d step %d", seed, step), got, Combine(rc.cfg, m.views(), at))
			if again := tally.Health(at); again != got {
				t.Errorf("seed %d step %d: a second call with nothing new built another Health", seed, step)
			}
			if t.Failed() {
				return
			}
		}
	}
}

// tallyAt sets up pool "p" (window 30 s) voted on by three nodes in three
// regions, each publishing whole views at t0.
func tallyAt(t0 time.Time, states map[string]bool) *Tally {
	tally := NewTally()
	tally.Configure(combineConfig())
	for _, n := range []struct{ node, region string }{{"n1", "WEU"}, {"n2", "ENAM"}, {"n3", "SAS"}} {
		v := vote(n.node, n.region, states[n.node], 0, 0)
		v.Published = t0
		tally.Apply(pools.FullUpdate(v))
	}
	return tally
}

func beat(tally *Tally, node, region string, at time.Time) {
	tally.Apply(pools.HealthUpdate{Node: node, Region: region, Published: at})
}

// TestTallyStaleHeartbeatDropsVotes: when a node's heartbeats stop, its
// votes count until 3 check periods after the last one and then drop,
// recombining the origins it voted on; when they resume, its votes count
// again.
func TestTallyStaleHeartbeatDropsVotes(t *testing.T) {
	t.Parallel()
	t0 := now
	a := pools.OriginKey{Pool: "p", Origin: "a"}
	tally := tallyAt(t0, map[string]bool{"n1": true, "n2": false, "n3": false})
	if got, _ := tally.Health(t0).Origin(a); got.Healthy {
		t.Fatalf("1 of 3 regions healthy: %+v", got)
	}
	// n1 keeps beating; n2 and n3 fall silent.
	beat(tally, "n1", "WEU", t0.Add(20*time.Second))
	if got, _ := tally.Health(t0.Add(30*time.Second - time.Millisecond)).Origin(a); got.Healthy {
		t.Errorf("just inside the window, the silent nodes still vote: got %+v", got)
	}
	if got, ok := tally.Health(t0.Add(30 * time.Second)).Origin(a); !ok || !got.Healthy {
		t.Errorf("30 s after their last heartbeat the silent nodes' votes dropped: got %+v %v; want n1's healthy", got, ok)
	}
	// n2 is back, still seeing a down: 1 of 2 regions, a tie, down.
	beat(tally, "n2", "ENAM", t0.Add(35*time.Second))
	if got, _ := tally.Health(t0.Add(35 * time.Second)).Origin(a); got.Healthy {
		t.Errorf("n2's heartbeat is back: its down vote counts again; got %+v", got)
	}
	// Nobody fresh: no entry, which counts as healthy.
	if _, ok := tally.Health(t0.Add(90 * time.Second)).Origin(a); ok {
		t.Error("every heartbeat stale, and still an entry")
	}
}

// TestTallyRecombinesOnlyWhatChanged: a change to one pool's origin
// builds a Health sharing every other pool's entries; a heartbeat that
// changes nothing returns the same Health.
func TestTallyRecombinesOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	cfg := combineConfig()
	other := cfg.Pools[0]
	other.ID = "q"
	cfg.Pools = append(cfg.Pools, other)
	tally := NewTally()
	tally.Configure(cfg)
	v := vote("n1", "WEU", true, 0, 0)
	v.Origins = append(v.Origins, pools.OriginState{Pool: "q", Origin: "a", Healthy: true}, pools.OriginState{Pool: "q", Origin: "b", Healthy: true})
	tally.Apply(pools.FullUpdate(v))
	h1 := tally.Health(now)
	beat(tally, "n1", "WEU", now.Add(time.Second))
	if h := tally.Health(now.Add(time.Second)); h != h1 {
		t.Error("a heartbeat without news built another Health")
	}
	tally.Apply(pools.HealthUpdate{Node: "n1", Region: "WEU", Published: now.Add(2 * time.Second),
		Origins: []pools.OriginState{{Pool: "q", Origin: "a", Healthy: false, Reason: "refused"}}})
	h2 := tally.Health(now.Add(2 * time.Second))
	if h2.Pool("p") != h1.Pool("p") {
		t.Error("pool p was rebuilt for a change to pool q")
	}
	if got, _ := h2.Origin(pools.OriginKey{Pool: "q", Origin: "a"}); got.Healthy {
		t.Errorf("q/a after its down: %+v", got)
	}
	if got := pools.ChangedPools(h1, h2); !maps.Equal(got, map[string]bool{"q": true}) {
		t.Errorf("changed pools %v, want q only", got)
	}
}

// TestTallyFollowsTheConfiguration: a pool losing its monitor loses its
// entries; a longer monitor interval widens the window at once.
func TestTallyFollowsTheConfiguration(t *testing.T) {
	t.Parallel()
	cfg := combineConfig()
	tally := NewTally()
	tally.Configure(cfg)
	v := vote("n1", "WEU", false, 0, 0)
	tally.Apply(pools.FullUpdate(v))
	a := pools.OriginKey{Pool: "p", Origin: "a"}
	late := now.Add(40 * time.Second) // past the 30 s window
	if _, ok := tally.Health(late).Origin(a); ok {
		t.Fatal("a vote 40 s old counts in a 30 s window")
	}
	wider := *cfg
	wider.Monitors = slices.Clone(cfg.Monitors)
	wider.Monitors[0].Interval = 20 // window 60 s
	tally.Configure(&wider)
	if got, ok := tally.Health(late).Origin(a); !ok || got.Healthy {
		t.Errorf("window widened to 60 s: a 40 s old down vote should count; got %+v %v", got, ok)
	}
	unmonitored := wider
	unmonitored.Pools = slices.Clone(wider.Pools)
	unmonitored.Pools[0].Monitor = ""
	unmonitored.Pools[0].Revision++
	tally.Configure(&unmonitored)
	if h := tally.Health(late); h.Pool("p") != nil {
		t.Errorf("a pool without a monitor has entries: %+v", h.Pool("p"))
	}
}
