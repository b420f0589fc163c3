package healthcheck

import (
	"context"
	"fmt"
	"maps"
	"math"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// estateAt is numPools pools of perPool origins under monitor m, every
// origin at host and telling itself apart by its Host header ("p3-o7"),
// since they share one listener.
func estateAt(m pools.Monitor, host string, numPools, perPool int) *pools.Config {
	cfg := &pools.Config{Monitors: []pools.Monitor{m}}
	for i := range numPools {
		p := pools.DefaultPool()
		p.ID, p.Name, p.Monitor = fmt.Sprintf("p%d", i), fmt.Sprintf("p%d", i), m.ID
		for j := range perPool {
			o := pools.DefaultOrigin()
			o.Name, o.Address = fmt.Sprintf("o%d", j), host
			o.Header = map[string][]string{"Host": {fmt.Sprintf("p%d-o%d", i, j)}}
			p.Origins = append(p.Origins, o)
		}
		cfg.Pools = append(cfg.Pools, p)
	}
	return cfg
}

// hanger is an origin that holds every request until the client gives up,
// counting requests and the most it held at once.
type hanger struct {
	mu         sync.Mutex
	held, peak int
	hits       int
	arrivals   []time.Time
}

func (h *hanger) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.hits++
	h.held++
	h.peak = max(h.peak, h.held)
	h.arrivals = append(h.arrivals, time.Now())
	h.mu.Unlock()
	<-r.Context().Done()
	h.mu.Lock()
	h.held--
	h.mu.Unlock()
}

// closest is the shortest time between two checks' arrivals. Where one
// origin's checks follow one another at once, it says whether a check
// came beside another better than held does: the server learns that a
// timed-out check's connection closed a moment after the next check
// may already have arrived.
func (h *hanger) closest() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	d := time.Duration(math.MaxInt64)
	for i := 1; i < len(h.arrivals); i++ {
		d = min(d, h.arrivals[i].Sub(h.arrivals[i-1]))
	}
	return d
}

func (h *hanger) counts() (hits, held, peak int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hits, h.held, h.peak
}

// stalls measures how long the process went without running a goroutine
// that asks to run every 10 ms, until stop: on a busy machine the whole
// process may wait for a CPU, and every timing within moves by as much.
func stalls(t *testing.T) (stop func() time.Duration) {
	t.Helper()
	done := make(chan struct{})
	worst := make(chan time.Duration)
	go func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		var gap time.Duration
		last := time.Now()
		for {
			select {
			case <-done:
				worst <- gap
				return
			case now := <-tick.C:
				gap = max(gap, now.Sub(last))
				last = now
			}
		}
	}()
	return func() time.Duration {
		close(done)
		return <-worst
	}
}

