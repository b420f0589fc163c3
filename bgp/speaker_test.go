package bgp

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/glb-dns/glb/internal/birdtest"
)

// TestAnnounceToBird peers a speaker with a real BIRD 2 on loopback and
// follows the prefixes through BIRD's table: announced with the node's
// community and MED, withdrawn, announced again, and gone at once when
// the speaker stops (a Cease, not the hold time).
func TestAnnounceToBird(t *testing.T) {
	// Not parallel: GoBGP's start writes package variables (one speaker
	// per process).
	bird := birdtest.Start(t, birdtest.Config{Local: "127.0.0.2", ASN: 65000, HoldTime: 3,
		Neighbors: []birdtest.Neighbor{{Name: "glb1", Addr: "127.0.0.1", ASN: 65001}}})
	med := uint32(7)
	reg := prometheus.NewRegistry()
	s, err := Start(context.Background(), Config{
		ASN: 65001, RouterID: netip.MustParseAddr("192.0.2.1"), HoldTime: 3 * time.Second,
		Peers:       []Peer{{Addr: netip.MustParseAddr("127.0.0.2"), Port: uint16(bird.Port), ASN: 65000}},
		Prefixes:    []netip.Prefix{netip.MustParsePrefix("192.0.2.53/32"), netip.MustParsePrefix("198.51.100.0/24")},
		Communities: []uint32{65001<<16 | 53}, MED: &med, Registerer: reg,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	waitSession(t, s, bird, "glb1")
	if r, _ := bird.Routes(); len(r) != 0 {
		t.Fatalf("bird holds %v before anything was announced", r)
	}

	if err := s.Announce(true); err != nil {
		t.Fatal(err)
	}
	r, took := bird.WaitRoute(t, "192.0.2.53/32", true, 5*time.Second)
	t.Logf("announced in %v", took)
	if r.From != "glb1" || r.Community != "(65001,53)" || r.MED != "7" || r.NextHop != "127.0.0.1" {
		t.Errorf("route as bird holds it: %+v, want from glb1, community (65001,53), med 7, next hop 127.0.0.1", r)
	}
	bird.WaitRoute(t, "198.51.100.0/24", true, 5*time.Second)
	if !s.Announced() || testutil.ToFloat64(s.announcedG) != 1 {
		t.Errorf("Announced() %v, glb_bgp_announced %v after Announce(true)", s.Announced(), testutil.ToFloat64(s.announcedG))
	}

	if err := s.Announce(false); err != nil {
		t.Fatal(err)
	}
	_, took = bird.WaitRoute(t, "192.0.2.53/32", false, 5*time.Second)
	t.Logf("withdrawn in %v", took)
	bird.WaitRoute(t, "198.51.100.0/24", false, 5*time.Second)
	if got := testutil.ToFloat64(s.changes.WithLabelValues("withdraw")); got != 1 {
		t.Errorf("glb_bgp_route_changes_total{action=withdraw} = %v, want 1", got)
	}
	if !bird.Established("glb1") {
		t.Error("the session went down with the withdrawal; only the routes should")
	}

	if err := s.Announce(true); err != nil {
		t.Fatal(err)
	}
	bird.WaitRoute(t, "192.0.2.53/32", true, 5*time.Second)
	// Twice is once: no second update, no error.
	if err := s.Announce(true); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(s.changes.WithLabelValues("announce")); got != 2 {
		t.Errorf("glb_bgp_route_changes_total{action=announce} = %v, want 2", got)
	}

	stopped := time.Now()
	s.Stop()
	bird.WaitRoute(t, "192.0.2.53/32", false, 2*time.Second)
	t.Logf("gone %v after Stop", time.Since(stopped))
}

// TestAnnounceIPv6ToBird announces an IPv6 prefix over an IPv6 session.
func TestAnnounceIPv6ToBird(t *testing.T) {
	// Not parallel: GoBGP's start writes package variables (one speaker
	// per process).
	bird := birdtest.Start(t, birdtest.Config{Local: "::1", ASN: 65000,
		Neighbors: []birdtest.Neighbor{{Name: "glb6", Addr: "::1", ASN: 65001}}})
	s, err := Start(context.Background(), Config{
		ASN: 65001, RouterID: netip.MustParseAddr("192.0.2.1"), HoldTime: 3 * time.Second,
		Peers:    []Peer{{Addr: netip.MustParseAddr("::1"), Port: uint16(bird.Port), ASN: 65000}},
		Prefixes: []netip.Prefix{netip.MustParsePrefix("2001:db8:53::/48")},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	waitSession(t, s, bird, "glb6")
	if err := s.Announce(true); err != nil {
		t.Fatal(err)
	}
	bird.WaitRoute(t, "2001:db8:53::/48", true, 5*time.Second)
	if err := s.Announce(false); err != nil {
		t.Fatal(err)
	}
	bird.WaitRoute(t, "2001:db8:53::/48", false, 5*time.Second)
}

func waitSession(t *testing.T, s *Speaker, bird *birdtest.Bird, name string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		ss := s.Sessions()
		if len(ss) == 1 && ss[0].State == "established" && bird.Established(name) {
			return
		}
		if time.Now().After(deadline) {
			out, _ := bird.Birdc("show protocols all " + name)
			t.Fatalf("session not established in 15s: speaker sees %+v; bird:\n%s", ss, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
