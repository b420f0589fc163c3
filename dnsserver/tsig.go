package dnsserver

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
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
// A store that does not answer is an error: SERVFAIL, nothing decided;
// keys nil knows no key (BADKEY).
func checkTSIG(ctx context.Context, keys keyLookup, req *dns.Msg, raw []byte, now time.Time) (tsigCheck, error) {
	t := req.IsTsig()
	if t == nil {
		return tsigCheck{}, nil
	}
	c := tsigCheck{rr: t}
	if keys == nil {
		c.err = dns.RcodeBadKey
		return c, nil
	}
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
	stripped, err := stripTSIG(raw)
	if err != nil {
		c.err = dns.RcodeBadSig
		return c, nil
	}
	switch mac, err := tsigMAC(&c.key, "", stripped, t); {
	case err != nil || !hmac.Equal(mac, hexBytes(t.MAC)):
		c.err = dns.RcodeBadSig
	case absDiff(now.Unix(), int64(t.TimeSigned)) > int64(t.Fudge):
		c.err = dns.RcodeBadTime
	}
	return c, nil
}

func absDiff(a, b int64) int64 {
	if a < b {
		return b - a
	}
	return a - b
}

func hexBytes(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil
	}
	return b
}

// stripTSIG returns a copy of msg without its TSIG, the last record of
// the additional section (checked by the caller's unpacking), and with
// ARCOUNT one less: the message its MAC covers (§4.3.1).
func stripTSIG(msg []byte) ([]byte, error) {
	if len(msg) < headerLen {
		return nil, errors.New("short message")
	}
	off := headerLen
	for range binary.BigEndian.Uint16(msg[4:]) {
		var ok bool
		if off, ok = skipName(msg, off); !ok || off+4 > len(msg) {
			return nil, errors.New("bad question")
		}
		off += 4
	}
	n := int(binary.BigEndian.Uint16(msg[6:])) + int(binary.BigEndian.Uint16(msg[8:])) + int(binary.BigEndian.Uint16(msg[10:]))
	if n == 0 {
		return nil, errors.New("no TSIG")
	}
	for range n - 1 {
		var ok bool
		if off, _, _, ok = skipRR(msg, off); !ok {
			return nil, errors.New("bad record")
		}
	}
	if _, typ, _, ok := skipRR(msg, off); !ok || typ != dns.TypeTSIG {
		return nil, errors.New("TSIG not last")
	}
	out := append([]byte(nil), msg[:off]...)
	binary.BigEndian.PutUint16(out[10:], binary.BigEndian.Uint16(out[10:])-1)
	return out, nil
}

// tsigMAC is the MAC of msg (without its TSIG) under key with the TSIG
// variables of t (§4.3.3), preceded by the request's MAC (hex) when msg
// answers a signed request. The message's ID is taken as t's Original
// ID.
func tsigMAC(key *pools.TSIGKey, reqMAC string, msg []byte, t *dns.TSIG) ([]byte, error) {
	secret, err := base64.StdEncoding.DecodeString(key.Secret)
	if err != nil {
		return nil, fmt.Errorf("key %s: secret: %w", key.Name, err)
	}
	var h hash.Hash
	switch key.Algorithm {
	case pools.TSIGHMACSHA256:
		h = hmac.New(sha256.New, secret)
	case pools.TSIGHMACSHA512:
		h = hmac.New(sha512.New, secret)
	default:
		return nil, fmt.Errorf("key %s: algorithm %q", key.Name, key.Algorithm)
	}
	if reqMAC != "" {
		m := hexBytes(reqMAC)
		h.Write(binary.BigEndian.AppendUint16(nil, uint16(len(m))))
		h.Write(m)
	}
	h.Write(binary.BigEndian.AppendUint16(nil, t.OrigId))
	h.Write(msg[2:])
	name := make([]byte, 256)
	n, err := dns.PackDomainName(dns.CanonicalName(t.Hdr.Name), name, 0, nil, false)
	if err != nil {
		return nil, err
	}
	h.Write(name[:n])
	h.Write([]byte{0, dns.ClassANY, 0, 0, 0, 0}) // class ANY, TTL 0
	n, err = dns.PackDomainName(dns.CanonicalName(t.Algorithm), name, 0, nil, false)
	if err != nil {
		return nil, err
	}
	h.Write(name[:n])
	var v [10]byte
	binary.BigEndian.PutUint16(v[0:], uint16(t.TimeSigned>>32))
	binary.BigEndian.PutUint32(v[2:], uint32(t.TimeSigned))
	binary.BigEndian.PutUint16(v[6:], t.Fudge)
	binary.BigEndian.PutUint16(v[8:], t.Error)
	h.Write(v[:])
	other := hexBytes(t.OtherData)
	h.Write(binary.BigEndian.AppendUint16(nil, uint16(len(other))))
	h.Write(other)
	return h.Sum(nil), nil
}

// signReply appends to reply, a packed response to the request checked
// as c, the TSIG RFC 8945 §5.3 asks for: none for an unsigned request;
// for BADKEY and BADSIG one with an empty MAC and the error (we cannot,
// or must not, sign with that key, §5.3.2), its Time Signed our clock;
// for BADTIME one signed with the request's time and ours in Other Data
// (§5.2.3), so that the client may correct its clock; for everything
// else one signed at our time.
func signReply(reply []byte, c tsigCheck, now time.Time) ([]byte, error) {
	if c.rr == nil {
		return reply, nil
	}
	if len(reply) < headerLen {
		return nil, errors.New("short reply")
	}
	t := &dns.TSIG{
		Hdr:        dns.RR_Header{Name: dns.CanonicalName(c.rr.Hdr.Name), Rrtype: dns.TypeTSIG, Class: dns.ClassANY},
		Algorithm:  dns.CanonicalName(c.rr.Algorithm),
		TimeSigned: uint64(now.Unix()),
		Fudge:      tsigFudge,
		OrigId:     c.rr.OrigId,
		Error:      c.err,
	}
	if c.err == dns.RcodeBadTime {
		t.TimeSigned = c.rr.TimeSigned
		var other [6]byte
		u := uint64(now.Unix())
		binary.BigEndian.PutUint16(other[0:], uint16(u>>32))
		binary.BigEndian.PutUint32(other[2:], uint32(u))
		t.OtherLen, t.OtherData = 6, hex.EncodeToString(other[:])
	}
	if c.err != dns.RcodeBadKey && c.err != dns.RcodeBadSig {
		mac, err := tsigMAC(&c.key, c.rr.MAC, reply, t)
		if err != nil {
			return nil, err
		}
		t.MAC, t.MACSize = hex.EncodeToString(mac), uint16(len(mac))
	}
	buf := make([]byte, dns.Len(t)+16)
	n, err := dns.PackRR(t, buf, 0, nil, false)
	if err != nil {
		return nil, err
	}
	out := append(append(make([]byte, 0, len(reply)+n), reply...), buf[:n]...)
	binary.BigEndian.PutUint16(out[10:], binary.BigEndian.Uint16(out[10:])+1)
	return out, nil
}
