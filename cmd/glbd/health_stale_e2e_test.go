package main

import (
	"slices"
	"strings"
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
	// The deadlines below bound a loaded machine's delays (checks a
	// second apart, publications, snapshots); what is asserted is the
	// order of events and, at the end, the time against n2's heartbeat.
	eventually(t, 20*time.Second, "n1 sees both nodes' checks of a", func() (bool, string) {
		ph := poolHealth(t, n1, pool)
		_, ok1 := checkBy(originOf(ph, "a"), "n1")
		_, ok2 := checkBy(originOf(ph, "a"), "n2")
		return ok1 && ok2, describeHealth(ph)
	})

	a.failFor("127.0.0.3")
	answerWithin(t, n1, 15*time.Second, "a leaves n1's answer with ENAM down and WEU up (a tie)", b.ip())

	stopping := time.Now()
	n2.stop()
	// n2's last heartbeat, as n1 reads it from the store: n2 vouched for
	// its check of a then, and the vote counts for 3 check periods after.
	// Measured from the stop instead, the bound moved with the time a
	// loaded machine takes to publish and to stop a node. An answer with
	// a counts against n1 only if its dig ended before the bound: a dig
	// started in time may reach n1 after it on a loaded machine. The
	// bound is 2.5 s, not 3: n1 counts from the newest heartbeat written,
	// and a heartbeat is stamped before its write.
	c, ok := checkBy(originOf(poolHealth(t, n1, pool), "a"), "n2")
	if !ok {
		t.Fatal("n2's check of a left n1's view as soon as n2 stopped")
	}
	last := c.CheckedAt
	fresh := last.Add(2500 * time.Millisecond)
	for time.Now().Before(fresh) {
		got, status := dig(t, n1.dns, "www.glb.example.com", "A")
		if at := time.Now(); at.Before(fresh) && slices.Contains(got, a.ip()) {
			t.Fatalf("a back in n1's answer %v after n2's last heartbeat (%s %s); n2's vote counts for 3 s", at.Sub(last), status, strings.Join(got, ","))
		}
		time.Sleep(20 * time.Millisecond)
	}
	answerWithin(t, n1, 15*time.Second, "a back in n1's answer once n2's vote has expired", a.ip(), b.ip())
	t.Logf("n2 stopped → its vote expired on n1 in %v, %v after its last heartbeat",
		time.Since(stopping).Round(time.Millisecond), time.Since(last).Round(time.Millisecond))
}
