package dnsserver

import (
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/glb-dns/glb/pools"
)

// RFC 2136 dynamic UPDATE of a zone's static records.
//
// An UPDATE is a write: it leaves the answer path at the opcode, before
// the snapshot is looked up (handler.go), and is parsed by miekg/dns,
// which allocates as it likes. Over UDP it is also handed off the reading
// goroutine, so that queries on that socket are answered meanwhile.
//
// The UPDATEs of one zone queue for the zone's committer
// (rfc2136_commit.go), which takes every update waiting, checks each
// one's prerequisites (§2.4, §3.2) in the order they came against the
// zone as the updates before it in the batch left it, applies its update
// section (§2.5, §3.4), and writes the batch as one store transaction
// that bumps the global revision, audited with the TSIG key as the actor,
// so every node serves the change like a REST write. Updates that arrive
// together so share one write and one snapshot rebuild, and none is
// refused because another got in first: a write made stale by another
// node or a REST write is checked again from the start against what that
// writer left, so prerequisites always hold of what is replaced.

// UpdateStore is what the UPDATE path needs of the store.
type UpdateStore interface {
	// TSIGKey returns a key with its secret, or pools.ErrNotFound.
	TSIGKey(ctx context.Context, name string) (pools.TSIGKey, error)
	Get(ctx context.Context, k pools.Kind, id string) (pools.Object, error)
	// UpdateRecords writes the records a batch removed and added, so
	// that the store's work is the change, not the zone.
	UpdateRecords(ctx context.Context, zoneID string, ifRevision int64, c pools.RecordChange) (*pools.Zone, error)
}

const (
	opcodeUpdate = 5

	rcodeYXDomain = 6
	rcodeYXRRSet  = 7
	rcodeNXRRSet  = 8
	rcodeNotAuth  = 9
	rcodeNotZone  = 10

	// updateTimeout bounds the TSIG key lookup of one UPDATE or signed
	// query, and one batch's store work.
	updateTimeout = 5 * time.Second
	// updateWait bounds how long an UPDATE waits in its zone's queue and
	// for the writes before it: past it, it is answered SERVFAIL without
	// being applied (nsupdate has given up on it by then).
	updateWait = 30 * time.Second
)

// Extended DNS Error codes (RFC 8914 §4) glb sends.
const (
	edeOther            = 0
	edeStaleAnswer      = 3
	edeNotReady         = 14
	edeProhibited       = 18
	edeNotAuthoritative = 20
	edeNotSupported     = 21
)

// refusal is an UPDATE's outcome other than success: an rcode and,
// where it says more, an Extended DNS Error.
type refusal struct {
	rcode int
	ede   uint16
	text  string
	set   bool // ede is meant (code 0 is a real code, Other)
}

func refuse(rcode int, ede uint16, format string, args ...any) *refusal {
	return &refusal{rcode: rcode, ede: ede, text: fmt.Sprintf(format, args...), set: true}
}

func fail(rcode int) *refusal { return &refusal{rcode: rcode} }

// update answers an UPDATE message into b's buffer.
func (s *Server) update(b *builder, msg []byte) []byte {
	req := new(dns.Msg)
	if err := req.Unpack(msg); err != nil {
		b.flags |= uint16(opcodeUpdate) << 11
		b.rcode = rcodeFormErr
		return b.finish()
	}
	now := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), updateTimeout)
	tc, err := checkTSIG(ctx, s.tsigKeys(), req, msg, now)
	cancel()
	var rf *refusal
	switch {
	case err != nil:
		s.log.Warn("update: TSIG key lookup", "err", err)
		rf = refuse(rcodeServFail, edeOther, "the store did not answer")
	case tc.signed():
		// A message seen before is a retransmission (or a replay): it
		// gets the answer the first got, and changes nothing again.
		e, first := s.replays.claim(tc.key.Name, strings.ToLower(tc.rr.MAC), int64(tc.rr.TimeSigned)+int64(tc.rr.Fudge), now)
		if !first {
			return s.retransmitted(b, e)
		}
		out := s.updateReply(b, req, tc, s.applyUpdate(req, &tc), now)
		e.finish(out)
		return out
	}
	return s.updateReply(b, req, tc, s.refusalFor(tc, rf), now)
}

