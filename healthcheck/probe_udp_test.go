package healthcheck

import (
	"bytes"
	"net"
	"testing"

	"github.com/glb-dns/glb/pools"
)

// udpOrigin is a real UDP server on 127.0.0.1 that answers each datagram
// with reply(datagram); a nil answer is no answer at all.
func udpOrigin(t *testing.T, reply func([]byte) []byte) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if out := reply(buf[:n]); out != nil {
				_, _ = pc.WriteTo(out, from)
			}
		}
	}()
	return pc.LocalAddr().String()
}

// closedUDPPort is a port nothing listens on a moment later: the kernel
// answers a datagram to it with ICMP port unreachable.
func closedUDPPort(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	_ = pc.Close()
	return addr
}

func udpMonitor(send, expect, enc string) pools.Monitor {
	m := monitor(pools.MonitorUDP)
	m.Send, m.Expect, m.PayloadEncoding = send, expect, enc
	return m
}

func TestUDPProbe(t *testing.T) {
	t.Parallel()
	// The origin answers "PONG <what was sent>" to a PING, nothing else.
	origin := udpOrigin(t, func(b []byte) []byte {
		if !bytes.HasPrefix(b, []byte("PING")) {
			return nil
		}
		return append([]byte("PONG "), b...)
	})
	cases := []struct {
		name    string
		m       pools.Monitor
		addr    string
		healthy bool
		reason  string
	}{
		{"text reply contains expect", udpMonitor("PING 1", "PONG", ""), origin, true, ""},
		{"any reply when expect is empty", udpMonitor("PING", "", pools.PayloadText), origin, true, ""},
		{"hex", udpMonitor("50 49 4e 47", "504f4e47", pools.PayloadHex), origin, true, ""},
		{"reply without expect", udpMonitor("PING", "HELLO", ""), origin, false, `reply does not contain "HELLO": "PONG PING"`},
		{"refused", udpMonitor("PING", "PONG", ""), closedUDPPort(t), false, "connection refused"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := wantProbe(t, c.addr, c.m, c.healthy, c.reason)
			if c.healthy && r.rtt <= 0 {
				t.Errorf("rtt %v, want one", r.rtt)
			}
		})
	}
}

// An origin that stays silent fails on the monitor's timeout (1 unit).
func TestUDPSilentTimesOut(t *testing.T) {
	t.Parallel()
	origin := udpOrigin(t, func([]byte) []byte { return nil })
	m := udpMonitor("PING", "PONG", "")
	m.Timeout = 1
	wantProbe(t, origin, m, false, "timeout after "+testUnit.String())
}

func TestUDPBadPayload(t *testing.T) {
	t.Parallel()
	wantProbe(t, closedUDPPort(t), udpMonitor("zz", "", pools.PayloadHex), false,
		"bad send: not hexadecimal: encoding/hex: invalid byte: U+007A 'z'")
}
