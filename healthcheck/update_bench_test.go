package healthcheck

import (
	"runtime"
	"testing"

	"github.com/glb-dns/glb/pools"
)

// BenchmarkUpdateUnchanged: the node hands the checker every new
// configuration; with 102,400 origins, one that leaves every check as it
// was must cost little. heapB/pair is what a checked origin holds.
func BenchmarkUpdateUnchanged(b *testing.B) {
	m := pools.DefaultMonitor()
	m.ID, m.Port = "m", 8080
	cfg := estateAt(m, "127.0.0.1", 1600, 64)
	c := New(Options{})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c.Update(cfg)
	runtime.GC()
	runtime.ReadMemStats(&after)
	perPair := float64(after.HeapAlloc-before.HeapAlloc) / float64(len(c.watches))
	for b.Loop() {
		c.Update(cfg)
	}
	b.ReportMetric(perPair, "heapB/pair")
}
