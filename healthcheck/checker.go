package healthcheck

import (
	"cmp"
	"context"
	"errors"
	"iter"
	"log/slog"
	"maps"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/glb-dns/glb/pools"
	"github.com/prometheus/client_golang/prometheus"
)

// Publisher stores this node's health updates where the other nodes read
// them; pools.Store satisfies it.
type Publisher interface {
	PublishHealth(ctx context.Context, u pools.HealthUpdate) error
}

// Options configure a Checker.
type Options struct {
	// Node and Region tag every published view (SPEC §5).
	Node   string
	Region string
	// SourceAddr, when valid, is the local address of every probe, so that
	// several nodes on one machine probe from different addresses. It
	// binds probes of its own address family; see dialer.
	SourceAddr netip.Addr
	// Publisher receives the updates (publish.go); nil publishes nothing.
	Publisher Publisher
	// Logger; nil discards.
	Logger *slog.Logger
	// Registerer for the glb_healthcheck_* metrics; nil registers none.
	Registerer prometheus.Registerer
	// Feeds holds the words fed in that feed monitors take (feed.go);
	// nil: feed monitors are never judged, and count as unchecked.
	Feeds Feeds
	// MaxConcurrent bounds the checks in flight, and so the goroutines
	// and the sockets of the checker (one each per check). Default: as
	// many as keep the configured rate when every check runs to its whole
	// timeout (the sum over origins of timeout × (1 + retries) /
	// interval), within [64, 4096]. Past the bound, due checks wait; a
	// slot that passes meanwhile is counted missed (schedule.go).
	MaxConcurrent int
	// PublishInterval is the publication cadence. Default: the shortest
	// monitor interval, kept within [1s, 10s], so that every view another
	// node reads is well inside the 3 × interval freshness window.
	PublishInterval time.Duration

	// unit is what one second of a monitor's timeout and interval lasts;
	// tests shrink it so that timeouts and intervals cost milliseconds.
	unit time.Duration
}

const (
	// rttAlpha weighs a new RTT sample against the smoothed value: enough
	// smoothing that one slow check does not reorder dynamic_latency pools.
	rttAlpha = 0.3
	// minPublishGap spaces publications triggered by state changes, so a
	// burst of changes (a network cut taking down a whole pool) makes a
	// few writes rather than one per origin.
	minPublishGap = 200 * time.Millisecond
	// publishTimeout bounds one write so that a hung store cannot hold
	// the publisher past a few cadences.
	publishTimeout = 5 * time.Second
)

// Checker checks origins, keeps this node's view and publishes it. Create
// it with New, feed it every configuration with Update, and Run it.
type Checker struct {
	opts    Options
	unit    time.Duration
	log     *slog.Logger
	m       *metrics
	clients *clients
	changes chan struct{} // to the local snapshot builder
	kick    chan struct{} // to the publisher
	refeed  chan struct{} // to the feed loop: the words changed

	sched // the scheduler's channels and counters

	mu          sync.Mutex
	runCtx      context.Context // nil while not running
	wg          sync.WaitGroup
	watches     map[pools.OriginKey]*watch
	byPool      map[string][]*watch
	specs       map[string]*spec
	queue       queue  // pairs waiting for their next check, earliest first
	gen         uint64 // of the latest Update
	minInterval time.Duration
	// feeds are the pairs of feed monitors, which feedLoop judges rather
	// than the scheduler; feedEvery the shortest interval among them.
	feeds     []*pair
	feedEvery time.Duration
}

// pair is one (origin, monitor) being checked. Its fields below the line
// are guarded by Checker.mu.
type pair struct {
	t      *target
	prober prober
	// phase places the pair's checks in its interval: the slots of its
	// checks are at (phase + k) × interval from the Checker's epoch.
	phase float64

	w       *watch // the origin it checks, and how its result counts there
	monitor string
	role    role

	removed bool               // dropped by Update: never checked again
	due     time.Time          // of the next check, while queued
	index   int                // in the queue; -1 when not queued
	cancel  context.CancelFunc // of the check in flight
	done    chan struct{}      // closed when the check in flight returns

	th        threshold
	reason    string // of the latest failure, while unhealthy
	note      string // of the latest success, if it said anything (tls: days left)
	rtt       time.Duration
	checkedAt time.Time
	checks    int
	// fedAt is when the word a feed pair took last was received;
	// fedLive that it was live then (feed.go).
	fedAt   time.Time
	fedLive bool
}