// refusalFor is the answer to a request whose TSIG did not check out, or
// that carried none: NOTAUTH with the TSIG error (RFC 8945 §5.2), or
// REFUSED.
func (s *Server) refusalFor(tc tsigCheck, rf *refusal) *refusal {
	switch {
	case rf != nil:
		return rf
	case tc.rr != nil && tc.err != 0:
		return fail(rcodeNotAuth)
	default:
		return refuse(rcodeRefused, edeProhibited, "updates must be signed with a TSIG key")
	}
}

// updateReply packs the answer to req, refused as rf (nil: applied),
// signed as tc asks, into b's buffer.
func (s *Server) updateReply(b *builder, req *dns.Msg, tc tsigCheck, rf *refusal, now time.Time) []byte {
	resp := new(dns.Msg)
	resp.SetReply(req)
	if rf != nil {
		resp.Rcode = rf.rcode
	}
	if opt := req.IsEdns0(); opt != nil {
		o := resp.SetEdns0(maxUDPPayload, false).IsEdns0()
		if rf != nil && rf.set {
			o.Option = append(o.Option, &dns.EDNS0_EDE{InfoCode: rf.ede, ExtraText: rf.text})
		}
	}
	out, err := resp.Pack()
	if err == nil {
		out, err = signReply(out, tc, now)
	}
	if err != nil {
		s.log.Warn("update: reply", "err", err)
		b.flags |= uint16(opcodeUpdate) << 11
		b.rcode = rcodeServFail
		return b.finish()
	}
	b.rcode = resp.Rcode
	b.buf = append(b.buf[:0], out...)
	return b.buf
}

// retransmitted answers a message already being answered, or answered,
// with that answer, once it is known.
func (s *Server) retransmitted(b *builder, e *replayEntry) []byte {
	t := time.NewTimer(updateWait + updateTimeout)
	defer t.Stop()
	select {
	case <-e.done:
	case <-t.C:
		return nil // the first is still not answered: say nothing
	}
	s.metrics.updateRetransmits.Inc()
	if len(e.reply) >= headerLen {
		b.rcode = int(e.reply[3] & 0xf)
	}
	b.buf = append(b.buf[:0], e.reply...)
	return b.buf
}

// applyUpdate runs a signed update through its zone's committer and
// returns its refusal, nil when it was applied (or changed nothing).
func (s *Server) applyUpdate(req *dns.Msg, tc *tsigCheck) *refusal {
	if len(req.Question) != 1 || req.Question[0].Qtype != dns.TypeSOA {
		return fail(rcodeFormErr) // §3.1.1
	}
	zq := req.Question[0]
	lv := s.live.Load()
	if lv == nil {
		return refuse(rcodeServFail, edeNotReady, "no configuration loaded yet")
	}
	apex, err := wireName(zq.Name)
	if err != nil {
		return fail(rcodeFormErr)
	}
	z := lv.snap.zones[string(apex)]
	if z == nil || zq.Qclass != dns.ClassINET {
		return refuse(rcodeNotAuth, edeNotAuthoritative, "%s is not a zone served here", zq.Name)
	}
	return s.commits.submit(s, z, req, &tc.key)
}

// zoneState is a zone's records as an UPDATE sees them: the static
// records (which it may change), the apex SOA and NS (which it may only
// test), and the load-balanced names (which own A and AAAA it may test
// but not change).
type zoneState struct {
	apex string // lower case, fully qualified
	recs []upRec
	soa  dns.RR
	ns   []dns.RR
	lbs  map[string]bool
	ttl  uint32
}

type upRec struct {
	rr dns.RR // owner lower case, fully qualified
	// rec is the record as stored: as it was read, or as an update adds
	// it (no TTL when it has the zone's).
	rec  pools.Record
	gone bool
}

