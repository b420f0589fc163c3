//go:build linux

package dnsserver

import (
	"context"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/glb-dns/glb/dnsserver/xdp/xdplab"
)

// TestXDPSignsAndLimits: through the XDP path, a DO query on a signed
// zone gets signatures that verify, and response rate limiting holds a
// client over its rate to truncated replies (slip 1), as on the sockets.
func TestXDPSignsAndLimits(t *testing.T) {
	lab := xdplab.New(t)
	reg := prometheus.NewRegistry()
	s, err := New(Config{Addr: "[::]:0", UDPSockets: 1, Registerer: reg, Logger: slog.New(slog.DiscardHandler), RRL: RRLConfig{Rate: 2, Slip: 1}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := signedConfig(t, nil)
	s.Publish(compileTest(t, cfg))
	if err := xdplab.Do(lab.Server, func() error { return s.Start(context.Background()) }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	path := attachLabXDP(t, lab, s, reg)
	t.Cleanup(func() { _ = path.Close() })
	to := netip.AddrPortFrom(lab.Server6, s.Addr().Port()).String()

	var signed *dns.Msg
	var tc int
	err = xdplab.Do(lab.Client, func() error {
		m := new(dns.Msg).SetQuestion("ns1.glb.example.com.", dns.TypeA)
		m.SetEdns0(1232, true)
		c := &dns.Client{Net: "udp", Timeout: 5 * time.Second}
		var err error
		if signed, _, err = c.Exchange(m, to); err != nil {
			return err
		}
		// Over the rate: every limited reply slips out truncated.
		for range 20 {
			r, _, err := c.Exchange(new(dns.Msg).SetQuestion("ns1.glb.example.com.", dns.TypeA), to)
			if err != nil {
				return err
			}
			if r.Truncated {
				tc++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if by := verifySigned(t, signed, dnskeys(t, cfg.DNSSECKeys)); len(by) == 0 {
		t.Errorf("no verified RRSIG in the XDP reply:\n%v", signed)
	}
	if tc == 0 {
		t.Error("no truncated reply among 20 over a rate of 2 a second: RRL did not run on the XDP path")
	}
	if n := testutil.ToFloat64(s.edge.m.rrlSlipped); int(n) != tc {
		t.Errorf("RRL counted %v slipped replies, the client saw %d", n, tc)
	}
	// The queue counts a frame after it sent the reply, so the client can
	// hold the last reply before the counter does.
	deadline := time.Now().Add(5 * time.Second)
	for frames(t, reg, "answered") < 21 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := frames(t, reg, "answered"); got != 21 {
		t.Errorf("XDP answered %v frames, want 21", got)
	}
}
