package dnsserver

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math/bits"
	"net/netip"
	"sync/atomic"
)

// Response rate limiting, with the semantics operators know from BIND and
// Knot: a token bucket per (client network, answer). The network is the
// source address cut to a /24 (IPv4) or /56 (IPv6); the answer is its
// class (positive, NODATA, NXDOMAIN, referral, error), the query type and
// a name: the query name for positive and NODATA answers, the zone for
// NXDOMAIN (so random names do not make fresh buckets), the cut for a
// referral, none for errors. A bucket holds one second of responses and
// refills at the rate; once empty, every slip-th limited response goes
// out truncated (TC=1, nothing else), so a real client behind a spoofed
// address retries over TCP, and the others are dropped. TCP and queries
// with a valid server cookie are never limited: their source is real.
//
// The table is a fixed array of buckets indexed by a seeded hash: no
// allocation per query and bounded memory whatever the number of
// sources. A bucket taken by another key is reset for the new one (as in
// Knot), which can only let more through, never block an innocent.
// Buckets are updated with one compare-and-swap, no lock.

// RRLConfig configures response rate limiting.
type RRLConfig struct {
	// Rate is the responses per second allowed per bucket; 0 disables RRL.
	Rate int
	// Slip: every Slip-th limited response is sent truncated, the others
	// dropped; 0 never slips, 1 always does. Default (negative) 2.
	Slip int
	// IPv4Prefix and IPv6Prefix group sources into networks. Defaults 24
	// and 56.
	IPv4Prefix, IPv6Prefix int
	// Buckets is the table size, rounded up to a power of two. Default
	// 65536 (1 MiB).
	Buckets int
}

// MaxRRLRate bounds Rate: a bucket counts its tokens in 24 bits.
const MaxRRLRate = 1<<24 - 1

func (c *RRLConfig) defaults() error {
	if c.Rate < 0 || c.Rate > MaxRRLRate {
		return fmt.Errorf("rrl rate %d: want 0 (off) to %d", c.Rate, MaxRRLRate)
	}
	if c.Slip < 0 {
		c.Slip = 2
	}
	if c.Slip > 255 {
		return fmt.Errorf("rrl slip %d: want 0 to 255", c.Slip)
	}
	if c.IPv4Prefix == 0 {
		c.IPv4Prefix = 24
	}
	if c.IPv6Prefix == 0 {
		c.IPv6Prefix = 56
	}
	if c.IPv4Prefix < 1 || c.IPv4Prefix > 32 || c.IPv6Prefix < 1 || c.IPv6Prefix > 128 {
		return fmt.Errorf("rrl prefixes /%d and /%d: want 1-32 and 1-128", c.IPv4Prefix, c.IPv6Prefix)
	}
	if c.Buckets <= 0 {
		c.Buckets = 1 << 16
	}
	return nil
}

type rrlClass uint8

const (
	rrlPositive rrlClass = iota + 1
	rrlNoData
	rrlNXDomain
	rrlReferral
	rrlError
)

type rrlAction uint8

const (
	rrlPass rrlAction = iota
	rrlSlip
	rrlDrop
)

type rrlBucket struct {
	key atomic.Uint64
	// state: bits 0-31 the time (ms) the tokens were last counted at,
	// 32-55 the tokens, 56-63 limited responses since the last slip.
	state atomic.Uint64
}

type rrl struct {
	rate   uint64
	slip   uint64
	v4, v6 int
	seed   maphash.Seed
	mask   uint64
	table  []rrlBucket
}

// newRRL returns the limiter of c, nil when RRL is off.
func newRRL(c RRLConfig) *rrl {
	if c.Rate == 0 {
		return nil
	}
	n := uint64(1) << bits.Len64(uint64(c.Buckets-1))
	return &rrl{rate: uint64(c.Rate), slip: uint64(c.Slip), v4: c.IPv4Prefix, v6: c.IPv6Prefix,
		seed: maphash.MakeSeed(), mask: n - 1, table: make([]rrlBucket, n)}
}

// key hashes the bucket identity; the source is cut to its network.
func (l *rrl) key(src netip.Addr, class rrlClass, qtype uint16, name []byte) uint64 {
	var buf [1 + 2 + 16 + 255]byte
	buf[0] = byte(class)
	binary.BigEndian.PutUint16(buf[1:], qtype)
	src = src.Unmap()
	var p netip.Prefix
	if src.Is4() {
		p, _ = src.Prefix(l.v4)
	} else {
		p, _ = src.Prefix(l.v6)
	}
	a := p.Addr().As16()
	copy(buf[3:], a[:])
	n := 19 + copy(buf[19:], name)
	return maphash.Bytes(l.seed, buf[:n]) | 1 // never 0: 0 marks an unused bucket
}

// check takes a token from the bucket of key at now (ms, wrapping) and
// says what to do with the response.
func (l *rrl) check(key uint64, now uint32) rrlAction {
	b := &l.table[key&l.mask]
	for {
		old := b.state.Load()
		own := b.key.Load() == key
		last, tokens, limited := uint32(old), old>>32&0xffffff, old>>56
		if !own || old == 0 {
			last, tokens, limited = now, l.rate, 0
		} else if add := uint64(now-last) * l.rate / 1000; add > 0 {
			if tokens+add >= l.rate {
				tokens, last = l.rate, now
			} else {
				// Keep the fraction of a token not yet earned in the time.
				tokens += add
				last += uint32(add * 1000 / l.rate)
			}
		}
		act := rrlPass
		if tokens > 0 {
			tokens--
		} else {
			limited++
			act = rrlDrop
			if l.slip > 0 && limited >= l.slip {
				act, limited = rrlSlip, 0
			}
		}
		next := uint64(last) | tokens<<32 | (limited&0xff)<<56
		if next == 0 {
			next = 1 << 56 // 0 is reserved for an unused bucket
		}
		if b.state.CompareAndSwap(old, next) {
			if !own {
				b.key.Store(key)
			}
			return act
		}
	}
}

// rrlClassify places a finished reply in its RRL class and picks the name
// its bucket is keyed by.
func (b *builder) rrlClassify() (rrlClass, []byte) {
	switch {
	case b.rcode == rcodeNXDomain:
		return rrlNXDomain, b.apex
	case b.rcode != rcodeNoError:
		return rrlError, nil
	case b.cut != nil:
		return rrlReferral, b.cut.name
	case b.an == 0:
		return rrlNoData, b.r.name()
	}
	return rrlPositive, b.r.name()
}

// limit applies RRL to a finished UDP reply: nil to drop it, or the
// reply, truncated when it slips.
func (s *Server) limit(b *builder, src netip.Addr, nowMs uint32, reply []byte) []byte {
	l := s.edge.rrl
	class, name := b.rrlClassify()
	switch l.check(l.key(src, class, b.r.qtype, name), nowMs) {
	case rrlDrop:
		s.edge.m.rrlDropped.Inc()
		return nil
	case rrlSlip:
		s.edge.m.rrlSlipped.Inc()
		b.buf = b.buf[:b.qend]
		b.an, b.ns, b.ar = 0, 0, 0
		b.flags |= flagTC
		b.noOPT = true
		b.cookie = false
		b.nsid = nil
		return b.finish()
	}
	return reply
}
