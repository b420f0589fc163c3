package healthcheck

import (
	"net"
	"net/netip"
	"testing"

	"github.com/glb-dns/glb/pools"
)

// acceptor is a TCP origin that reports the source of each connection.
func acceptor(t *testing.T, network, addr string) (net.Listener, <-chan string) {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	from := make(chan string, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			host, _, _ := net.SplitHostPort(c.RemoteAddr().String())
			_ = c.Close()
			select {
			case from <- host:
			default:
			}
		}
	}()
	return ln, from
}

// probeSeen probes a TCP listener on listen from src, fails the test if
// the origin is not found healthy, and returns the result and the address
// the origin saw the probe come from.
func probeSeen(t *testing.T, listen string, src netip.Addr) (result, string) {
	t.Helper()
	ln, from := acceptor(t, "tcp", listen)
	r := probeOnce(t, targetFor(t, ln.Addr().String(), monitor(pools.MonitorTCP), pools.Origin{}), src)
	if !r.healthy {
		t.Fatalf("unhealthy: %s", r.reason)
	}
	return r, <-from
}

func TestTCPAccepting(t *testing.T) {
	t.Parallel()
	r, got := probeSeen(t, "127.0.0.1:0", none)
	if r.rtt <= 0 {
		t.Fatalf("rtt=%v, want an RTT", r.rtt)
	}
	if got != "127.0.0.1" {
		t.Errorf("connection from %s", got)
	}
}

func TestTCPRefused(t *testing.T) {
	t.Parallel()
	wantProbe(t, closedPort(t), monitor(pools.MonitorTCP), false, "connection refused")
}

func TestTCPSourceAddress(t *testing.T) {
	t.Parallel()
	if _, got := probeSeen(t, "127.0.0.1:0", netip.MustParseAddr("127.0.0.2")); got != "127.0.0.2" {
		t.Errorf("origin saw the probe from %s, want 127.0.0.2", got)
	}
}

func TestTCPIPv6(t *testing.T) {
	t.Parallel()
	if _, got := probeSeen(t, "[::1]:0", none); got != "::1" {
		t.Errorf("connection from %s, want ::1", got)
	}
}

func TestTCPNeedsPort(t *testing.T) {
	t.Parallel()
	m := monitor(pools.MonitorTCP)
	p := pools.DefaultPool()
	o := pools.Origin{Name: "o", Address: "127.0.0.1"}
	tg := newTarget(&p, newSpec(&m, testUnit), &o)
	r := probeOnce(t, tg, none)
	if r.healthy || r.reason != "tcp monitor has no port" {
		t.Errorf("healthy=%v reason=%q", r.healthy, r.reason)
	}
}
