package dnssec

import (
	"encoding/binary"
	"runtime"
	"testing"
	"time"
)

// BenchmarkSignMiss is the cost of making one signature (a cache miss):
// what a query for a never-seen RRset pays, NXDOMAIN for a random name
// included.
func BenchmarkSignMiss(b *testing.B) {
	z, _ := newZone(b)
	c := NewCache(1<<16, Policy{}, Counters{})
	owner := wire(b, "www.signed.example")
	a := tails(b, "x. 30 IN A 192.0.2.1")
	now := time.Now()
	var i uint32
	b.ReportAllocs()
	for b.Loop() {
		i++
		binary.BigEndian.PutUint32(a[0][10:], i) // another address: another RRset
		if c.Sign(z, z.Active, owner, a, now) == nil {
			b.Fatal("no signature")
		}
	}
}

// BenchmarkSignHit is the cost of a cached signature.
func BenchmarkSignHit(b *testing.B) {
	z, _ := newZone(b)
	c := NewCache(1<<16, Policy{}, Counters{})
	owner := wire(b, "www.signed.example")
	a := tails(b, "x. 30 IN A 192.0.2.1", "x. 30 IN A 192.0.2.2")
	now := time.Now()
	c.Sign(z, z.Active, owner, a, now)
	b.ReportAllocs()
	for b.Loop() {
		c.Sign(z, z.Active, owner, a, now)
	}
}

// BenchmarkCacheMemory fills a default-sized cache (65,536 slots) with
// twice as many distinct RRsets as it has slots and reports the heap
// it holds: the bound does not move with the number of RRsets signed.
func BenchmarkCacheMemory(b *testing.B) {
	z, _ := newZone(b)
	owner := wire(b, "a-typical-load-balancer-name.signed.example")
	a := tails(b, "x. 30 IN A 192.0.2.1")
	now := time.Now()
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		c := NewCache(0, Policy{}, Counters{})
		for i := range 2 * c.Slots() {
			binary.BigEndian.PutUint32(a[0][10:], uint32(i))
			c.Sign(z, z.Active, owner, a, now)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		held := 0
		for i := range c.slots {
			if c.slots[i].Load() != nil {
				held++
			}
		}
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MiB-held")
		b.ReportMetric(float64(held), "entries")
		runtime.KeepAlive(c)
	}
}
