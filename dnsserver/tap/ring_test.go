package tap

import (
	"encoding/binary"
	"net/netip"
	"sync"
	"testing"
	"time"
)

// TestRingKeepsEveryExchangeWhole: producers racing for cells never lose,
// repeat or mix an exchange while the ring has room, and a full ring
// refuses instead of overwriting.
func TestRingKeepsEveryExchangeWhole(t *testing.T) {
	const producers, each = 4, 256 // fills a ring of 1024 exactly
	r := newRing(producers * each)
	src := netip.MustParseAddr("192.0.2.1")
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				q := binary.BigEndian.AppendUint32(nil, uint32(p*each+i))
				if !r.put(q, append(q, q...), src, false, time.Time{}) {
					t.Errorf("put %d refused with room left", p*each+i)
				}
			}
		}()
	}
	wg.Wait()
	if r.put([]byte{1}, nil, src, false, time.Time{}) {
		t.Error("a full ring took one more")
	}
	seen := map[uint32]bool{}
	for c := r.get(); c != nil; c = r.get() {
		q, rep := c.query(), c.reply()
		if len(rep) != 8 || string(rep[:4]) != string(q) || string(rep[4:]) != string(q) {
			t.Fatalf("reply %x does not belong to query %x", rep, q)
		}
		seen[binary.BigEndian.Uint32(q)] = true
		r.done(c)
	}
	if len(seen) != producers*each {
		t.Errorf("%d distinct exchanges read, want %d", len(seen), producers*each)
	}
	if !r.put([]byte{1}, nil, src, false, time.Time{}) {
		t.Error("an emptied ring refused")
	}
}

// TestOfferSamplesOneInN: one exchange in Sample per counter reaches the
// ring; too large ones are counted, not copied.
func TestOfferSamplesOneInN(t *testing.T) {
	tp := &Tap{sample: 10, ring: newRing(64)}
	tp.dropped, tp.oversize, tp.sent = newCounter(), newCounter(), newCounter()
	var count uint32
	for range 95 {
		tp.Offer(&count, []byte("q"), []byte("r"), netip.MustParseAddr("192.0.2.1"), false, time.Now())
	}
	n := 0
	for c := tp.ring.get(); c != nil; c = tp.ring.get() {
		n++
		tp.ring.done(c)
	}
	if n != 9 {
		t.Errorf("%d of 95 tapped at one in 10, want 9", n)
	}
	big := make([]byte, maxExchange)
	for range 10 {
		tp.Offer(&count, []byte("q"), big, netip.MustParseAddr("192.0.2.1"), false, time.Now())
	}
	if got := counterValue(tp.oversize); got != 1 {
		t.Errorf("oversize %v, want 1", got)
	}
}