// New returns a Checker; nothing runs before Run.
func New(opts Options) *Checker {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	unit := opts.unit
	if unit <= 0 {
		unit = time.Second
	}
	log := opts.Logger.With("component", "healthcheck")
	c := &Checker{
		opts:    opts,
		unit:    unit,
		log:     log,
		m:       newMetrics(opts.Registerer, log),
		clients: newClients(opts.SourceAddr),
		changes: make(chan struct{}, 1),
		kick:    make(chan struct{}, 1),
		refeed:  make(chan struct{}, 1),
		sched:   newSched(),
		watches: map[pools.OriginKey]*watch{},
		byPool:  map[string][]*watch{},
		// No feed pair yet: the feed loop waits for Refeed.
		feedEvery: time.Hour,
	}
	c.setLimit(0)
	return c
}

// Changes signals, coalesced, that some origin's state changed on this
// node, so that the node can rebuild its snapshot at once.
func (c *Checker) Changes() <-chan struct{} { return c.changes }

// update is what one Update gathers on its way through the pools.
type update struct {
	byPool  map[string][]*watch
	fresh   []*pair         // to check at once
	stopped []chan struct{} // checks in flight to wait for
	touched []string        // pools whose list of watches changed
	seen    int             // watches wanted
	ws      []*watch        // one pool's watches, copied only when they changed
	ms      []member        // one pool's group
}

// Update applies a configuration: new pairs and pairs whose monitor or
// origin changed are checked at once, unchanged pairs keep their schedule
// and state, removed pairs stop before Update returns. A changed pair
// keeps its current state (editing a monitor must not put a dead origin
// back into DNS) and its place in the interval, and starts its
// consecutive counts afresh. A pair is an origin under one monitor of its
// pool's group, so adding a monitor to a group leaves the checks of the
// others as they were.
//
// Update runs on every configuration change of the node, so it builds
// nothing for an origin whose checks are unchanged: with a hundred
// thousand origins it compares them in place.
func (c *Checker) Update(cfg *pools.Config) {
	if cfg == nil {
		cfg = &pools.Config{}
	}
	c.mu.Lock()
	c.specs = specs(cfg, c.unit, c.specs)
	c.gen++
	u := &update{byPool: make(map[string][]*watch, len(c.byPool))}
	for i := range cfg.Pools {
		c.updatePool(&cfg.Pools[i], u)
	}
	removed := c.sweep(u)
	c.setPools(u)
	if len(u.fresh) > 0 || removed > 0 {
		c.retuneAfterUpdate()
	}
	if c.runCtx != nil {
		c.plan(u.fresh, time.Now())
	}
	c.mu.Unlock()
	for _, p := range u.fresh {
		if p.isFeed() {
			c.Refeed() // new feed pairs take the words at once
			break
		}
	}

	for _, done := range u.stopped {
		<-done
	}
}

// updatePool brings the watches of one pool's enabled origins in line
// with pl; c.mu is held.
func (c *Checker) updatePool(pl *pools.Pool, u *update) {
	u.ms = groupOf(pl, c.specs, u.ms)
	if len(u.ms) == 0 {
		return
	}
	group := len(pl.Monitors) > 0
	before := c.byPool[pl.ID]
	u.ws = u.ws[:0]
	for j := range pl.Origins {
		o := &pl.Origins[j]
		if !o.Enabled {
			continue
		}
		// The pool's origins are in the order of the last Update unless
		// an edit moved them: looking there first spares a lookup in a
		// map of every origin.
		var w *watch
		if n := len(u.ws); n < len(before) && before[n].key.Origin == o.Name && before[n].gen != 0 {
			w = before[n]
		} else {
			w = c.watches[pools.OriginKey{Pool: pl.ID, Origin: o.Name}]
		}
		switch {
		case w != nil && w.gen == c.gen:
			continue // a second origin of the name; validation refuses them
		case w != nil && w.matches(pl, u.ms, o, group):
		default:
			w = c.rewatch(pl, o, group, w, u)
		}
		w.gen = c.gen
		u.seen++
		u.ws = append(u.ws, w)
	}
	if len(u.ws) == 0 {
		return
	}
	if slices.Equal(u.ws, before) {
		u.byPool[pl.ID] = before
	} else {
		u.byPool[pl.ID] = slices.Clone(u.ws)
		u.touched = append(u.touched, pl.ID)
	}
}

