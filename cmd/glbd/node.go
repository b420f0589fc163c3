package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/glb-dns/glb/feeds"
	"github.com/glb-dns/glb/geodata"
	"github.com/glb-dns/glb/healthcheck"
	"github.com/glb-dns/glb/internal/promset"
	"github.com/glb-dns/glb/notify"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
)

// current is what the node serves: the steering snapshot and the operator
// networks of the same configuration.
type current struct {
	snap *steering.Snapshot
	nets *geodata.Networks
}

// node keeps the served snapshot in step with the store and the health
// checks: watch → load → compile → publish → persist. Only run's goroutine
// touches the fields below current.
type node struct {
	log     *slog.Logger
	store   pools.Store
	dataDir string
	checker *healthcheck.Checker
	// publish hands a new snapshot to the DNS server; false when it was
	// refused (the DNS server keeps its last good one).
	publish func(*current) bool
	// pollEvery is the revision poll that backs up lost notifications.
	pollEvery time.Duration
	// region is the node's own region (--region), for dynamic_latency.
	region string
	// lastGood persists the served configuration off the critical path.
	lastGood *lastGoodWriter

	cur atomic.Pointer[current]
	// confirmed is when the served configuration was last known to be
	// the store's (unix nanoseconds; the last good file's time while it
	// is served); storeOK that the last read of the store's revision
	// answered. Both for the node's reports (fleet.go).
	confirmed atomic.Int64
	storeOK   atomic.Bool

	cfg    *pools.Config
	nets   *geodata.Networks
	health *pools.Health
	// tally agrees on health from every node's updates: the others' read
	// from the store by their cursors, ours straight from the checker.
	tally   *healthcheck.Tally
	own     *healthcheck.Follower
	self    string // our node name, as the checker tags our updates
	cursors map[string]pools.HealthCursor
	// fromFile: serving the last good file, the store not yet reached.
	fromFile bool
	// feeds are the words fed in, shared with the checker's
	// Options.Feeds (feeds.go); loads what withLoad last took from them.
	feeds *feeds.Table
	loads loadCache

	// audit records agreed health transitions (nil: not recorded).
	audit *healthAudit
	// records writes the starts and expiries of the shifts each
	// snapshot from the store holds, and the rollouts' steps and
	// completions, until stored (nil: not recorded).
	records *clockRecords
	// notify observes each served view for notification events (nil:
	// none).
	notify *notify.Observer
	// rollouts writes the events of the rollouts each snapshot holds
	// (nil: none, as in tests that build a node alone); ctx bounds its
	// writes.
	rollouts *rolloutWatch
	ctx      context.Context

	// measured brings the RUM table (rum.go); table is the last one, which
	// full compiles start from.
	measured chan *steering.Measurements
	table    *steering.Measurements

	builds    *prometheus.CounterVec
	buildTime prometheus.Histogram
	revision  prometheus.Gauge
}

func newNode(log *slog.Logger, store pools.Store, dataDir string, checker *healthcheck.Checker, reg prometheus.Registerer, publish func(*current) bool) *node {
	// No subsystem: glb_snapshot_….
	set := promset.New("")
	n := &node{
		log: log.With("component", "node"), store: store, dataDir: dataDir, checker: checker,
		publish: publish, pollEvery: 2 * time.Second, lastGood: newLastGoodWriter(dataDir, log),
		tally: healthcheck.NewTally(), own: checker.Follow(), self: checker.Node(), cursors: map[string]pools.HealthCursor{}, feeds: &feeds.Table{},
		measured:  make(chan *steering.Measurements),
		builds:    set.CounterVec("snapshot_builds_total", "Snapshot compilations by result (ok, error).", "result"),
		buildTime: set.Histogram("snapshot_build_seconds", "Time to compile and publish a snapshot.", prometheus.ExponentialBuckets(0.0001, 4, 10)),
		revision:  set.Gauge("snapshot_revision", "Configuration revision of the served snapshot."),
	}
	reg.MustRegister(set.Collectors()...)
	return n
}

// ready: a snapshot is being served.
func (n *node) ready() bool { return n.cur.Load() != nil }

func (n *node) agreedHealth() *pools.Health {
	if c := n.cur.Load(); c != nil {
		return c.snap.Health()
	}
	return nil
}

