package dnsserver

import (
	"bytes"
	"context"
	"encoding/binary"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// udpPath is how a test server's UDP sockets answer.
type udpPath int

const (
	batched        udpPath = iota // the batched loop, sending through send-only twins where the system has them
	batchedNoTwins                // the batched loop, sending through the reading sockets
	portable                      // one datagram per system call
)

// startUDPPath starts a test server on addr with two UDP sockets on path
// (the batched paths only where the system has them).
func startUDPPath(t *testing.T, addr string, path udpPath) (netip.AddrPort, *Server) {
	t.Helper()
	s, err := New(Config{Addr: addr, UDPSockets: 2, Registerer: prometheus.NewRegistry(), Logger: slog.New(slog.DiscardHandler),
		UDPPath: map[udpPath]string{batched: UDPBatched, batchedNoTwins: UDPReader, portable: UDPPortable}[path]})
	if err != nil {
		t.Fatal(err)
	}
	s.Publish(compileTest(t, testConfig()))
	startServer(t, s)
	// The loops start in goroutines; wait until each has chosen its path.
	want := int32(0)
	if path != portable && runtime.GOOS == "linux" {
		want = 2
	}
	deadline := time.Now().Add(5 * time.Second)
	for int32(testutil.ToFloat64(s.metrics.udpBatched)) != want && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	if got := int32(testutil.ToFloat64(s.metrics.udpBatched)); got != want {
		t.Fatalf("%d sockets on the batched path, want %d", got, want)
	}
	return s.Addr(), s
}

// pathQueries is every UDP behaviour case as wire bytes, with the raw
// messages dig cannot send; want[i] tells whether query i is answered.
func pathQueries(t *testing.T) (qs [][]byte, want []bool) {
	t.Helper()
	s := newTestServer(t, prometheus.NewRegistry())
	add := func(q []byte) {
		qs = append(qs, q)
		want = append(want, s.handle(q, netipLoopback, false, nil) != nil)
	}
	for _, c := range cases {
		if c.tcp || c.procOnly {
			continue
		}
		q, err := c.msg().Pack()
		if err != nil {
			t.Fatal(err)
		}
		add(q)
	}
	response := rawQuery(t, 0, nil)
	response[2] |= 0x80
	add(response)
	notify := rawQuery(t, 0, nil)
	notify[2] |= 4 << 3
	add(notify)
	add(rawQuery(t, 0, ecsOption(1, 24, 0, 198, 51, 100, 1)))
	add(rawQuery(t, 0, ecsOption(3, 8, 0, 10)))
	add(rawQuery(t, 0, []byte{0, 10, 0, 8, 1}))
	add(rawQuery(t, 0, []byte{0xfd, 0xe9, 0, 2, 1, 2}))
	add(rawQuery(t, 0, nil)[:20])
	add([]byte{0, 0, 0})
	return qs, want
}

// TestUDPPathsAgree sends every UDP behaviour case to a server on each
// batched path (replies through send-only twins, and through the reading
// sockets) and to one on the portable path and compares the replies byte
// for byte: one at a time, then all at once from several clients so that
// the batched reads hold many datagrams from different senders.
func TestUDPPathsAgree(t *testing.T) {
	t.Parallel()
	qs, want := pathQueries(t)
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		t.Run(addr, func(t *testing.T) {
			portableAddr, _ := startUDPPath(t, addr, portable)
			for _, path := range []udpPath{batched, batchedNoTwins} {
				name := map[udpPath]string{batched: "twins", batchedNoTwins: "no twins"}[path]
				t.Run(name, func(t *testing.T) {
					batchedAddr, s := startUDPPath(t, addr, path)
					t.Run("one at a time", func(t *testing.T) {
						for i, q := range qs {
							if !want[i] {
								continue
							}
							rb := udpRoundTrip(t, batchedAddr, q)
							rp := udpRoundTrip(t, portableAddr, q)
							if !bytes.Equal(rb, rp) {
								t.Errorf("query %d: batched reply\n%x\nportable reply\n%x", i, rb, rp)
							}
						}
					})
					t.Run("bursts from several clients", func(t *testing.T) {
						rb := udpBurst(t, batchedAddr, qs, want)
						rp := udpBurst(t, portableAddr, qs, want)
						for c := range rb {
							for id, r := range rb[c] {
								if !bytes.Equal(r, rp[c][id]) {
									t.Errorf("client %d id %d: batched reply\n%x\nportable reply\n%x", c, id, r, rp[c][id])
								}
							}
						}
					})
					// Every reply left through the socket the path names.
					if runtime.GOOS != "linux" {
						return
					}
					if n := testutil.ToFloat64(s.metrics.readerReplies); path == batched && n != 0 {
						t.Errorf("%v replies sent through the reading sockets, want all through the twins", n)
					} else if path == batchedNoTwins && n == 0 {
						t.Error("no reply sent through the reading sockets")
					}
				})
			}
		})
	}
}

