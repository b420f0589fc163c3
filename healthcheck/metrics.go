package healthcheck

import (
	"errors"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/glb-dns/glb/internal/promset"
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
	set := promset.New("healthcheck")
	m := &metrics{
		duration: set.HistogramVec("check_duration_seconds", "Duration of one health check including retries, by monitor type and outcome.",
			[]float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}, "type", "outcome"),
		results:      set.CounterVec("results_total", "Health check results by pool, monitor type and outcome (success, failure).", "pool", "type", "outcome"),
		changes:      set.CounterVec("state_changes_total", "Origin state changes seen by this node, by pool and new state (up, down).", "pool", "to"),
		healthy:      set.GaugeVec("origins_healthy", "Origins this node counts as healthy, by pool.", "pool"),
		checked:      set.GaugeVec("origins_checked", "Origins this node checks, by pool.", "pool"),
		publications: set.CounterVec("publications_total", "Publications of this node's health view, by outcome (success, failure).", "outcome"),
		missed: set.CounterVec("missed_checks_total",
			"Scheduled checks skipped because the origin's previous check was still running, or waited past the slot for room in flight, by pool.", "pool"),
		rate: set.Gauge("scheduled_checks_per_second",
			"Checks per second the configuration asks of this node: the sum over checked origins of 1 / interval. Compare with rate(glb_healthcheck_results_total)."),
		inFlight: set.Gauge("checks_in_flight", "Checks running now, each on a goroutine of its own with at most one socket."),
		limit:    set.Gauge("checks_in_flight_limit", "Bound on checks in flight, and so on the checker's goroutines and sockets."),
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
