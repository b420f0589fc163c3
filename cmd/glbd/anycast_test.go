package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/net/dns/dnsmessage"

	"github.com/glb-dns/glb/bgp"
	"github.com/glb-dns/glb/internal/birdtest"
)

// servingState is what a node serves, set by the test.
type servingState struct {
	mu        sync.Mutex
	ok        bool
	confirmed time.Time
}

func (s *servingState) serving() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return "glb.example.com", s.ok
}

func (s *servingState) confirmedAt() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.confirmed
}

func (s *servingState) set(ok bool, confirmed time.Time) {
	s.mu.Lock()
	s.ok, s.confirmed = ok, confirmed
	s.mu.Unlock()
}

// soaServer answers every query on addr authoritatively, as a node's
// listener does for its zone's SOA, until closed.
func soaServer(t *testing.T, addr string) *net.UDPConn {
	t.Helper()
	a, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.ListenUDP("udp", a)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := c.ReadFromUDP(buf)
			if err != nil {
				return
			}
			var m dnsmessage.Message
			if m.Unpack(buf[:n]) != nil {
				continue
			}
			m.Header.Response, m.Header.Authoritative = true, true
			out, _ := m.Pack()
			_, _ = c.WriteToUDP(out, from)
		}
	}()
	return c
}

// TestAnycastSelfProbe follows anycast's rule through a real BIRD: not
// announced before the first self-probe answers nor without a snapshot;
// announced once both hold; withdrawn after three failed probes and again
// on the first answer; withdrawn at once on drain; withdrawn while the
// snapshot is older than --max-stale and kept while it is not.
func TestAnycastSelfProbe(t *testing.T) {
	t.Parallel()
	bird := birdtest.Start(t, birdtest.Config{Local: "127.0.0.2", ASN: 65000,
		Neighbors: []birdtest.Neighbor{{Name: "glb1", Addr: "127.0.0.1", ASN: 65001}}})
	dns := soaServer(t, "127.0.0.1:0")
	listener := netip.MustParseAddrPort(dns.LocalAddr().String())
	src := &servingState{}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(testWriter{t}, nil))
	}
	a, err := newAnycast(context.Background(), bgp.Config{
		ASN: 65001, RouterID: netip.MustParseAddr("192.0.2.1"), HoldTime: 3 * time.Second,
		Peers:    []bgp.Peer{{Addr: netip.MustParseAddr("127.0.0.2"), Port: uint16(bird.Port), ASN: 65000}},
		Prefixes: []netip.Prefix{netip.MustParsePrefix("192.0.2.53/32")},
	}, 30*time.Second, log, src, listener, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer a.stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go a.run(ctx)
	const route = "192.0.2.53/32"

	// No snapshot: the probes answer, nothing is announced.
	eventually(t, 15*time.Second, "bgp session up", func() (bool, string) {
		return bird.Established("glb1"), ""
	})
	time.Sleep(2 * selfProbeEvery) // a span in which an announcement would show
	if r, _ := bird.Routes(); len(r) != 0 {
		t.Fatalf("announced without a snapshot: %v", r)
	}

	src.set(true, time.Now())
	_, took := bird.WaitRoute(t, route, true, 3*selfProbeEvery)
	t.Logf("announced %v after the snapshot", took)
	if st := a.Status(); len(st.Announced) != 1 || st.Announced[0] != route || st.Sessions[0].State != "established" {
		t.Errorf("status %+v, want %s announced over an established session", st, route)
	}

	// The listener stops answering: three failed probes withdraw.
	addr := dns.LocalAddr().String()
	dns.Close()
	stopped := time.Now()
	bird.WaitRoute(t, route, false, (selfProbeFailures+2)*selfProbeEvery)
	if since := time.Since(stopped); since < (selfProbeFailures-1)*selfProbeEvery {
		t.Errorf("withdrawn %v after the listener stopped: before three failed probes", since)
	}
	t.Logf("withdrawn %v after the listener stopped answering", time.Since(stopped))
	if st := a.Status(); len(st.Announced) != 0 {
		t.Errorf("status announces %v after withdrawal", st.Announced)
	}
	// It answers again: the first good probe announces.
	dns = soaServer(t, addr)
	defer dns.Close()
	bird.WaitRoute(t, route, true, 3*selfProbeEvery)

	// A drain withdraws at once, not at the next probe.
	drained := time.Now()
	a.SetDraining(true)
	if a.sp.Announced() {
		t.Error("still announced when SetDraining(true) returned")
	}
	bird.WaitRoute(t, route, false, selfProbeEvery)
	t.Logf("withdrawn %v after the drain", time.Since(drained))
	a.SetDraining(false)
	bird.WaitRoute(t, route, true, 3*selfProbeEvery)

	// Cut from the store: a snapshot 20 s old is within --max-stale 30s
	// and keeps announcing; one 40 s old is not.
	src.set(true, time.Now().Add(-20*time.Second))
	time.Sleep(2 * selfProbeEvery)
	bird.WaitRoute(t, route, true, 0)
	src.set(true, time.Now().Add(-40*time.Second))
	bird.WaitRoute(t, route, false, 3*selfProbeEvery)
	src.set(true, time.Now())
	bird.WaitRoute(t, route, true, 3*selfProbeEvery)
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}
