package healthcheck

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/glb-dns/glb/dnsserver"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
)

// glbOrigin serves zone probe.test with glb's own DNS server over UDP and
// TCP on one port of 127.0.0.1: a real DNS server for dns monitors.
func glbOrigin(t *testing.T) string {
	t.Helper()
	cfg := pools.NewConfig()
	cfg.Zones = append(cfg.Zones, pools.Zone{Meta: pools.Meta{ID: "z"}, Name: "probe.test", TTL: 300,
		Nameservers: []string{"ns1.probe.test"},
		Records: []pools.Record{
			{Name: "ns1.probe.test", Type: "A", Content: "127.0.0.1"},
			{Name: "www.probe.test", Type: "A", Content: "192.0.2.7"},
			{Name: "www.probe.test", Type: "A", Content: "192.0.2.8"},
			{Name: "probe.test", Type: "TXT", Content: `"v=ok"`},
		}})
	st, err := steering.Compile(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := dnsserver.Compile(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := dnsserver.New(dnsserver.Config{Addr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	s.Publish(snap)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	return s.Addr().String()
}

func dnsMonitor(proto, name, qtype, rcode, answer string) pools.Monitor {
	m := monitor(pools.MonitorDNS)
	m.Protocol, m.QueryName, m.QueryType, m.ExpectedRcode, m.ExpectedAnswer = proto, name, qtype, rcode, answer
	return m
}

func TestDNSProbe(t *testing.T) {
	t.Parallel()
	origin := glbOrigin(t)
	cases := []struct {
		name    string
		m       pools.Monitor
		healthy bool
		reason  string
	}{
		{"udp NOERROR", dnsMonitor("", "www.probe.test", "A", "", ""), true, ""},
		{"tcp answer", dnsMonitor("tcp", "www.probe.test.", "a", "NOERROR", "192.0.2.8"), true, ""},
		{"udp answer", dnsMonitor("udp", "www.probe.test", "A", "noerror", "192.0.2.7"), true, ""},
		{"txt answer, any case", dnsMonitor("udp", "probe.test", "TXT", "", "V=OK"), true, ""},
		{"answer missing", dnsMonitor("udp", "www.probe.test", "A", "", "192.0.2.9"), false,
			`no answer record contains "192.0.2.9" (2 answers)`},
		{"rcode other than expected", dnsMonitor("tcp", "nope.probe.test", "A", "", ""), false,
			"DNS rcode NXDOMAIN, expected NOERROR"},
		{"NXDOMAIN expected", dnsMonitor("udp", "nope.probe.test", "A", "NXDOMAIN", ""), true, ""},
		{"outside the zone", dnsMonitor("udp", "example.org", "A", "", ""), false,
			"DNS rcode REFUSED, expected NOERROR"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := wantProbe(t, origin, c.m, c.healthy, c.reason)
			if c.healthy && r.rtt <= 0 {
				t.Errorf("rtt %v, want one", r.rtt)
			}
		})
	}
}

func TestDNSRefused(t *testing.T) {
	t.Parallel()
	wantProbe(t, closedUDPPort(t), dnsMonitor("udp", "www.probe.test", "A", "", ""), false, "connection refused")
	wantProbe(t, closedPort(t), dnsMonitor("tcp", "www.probe.test", "A", "", ""), false, "connection refused")
}

// A reply that is not DNS (a UDP echo) fails with the reason.
func TestDNSNotDNS(t *testing.T) {
	t.Parallel()
	origin := udpOrigin(t, func(b []byte) []byte { return []byte{b[0], b[1], 0xff} })
	r := probeOnce(t, targetFor(t, origin, dnsMonitor("udp", "www.probe.test", "A", "", ""), pools.Origin{}), none)
	if r.healthy || r.reason == "" {
		t.Errorf("healthy=%v reason=%q, want down for a malformed response", r.healthy, r.reason)
	}
}

// A datagram with another query's id (a late reply, a forgery) is
// skipped, and the real reply that follows counts.
func TestDNSSkipsOtherIDs(t *testing.T) {
	t.Parallel()
	real := glbOrigin(t)
	relay := udpRelayTwice(t, real)
	wantProbe(t, relay, dnsMonitor("udp", "www.probe.test", "A", "", "192.0.2.7"), true, "")
}

// udpRelayTwice answers each query with the upstream's answer twice: first
// with its id flipped, then as it is.
func udpRelayTwice(t *testing.T, upstream string) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	go func() {
		buf := make([]byte, 4096)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			c, err := net.Dial("udp", upstream)
			if err != nil {
				continue
			}
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			_, _ = c.Write(buf[:n])
			ans := make([]byte, 4096)
			m, err := c.Read(ans)
			c.Close()
			if err != nil {
				continue
			}
			other := append([]byte(nil), ans[:m]...)
			other[0] ^= 0xff
			_, _ = pc.WriteTo(other, from)
			_, _ = pc.WriteTo(ans[:m], from)
		}
	}()
	return pc.LocalAddr().String()
}
