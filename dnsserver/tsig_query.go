package dnsserver

import (
	"context"
	"net/netip"
	"time"

	"github.com/miekg/dns"
)

// A query signed with a TSIG key is answered signed (RFC 8945 §5.3): dig
// -y checks the answer's MAC, and nsupdate without a zone line finds the
// zone by a signed SOA query and refuses an unsigned answer. The key
// comes from the store, so such a query leaves the answer path (a UDP
// reader hands it off, handoff.go): its TSIG is checked, the query
// without it is answered as any other, leaving room for the TSIG, and
// the answer is signed. A TSIG that does not check out is answered
// NOTAUTH with the TSIG error, as an UPDATE's is (tsig.go).

// signedQuery reports whether r is a query answered by signedQuery: a
// signed QUERY that is not a transfer (the transfer service checks and
// signs its own, xfr.go).
func (r *request) signedQuery() bool {
	return r.opcode == 0 && r.tsig && !r.malformed && r.qtype != typeAXFR && r.qtype != typeIXFR
}

// tsigRoom is what the TSIG signReply adds for c takes: the key's and
// the algorithm's names, the fixed fields and the MAC (at most SHA-512's
// 64 bytes).
func tsigRoom(c *tsigCheck) int {
	return len(dns.CanonicalName(c.rr.Hdr.Name)) + 1 + 10 + len(dns.CanonicalName(c.rr.Algorithm)) + 1 + 16 + 64
}

// signedQuery answers a signed query into b, whose question is written.
func (s *Server) signedQuery(b *builder, msg []byte, src netip.Addr, tcp bool) []byte {
	req := new(dns.Msg)
	if err := req.Unpack(msg); err != nil {
		b.rcode = rcodeFormErr
		return b.finish()
	}
	now := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), updateTimeout)
	tc, err := checkTSIG(ctx, s.tsigKeys(), req, msg, now)
	cancel()
	if err != nil {
		s.log.Warn("signed query: TSIG key lookup", "err", err)
		b.rcode = rcodeServFail
		b.setEDE(edeOther, "the store did not answer")
		return b.finish()
	}
	var reply []byte
	if tc.err != 0 {
		b.rcode = rcodeNotAuth
		reply = b.finish()
	} else {
		stripped, err := stripTSIG(msg)
		if err != nil {
			b.rcode = rcodeFormErr
			return b.finish()
		}
		w := newWorker()
		w.reserve = tsigRoom(&tc)
		reply = w.handle(s, stripped, src, tcp)
		b.nested = true
		if reply == nil {
			return nil // dropped (rate limited): nothing to sign
		}
		b.rcode = int(reply[3] & 0xf)
	}
	out, err := signReply(reply, tc, now)
	if err != nil {
		s.log.Warn("signed query: sign", "err", err)
		return nil
	}
	b.buf = append(b.buf[:0], out...)
	return b.buf
}
