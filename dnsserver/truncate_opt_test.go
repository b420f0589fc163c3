package dnsserver

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/glb-dns/glb/pools"
)

// TestUDPReplyFitsWithItsOPT: the OPT record (with the echoed ECS option)
// counts toward the payload size the client offered. Answers are sized
// byte by byte across the 512-byte limit, so that some fit only without
// their OPT: those must be truncated, and no reply may exceed the limit.
func TestUDPReplyFitsWithItsOPT(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	const n = 100
	for i := range n {
		cfg.Zones[0].Records = append(cfg.Zones[0].Records, pools.Record{
			Name: fmt.Sprintf("t%03d.glb.example.com", i), Type: "TXT",
			Content: fmt.Sprintf("%q %q %q", strings.Repeat("a", 200), strings.Repeat("b", 200), strings.Repeat("c", i)),
		})
	}
	s, err := New(Config{Addr: "127.0.0.1:0", Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	s.Publish(compileTest(t, cfg))

	for _, ecs := range []string{"", "198.51.100.0/24", "2001:db8:1::/48"} {
		tightFits, truncated := 0, 0
		for i := range n {
			c := &tcase{qname: fmt.Sprintf("t%03d.glb.example.com.", i), qtype: dns.TypeTXT, edns: true, bufsize: 512, ecs: ecs}
			q := c.msg()
			wire, err := q.Pack()
			if err != nil {
				t.Fatal(err)
			}
			out := s.handle(wire, netip.MustParseAddr("127.0.0.1"), false, nil)
			r := new(dns.Msg)
			if err := r.Unpack(out); err != nil {
				t.Fatalf("%s: reply does not unpack: %v", c.qname, err)
			}
			if len(out) > 512 {
				t.Errorf("ECS %q, %s: %d-byte reply for a 512-byte payload", ecs, c.qname, len(out))
			}
			if r.IsEdns0() == nil {
				t.Fatalf("ECS %q, %s: no OPT in the reply", ecs, c.qname)
			}
			if r.Truncated {
				truncated++
				if len(r.Answer) != 0 {
					t.Errorf("ECS %q, %s: truncated with %d answers", ecs, c.qname, len(r.Answer))
				}
				continue
			}
			if len(r.Answer) != 1 {
				t.Fatalf("ECS %q, %s: %d answers", ecs, c.qname, len(r.Answer))
			}
			if len(out) > 500 {
				tightFits++
			}
		}
		if tightFits == 0 || truncated == 0 {
			t.Errorf("ECS %q: %d replies within 12 bytes of the limit, %d truncated: the sizes do not straddle it", ecs, tightFits, truncated)
		}
	}
}