// parseRecords returns the static records of pz as an UPDATE works on
// them. Every record must be there: one left out would be invisible to
// prerequisites and deletions. A record in the generic form of RFC 3597
// is taken as its bytes, as the compile serves it: the library's parser
// refuses generic data that is not what the type's own form would make.
func parseRecords(pz *pools.Zone) ([]upRec, error) {
	recs := make([]upRec, 0, len(pz.Records))
	for i, r := range pz.Records {
		ttl := r.TTL
		if ttl == 0 {
			ttl = pz.TTL
		}
		owner := dns.Fqdn(pools.CanonicalName(r.Name))
		if rd, msg, generic := pools.GenericRData(r.Content); generic && msg == "" {
			if code, ok := pools.RRTypeCode(r.Type); ok {
				hdr := dns.RR_Header{Name: owner, Rrtype: code, Class: dns.ClassINET, Ttl: ttl}
				recs = append(recs, upRec{rr: &dns.RFC3597{Hdr: hdr, Rdata: hex.EncodeToString(rd)}, rec: r})
				continue
			}
		}
		rr, err := dns.NewRR(owner + " " + strconv.FormatUint(uint64(ttl), 10) + " IN " + strings.ToUpper(r.Type) + " " + r.Content)
		if err == nil && rr == nil {
			err = fmt.Errorf("empty record")
		}
		if err != nil {
			return nil, fmt.Errorf("record %d (%s %s %q): %w", i, r.Name, r.Type, r.Content, err)
		}
		recs = append(recs, upRec{rr: rr, rec: r})
	}
	return recs, nil
}

// newZoneState is the state of pz, whose parsed records are recs (the
// state works on a copy), with the load-balanced names of z.
func newZoneState(pz *pools.Zone, recs []upRec, z *zone) *zoneState {
	zs := &zoneState{apex: dns.Fqdn(pools.CanonicalName(pz.Name)), recs: slices.Clone(recs), lbs: map[string]bool{}, ttl: pz.TTL}
	for _, ns := range pz.Nameservers {
		zs.ns = append(zs.ns, &dns.NS{Hdr: dns.RR_Header{Name: zs.apex, Rrtype: dns.TypeNS, Class: dns.ClassINET, Ttl: pz.TTL}, Ns: dns.Fqdn(strings.ToLower(ns))})
	}
	if rr, err := dns.NewRR(zs.apex + " SOA . . 0 0 0 0 0"); err == nil {
		zs.soa = rr
	}
	for _, n := range z.nodes {
		if n.lb != nil {
			zs.lbs[wireString(n.name)] = true
		}
	}
	return zs
}

// rrset returns the records of (name, typ) now; typ ANY: every type.
// The load balancers' A and AAAA are there for the existence tests only.
func (zs *zoneState) rrset(name string, typ uint16) []dns.RR {
	var out []dns.RR
	if name == zs.apex {
		if typ == dns.TypeSOA || typ == dns.TypeANY {
			out = append(out, zs.soa)
		}
		if typ == dns.TypeNS || typ == dns.TypeANY {
			out = append(out, zs.ns...)
		}
	}
	if zs.lbs[name] && (typ == dns.TypeA || typ == dns.TypeAAAA || typ == dns.TypeANY) {
		out = append(out, &dns.ANY{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET}})
	}
	for i := range zs.recs {
		r := &zs.recs[i]
		if !r.gone && r.rr.Header().Name == name && (typ == dns.TypeANY || r.rr.Header().Rrtype == typ) {
			out = append(out, r.rr)
		}
	}
	return out
}

func lower(name string) string { return dns.Fqdn(strings.ToLower(name)) }

