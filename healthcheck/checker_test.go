package healthcheck

import (
	"context"
	"net/http"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
)

// site is one origin behind its own loopback server; the monitor carries
// the server's port, so every site gets its own monitor and pool.
type site struct {
	mon  pools.Monitor
	pool pools.Pool
}

// newSite aims a monitor with the given interval (in test units) at h.
// upSite is a site whose origin answers 200, and the sequence that counts
// its checks.
func upSite(t *testing.T, id string, interval int) (*site, *sequence) {
	t.Helper()
	seq := &sequence{codes: []int{200}}
	return newSite(t, id, seq, interval), seq
}

func newSite(t *testing.T, id string, h http.Handler, interval int) *site {
	t.Helper()
	srv := serve(t, h)
	host, port := addrOf(t, srv.URL)
	m := monitor(pools.MonitorHTTP)
	m.ID, m.Port, m.Interval = "mon-"+id, port, interval
	p := pools.DefaultPool()
	p.ID, p.Name, p.Monitor = id, id, m.ID
	o := pools.DefaultOrigin()
	o.Name, o.Address = "o1", host
	p.Origins = []pools.Origin{o}
	return &site{mon: m, pool: p}
}

func configOf(sites ...*site) *pools.Config {
	cfg := &pools.Config{}
	for _, s := range sites {
		cfg.Monitors = append(cfg.Monitors, s.mon)
		cfg.Pools = append(cfg.Pools, s.pool)
	}
	return cfg
}

// start runs a Checker with test units until the test ends.
func start(t *testing.T, opts Options) *Checker {
	t.Helper()
	opts.unit = testUnit
	c := New(opts)
	runChecker(t, c)
	return c
}

// runChecker runs c until the test ends.
func runChecker(t *testing.T, c *Checker) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

func (c *Checker) checksOf(pool string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.pairOf(pools.OriginKey{Pool: pool, Origin: "o1"}); p != nil {
		return p.checks
	}
	return -1
}

func stateOf(v pools.NodeHealth, pool string) (pools.OriginState, bool) {
	for _, s := range v.Origins {
		if s.Pool == pool {
			return s, true
		}
	}
	return pools.OriginState{}, false
}

func TestNewAndChangedOriginsCheckedAtOnce(t *testing.T) {
	t.Parallel()
	// An interval of 100 units (10 s) leaves no room for a scheduled check
	// within the test: every check seen below ran because it was new.
	a, seqA := upSite(t, "a", 100)
	b, seqB := upSite(t, "b", 100)
	c := start(t, Options{Node: "n1", Region: "WEU"})

	c.Update(configOf(a))
	eventually(t, "first check of a", func() bool { return seqA.count() == 1 })
	// The server sees the request before the checker records the answer.
	eventually(t, "a in the view after its first check", func() bool {
		_, ok := stateOf(c.View(), "a")
		return ok
	})

	c.Update(configOf(a, b))
	eventually(t, "b checked at once when added", func() bool { return seqB.count() == 1 })
	if n := seqA.count(); n != 1 {
		t.Errorf("unchanged a was checked again on Update (%d checks)", n)
	}

	a.mon.Path = "/changed"
	c.Update(configOf(a, b))
	eventually(t, "a checked at once when its monitor changed", func() bool {
		r := seqA.lastRequest()
		return r != nil && r.URL.Path == "/changed"
	})
	if n := seqB.count(); n != 1 {
		t.Errorf("unchanged b was checked again on Update (%d checks)", n)
	}
}