// rewatch builds the watch of origin o under the group u.ms in place of
// old (nil for a new origin): a pair whose check is unchanged carries on
// as it was, a changed one starts afresh from the old one's state, a new
// monitor's starts unchecked, and the pairs of monitors gone stop. c.mu
// is held.
func (c *Checker) rewatch(pl *pools.Pool, o *pools.Origin, group bool, old *watch, u *update) *watch {
	w := &watch{key: pools.OriginKey{Pool: pl.ID, Origin: o.Name}, pairs: make([]*pair, len(u.ms)), group: group}
	for i, m := range u.ms {
		p := old.pair(m.id)
		if p == nil || !p.t.is(pl, m.s, o) {
			if p != nil {
				c.log.Debug("check changed", "pool", pl.ID, "origin", o.Name, "monitor", m.id)
			}
			p = c.newPair(newTarget(pl, m.s, o), p)
			u.fresh = append(u.fresh, p)
		}
		p.w, p.monitor, p.role = w, m.id, m.role
		w.pairs[i] = p
	}
	if old != nil {
		old.gen = 0 // no longer the origin's watch
		for _, p := range old.pairs {
			if p.w != w {
				u.stopped = c.drop(p, u.stopped)
			}
		}
	}
	w.healthy, _ = w.decide()
	c.watches[w.key] = w
	return w
}

// sweep stops the watches Update did not see and returns their number;
// c.mu is held.
func (c *Checker) sweep(u *update) int {
	removed := len(c.watches) - u.seen
	if removed > 0 {
		for k, w := range c.watches {
			if w.gen != c.gen {
				for _, p := range w.pairs {
					u.stopped = c.drop(p, u.stopped)
				}
				w.gen = 0
				delete(c.watches, k)
			}
		}
	}
	return removed
}

// setPools installs the pools' new lists of watches and recounts the
// gauges of those that changed; c.mu is held.
func (c *Checker) setPools(u *update) {
	for pool := range c.byPool {
		if _, ok := u.byPool[pool]; !ok {
			c.m.forgetPool(pool)
		}
	}
	c.byPool = u.byPool
	for _, pool := range u.touched {
		c.m.checked.WithLabelValues(pool).Set(float64(len(u.byPool[pool])))
		c.setHealthyGauge(pool)
	}
}

// retuneAfterUpdate retunes, and wakes the publisher when the cadence
// shortened; c.mu is held.
func (c *Checker) retuneAfterUpdate() {
	prevMin := c.minInterval
	c.retune()
	if c.minInterval > 0 && (prevMin == 0 || c.minInterval < prevMin) {
		// The publisher sleeps on the cadence of the monitors it knew: a
		// node started without monitors waits 10 s, past the freshness
		// window of a new 1 s monitor, so other nodes would ignore its
		// view. Waking it publishes and re-arms at the new cadence.
		signal(c.kick)
	}
}

// newPair starts checking t, in place of old when not nil: the state and
// the phase carry over.
func (c *Checker) newPair(t *target, old *pair) *pair {
	p := &pair{t: t, prober: newProber(t, c.clients), index: -1}
	if old == nil {
		p.phase = c.nextPhase()
		p.th = newThreshold(t.up, t.down)
		return p
	}
	p.phase = old.phase
	p.th = old.th
	p.th.restart(t.up, t.down)
	p.reason, p.note, p.rtt, p.checkedAt = old.reason, old.note, old.rtt, old.checkedAt
	p.fedAt, p.fedLive = old.fedAt, old.fedLive
	return p
}

