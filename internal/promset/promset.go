// Package promset makes the Prometheus collectors of one glb subsystem,
// named glb_<subsystem>_<name>, and registers them together, so that each
// package states only what its metrics are (name, help, labels) and every
// metric is named and registered the one way.
package promset

import "github.com/prometheus/client_golang/prometheus"

// Set is the collectors made for one subsystem, in the order made.
type Set struct {
	sub        string
	collectors []prometheus.Collector
}

// New starts the set of the subsystem sub (glb_<sub>_…).
func New(sub string) *Set { return &Set{sub: sub} }

func add[C prometheus.Collector](s *Set, c C) C {
	s.collectors = append(s.collectors, c)
	return c
}

func (s *Set) opts(name, help string) prometheus.Opts {
	return prometheus.Opts{Namespace: "glb", Subsystem: s.sub, Name: name, Help: help}
}

// Counter is a counter without labels.
func (s *Set) Counter(name, help string) prometheus.Counter {
	return add(s, prometheus.NewCounter(prometheus.CounterOpts(s.opts(name, help))))
}

// CounterVec is a counter by labels.
func (s *Set) CounterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return add(s, prometheus.NewCounterVec(prometheus.CounterOpts(s.opts(name, help)), labels))
}

// Gauge is a gauge without labels.
func (s *Set) Gauge(name, help string) prometheus.Gauge {
	return add(s, prometheus.NewGauge(prometheus.GaugeOpts(s.opts(name, help))))
}

// GaugeVec is a gauge by labels.
func (s *Set) GaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	return add(s, prometheus.NewGaugeVec(prometheus.GaugeOpts(s.opts(name, help)), labels))
}

func (s *Set) histOpts(name, help string, buckets []float64) prometheus.HistogramOpts {
	return prometheus.HistogramOpts{Namespace: "glb", Subsystem: s.sub, Name: name, Help: help, Buckets: buckets}
}

// Histogram is a histogram without labels over buckets.
func (s *Set) Histogram(name, help string, buckets []float64) prometheus.Histogram {
	return add(s, prometheus.NewHistogram(s.histOpts(name, help, buckets)))
}

// HistogramVec is a histogram by labels over buckets.
func (s *Set) HistogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	return add(s, prometheus.NewHistogramVec(s.histOpts(name, help, buckets), labels))
}

// Register registers every collector of the set with reg, stopping at the
// first error.
func (s *Set) Register(reg prometheus.Registerer) error {
	for _, c := range s.collectors {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// Collectors are the set's collectors, in the order made, for a package
// that registers them its own way.
func (s *Set) Collectors() []prometheus.Collector { return s.collectors }