// prerequisites checks the prerequisite section (RFC 2136 §3.2).
func (zs *zoneState) prerequisites(pre []dns.RR) *refusal {
	type key struct {
		name string
		typ  uint16
	}
	var order []key
	want := map[key][]dns.RR{}
	for _, rr := range pre {
		h := rr.Header()
		name := lower(h.Name)
		if h.Ttl != 0 {
			return fail(rcodeFormErr)
		}
		if !dns.IsSubDomain(zs.apex, name) {
			return fail(rcodeNotZone)
		}
		switch h.Class {
		case dns.ClassANY:
			if h.Rdlength != 0 {
				return fail(rcodeFormErr)
			}
			if h.Rrtype == dns.TypeANY {
				if len(zs.rrset(name, dns.TypeANY)) == 0 {
					return fail(dns.RcodeNameError) // name is in use: NXDOMAIN
				}
			} else if len(zs.rrset(name, h.Rrtype)) == 0 {
				return fail(rcodeNXRRSet)
			}
		case dns.ClassNONE:
			if h.Rdlength != 0 {
				return fail(rcodeFormErr)
			}
			if h.Rrtype == dns.TypeANY {
				if len(zs.rrset(name, dns.TypeANY)) > 0 {
					return fail(rcodeYXDomain)
				}
			} else if len(zs.rrset(name, h.Rrtype)) > 0 {
				return fail(rcodeYXRRSet)
			}
		case dns.ClassINET:
			k := key{name, h.Rrtype}
			if _, ok := want[k]; !ok {
				order = append(order, k)
			}
			want[k] = append(want[k], rr)
		default:
			return fail(rcodeFormErr)
		}
	}
	// Value-dependent: each RRset must be exactly the one given (§3.2.3).
	for _, k := range order {
		have := zs.rrset(k.name, k.typ)
		if !sameSet(have, want[k]) {
			return fail(rcodeNXRRSet)
		}
	}
	return nil
}

// sameSet reports whether a and b hold the same records, TTLs aside.
func sameSet(a, b []dns.RR) bool {
	contains := func(set []dns.RR, rr dns.RR) bool {
		for _, x := range set {
			if dns.IsDuplicate(x, rr) {
				return true
			}
		}
		return false
	}
	for _, x := range a {
		if !contains(b, x) {
			return false
		}
	}
	for _, x := range b {
		if !contains(a, x) {
			return false
		}
	}
	return true
}

// metaType reports the types no update may add (RFC 2136 §3.4.1.2).
func metaType(t uint16) bool {
	return t == dns.TypeANY || t == dns.TypeAXFR || t == dns.TypeIXFR || t == dns.TypeMAILA ||
		t == dns.TypeMAILB || t == dns.TypeOPT || t == dns.TypeTSIG || t == dns.TypeTKEY
}

// prescan checks the whole update section before anything changes
// (§3.4.1), and glb's policy: only static records the key's grants
// cover, never a load-balanced name, never the apex SOA or NS.
func (zs *zoneState) prescan(up []dns.RR, key *pools.TSIGKey, zoneID string) *refusal {
	for _, rr := range up {
		h := rr.Header()
		name := lower(h.Name)
		if !dns.IsSubDomain(zs.apex, name) {
			return fail(rcodeNotZone)
		}
		switch h.Class {
		case dns.ClassINET:
			if metaType(h.Rrtype) {
				return fail(rcodeFormErr)
			}
		case dns.ClassANY:
			if h.Ttl != 0 || h.Rdlength != 0 || (metaType(h.Rrtype) && h.Rrtype != dns.TypeANY) {
				return fail(rcodeFormErr)
			}
		case dns.ClassNONE:
			if h.Ttl != 0 || metaType(h.Rrtype) {
				return fail(rcodeFormErr)
			}
		default:
			return fail(rcodeFormErr)
		}
	}
	for _, rr := range up {
		h := rr.Header()
		name := lower(h.Name)
		owner := pools.CanonicalName(name)
		if zs.lbs[name] {
			return refuse(rcodeRefused, edeProhibited, "%s is a load-balanced name; change it through the API", owner)
		}
		var types []uint16
		if h.Rrtype == dns.TypeANY {
			// Deleting every RRset at a name needs a grant for each type
			// there; the apex SOA and NS stay (§3.4.2.3).
			for _, x := range zs.rrset(name, dns.TypeANY) {
				if t := x.Header().Rrtype; !(name == zs.apex && (t == dns.TypeSOA || t == dns.TypeNS)) {
					types = append(types, t)
				}
			}
		} else {
			if h.Rrtype == dns.TypeSOA || (h.Rrtype == dns.TypeNS && name == zs.apex) {
				return refuse(rcodeRefused, edeProhibited, "the apex %s comes from the zone's settings; change it through the API", dns.TypeToString[h.Rrtype])
			}
			typ := dns.TypeToString[h.Rrtype]
			if !isUpdateType(typ) {
				return refuse(rcodeRefused, edeNotSupported, "glb does not serve %s records", typ)
			}
			types = append(types, h.Rrtype)
		}
		for _, t := range types {
			typ := dns.TypeToString[t]
			if !key.Allows(zoneID, owner, typ) {
				return refuse(rcodeRefused, edeProhibited, "key %s may not change %s at %s", key.Name, typ, owner)
			}
		}
	}
	return nil
}

