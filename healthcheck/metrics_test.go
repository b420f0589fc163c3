package healthcheck

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	up := &sequence{codes: []int{200}}
	down := &sequence{codes: []int{200, 503}}
	a := newSite(t, "a", up, 1)
	b := newSite(t, "b", down, 1)
	c := start(t, Options{Registerer: reg, Publisher: &recorder{}})
	c.Update(configOf(a, b))
	eventually(t, "b down", func() bool {
		st, ok := stateOf(c.View(), "b")
		return ok && !st.Healthy
	})
	eventually(t, "a view published", func() bool {
		return testutil.ToFloat64(c.m.publications.WithLabelValues("success")) >= 1
	})

	if got := testutil.ToFloat64(c.m.healthy.WithLabelValues("a")); got != 1 {
		t.Errorf("origins_healthy{pool=a} = %v, want 1", got)
	}
	if got := testutil.ToFloat64(c.m.healthy.WithLabelValues("b")); got != 0 {
		t.Errorf("origins_healthy{pool=b} = %v, want 0", got)
	}
	if got := testutil.ToFloat64(c.m.changes.WithLabelValues("b", "down")); got != 1 {
		t.Errorf("state_changes_total{pool=b,to=down} = %v, want 1", got)
	}
	if got := testutil.ToFloat64(c.m.results.WithLabelValues("b", "http", "failure")); got < 1 {
		t.Errorf("results_total{pool=b,outcome=failure} = %v, want at least 1", got)
	}
	if n := testutil.CollectAndCount(c.m.duration); n != 2 {
		t.Errorf("check_duration_seconds has %d series, want 2 (http success, http failure)", n)
	}

	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Fatalf("promlint: %v %v", err, problems)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, mf := range mfs {
		names[mf.GetName()] = true
		if !strings.HasPrefix(mf.GetName(), "glb_healthcheck_") {
			t.Errorf("metric %s outside the glb namespace", mf.GetName())
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if strings.Contains(l.GetValue(), "127.0.0.1") {
					t.Errorf("metric %s carries an address in label %s", mf.GetName(), l.GetName())
				}
			}
		}
	}
	for _, want := range []string{
		"glb_healthcheck_check_duration_seconds", "glb_healthcheck_results_total",
		"glb_healthcheck_state_changes_total", "glb_healthcheck_origins_healthy",
		"glb_healthcheck_origins_checked", "glb_healthcheck_publications_total",
		"glb_healthcheck_scheduled_checks_per_second", "glb_healthcheck_checks_in_flight",
		"glb_healthcheck_checks_in_flight_limit",
	} {
		if !names[want] {
			t.Errorf("metric %s not registered", want)
		}
	}

	// A removed pool's series go with it.
	c.Update(configOf(a))
	if n := testutil.CollectAndCount(c.m.healthy); n != 1 {
		t.Errorf("origins_healthy has %d series after pool b was removed, want 1", n)
	}
}

func TestMetricsSecondCheckerOnOneRegistry(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	first := New(Options{Registerer: reg})
	second := New(Options{Registerer: reg})
	first.m.publications.WithLabelValues("success").Inc()
	if got := testutil.ToFloat64(second.m.publications.WithLabelValues("success")); got != 1 {
		t.Errorf("second Checker does not share the registered collector (got %v)", got)
	}
}