// drop stops checking p: out of the queue, its check in flight cancelled;
// it appends what to wait for to stopped. c.mu is held.
func (c *Checker) drop(p *pair, stopped []chan struct{}) []chan struct{} {
	p.removed = true
	c.queue.remove(p)
	if p.cancel != nil {
		p.cancel()
		stopped = append(stopped, p.done)
	}
	return stopped
}

// eachPair calls fn with every pair; c.mu is held.
func (c *Checker) eachPair(fn func(*pair)) {
	for _, w := range c.watches {
		for _, p := range w.pairs {
			fn(p)
		}
	}
}

// retune recomputes what follows the set of pairs: the shortest interval
// (the publication cadence), the configured rate and the bound on checks
// in flight, and the HTTP clients still in use. c.mu is held.
func (c *Checker) retune() {
	c.minInterval, c.feedEvery = 0, 0
	c.feeds = c.feeds[:0]
	var rate, busy float64
	used := map[clientKey]bool{}
	c.eachPair(func(p *pair) {
		t := p.t
		if c.minInterval == 0 || t.interval < c.minInterval {
			c.minInterval = t.interval
		}
		if p.isFeed() {
			// Judged by the feed loop, not probed: no rate, no slot.
			c.feeds = append(c.feeds, p)
			if c.feedEvery == 0 || t.interval < c.feedEvery {
				c.feedEvery = t.interval
			}
			return
		}
		rate += 1 / t.interval.Seconds()
		busy += float64(t.budget()) / float64(t.interval)
		if h, ok := p.prober.(*httpProber); ok {
			used[h.key] = true
		}
	})
	if c.feedEvery == 0 {
		c.feedEvery = time.Hour // no feed pair: the loop waits for Refeed
	}
	c.clients.retain(used)
	c.m.rate.Set(rate)
	c.setLimit(busy)
}

// Run checks and publishes until ctx ends, then waits for every check to
// stop. It returns an error only when the Checker is already running.
func (c *Checker) Run(ctx context.Context) error {
	c.mu.Lock()
	if c.runCtx != nil {
		c.mu.Unlock()
		return errors.New("healthcheck: already running")
	}
	c.runCtx = ctx
	now := time.Now()
	var fresh []*pair
	c.eachPair(func(p *pair) {
		// A pair with a result from an earlier Run is not new: it waits for
		// its slot rather than probe everything at once.
		if p.isFeed() {
			return // feedLoop's
		}
		if p.th.known {
			c.queue.push(p, c.slotAfter(p, now))
		} else {
			fresh = append(fresh, p)
		}
	})
	c.plan(fresh, now)
	c.wg.Add(1)
	go c.schedule(ctx)
	if c.opts.Feeds != nil {
		c.wg.Add(1)
		go c.feedLoop(ctx)
	}
	c.mu.Unlock()

	c.publishLoop(ctx)

	c.wg.Wait()
	c.mu.Lock()
	c.runCtx = nil
	c.queue.clear()
	c.mu.Unlock()
	return nil
}

// record applies one check result to p, and its pool's group to p's
// origin.
func (c *Checker) record(p *pair, r result, took time.Duration) { c.apply(p, r, took, false) }