// Store timeouts: a store that does not answer a small read within
// storeProbe is down; reading a whole configuration (a million origins
// are tens of megabytes of JSON) or everyone's health at start may take
// up to fullRead.
const (
	storeProbe = 5 * time.Second
	fullRead   = time.Minute
)

// start loads the first configuration: from the store, else from the last
// good snapshot in the data directory, so that DNS answers even when the
// store is down at start.
func (n *node) start(ctx context.Context) {
	n.ctx = ctx
	pctx, cancel := context.WithTimeout(ctx, storeProbe)
	_, err := n.store.Revision(pctx)
	cancel()
	n.storeOK.Store(err == nil)
	if err == nil {
		n.readHealth(ctx)
		n.takeFeeds(n.fetchFeeds(ctx))
		if err = n.reloadConfig(ctx); err == nil {
			return
		}
	}
	n.log.Warn("store unreachable at start", "err", err)
	cfg, err := loadLastGood(n.dataDir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		n.log.Warn("no last good snapshot in the data directory; DNS waits for the store")
	case err != nil:
		n.log.Error("last good snapshot unreadable", "err", err)
	default:
		n.log.Info("serving the last good snapshot until the store answers", "revision", cfg.Revision)
		n.apply(cfg, false)
		if fi, err := os.Stat(filepath.Join(n.dataDir, lastGoodFile)); err == nil {
			n.confirmed.Store(fi.ModTime().UnixNano())
		}
	}
}

// run follows changes until ctx ends.
func (n *node) run(ctx context.Context) {
	go n.lastGood.run(ctx)
	changes := n.store.Watch(ctx)
	poll := time.NewTicker(n.pollEvery)
	defer poll.Stop()
	// Health is looked at every second even without news: heartbeats go
	// stale (3 × interval) without anyone writing, and a notification may
	// be lost. healthPace says when the tick reads.
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	feedTick := time.NewTicker(feedPoll)
	defer feedTick.Stop()
	// Shifts start and end by the clock: the snapshot says when the next
	// one does, and the node compiles again then, as every node does at
	// the same moment, with no write to wait for.
	shiftTimer := time.NewTimer(time.Hour)
	shiftTimer.Stop()
	defer shiftTimer.Stop()
	reads := newStoreReads(ctx, n)
	// healthHeld fires when news the health pace held back is due.
	healthHeld := time.NewTimer(time.Hour)
	healthHeld.Stop()
	defer healthHeld.Stop()
	notified := func() {
		if wait := reads.healthNotified(); wait > 0 {
			healthHeld.Reset(wait)
		}
	}
	var armed time.Time
	healthFailed := false // the last health read failed
	for {
		if c := n.cur.Load(); c != nil {
			if next := c.snap.NextShiftBoundary(); !next.Equal(armed) {
				armed = next
				shiftTimer.Stop()
				if !next.IsZero() {
					shiftTimer.Reset(time.Until(next))
				}
			}
		}
		select {
		case <-shiftTimer.C:
			armed = time.Time{}
			n.shiftBoundary()
		case <-ctx.Done():
			return
		case ch, ok := <-changes:
			if !ok {
				changes = nil // the store closed its watch; polling carries on
				continue
			}
			if ch.Health {
				notified()
			}
			if ch.Feeds {
				reads.readFeeds()
			}
			if ch.Revision != 0 || !ch.Health && !ch.Drain && !ch.Feeds { // a drain is the fleet's (fleet.go)
				reads.readConfig()
			}
		case <-poll.C:
			reads.readRevision()
		case <-feedTick.C:
			reads.readFeeds()
		case r := <-reads.feeds.done:
			n.takeFeeds(r.words, r.err)
			if reads.feeds.ended() {
				reads.readFeeds()
			}
		case r := <-reads.health.done:
			n.takeHealth(r.ups, r.err)
			n.rebuildHealth()
			if reads.health.ended() {
				notified()
			}
			if r.err == nil && healthFailed {
				// The store answers again: a change it notified meanwhile
				// may still be on its way (a NOTIFY sent into a cut comes
				// at TCP's retransmission pace), so read the revision now,
				// not at the next poll.
				reads.readRevision()
			}
			healthFailed = r.err != nil
		case r := <-reads.revision.done:
			again := reads.revision.ended()
			n.storeOK.Store(r.err == nil)
			if r.err == nil && n.cfg != nil && r.rev == n.cfg.Revision && !n.fromFile {
				n.confirmed.Store(time.Now().UnixNano())
			}
			if r.err == nil && (n.cfg == nil || r.rev != n.cfg.Revision || n.fromFile) {
				reads.readConfig()
			}
			if again {
				reads.readRevision()
			}
		case r := <-reads.config.done:
			again := reads.config.ended()
			switch {
			case r.err != nil:
				n.log.Warn("configuration reload failed; serving the last good snapshot", "err", r.err)
			case r.cfg != nil && r.base == n.cfg:
				n.apply(r.cfg, true)
			case r.cfg != nil:
				again = true // read from what is served now
			}
			if again {
				reads.readConfig()
			}
		case m := <-n.measured:
			n.remeasure(m)
		case <-n.checker.Changes():
			n.rebuildHealth() // our own state change: at once, without the store
		case <-healthHeld.C:
			if !reads.health.busy {
				reads.healthDue()
			}
		case <-tick.C:
			if reads.health.busy || !reads.healthDue() {
				// No read (the last one still hangs, or none is due):
				// heartbeats go stale by the clock meanwhile. Otherwise
				// the read's result rebuilds.
				n.rebuildHealth()
			}
		}
	}
}