func TestRemovedOriginStops(t *testing.T) {
	t.Parallel()
	gone, seqGone := upSite(t, "gone", 1)
	stay, seqStay := upSite(t, "stay", 1)
	c := start(t, Options{})

	c.Update(configOf(gone, stay))
	eventually(t, "both checked twice", func() bool { return seqGone.count() >= 2 && seqStay.count() >= 2 })
	eventually(t, "both in the view", func() bool {
		_, g := stateOf(c.View(), "gone")
		_, s := stateOf(c.View(), "stay")
		return g && s
	})

	// A pool's view is that pool's part of the whole view.
	want, _ := stateOf(c.View(), "stay")
	if pv := c.PoolView("stay"); len(pv.Origins) != 1 || !reflect.DeepEqual(pv.Origins[0], want) {
		t.Errorf("view of pool stay: %+v, want only %+v", pv.Origins, want)
	}

	c.Update(configOf(stay))
	if _, ok := stateOf(c.View(), "gone"); ok {
		t.Error("a removed origin is still in the view")
	}
	if pv := c.PoolView("gone"); len(pv.Origins) != 0 {
		t.Errorf("a removed pool's view: %+v", pv.Origins)
	}
	// Let a request already on the wire land, then watch the remaining
	// origin's own checks go by as the clock.
	base := seqStay.count()
	eventually(t, "two more checks of stay", func() bool { return seqStay.count() >= base+2 })
	after := seqGone.count()
	eventually(t, "three more checks of stay", func() bool { return seqStay.count() >= base+5 })
	if n := seqGone.count(); n != after {
		t.Errorf("removed origin checked %d more times", n-after)
	}
}

func TestSlowOriginDoesNotDelayOthers(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	slowHits := make(chan struct{}, 16)
	slow := newSite(t, "slow", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		slowHits <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}), 1)
	slow.mon.Timeout = 100 // 10 s: hangs for the whole test
	fast, fastSeq := upSite(t, "fast", 1)
	// Two slots: the slow check holds one the whole time.
	c := start(t, Options{MaxConcurrent: 2})
	c.Update(configOf(slow, fast))

	<-slowHits
	eventually(t, "five checks of the fast origin", func() bool { return fastSeq.count() >= 5 })
	if n := c.checksOf("slow"); n != 0 {
		t.Errorf("slow origin finished %d checks; the test wanted it hanging throughout", n)
	}
	if _, ok := stateOf(c.View(), "fast"); !ok {
		t.Error("fast origin missing from the view")
	}
}

// recorder is a Publisher that keeps what it was given: the updates, and
// the whole view they add up to after each.
type recorder struct {
	mu      sync.Mutex
	cur     map[pools.OriginKey]pools.OriginState
	updates []pools.HealthUpdate
	views   []pools.NodeHealth
}

func (r *recorder) PublishHealth(_ context.Context, u pools.HealthUpdate) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if u.Full || r.cur == nil {
		r.cur = map[pools.OriginKey]pools.OriginState{}
	}
	for _, s := range u.Origins {
		r.cur[s.Key()] = s
	}
	for _, k := range u.Removed {
		delete(r.cur, k)
	}
	v := pools.NodeHealth{Node: u.Node, Region: u.Region, Published: u.Published}
	for _, s := range r.cur {
		v.Origins = append(v.Origins, s)
	}
	r.updates = append(r.updates, u)
	r.views = append(r.views, v)
	return nil
}

func (r *recorder) published() []pools.HealthUpdate {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]pools.HealthUpdate(nil), r.updates...)
}

func (r *recorder) all() []pools.NodeHealth {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]pools.NodeHealth(nil), r.views...)
}

func TestStateChangeSignalsAndPublishesAtOnce(t *testing.T) {
	t.Parallel()
	// Up once, then down for good; down after two failures.
	seq := &sequence{codes: []int{200, 503}}
	s := newSite(t, "p", seq, 1)
	s.mon.ConsecutiveDown = 2
	rec := &recorder{}
	// A cadence far beyond the test: any publication comes from the change.
	c := start(t, Options{Node: "n1", Region: "ENAM", Publisher: rec, PublishInterval: time.Hour})
	c.Update(configOf(s))

	select {
	case <-c.Changes():
	case <-time.After(10 * time.Second):
		t.Fatal("no change signal")
	}
	st, ok := stateOf(c.View(), "p")
	if !ok || st.Healthy || st.Reason != "HTTP 503 not in expected codes 200" {
		t.Fatalf("view after the change: %+v", st)
	}
	if n := c.checksOf("p"); n < 3 {
		t.Errorf("down after %d checks, want the third (one success, two failures)", n)
	}
	eventually(t, "the down state published", func() bool {
		for _, v := range rec.all() {
			if st, ok := stateOf(v, "p"); ok && !st.Healthy {
				return v.Node == "n1" && v.Region == "ENAM" && st.Reason != ""
			}
		}
		return false
	})
}

