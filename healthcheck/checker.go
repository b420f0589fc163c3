package healthcheck

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"reflect"
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
	// MaxConcurrent bounds probes in flight. Default 64.
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
	sem     chan struct{}
	changes chan struct{} // to the local snapshot builder
	kick    chan struct{} // to the publisher

	mu          sync.Mutex
	runCtx      context.Context // nil while not running
	wg          sync.WaitGroup
	pairs       map[pools.OriginKey]*pair
	byPool      map[string][]*pair
	minInterval time.Duration
}

// pair is one (origin, monitor) being checked. Its fields below the line
// are guarded by Checker.mu.
type pair struct {
	t      *target
	prober prober
	cancel context.CancelFunc
	done   chan struct{} // closed when its goroutine has returned

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
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = 64
	}
	unit := opts.unit
	if unit <= 0 {
		unit = time.Second
	}
	log := opts.Logger.With("component", "healthcheck")
	return &Checker{
		opts:    opts,
		unit:    unit,
		log:     log,
		m:       newMetrics(opts.Registerer, log),
		sem:     make(chan struct{}, opts.MaxConcurrent),
		changes: make(chan struct{}, 1),
		kick:    make(chan struct{}, 1),
		pairs:   map[pools.OriginKey]*pair{},
		byPool:  map[string][]*pair{},
	}
}

// Changes signals, coalesced, that some origin's state changed on this
// node, so that the node can rebuild its snapshot at once.
func (c *Checker) Changes() <-chan struct{} { return c.changes }

// Update applies a configuration: new pairs and pairs whose monitor or
// origin changed are checked at once, unchanged pairs keep their schedule
// and state, removed pairs stop before Update returns. A changed pair
// keeps its current state (editing a monitor must not put a dead origin
// back into DNS) and starts its consecutive counts afresh.
func (c *Checker) Update(cfg *pools.Config) {
	want := targets(cfg, c.unit)

	c.mu.Lock()
	var stopped []*pair
	for k, old := range c.pairs {
		t, keep := want[k]
		if keep && reflect.DeepEqual(old.t, t) {
			continue
		}
		stopped = append(stopped, old)
		if old.cancel != nil {
			old.cancel()
		}
		delete(c.pairs, k)
		if keep {
			p := c.newPair(t)
			p.th = old.th
			p.th.restart(t.up, t.down)
			p.reason, p.rtt, p.checkedAt = old.reason, old.rtt, old.checkedAt
			c.pairs[k] = p
			c.log.Debug("check changed", "pool", t.pool, "origin", t.origin)
		}
	}
	for k, t := range want {
		if _, ok := c.pairs[k]; !ok {
			c.pairs[k] = c.newPair(t)
		}
	}
	var fresh []*pair
	for _, p := range c.pairs {
		if p.done == nil {
			fresh = append(fresh, p)
		}
	}
	c.startSpread(fresh)
	before, prevMin := c.byPool, c.minInterval
	c.byPool = map[string][]*pair{}
	c.minInterval = 0
	for _, p := range c.pairs {
		c.byPool[p.t.pool] = append(c.byPool[p.t.pool], p)
		if c.minInterval == 0 || p.t.interval < c.minInterval {
			c.minInterval = p.t.interval
		}
	}
	if c.minInterval > 0 && (prevMin == 0 || c.minInterval < prevMin) {
		// The publisher sleeps on the cadence of the monitors it knew: a
		// node started without monitors waits 10 s, past the freshness
		// window of a new 1 s monitor, so other nodes would ignore its
		// view. Waking it publishes and re-arms at the new cadence.
		signal(c.kick)
	}
	for pool := range before {
		if _, ok := c.byPool[pool]; !ok {
			c.m.forgetPool(pool)
		}
	}
	for pool, ps := range c.byPool {
		c.m.checked.WithLabelValues(pool).Set(float64(len(ps)))
		c.setHealthyGauge(pool)
	}
	c.mu.Unlock()

	for _, p := range stopped {
		if p.done != nil {
			<-p.done
		}
	}
}

