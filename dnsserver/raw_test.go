package dnsserver

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/glb-dns/glb/geodata"
	"github.com/glb-dns/glb/internal/testnode"
	"github.com/glb-dns/glb/steering"
)

// rawQuery packs a query for ns1 A with an OPT record whose rdata is opts
// (nil: no OPT).
func rawQuery(t testing.TB, id uint16, opts []byte) []byte {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion("ns1.glb.example.com.", dns.TypeA)
	m.Id = id
	b, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	if opts == nil {
		return b
	}
	b[11] = 1 // ARCOUNT
	opt := []byte{0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint16(opt[9:], uint16(len(opts)))
	return append(append(b, opt...), opts...)
}

func ecsOption(family uint16, source, scope uint8, addr ...byte) []byte {
	o := []byte{0, 8, 0, 0, 0, 0, source, scope}
	binary.BigEndian.PutUint16(o[2:], uint16(4+len(addr)))
	binary.BigEndian.PutUint16(o[4:], family)
	return append(o, addr...)
}

// udpWriteRead sends q on c and returns the reply, waiting 5 s at most.
func udpWriteRead(t *testing.T, c *net.UDPConn, q []byte) []byte {
	t.Helper()
	if _, err := c.Write(q); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 65535)
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := c.Read(buf)
	if err != nil {
		t.Fatalf("no reply: %v", err)
	}
	return buf[:n]
}

func udpExchange(t *testing.T, c *net.UDPConn, q []byte) *dns.Msg {
	t.Helper()
	r := new(dns.Msg)
	if err := r.Unpack(udpWriteRead(t, c, q)); err != nil {
		t.Fatalf("reply does not unpack: %v", err)
	}
	return r
}

// TestRawSocket sends what dig cannot: a response, malformed messages and
// bad ECS options, over a real UDP socket.
func TestRawSocket(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	s := newTestServer(t, reg)
	addr := startServer(t, s)
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	t.Run("QR=1 dropped", func(t *testing.T) {
		q := rawQuery(t, 1, nil)
		q[2] |= 0x80
		if _, err := c.Write(q); err != nil {
			t.Fatal(err)
		}
		// Each datagram goes to a reader at random, so the response may
		// be handled after a later query: wait until it has been (the
		// counter moves once the reader is done with it).
		testnode.Eventually(t, 5*time.Second, "the response dropped", func() (bool, string) {
			n := testutil.ToFloat64(s.metrics.dropped)
			return n >= 1, fmt.Sprintf("dropped counter %v", n)
		})
		// The next query's reply is the first thing read: the response,
		// handled before it was sent, got none.
		r := udpExchange(t, c, rawQuery(t, 2, nil))
		if r.Id != 2 {
			t.Errorf("reply id %d: the QR=1 message was answered", r.Id)
		}
	})
	formerr := func(t *testing.T, q []byte, wantOPT bool) {
		t.Helper()
		r := udpExchange(t, c, q)
		if r.Rcode != dns.RcodeFormatError {
			t.Errorf("rcode %s, want FORMERR", dns.RcodeToString[r.Rcode])
		}
		if (r.IsEdns0() != nil) != wantOPT {
			t.Errorf("OPT present %v, want %v", r.IsEdns0() != nil, wantOPT)
		}
		if r.Authoritative || len(r.Answer) > 0 {
			t.Errorf("FORMERR with AA or an answer: %v", r)
		}
	}
	t.Run("ECS bits beyond the prefix", func(t *testing.T) {
		formerr(t, rawQuery(t, 3, ecsOption(1, 24, 0, 198, 51, 100, 1)), true)
	})
	t.Run("ECS address longer than the prefix needs", func(t *testing.T) {
		formerr(t, rawQuery(t, 4, ecsOption(1, 24, 0, 198, 51, 100, 0)), true)
	})
	t.Run("ECS address shorter than the prefix needs", func(t *testing.T) {
		formerr(t, rawQuery(t, 5, ecsOption(1, 24, 0, 198, 51)), true)
	})
	t.Run("ECS unknown family", func(t *testing.T) {
		formerr(t, rawQuery(t, 6, ecsOption(3, 8, 0, 10)), true)
	})
	t.Run("ECS scope set in a query", func(t *testing.T) {
		formerr(t, rawQuery(t, 7, ecsOption(1, 24, 16, 198, 51, 100)), true)
	})
	t.Run("ECS prefix too long for IPv4", func(t *testing.T) {
		formerr(t, rawQuery(t, 8, ecsOption(1, 33, 0, 1, 2, 3, 4, 0)), true)
	})
	t.Run("option overruns the OPT", func(t *testing.T) {
		formerr(t, rawQuery(t, 9, []byte{0, 10, 0, 8, 1}), true)
	})
	t.Run("two OPT records", func(t *testing.T) {
		q := rawQuery(t, 10, []byte{})
		q = append(q, 0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0)
		q[11] = 2
		formerr(t, q, true)
	})
	t.Run("OPT not at the root", func(t *testing.T) {
		q := rawQuery(t, 11, nil)
		q[11] = 1
		q = append(q, 1, 'x', 0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0)
		formerr(t, q, true)
	})
	t.Run("QDCOUNT 2", func(t *testing.T) {
		q := rawQuery(t, 12, nil)
		q[5] = 2
		q = append(q, q[12:]...)
		formerr(t, q, false)
	})
	t.Run("QDCOUNT 0", func(t *testing.T) {
		q := rawQuery(t, 13, nil)[:12]
		q[5] = 0
		formerr(t, q, false)
	})
	t.Run("truncated question", func(t *testing.T) {
		formerr(t, rawQuery(t, 14, nil)[:20], false)
	})
	t.Run("unknown option ignored and not echoed", func(t *testing.T) {
		r := udpExchange(t, c, rawQuery(t, 15, []byte{0xfd, 0xe9, 0, 2, 1, 2}))
		if r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 {
			t.Fatalf("reply %v", r)
		}
		if o := r.IsEdns0(); o == nil || len(o.Option) != 0 {
			t.Errorf("OPT %v, want one without options", o)
		}
	})
	t.Run("unknown EDNS flags cleared", func(t *testing.T) {
		q := rawQuery(t, 16, []byte{})
		binary.BigEndian.PutUint16(q[len(q)-4:], 0x7fff) // every flag but DO
		r := udpExchange(t, c, q)
		if o := r.IsEdns0(); o == nil || o.Hdr.Ttl != 0 {
			t.Errorf("OPT %v, want flags 0", o)
		}
	})
}

