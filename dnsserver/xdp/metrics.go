package xdp

import (
	"errors"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	frames *prometheus.CounterVec
}

// newMetrics registers the per-queue counters, or finds those another
// interface's path registered on reg.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	frames := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "glb", Subsystem: "xdp", Name: "frames_total",
		Help: "Frames the AF_XDP path took from a receive queue, by what became of them (answered, no_reply, dropped_*).",
	}, []string{"interface", "queue", "result"})
	if err := reg.Register(frames); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return nil, err
		}
		frames = are.ExistingCollector.(*prometheus.CounterVec)
	}
	return &metrics{frames: frames}, nil
}

// queueMetrics are one queue's children, bound up front.
type queueMetrics struct {
	c [verdicts]prometheus.Counter
}

func (m *metrics) queue(iface string, q int) *queueMetrics {
	qm := &queueMetrics{}
	for v := range verdicts {
		qm.c[v] = m.frames.WithLabelValues(iface, strconv.Itoa(q), verdictNames[v])
	}
	return qm
}

// add moves a batch's counts into the counters.
func (qm *queueMetrics) add(n *[verdicts]uint64) {
	for v, k := range n {
		if k != 0 {
			qm.c[v].Add(float64(k))
			n[v] = 0
		}
	}
}
