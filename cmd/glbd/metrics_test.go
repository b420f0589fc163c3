package main

import (
	"log/slog"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/glb-dns/glb/healthcheck"
	"github.com/glb-dns/glb/pools/embedded/embeddedtest"
)

// TestNodeMetricsLint: the node's snapshot metrics follow Prometheus'
// naming rules, and a publication is counted.
func TestNodeMetricsLint(t *testing.T) {
	t.Parallel()
	store := embeddedtest.Open(t)
	reg := prometheus.NewRegistry()
	log := slog.New(slog.DiscardHandler)
	n := newNode(log, store, t.TempDir(), healthcheck.New(healthcheck.Options{Node: "n"}), reg,
		func(*current) bool { return true })
	n.records = newClockRecords(log, reg)
	n.start(t.Context())
	if !n.ready() {
		t.Fatal("an empty store should still give a snapshot")
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Fatalf("promlint: %v %v", err, problems)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, mf := range mfs {
		if mf.GetName() == "glb_snapshot_builds_total" {
			found = mf.GetMetric()[0].GetCounter().GetValue() == 1
		}
	}
	if !found {
		t.Error("glb_snapshot_builds_total{result=\"ok\"} is not 1 after one build")
	}
}
