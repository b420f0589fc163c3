package pools

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// BenchmarkVersionsOf: the history of one load balancer among 100, with
// 1,000 pools and 10,000 audited pool writes, as GET .../versions reads it
// (the store's reads aside).
func BenchmarkVersionsOf(b *testing.B) {
	cfg := &Config{Revision: 10_000}
	for i := range 1000 {
		p := DefaultPool()
		p.ID, p.Name = fmt.Sprintf("p%d", i), fmt.Sprintf("p%d", i)
		p.Origins = []Origin{{Name: "a", Address: "192.0.2.1", Enabled: true, Weight: 1}}
		cfg.Pools = append(cfg.Pools, p)
	}
	for i := range 100 {
		l := DefaultLoadBalancer()
		l.ID, l.Name, l.DefaultPools, l.FallbackPool = fmt.Sprintf("l%d", i), fmt.Sprintf("l%d.example.com", i), []string{fmt.Sprintf("p%d", i*10)}, fmt.Sprintf("p%d", i*10+1)
		cfg.LoadBalancers = append(cfg.LoadBalancers, l)
	}
	var entries []AuditEntry
	for rev := int64(1); rev <= cfg.Revision; rev++ {
		p := cfg.Pools[int(rev)%len(cfg.Pools)]
		raw, _ := json.Marshal(p)
		entries = append(entries, AuditEntry{ID: rev, Revision: rev, Time: time.Unix(rev, 0), Actor: "ci", Action: ActionUpdate,
			Kind: KindPool, ObjectID: p.ID, Before: raw, After: raw})
	}
	b.ReportAllocs()
	for b.Loop() {
		vs, err := versionsOf(cfg, entries, "l7")
		if err != nil || len(vs) != 20 {
			b.Fatalf("%d versions, %v", len(vs), err)
		}
	}
}
