package transfer

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/glb-dns/glb/pools"
)

// tsigFudge is the clock difference allowed to a signer (RFC 8945 §10).
const tsigFudge = 300

// maxMessage bounds one message of a transfer, below the 64 KiB of a TCP
// message, with room for the TSIG.
const maxMessage = 60000

// Refusal texts (extended DNS errors, RFC 8914, code 18 "Prohibited").
const (
	textNotAllowed = "transfers of this zone are not allowed to this client"
	textSigned     = "this zone is signed online, answer by answer: it cannot be transferred"
)

// ServeTransfer answers an AXFR or IXFR request (dnsserver.Transferer).
func (s *Service) ServeTransfer(msg []byte, src netip.Addr, write func([]byte) error) bool {
	req := new(dns.Msg)
	if err := req.Unpack(msg); err != nil || len(req.Question) != 1 {
		return false
	}
	q := req.Question[0]
	now := time.Now()
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	defer cancel()

	// The request's TSIG first (RFC 8945 §5.2): a bad one is NOTAUTH
	// whatever else is wrong.
	var tk *pools.TSIGKey
	var treq *dns.TSIG
	if t := req.IsTsig(); t != nil {
		treq = t
		k, err := s.cfg.Keys.TSIGKey(ctx, pools.CanonicalName(t.Hdr.Name))
		switch {
		case errors.Is(err, pools.ErrNotFound) || err == nil && pools.CanonicalName(t.Algorithm) != k.Algorithm:
			return s.refuse(req, dns.RcodeNotAuth, dns.RcodeBadKey, treq, nil, "", write)
		case err != nil:
			s.log.Warn("transfer: TSIG key", "err", err)
			return s.refuse(req, dns.RcodeServerFailure, 0, nil, nil, "", write)
		}
		switch err := dns.TsigVerify(msg, k.Secret, "", false); {
		case errors.Is(err, dns.ErrTime):
			return s.refuse(req, dns.RcodeNotAuth, dns.RcodeBadTime, treq, &k, "", write)
		case err != nil:
			return s.refuse(req, dns.RcodeNotAuth, dns.RcodeBadSig, treq, nil, "", write)
		}
		tk = &k
	}

	s.mu.Lock()
	zs := s.byName[pools.CanonicalName(q.Name)]
	var (
		cur      *version
		journal  []change
		allowed  bool
		signed   bool
		zoneName string
	)
	if zs != nil {
		cur, journal, signed, zoneName = zs.cur, zs.journal, zs.signed, zs.name
		allowed = zs.allows(src, tk)
	}
	s.mu.Unlock()
	switch {
	case zs == nil || !allowed:
		return s.refuse(req, dns.RcodeRefused, 0, treq, tk, textNotAllowed, write)
	case signed:
		return s.refuse(req, dns.RcodeRefused, 0, treq, tk, textSigned, write)
	case cur == nil:
		return s.refuse(req, dns.RcodeServerFailure, 0, treq, tk, "", write)
	}

	kind, asked := "AXFR", uint32(0)
	var sections [][]dns.RR
	switch q.Qtype {
	case dns.TypeIXFR:
		kind = "IXFR"
		var have *dns.SOA
		for _, rr := range req.Ns {
			if soa, ok := rr.(*dns.SOA); ok {
				have = soa
			}
		}
		if have == nil {
			return s.refuse(req, dns.RcodeFormatError, 0, treq, tk, "", write)
		}
		asked = have.Serial
		sections = ixfr(cur, journal, have.Serial)
	default:
		sections = [][]dns.RR{axfr(cur)}
	}
	if err := s.send(req, sections, treq, tk, now, write); err != nil {
		s.log.Debug("transfer interrupted", "zone", zoneName, "client", src, "err", err)
		return false
	}
	s.mu.Lock()
	if zs.secondaries != nil {
		zs.secondaries[src] = &Secondary{Address: src.String(), Kind: kind, Asked: asked, Serial: cur.serial, At: now.UTC()}
	}
	s.mu.Unlock()
	s.log.Info("zone transferred", "zone", zoneName, "client", src, "kind", kind, "serial", cur.serial, "asked", asked)
	return true
}

// allows reports whether src, with key (nil: unsigned), may transfer.
func (zs *zoneState) allows(src netip.Addr, key *pools.TSIGKey) bool {
	if !zs.settings.Enabled() {
		return false
	}
	if len(zs.allow) > 0 && !slices.ContainsFunc(zs.allow, func(p netip.Prefix) bool { return p.Contains(src.Unmap()) }) {
		return false
	}
	if len(zs.settings.TSIGKeys) > 0 {
		return key != nil && slices.ContainsFunc(zs.settings.TSIGKeys, func(n string) bool { return pools.CanonicalName(n) == key.Name })
	}
	return true
}

