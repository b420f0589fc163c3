package dnsserver

import (
	"regexp"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

var digCookieRe = regexp.MustCompile(`; COOKIE: ([0-9a-f]+)(?: \((\w+)\))?`)

// TestDigCookiesAndNSID: what dig shows of cookies, NSID and CHAOS.
func TestDigCookiesAndNSID(t *testing.T) {
	t.Parallel()
	secret := CookieSecrets{Current: [16]byte{42}}
	s := newEdgeServer(t, prometheus.NewRegistry(), func(c *Config) { c.NSID = "node-a" })
	s.SetCookieSecrets(secret)
	port := digPort(t, s)
	other := newEdgeServer(t, prometheus.NewRegistry(), func(c *Config) { c.NSID = "node-b" })
	other.SetCookieSecrets(secret)
	otherPort := digPort(t, other)

	t.Run("cookie good on resend, also to another node", func(t *testing.T) {
		r := dig(t, port, "+cookie", "ns1.glb.example.com", "A")
		m := digCookieRe.FindStringSubmatch(r.raw)
		if m == nil || len(m[1]) != 48 {
			t.Fatalf("no client+server cookie in the reply:\n%s", r.raw)
		}
		for _, srv := range []struct {
			s    *Server
			port string
		}{{s, port}, {other, otherPort}} {
			before := testutil.ToFloat64(srv.s.edge.m.cookieValid)
			r2 := dig(t, srv.port, "+cookie="+m[1], "ns1.glb.example.com", "A")
			m2 := digCookieRe.FindStringSubmatch(r2.raw)
			if m2 == nil || m2[2] != "good" {
				t.Errorf("resent cookie not reported good:\n%s", r2.raw)
			}
			r2.wantStatus(t, "NOERROR")
			if testutil.ToFloat64(srv.s.edge.m.cookieValid) != before+1 {
				t.Errorf("the server did not count the cookie valid")
			}
		}
	})
	t.Run("5-byte cookie FORMERR", func(t *testing.T) {
		r := dig(t, port, "+ednsopt=10:0102030405", "ns1.glb.example.com", "A")
		r.wantStatus(t, "FORMERR")
		if !r.hasOPT {
			t.Errorf("FORMERR without an OPT:\n%s", r.raw)
		}
	})
	t.Run("NSID names the node", func(t *testing.T) {
		for _, n := range []struct{ port, name string }{{port, "node-a"}, {otherPort, "node-b"}} {
			r := dig(t, n.port, "+nsid", "ns1.glb.example.com", "A")
			if !regexp.MustCompile(`; NSID: .*\("` + n.name + `"\)`).MatchString(r.raw) {
				t.Errorf("NSID %s not shown:\n%s", n.name, r.raw)
			}
		}
	})
	t.Run("CHAOS id.server", func(t *testing.T) {
		r := dig(t, port, "CH", "TXT", "id.server")
		r.wantStatus(t, "NOERROR")
		r.wantAnswer(t, `id.server. 0 CH TXT "node-a"`)
		r = dig(t, port, "CH", "TXT", "version.bind")
		r.wantStatus(t, "REFUSED")
	})
}
