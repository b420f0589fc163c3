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

	sched // the scheduler's channels and counters

	mu          sync.Mutex
	runCtx      context.Context // nil while not running
	wg          sync.WaitGroup
	pairs       map[pools.OriginKey]*pair
	byPool      map[string][]*pair
	specs       map[string]*spec
	queue       queue  // pairs waiting for their next check, earliest first
	gen         uint64 // of the latest Update
	minInterval time.Duration
}

// pair is one (origin, monitor) being checked. Its fields below the line
// are guarded by Checker.mu.
type pair struct {
	t      *target
	prober prober
	// phase places the pair's checks in its interval: the slots of its
	// checks are at (phase + k) × interval from the Checker's epoch.
	phase float64

	gen     uint64             // of the last Update that wanted it
	removed bool               // dropped by Update: never checked again
	due     time.Time          // of the next check, while queued
	index   int                // in the queue; -1 when not queued
	cancel  context.CancelFunc // of the check in flight
	done    chan struct{}      // closed when the check in flight returns

	th        threshold
	reason    string // of the latest failure, while unhealthy
	rtt       time.Duration
	checkedAt time.Time
	checks    int
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
		sched:   newSched(),
		pairs:   map[pools.OriginKey]*pair{},
		byPool:  map[string][]*pair{},
	}
	c.setLimit(0)
	return c
}

// Changes signals, coalesced, that some origin's state changed on this
// node, so that the node can rebuild its snapshot at once.
func (c *Checker) Changes() <-chan struct{} { return c.changes }

