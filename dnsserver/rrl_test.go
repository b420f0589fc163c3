package dnsserver

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// flood sends n queries for ns1 A from local (an address of 127/8) to the
// server, spread evenly over d, and counts full answers and truncated
// ones until the replies stop.
func flood(t *testing.T, srv netip.AddrPort, local string, n int, d time.Duration) (full, tc int, took time.Duration) {
	t.Helper()
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(local), 0)))
	if err != nil {
		t.Fatalf("bind %s: %v", local, err)
	}
	defer c.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 1500)
		// The replies have ended after two silent seconds in a row: after
		// one, a process that was stalled past its deadline may still have
		// replies queued, which a Read whose deadline has passed does not
		// look at, and the counts below must account for every query.
		silent := 0
		for silent < 2 {
			_ = c.SetReadDeadline(time.Now().Add(time.Second))
			k, err := c.Read(buf)
			if errors.Is(err, os.ErrDeadlineExceeded) {
				silent++
				continue
			}
			if err != nil {
				return
			}
			silent = 0
			var m dns.Msg
			if m.Unpack(buf[:k]) != nil {
				continue
			}
			switch {
			case m.Truncated && len(m.Answer) == 0:
				tc++
			case len(m.Answer) == 1:
				full++
			}
		}
	}()
	dst := net.UDPAddrFromAddrPort(srv)
	tick := time.NewTicker(d / time.Duration(n))
	defer tick.Stop()
	start := time.Now()
	for i := range n {
		q := rawQuery(t, uint16(i), nil)
		if _, err := c.WriteToUDP(q, dst); err != nil {
			t.Fatal(err)
		}
		<-tick.C // pacing the load, not waiting for the server
	}
	took = time.Since(start)
	<-done
	return full, tc, took
}

// TestRRL: one /24 sending ten times the rate for two seconds gets about
// rate × seconds answers (plus one second of burst) and every slip-th
// excess query a TC=1 reply; another /24 asking at the same time is
// answered in full; with RRL off nothing is limited.
func TestRRL(t *testing.T) {
	t.Parallel()
	const rate, seconds = 20, 2
	reg := prometheus.NewRegistry()
	s := newEdgeServer(t, reg, func(c *Config) { c.RRL = RRLConfig{Rate: rate, Slip: 2} })
	addr := startServer(t, s)
	off := newEdgeServer(t, prometheus.NewRegistry(), nil)
	offAddr := startServer(t, off)

	n := 10 * rate * seconds
	type result struct{ full, tc int }
	quiet := make(chan result, 1)
	go func() {
		// Another network, at half the rate, at the same time.
		f, c, _ := flood(t, addr, "127.0.1.1", rate/2*seconds, seconds*time.Second)
		quiet <- result{f, c}
	}()
	full, tc, took := flood(t, addr, "127.0.0.1", n, seconds*time.Second)
	t.Logf("flooding /24: %d queries in %v, %d full answers, %d truncated", n, took, full, tc)
	// The rate over the time the flood really took (a busy machine
	// stretches it), the one-second burst, and a little slack.
	maxFull := int(rate*took.Seconds()) + rate + rate/4
	if full > maxFull || full < rate*seconds/2 {
		t.Errorf("%d full answers, want between %d and %d", full, rate*seconds/2, maxFull)
	}
	excess := n - full
	if want := excess / 2; tc < want*8/10 || tc > want*12/10+2 {
		t.Errorf("%d TC replies for %d limited queries, want about %d (slip 2)", tc, excess, want)
	}
	if q := <-quiet; q.full != rate/2*seconds {
		t.Errorf("the other /24: %d full answers of %d (%d TC)", q.full, rate/2*seconds, q.tc)
	}
	if d := testutil.ToFloat64(s.edge.m.rrlDropped) + testutil.ToFloat64(s.edge.m.rrlSlipped); int(d) != excess {
		t.Errorf("glb_dns_rrl_limited_total %v, want %d", d, excess)
	}

	full, tc, _ = flood(t, offAddr, "127.0.0.1", n, seconds*time.Second)
	if full != n || tc != 0 {
		t.Errorf("RRL off: %d full answers and %d TC of %d", full, tc, n)
	}
}

func TestRRLExemptions(t *testing.T) {
	t.Parallel()
	s := newEdgeServer(t, prometheus.NewRegistry(), func(c *Config) { c.RRL = RRLConfig{Rate: 1, Slip: 0} })
	src := netip.MustParseAddr("192.0.2.1")
	q := rawQuery(t, 1, nil)
	w := newWorker()
	answered := func(q []byte, tcp bool) int {
		n := 0
		for range 20 {
			if w.handle(s, q, src, tcp) != nil {
				n++
			}
		}
		return n
	}
	// A valid server cookie, made by the server for this client before
	// its bucket runs dry.
	r := exchangeRaw(t, s, rawQuery(t, 2, cookieOption([]byte{1, 2, 3, 4, 5, 6, 7, 8})), "192.0.2.1")
	ck := replyCookie(t, r)
	if n := answered(q, true); n != 20 {
		t.Errorf("TCP: %d of 20 answered", n)
	}
	if n := answered(q, false); n > 2 {
		t.Errorf("UDP at rate 1, slip 0: %d of 20 answered", n)
	}
	if n := answered(rawQuery(t, 3, cookieOption(ck)), false); n != 20 {
		t.Errorf("valid server cookie: %d of 20 answered", n)
	}
	// Other names, other networks: their own buckets.
	if w.handle(s, benchQuery(t, "txt.glb.example.com.", ""), src, false) == nil {
		t.Error("another name shares the bucket")
	}
	if w.handle(s, q, netip.MustParseAddr("192.0.3.1"), false) == nil {
		t.Error("another /24 shares the bucket")
	}
	if w.handle(s, q, netip.MustParseAddr("192.0.2.200"), false) != nil {
		t.Error("the same /24 has its own bucket")
	}
}

func TestRRLNXDomainBucketIsTheZone(t *testing.T) {
	t.Parallel()
	s := newEdgeServer(t, prometheus.NewRegistry(), func(c *Config) { c.RRL = RRLConfig{Rate: 2, Slip: 0} })
	src := netip.MustParseAddr("192.0.2.1")
	w := newWorker()
	answered := 0
	for i := range 20 {
		// Random names: one bucket (the zone), not one per name.
		if w.handle(s, benchQuery(t, "rnd"+string(rune('a'+i))+".glb.example.com.", ""), src, false) != nil {
			answered++
		}
	}
	if answered > 3 {
		t.Errorf("%d of 20 NXDOMAIN for random names answered, want the rate", answered)
	}
}

func BenchmarkRRL(b *testing.B) {
	q := benchQuery(b, "lb-geo.glb.example.com.", "198.51.100.0/24")
	src := netip.MustParseAddr("127.0.0.1")
	for _, bc := range []struct {
		name string
		rrl  RRLConfig
	}{{"off", RRLConfig{}}, {"on-not-triggered", RRLConfig{Rate: MaxRRLRate}}} {
		s := newEdgeServer(b, prometheus.NewRegistry(), func(c *Config) { c.RRL = bc.rrl })
		b.Run(bc.name, func(b *testing.B) { benchHandle(b, s, q, src) })
	}
}
