package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/glb-dns/glb/internal/birdtest"
	"github.com/glb-dns/glb/internal/testnode"
	"github.com/glb-dns/glb/pools"
)

// TestNodes: glbctl lists the node serving, with its BGP session to a
// real BIRD and the prefix it announces; drain --wait returns only once
// the node reports drained, after its drain grace (3 s), nothing
// announced; undrain has it serve again; a drain without a reason is a
// usage error.
func TestNodes(t *testing.T) {
	t.Parallel()
	bird := birdtest.Start(t, birdtest.Config{Local: "127.0.0.2", ASN: 65000,
		Neighbors: []birdtest.Neighbor{{Name: "edge1", Addr: "127.0.0.1", ASN: 65001}}})
	n := startNode(t, "--node", "edge-1", "--region", "WEU", "--drain-grace", "3s",
		"--bgp-asn", "65001", "--bgp-router-id", "192.0.2.1", "--bgp-peer", "127.0.0.2:"+strconv.Itoa(bird.Port)+",65000",
		"--anycast", "192.0.2.57/32", "--bgp-hold-time", "3s")
	state := func() pools.NodeView {
		var v pools.NodeView
		if err := json.Unmarshal([]byte(n.mustCtl(exitOK, "nodes", "show", "edge-1", "-o", "json")), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	testnode.Eventually(t, 20*time.Second, "edge-1 listed serving, its session up and its prefix announced", func() (bool, string) {
		out := n.mustCtl(exitOK, "nodes")
		return strings.Contains(out, "edge-1") && strings.Contains(out, "WEU") && strings.Contains(out, "serving") &&
			strings.Contains(out, "1/1 up, 1 announced"), out
	})
	if out := n.mustCtl(exitOK, "nodes", "show", "edge-1"); !strings.Contains(out, "bgp peer 127.0.0.2 AS65000: established\n") ||
		!strings.Contains(out, "announced: 192.0.2.57/32\n") {
		t.Fatalf("nodes show edge-1 names no session or prefix:\n%s", out)
	}
	n.mustCtl(exitUsage, "nodes", "drain", "edge-1")
	start := time.Now()
	out := n.mustCtl(exitOK, "nodes", "drain", "edge-1", "--reason", "upgrade", "--wait")
	// The node learns of the drain from the change feed at once and
	// reports drained at the first report after its grace: without the
	// grace, drained would come within a second.
	if took := time.Since(start); !strings.Contains(out, "node edge-1 drained") || took < 3*time.Second {
		t.Fatalf("drain --wait returned after %v:\n%s", took, out)
	}
	if out := n.mustCtl(exitOK, "nodes"); !strings.Contains(out, "1/1 up, 0 announced") {
		t.Fatalf("drained edge-1 still announces:\n%s", out)
	}
	if v := state(); v.State != pools.NodeDrained || v.Drain == nil || v.Drain.Reason != "upgrade" {
		t.Fatalf("after drain --wait: %+v", v)
	}
	n.mustCtl(exitOK, "nodes", "undrain", "edge-1")
	testnode.Eventually(t, 10*time.Second, "edge-1 serving again", func() (bool, string) {
		v := state()
		return v.State == pools.NodeServing && v.Drain == nil, v.State
	})
	if code, _, errOut := n.ctl("nodes", "drain", "nobody", "--reason", "x"); code != exitFailed || !strings.Contains(errOut, "not found") {
		t.Fatalf("drain of an unknown node: exit %d\n%s", code, errOut)
	}
}
