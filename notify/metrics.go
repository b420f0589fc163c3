package notify

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/glb-dns/glb/pools"
)

// Metrics count what the node records and delivers. The backlog gauges
// are the store's, the same on every node: alert on their max.
type Metrics struct {
	recorded   *prometheus.CounterVec
	deliveries *prometheus.CounterVec
	failures   *prometheus.CounterVec
	latency    prometheus.Histogram
	pending    prometheus.Gauge
	oldest     prometheus.Gauge
}

// NewMetrics registers the notification metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		recorded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "glb", Subsystem: "notify", Name: "events_queued_total",
			Help: "Events this node recorded in the outbox, by type (one per transition across the cluster).",
		}, []string{"type"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "glb", Subsystem: "notify", Name: "deliveries_total",
			Help: "Events this node delivered (2xx), by subscription format.",
		}, []string{"format"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "glb", Subsystem: "notify", Name: "delivery_failures_total",
			Help: "Failed delivery attempts by format and outcome (retry, refused: by the outbound policy, no request sent, given_up).",
		}, []string{"format", "outcome"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "glb", Subsystem: "notify", Name: "delivery_seconds",
			Help:    "Time of a successful delivery attempt.",
			Buckets: prometheus.ExponentialBuckets(0.005, 4, 8),
		}),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "glb", Subsystem: "notify", Name: "pending",
			Help: "Deliveries waiting in the outbox (all subscriptions).",
		}),
		oldest: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "glb", Subsystem: "notify", Name: "oldest_pending_seconds",
			Help: "Age of the oldest event waiting for delivery; 0 when none waits.",
		}),
	}
	reg.MustRegister(m.recorded, m.deliveries, m.failures, m.latency, m.pending, m.oldest)
	return m
}

func (m *Metrics) queued(typ string) {
	if m != nil {
		m.recorded.WithLabelValues(typ).Inc()
	}
}

func (m *Metrics) delivered(format string, took time.Duration) {
	if m != nil {
		m.deliveries.WithLabelValues(format).Inc()
		m.latency.Observe(took.Seconds())
	}
}

func (m *Metrics) failed(format, outcome string) {
	if m != nil {
		m.failures.WithLabelValues(format, outcome).Inc()
	}
}

func (m *Metrics) setBacklog(b pools.Backlog, now time.Time) {
	if m == nil {
		return
	}
	m.pending.Set(float64(b.Pending))
	if b.Oldest.IsZero() {
		m.oldest.Set(0)
		return
	}
	m.oldest.Set(max(now.Sub(b.Oldest).Seconds(), 0))
}
