package dnsserver

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/glb-dns/glb/steering"
)

// Query types and rcodes are counted over fixed sets, so that no query
// can add a label value; every child is bound once, up front.
var (
	metricTypes  = [...]string{"A", "AAAA", "CNAME", "SOA", "NS", "TXT", "MX", "CAA", "ANY", "other"}
	metricRcodes = [...]string{"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED", "BADVERS"}
)

func typeIndex(t uint16) int {
	switch t {
	case typeA:
		return 0
	case typeAAAA:
		return 1
	case typeCNAME:
		return 2
	case typeSOA:
		return 3
	case typeNS:
		return 4
	case typeTXT:
		return 5
	case typeMX:
		return 6
	case typeCAA:
		return 7
	case typeANY:
		return 8
	}
	return 9
}

func rcodeIndex(rc int) int {
	if rc == rcodeBadVers {
		return 6
	}
	if rc >= 0 && rc <= rcodeRefused {
		return rc
	}
	return 2
}

type metrics struct {
	queries   [len(metricTypes)][len(metricRcodes)]prometheus.Counter
	duration  prometheus.Histogram
	truncated prometheus.Counter
	dropped   prometheus.Counter
	panics    prometheus.Counter

	answers   *prometheus.CounterVec
	fallback  *prometheus.CounterVec
	failOpen  *prometheus.CounterVec
	allDown   *prometheus.CounterVec
	tcpConns  prometheus.Gauge
	snapshots prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	const ns, sub = "glb", "dns"
	queries := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: sub, Name: "queries_total",
		Help: "DNS queries answered, by query type and response code.",
	}, []string{"type", "rcode"})
	m := &metrics{
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: ns, Subsystem: sub, Name: "request_duration_seconds",
			Help:    "Time from a read query to its packed reply (a batch of queries is read at once), for one query in 16 of each reader.",
			Buckets: []float64{1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 1e-3, 1e-2},
		}),
		truncated: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "truncated_total",
			Help: "UDP replies truncated (TC set) because they did not fit the payload size.",
		}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "dropped_total",
			Help: "Messages dropped without a reply: responses (QR set) and messages shorter than a header.",
		}),
		panics: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "panics_total",
			Help: "Panics recovered in the query handler (answered SERVFAIL).",
		}),
		answers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "lb_answers_total",
			Help: "Load balancer answers with records, by load balancer and answering pool.",
		}, []string{"load_balancer", "pool"}),
		fallback: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "lb_fallback_answers_total",
			Help: "Load balancer answers from the fallback pool because no candidate pool was healthy.",
		}, []string{"load_balancer"}),
		failOpen: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "lb_fail_open_answers_total",
			Help: "Load balancer answers from a pool with no healthy origin (every enabled origin eligible).",
		}, []string{"load_balancer"}),
		allDown: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "lb_all_down_answers_total",
			Help: "Load balancer answers by the all_down policy (nodata, refused, addresses) because no candidate pool served.",
		}, []string{"load_balancer"}),
		tcpConns: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: ns, Subsystem: sub, Name: "tcp_connections",
			Help: "Open DNS TCP connections.",
		}),
		snapshots: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "snapshots_published_total",
			Help: "Snapshots published to the DNS server.",
		}),
	}
	for i, t := range metricTypes {
		for j, rc := range metricRcodes {
			m.queries[i][j] = queries.WithLabelValues(t, rc)
		}
	}
	for _, c := range []prometheus.Collector{queries, m.duration, m.truncated, m.dropped, m.panics,
		m.answers, m.fallback, m.failOpen, m.allDown, m.tcpConns, m.snapshots} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// query counts one query; start is when it was read if it is one of
// those timed (worker.sampled), else zero.
func (m *metrics) query(qtype uint16, rcode int, truncated bool, start time.Time) {
	m.queries[typeIndex(qtype)][rcodeIndex(rcode)].Inc()
	if truncated {
		m.truncated.Inc()
	}
	if !start.IsZero() {
		m.duration.Observe(time.Since(start).Seconds())
	}
}

// lbMetrics are one load balancer's children, bound when its snapshot is
// published.
type lbMetrics struct {
	pools    []poolCounter
	other    prometheus.Counter // a pool not bound up front (cannot happen; kept safe)
	fallback prometheus.Counter
	failOpen prometheus.Counter
	allDown  prometheus.Counter
}

type poolCounter struct {
	pool int32
	c    prometheus.Counter
}

func (l *lbMetrics) count(ans *steering.Answer) {
	if ans.Down != steering.DownFallback {
		l.allDown.Inc()
		return
	}
	c := l.other
	for i := range l.pools {
		if l.pools[i].pool == ans.Pool {
			c = l.pools[i].c
			break
		}
	}
	c.Inc()
	if ans.Fallback {
		l.fallback.Inc()
	}
	if ans.FailOpen {
		l.failOpen.Inc()
	}
}