// TestChecksFillTheIntervalEvenly: 600 origins under one monitor are
// checked once each over the interval, as many in every fifth of it,
// not in bursts; the rate is the configured one from the first interval.
// The margin is 40 %, and on a busy machine the checks of the longest
// stall of the process besides: they move into the next fifth.
func TestChecksFillTheIntervalEvenly(t *testing.T) {
	t.Parallel()
	const n, buckets = 600, 5
	var mu sync.Mutex
	type hit struct {
		at   time.Time
		host string
	}
	var hits []hit
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits = append(hits, hit{time.Now(), r.Host})
		mu.Unlock()
	}))
	host, port := addrOf(t, srv.URL)
	m := monitor(pools.MonitorHTTP)
	// 10 s in test units: 60 checks a second, which a loaded machine
	// still runs as they come due. At 3 s (200 a second) a starved
	// process fell behind for good, checking 228 origins in the first
	// interval; and a stall moves fewer checks at a lower rate.
	m.Port, m.Interval = port, 100
	interval := 100 * testUnit
	// A batch beyond the checks allowed in flight waits for its slots;
	// the room for half of them keeps a slow machine from falling behind.
	c := New(Options{unit: testUnit, MaxConcurrent: n / 2})
	c.Update(estateAt(m, host, n/20, 20))
	start := time.Now()
	stop := stalls(t)
	runChecker(t, c)

	// Waiting is not what is measured (the fifths are, from the hits'
	// times): a minute lets a starved process finish the round, which
	// took over 10 s with the package's tests at nice 19 on a machine
	// loaded six times over.
	eventuallyWithin(t, time.Minute, "every origin checked once", func() bool {
		mu.Lock()
		defer mu.Unlock()
		seen := map[string]bool{}
		for _, h := range hits {
			seen[h.host] = true
		}
		return len(seen) == n
	})
	mu.Lock()
	got := append([]hit(nil), hits...)
	mu.Unlock()
	stall := stop()
	moved := int(stall * n / interval) // checks due during the longest stall
	if moved > 0 {
		t.Logf("the process stalled for up to %v: %d checks may have moved", stall, moved)
	}
	var count [buckets]int
	seen := map[string]bool{}
	for _, h := range got {
		d := h.at.Sub(start)
		if d >= interval {
			break // the second round has begun
		}
		if seen[h.host] {
			t.Errorf("%s checked twice within the first interval", h.host)
		}
		seen[h.host] = true
		count[d*buckets/interval]++
	}
	if len(seen) < n*95/100-moved {
		t.Errorf("%d of %d origins checked within the first interval", len(seen), n)
	}
	for i, k := range count {
		want := n / buckets
		if margin := want*4/10 + moved; k < want-margin || k > want+margin {
			t.Errorf("fifth %d of the interval holds %d checks, want %d ± %d: %v", i, k, want, margin, count)
			break
		}
	}
}

// TestPhasesAreEven: the phases of any number of pairs split the interval
// into tenths holding the same count within 4, where random phases would
// differ by several times √(n/10) (20 for 5,000 pairs).
func TestPhasesAreEven(t *testing.T) {
	t.Parallel()
	c := New(Options{})
	var count [10]int
	for n := 1; n <= 5000; n++ {
		count[int(c.nextPhase()*10)]++
		if n%100 != 0 {
			continue
		}
		lo, hi := n, 0
		for _, k := range count {
			lo, hi = min(lo, k), max(hi, k)
		}
		if hi-lo > 4 {
			t.Fatalf("after %d phases, tenths hold %v", n, count)
		}
	}
}

// TestInFlightIsBounded: 1,000 origins that hang hold at most the limit
// of checks in flight; the goroutines and descriptors of the process
// follow the limit, not the number of origins. Not parallel: it counts
// the process's goroutines and descriptors.
func TestInFlightIsBounded(t *testing.T) {
	const n, limit = 1000, 8
	h := &hanger{}
	srv := serve(t, h)
	host, port := addrOf(t, srv.URL)
	m := monitor(pools.MonitorHTTP)
	m.Port, m.Interval = port, 2 // every origin due within 200 ms

	goroutines, descriptors := runtime.NumGoroutine(), fds(t)
	c := New(Options{unit: testUnit, MaxConcurrent: limit})
	c.Update(estateAt(m, host, n/50, 50))
	runChecker(t, c)
	eventually(t, "the limit of checks hanging", func() bool {
		_, held, _ := h.counts()
		return held == limit
	})
	// All n are due well before the checks in flight time out (5 s):
	// were they not bounded, they would all be in flight by now.
	time.Sleep(time.Duration(3*m.Interval) * testUnit)
	hits, _, peak := h.counts()
	if peak != limit || hits != limit {
		t.Errorf("the origin saw %d checks, at most %d at once; want %d, the limit", hits, peak, limit)
	}
	// A check is a goroutine of the checker, two of the HTTP client's
	// connection and one of the server's; a socket at each end.
	if g := runtime.NumGoroutine() - goroutines; g > 4*limit+16 {
		t.Errorf("%d more goroutines for %d checks in flight of %d origins", g, limit, n)
	}
	if d := fds(t) - descriptors; d > 2*limit+8 {
		t.Errorf("%d more descriptors for %d checks in flight of %d origins", d, limit, n)
	}
}

