package analytics

import (
	"encoding/binary"
	"hash/fnv"
	"net/netip"
	"sync/atomic"
	"time"
)

// DefaultSampleSize and DefaultSampleEvery are the sample's bounds when
// made with 0: 65,536 queries of 48 bytes (3 MiB), one query in 100.
const (
	DefaultSampleSize  = 1 << 16
	DefaultSampleEvery = 100
)

// Sample is a ring of recent load balancer queries, one in Every of each
// answering goroutine: their load balancer, client subnet and type, what
// the traffic preview replays. The answer path writes a slot with atomic
// stores and no lock; a reader that meets a slot being written skips it.
type Sample struct {
	every uint32
	slots []sampleSlot
	mask  uint64
	head  atomic.Uint64
}

// sampleSlot holds one query: seq is odd while it is written (a
// sequence lock), w the query packed (sampleSlot.put).
type sampleSlot struct {
	seq atomic.Uint64
	w   [5]atomic.Uint64
}

// SampledQuery is one query of the sample.
type SampledQuery struct {
	At time.Time
	// LB is LBKey of the load balancer's id.
	LB uint64
	// Subnet is the client subnet steering used, at most a /24 or /56.
	Subnet netip.Prefix
	Type   uint16
}

// NewSample makes a sample of size queries (a power of two; 0:
// DefaultSampleSize) keeping one in every (0: DefaultSampleEvery).
func NewSample(size, every int) *Sample {
	if size <= 0 {
		size = DefaultSampleSize
	}
	if every <= 0 {
		every = DefaultSampleEvery
	}
	n := 1
	for n < size {
		n <<= 1
	}
	return &Sample{every: uint32(every), slots: make([]sampleSlot, n), mask: uint64(n - 1)}
}

// Bytes is the sample's memory: its bound.
func (s *Sample) Bytes() int { return len(s.slots) * 48 }

// LBKey is the sample's key of a load balancer id: a 64-bit FNV-1a hash,
// computed when a snapshot is compiled, so that the answer path copies a
// number rather than a string.
func LBKey(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64()
}

// Offer keeps the query when it is the one in Every that count (the
// caller's, one per answering goroutine) says. No lock, no allocation.
func (s *Sample) Offer(count *uint32, now time.Time, lb uint64, subnet netip.Prefix, qtype uint16) {
	*count++
	if *count < s.every {
		return
	}
	*count = 0
	bits := subnet.Bits()
	if subnet.Addr().Is4() {
		bits = min(bits, 24)
	} else {
		bits = min(bits, 56)
	}
	subnet, _ = subnet.Addr().Prefix(bits)
	a := subnet.Addr().As16()
	e := &s.slots[(s.head.Add(1)-1)&s.mask]
	e.seq.Add(1)
	e.w[0].Store(uint64(now.Unix()))
	e.w[1].Store(lb)
	e.w[2].Store(binary.BigEndian.Uint64(a[:8]))
	e.w[3].Store(binary.BigEndian.Uint64(a[8:]))
	var v4 uint64
	if subnet.Addr().Is4() {
		v4 = 1
	}
	e.w[4].Store(uint64(qtype) | uint64(uint8(bits))<<16 | v4<<24)
	e.seq.Add(1)
}

// Recent returns the queries sampled at or after since, oldest first
// within the ring's order.
func (s *Sample) Recent(since time.Time) []SampledQuery {
	var out []SampledQuery
	for i := range s.slots {
		e := &s.slots[i]
		seq := e.seq.Load()
		if seq == 0 || seq%2 == 1 {
			continue // never written, or being written
		}
		var w [5]uint64
		for j := range w {
			w[j] = e.w[j].Load()
		}
		if e.seq.Load() != seq {
			continue
		}
		at := time.Unix(int64(w[0]), 0)
		if at.Before(since) {
			continue
		}
		var a [16]byte
		binary.BigEndian.PutUint64(a[:8], w[2])
		binary.BigEndian.PutUint64(a[8:], w[3])
		addr := netip.AddrFrom16(a)
		if w[4]>>24&1 == 1 {
			addr = addr.Unmap()
		}
		out = append(out, SampledQuery{At: at, LB: w[1], Subnet: netip.PrefixFrom(addr, int(uint8(w[4]>>16))), Type: uint16(w[4])})
	}
	return out
}
