package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/glb-dns/glb/internal/testnode"
	"github.com/glb-dns/glb/pools"
)

// TestNodes: glbctl lists the node serving; drain --wait returns only
// once the node reports drained, after its drain grace (3 s); undrain has it
// serve again; a drain without a reason is a usage error.
func TestNodes(t *testing.T) {
	t.Parallel()
	n := startNode(t, "--node", "edge-1", "--region", "WEU", "--drain-grace", "3s")
	state := func() pools.NodeView {
		var v pools.NodeView
		if err := json.Unmarshal([]byte(n.mustCtl(exitOK, "nodes", "show", "edge-1", "-o", "json")), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	testnode.Eventually(t, 10*time.Second, "edge-1 listed serving", func() (bool, string) {
		out := n.mustCtl(exitOK, "nodes")
		return strings.Contains(out, "edge-1") && strings.Contains(out, "WEU") && strings.Contains(out, "serving"), out
	})
	n.mustCtl(exitUsage, "nodes", "drain", "edge-1")
	start := time.Now()
	out := n.mustCtl(exitOK, "nodes", "drain", "edge-1", "--reason", "upgrade", "--wait")
	// The node learns of the drain at its next report (within a second)
	// and reports drained at the first report after its grace: without
	// the grace, drained would come within two seconds.
	if took := time.Since(start); !strings.Contains(out, "node edge-1 drained") || took < 3*time.Second {
		t.Fatalf("drain --wait returned after %v:\n%s", took, out)
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
