package dnsserver

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// newEdgeServer is newTestServer with the edge options set.
func newEdgeServer(t testing.TB, reg prometheus.Registerer, mod func(*Config)) *Server {
	t.Helper()
	return newServing(t, reg, mod, testConfig())
}

func cookieOption(c []byte) []byte {
	o := []byte{0, optionCookie, 0, 0}
	binary.BigEndian.PutUint16(o[2:], uint16(len(c)))
	return append(o, c...)
}

// replyCookie returns the COOKIE option of a reply, nil if none.
func replyCookie(t *testing.T, r *dns.Msg) []byte {
	t.Helper()
	opt := r.IsEdns0()
	if opt == nil {
		t.Fatalf("no OPT in the reply:\n%v", r)
	}
	for _, o := range opt.Option {
		if c, ok := o.(*dns.EDNS0_COOKIE); ok {
			b, err := hex.DecodeString(c.Cookie)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	return nil
}

func exchangeRaw(t *testing.T, s *Server, q []byte, src string) *dns.Msg {
	t.Helper()
	out := s.handle(q, netip.MustParseAddr(src), false, nil)
	if out == nil {
		t.Fatal("no reply")
	}
	r := new(dns.Msg)
	if err := r.Unpack(out); err != nil {
		t.Fatalf("reply does not unpack: %v", err)
	}
	return r
}

func TestCookies(t *testing.T) {
	t.Parallel()
	secret := CookieSecrets{Current: [16]byte{1, 2, 3}}
	s := newEdgeServer(t, prometheus.NewRegistry(), nil)
	s.SetCookieSecrets(secret)
	other := newEdgeServer(t, prometheus.NewRegistry(), nil) // another node, same secret
	other.SetCookieSecrets(secret)
	client := []byte{0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8}
	r := exchangeRaw(t, s, rawQuery(t, 1, cookieOption(client)), "192.0.2.1")
	got := replyCookie(t, r)
	if len(got) != 24 || !bytes.Equal(got[:8], client) || got[8] != 1 || !bytes.Equal(got[9:12], []byte{0, 0, 0}) {
		t.Fatalf("cookie %x: want the client cookie and a 16-byte version 1 server cookie", got)
	}
	if r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 {
		t.Fatalf("answer with a client cookie: %v", r)
	}
	if ts := binary.BigEndian.Uint32(got[12:16]); time.Since(time.Unix(int64(ts), 0)).Abs() > time.Minute {
		t.Errorf("timestamp %d is not now", ts)
	}

	valid := func(srv *Server, src string, cookie []byte) bool {
		t.Helper()
		before := testutil.ToFloat64(srv.edge.m.cookieValid)
		r := exchangeRaw(t, srv, rawQuery(t, 2, cookieOption(cookie)), src)
		if c := replyCookie(t, r); len(c) != 24 || !bytes.Equal(c[:8], cookie[:8]) {
			t.Errorf("no fresh cookie in the reply: %x", c)
		}
		if r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 {
			t.Errorf("not the normal answer: %v", r)
		}
		return testutil.ToFloat64(srv.edge.m.cookieValid) > before
	}
	if !valid(s, "192.0.2.1", got) {
		t.Error("the server's own cookie is not valid on resend")
	}
	if !valid(other, "192.0.2.1", got) {
		t.Error("another node with the same secret refuses the cookie")
	}
	if valid(s, "192.0.2.2", got) {
		t.Error("a cookie is valid from another address")
	}
	bad := bytes.Clone(got)
	bad[23] ^= 1
	if valid(s, "192.0.2.1", bad) {
		t.Error("a cookie with a wrong hash is valid")
	}
	// An expired cookie (two hours old), made with the right secret.
	old := bytes.Clone(got)
	binary.BigEndian.PutUint32(old[12:16], uint32(time.Now().Add(-2*time.Hour).Unix()))
	k := s.edge.cookies.Load()
	binary.LittleEndian.PutUint64(old[16:24], cookieHash(k.cur, (*[8]byte)(old[:8]), old[8:16], netip.MustParseAddr("192.0.2.1")))
	if valid(s, "192.0.2.1", old) {
		t.Error("a two-hour-old cookie is valid")
	}
	binary.BigEndian.PutUint32(old[12:16], uint32(time.Now().Add(-30*time.Minute).Unix()))
	binary.LittleEndian.PutUint64(old[16:24], cookieHash(k.cur, (*[8]byte)(old[:8]), old[8:16], netip.MustParseAddr("192.0.2.1")))
	if !valid(s, "192.0.2.1", old) {
		t.Error("a half-hour-old cookie is not valid")
	}
	// A cookie dated in the future: a few minutes of clock skew between
	// nodes is allowed, more than 5 minutes is refused (RFC 9018 §4.3).
	dated := func(at time.Time) []byte {
		c := bytes.Clone(got)
		binary.BigEndian.PutUint32(c[12:16], uint32(at.Unix()))
		binary.LittleEndian.PutUint64(c[16:24], cookieHash(k.cur, (*[8]byte)(c[:8]), c[8:16], netip.MustParseAddr("192.0.2.1")))
		return c
	}
	if !valid(s, "192.0.2.1", dated(time.Now().Add(4*time.Minute))) {
		t.Error("a cookie 4 minutes in the future (clock skew) is not valid")
	}
	if valid(s, "192.0.2.1", dated(time.Now().Add(6*time.Minute))) {
		t.Error("a cookie 6 minutes in the future is valid")
	}
	if valid(s, "192.0.2.1", dated(time.Now().Add(12*time.Hour))) {
		t.Error("a cookie 12 hours in the future is valid")
	}

	// Rotation: the previous secret is still accepted, one older is not.
	s.SetCookieSecrets(CookieSecrets{Current: [16]byte{9}, Previous: secret.Current, HasPrevious: true})
	if !valid(s, "192.0.2.1", got) {
		t.Error("a cookie of the previous secret is refused after a rotation")
	}
	s.SetCookieSecrets(CookieSecrets{Current: [16]byte{10}, Previous: [16]byte{9}, HasPrevious: true})
	if valid(s, "192.0.2.1", got) {
		t.Error("a cookie two rotations old is accepted")
	}
	// Without a previous secret, its zero value is no key.
	s.SetCookieSecrets(CookieSecrets{Current: [16]byte{11}})
	zero := bytes.Clone(got)
	binary.LittleEndian.PutUint64(zero[16:24], cookieHash(sipKey([16]byte{}), (*[8]byte)(zero[:8]), zero[8:16], netip.MustParseAddr("192.0.2.1")))
	if valid(s, "192.0.2.1", zero) {
		t.Error("a cookie of the zero key is accepted when there is no previous secret")
	}

	// Malformed: FORMERR with an OPT and no cookie.
	for _, n := range []int{1, 5, 7, 9, 15, 41} {
		r := exchangeRaw(t, s, rawQuery(t, 3, cookieOption(bytes.Repeat([]byte{7}, n))), "192.0.2.1")
		if r.Rcode != dns.RcodeFormatError || r.IsEdns0() == nil || replyCookie(t, r) != nil {
			t.Errorf("cookie of %d bytes: rcode %s, OPT %v; want FORMERR with an OPT and no cookie", n, dns.RcodeToString[r.Rcode], r.IsEdns0())
		}
	}
	if n := testutil.ToFloat64(s.edge.m.cookieMalformed); n != 6 {
		t.Errorf("malformed cookies counted %v, want 6", n)
	}
}

func TestNSIDAndChaos(t *testing.T) {
	t.Parallel()
	s := newEdgeServer(t, prometheus.NewRegistry(), func(c *Config) { c.NSID, c.VersionString = "node-a", "glb 1.2" })
	quiet := newEdgeServer(t, prometheus.NewRegistry(), nil)

	nsid := []byte{0, optionNSID, 0, 0}
	r := exchangeRaw(t, s, rawQuery(t, 1, nsid), "192.0.2.1")
	var got string
	for _, o := range r.IsEdns0().Option {
		if n, ok := o.(*dns.EDNS0_NSID); ok {
			b, _ := hex.DecodeString(n.Nsid)
			got = string(b)
		}
	}
	if got != "node-a" {
		t.Errorf("NSID %q, want node-a", got)
	}
	r = exchangeRaw(t, quiet, rawQuery(t, 1, nsid), "192.0.2.1")
	if len(r.IsEdns0().Option) != 0 {
		t.Errorf("NSID sent without an identity: %v", r.IsEdns0())
	}
	r = exchangeRaw(t, s, rawQuery(t, 1, []byte{}), "192.0.2.1")
	if len(r.IsEdns0().Option) != 0 {
		t.Errorf("NSID sent unasked: %v", r.IsEdns0())
	}

	chaos := func(srv *Server, name string, qtype uint16) *dns.Msg {
		m := new(dns.Msg)
		m.SetQuestion(name, qtype)
		m.Question[0].Qclass = dns.ClassCHAOS
		q, _ := m.Pack()
		return exchangeRaw(t, srv, q, "192.0.2.1")
	}
	for _, n := range []string{"id.server.", "hostname.bind.", "ID.Server."} {
		r := chaos(s, n, dns.TypeTXT)
		if r.Rcode != dns.RcodeSuccess || !r.Authoritative || len(r.Answer) != 1 || r.Answer[0].(*dns.TXT).Txt[0] != "node-a" || r.Answer[0].Header().Class != dns.ClassCHAOS {
			t.Errorf("CH TXT %s: %v", n, r)
		}
	}
	if r := chaos(s, "version.bind.", dns.TypeTXT); len(r.Answer) != 1 || r.Answer[0].(*dns.TXT).Txt[0] != "glb 1.2" {
		t.Errorf("version.bind with a version string: %v", r)
	}
	for _, n := range []string{"version.bind.", "id.server.", "authors.bind."} {
		if r := chaos(quiet, n, dns.TypeTXT); r.Rcode != dns.RcodeRefused || len(r.Answer) != 0 {
			t.Errorf("CH TXT %s with nothing to tell: %v, want REFUSED", n, r)
		}
	}
}
