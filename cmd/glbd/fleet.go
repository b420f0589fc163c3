package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/glb-dns/glb/healthcheck"
	"github.com/glb-dns/glb/internal/promset"
	"github.com/glb-dns/glb/internal/version"
	"github.com/glb-dns/glb/notify"
	"github.com/glb-dns/glb/pools"
)

// reportEvery is how often a node reports its status to the store.
const reportEvery = time.Second

// observeEvery is how often it reads the fleet's, for the fleet metrics
// and the node notifications. Every node reading every node's record each
// second was, once the health reads were cheap, among the store's largest
// costs at 64 nodes (bench/fleet); a state seen a second later changes
// neither.
const observeEvery = 2 * time.Second

// routes is what announces the node's anycast prefixes (BGP); the fleet
// tells it whether the node may be announced. nil: no routes.
type routes interface {
	// SetDraining withdraws every route (true) or lets the node be
	// announced again when it can answer (false).
	SetDraining(bool)
	// Status is the sessions and what is announced, for the node's report.
	Status() pools.NodeBGP
}

// fleet reports the node to the store every second (its status, from
// which GET /nodes shows the fleet), follows the drain asked of it, reads
// every node's state for the fleet metrics and node notifications, and
// drains the node on SIGTERM.
type fleet struct {
	log       *slog.Logger
	store     pools.NodeStore
	n         *node
	dns       *dnsService
	checker   *healthcheck.Checker
	gather    prometheus.Gatherer
	notify    *notify.Observer
	routes    routes
	grace     time.Duration
	goneAfter time.Duration
	base      pools.NodeStatus // what does not change while the node runs

	mu        sync.Mutex
	drain     string // "", pools.NodeDraining, pools.NodeDrained
	drainFrom time.Time
	stopping  bool
	// answers are the DNS queries answered, counted at each report, over
	// the last minute.
	answers  []answerCount
	checks   pools.NodeChecks
	checksAt time.Time

	// ran is closed when run returns: stop reports after it.
	ran chan struct{}
	// changes is the store's change feed (nil: none): a drain asked or
	// lifted, of this node or another, through any node's API, is
	// reported at once, so that this node reads its own drain within
	// milliseconds rather than at its next report.
	changes <-chan pools.Change

	reports  *prometheus.CounterVec
	draining prometheus.Gauge
	states   *prometheus.GaugeVec
}

type answerCount struct {
	at    time.Time
	total float64
}

func newFleet(cfg *Config, log *slog.Logger, store pools.NodeStore, n *node, dns *dnsService, checker *healthcheck.Checker,
	reg *prometheus.Registry, obs *notify.Observer) *fleet {
	set := promset.New("node")
	f := &fleet{
		log: log.With("component", "fleet"), store: store, n: n, dns: dns, checker: checker, gather: reg, notify: obs,
		grace: cfg.Fleet.DrainGrace, goneAfter: cfg.Fleet.NodeGoneAfter, ran: make(chan struct{}),
		base: pools.NodeStatus{Name: cfg.Node, Region: cfg.Region, Version: version.String(), Commit: version.Commit(),
			StartedAt: pools.StoreTime(time.Now())},
		reports:  set.CounterVec("reports_total", "Reports of this node's status to the store, by result (ok, error).", "result"),
		draining: set.Gauge("draining", "1 while this node drains or is drained (its routes withdrawn), else 0."),
		states:   set.GaugeVec("fleet_nodes", "Nodes of the fleet by state (serving, draining, drained, stale, gone), as this node sees them.", "state"),
	}
	for _, s := range []string{pools.NodeServing, pools.NodeDraining, pools.NodeDrained, pools.NodeStale, pools.NodeGone} {
		f.states.WithLabelValues(s)
	}
	f.reports.WithLabelValues("ok")
	f.reports.WithLabelValues("error")
	reg.MustRegister(set.Collectors()...)
	for _, srv := range dns.srvs {
		a := srv.Addr().String()
		f.base.Listeners.UDP = append(f.base.Listeners.UDP, a)
		f.base.Listeners.TCP = append(f.base.Listeners.TCP, a)
	}
	if len(dns.xdp) > 0 {
		f.base.Listeners.XDP = commaList(cfg.XDPInterface)
	}
	return f
}

// run reports until ctx ends: every second, and at once when the change
// feed says a drain was asked or lifted; it reads the fleet every other.
func (f *fleet) run(ctx context.Context) {
	defer close(f.ran)
	t := time.NewTicker(reportEvery)
	defer t.Stop()
	var observed time.Time
	for {
		f.report(ctx)
		// At the report nearest to observeEvery: reports come on a ticker.
		if now := time.Now(); now.Sub(observed) >= observeEvery-reportEvery/2 {
			observed = now
			f.observe(ctx)
		}
		if !f.wait(ctx, t.C) {
			return
		}
	}
}

// wait waits for the next report: the ticker, or a drain in the change
// feed. False when ctx ended.
func (f *fleet) wait(ctx context.Context, tick <-chan time.Time) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case <-tick:
			return true
		case c, ok := <-f.changes:
			if !ok {
				f.changes = nil // the store closed its watch; the ticker carries on
			} else if c.Drain {
				return true
			}
		}
	}
}

// report sends the node's status and follows the drain the store returns.
func (f *fleet) report(ctx context.Context) {
	now := time.Now()
	st := f.status(now)
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	d, err := f.store.ReportNode(rctx, st)
	cancel()
	if err != nil {
		// The node keeps whatever drain it follows: a store away says
		// nothing new about it.
		f.reports.WithLabelValues("error").Inc()
		f.log.Debug("reporting the node's status", "err", err)
		return
	}
	f.reports.WithLabelValues("ok").Inc()
	f.follow(d, time.Now())
}

