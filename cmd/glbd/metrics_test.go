package main

import (
	"log/slog"
	"net"
	"net/netip"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/glb-dns/glb/bgp"
	"github.com/glb-dns/glb/healthcheck"
	"github.com/glb-dns/glb/pools/embedded/embeddedtest"
)

// TestNodeMetricsLint: the node's snapshot, fleet and BGP metrics follow
// Prometheus' naming rules, each is there before anything happened, and
// a publication is counted.
func TestNodeMetricsLint(t *testing.T) {
	t.Parallel()
	store := embeddedtest.Open(t)
	reg := prometheus.NewRegistry()
	log := slog.New(slog.DiscardHandler)
	checker := healthcheck.New(healthcheck.Options{Node: "n"})
	n := newNode(log, store, t.TempDir(), checker, reg, func(*current) bool { return true })
	n.records = newClockRecords(log, reg)
	n.start(t.Context())
	if !n.ready() {
		t.Fatal("an empty store should still give a snapshot")
	}
	newFleet(&Config{Node: "n", Region: "WEU"}, log, store, n, &dnsService{}, checker, reg, nil)
	// A speaker with a peer nobody answers: its metrics are there all the
	// same.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	a, err := newAnycast(t.Context(), bgp.Config{ASN: 65001, RouterID: netip.MustParseAddr("192.0.2.1"),
		Peers:    []bgp.Peer{{Addr: netip.MustParseAddr("127.0.0.1"), Port: uint16(port), ASN: 65000}},
		Prefixes: []netip.Prefix{netip.MustParsePrefix("192.0.2.53/32")}}, 0, log, n, netip.MustParseAddrPort("127.0.0.1:53"), reg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.stop()
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Fatalf("promlint: %v %v", err, problems)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	found := false
	for _, mf := range mfs {
		names[mf.GetName()] = true
		if mf.GetName() == "glb_snapshot_builds_total" {
			found = mf.GetMetric()[0].GetCounter().GetValue() == 1
		}
	}
	if !found {
		t.Error("glb_snapshot_builds_total{result=\"ok\"} is not 1 after one build")
	}
	for _, want := range []string{"glb_node_reports_total", "glb_node_draining", "glb_node_fleet_nodes", "glb_bgp_announced",
		"glb_bgp_route_changes_total", "glb_bgp_session_established", "glb_bgp_self_probes_total"} {
		if !names[want] {
			t.Errorf("%s is not exported before anything happened", want)
		}
	}
}
