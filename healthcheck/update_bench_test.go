package healthcheck

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/glb-dns/glb/pools"
)

// estate is pools of 64 origins under one http monitor, as bench/checker
// builds it.
func estate(numPools int) *pools.Config {
	m := pools.DefaultMonitor()
	m.ID, m.Port = "m", 8080
	cfg := &pools.Config{Monitors: []pools.Monitor{m}}
	for i := range numPools {
		pl := pools.DefaultPool()
		pl.ID, pl.Name, pl.Monitor = fmt.Sprintf("p%d", i), fmt.Sprintf("p%d", i), "m"
		for j := range 64 {
			o := pools.DefaultOrigin()
			o.Name, o.Address = fmt.Sprintf("o%d", j), fmt.Sprintf("127.2.0.%d", j+1)
			pl.Origins = append(pl.Origins, o)
		}
		cfg.Pools = append(cfg.Pools, pl)
	}
	return cfg
}

func BenchmarkUpdateUnchanged(b *testing.B) {
	cfg := estate(1600)
	c := New(Options{})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c.Update(cfg)
	runtime.GC()
	runtime.ReadMemStats(&after)
	perPair := float64(after.HeapAlloc-before.HeapAlloc) / float64(len(c.pairs))
	for b.Loop() {
		c.Update(cfg)
	}
	b.ReportMetric(perPair, "heapB/pair")
}