// axfr is the whole zone between its SOA (RFC 5936 §2.2).
func axfr(v *version) []dns.RR {
	out := make([]dns.RR, 0, len(v.rrs)+2)
	out = append(out, v.soa)
	out = append(out, v.rrs...)
	return append(out, v.soa)
}

// ixfr answers a secondary at serial have: the SOA alone when it is
// current, the changes since have when the journal reaches back to it,
// else the whole zone (RFC 1995 §4).
func ixfr(cur *version, journal []change, have uint32) [][]dns.RR {
	if have == cur.serial {
		return [][]dns.RR{{cur.soa}}
	}
	start := slices.IndexFunc(journal, func(c change) bool { return c.from.Serial == have })
	if start < 0 || journal[len(journal)-1].to.Serial != cur.serial {
		return [][]dns.RR{axfr(cur)}
	}
	out := []dns.RR{cur.soa}
	for _, c := range journal[start:] {
		out = append(out, c.from)
		out = append(out, c.del...)
		out = append(out, c.to)
		out = append(out, c.add...)
	}
	return [][]dns.RR{append(out, cur.soa)}
}

// send writes the records as messages of at most maxMessage bytes, each
// signed when the request was (RFC 8945 §5.3.1: the first with the
// request's MAC, the next ones with the one before's, timers only).
func (s *Service) send(req *dns.Msg, sections [][]dns.RR, treq *dns.TSIG, key *pools.TSIGKey, now time.Time, write func([]byte) error) error {
	var rrs []dns.RR
	for _, sec := range sections {
		rrs = append(rrs, sec...)
	}
	mac := ""
	if treq != nil {
		mac = treq.MAC
	}
	first := true
	flush := func(batch []dns.RR) error {
		m := new(dns.Msg)
		m.SetReply(req)
		m.Authoritative = true
		m.Compress = true
		m.Answer = batch
		var out []byte
		var err error
		if key != nil {
			m.SetTsig(dns.Fqdn(key.Name), dns.Fqdn(key.Algorithm), tsigFudge, now.Unix())
			out, mac, err = dns.TsigGenerate(m, key.Secret, mac, !first)
		} else {
			out, err = m.Pack()
		}
		if err != nil {
			return err
		}
		first = false
		return write(out)
	}
	var batch []dns.RR
	size := 12 + len(req.Question[0].Name) + 4
	for _, rr := range rrs {
		l := dns.Len(rr)
		if len(batch) > 0 && size+l > maxMessage {
			if err := flush(batch); err != nil {
				return err
			}
			batch, size = nil, 12+len(req.Question[0].Name)+4
		}
		batch = append(batch, rr)
		size += l
	}
	return flush(batch)
}

// refuse answers req with rcode, signed as RFC 8945 §5.3.2 asks: with the
// key when the request's TSIG checked out (or for BADTIME), unsigned
// with the TSIG error otherwise; text goes in an extended error.
func (s *Service) refuse(req *dns.Msg, rcode int, tsigErr uint16, treq *dns.TSIG, key *pools.TSIGKey, text string, write func([]byte) error) bool {
	m := new(dns.Msg)
	m.SetRcode(req, rcode)
	if text != "" {
		if opt := req.IsEdns0(); opt != nil {
			o := m.SetEdns0(1232, false).IsEdns0()
			o.Option = append(o.Option, &dns.EDNS0_EDE{InfoCode: dns.ExtendedErrorCodeProhibited, ExtraText: text})
		}
	}
	var out []byte
	var err error
	switch {
	case treq == nil:
		out, err = m.Pack()
	case key != nil:
		t := &dns.TSIG{Hdr: dns.RR_Header{Name: dns.Fqdn(strings.ToLower(treq.Hdr.Name)), Rrtype: dns.TypeTSIG, Class: dns.ClassANY},
			Algorithm: dns.Fqdn(strings.ToLower(treq.Algorithm)), Fudge: tsigFudge, OrigId: m.Id, Error: tsigErr, TimeSigned: uint64(time.Now().Unix())}
		m.Extra = append(m.Extra, t)
		out, _, err = dns.TsigGenerate(m, key.Secret, treq.MAC, false)
	default:
		// BADKEY, BADSIG: the TSIG carries the error and no MAC.
		t := &dns.TSIG{Hdr: dns.RR_Header{Name: dns.Fqdn(strings.ToLower(treq.Hdr.Name)), Rrtype: dns.TypeTSIG, Class: dns.ClassANY},
			Algorithm: dns.Fqdn(strings.ToLower(treq.Algorithm)), Fudge: tsigFudge, OrigId: m.Id, Error: tsigErr, TimeSigned: uint64(time.Now().Unix())}
		m.Extra = append(m.Extra, t)
		out, err = m.Pack()
	}
	if err != nil {
		return false
	}
	return write(out) == nil
}
