package dnsserver

import (
	"encoding/base64"
	"encoding/binary"
	"net/netip"

	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
)

// typeHTTPS is the HTTPS record type (RFC 9460).
const typeHTTPS = 65

// SvcParamKeys of RFC 9460 §14.3.2, written in ascending order as §2.2
// requires.
const (
	svcALPN          = 1
	svcNoDefaultALPN = 2
	svcPort          = 3
	svcIPv4Hint      = 4
	svcECH           = 5
	svcIPv6Hint      = 6
)

// httpsRR is the fixed part of a load balancer's HTTPS record in wire
// form: the SvcParams that sort before ipv4hint (alpn, no-default-alpn,
// port) and between the two hints (ech). The hints are the origins of
// each answer, written per query between them.
type httpsRR struct {
	low, mid []byte
}

// compileHTTPS builds the fixed part of h's record, nil for no record.
func compileHTTPS(h *pools.HTTPSRecord) *httpsRR {
	if h == nil {
		return nil
	}
	r := &httpsRR{}
	if len(h.ALPN) > 0 {
		var ids []byte
		for _, a := range h.ALPN {
			ids = append(ids, byte(len(a)))
			ids = append(ids, a...)
		}
		r.low = appendParam(r.low, svcALPN, ids)
	}
	if h.NoDefaultALPN {
		r.low = appendParam(r.low, svcNoDefaultALPN, nil)
	}
	if h.Port > 0 {
		r.low = appendParam(r.low, svcPort, binary.BigEndian.AppendUint16(nil, uint16(h.Port)))
	}
	if h.ECH != "" {
		// Validation accepted it as base64; a value that does not decode
		// is left out rather than failing the compile of every name.
		if ech, err := base64.StdEncoding.DecodeString(h.ECH); err == nil {
			r.mid = appendParam(r.mid, svcECH, ech)
		}
	}
	return r
}

func appendParam(b []byte, key uint16, val []byte) []byte {
	b = binary.BigEndian.AppendUint16(b, key)
	b = binary.BigEndian.AppendUint16(b, uint16(len(val)))
	return append(b, val...)
}

// answerHTTPS answers an HTTPS query for the load balancer at n with its
// record, whose hints are the origins an A and an AAAA query from the same
// client would get: each family is decided as its own query would be, so
// a browser that asks all three at once connects where A and AAAA send it.
// Both families empty is NODATA, as A and AAAA are. Only HTTPS queries
// come here, after the decision for the name (a hostname origin's CNAME)
// answered nothing.
func (s *Server) answerHTTPS(lv *live, z *zone, n *node, b *builder, src netip.Addr, answers *[2]steering.Answer) {
	v4, v6 := &answers[0], &answers[1]
	snap := lv.snap
	var req steering.Request
	n.lb.FillRequest(&req, src, b.r.ecsPrefix(), steering.QTypeA, snap.loc)
	snap.steer.Decide(n.lb, &req, steering.FastRand{}, v4, nil)
	req.Type = steering.QTypeAAAA
	snap.steer.Decide(n.lb, &req, steering.FastRand{}, v6, nil)
	lv.lbm[n.lbIdx].count(v4)
	b.cell = lv.cell(n, &req, v4) // the first decision was the name's, which gave nothing
	b.scope = max(b.scope, v4.Scope, v6.Scope)
	if v4.FailOpen || v6.FailOpen {
		b.setEDE(edeStaleAnswer, edeTextFailOpen)
	}
	if !hasAddresses(v4) && !hasAddresses(v6) {
		b.negative(z, n.name, n)
		return
	}
	b.owner(n.name)
	at := len(b.buf)
	b.buf = append(b.buf, 0, typeHTTPS, 0, classIN, 0, 0, 0, 0, 0, 0, // TTL, rdlength below
		0, 1, 0) // priority 1 (service mode), target "." (the owner)
	putTTL(b.buf[at:], v4.TTL)
	b.buf = append(b.buf, n.https.low...)
	b.hints(snap, svcIPv4Hint, v4)
	b.buf = append(b.buf, n.https.mid...)
	b.hints(snap, svcIPv6Hint, v6)
	binary.BigEndian.PutUint16(b.buf[at+8:], uint16(len(b.buf)-at-10))
	if b.sig.sec != nil {
		b.sig.tails = append(b.sig.tails, b.buf[at:])
	}
	b.an++
	b.seal(n.name, false)
}

// hasAddresses: ans chose address origins (not a hostname's CNAME, not an
// all_down answer).
func hasAddresses(ans *steering.Answer) bool {
	return ans.N > 0 && !ans.CNAME && ans.Down == steering.DownFallback
}

// hints writes the ipv4hint or ipv6hint parameter of ans's origins: the
// rdata of their A or AAAA record tails, in answer order.
func (b *builder) hints(snap *Snapshot, key uint16, ans *steering.Answer) {
	if !hasAddresses(ans) {
		return
	}
	at := len(b.buf)
	b.buf = append(b.buf, byte(key>>8), byte(key), 0, 0)
	for _, oi := range ans.Records() {
		b.buf = append(b.buf, snap.originTail(oi)[10:]...)
	}
	binary.BigEndian.PutUint16(b.buf[at+2:], uint16(len(b.buf)-at-4))
}