func fds(t *testing.T) int {
	t.Helper()
	e, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("count descriptors: %v", err)
	}
	return len(e)
}

// TestOverrunDoesNotPileUp: a check that lasts four intervals holds the
// origin's next check until it ends, never a second one beside it, and
// the slots it ran over beyond the one run late are counted missed.
func TestOverrunDoesNotPileUp(t *testing.T) {
	t.Parallel()
	h := &hanger{}
	s := newSite(t, "slow", h, 1)
	s.mon.Timeout = 4
	c := New(Options{unit: testUnit, Registerer: nil})
	c.Update(configOf(s))
	start := time.Now()
	runChecker(t, c)
	eventually(t, "three checks timed out", func() bool { return c.checksOf("slow") >= 3 })
	elapsed := time.Since(start)
	hits, _, _ := h.counts()
	// One check at a time: each arrives a timeout after the one before.
	if d := h.closest(); d < 3*testUnit {
		t.Errorf("two checks of the origin arrived %v apart, want one at a time, each after the other's 400 ms timeout", d)
	}
	// One check every timeout, not every interval.
	if most := int(elapsed/(4*testUnit)) + 1; hits > most {
		t.Errorf("%d checks in %v of 400 ms checks, want at most %d", hits, elapsed, most)
	}
	missed := testutil.ToFloat64(c.m.missed.WithLabelValues("slow"))
	if done := c.checksOf("slow"); missed < float64(2*done) {
		t.Errorf("%v slots counted missed after %d checks of 4 intervals each, want at least %d", missed, done, 2*done)
	}
}

// TestTimeoutOfOneIntervalKeepsThePace: checks whose timeout is their
// interval, every one of them timing out, follow one another about an
// interval apart: each ends a hair after its next slot, which then runs
// late instead of being skipped. Skipping it made them two intervals
// apart, and an unreachable origin took twice its thresholds to leave.
func TestTimeoutOfOneIntervalKeepsThePace(t *testing.T) {
	t.Parallel()
	h := &hanger{}
	s := newSite(t, "edge", h, 2)
	s.mon.Timeout = 2
	c := New(Options{unit: testUnit, Registerer: nil})
	c.Update(configOf(s))
	runChecker(t, c)
	eventually(t, "the first check timed out", func() bool { return c.checksOf("edge") >= 1 })
	first, start := c.checksOf("edge"), time.Now()
	eventually(t, "eight more checks timed out", func() bool { return c.checksOf("edge") >= first+8 })
	// Eight checks of 200 ms each back to back take 1.6 s; two intervals
	// apart they took 3.2 s. The bound sits between, with room for a
	// loaded machine's lateness.
	if took := time.Since(start); took > 12*2*testUnit {
		t.Errorf("eight checks that each time out after one interval took %v, want about 8 intervals (%v), well under 16", took, 8*2*testUnit)
	}
	if d := h.closest(); d < testUnit {
		t.Errorf("two checks of the origin arrived %v apart, want one at a time, each after the other's 200 ms timeout", d)
	}
}

