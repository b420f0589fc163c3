//go:build linux

package dnsserver

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sys/unix"

	"github.com/glb-dns/glb/dnsserver/xdp"
	"github.com/glb-dns/glb/dnsserver/xdp/xdplab"
)

// xdpResponder adapts a Responder to xdp's interface.
func xdpTarget(s *Server) xdp.Target {
	return xdp.Target{Addr: s.Addr(), NewResponder: func() xdp.Responder { return s.NewResponder() }}
}

// attachLabXDP attaches the XDP path for s to the lab's server interface,
// in its namespace; the caller closes it.
func attachLabXDP(t *testing.T, lab *xdplab.Lab, s *Server, reg prometheus.Registerer) *xdp.Path {
	t.Helper()
	var path *xdp.Path
	err := xdplab.Do(lab.Server, func() error {
		var err error
		path, err = xdp.Attach(xdp.Config{Interface: lab.ServerIf, Targets: []xdp.Target{xdpTarget(s)}, Registerer: reg, Logger: slog.New(slog.DiscardHandler)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// startLabServer starts, in the lab's server namespace, a server on
// [::]:0 (dual-stack, as a node listening on every address) with the
// edge options on and the given cookie secret.
func startLabServer(t *testing.T, lab *xdplab.Lab, reg prometheus.Registerer, secret CookieSecrets) *Server {
	t.Helper()
	s, err := New(Config{Addr: "[::]:0", UDPSockets: 2, Registerer: reg, Logger: slog.New(slog.DiscardHandler), NSID: "lab-node", MaxTCPConns: 8, TCPIdleTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s.SetCookieSecrets(secret)
	s.Publish(compileTest(t, testConfig()))
	if err := xdplab.Do(lab.Server, func() error { return s.Start(context.Background()) }); err != nil {
		t.Fatal(err)
	}
	shutdownAtEnd(t, s)
	return s
}

// labQueries is every UDP behaviour case (pathQueries) and the same
// with the edge options a resolver sends: NSID and a client cookie.
func labQueries(t *testing.T) (qs [][]byte, want []bool) {
	qs, want = pathQueries(t)
	for _, c := range cases {
		if c.tcp || c.procOnly {
			continue
		}
		m := c.msg()
		o := m.IsEdns0()
		if o == nil {
			m.SetEdns0(1232, false)
			o = m.IsEdns0()
		}
		o.Option = append(o.Option, &dns.EDNS0_NSID{Code: dns.EDNS0NSID}, &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "0123456789abcdef"})
		q, err := m.Pack()
		if err != nil {
			t.Fatal(err)
		}
		qs, want = append(qs, q), append(want, true)
	}
	return qs, want
}

// TestXDPAnswersAsSockets: in a veth lab, a server answering through the
// AF_XDP path answers every UDP behaviour case, over IPv4 and IPv6, byte
// for byte as a server answering on its sockets does; queries the
// handler drops are dropped there too. Every reply came through the XDP
// path (its counters say so), and the program is gone once it is closed.
func TestXDPAnswersAsSockets(t *testing.T) {
	lab := xdplab.New(t)
	secret := CookieSecrets{Current: [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}}
	sock := startLabServer(t, lab, prometheus.NewRegistry(), secret)
	srv := startLabServer(t, lab, prometheus.NewRegistry(), secret)
	reg := prometheus.NewRegistry()
	path := attachLabXDP(t, lab, srv, reg)
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = path.Close()
		}
	})
	qs, want := labQueries(t)
	sent, dropped := 0, 0
	for _, server := range []netip.Addr{lab.Server4, lab.Server6} {
		sockAddr := netip.AddrPortFrom(server, sock.Addr().Port())
		xdpAddr := netip.AddrPortFrom(server, srv.Addr().Port())
		err := xdplab.Do(lab.Client, func() error {
			for i, q := range qs {
				if !want[i] {
					// Sent, not waited for: counted below as no reply.
					if err := labSend(xdpAddr, q); err != nil {
						return err
					}
					dropped++
					continue
				}
				// A server cookie holds the second it was made in: the
				// pair is asked again if a second began between them.
				for attempt := 0; ; attempt++ {
					before := time.Now().Unix()
					rx, err := labRoundTrip(xdpAddr, q)
					if err != nil {
						return fmt.Errorf("query %d to %s (XDP): %w", i, xdpAddr, err)
					}
					rs, err := labRoundTrip(sockAddr, q)
					if err != nil {
						return fmt.Errorf("query %d to %s (sockets): %w", i, sockAddr, err)
					}
					sent++
					if bytes.Equal(rx, rs) {
						break
					}
					if time.Now().Unix() == before || attempt == 2 {
						return fmt.Errorf("query %d over %s: XDP reply\n%x\nsocket reply\n%x", i, server, rx, rs)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// The queue counts a frame after it sent the reply, so the client can
	// hold the last reply before the counter does.
	deadline := time.Now().Add(5 * time.Second)
	for (frames(t, reg, "no_reply") < float64(dropped) || frames(t, reg, "answered") < float64(sent)) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("XDP %s mode, zero-copy %v: %d queries answered, %d dropped by the handler", path.Mode(), path.ZeroCopy(), sent, dropped)
	if got := frames(t, reg, "answered"); got != float64(sent) {
		t.Errorf("XDP path answered %v frames, want %d (every query sent to it)", got, sent)
	}
	if got := frames(t, reg, "no_reply"); got != float64(dropped) {
		t.Errorf("XDP path left %v queries unanswered, want %d", got, dropped)
	}
	if on, err := lab.XDPAttached(); err != nil || !on {
		t.Fatalf("XDP program attached: %v, %v; want true", on, err)
	}
	closed = true
	if err := path.Close(); err != nil {
		t.Fatal(err)
	}
	if on, err := lab.XDPAttached(); err != nil || on {
		t.Fatalf("XDP program attached after Close: %v, %v; want false", on, err)
	}
}

// frames sums glb_xdp_frames_total over queues for one result.
func frames(t *testing.T, reg *prometheus.Registry, result string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, mf := range mfs {
		if mf.GetName() != "glb_xdp_frames_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == result {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return total
}

func labSend(to netip.AddrPort, q []byte) error {
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(to))
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Write(q)
	return err
}

func labRoundTrip(to netip.AddrPort, q []byte) ([]byte, error) {
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(to))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	buf := make([]byte, 65535)
	for range 3 {
		if _, err := c.Write(q); err != nil {
			return nil, err
		}
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		n, err := c.Read(buf)
		if err == nil {
			return buf[:n], nil
		}
		if !strings.Contains(err.Error(), "timeout") {
			return nil, err
		}
	}
	return nil, fmt.Errorf("no reply from %s", to)
}

// TestXDPLeavesTheRestToTheKernel: with the XDP path attached, what it
// does not answer still works on the same interface through the kernel:
// ARP and ping, a query over TCP, dig following a truncated reply to
// TCP, and UDP queries the path must not parse (a fragmented one, one
// with IPv4 options), which the kernel's sockets answer.
func TestXDPLeavesTheRestToTheKernel(t *testing.T) {
	lab := xdplab.New(t)
	if _, err := exec.LookPath("dig"); err != nil {
		t.Skip("needs dig (bind9-dnsutils)")
	}
	srv := startLabServer(t, lab, prometheus.NewRegistry(), CookieSecrets{})
	reg := prometheus.NewRegistry()
	path := attachLabXDP(t, lab, srv, reg)
	t.Cleanup(func() { _ = path.Close() })
	port := fmt.Sprint(srv.Addr().Port())

	// ARP first: no neighbour is known yet, so the ping resolves it.
	if out, err := xdplab.Run(lab.Client, "ip", "neigh", "flush", "all"); err != nil {
		t.Fatalf("flush neighbours: %v\n%s", err, out)
	}
	for _, a := range []netip.Addr{lab.Server4, lab.Server6} {
		if out, err := xdplab.Run(lab.Client, "ping", "-c", "1", "-W", "5", a.String()); err != nil {
			t.Errorf("ping %s: %v\n%s", a, err, out)
		}
	}
	for _, a := range []netip.Addr{lab.Server4, lab.Server6} {
		out, err := xdplab.Run(lab.Client, "dig", "+tcp", "+tries=1", "+time=5", "-p", port, "@"+a.String(), "ns1.glb.example.com.", "A")
		if err != nil || !strings.Contains(out, "192.0.2.53") {
			t.Errorf("dig +tcp @%s: %v\n%s", a, err, out)
		}
		// The truncated reply comes through XDP; dig asks again over TCP.
		out, err = xdplab.Run(lab.Client, "dig", "+tries=1", "+time=5", "-p", port, "@"+a.String(), "big.glb.example.com.", "TXT")
		if err != nil || !strings.Contains(out, "Truncated, retrying in TCP mode") || strings.Count(out, "\tTXT\t") != 10 {
			t.Errorf("dig @%s big TXT: %v, want a truncated UDP reply then 10 TXT over TCP\n%s", a, err, out)
		}
	}
	if frames(t, reg, "answered") < 2 {
		t.Errorf("the XDP path answered %v queries, want the 2 truncated ones at least", frames(t, reg, "answered"))
	}

	// A query too large for one frame is fragmented by the client; the
	// program leaves the fragments to the kernel, which reassembles and
	// answers on its socket.
	m := new(dns.Msg)
	m.SetQuestion("ns1.glb.example.com.", dns.TypeA)
	m.SetEdns0(1232, false)
	m.IsEdns0().Option = append(m.IsEdns0().Option, &dns.EDNS0_PADDING{Padding: make([]byte, 2000)})
	big, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	before := frames(t, reg, "answered")
	err = xdplab.Do(lab.Client, func() error {
		for _, a := range []netip.Addr{lab.Server4, lab.Server6} {
			r, err := labRoundTrip(netip.AddrPortFrom(a, srv.Addr().Port()), big)
			if err != nil {
				return fmt.Errorf("fragmented query to %s: %w", a, err)
			}
			if len(r) < 12 || r[3]&0xf != 0 {
				return fmt.Errorf("fragmented query to %s: reply %x", a, r)
			}
		}
		// IPv4 options (four no-ops): the kernel's to parse.
		c, err := net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(netip.AddrPortFrom(lab.Server4, srv.Addr().Port())))
		if err != nil {
			return err
		}
		defer c.Close()
		rc, err := c.SyscallConn()
		if err != nil {
			return err
		}
		var serr error
		if err := rc.Control(func(fd uintptr) {
			serr = unix.SetsockoptString(int(fd), unix.IPPROTO_IP, unix.IP_OPTIONS, "\x01\x01\x01\x00")
		}); err != nil || serr != nil {
			return fmt.Errorf("IP_OPTIONS: %v %v", err, serr)
		}
		q, _ := new(dns.Msg).SetQuestion("ns1.glb.example.com.", dns.TypeA).Pack()
		if _, err := c.Write(q); err != nil {
			return err
		}
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 1500)
		if _, err := c.Read(buf); err != nil {
			return fmt.Errorf("query with IPv4 options: %w", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := frames(t, reg, "answered"); got != before {
		t.Errorf("the XDP path answered %v of the queries it must leave to the kernel", got-before)
	}
	passed := map[string]float64{}
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() == "glb_xdp_passed_total" {
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "reason" {
						passed[l.GetValue()] += m.GetCounter().GetValue()
					}
				}
			}
		}
	}
	// Two fragments for each family, one datagram with options.
	if passed["fragment"] != 4 || passed["options"] != 1 {
		t.Errorf("passed to the kernel: %v, want 4 fragments and 1 with options", passed)
	}
}
