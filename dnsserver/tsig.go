package dnsserver

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/glb-dns/glb/pools"
)

// TSIG (RFC 8945) for the UPDATE path. miekg/dns computes and checks the
// MACs; this file decides which error a request earns and how the
// answer is signed, since that differs by error (§5.3.2).

// tsigFudge is the time difference allowed between a signer's clock and
// ours (RFC 8945 §10: 300 s recommended).
const tsigFudge = 300

// tsigCheck is the outcome of checking a request's TSIG.
type tsigCheck struct {
	rr  *dns.TSIG     // the request's TSIG, nil when unsigned
	key pools.TSIGKey // the key it names, when known
	// err is the TSIG error: 0, BADSIG, BADKEY or BADTIME.
	err uint16
}

// signed reports whether the request carried a TSIG that checked out.
func (c *tsigCheck) signed() bool { return c.rr != nil && c.err == 0 }

// checkTSIG looks up the key a request names and checks its MAC, then
// its time, in that order (§5.2: the time is checked only once the MAC
// is good, so that an unsigned forgery learns nothing of our clock).
// A store that does not answer is an error: SERVFAIL, nothing decided.
// A message whose MAC and time check out but that seen has met before is
// a replay: BADTIME (tsig_replay.go). seen may be nil.
func checkTSIG(ctx context.Context, keys UpdateStore, seen *replayCache, req *dns.Msg, raw []byte, now time.Time) (tsigCheck, error) {
	t := req.IsTsig()
	if t == nil {
		return tsigCheck{}, nil
	}
	c := tsigCheck{rr: t}
	k, err := keys.TSIGKey(ctx, pools.CanonicalName(t.Hdr.Name))
	switch {
	case errors.Is(err, pools.ErrNotFound):
		c.err = dns.RcodeBadKey
		return c, nil
	case err != nil:
		return c, err
	}
	c.key = k
	if pools.CanonicalName(t.Algorithm) != k.Algorithm {
		// §5.2.1: a key known under another algorithm is not this key.
		c.err = dns.RcodeBadKey
		return c, nil
	}
	switch err := dns.TsigVerify(raw, k.Secret, "", false); {
	case err == nil:
		if seen != nil && !seen.first(k.Name, strings.ToLower(t.MAC), int64(t.TimeSigned)+int64(t.Fudge), now) {
			c.err = dns.RcodeBadTime
		}
	case errors.Is(err, dns.ErrTime):
		c.err = dns.RcodeBadTime
	default:
		c.err = dns.RcodeBadSig
	}
	return c, nil
}

// finishTSIG packs resp, signed as RFC 8945 §5.3 asks for c: unsigned
// for an unsigned request; with an empty MAC and the error for BADKEY
// and BADSIG (we cannot, or must not, sign with that key); signed with
// the request's time and ours in Other Data for BADTIME (§5.2.3), so
// that the client may correct its clock; signed for everything else.
func finishTSIG(resp *dns.Msg, c tsigCheck, now time.Time) ([]byte, error) {
	if c.rr == nil {
		return resp.Pack()
	}
	t := &dns.TSIG{
		Hdr:       dns.RR_Header{Name: dns.Fqdn(strings.ToLower(c.rr.Hdr.Name)), Rrtype: dns.TypeTSIG, Class: dns.ClassANY},
		Algorithm: dns.Fqdn(strings.ToLower(c.rr.Algorithm)),
		Fudge:     tsigFudge,
		OrigId:    resp.Id,
		Error:     c.err,
	}
	switch c.err {
	case dns.RcodeBadTime:
		t.TimeSigned = c.rr.TimeSigned
		var other [6]byte
		u := uint64(now.Unix())
		binary.BigEndian.PutUint16(other[0:], uint16(u>>32))
		binary.BigEndian.PutUint32(other[2:], uint32(u))
		t.OtherLen, t.OtherData = 6, hex.EncodeToString(other[:])
	default:
		t.TimeSigned = uint64(now.Unix())
	}
	resp.Extra = append(resp.Extra, t)
	// BADKEY and BADSIG are not signed (miekg leaves the MAC empty for
	// them); the secret is then unused.
	out, _, err := dns.TsigGenerate(resp, c.key.Secret, c.rr.MAC, false)
	return out, err
}
