package main

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/glb-dns/glb/internal/testnode"
)

// regionalOrigin answers health checks with a delay that depends on the
// check's source address: how far the origin is from each node's region.
type regionalOrigin struct {
	delay map[string]time.Duration
}

func (o regionalOrigin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	src, _, _ := net.SplitHostPort(r.RemoteAddr)
	select {
	case <-time.After(o.delay[src]):
	case <-r.Context().Done():
	}
}

// TestDynamicLatencyEachNodeUsesItsOwnRegion: two nodes in different
// regions on one PostgreSQL, each measuring the origins from its own
// source address; a client of unknown location is steered by the RTT seen
// from the answering node's region, so each node answers a different pool,
// and explain says which region's RTT was used and why.
func TestDynamicLatencyEachNodeUsesItsOwnRegion(t *testing.T) {
	t.Parallel()
	const weu, enam = "127.0.0.2", "127.0.0.3" // the nodes' check sources
	delays := map[string]map[string]time.Duration{
		"127.0.5.1": {weu: 0, enam: 150 * time.Millisecond},                      // near WEU
		"127.0.5.2": {weu: 150 * time.Millisecond, enam: 0},                      // near ENAM
		"127.0.5.3": {weu: 250 * time.Millisecond, enam: 250 * time.Millisecond}, // far from both
	}
	ips := []string{"127.0.5.1", "127.0.5.2", "127.0.5.3"}
	lns := testnode.SharedPort(t, ips...)
	for i, ln := range lns {
		srv := &http.Server{Handler: regionalOrigin{delays[ips[i]]}, ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
	}
	portNum := lns[0].Addr().(*net.TCPAddr).Port
	url := freshDatabase(t)
	a := startGlbd(t, "", "--database-url", url, "--node", "a", "--region", "WEU", "--check-source", weu)
	b := startGlbd(t, "", "--database-url", url, "--node", "b", "--region", "ENAM", "--check-source", enam, "--migrate=false")
	zone := zoneFor(t, a)
	mon := a.must("POST", "/api/v1/monitors", map[string]any{
		"type": "http", "path": "/", "port": portNum, "expected_codes": "200",
		"interval": 1, "timeout": 1, "retries": 0,
	})["id"].(string)
	pool := func(name, ip string) string {
		return a.must("POST", "/api/v1/pools", map[string]any{"name": name, "monitor": mon,
			"origins": []map[string]any{{"name": name, "address": ip}}})["id"].(string)
	}
	far := pool("far", "127.0.5.3")
	lb := a.must("POST", "/api/v1/load_balancers", map[string]any{
		"zone": zone, "name": "www.glb.example.com", "steering_policy": "dynamic_latency",
		"default_pools": []any{far, pool("eu", "127.0.5.1"), pool("us", "127.0.5.2")}, "fallback_pool": far,
	})["id"].(string)

	// dig asks from 127.0.0.1: no GeoIP database, no operator network, so
	// the client's location is unknown on both nodes.
	for _, tc := range []struct {
		g            *glbd
		region, want string
	}{{a, "WEU", "127.0.5.1"}, {b, "ENAM", "127.0.5.2"}} {
		took := eventually(t, 15*time.Second, "node in "+tc.region+" answers the pool nearest its region", func() (bool, string) {
			got, status := dig(t, tc.g.dns, "www.glb.example.com", "A")
			return status == "NOERROR" && len(got) == 1 && got[0] == tc.want, status + " " + strings.Join(got, ",")
		})
		t.Logf("node in %s answers %s after %v", tc.region, tc.want, took.Round(time.Millisecond))
		e := explain(t, tc.g, lb, "127.0.0.1")
		rtt := e.Decision.RTT
		wantReason := "client location unknown: this node's region (--region) " + tc.region
		if e.Decision.Client.Known || rtt == nil || rtt.Region != tc.region || rtt.Reason != wantReason {
			t.Errorf("explain on the %s node: client known=%t, rtt %+v; want region %s, reason %q", tc.region, e.Decision.Client.Known, rtt, tc.region, wantReason)
		}
	}
}