// TestNextSlot: when a check runs again and how many slots it ran over.
func TestNextSlot(t *testing.T) {
	t.Parallel()
	c := New(Options{})
	iv := 10 * time.Second
	p := &pair{t: &target{spec: &spec{params: params{interval: iv}}}, phase: 0.25}
	slot := c.slotTime(p, 7) // epoch + 72.5 s
	if want := c.epoch.Add(72500 * time.Millisecond); !slot.Equal(want) {
		t.Fatalf("slot 7 at %v, want %v", slot.Sub(c.epoch), want.Sub(c.epoch))
	}
	for _, tc := range []struct {
		name       string
		due, end   time.Time
		next       time.Time
		wantMissed int64
	}{
		{"on its slot, quick", slot, slot.Add(time.Millisecond), slot.Add(iv), 0},
		{"started late, quick", slot.Add(4 * time.Second), slot.Add(4100 * time.Millisecond), slot.Add(iv), 0},
		// A check that runs into its next slot runs again as it ends, in
		// that slot's place; only the slots beyond are missed.
		{"ended on its next slot", slot, slot.Add(iv), slot.Add(iv), 0},
		{"ran into the next slot by a hair", slot, slot.Add(iv + time.Millisecond), slot.Add(iv + time.Millisecond), 0},
		{"ran into the next slot", slot, slot.Add(12 * time.Second), slot.Add(12 * time.Second), 0},
		{"ran over two slots", slot, slot.Add(23 * time.Second), slot.Add(23 * time.Second), 1},
		// A check run at once just before its slot waits for the one after.
		{"at once, just before a slot", slot.Add(-time.Second), slot.Add(-900 * time.Millisecond), slot.Add(iv), 0},
		{"at once, just after a slot", slot.Add(time.Second), slot.Add(1100 * time.Millisecond), slot.Add(iv), 0},
		{"at once, mid-interval", slot.Add(-5 * time.Second), slot.Add(-4 * time.Second), slot.Add(iv), 0},
	} {
		next, missed := c.next(p, tc.due, tc.end)
		if !next.Equal(tc.next) || missed != tc.wantMissed {
			t.Errorf("%s: next %v, %d missed; want %v, %d", tc.name, next.Sub(slot), missed, tc.next.Sub(slot), tc.wantMissed)
		}
	}
	if k := c.slot(p, c.epoch); k != -1 {
		t.Errorf("slot at the epoch %d, want -1 (the first slot is a quarter interval later)", k)
	}
}

// TestEditKeepsPhaseAndState: an edit that does not touch the check
// (a weight, a monitor's description) leaves the pair as it was, queued
// for the same slot; one that does checks at once and then carries on at
// the same phase with the same state.
func TestEditKeepsPhaseAndState(t *testing.T) {
	t.Parallel()
	seq := &sequence{codes: []int{http.StatusServiceUnavailable}}
	s := newSite(t, "e", seq, 100) // a 10 s interval: no slot comes within the test
	c := New(Options{unit: testUnit})
	c.Update(configOf(s))
	runChecker(t, c)
	key := pools.OriginKey{Pool: "e", Origin: "o1"}
	queued := func() (*pair, time.Time) {
		c.mu.Lock()
		defer c.mu.Unlock()
		p := c.pairOf(key)
		if p.index < 0 {
			return p, time.Time{}
		}
		return p, p.due
	}
	eventually(t, "the first check done and the next queued", func() bool {
		_, due := queued()
		return c.checksOf("e") == 1 && !due.IsZero()
	})
	p, due := queued()

	s.pool.Origins[0].Weight = 0.5
	s.mon.Description = "edited"
	c.Update(configOf(s))
	if q, d := queued(); q != p || !d.Equal(due) {
		t.Errorf("an edit outside the check replaced the pair (%v) or moved its slot by %v", q != p, d.Sub(due))
	}

	s.mon.Path = "/edited"
	c.Update(configOf(s))
	eventually(t, "the edited check done and the next queued", func() bool {
		q, d := queued()
		return q != p && !d.IsZero() && c.checksOf("e") == 1
	})
	q, d := queued()
	if q.phase != p.phase {
		t.Errorf("phase %v after the edit, want %v", q.phase, p.phase)
	}
	if iv := q.t.interval; !d.Equal(due) && !d.Equal(due.Add(iv)) {
		t.Errorf("next check %v after the old one's, want on the same slots", d.Sub(due))
	}
	st, _ := stateOf(c.View(), "e")
	if st.Healthy || !q.th.known {
		t.Errorf("state after the edit: %+v, want the down state kept", st)
	}
	if r := seq.lastRequest(); r == nil || r.URL.Path != "/edited" {
		t.Errorf("the edited check did not run: %v", r)
	}
}