func TestPublishesOnCadenceNotPerProbe(t *testing.T) {
	t.Parallel()
	var sites []*site
	var seqs []*sequence
	for _, id := range []string{"a", "b", "c", "d"} {
		st, seq := upSite(t, id, 1)
		seqs = append(seqs, seq)
		sites = append(sites, st)
	}
	rec := &recorder{}
	c := start(t, Options{Node: "n1", Publisher: rec, PublishInterval: 250 * time.Millisecond})
	c.Update(configOf(sites...))

	probes := func() int {
		n := 0
		for _, s := range seqs {
			n += s.count()
		}
		return n
	}
	eventually(t, "three publications", func() bool { return len(rec.all()) >= 3 })
	got, n := len(rec.all()), probes()
	if got*2 > n {
		t.Errorf("%d publications for %d probes: publication follows probes, not a cadence", got, n)
	}
	last := rec.all()[len(rec.all())-1]
	if len(last.Origins) != 4 {
		t.Errorf("published view holds %d origins, want the whole view of 4", len(last.Origins))
	}
}

func TestRTTIsSmoothed(t *testing.T) {
	t.Parallel()
	s, _ := upSite(t, "p", 100)
	c := New(Options{unit: testUnit})
	c.Update(configOf(s)) // not running: no probe interferes
	p := c.pairOf(pools.OriginKey{Pool: "p", Origin: "o1"})
	c.record(p, result{healthy: true, rtt: 100 * time.Millisecond}, 0)
	c.record(p, result{healthy: true, rtt: 200 * time.Millisecond}, 0)
	c.record(p, result{reason: "timeout after 1s"}, 0) // failures do not feed the RTT
	st, _ := stateOf(c.View(), "p")
	if want := 130 * time.Millisecond; st.RTT != want {
		t.Errorf("RTT %v, want %v (0.3 × 200ms + 0.7 × 100ms)", st.RTT, want)
	}
}

func TestDisabledAndUnmonitoredAreNotChecked(t *testing.T) {
	t.Parallel()
	off, seqOff := upSite(t, "off", 1)
	off.pool.Origins[0].Enabled = false
	noMon, seqNoMon := upSite(t, "nomon", 1)
	noMon.pool.Monitor = ""
	on, seqOn := upSite(t, "on", 1)
	c := start(t, Options{})
	c.Update(configOf(off, noMon, on))
	eventually(t, "three checks of the enabled origin", func() bool { return seqOn.count() >= 3 })
	if seqOff.count() != 0 || seqNoMon.count() != 0 {
		t.Errorf("disabled origin checked %d times, unmonitored pool %d times", seqOff.count(), seqNoMon.count())
	}
}

func TestRunTwice(t *testing.T) {
	t.Parallel()
	c := start(t, Options{})
	eventually(t, "Run started", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.runCtx != nil
	})
	if err := c.Run(context.Background()); err == nil {
		t.Error("a second Run of a running Checker succeeded")
	}
}

func TestCadenceFollowsAMonitorAddedWhileRunning(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	// Running with no monitor: the cadence is the 10-unit default. A unit
	// of half a second, not testUnit: three publications at a 1-unit
	// cadence take 2 units, a stale cadence at least 10, and with 100 ms
	// units the 800 ms between them was less than a loaded machine
	// delays three publications.
	const unit = 500 * time.Millisecond
	c := New(Options{Node: "n1", Publisher: rec, unit: unit})
	runChecker(t, c)
	s := newSite(t, "p", &sequence{codes: []int{200}}, 1)
	added := time.Now()
	c.Update(configOf(s))
	withOrigin := func() int {
		n := 0
		for _, v := range rec.all() {
			if _, ok := stateOf(v, "p"); ok {
				n++
			}
		}
		return n
	}
	eventually(t, "three publications holding the new origin", func() bool { return withOrigin() >= 3 })
	// At a 1-unit cadence three take about 3 units; at the stale 10-unit
	// cadence the first alone would take 10.
	if took := time.Since(added); took >= 10*unit {
		t.Errorf("three publications took %v after the 1-unit monitor was added; the cadence stayed at 10 units", took)
	}
}
