package analytics

import (
	"net/netip"
	"testing"
	"time"
)

// BenchmarkAnswerPath is what counting and sampling add to one answer:
// the key (region and country looked up), the add into a claimed cell,
// and the sample's offer, one in 100 kept (the defaults) and every one
// kept. The handler's own figure is BenchmarkHandler in dnsserver.
func BenchmarkAnswerPath(b *testing.B) {
	now := time.Now()
	subnet := netip.MustParsePrefix("198.51.100.0/24")
	for _, bc := range []struct {
		name  string
		every int
	}{{"count", 0}, {"count-sample-1in100", 100}, {"count-sample-every", 1}} {
		b.Run(bc.name, func(b *testing.B) {
			c := NewCounts(0)
			var s *Sample
			if bc.every > 0 {
				s = NewSample(0, bc.every)
			}
			var n uint32
			b.ReportAllocs()
			for b.Loop() {
				k := Key(1, 3, 0, 1, RegionIndex("WEU"), CountryIndex("DE"))
				c.Add(now, WithRcode(k, 0))
				if s != nil {
					s.Offer(&n, now, 42, subnet, 1)
				}
			}
		})
	}
}

// TestCountsFullTable: a table with no cell left counts an answer
// under its cell without a place when that cell is there, else not at
// all, and says so.
func TestCountsFullTable(t *testing.T) {
	c := NewCounts(2)
	now := time.Now()
	c.Add(now, Key(0, 0, 0, 0, 1, 1))
	c.Add(now, Key(0, 0, 0, 0, 0, 0))
	c.Add(now, Key(0, 0, 0, 0, 2, 2)) // full: counted without WEU/DE's place
	c.Add(now, Key(0, 1, 0, 0, 0, 0)) // full, and no placeless cell: lost
	if c.Placeless() != 1 || c.Lost() != 1 {
		t.Fatalf("%d placeless, %d lost; want 1 and 1", c.Placeless(), c.Lost())
	}
	rows := c.Drain(Bucket(now))
	if len(rows) != 0 {
		t.Errorf("rows named without a registered snapshot: %v", rows)
	}
	// Drained, the cells are free again, and one key takes one cell
	// however often it counts.
	for i := range 2 {
		for range 5 {
			c.Add(now, Key(0, 2+i, 0, 0, 0, 0))
		}
	}
	if c.Lost() != 1 {
		t.Errorf("two keys five times each in a drained table of two cells: %d more lost", c.Lost()-1)
	}
}