// TestTCPPipelined writes several queries before reading any reply.
func TestTCPPipelined(t *testing.T) {
	t.Parallel()
	c := dialTestServer(t, "tcp")
	var all []byte
	const n = 5
	for i := range n {
		q := rawQuery(t, uint16(100+i), nil)
		all = binary.BigEndian.AppendUint16(all, uint16(len(q)))
		all = append(all, q...)
	}
	if _, err := c.Write(all); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	for i := range n {
		var l [2]byte
		if _, err := io.ReadFull(c, l[:]); err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		buf := make([]byte, binary.BigEndian.Uint16(l[:]))
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatal(err)
		}
		r := new(dns.Msg)
		if err := r.Unpack(buf); err != nil {
			t.Fatal(err)
		}
		if r.Id != uint16(100+i) || len(r.Answer) != 1 {
			t.Errorf("reply %d: id %d, %d answers", i, r.Id, len(r.Answer))
		}
	}
}

// TestTCPIdleClosed: a connection that sends nothing is closed by the
// server after the idle timeout (2s in tests).
func TestTCPIdleClosed(t *testing.T) {
	t.Parallel()
	c := dialTestServer(t, "tcp")
	start := time.Now()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := c.Read(make([]byte, 1))
	if err != io.EOF {
		t.Fatalf("read: %v, want EOF from the server closing", err)
	}
	if d := time.Since(start); d < time.Second || d > 8*time.Second {
		t.Errorf("closed after %v, want about 2s", d)
	}
}

// TestNotReady: before any snapshot, SERVFAIL without AA.
func TestNotReady(t *testing.T) {
	t.Parallel()
	s, err := New(Config{Addr: "127.0.0.1:0", Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	out := s.handle(rawQuery(t, 1, nil), netipLoopback, false, nil)
	r := new(dns.Msg)
	if err := r.Unpack(out); err != nil {
		t.Fatal(err)
	}
	if r.Rcode != dns.RcodeServerFailure || r.Authoritative {
		t.Errorf("rcode %s aa %v, want SERVFAIL without AA", dns.RcodeToString[r.Rcode], r.Authoritative)
	}
}

type panicLocator struct{}

func (panicLocator) Locate(netip.Prefix) geodata.Location { panic("locator bug") }

// TestPanicRecovered: a panic below the handler is answered SERVFAIL and
// counted; the server keeps answering.
func TestPanicRecovered(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, prometheus.NewRegistry())
	st, err := steering.Compile(testConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := Compile(st, panicLocator{})
	if err != nil {
		t.Fatal(err)
	}
	s.Publish(snap)
	c := tcase{qname: "lb-geo.glb.example.com.", qtype: dns.TypeA, ecs: "198.51.100.0/24"}
	_, r := exchangeProc(t, s, &c)
	if r.Rcode != dns.RcodeServerFailure || r.Authoritative || len(r.Answer) != 0 {
		t.Errorf("reply %v, want SERVFAIL without AA", r)
	}
	if got := testutil.ToFloat64(s.metrics.panics); got != 1 {
		t.Errorf("panics %v, want 1", got)
	}
	c = tcase{qname: "ns1.glb.example.com.", qtype: dns.TypeA, flags: "qr aa", answer: []string{"ns1.glb.example.com. 300 IN A 192.0.2.53"}}
	q, r := exchangeProc(t, s, &c)
	c.check(t, q, r)
}

// dialTestServer connects over network (tcp, udp) to a test server of its
// own, started for the test; the connection closes when the test ends.
func dialTestServer(t *testing.T, network string) net.Conn {
	t.Helper()
	addr := startServer(t, newTestServer(t, prometheus.NewRegistry()))
	c, err := net.Dial(network, addr.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
