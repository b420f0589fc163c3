package dnsserver

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestBatchIO: datagrams waiting on a socket come back from one read, in
// order, each with its sender, and the replies go out in one write to the
// right senders.
func TestBatchIO(t *testing.T) {
	t.Parallel()
	srv, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	rc, err := srv.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	const n = 10
	var clients [2]*net.UDPConn
	for i := range clients {
		if clients[i], err = net.DialUDP("udp", nil, srv.LocalAddr().(*net.UDPAddr)); err != nil {
			t.Fatal(err)
		}
		defer clients[i].Close()
	}
	for i := range n {
		if _, err := clients[i%2].Write(fmt.Appendf(nil, "q%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	b := newBatchIO()
	if err := rc.Read(b.recv); err != nil || b.rerr != 0 {
		t.Fatalf("read: %v %v", err, b.rerr)
	}
	if b.n != n {
		t.Fatalf("one read returned %d datagrams, want the %d waiting", b.n, n)
	}
	for i := range n {
		from := clients[i%2].LocalAddr().(*net.UDPAddr).AddrPort() // the port too: a handed-off answer goes there
		if got := b.in[i][:b.rhdr[i].Len]; string(got) != fmt.Sprintf("q%d", i) || b.source(i) != from {
			t.Errorf("datagram %d: %q from %v, want q%d from %v", i, got, b.source(i), i, from)
		}
		b.queue(i, fmt.Appendf(b.out[i][:0], "r%d", i))
	}
	if err := rc.Write(b.send); err != nil || b.sent != n {
		t.Fatalf("write: %v, %d of %d sent", err, b.sent, n)
	}
	buf := make([]byte, 16)
	for i := range n {
		c := clients[i%2]
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		k, err := c.Read(buf)
		if err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		if want := fmt.Appendf(nil, "r%d", i); !bytes.Equal(buf[:k], want) {
			t.Errorf("reply %q, want %q", buf[:k], want)
		}
	}
}

// TestBatchedLoopAllocatesNothing: a whole turn of the batched loop (read
// a batch, answer each query, send the replies through the twin)
// allocates nothing.
func TestBatchedLoopAllocatesNothing(t *testing.T) {
	s := newTestServer(t, prometheus.NewRegistry())
	lc := net.ListenConfig{Control: reusePort}
	pc, err := lc.ListenPacket(context.Background(), "udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := pc.(*net.UDPConn)
	defer srv.Close()
	twins := sendTwins([]*net.UDPConn{srv})
	if len(twins) != 1 {
		t.Fatalf("%d send-only twins, want 1", len(twins))
	}
	defer closeFDs(twins)
	rc, err := srv.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	client, err := net.DialUDP("udp", nil, srv.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	queries := [][]byte{
		benchQuery(t, "ns1.glb.example.com.", ""),
		benchQuery(t, "lb-geo.glb.example.com.", "198.51.100.0/24"),
		benchQuery(t, "www.glb.example.com.", "203.0.113.0/24"),
		benchQuery(t, "nope.glb.example.com.", ""),
	}
	b, w := newBatchIO(), newWorker()
	buf := make([]byte, 2048)
	turn := func() {
		for _, q := range queries {
			if _, err := client.Write(q); err != nil {
				t.Fatal(err)
			}
		}
		for got := 0; got < len(queries); got += b.n {
			if err := rc.Read(b.recv); err != nil {
				t.Fatal(err)
			}
			b.answer(s, w)
			if err := b.flush(s, rc, twins[0]); err != nil || b.sent != b.n {
				t.Fatalf("write: %v, %d of %d sent", err, b.sent, b.n)
			}
		}
		for range queries {
			if _, err := client.Read(buf); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := testing.AllocsPerRun(200, turn); n != 0 {
		t.Errorf("%.1f allocations per turn, want 0", n)
	}
	if n := testutil.ToFloat64(s.metrics.readerReplies); n != 0 {
		t.Errorf("%v replies sent through the reading socket, want all through the twin", n)
	}
}
