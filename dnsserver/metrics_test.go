package dnsserver

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
)

func TestMetricsLint(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	s := newTestServer(t, reg)
	// Count a bit of everything so that every family has a sample.
	for _, c := range cases {
		exchangeProc(t, s, &c)
	}
	s.metrics.panics.Add(0)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	problems, err := promlint.NewWithMetricFamilies(mfs).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
	if got := testutil.ToFloat64(s.metrics.queries[typeIndex(typeA)][rcodeIndex(rcodeNXDomain)]); got != 2 {
		t.Errorf("A NXDOMAIN queries %v, want 2", got)
	}
	if got := testutil.ToFloat64(s.metrics.answers.WithLabelValues("lb-geo.glb.example.com", "eu")); got < 1 {
		t.Errorf("lb-geo answers from eu %v", got)
	}
	if got := testutil.ToFloat64(s.metrics.truncated); got != 3 {
		t.Errorf("truncated %v, want 3", got)
	}
}
