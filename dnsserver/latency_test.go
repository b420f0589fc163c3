package dnsserver

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestLatencySampled: the duration histogram holds one query in
// latencySample per worker, while every query is counted.
func TestLatencySampled(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	s := newTestServer(t, reg)
	w := newWorker()
	q := benchQuery(t, "ns1.glb.example.com.", "")
	const n = 10 * latencySample
	for range n {
		if w.handle(s, q, netipLoopback, false) == nil {
			t.Fatal("no reply")
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var timed, counted uint64
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			switch mf.GetName() {
			case "glb_dns_request_duration_seconds":
				timed += m.GetHistogram().GetSampleCount()
			case "glb_dns_queries_total":
				counted += uint64(m.GetCounter().GetValue())
			}
		}
	}
	if counted != n || timed != n/latencySample {
		t.Errorf("%d queries counted and %d timed, want %d and %d", counted, timed, n, n/latencySample)
	}
}