func isUpdateType(t string) bool {
	for _, x := range pools.TSIGUpdateTypes {
		if x == t {
			return true
		}
	}
	return false
}

// apply carries out the update section in order (§3.4.2) and reports
// whether anything changed.
func (zs *zoneState) apply(up []dns.RR) bool {
	changed := false
	for _, rr := range up {
		h := rr.Header()
		name := lower(h.Name)
		switch h.Class {
		case dns.ClassINET:
			changed = zs.add(name, rr) || changed
		case dns.ClassANY:
			for i := range zs.recs {
				r := &zs.recs[i]
				rh := r.rr.Header()
				if r.gone || rh.Name != name || (h.Rrtype != dns.TypeANY && rh.Rrtype != h.Rrtype) {
					continue
				}
				if name == zs.apex && rh.Rrtype == dns.TypeNS {
					continue
				}
				r.gone, changed = true, true
			}
		case dns.ClassNONE:
			probe := dns.Copy(rr)
			probe.Header().Class = dns.ClassINET
			probe.Header().Name = name
			for i := range zs.recs {
				r := &zs.recs[i]
				if !r.gone && dns.IsDuplicate(r.rr, probe) {
					r.gone, changed = true, true
				}
			}
		}
	}
	return changed
}

// add adds rr at name unless RFC 2136 §3.4.2.2 says to ignore it: a CNAME
// beside other data or other data beside a CNAME is ignored, a CNAME
// replaces a CNAME, and a duplicate only updates the TTL.
func (zs *zoneState) add(name string, rr dns.RR) bool {
	h := rr.Header()
	c := dns.Copy(rr)
	c.Header().Name = name
	here := zs.rrset(name, dns.TypeANY)
	for _, x := range here {
		xt := x.Header().Rrtype
		if h.Rrtype == dns.TypeCNAME && xt != dns.TypeCNAME {
			return false
		}
		if h.Rrtype != dns.TypeCNAME && xt == dns.TypeCNAME {
			return false
		}
	}
	for i := range zs.recs {
		r := &zs.recs[i]
		if r.gone || r.rr.Header().Name != name || r.rr.Header().Rrtype != h.Rrtype {
			continue
		}
		if h.Rrtype == dns.TypeCNAME {
			r.gone = true
			continue
		}
		if dns.IsDuplicate(r.rr, c) {
			if r.rr.Header().Ttl == h.Ttl {
				return false
			}
			r.gone = true
		}
	}
	content := strings.TrimPrefix(c.String(), c.Header().String())
	rec := pools.Record{Name: pools.CanonicalName(name), Type: dns.TypeToString[h.Rrtype], Content: content}
	if h.Ttl != zs.ttl {
		rec.TTL = h.Ttl
	}
	zs.recs = append(zs.recs, upRec{rr: c, rec: rec})
	return true
}

// change returns what the updates did to the stored records: those of
// the base (the first based) gone, and those added and kept.
func (zs *zoneState) change(based int) pools.RecordChange {
	var c pools.RecordChange
	for i, r := range zs.recs {
		switch {
		case i < based && r.gone:
			c.Removed = append(c.Removed, r.rec)
		case i >= based && !r.gone:
			c.Added = append(c.Added, r.rec)
		}
	}
	return c
}

// kept returns the records after the updates, for the next batch to start
// from once they are stored.
func (zs *zoneState) kept() []upRec {
	out := make([]upRec, 0, len(zs.recs))
	for _, r := range zs.recs {
		if !r.gone {
			out = append(out, r)
		}
	}
	return out
}
