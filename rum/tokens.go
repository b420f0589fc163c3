package rum

import (
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/glb-dns/glb/pools"
)

// MaxTokenLen is the longest beacon token (a DNS label of [a-z0-9]).
const MaxTokenLen = 40

// MinTokenLen is the shortest: shorter names are not a beacon's.
const MinTokenLen = 8

// Tokens is a fixed ring of the beacon names DNS was asked for: the DNS
// answer path records (token, resolver) in it without a lock or an
// allocation, and a writer drains it to the store. Every field is an
// atomic and each slot carries the sequence number that wrote it, read
// before and after the fields (a seqlock), so that a slot overwritten
// while it is read is skipped rather than read torn. A burst larger than
// the ring between two drains loses the oldest names: a token is a
// hint, not a record anyone needs.
type Tokens struct {
	head  atomic.Uint64
	read  uint64 // the drainer's alone
	slots []slot
	mask  uint64
}

type slot struct {
	seq  atomic.Uint64
	n    atomic.Uint32
	tok  [MaxTokenLen / 8]atomic.Uint64
	addr [2]atomic.Uint64
	v4   atomic.Bool
	at   atomic.Int64
}

// NewTokens makes a ring of n slots (rounded up to a power of two).
func NewTokens(n int) *Tokens {
	size := 1
	for size < n {
		size <<= 1
	}
	return &Tokens{slots: make([]slot, size), mask: uint64(size - 1)}
}

// TokenOK reports whether label can be a beacon token: [a-z0-9], 8 to
// 40 characters (lower case: DNS names arrive lower-cased).
func TokenOK(label []byte) bool {
	if len(label) < MinTokenLen || len(label) > MaxTokenLen {
		return false
	}
	for _, c := range label {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// See records that resolver asked for token at now (unix nanoseconds).
// It takes no lock and allocates nothing: the DNS answer path calls it.
func (t *Tokens) See(token []byte, resolver netip.Addr, now int64) {
	if !TokenOK(token) {
		return
	}
	i := t.head.Add(1)
	s := &t.slots[i&t.mask]
	s.seq.Store(0) // being written
	var words [MaxTokenLen / 8]uint64
	for j, c := range token {
		words[j/8] |= uint64(c) << (8 * (j % 8))
	}
	for j := range words {
		s.tok[j].Store(words[j])
	}
	s.n.Store(uint32(len(token)))
	resolver = resolver.Unmap()
	b := resolver.As16()
	s.addr[0].Store(beUint64(b[:8]))
	s.addr[1].Store(beUint64(b[8:]))
	s.v4.Store(resolver.Is4())
	s.at.Store(now)
	s.seq.Store(i)
}

func beUint64(b []byte) uint64 {
	var v uint64
	for _, c := range b[:8] {
		v = v<<8 | uint64(c)
	}
	return v
}

// Drain returns the names seen since the last Drain, each resolver cut
// to its network. One goroutine drains.
func (t *Tokens) Drain() []pools.RUMToken {
	head := t.head.Load()
	from := t.read + 1
	if head >= uint64(len(t.slots)) && from <= head-uint64(len(t.slots)) {
		from = head - uint64(len(t.slots)) + 1 // overwritten meanwhile
	}
	var out []pools.RUMToken
	for i := from; i <= head; i++ {
		s := &t.slots[i&t.mask]
		if s.seq.Load() != i {
			continue
		}
		n := int(s.n.Load())
		var tok [MaxTokenLen]byte
		for j := range n {
			tok[j] = byte(s.tok[j/8].Load() >> (8 * (j % 8)))
		}
		var b [16]byte
		hi, lo := s.addr[0].Load(), s.addr[1].Load()
		for j := range 8 {
			b[j] = byte(hi >> (56 - 8*j))
			b[8+j] = byte(lo >> (56 - 8*j))
		}
		a := netip.AddrFrom16(b)
		if s.v4.Load() {
			a = a.Unmap()
		}
		at := s.at.Load()
		if s.seq.Load() != i {
			continue // overwritten while read
		}
		out = append(out, pools.RUMToken{Token: string(tok[:n]), Resolver: Network(a), Seen: time.Unix(0, at).UTC()})
	}
	t.read = head
	return out
}