// shiftBoundary recompiles the served snapshot when a shift starts or
// ends; the compile queues the start or expiry to be recorded (off the
// node loop: DNS does not wait for the store).
func (n *node) shiftBoundary() {
	if n.cfg == nil || n.health == nil {
		return
	}
	n.compile(n.cfg, n.nets, n.health, map[string]bool{})
}

// reloadConfig brings the served configuration to the store's, waiting
// for the read (at start, before the loop).
func (n *node) reloadConfig(ctx context.Context) error {
	cfg, err := n.nextConfig(ctx, n.cfg, n.fromFile)
	if cfg != nil {
		n.apply(cfg, true)
	}
	return err
}

// nextConfig reads the configuration that follows base (nil: none yet;
// fromFile: base is the last good file's): through the change feed, else
// whole. It returns nil when base is the store's revision. It touches
// nothing the loop owns, so that it can run beside it.
func (n *node) nextConfig(ctx context.Context, base *pools.Config, fromFile bool) (*pools.Config, error) {
	if base != nil && !fromFile {
		cctx, cancel := context.WithTimeout(ctx, storeProbe)
		cfg, done, err := n.changedConfig(cctx, base)
		cancel()
		if done || err != nil {
			return cfg, err
		}
	}
	rctx, cancel := context.WithTimeout(ctx, fullRead)
	defer cancel()
	cfg, err := n.store.Config(rctx)
	if err != nil {
		return nil, err
	}
	n.ensureKeys(rctx, cfg)
	return cfg, nil
}

// takeOwn applies what changed in our own checks since the last take.
func (n *node) takeOwn() {
	u, commit := n.own.Next(time.Now())
	n.tally.Apply(u)
	commit()
}

// readHealth applies what the other nodes published since the last read,
// waiting for the read (at start, before the loop).
func (n *node) readHealth(ctx context.Context) {
	ups, err := n.fetchHealth(ctx, n.cursors)
	n.takeHealth(ups, err)
}

