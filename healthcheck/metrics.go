package healthcheck

import (
	"errors"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics of one Checker. Labels stay bounded: pool ids come from the
// configuration and monitor types from a fixed set; origin addresses and
// names never become labels.
type metrics struct {
	duration     *prometheus.HistogramVec // type, outcome
	results      *prometheus.CounterVec   // pool, type, outcome
	changes      *prometheus.CounterVec   // pool, to
	healthy      *prometheus.GaugeVec     // pool
	checked      *prometheus.GaugeVec     // pool
	publications *prometheus.CounterVec   // outcome
	missed       *prometheus.CounterVec   // pool
	rate         prometheus.Gauge
	inFlight     prometheus.Gauge
	limit        prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer, log *slog.Logger) *metrics {
	const ns, sub = "glb", "healthcheck"
	m := &metrics{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: ns, Subsystem: sub, Name: "check_duration_seconds",
			Help:    "Duration of one health check including retries, by monitor type and outcome.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"type", "outcome"}),
		results: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "results_total",
			Help: "Health check results by pool, monitor type and outcome (success, failure).",
		}, []string{"pool", "type", "outcome"}),
		changes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "state_changes_total",
			Help: "Origin state changes seen by this node, by pool and new state (up, down).",
		}, []string{"pool", "to"}),
		healthy: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: ns, Subsystem: sub, Name: "origins_healthy",
			Help: "Origins this node counts as healthy, by pool.",
		}, []string{"pool"}),
		checked: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: ns, Subsystem: sub, Name: "origins_checked",
			Help: "Origins this node checks, by pool.",
		}, []string{"pool"}),
		publications: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "publications_total",
			Help: "Publications of this node's health view, by outcome (success, failure).",
		}, []string{"outcome"}),
		missed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "missed_checks_total",
			Help: "Scheduled checks skipped because the origin's previous check was still running, or waited past the slot for room in flight, by pool.",
		}, []string{"pool"}),
		rate: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: ns, Subsystem: sub, Name: "scheduled_checks_per_second",
			Help: "Checks per second the configuration asks of this node: the sum over checked origins of 1 / interval. Compare with rate(glb_healthcheck_results_total).",
		}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: ns, Subsystem: sub, Name: "checks_in_flight",
			Help: "Checks running now, each on a goroutine of its own with at most one socket.",
		}),
		limit: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: ns, Subsystem: sub, Name: "checks_in_flight_limit",
			Help: "Bound on checks in flight, and so on the checker's goroutines and sockets.",
		}),
	}
	if reg == nil {
		return m
	}
	m.duration = register(reg, log, m.duration)
	m.results = register(reg, log, m.results)
	m.changes = register(reg, log, m.changes)
	m.healthy = register(reg, log, m.healthy)
	m.checked = register(reg, log, m.checked)
	m.publications = register(reg, log, m.publications)
	m.missed = register(reg, log, m.missed)
	m.rate = register(reg, log, m.rate)
	m.inFlight = register(reg, log, m.inFlight)
	m.limit = register(reg, log, m.limit)
	return m
}

// register adopts an identical collector already on the registry (a second
// Checker in one process, as in tests) and otherwise keeps the metric
// unregistered with a warning: metrics are never a reason to stop checking.
func register[C prometheus.Collector](reg prometheus.Registerer, log *slog.Logger, c C) C {
	err := reg.Register(c)
	if err == nil {
		return c
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing
		}
	}
	log.Warn("metric not registered", "err", err)
	return c
}

// forgetPool drops a removed pool's series so the label set stays bounded
// by the live configuration.
func (m *metrics) forgetPool(pool string) {
	l := prometheus.Labels{"pool": pool}
	m.results.DeletePartialMatch(l)
	m.changes.DeletePartialMatch(l)
	m.healthy.DeletePartialMatch(l)
	m.checked.DeletePartialMatch(l)
	m.missed.DeletePartialMatch(l)
}
