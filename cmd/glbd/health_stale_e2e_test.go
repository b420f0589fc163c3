package main

import (
	"testing"
	"time"
)

// TestHealthVotesOfAStoppedNodeExpire: two nodes in two regions on one
// database. n2's checks fail an origin, n1's pass: 1 of 2 regions is a
// tie, so the origin is down on both. Once n2 stops, its heartbeats stop:
// n1 keeps counting n2's vote for 3 check periods after the last one
// (not at once), then drops it and answers the origin again.
func TestHealthVotesOfAStoppedNodeExpire(t *testing.T) {
	t.Parallel()
	origins := startOrigins(t, "127.0.6.1", "127.0.6.2")
	a, b := origins[0], origins[1]
	url := freshDatabase(t)
	n1 := startGlbd(t, "", "--database-url", url, "--node", "n1", "--region", "WEU", "--check-source", "127.0.0.2")
	n2 := startGlbd(t, "", "--database-url", url, "--node", "n2", "--region", "ENAM", "--check-source", "127.0.0.3", "--migrate=false")
	zone := zoneFor(t, n1)
	mon := fastMonitor(t, n1, a.port()) // interval 1 s, timeout 1 s, no retry: a window of 3 s
	pool := n1.must("POST", "/api/v1/pools", map[string]any{"name": "web", "monitor": mon, "origins": []map[string]any{
		{"name": "a", "address": a.ip()}, {"name": "b", "address": b.ip()},
	}})["id"].(string)
	n1.must("POST", "/api/v1/load_balancers", map[string]any{
		"zone": zone, "name": "www.glb.example.com", "default_pools": []any{pool}, "fallback_pool": pool, "answers": 0,
	})
	eventually(t, 8*time.Second, "n1 sees both nodes' checks of a", func() (bool, string) {
		ph := poolHealth(t, n1, pool)
		_, ok1 := checkBy(originOf(ph, "a"), "n1")
		_, ok2 := checkBy(originOf(ph, "a"), "n2")
		return ok1 && ok2, describeHealth(ph)
	})

	a.failFor("127.0.0.3")
	answerWithin(t, n1, 6*time.Second, "a leaves n1's answer with ENAM down and WEU up (a tie)", b.ip())

	n2.stop()
	stopped := time.Now()
	answerWithin(t, n1, 8*time.Second, "a back in n1's answer once n2's vote has expired", a.ip(), b.ip())
	took := time.Since(stopped)
	t.Logf("n2 stopped → its vote expired on n1 in %v", took.Round(time.Millisecond))
	// The last heartbeat came at most a cadence (1 s) before the stop, and
	// votes count for 3 s after it.
	if took < 1500*time.Millisecond {
		t.Errorf("n2's vote dropped %v after it stopped; it should count until 3 check periods after its last heartbeat", took)
	}
}
