package main

import (
	"strings"
	"testing"
	"time"
)

const impactConfig = `zones:
  - {id: example, name: glb.example.com, nameservers: [ns1.glb.example.com], soa: {rname: hostmaster.example.com},
     records: [{name: ns1.glb.example.com, type: A, content: 127.0.0.1}]}
pools:
  - {id: eu, name: eu, enabled: %s, origins: [{name: a, address: 192.0.2.1}]}
  - {id: us, name: us, origins: [{name: b, address: 192.0.2.2}]}
load_balancers:
  - {id: www, zone: example, name: www.glb.example.com, default_pools: [eu, us], fallback_pool: us}
`

// TestDiffRealTrafficImpact: diff says what a file would do to the real
// traffic of the load balancers it touches, from the queries the node
// sampled: nothing sampled yet, then the share moved from pool to pool.
func TestDiffRealTrafficImpact(t *testing.T) {
	t.Parallel()
	n := startNode(t, "--sample-every", "1")
	n.mustCtl(exitOK, "apply", "-f", writeFile(t, "glb.yaml", strings.Replace(impactConfig, "%s", "true", 1)))
	edit := writeFile(t, "edit.yaml", strings.Replace(impactConfig, "%s", "false", 1))
	if out := n.mustCtl(exitDiffers, "diff", "-f", edit); !strings.Contains(out, "load_balancers/www (www.glb.example.com): no real traffic sampled in the last hour to preview") {
		t.Errorf("diff before any query:\n%s", out)
	}
	for range 5 {
		n.dig("www.glb.example.com", "A")
	}
	eventually(t, 100*time.Second, "the node wrote its sample and diff replays it", func() (bool, string) {
		out := n.mustCtl(exitDiffers, "diff", "-f", edit)
		return strings.Contains(out, "load_balancers/www (www.glb.example.com): this edit moves 100 % of real answers from pool eu to pool us (5 sampled queries of the last hour)"), out
	})
}
