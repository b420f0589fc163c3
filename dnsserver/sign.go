package dnsserver

import (
	"encoding/binary"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/glb-dns/glb/dnsserver/dnssec"
	"github.com/glb-dns/glb/internal/promset"
)

// signing is what a builder needs to sign the RRsets it writes for a query
// with DO set in a signed zone. Each RRset's record tails are collected as
// they are copied into the reply; seal then appends the RRSIGs, from the
// signature cache when the same RRset was signed before.
type signing struct {
	cache *dnssec.Cache
	now   time.Time
	// sec is the signer of the zone being answered from; nil: unsigned.
	sec *dnssec.Zone
	// tails of the RRset being written, slices of the reply buffer.
	tails [][]byte
	// signed: at least one RRSIG went into the reply.
	signed bool
}

// enter makes z the zone whose RRsets are written next (a CNAME chain may
// cross zones).
func (b *builder) enter(z *zone) {
	if b.r.do && b.sig.cache != nil {
		b.sig.sec = z.sec
	}
}

// record copies a record tail into the reply and returns its offset.
func (b *builder) record(t []byte) int {
	at := len(b.buf)
	b.buf = append(b.buf, t...)
	if b.sig.sec != nil {
		b.sig.tails = append(b.sig.tails, b.buf[at:])
	}
	return at
}

// seal ends the RRset of owner (lower-case wire name) just written, in the
// answer or authority section, with its RRSIGs.
func (b *builder) seal(owner []byte, authority bool) {
	tails := b.sig.tails
	b.sig.tails = tails[:0]
	sec := b.sig.sec
	if sec == nil || len(tails) == 0 {
		return
	}
	for _, k := range sec.Signers(binary.BigEndian.Uint16(tails[0])) {
		sig := b.sig.cache.Sign(sec, k, owner, tails, b.sig.now)
		if sig == nil {
			continue // counted; the RRset goes out unsigned
		}
		b.owner(owner)
		b.buf = append(b.buf, sig...)
		if authority {
			b.ns++
		} else {
			b.an++
		}
		b.sig.signed = true
	}
}

// negative writes the authority section of a negative answer at name in
// zone z: the SOA, and in a signed answer its RRSIG and the compact-denial
// NSEC of RFC 9824 with its RRSIG. n is the node of name, nil when the
// name does not exist; a signed NXDOMAIN is answered NOERROR with NXNAME in
// the NSEC bitmap, as RFC 9824 §3 asks.
func (b *builder) negative(z *zone, name []byte, n *node) {
	b.authority(z.apex, z.negSOA)
	if b.sig.sec == nil {
		return
	}
	b.seal(z.apex, true)
	types, skip := dnssec.NXDomainTypes, uint16(0)
	if n != nil {
		types, skip = n.types, b.r.qtype
	}
	b.nsec(z, name, types, skip)
	if n == nil {
		b.rcode = rcodeNoError
	}
}

// delegationProof follows the NS RRset of a referral from a signed zone
// (RFC 4035 §3.1.4): the NS RRset is the child's and stays unsigned; the
// cut's DS RRset with its RRSIG says the child is signed, or the NSEC at
// the cut (NS, RRSIG, NSEC: no DS) proves it is not.
func (b *builder) delegationProof(z *zone, c *cut) {
	b.sig.tails = b.sig.tails[:0]
	if b.sig.sec == nil {
		return
	}
	n := z.nodes[string(c.name)]
	if ds := n.rrset(typeDS); ds != nil {
		for _, t := range ds.rrs {
			b.authority(c.name, t)
		}
		b.seal(c.name, true)
		return
	}
	b.nsec(z, c.name, n.types, typeDS)
}

// nsec writes the signed compact-denial NSEC at name into the authority
// section: types without skip, TTL that of negative answers (RFC 9077).
func (b *builder) nsec(z *zone, name []byte, types []uint16, skip uint16) {
	start := len(b.buf)
	b.owner(name)
	at := len(b.buf)
	var ok bool
	if b.buf, ok = dnssec.AppendNSEC(b.buf, name, ttlOf(z.negSOA), types, skip); !ok {
		// The successor of a name near 255 bytes does not exist: no
		// NSEC for this odd name, and the owner written goes.
		b.buf = b.buf[:start]
		return
	}
	b.ns++
	b.sig.tails = append(b.sig.tails, b.buf[at:])
	b.seal(name, true)
}

func ttlOf(t []byte) uint32 { return binary.BigEndian.Uint32(t[ttlOffset:]) }

// signingMetrics count the signature cache's work.
type signingMetrics struct {
	signed, hits, failed prometheus.Counter
}

func newSigningMetrics(reg prometheus.Registerer) (*signingMetrics, error) {
	set := promset.New("dnssec")
	m := &signingMetrics{
		signed: set.Counter("signatures_total", "RRSIGs made (signature cache misses and refreshes)."),
		hits:   set.Counter("signature_cache_hits_total", "RRSIGs served from the signature cache."),
		failed: set.Counter("signature_failures_total", "Signing failures (the RRset was served unsigned)."),
	}
	if err := set.Register(reg); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *signingMetrics) counters() dnssec.Counters {
	return dnssec.Counters{Hits: m.hits, Signed: m.signed, Failed: m.failed}
}