// TestLimitFollowsTheConfiguration: by default the checks allowed in
// flight keep the configured rate when every check runs to its timeout,
// within bounds.
func TestLimitFollowsTheConfiguration(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pools, interval, limit int
		rate                   float64
	}{
		{1, 60, minInFlight, 64.0 / 60},
		{10, 60, 160, 640.0 / 60},       // 640 origins × 15 s / 60 s
		{10, 2, maxInFlight, 640.0 / 2}, // 640 × 15 s / 2 s = 4,800
	} {
		m := monitor(pools.MonitorHTTP)
		m.Interval, m.Timeout, m.Retries = tc.interval, 5, 2
		c := New(Options{})
		c.Update(estateAt(m, "127.0.0.1", tc.pools, 64))
		if got := c.limit.Load(); got != int64(tc.limit) {
			t.Errorf("%d origins: limit %d, want %d", tc.pools*64, got, tc.limit)
		}
		if got := testutil.ToFloat64(c.m.rate); got < tc.rate*0.999 || got > tc.rate*1.001 {
			t.Errorf("%d origins: scheduled rate %v, want %v", tc.pools*64, got, tc.rate)
		}
	}
	c := New(Options{MaxConcurrent: 3})
	c.Update(estateAt(monitor(pools.MonitorHTTP), "127.0.0.1", 10, 64))
	if got := c.limit.Load(); got != 3 {
		t.Errorf("limit %d, want the option's 3", got)
	}
}

// TestUpdateKeepsUnchangedPairs: origins removed from the middle of a
// pool, moved or added leave every other origin's pair (its schedule and
// state) as it was.
func TestUpdateKeepsUnchangedPairs(t *testing.T) {
	t.Parallel()
	m := monitor(pools.MonitorHTTP)
	cfg := estateAt(m, "127.0.0.1", 2, 5)
	c := New(Options{unit: testUnit})
	c.Update(cfg)
	before := maps.Clone(c.watches)
	c.Update(estateAt(m, "127.0.0.1", 2, 5))
	if !maps.Equal(c.watches, before) {
		t.Fatal("the same configuration again replaced pairs")
	}

	next := estateAt(m, "127.0.0.1", 2, 5)
	o := next.Pools[0].Origins
	// o4 moves first, o2 goes, o9 comes.
	next.Pools[0].Origins = []pools.Origin{o[4], o[0], o[1], o[3], {Name: "o9", Address: "127.0.0.1", Enabled: true, Weight: 1}}
	c.Update(next)
	for k, w := range before {
		switch now := c.watches[k]; {
		case k.Pool == "p0" && k.Origin == "o2":
			if now != nil || !w.pairs[0].removed {
				t.Errorf("%v still checked after its removal", k)
			}
		case now != w:
			t.Errorf("%v replaced though it did not change", k)
		}
	}
	if p := c.pairOf(pools.OriginKey{Pool: "p0", Origin: "o9"}); p == nil {
		t.Error("the new origin o9 is not checked")
	}
	var names []string
	for _, w := range c.byPool["p0"] {
		names = append(names, w.key.Origin)
	}
	if got := strings.Join(names, " "); got != "o4 o0 o1 o3 o9" {
		t.Errorf("pool p0 checks %s, want o4 o0 o1 o3 o9", got)
	}
	if got := testutil.ToFloat64(c.m.checked.WithLabelValues("p0")); got != 5 {
		t.Errorf("origins_checked{pool=p0} = %v, want 5", got)
	}
}

// TestRunAgainWaitsForSlots: a Checker run again (after its context
// ended) checks origins that already have a result at their slots rather
// than all at once.
func TestRunAgainWaitsForSlots(t *testing.T) {
	t.Parallel()
	seq := &sequence{codes: []int{200}}
	s := newSite(t, "again", seq, 100) // a 10 s interval
	c := New(Options{unit: testUnit})
	c.Update(configOf(s))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	eventually(t, "the first check", func() bool { return c.checksOf("again") == 1 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	runChecker(t, c)
	eventually(t, "the origin queued again", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.queue.Len() == 1
	})
	c.mu.Lock()
	wait := time.Until(c.queue[0].due)
	c.mu.Unlock()
	if wait <= 0 {
		t.Errorf("checked again at once on the second Run; want at its slot")
	}
	if n := seq.count(); n != 1 {
		t.Errorf("%d checks, want the first only", n)
	}
}