// TestUDPTwinsReceiveNothing: the send-only twins share the readers'
// SO_REUSEPORT group, yet every query reaches a reader, whichever the
// source port it comes from (the kernel's own choice would hand about
// half of them to twins, which nobody reads).
func TestUDPTwinsReceiveNothing(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		t.Run(addr, func(t *testing.T) {
			to, _ := startUDPPath(t, addr, batched)
			qs, want := pathQueries(t)
			q := qs[slices.Index(want, true)]
			for i := range 64 {
				if r := udpRoundTrip(t, to, q); len(r) < 12 {
					t.Fatalf("client %d: reply of %d bytes", i, len(r))
				}
			}
		})
	}
}

func udpRoundTrip(t *testing.T, to netip.AddrPort, q []byte) []byte {
	t.Helper()
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(to))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return udpWriteRead(t, c, q)
}

// udpBurst sends every query from each of several clients, interleaved,
// before reading any reply, and returns each client's replies by ID.
func udpBurst(t *testing.T, to netip.AddrPort, qs [][]byte, want []bool) []map[uint16][]byte {
	t.Helper()
	const clients = 4
	conns := make([]*net.UDPConn, clients)
	for i := range conns {
		c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(to))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
	}
	expect := 0
	for i, q := range qs {
		for c, conn := range conns {
			m := bytes.Clone(q)
			if len(m) >= 2 {
				binary.BigEndian.PutUint16(m, uint16(c*1000+i))
			}
			if _, err := conn.Write(m); err != nil {
				t.Fatal(err)
			}
		}
		if want[i] {
			expect++
		}
	}
	out := make([]map[uint16][]byte, clients)
	buf := make([]byte, 65535)
	for c, conn := range conns {
		out[c] = map[uint16][]byte{}
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		for len(out[c]) < expect {
			n, err := conn.Read(buf)
			if err != nil {
				t.Fatalf("client %d: %d of %d replies: %v", c, len(out[c]), expect, err)
			}
			id := binary.BigEndian.Uint16(buf)
			if int(id)/1000 != c || !want[int(id)%1000] {
				t.Fatalf("client %d: reply with id %d", c, id)
			}
			out[c][id] = bytes.Clone(buf[:n])
		}
	}
	return out
}

// TestPortInUseIsRefused: a server does not join sockets another server
// or process holds on its address, which would take a share of its
// queries; it says so and does not start.
func TestPortInUseIsRefused(t *testing.T) {
	t.Parallel()
	first, _ := startUDPPath(t, "127.0.0.1:0", batched)
	s, err := New(Config{Addr: first.String(), Registerer: prometheus.NewRegistry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	s.Publish(compileTest(t, testConfig()))
	if err := s.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "another DNS server") {
		if err == nil {
			_ = s.Shutdown(context.Background())
		}
		t.Fatalf("second server on %s: %v, want refused", first, err)
	}
	// The first still answers every query, from fresh source ports.
	qs, want := pathQueries(t)
	q := qs[slices.Index(want, true)]
	for range 16 {
		udpRoundTrip(t, first, q)
	}
}

// TestDefaultUDPSockets: two sockets per CPU the runtime uses, one on a
// single CPU, and New applies it when none is asked for.
func TestDefaultUDPSockets(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ procs, want int }{{1, 1}, {2, 4}, {8, 16}} {
		if got := defaultUDPSockets(c.procs); got != c.want {
			t.Errorf("defaultUDPSockets(%d) = %d, want %d", c.procs, got, c.want)
		}
	}
	s, err := New(Config{Addr: "127.0.0.1:0", Registerer: prometheus.NewRegistry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if want := defaultUDPSockets(runtime.GOMAXPROCS(0)); s.cfg.UDPSockets != want {
		t.Errorf("New without UDPSockets: %d sockets, want %d", s.cfg.UDPSockets, want)
	}
}
