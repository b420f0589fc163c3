package tap

import (
	"net/netip"
	"testing"
	"time"
)

// BenchmarkOffer is the answer path's cost of tapping: a query sampled
// out, one copied into the ring (a DNS-sized exchange), and one dropped
// because the ring is full (a reader that never reads).
func BenchmarkOffer(b *testing.B) {
	src := netip.MustParseAddr("192.0.2.1")
	q, r := make([]byte, 60), make([]byte, 120)
	now := time.Now()
	for _, bc := range []struct {
		name   string
		sample uint32
		full   bool
	}{{"sampled-out", 1 << 30, false}, {"copied", 1, false}, {"dropped", 1, true}} {
		b.Run(bc.name, func(b *testing.B) {
			t := &Tap{sample: bc.sample, ring: newRing(1024), dropped: newCounter(), oversize: newCounter(), sent: newCounter()}
			if bc.full {
				for t.ring.put(q, r, src, false, now) {
				}
			}
			var count uint32
			b.ReportAllocs()
			for b.Loop() {
				t.Offer(&count, q, r, src, false, now)
				if !bc.full {
					if c := t.ring.get(); c != nil {
						t.ring.done(c)
					}
				}
			}
		})
	}
}
