package dnsserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/glb-dns/glb/pools"
)

// RFC 2136 dynamic UPDATE of a zone's static records.
//
// An UPDATE is a write: it leaves the answer path at the opcode, before
// the snapshot is looked up (handler.go), and is parsed by miekg/dns,
// which allocates as it likes. The zone is read from the store, the
// prerequisites (§2.4, §3.2) are checked against it, the update section
// (§2.5, §3.4) is applied to a copy, and the copy is written with the
// revision it was read at: one store transaction that bumps the global
// revision, audited with the TSIG key as the actor, so every node serves
// the change like a REST write. A writer that got in between makes the
// write stale; the update is then checked again from the start against
// what that writer left, so prerequisites always hold of what is
// replaced.

// UpdateStore is what the UPDATE path needs of the store.
type UpdateStore interface {
	// TSIGKey returns a key with its secret, or pools.ErrNotFound.
	TSIGKey(ctx context.Context, name string) (pools.TSIGKey, error)
	Get(ctx context.Context, k pools.Kind, id string) (pools.Object, error)
	Replace(ctx context.Context, o pools.Object, ifRevision int64) (pools.Object, error)
}

const (
	opcodeUpdate = 5

	rcodeYXDomain = 6
	rcodeYXRRSet  = 7
	rcodeNXRRSet  = 8
	rcodeNotAuth  = 9
	rcodeNotZone  = 10

	// updateTimeout bounds the store's part of one UPDATE.
	updateTimeout = 5 * time.Second
	// updateAttempts bounds the retries when other writers keep getting
	// in first.
	updateAttempts = 5
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
	ctx, cancel := context.WithTimeout(context.Background(), updateTimeout)
	defer cancel()
	now := time.Now()
	resp := new(dns.Msg)
	resp.SetReply(req)
	tc, rf := s.applyUpdate(ctx, req, msg, now)
	if rf != nil {
		resp.Rcode = rf.rcode
	}
	if opt := req.IsEdns0(); opt != nil {
		o := resp.SetEdns0(maxUDPPayload, false).IsEdns0()
		if rf != nil && rf.set {
			o.Option = append(o.Option, &dns.EDNS0_EDE{InfoCode: rf.ede, ExtraText: rf.text})
		}
	}
	out, err := finishTSIG(resp, tc, now)
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

// applyUpdate checks the TSIG, then runs the update against the store.
func (s *Server) applyUpdate(ctx context.Context, req *dns.Msg, raw []byte, now time.Time) (tsigCheck, *refusal) {
	st := s.cfg.Updates
	tc, err := checkTSIG(ctx, st, &s.replays, req, raw, now)
	if err != nil {
		s.log.Warn("update: TSIG key lookup", "err", err)
		return tsigCheck{}, refuse(rcodeServFail, edeOther, "the store did not answer")
	}
	if tc.rr != nil && tc.err != 0 {
		// RFC 8945 §5.2: NOTAUTH, the reason in the TSIG's error field.
		return tc, fail(rcodeNotAuth)
	}
	if !tc.signed() {
		return tc, refuse(rcodeRefused, edeProhibited, "updates must be signed with a TSIG key")
	}
	if len(req.Question) != 1 || req.Question[0].Qtype != dns.TypeSOA {
		return tc, fail(rcodeFormErr) // §3.1.1
	}
	zq := req.Question[0]
	lv := s.live.Load()
	if lv == nil {
		return tc, refuse(rcodeServFail, edeNotReady, "no configuration loaded yet")
	}
	apex, err := wireName(zq.Name)
	if err != nil {
		return tc, fail(rcodeFormErr)
	}
	z := lv.snap.zones[string(apex)]
	if z == nil || zq.Qclass != dns.ClassINET {
		return tc, refuse(rcodeNotAuth, edeNotAuthoritative, "%s is not a zone served here", zq.Name)
	}
	for range updateAttempts {
		rf, retry := s.updateOnce(ctx, z, req, &tc.key)
		if !retry {
			return tc, rf
		}
	}
	return tc, refuse(rcodeServFail, edeOther, "the zone kept changing under the update; try again")
}

// updateOnce reads the zone, checks and applies the update, and writes
// it; retry is true when another write got in first.
func (s *Server) updateOnce(ctx context.Context, z *zone, req *dns.Msg, key *pools.TSIGKey) (rf *refusal, retry bool) {
	st := s.cfg.Updates
	o, err := st.Get(ctx, pools.KindZone, z.id)
	if err != nil {
		s.log.Warn("update: read zone", "zone", z.id, "err", err)
		return refuse(rcodeServFail, edeOther, "the store did not answer"), false
	}
	pz := o.(*pools.Zone)
	zs := newZoneState(pz, z)
	if rf := zs.prerequisites(req.Answer); rf != nil {
		return rf, false
	}
	if rf := zs.prescan(req.Ns, key, pz.ID); rf != nil {
		return rf, false
	}
	if !zs.apply(req.Ns) {
		return nil, false // nothing changed: no write, no serial (§3.4.2.7)
	}
	pz.Records = zs.records()
	actor := pools.ActorTSIGPrefix + key.Name
	wctx := pools.WithCaller(ctx, pools.Caller{Actor: actor, Method: pools.MethodDNSUpdate})
	_, err = st.Replace(wctx, pz, pz.Revision)
	var ve *pools.ValidationError
	switch {
	case err == nil:
		s.log.Info("zone updated", "zone", pz.Name, "key", key.Name, "revision", pz.Revision)
		return nil, false
	case errors.Is(err, pools.ErrStale):
		return nil, true
	case errors.As(err, &ve):
		return refuse(rcodeRefused, edeOther, "%s", ve.Error()), false
	default:
		s.log.Warn("update: write zone", "zone", pz.Name, "err", err)
		return refuse(rcodeServFail, edeOther, "the store did not answer"), false
	}
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
	rr   dns.RR // owner lower case, fully qualified
	orig pools.Record
	// zeroTTL: the stored record set no TTL (the zone's applies).
	zeroTTL bool
	gone    bool
	added   bool
}

func newZoneState(pz *pools.Zone, z *zone) *zoneState {
	zs := &zoneState{apex: dns.Fqdn(pools.CanonicalName(pz.Name)), lbs: map[string]bool{}, ttl: pz.TTL}
	for _, r := range pz.Records {
		ttl := r.TTL
		if ttl == 0 {
			ttl = pz.TTL
		}
		rr, err := dns.NewRR(dns.Fqdn(pools.CanonicalName(r.Name)) + " " + fmt.Sprint(ttl) + " IN " + strings.ToUpper(r.Type) + " " + r.Content)
		if err != nil || rr == nil {
			continue // the store validated it; the compile would have refused it
		}
		zs.recs = append(zs.recs, upRec{rr: rr, orig: r, zeroTTL: r.TTL == 0})
	}
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
	zs.recs = append(zs.recs, upRec{rr: c, added: true})
	return true
}

// records returns the static records after the update: those kept as
// they were stored, then those added, in presentation format.
func (zs *zoneState) records() []pools.Record {
	out := []pools.Record{}
	for _, r := range zs.recs {
		if r.gone {
			continue
		}
		if !r.added {
			out = append(out, r.orig)
			continue
		}
		h := r.rr.Header()
		content := strings.TrimPrefix(r.rr.String(), h.String())
		rec := pools.Record{Name: pools.CanonicalName(h.Name), Type: dns.TypeToString[h.Rrtype], Content: content}
		if h.Ttl != zs.ttl {
			rec.TTL = h.Ttl
		}
		out = append(out, rec)
	}
	return out
}
