package dnsserver

import (
	"crypto/rand"
	"encoding/binary"
	"net/netip"
	"time"

	"github.com/dchest/siphash"
)

// DNS cookies (RFC 7873) with server cookies in the interoperable form of
// RFC 9018: version 1, three reserved bytes, a 32-bit timestamp and
// SipHash-2-4 over the client cookie, those 8 bytes and the client's
// address. Every node of a cluster derives the same cookie from the same
// secret, so a resolver may take a cookie from one node to another. The
// secret lives in the store; the previous one is still accepted after a
// rotation, so cookies issued just before it stay good.

const (
	cookieVersion = 1
	// A server cookie older than an hour, or more than five minutes in the
	// future, is not accepted (RFC 9018 §4.3).
	cookieMaxAge    = 3600
	cookieMaxFuture = 300
	serverCookieLen = 16
)

// CookieSecrets are the SipHash keys of server cookies: new cookies use
// Current; cookies made with Previous are still accepted.
type CookieSecrets struct {
	Current     [16]byte
	Previous    [16]byte
	HasPrevious bool
}

type cookieKeys struct {
	cur, prev [2]uint64
	hasPrev   bool
}

func sipKey(b [16]byte) [2]uint64 {
	return [2]uint64{binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])}
}

// SetCookieSecrets installs the cluster's cookie secrets; until the first
// call the server uses a random secret of its own.
func (s *Server) SetCookieSecrets(c CookieSecrets) {
	s.edge.cookies.Store(&cookieKeys{cur: sipKey(c.Current), prev: sipKey(c.Previous), hasPrev: c.HasPrevious})
}

func randomCookieKeys() *cookieKeys {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return &cookieKeys{cur: sipKey(b)}
}

// cookieHash is the RFC 9018 hash of a server cookie whose first 8 bytes
// (version, reserved, timestamp) are head.
func cookieHash(k [2]uint64, client *[8]byte, head []byte, src netip.Addr) uint64 {
	var msg [8 + 8 + 16]byte
	copy(msg[:8], client[:])
	copy(msg[8:16], head)
	n := 16
	src = src.Unmap()
	if src.Is4() {
		a := src.As4()
		n += copy(msg[n:], a[:])
	} else if src.IsValid() {
		a := src.As16()
		n += copy(msg[n:], a[:])
	}
	return siphash.Hash(k[0], k[1], msg[:n])
}

// cookie checks the server cookie a query carries and writes a fresh one
// into the reply: a valid one marks the query as coming from a real
// address (RRL leaves it alone); a bad or expired one is simply replaced
// (RFC 7873 §5.2.3), the answer is the normal one.
func (s *Server) cookie(b *builder, src netip.Addr, now time.Time) {
	r := b.r
	k := s.edge.cookies.Load()
	ts := uint32(now.Unix())
	m := s.edge.m
	switch {
	case r.serverLen == 0:
		m.cookieClient.Inc()
	case s.validCookie(k, r, src, ts):
		b.cookieValid = true
		m.cookieValid.Inc()
	default:
		m.cookieInvalid.Inc()
	}
	out := b.cookieOut[:]
	copy(out[:8], r.clientCookie[:])
	sc := out[8:]
	sc[0] = cookieVersion
	sc[1], sc[2], sc[3] = 0, 0, 0
	binary.BigEndian.PutUint32(sc[4:8], ts)
	binary.LittleEndian.PutUint64(sc[8:16], cookieHash(k.cur, &r.clientCookie, sc[:8], src))
	b.cookie = true
}

func (s *Server) validCookie(k *cookieKeys, r *request, src netip.Addr, now uint32) bool {
	sc := r.serverCookie[:r.serverLen]
	if len(sc) != serverCookieLen || sc[0] != cookieVersion || sc[1]|sc[2]|sc[3] != 0 {
		return false
	}
	// Serial number arithmetic on the timestamp (RFC 9018 §4.3).
	age := int32(now - binary.BigEndian.Uint32(sc[4:8]))
	if age > cookieMaxAge || age < -cookieMaxFuture {
		return false
	}
	h := binary.LittleEndian.Uint64(sc[8:16])
	return h == cookieHash(k.cur, &r.clientCookie, sc[:8], src) ||
		k.hasPrev && h == cookieHash(k.prev, &r.clientCookie, sc[:8], src)
}
