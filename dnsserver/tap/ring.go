package tap

import (
	"net/netip"
	"sync/atomic"
	"time"
)

// maxExchange is the most a cell holds, query and reply together. UDP
// exchanges fit (the server answers at most 1232 bytes there unless the
// client asks for more); a larger one is not tapped, and counted.
const maxExchange = 4096

// cell is one tapped exchange. seq says whose turn it is (Vyukov's
// bounded queue): pos when free for the producer that claims pos,
// pos+1 once written and ready for the consumer.
type cell struct {
	seq        atomic.Uint64
	qlen, rlen int
	data       [maxExchange]byte // the query, then the reply
	src        netip.Addr
	tcp        bool
	qt, rt     time.Time
}

// ring is a bounded multi-producer, single-consumer queue of cells that
// takes no lock: the answer path claims a cell with one compare-and-swap,
// or finds the ring full and drops. Its memory is fixed when it is made.
type ring struct {
	cells []cell
	mask  uint64
	head  atomic.Uint64 // next position a producer claims
	tail  uint64        // next position the consumer reads (its own)
}

func newRing(size int) *ring {
	n := 1
	for n < size {
		n <<= 1
	}
	r := &ring{cells: make([]cell, n), mask: uint64(n - 1)}
	for i := range r.cells {
		r.cells[i].seq.Store(uint64(i))
	}
	return r
}

// put copies one exchange into the ring, with the time it is copied as
// the reply's; false when the ring is full or the exchange too large, and
// nothing was copied. The clock is read only for a cell taken: a full
// ring costs a drop little.
func (r *ring) put(query, reply []byte, src netip.Addr, tcp bool, qt time.Time) bool {
	if len(query)+len(reply) > maxExchange {
		return false
	}
	for {
		pos := r.head.Load()
		c := &r.cells[pos&r.mask]
		switch seq := c.seq.Load(); {
		case seq == pos:
			if !r.head.CompareAndSwap(pos, pos+1) {
				continue // another producer took pos
			}
			c.qlen = copy(c.data[:], query)
			c.rlen = copy(c.data[c.qlen:], reply)
			c.src, c.tcp, c.qt, c.rt = src, tcp, qt, time.Now()
			c.seq.Store(pos + 1)
			return true
		case seq < pos:
			return false // full: the consumer has not freed this cell yet
		}
		// seq > pos: head moved on since it was read; read it again.
	}
}

func (c *cell) query() []byte { return c.data[:c.qlen] }
func (c *cell) reply() []byte { return c.data[c.qlen : c.qlen+c.rlen] }

// get returns the next written cell, or nil when there is none; done
// hands it back to the producers.
func (r *ring) get() *cell {
	c := &r.cells[r.tail&r.mask]
	if c.seq.Load() != r.tail+1 {
		return nil
	}
	return c
}

func (r *ring) done(c *cell) {
	c.seq.Store(r.tail + r.mask + 1)
	r.tail++
}
