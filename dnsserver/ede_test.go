package dnsserver

import (
	"log/slog"
	"testing"

	"github.com/miekg/dns"

	"github.com/glb-dns/glb/geodata"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
)

// edeOf returns the Extended DNS Error of r, nil if none.
func edeOf(r *dns.Msg) *dns.EDNS0_EDE {
	if o := r.IsEdns0(); o != nil {
		for _, e := range o.Option {
			if x, ok := e.(*dns.EDNS0_EDE); ok {
				return x
			}
		}
	}
	return nil
}

// TestExtendedDNSErrors: each refusal and failure of the answer path says
// why with the code docs/spec.md assigns it, only to a query with an OPT
// (RFC 8914 §3), and a normal answer carries none.
func TestExtendedDNSErrors(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, nil)
	cases := []struct {
		name  string
		c     tcase
		rcode int
		code  int // -1: no EDE
	}{
		{"outside served zones", tcase{qname: "example.org.", qtype: dns.TypeA, edns: true}, dns.RcodeRefused, int(dns.ExtendedErrorCodeNotAuthoritative)},
		{"zone transfer", tcase{qname: "glb.example.com.", qtype: dns.TypeAXFR, edns: true, tcp: true}, dns.RcodeRefused, int(dns.ExtendedErrorCodeProhibited)},
		{"a normal answer", tcase{qname: "lb-off.glb.example.com.", qtype: dns.TypeA, edns: true}, dns.RcodeSuccess, -1},
		{"NXDOMAIN", tcase{qname: "nope.glb.example.com.", qtype: dns.TypeA, edns: true}, dns.RcodeNameError, -1},
	}
	for _, tc := range cases {
		_, r := exchangeProc(t, s, &tc.c)
		e := edeOf(r)
		switch {
		case r.Rcode != tc.rcode:
			t.Errorf("%s: rcode %s", tc.name, dns.RcodeToString[r.Rcode])
		case tc.code < 0 && e != nil:
			t.Errorf("%s: EDE %v", tc.name, e)
		case tc.code >= 0 && (e == nil || int(e.InfoCode) != tc.code || e.ExtraText == ""):
			t.Errorf("%s: EDE %v, want code %d with a text", tc.name, e, tc.code)
		}
		// Without an OPT there is nowhere to put it, and none is added.
		noOPT := tc.c
		noOPT.edns = false
		if _, r := exchangeProc(t, s, &noOPT); r.IsEdns0() != nil {
			t.Errorf("%s: an OPT in the reply to a query without one", tc.name)
		}
	}

	// Not ready: no snapshot yet.
	idle, err := New(Config{Addr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	_, r := exchangeProc(t, idle, &tcase{qname: "lb-off.glb.example.com.", qtype: dns.TypeA, edns: true})
	if e := edeOf(r); r.Rcode != dns.RcodeServerFailure || e == nil || e.InfoCode != dns.ExtendedErrorCodeNotReady {
		t.Errorf("not ready: %s %v", dns.RcodeToString[r.Rcode], e)
	}
}

// TestExtendedDNSErrorFailOpen: when every origin of the fallback pool is
// down and the answer fails open, it says so (Stale Answer); once one is
// up again, it does not.
func TestExtendedDNSErrorFailOpen(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	m := pools.DefaultMonitor()
	m.ID = "mon"
	cfg.Monitors = append(cfg.Monitors, m)
	for i := range cfg.Pools {
		if cfg.Pools[i].ID == "us" {
			cfg.Pools[i].Monitor = "mon"
		}
	}
	down := pools.NewHealth(map[pools.OriginKey]pools.OriginHealth{{Pool: "us", Origin: "us1"}: {Healthy: false, Reason: "test"}}, nil)
	for _, h := range []struct {
		health *pools.Health
		want   bool
	}{{down, true}, {nil, false}} {
		st, err := steering.Compile(cfg, h.health)
		if err != nil {
			t.Fatal(err)
		}
		nets, _ := geodata.NewNetworks(cfg.Networks)
		snap, err := Compile(st, geodata.Locator{Networks: nets})
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(Config{Addr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		s.Publish(snap)
		_, r := exchangeProc(t, s, &tcase{qname: "lb-off.glb.example.com.", qtype: dns.TypeA, edns: true})
		e := edeOf(r)
		if got := e != nil && e.InfoCode == dns.ExtendedErrorCodeStaleAnswer; got != h.want || r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 {
			t.Errorf("origin down %v: rcode %s, %d answers, EDE %v", h.want, dns.RcodeToString[r.Rcode], len(r.Answer), e)
		}
	}
}