func (c *Checker) newPair(t *target) *pair {
	return &pair{t: t, prober: newProber(t, c.opts.SourceAddr), th: newThreshold(t.up, t.down)}
}

// startSpread starts new pairs. A few (an edited pool) are checked at
// once; a batch larger than the probes allowed in flight (a node starting
// on a large estate, a monitor shared by thousands of origins) has its
// first checks spread evenly over the interval instead, so that the
// checks of 100,000 origins do not all fall in the same second of every
// interval ever after. c.mu is held.
func (c *Checker) startSpread(fresh []*pair) {
	if len(fresh) <= c.opts.MaxConcurrent {
		for _, p := range fresh {
			c.start(p, 0)
		}
		return
	}
	for i, p := range fresh {
		c.start(p, p.t.interval*time.Duration(i)/time.Duration(len(fresh)))
	}
}

// start runs p's goroutine, first checking after delay, when the Checker
// is running; c.mu is held.
func (c *Checker) start(p *pair, delay time.Duration) {
	if c.runCtx == nil {
		return
	}
	ctx, cancel := context.WithCancel(c.runCtx)
	p.cancel, p.done = cancel, make(chan struct{})
	c.wg.Add(1)
	go c.loop(ctx, p, delay)
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
	var fresh []*pair
	for _, p := range c.pairs {
		// A pair with a result from an earlier Run is not new: spread its
		// next check over its interval rather than probe everything at once.
		if p.th.known {
			c.start(p, rand.N(p.t.interval))
		} else {
			fresh = append(fresh, p)
		}
	}
	c.startSpread(fresh)
	c.mu.Unlock()

	c.publishLoop(ctx)

	c.mu.Lock()
	c.runCtx = nil
	for _, p := range c.pairs {
		p.cancel, p.done = nil, nil
	}
	c.mu.Unlock()
	c.wg.Wait()
	return nil
}

// loop checks one pair on its interval. Each pair has its own goroutine
// and timer, so a slow origin only ever delays itself; the semaphore
// bounds how many probes are in flight at once.
func (c *Checker) loop(ctx context.Context, p *pair, delay time.Duration) {
	defer c.wg.Done()
	defer close(p.done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	next := time.Now().Add(delay)
	for {
		if d := time.Until(next); d > 0 {
			timer.Reset(d)
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
		}
		select {
		case c.sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		start := time.Now()
		r := check(ctx, p.prober, p.t.retries)
		<-c.sem
		if ctx.Err() != nil {
			return
		}
		c.record(p, r, time.Since(start))
		// Start to start, less up to a tenth of the interval: checks that
		// began together drift apart, and the period never exceeds the
		// interval that freshness is judged by.
		next = start.Add(p.t.interval - rand.N(p.t.interval/10+1))
	}
}

// record applies one check result to p.
func (c *Checker) record(p *pair, r result, took time.Duration) {
	now := time.Now()
	t := p.t
	c.mu.Lock()
	if c.pairs[t.key()] != p {
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
	c.log.Debug("checked", "pool", t.pool, "origin", t.origin, "healthy", r.healthy,
		"reason", r.reason, "rtt", r.rtt, "took", took)
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
	v := pools.NodeHealth{
		Node:      c.opts.Node,
		Region:    c.opts.Region,
		Published: time.Now(),
		Origins:   make([]pools.OriginState, 0, len(c.pairs)),
	}
	for _, p := range c.pairs {
		if !p.th.known {
			continue
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
		v.Origins = append(v.Origins, s)
	}
	slices.SortFunc(v.Origins, func(a, b pools.OriginState) int {
		return cmp.Or(cmp.Compare(a.Pool, b.Pool), cmp.Compare(a.Origin, b.Origin))
	})
	return v
}