// apply is record; reset sets p's state to r's at once, whatever the
// thresholds (a feed gone silent: feed.go).
func (c *Checker) apply(p *pair, r result, took time.Duration, reset bool) {
	now := time.Now()
	t := p.t
	c.mu.Lock()
	if p.removed {
		c.mu.Unlock() // removed or replaced while the check ran
		return
	}
	var changed bool
	if reset {
		changed = p.th.reset(r.healthy)
	} else {
		changed = p.th.observe(r.healthy)
	}
	p.observed(r, now)
	w, monitor, several := p.w, p.monitor, len(p.w.pairs) > 1
	was := w.healthy
	up, reason := w.decide()
	w.healthy = up
	if changed {
		c.setHealthyGauge(t.pool)
	}
	c.mu.Unlock()

	c.count(p, r, took)
	if !changed {
		return
	}
	if several {
		// In a group one monitor's change may leave the origin as it
		// was: said apart from the origin's own change.
		c.log.Info("monitor sees origin "+upDown(p.th.Healthy()), "pool", t.pool, "origin", t.origin,
			"monitor", monitor, "reason", r.reason)
	}
	if up != was {
		if up {
			c.log.Info("origin up", "pool", t.pool, "pool_name", t.poolName, "origin", t.origin, "address", t.address)
		} else {
			c.log.Info("origin down", "pool", t.pool, "pool_name", t.poolName, "origin", t.origin, "address", t.address,
				"reason", reason)
		}
		c.m.changes.WithLabelValues(t.pool, upDown(up)).Inc()
	}
	signal(c.changes)
	signal(c.kick)
}

// observed keeps what a result says besides the state: its time, the
// smoothed RTT and the reason of a failure. c.mu is held.
func (p *pair) observed(r result, now time.Time) {
	p.checkedAt = now
	p.checks++
	if !r.healthy {
		p.reason = r.reason
		return
	}
	p.note = r.reason
	if p.rtt == 0 {
		p.rtt = r.rtt
	} else {
		p.rtt = time.Duration(rttAlpha*float64(r.rtt) + (1-rttAlpha)*float64(p.rtt))
	}
	if p.th.Healthy() {
		p.reason = ""
	}
}

// count records a check in the metrics and the debug log.
func (c *Checker) count(p *pair, r result, took time.Duration) {
	t := p.t
	outcome := "success"
	if !r.healthy {
		outcome = "failure"
	}
	c.m.duration.WithLabelValues(string(t.typ), outcome).Observe(took.Seconds())
	c.m.results.WithLabelValues(t.pool, string(t.typ), outcome).Inc()
	if c.log.Enabled(context.Background(), slog.LevelDebug) {
		c.log.Debug("checked", "pool", t.pool, "origin", t.origin, "monitor", p.monitor, "healthy", r.healthy,
			"reason", r.reason, "rtt", r.rtt, "took", took)
	}
}

func upDown(up bool) string {
	if up {
		return "up"
	}
	return "down"
}

// setHealthyGauge recounts one pool; c.mu is held.
func (c *Checker) setHealthyGauge(pool string) {
	n := 0
	for _, w := range c.byPool[pool] {
		if w.healthy {
			n++
		}
	}
	c.m.healthy.WithLabelValues(pool).Set(float64(n))
}

// signal sends on a one-slot channel without blocking: one pending signal
// stands for any number of events.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// View is this node's whole health view: every origin checked at least
// once, with its state, the reason while unhealthy, the smoothed RTT and
// the time of the latest check, sorted by pool and origin; for a pool
// with a monitor group, what each monitor sees.
func (c *Checker) View() pools.NodeHealth {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.view(len(c.watches), maps.Values(c.watches))
}

// Node is the node name the checker tags its updates with.
func (c *Checker) Node() string { return c.opts.Node }

// PoolView is View for one pool: what this node knows of its origins now,
// ahead of what it last published.
func (c *Checker) PoolView(pool string) pools.NodeHealth {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.view(len(c.byPool[pool]), slices.Values(c.byPool[pool]))
}

// view is the known states of n origins, sorted by pool and origin. c.mu
// is held.
func (c *Checker) view(n int, ws iter.Seq[*watch]) pools.NodeHealth {
	v := pools.NodeHealth{
		Node:      c.opts.Node,
		Region:    c.opts.Region,
		Published: time.Now(),
		Origins:   make([]pools.OriginState, 0, n),
	}
	for w := range ws {
		if s, ok := w.state(v.Published, 0); ok {
			v.Origins = append(v.Origins, s)
		}
	}
	slices.SortFunc(v.Origins, func(a, b pools.OriginState) int {
		return cmp.Or(cmp.Compare(a.Pool, b.Pool), cmp.Compare(a.Origin, b.Origin))
	})
	return v
}