// follow moves the node's drain along with the one asked of it (d, nil:
// none) at now: a drain withdraws the routes at once and turns drained
// after the grace; its end announces again.
func (f *fleet) follow(d *pools.NodeDrain, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopping {
		return
	}
	switch active := d.Active(now); {
	case active && f.drain == "":
		f.startDrain(now, "reason", d.Reason, "by", d.By, "until", d.Until)
	case !active && f.drain != "":
		f.drain = ""
		f.draining.Set(0)
		if f.routes != nil {
			f.routes.SetDraining(false)
		}
		f.log.Info("node serves again: drain lifted")
	}
	f.advance(now)
}

// startDrain withdraws the routes; f.mu is held.
func (f *fleet) startDrain(now time.Time, args ...any) {
	f.drain, f.drainFrom = pools.NodeDraining, now
	f.draining.Set(1)
	if f.routes != nil {
		f.routes.SetDraining(true)
	}
	f.log.Info("node draining: routes withdrawn, answering for the drain grace", append(args, "grace", f.grace)...)
}

// advance turns draining into drained once the grace is over; f.mu is
// held.
func (f *fleet) advance(now time.Time) {
	if f.drain == pools.NodeDraining && now.Sub(f.drainFrom) >= f.grace {
		f.drain = pools.NodeDrained
		f.log.Info("node drained", "after", now.Sub(f.drainFrom).Round(time.Millisecond))
	}
}

// status is the node's report at now.
func (f *fleet) status(now time.Time) pools.NodeStatus {
	st := f.base
	if c := f.n.cur.Load(); c != nil {
		st.Revision = c.snap.Revision()
	}
	if ns := f.n.confirmed.Load(); ns != 0 {
		st.SnapshotAt = pools.StoreTime(time.Unix(0, ns))
	}
	st.Store = f.n.storeOK.Load()
	if ss, ok := f.store.(interface{ Server() pools.NodeStoreServer }); ok {
		if v := ss.Server(); v.Primary != "" {
			st.StoreServer = &v
		}
	}
	st.AnswersPerSecond = f.answerRate(now)
	st.Checks = f.checkCounts(now)
	if f.routes != nil {
		st.BGP = f.routes.Status()
	}
	f.mu.Lock()
	f.advance(now)
	st.Drain, st.Stopping = f.drain, f.stopping
	f.mu.Unlock()
	return st
}

// answerRate is the queries answered per second over the last minute,
// from the DNS servers' counters (glb_dns_queries_total).
func (f *fleet) answerRate(now time.Time) float64 {
	mfs, err := f.gather.Gather()
	if err != nil {
		return 0
	}
	total := 0.0
	for _, mf := range mfs {
		if mf.GetName() != "glb_dns_queries_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			total += m.GetCounter().GetValue()
		}
	}
	f.answers = append(f.answers, answerCount{at: now, total: total})
	i := 0
	for i < len(f.answers)-1 && now.Sub(f.answers[i].at) > time.Minute {
		i++
	}
	f.answers = f.answers[i:]
	first := f.answers[0]
	if secs := now.Sub(first.at).Seconds(); secs > 0 {
		return (total - first.total) / secs
	}
	return 0
}

// checkCounts counts the origins checked and failing, from the checker's
// whole view every ten seconds (a view of a hundred thousand origins is
// not free).
func (f *fleet) checkCounts(now time.Time) pools.NodeChecks {
	if now.Sub(f.checksAt) < 10*time.Second && !f.checksAt.IsZero() {
		return f.checks
	}
	v := f.checker.View()
	c := pools.NodeChecks{Origins: len(v.Origins)}
	for _, o := range v.Origins {
		if !o.Healthy {
			c.Failing++
		}
	}
	f.checks, f.checksAt = c, now
	return c
}

// observe reads every node's state for the fleet metrics and the node
// notifications.
func (f *fleet) observe(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	l, err := f.store.Nodes(rctx)
	cancel()
	if err != nil {
		f.log.Debug("reading the fleet", "err", err)
		return
	}
	now := time.Now()
	views := make([]pools.NodeView, len(l.Items))
	count := map[string]int{}
	for i := range l.Items {
		views[i] = l.Items[i].View(l.Revision, now, f.goneAfter)
		count[views[i].State]++
	}
	for _, s := range []string{pools.NodeServing, pools.NodeDraining, pools.NodeDrained, pools.NodeStale, pools.NodeGone} {
		f.states.WithLabelValues(s).Set(float64(count[s]))
	}
	f.notify.ObserveFleet(views, now)
}

// stop drains the node as it stops (SIGTERM): the routes are withdrawn
// and the fleet told, then, with routes to withdraw, the node keeps
// answering for the drain grace so that the routers move the traffic and
// resolvers' retries land before the listeners close. Without routes
// nothing points at the node but its NS records, and it stops at once.
func (f *fleet) stop() {
	<-f.ran
	f.mu.Lock()
	f.stopping = true
	was := f.drain
	if was == "" {
		f.startDrain(time.Now(), "reason", "stopping")
	}
	wait := time.Duration(0)
	if f.routes != nil && was == "" {
		wait = f.grace
	}
	f.mu.Unlock()
	f.tell()
	if wait > 0 {
		time.Sleep(wait)
	}
	f.mu.Lock()
	f.drain = pools.NodeDrained
	f.mu.Unlock()
	f.tell()
}

// tell reports the node's state now, bounded: the node is stopping.
func (f *fleet) tell() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := f.store.ReportNode(ctx, f.status(time.Now())); err != nil {
		f.log.Debug("reporting the node's drain", "err", err)
	}
}