// fetchHealth reads what the nodes published since cursors; the first
// read is every node's whole view.
func (n *node) fetchHealth(ctx context.Context, cursors map[string]pools.HealthCursor) ([]pools.HealthUpdate, error) {
	timeout := 2 * time.Second
	if len(cursors) == 0 {
		timeout = fullRead
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return n.store.HealthSince(rctx, cursors)
}

// takeHealth applies a read's updates. When the store could not be read,
// the others' votes stay as last read, and go stale with their heartbeats.
func (n *node) takeHealth(ups []pools.HealthUpdate, err error) {
	if err != nil {
		n.log.Debug("reading health updates", "err", err)
		return
	}
	for _, u := range ups {
		n.cursors[u.Node] = u.Cursor
		if u.Node != n.self { // the store's copy of us is older than the checker
			n.tally.Apply(u)
		}
	}
}

// agreed is the agreed health now, with our own checks taken as they are
// now. The loop may have waited on an unreachable store for longer than a
// freshness window since it last took them (each read times out), and our
// own view must never look stale to ourselves: a write compiled after
// such a wait would otherwise drop our votes and RTTs for a moment, and
// answer a dynamic_latency client from another region's measurements.
func (n *node) agreed() *pools.Health {
	n.takeOwn()
	now := time.Now()
	return n.withLoad(n.tally.Health(now), now)
}

func (n *node) rebuildHealth() {
	if n.cfg == nil {
		return
	}
	h := n.agreed()
	if h == n.health {
		return
	}
	changed := pools.ChangedPools(n.health, h)
	if n.health != nil && len(changed) == 0 {
		return
	}
	n.compile(n.cfg, n.nets, h, changed)
}

// apply installs a new configuration: health checks follow it, and the
// snapshot is rebuilt.
func (n *node) apply(cfg *pools.Config, fromStore bool) {
	nets := n.nets
	if n.cfg == nil || nets == nil || !sameList(n.cfg.Networks, cfg.Networks) {
		var err error
		if nets, err = geodata.NewNetworks(cfg.Networks); err != nil {
			n.builds.WithLabelValues("error").Inc()
			n.log.Error("operator networks rejected; keeping the last good snapshot", "revision", cfg.Revision, "err", err)
			return
		}
	}
	prev, prevNets := n.cfg, n.nets
	n.cfg, n.nets = cfg, nets
	wasFile := n.fromFile
	n.fromFile = !fromStore
	n.tally.Configure(cfg)
	h := n.agreed()
	// A configuration from the file, or the first from the store after
	// one, compiles in full: nothing is shared with what came before.
	var changed map[string]bool
	if prev != nil && !wasFile && fromStore {
		changed = pools.ChangedPools(n.health, h)
	}
	if !n.compile(cfg, nets, h, changed) {
		n.cfg, n.nets, n.fromFile = prev, prevNets, wasFile
		n.tally.Configure(prev)
		return
	}
	// Health checks follow the configuration once DNS answers it: with a
	// hundred thousand targets this takes longer than the compile.
	n.checker.Update(cfg)
	if fromStore {
		n.confirmed.Store(time.Now().UnixNano())
	}
	if fromStore && (prev == nil || prev.Revision != cfg.Revision) {
		n.lastGood.save(cfg)
	}
}

// sameList reports whether two lists are the same slice (Config.Apply
// shares the lists a change set does not touch; the reuse rules of every
// step are in docs/architecture.md, "What an update shares").
func sameList[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// compile publishes a snapshot of cfg and h. changed (pool ids whose
// health changed) not nil means cfg and h follow the served snapshot, so
// that only what differs is compiled (steering.Update) and audited; nil
// compiles and audits all.
func (n *node) compile(cfg *pools.Config, nets *geodata.Networks, h *pools.Health, changed map[string]bool) bool {
	start := time.Now()
	var snap *steering.Snapshot
	var err error
	if c := n.cur.Load(); c != nil && changed != nil {
		snap, err = steering.Update(c.snap, cfg, h, changed)
	} else {
		snap, err = steering.CompileFor(cfg, h, steering.Options{Region: n.region, Measured: n.table})
	}
	if err != nil {
		n.builds.WithLabelValues("error").Inc()
		n.log.Error("snapshot compile failed; keeping the last good one", "revision", cfg.Revision, "err", err)
		return false
	}
	c := &current{snap: snap, nets: nets}
	if !n.publish(c) {
		n.builds.WithLabelValues("error").Inc()
		return false
	}
	n.cur.Store(c)
	n.health = h
	n.audit.observe(h, changed, n.tally.Votes)
	n.notify.Observe(cfg, h, changed, time.Now())
	if !n.fromFile {
		// What the clock did, by the configuration of the store (a last
		// good file may be older than what the store knows).
		n.records.forget(liveObjects(cfg))
		n.records.add(shiftRecords(cfg, n.store, n.log, snap.Built())...)
		if n.rollouts != nil && n.ctx != nil {
			n.rollouts.observe(n.ctx, snap, snap.Built())
		}
	}
	took := time.Since(start)
	n.builds.WithLabelValues("ok").Inc()
	n.buildTime.Observe(took.Seconds())
	n.revision.Set(float64(cfg.Revision))
	n.log.Info("snapshot published", "revision", cfg.Revision, "load_balancers", len(snap.LoadBalancers()),
		"pools_rebuilt", len(snap.Rebuilt()), "incremental", snap.Parent() != 0, "took", took)
	return true
}
