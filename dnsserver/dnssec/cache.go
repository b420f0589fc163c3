package dnssec

import (
	"hash/maphash"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"

	"github.com/glb-dns/glb/zonekeys"
)

// Counter is the part of a Prometheus counter the cache uses.
type Counter interface{ Inc() }

type nopCounter struct{}

func (nopCounter) Inc() {}

// Counters receive the cache's events.
type Counters struct {
	// Hits: signatures served from the cache.
	Hits Counter
	// Signed: signatures made.
	Signed Counter
	// Failed: signing failures (the RRset is then served unsigned).
	Failed Counter
}

// Cache holds signatures by RRset so that common answers are signed once.
// It is a fixed array of slots, two-way set associative, read and written
// with atomic pointer operations: the answer path takes no lock and a hit
// allocates nothing. Its memory is bounded by its slot count: each slot
// holds at most one signature record (under 400 bytes).
//
// A slot is found by a 128-bit hash of the signing key, the owner and the
// records, combined so that the order of the records does not matter
// (RRSIG covers the canonical order, the answer may have another). Two
// RRsets colliding on 128 bits of a per-process seeded hash would serve a
// signature that fails validation, never a forged one.
type Cache struct {
	slots        []atomic.Pointer[entry]
	mask         uint64
	seed1, seed2 maphash.Seed
	pol          Policy
	c            Counters
}

type entry struct {
	h1, h2  uint64
	refresh int64 // unix seconds after which the signature is made anew
	sig     []byte
}

// NewCache makes a cache of at least entries slots (a power of two; default
// 65536). Counters left nil count nothing.
func NewCache(entries int, pol Policy, c Counters) *Cache {
	if entries <= 0 {
		entries = 1 << 16
	}
	n := 2
	for n < entries {
		n <<= 1
	}
	if c.Hits == nil {
		c.Hits = nopCounter{}
	}
	if c.Signed == nil {
		c.Signed = nopCounter{}
	}
	if c.Failed == nil {
		c.Failed = nopCounter{}
	}
	return &Cache{
		slots: make([]atomic.Pointer[entry], n), mask: uint64(n - 1),
		seed1: maphash.MakeSeed(), seed2: maphash.MakeSeed(), pol: pol.withDefaults(), c: c,
	}
}

const mix = 0x9e3779b97f4a7c15

// key hashes (signing key, owner, records); the record hashes are summed
// so that their order does not count.
func (c *Cache) key(k *Key, owner []byte, tails [][]byte) (uint64, uint64) {
	h1 := (maphash.Bytes(c.seed1, owner) ^ k.id) * mix
	h2 := (maphash.Bytes(c.seed2, owner) + k.id) * mix
	for _, t := range tails {
		h1 += maphash.Bytes(c.seed1, t)
		h2 += maphash.Bytes(c.seed2, t) * mix
	}
	return h1, h2
}

// Sign returns the RRSIG made by k over the RRset of owner (lower-case
// wire name) and tails (each type, class, TTL, rdlength, rdata; one type
// and TTL), as a record tail to write after the owner. It returns nil when
// signing fails (counted); the caller then serves the RRset unsigned.
func (c *Cache) Sign(z *Zone, k *Key, owner []byte, tails [][]byte, now time.Time) []byte {
	if len(tails) == 0 {
		return nil
	}
	h1, h2 := c.key(k, owner, tails)
	i := h1 & c.mask
	unix := now.Unix()
	e0, e1 := c.slots[i].Load(), c.slots[i^1].Load()
	if e0 != nil && e0.h1 == h1 && e0.h2 == h2 && unix < e0.refresh {
		c.c.Hits.Inc()
		return e0.sig
	}
	if e1 != nil && e1.h1 == h1 && e1.h2 == h2 && unix < e1.refresh {
		c.c.Hits.Inc()
		return e1.sig
	}
	sig, refresh, err := c.sign(z, k, owner, tails, now)
	if err != nil {
		c.c.Failed.Inc()
		return nil
	}
	c.c.Signed.Inc()
	// Replace the slot that is empty, expired or to be refreshed first.
	slot := i
	if e0 != nil && (e1 == nil || e1.refresh < e0.refresh) {
		slot = i ^ 1
	}
	c.slots[slot].Store(&entry{h1: h1, h2: h2, refresh: refresh, sig: sig})
	return sig
}

// sign makes the signature with miekg/dns, off the fast path: the RRset is
// unpacked into records, signed (miekg puts them in canonical form and
// order) and the RRSIG packed back.
func (c *Cache) sign(z *Zone, k *Key, owner []byte, tails [][]byte, now time.Time) ([]byte, int64, error) {
	rrs := make([]dns.RR, len(tails))
	buf := make([]byte, 0, 512)
	for i, t := range tails {
		buf = append(append(buf[:0], owner...), t...)
		rr, _, err := dns.UnpackRR(buf, 0)
		if err != nil {
			return nil, 0, err
		}
		rrs[i] = rr
	}
	p := c.pol
	exp := now.Add(p.Validity)
	if p.Jitter > 0 {
		exp = exp.Add(rand.N(p.Jitter))
	}
	sig := &dns.RRSIG{
		Hdr:       dns.RR_Header{Ttl: rrs[0].Header().Ttl},
		Algorithm: zonekeys.Algorithm, KeyTag: k.Tag, SignerName: z.signerName,
		Inception: uint32(now.Add(-p.Backdate).Unix()), Expiration: uint32(exp.Unix()),
	}
	if err := sig.Sign(k.signer, rrs); err != nil {
		return nil, 0, err
	}
	t, err := tail(sig)
	if err != nil {
		return nil, 0, err
	}
	return t, exp.Add(-p.Refresh).Unix(), nil
}