// Update applies a configuration: new pairs and pairs whose monitor or
// origin changed are checked at once, unchanged pairs keep their schedule
// and state, removed pairs stop before Update returns. A changed pair
// keeps its current state (editing a monitor must not put a dead origin
// back into DNS) and its place in the interval, and starts its
// consecutive counts afresh.
//
// Update runs on every configuration change of the node, so it builds
// nothing for an origin whose check is unchanged: with a hundred
// thousand origins it compares them in place.
func (c *Checker) Update(cfg *pools.Config) {
	if cfg == nil {
		cfg = &pools.Config{}
	}
	c.mu.Lock()
	c.specs = specs(cfg, c.unit, c.specs)
	c.gen++
	var (
		fresh   []*pair
		stopped []chan struct{}
		touched []string
		seen    int
		ps      []*pair // one pool's pairs, copied only when they changed
	)
	byPool := make(map[string][]*pair, len(c.byPool))
	for i := range cfg.Pools {
		pl := &cfg.Pools[i]
		s := monitored(pl, c.specs)
		if s == nil {
			continue
		}
		before := c.byPool[pl.ID]
		ps = ps[:0]
		for j := range pl.Origins {
			o := &pl.Origins[j]
			if !o.Enabled {
				continue
			}
			k := pools.OriginKey{Pool: pl.ID, Origin: o.Name}
			// The pool's origins are in the order of the last Update
			// unless an edit moved them: looking there first spares a
			// lookup in a map of every origin.
			var p *pair
			if n := len(ps); n < len(before) && before[n].t.origin == o.Name && !before[n].removed {
				p = before[n]
			} else {
				p = c.pairs[k]
			}
			switch {
			case p != nil && p.gen == c.gen:
				continue // a second origin of the name; validation refuses them
			case p != nil && p.t.is(pl, s, o):
			default:
				np := c.newPair(newTarget(pl, s, o), p)
				if p != nil {
					stopped = c.drop(p, stopped)
					c.log.Debug("check changed", "pool", pl.ID, "origin", o.Name)
				}
				c.pairs[k] = np
				fresh = append(fresh, np)
				p = np
			}
			p.gen = c.gen
			seen++
			ps = append(ps, p)
		}
		if len(ps) == 0 {
			continue
		}
		if slices.Equal(ps, before) {
			byPool[pl.ID] = before
		} else {
			byPool[pl.ID] = slices.Clone(ps)
			touched = append(touched, pl.ID)
		}
	}
	removed := len(c.pairs) - seen
	if removed > 0 {
		for k, p := range c.pairs {
			if p.gen != c.gen {
				stopped = c.drop(p, stopped)
				delete(c.pairs, k)
			}
		}
	}
	for pool := range c.byPool {
		if _, ok := byPool[pool]; !ok {
			c.m.forgetPool(pool)
		}
	}
	c.byPool = byPool
	for _, pool := range touched {
		c.m.checked.WithLabelValues(pool).Set(float64(len(byPool[pool])))
		c.setHealthyGauge(pool)
	}
	if len(fresh) > 0 || removed > 0 {
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
	if c.runCtx != nil {
		c.plan(fresh, time.Now())
	}
	c.mu.Unlock()

	for _, done := range stopped {
		<-done
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
	p.reason, p.rtt, p.checkedAt = old.reason, old.rtt, old.checkedAt
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

// retune recomputes what follows the set of pairs: the shortest interval
// (the publication cadence), the configured rate and the bound on checks
// in flight, and the HTTP clients still in use. c.mu is held.
func (c *Checker) retune() {
	c.minInterval = 0
	var rate, busy float64
	used := map[clientKey]bool{}
	for _, p := range c.pairs {
		t := p.t
		if c.minInterval == 0 || t.interval < c.minInterval {
			c.minInterval = t.interval
		}
		rate += 1 / t.interval.Seconds()
		busy += float64(t.budget()) / float64(t.interval)
		if h, ok := p.prober.(*httpProber); ok {
			used[h.key] = true
		}
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
	for _, p := range c.pairs {
		// A pair with a result from an earlier Run is not new: it waits for
		// its slot rather than probe everything at once.
		if p.th.known {
			c.queue.push(p, c.slotAfter(p, now))
		} else {
			fresh = append(fresh, p)
		}
	}
	c.plan(fresh, now)
	c.wg.Add(1)
	go c.schedule(ctx)
	c.mu.Unlock()

	c.publishLoop(ctx)

	c.wg.Wait()
	c.mu.Lock()
	c.runCtx = nil
	c.queue.clear()
	c.mu.Unlock()
	return nil
}

// record applies one check result to p.
func (c *Checker) record(p *pair, r result, took time.Duration) {
	now := time.Now()
	t := p.t
	c.mu.Lock()
	if p.removed {
		c.mu.Unlock() // removed or replaced while the check ran
		return
	}
	changed := p.th.observe(r.healthy)
	healthy := p.th.Healthy()
	p.checkedAt = now
	p.checks++
	if r.healthy {
		if p.rtt == 0 {
			p.rtt = r.rtt
		} else {
			p.rtt = time.Duration(rttAlpha*float64(r.rtt) + (1-rttAlpha)*float64(p.rtt))
		}
		if healthy {
			p.reason = ""
		}
	} else {
		p.reason = r.reason
	}
	if changed {
		c.setHealthyGauge(t.pool)
	}
	c.mu.Unlock()

	outcome := "success"
	if !r.healthy {
		outcome = "failure"
	}
	c.m.duration.WithLabelValues(string(t.typ), outcome).Observe(took.Seconds())
	c.m.results.WithLabelValues(t.pool, string(t.typ), outcome).Inc()
	if c.log.Enabled(context.Background(), slog.LevelDebug) {
		c.log.Debug("checked", "pool", t.pool, "origin", t.origin, "healthy", r.healthy,
			"reason", r.reason, "rtt", r.rtt, "took", took)
	}
	if !changed {
		return
	}
	to := "up"
	if healthy {
		c.log.Info("origin up", "pool", t.pool, "pool_name", t.poolName, "origin", t.origin, "address", t.address)
	} else {
		to = "down"
		c.log.Info("origin down", "pool", t.pool, "pool_name", t.poolName, "origin", t.origin, "address", t.address,
			"reason", r.reason)
	}
	c.m.changes.WithLabelValues(t.pool, to).Inc()
	signal(c.changes)
	signal(c.kick)
}

// setHealthyGauge recounts one pool; c.mu is held.
func (c *Checker) setHealthyGauge(pool string) {
	n := 0
	for _, p := range c.byPool[pool] {
		if p.th.Healthy() {
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
// the time of the latest check, sorted by pool and origin.
func (c *Checker) View() pools.NodeHealth {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.view(len(c.pairs), maps.Values(c.pairs))
}

// PoolView is View for one pool: what this node knows of its origins now,
// ahead of what it last published.
func (c *Checker) PoolView(pool string) pools.NodeHealth {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.view(len(c.byPool[pool]), slices.Values(c.byPool[pool]))
}

// view is the known states of n pairs, sorted by pool and origin. c.mu
// is held.
func (c *Checker) view(n int, pairs iter.Seq[*pair]) pools.NodeHealth {
	v := pools.NodeHealth{
		Node:      c.opts.Node,
		Region:    c.opts.Region,
		Published: time.Now(),
		Origins:   make([]pools.OriginState, 0, n),
	}
	for p := range pairs {
		if s, ok := p.state(); ok {
			v.Origins = append(v.Origins, s)
		}
	}
	slices.SortFunc(v.Origins, func(a, b pools.OriginState) int {
		return cmp.Or(cmp.Compare(a.Pool, b.Pool), cmp.Compare(a.Origin, b.Origin))
	})
	return v
}

// state is the pair's state as a view holds it; false until first checked.
func (p *pair) state() (pools.OriginState, bool) {
	if !p.th.known {
		return pools.OriginState{}, false
	}
	s := pools.OriginState{
		Pool:      p.t.pool,
		Origin:    p.t.origin,
		Healthy:   p.th.Healthy(),
		RTT:       p.rtt,
		CheckedAt: p.checkedAt,
	}
	if !s.Healthy {
		s.Reason = p.reason
	}
	return s, true
}
